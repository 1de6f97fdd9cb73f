//! Numeric replay of the two-pass product (the paper's V0).
use crate::RuntimeError;
use ptap_schedules::TwoPassSchedule;
use ptap_sparse::dense::transpose_into;
use ptap_sparse::kernels::ProductKernels;
use ptap_sparse::par::{balanced_row_chunks, default_chunk_count};
use ptap_sparse::spgemm::{row_owner_numeric, spgemm_numeric, SpgemmWorkspace};
use ptap_sparse::SparseError;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// The numeric body of V0 monomorphized over one set of generated kernels.
pub(crate) type TwoPassNumeric =
    fn(&mut TwoPassExecutor, &BlockCsr, &BlockCsr, &mut BlockCsr) -> Result<(), SparseError>;

/// One row-owner stage `C = X Y`: row chunks of equal block-multiply work and a
/// column-to-slot map per chunk (as `SpgemmWorkspace`).
#[derive(Clone, Debug)]
struct RowStage {
    chunks: Vec<Range<usize>>,
    slots: Vec<Vec<u32>>,
}

impl RowStage {
    fn new(x: &BlockPattern, y: &BlockPattern, c: &BlockPattern) -> Self {
        let work: Vec<usize> = (0..x.nrows())
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| x.row(i).iter().map(|&l| y.row(l as usize).len()).sum())
            .collect();
        let chunks = balanced_row_chunks(&work, default_chunk_count(x.nrows()));
        let slots = vec![vec![u32::MAX; c.ncols()]; chunks.len()];
        Self { chunks, slots }
    }
}

/// How the two stages are computed: generated kernels for a declared shape,
/// else the size-generic SpGEMM.
#[derive(Clone, Debug)]
enum Stages {
    Generated {
        numeric: TwoPassNumeric,
        ap: RowStage,
        rw: RowStage,
    },
    Generic {
        ap: SpgemmWorkspace,
        rw: SpgemmWorkspace,
    },
}

/// V0: gathers `R = P^T`, computes `W = A P`, then `A_c = R W`, all over the
/// schedule's patterns. Owns `R`, `W` and the scratch, so a numeric call
/// allocates nothing and searches nothing.
#[derive(Clone, Debug)]
pub struct TwoPassExecutor {
    schedule: Arc<TwoPassSchedule>,
    r: BlockCsr,
    w: BlockCsr,
    stages: Stages,
}

pub(crate) fn same_pattern(
    what: &'static str,
    want: &Arc<BlockPattern>,
    got: &Arc<BlockPattern>,
) -> Result<(), RuntimeError> {
    if Arc::ptr_eq(want, got) || **want == **got {
        return Ok(());
    }
    Err(RuntimeError::PatternMismatch {
        what,
        detail: format!(
            "schedule has {}x{} blocks with {} stored, matrix has {}x{} with {}",
            want.nrows(),
            want.ncols(),
            want.nnzb(),
            got.nrows(),
            got.ncols(),
            got.nnzb()
        ),
    })
}

/// V0's numeric body over the kernels `K`.
pub(crate) fn two_pass_numeric<K: ProductKernels>(
    e: &mut TwoPassExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) -> Result<(), SparseError> {
    let TwoPassExecutor { schedule, r, w, stages } = e;
    let Stages::Generated { ap, rw, .. } = stages else {
        unreachable!("generated numeric body without its stages")
    };
    r.values_mut()
        .par_chunks_mut(K::BF * K::BC)
        .zip(schedule.r_source.par_iter())
        .with_min_len(1024)
        .for_each(|(dst, &s)| K::p_transpose(p.block(s as usize), dst));
    let w_pat = w.pattern_arc().clone();
    let (wb, cb) = (K::BF * K::BC, K::BC * K::BC);
    row_owner_numeric(a, p, &w_pat, w.values_mut(), &ap.chunks, &mut ap.slots, wb, K::ap_acc)?;
    let c_pat = c.pattern_arc().clone();
    row_owner_numeric(r, w, &c_pat, c.values_mut(), &rw.chunks, &mut rw.slots, cb, K::rw_acc)
}

impl TwoPassExecutor {
    /// Buffers for any block shape, computed by the size-generic SpGEMM.
    pub(crate) fn generic(schedule: Arc<TwoPassSchedule>, bf: usize, bc: usize) -> Self {
        Self::build(schedule, bf, bc, None)
    }

    /// Buffers and stages for the generated kernels `K`.
    pub fn with_kernels<K: ProductKernels>(schedule: Arc<TwoPassSchedule>) -> Self {
        Self::build(schedule, K::BF, K::BC, Some(two_pass_numeric::<K>))
    }

    pub(crate) fn build(schedule: Arc<TwoPassSchedule>, bf: usize, bc: usize, numeric: Option<TwoPassNumeric>) -> Self {
        let r = BlockCsr::zeros(schedule.r.clone(), bc, bf);
        let w = BlockCsr::zeros(schedule.w.clone(), bf, bc);
        let s = &schedule;
        let stages = match numeric {
            Some(numeric) => Stages::Generated {
                numeric,
                ap: RowStage::new(&s.a, &s.p, &s.w),
                rw: RowStage::new(&s.r, &s.w, &s.c),
            },
            None => Stages::Generic {
                ap: SpgemmWorkspace::new(&s.a, &s.p, &s.w),
                rw: SpgemmWorkspace::new(&s.r, &s.w, &s.c),
            },
        };
        Self { schedule, r, w, stages }
    }
}

impl TwoPassExecutor {
    pub fn schedule(&self) -> &Arc<TwoPassSchedule> {
        &self.schedule
    }

    /// `R = P^T` as last gathered (valid after one [`TwoPassExecutor::numeric`]).
    pub fn restriction(&self) -> &BlockCsr {
        &self.r
    }

    /// The intermediate `W = A P` of the last numeric call.
    pub fn intermediate(&self) -> &BlockCsr {
        &self.w
    }

    /// Bytes the executor holds beyond its inputs and output (`R`, `W`).
    pub fn buffer_bytes(&self) -> usize {
        self.r.values().len() * 8 + self.w.bytes()
    }

    /// `c = P^T a P` over the schedule's patterns.
    pub fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        same_pattern("A", &self.schedule.a, a.pattern_arc())?;
        same_pattern("P", &self.schedule.p, p.pattern_arc())?;
        same_pattern("A_c", &self.schedule.c, c.pattern_arc())?;
        let (bf, bc) = p.block_shape();
        if a.block_shape() != (bf, bf) || c.block_shape() != (bc, bc) || self.w.block_shape() != (bf, bc) {
            return Err(RuntimeError::PatternMismatch {
                what: "block shape",
                detail: format!(
                    "A {:?}, P {:?}, A_c {:?}",
                    a.block_shape(),
                    p.block_shape(),
                    c.block_shape()
                ),
            });
        }
        match &mut self.stages {
            Stages::Generated { numeric, .. } => {
                let numeric = *numeric;
                numeric(self, a, p, c)?;
            }
            Stages::Generic { ap, rw } => {
                let src = &self.schedule.r_source;
                self.r
                    .values_mut()
                    .par_chunks_mut(bf * bc)
                    .zip(src.par_iter())
                    .with_min_len(1024)
                    .for_each(|(dst, &s)| transpose_into(bf, bc, p.block(s as usize), dst));
                spgemm_numeric(a, p, &mut self.w, ap)?;
                spgemm_numeric(&self.r, &self.w, c, rw)?;
            }
        }
        Ok(())
    }
}
