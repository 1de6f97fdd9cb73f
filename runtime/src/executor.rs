//! Numeric replay of the two-pass product (the paper's V0).
use crate::RuntimeError;
use ptap_schedules::TwoPassSchedule;
use ptap_sparse::dense::transpose_into;
use ptap_sparse::spgemm::{spgemm_numeric, SpgemmWorkspace};
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::sync::Arc;

/// V0: gathers `R = P^T`, computes `W = A P`, then `A_c = R W`, all over the
/// schedule's patterns. Owns `R`, `W` and the scratch, so a numeric call
/// allocates nothing and searches nothing.
#[derive(Clone, Debug)]
pub struct TwoPassExecutor {
    schedule: Arc<TwoPassSchedule>,
    r: BlockCsr,
    w: BlockCsr,
    ws_ap: SpgemmWorkspace,
    ws_rw: SpgemmWorkspace,
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

impl TwoPassExecutor {
    /// Buffers for `bf x bf` fine blocks and `bf x bc` prolongator blocks.
    pub fn new(schedule: Arc<TwoPassSchedule>, bf: usize, bc: usize) -> Self {
        let r = BlockCsr::zeros(schedule.r.clone(), bc, bf);
        let w = BlockCsr::zeros(schedule.w.clone(), bf, bc);
        let ws_ap = SpgemmWorkspace::new(&schedule.a, &schedule.p, &schedule.w);
        let ws_rw = SpgemmWorkspace::new(&schedule.r, &schedule.w, &schedule.c);
        Self {
            schedule,
            r,
            w,
            ws_ap,
            ws_rw,
        }
    }

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
        self.gather_restriction(p);
        spgemm_numeric(a, p, &mut self.w, &mut self.ws_ap);
        spgemm_numeric(&self.r, &self.w, c, &mut self.ws_rw);
        Ok(())
    }

    /// `R`'s values as a pure gather of transposed `P` blocks.
    fn gather_restriction(&mut self, p: &BlockCsr) {
        let (bf, bc) = p.block_shape();
        let l = bf * bc;
        let src = &self.schedule.r_source;
        self.r
            .values_mut()
            .par_chunks_mut(l)
            .zip(src.par_iter())
            .with_min_len(1024)
            .for_each(|(dst, &s)| {
                transpose_into(bf, bc, p.block(s as usize), dst);
            });
    }
}
