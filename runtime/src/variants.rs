//! Executors of every Galerkin-product variant (numeric replay of a schedule).
//!
//! Each executor owns its buffers and scratch, so `numeric` allocates nothing
//! and searches nothing: every output position comes from the schedule. The
//! executors are generic over the generated block kernels `K: ProductKernels`
//! of their `(bf, bc)` (unrolled per shape by `ptap_kernels::kernels!`), picked
//! from the matrices' shapes through a `KernelRegistry`; the variants that
//! promise V0's bytes zero an accumulator and add contributions in V0's order
//! (each output entry sums its inner index in increasing order, one term at a time).
use crate::executor::TwoPassExecutor;
use crate::RuntimeError;
use ptap_schedules::variants::{
    ColumnSplitSchedule, FlatRecords, FlatStreamSchedule, FusedSchedule, OuterProductSchedule, PanelTiledSchedule,
    RowGustavsonSchedule, RowSegments, SlotRuns, SlotTiledSchedule,
};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::kernels::{Block, ProductKernels};
use ptap_sparse::par::for_each_row_chunk;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A numeric Galerkin product `A_c = P^T A P` over a fixed schedule.
pub trait GalerkinProduct: Send {
    fn variant(&self) -> Variant;
    /// The pattern of `A_c` this executor writes.
    fn coarse_pattern(&self) -> &Arc<BlockPattern>;
    /// Refreshes `c`'s values from `a`'s and `p`'s.
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError>;
    /// Bytes of value buffers the executor holds (`W`, `R`, `W'`).
    fn buffer_bytes(&self) -> usize;
}

/// The executor of `schedule`'s variant over the kernels `K`.
pub(crate) fn executor_with<K: ProductKernels>(schedule: &VariantSchedule) -> Box<dyn GalerkinProduct> {
    match schedule {
        VariantSchedule::TwoPass(s) => Box::new(TwoPassExecutor::with_kernels::<K>(s.clone())),
        VariantSchedule::Fused { schedule, reordered } => {
            Box::new(FusedExecutor::<K>::new(schedule.clone(), *reordered))
        }
        VariantSchedule::SlotTiled(s) => Box::new(SlotTiledExecutor::<K>::new(s.clone())),
        VariantSchedule::ColumnSplit(s) => Box::new(ColumnSplitExecutor::<K>::new(s.clone())),
        // The same schedule and sums: column split's executor is its CPU reference.
        VariantSchedule::LaneTiled(s) => {
            Box::new(ColumnSplitExecutor::<K>::new(s.clone()).reporting(Variant::LaneTiled))
        }
        // On the host, the k-split variant sums in V0's order (the device's
        // reassociation buys nothing on a CPU); the promise it keeps is V0 to rounding.
        VariantSchedule::KSplit(s) => Box::new(ColumnSplitExecutor::<K>::new(s.clone()).reporting(Variant::KSplit)),
        // Likewise the tensor-core variant: its reassociation is the device's MMA unit.
        VariantSchedule::TensorCore(s) => {
            Box::new(ColumnSplitExecutor::<K>::new(s.clone()).reporting(Variant::TensorCore))
        }
        // The pairs merge column split's runs without reordering any slot's: its executor sums the same way.
        VariantSchedule::TensorPair(s) => {
            Box::new(ColumnSplitExecutor::<K>::new(s.split.clone()).reporting(Variant::TensorPair))
        }
        // The symmetric split buys a CPU nothing measured: the host runs V0
        // over its patterns, then keeps the variant's promise of an exactly
        // symmetric result.
        VariantSchedule::TensorPairSym(s) => Box::new(SymmetricTwoPass {
            inner: TwoPassExecutor::with_kernels::<K>(s.base.clone()),
            transpose: s.transpose.clone(),
        }),
        VariantSchedule::RowGustavson(s) => Box::new(RowGustavsonExecutor::<K>::new(s.clone())),
        VariantSchedule::PanelTiled(s) => Box::new(PanelTiledExecutor::<K>::new(s.clone())),
        VariantSchedule::FlatStream(s) => Box::new(FlatStreamExecutor::<K>::new(s.clone())),
        VariantSchedule::OuterProduct(s) => Box::new(OuterProductExecutor::<K>::new(s.clone())),
    }
}

/// One stage's block contraction `out (M x N) += x y` (`x` read transposed where
/// the stage applies `P^T`), as the generated kernels of the product define it.
trait Stage: 'static {
    /// Accumulator of one output block.
    type Out: Block;
    /// Scalars of one `x` block and one `y` block.
    const X: usize;
    const Y: usize;
    const M: usize;
    const N: usize;
    fn acc(x: &[f64], y: &[f64], out: &mut [f64]);
    /// `col (M) += (x y)(:, j)`.
    fn col_acc(x: &[f64], y: &[f64], j: usize, col: &mut [f64]);
}

/// `W = A P`.
struct ApStage<K>(PhantomData<K>);
/// `A_c = P^T W`, `P` read transposed (no `R`).
struct PtwStage<K>(PhantomData<K>);

impl<K: ProductKernels> Stage for ApStage<K> {
    type Out = K::FineCoarse;
    const X: usize = K::BF * K::BF;
    const Y: usize = K::BF * K::BC;
    const M: usize = K::BF;
    const N: usize = K::BC;
    #[inline(always)]
    fn acc(x: &[f64], y: &[f64], out: &mut [f64]) {
        K::ap_acc(x, y, out)
    }
    #[inline(always)]
    fn col_acc(x: &[f64], y: &[f64], j: usize, col: &mut [f64]) {
        K::ap_col_acc(x, y, j, col)
    }
}

impl<K: ProductKernels> Stage for PtwStage<K> {
    type Out = K::CoarseCoarse;
    const X: usize = K::BF * K::BC;
    const Y: usize = K::BF * K::BC;
    const M: usize = K::BC;
    const N: usize = K::BC;
    #[inline(always)]
    fn acc(x: &[f64], y: &[f64], out: &mut [f64]) {
        K::ptw_acc(x, y, out)
    }
    #[inline(always)]
    fn col_acc(x: &[f64], y: &[f64], j: usize, col: &mut [f64]) {
        K::ptw_col_acc(x, y, j, col)
    }
}

/// Pattern and shape checks every executor makes at the door (no O(nnz) work
/// unless the patterns are different objects).
fn check_inputs(
    base: &TwoPassSchedule,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &BlockCsr,
    bf: usize,
    bc: usize,
) -> Result<(), RuntimeError> {
    crate::executor::same_pattern("A", &base.a, a.pattern_arc())?;
    crate::executor::same_pattern("P", &base.p, p.pattern_arc())?;
    crate::executor::same_pattern("A_c", &base.c, c.pattern_arc())?;
    if a.block_shape() != (bf, bf) || p.block_shape() != (bf, bc) || c.block_shape() != (bc, bc) {
        return Err(RuntimeError::PatternMismatch {
            what: "block shape",
            detail: format!(
                "executor built for {bf}x{bf} / {bf}x{bc} / {bc}x{bc}, got A {:?}, P {:?}, A_c {:?}",
                a.block_shape(),
                p.block_shape(),
                c.block_shape()
            ),
        });
    }
    Ok(())
}

impl GalerkinProduct for TwoPassExecutor {
    fn variant(&self) -> Variant {
        Variant::TwoPass
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule().c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        TwoPassExecutor::numeric(self, a, p, c)
    }
    fn buffer_bytes(&self) -> usize {
        TwoPassExecutor::buffer_bytes(self)
    }
}

/// The symmetric tensor pair's host executor: V0, then each mirrored pair of
/// entries set to the mean of the two (`A_c`'s transposed slots from the
/// schedule), so the result is exactly symmetric like the device's.
struct SymmetricTwoPass {
    inner: TwoPassExecutor,
    transpose: ptap_schedules::SharedArray<u32>,
}

impl GalerkinProduct for SymmetricTwoPass {
    fn variant(&self) -> Variant {
        Variant::TensorPairSym
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.inner.schedule().c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        self.inner.numeric(a, p, c)?;
        let b = c.block_shape().0;
        let v = c.values_mut();
        for s in 0..self.transpose.len() {
            let t = self.transpose[s] as usize;
            for r in 0..b {
                for q in 0..b {
                    let (x, y) = (s * b * b + r * b + q, t * b * b + q * b + r);
                    if x < y {
                        let m = 0.5 * (v[x] + v[y]);
                        (v[x], v[y]) = (m, m);
                    }
                }
            }
        }
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.inner.buffer_bytes()
    }
}

// ---------------------------------------------------------------- V1 / V2a

/// Output rows owned by disjoint chunks of a permutation: each chunk writes only
/// the rows it lists, so concurrent writes never overlap.
struct DisjointRows {
    ptr: *mut f64,
    len: usize,
}
// SAFETY: the pointer is only used to form slices of rows that the schedule's
// row order assigns to exactly one chunk (it is a permutation), so no two
// threads ever touch the same element; the owning `&mut [f64]` outlives the loop.
unsafe impl Sync for DisjointRows {}
unsafe impl Send for DisjointRows {}

impl DisjointRows {
    /// # Safety
    /// `range` must be in bounds and not handed out to any other thread.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, range: Range<usize>) -> &mut [f64] {
        assert!(range.end <= self.len);
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }
    }
}

/// V1 / V2a over the kernels `K`.
pub struct FusedExecutor<K> {
    schedule: Arc<FusedSchedule>,
    reordered: bool,
    maps: Vec<Vec<u32>>,
    _k: PhantomData<K>,
}

impl<K: ProductKernels> FusedExecutor<K> {
    pub fn new(schedule: Arc<FusedSchedule>, reordered: bool) -> Self {
        let maps = vec![vec![u32::MAX; schedule.base.c.ncols()]; schedule.chunks.len()];
        Self {
            schedule,
            reordered,
            maps,
            _k: PhantomData,
        }
    }
}

fn fused_numeric<K: ProductKernels>(
    s: &FusedSchedule,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
    maps: &mut [Vec<u32>],
) {
    let bcc = K::BC * K::BC;
    let base = &s.base;
    let (cp, r, ap, pp) = (base.c.clone(), &base.r, a.pattern(), p.pattern());
    let vals = c.values_mut();
    let out = DisjointRows {
        ptr: vals.as_mut_ptr(),
        len: vals.len(),
    };
    let out = &out;
    s.chunks.par_iter().zip(maps.par_iter_mut()).for_each(|(chunk, map)| {
        let mut t = K::FineCoarse::ZERO;
        for &row in &s.row_order[chunk.clone()] {
            let i = row as usize;
            let cr = cp.row_range(i);
            // SAFETY: row `i` appears once in `row_order`, in this chunk only.
            let crow = unsafe { out.slice(cr.start * bcc..cr.end * bcc) };
            crow.fill(0.0);
            for k in cr.clone() {
                map[cp.col_idx()[k] as usize] = (k - cr.start) as u32;
            }
            for kr in r.row_range(i) {
                let j = r.col_idx()[kr] as usize;
                let pji = p.block(base.r_source[kr] as usize);
                for ka in ap.row_range(j) {
                    let l = ap.col_idx()[ka] as usize;
                    let t = t.as_mut();
                    t.fill(0.0);
                    K::pta_acc(pji, a.block(ka), t);
                    for kp in pp.row_range(l) {
                        let s = map[pp.col_idx()[kp] as usize] as usize;
                        K::rw_acc(t, p.block(kp), &mut crow[s * bcc..(s + 1) * bcc]);
                    }
                }
            }
        }
    });
}

impl<K: ProductKernels> GalerkinProduct for FusedExecutor<K> {
    fn variant(&self) -> Variant {
        if self.reordered {
            Variant::FusedReordered
        } else {
            Variant::FusedRowWise
        }
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        fused_numeric::<K>(&self.schedule, a, p, c, &mut self.maps);
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        0
    }
}

// ---------------------------------------------------------------- V2b / column split

/// Runs slot-owner accumulation of one stage over `tiles` of contiguous slots.
fn slot_runs_numeric<S: Stage>(
    runs: &SlotRuns,
    tiles: &[usize],
    chunks: &[Range<usize>],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let mn = S::M * S::N;
    let body = |tr: Range<usize>, o: &mut [f64], _: &mut ()| {
        let first = tiles[tr.start];
        for s in first..tiles[tr.end] {
            let mut acc = S::Out::ZERO;
            for q in runs.run(s) {
                let xb = &x[runs.x[q] as usize * S::X..];
                let yb = &y[runs.y[q] as usize * S::Y..];
                S::acc(xb, yb, acc.as_mut());
            }
            o[(s - first) * mn..(s - first + 1) * mn].copy_from_slice(acc.as_ref());
        }
    };
    for_each_row_chunk(chunks, tiles, mn, out, unit, &body);
}

/// Groups of consecutive tiles, one task each.
fn tile_groups(ntiles: usize) -> Vec<Range<usize>> {
    let per = ntiles.div_ceil(rayon::current_num_threads() * 16).max(1);
    (0..ntiles).step_by(per).map(|s| s..(s + per).min(ntiles)).collect()
}

fn to_usize(v: &[u64]) -> Vec<usize> {
    v.iter().map(|&x| x as usize).collect()
}

/// V2b over the kernels `K`.
pub struct SlotTiledExecutor<K> {
    schedule: Arc<SlotTiledSchedule>,
    w: Vec<f64>,
    ap_tiles: Vec<usize>,
    rw_tiles: Vec<usize>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
    _k: PhantomData<K>,
}

impl<K: ProductKernels> SlotTiledExecutor<K> {
    pub fn new(schedule: Arc<SlotTiledSchedule>) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * K::BF * K::BC];
        let (ap_tiles, rw_tiles) = (to_usize(&schedule.ap_tiles), to_usize(&schedule.rw_tiles));
        let ap_chunks = tile_groups(ap_tiles.len() - 1);
        let rw_chunks = tile_groups(rw_tiles.len() - 1);
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            w,
            ap_tiles,
            rw_tiles,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
            _k: PhantomData,
        }
    }
}

impl<K: ProductKernels> GalerkinProduct for SlotTiledExecutor<K> {
    fn variant(&self) -> Variant {
        Variant::SlotTiled
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        let s = &self.schedule;
        slot_runs_numeric::<ApStage<K>>(
            &s.ap,
            &self.ap_tiles,
            &self.ap_chunks,
            a.values(),
            p.values(),
            &mut self.w,
            &mut self.unit_ap,
        );
        slot_runs_numeric::<PtwStage<K>>(
            &s.rw,
            &self.rw_tiles,
            &self.rw_chunks,
            p.values(),
            &self.w,
            c.values_mut(),
            &mut self.unit_rw,
        );
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

/// Column-split replay: windows of slots visited in run-length order, each slot
/// computed column by column (the lane that owns column `j` sums
/// `x[i][k] y[k][j]` over `k` and over the run, in V0's order).
#[allow(clippy::too_many_arguments)]
fn column_split_numeric_stage<S: Stage>(
    runs: &SlotRuns,
    order: &[u32],
    bounds: &[usize],
    chunks: &[Range<usize>],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let (m, n) = (S::M, S::N);
    let body = |wr: Range<usize>, o: &mut [f64], _: &mut ()| {
        let first = bounds[wr.start];
        for &s in &order[first..bounds[wr.end]] {
            let s = s as usize;
            let dst = &mut o[(s - first) * m * n..(s - first + 1) * m * n];
            for j in 0..n {
                // A lane's column: at most MAX_BLOCK_DIM (16) rows by declaration.
                let mut col = [0.0f64; 16];
                for q in runs.run(s) {
                    let xb = &x[runs.x[q] as usize * S::X..];
                    let yb = &y[runs.y[q] as usize * S::Y..];
                    S::col_acc(xb, yb, j, &mut col);
                }
                for i in 0..m {
                    dst[i * n + j] = col[i];
                }
            }
        }
    };
    for_each_row_chunk(chunks, bounds, m * n, out, unit, &body);
}

/// The column-split executor over the kernels `K`.
pub struct ColumnSplitExecutor<K> {
    schedule: Arc<ColumnSplitSchedule>,
    /// The variant it reports: column split, lane tiled or k-split (same
    /// schedule; on the host, the same sums).
    variant: Variant,
    w: Vec<f64>,
    ap_bounds: Vec<usize>,
    rw_bounds: Vec<usize>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
    _k: PhantomData<K>,
}

/// Window boundaries (slot indices, multiples of `window`, plus the end).
fn window_bounds(slots: usize, window: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..slots).step_by(window.max(1)).collect();
    b.push(slots);
    b
}

impl<K: ProductKernels> ColumnSplitExecutor<K> {
    pub fn new(schedule: Arc<ColumnSplitSchedule>) -> Self {
        let t = &schedule.tiled;
        let w = vec![0.0; t.base.w.nnzb() * K::BF * K::BC];
        let ap_bounds = window_bounds(t.ap.slots(), schedule.window);
        let rw_bounds = window_bounds(t.rw.slots(), schedule.window);
        let ap_chunks = tile_groups(ap_bounds.len() - 1);
        let rw_chunks = tile_groups(rw_bounds.len() - 1);
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            variant: Variant::ColumnSplit,
            w,
            ap_bounds,
            rw_bounds,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
            _k: PhantomData,
        }
    }
}

impl<K> ColumnSplitExecutor<K> {
    /// The same executor reporting `variant`, one of the variants whose device
    /// kernels read column split's schedule (lane tiled, k-split).
    pub fn reporting(mut self, variant: Variant) -> Self {
        self.variant = variant;
        self
    }
}

impl<K: ProductKernels> GalerkinProduct for ColumnSplitExecutor<K> {
    fn variant(&self) -> Variant {
        self.variant
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.tiled.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.tiled.base, a, p, c, K::BF, K::BC)?;
        let s = &self.schedule;
        let t = &s.tiled;
        column_split_numeric_stage::<ApStage<K>>(
            &t.ap,
            &s.ap_order,
            &self.ap_bounds,
            &self.ap_chunks,
            a.values(),
            p.values(),
            &mut self.w,
            &mut self.unit_ap,
        );
        column_split_numeric_stage::<PtwStage<K>>(
            &t.rw,
            &s.rw_order,
            &self.rw_bounds,
            &self.rw_chunks,
            p.values(),
            &self.w,
            c.values_mut(),
            &mut self.unit_rw,
        );
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V3

/// Sweeps records tile by tile: each tile owns whole output rows, zeroes them and
/// accumulates every record into the slot it names.
fn flat_numeric_stage<S: Stage>(
    f: &FlatRecords,
    chunks: &[Range<usize>],
    row_ptr: &[usize],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let mn = S::M * S::N;
    let body = |rows: Range<usize>, o: &mut [f64], _: &mut ()| {
        o.fill(0.0);
        let base = row_ptr[rows.start];
        // Tiles are cut at row boundaries, so the chunk's records are contiguous.
        let t0 = f.tile_rows.partition_point(|&r| (r as usize) < rows.start);
        let t1 = f.tile_rows.partition_point(|&r| (r as usize) < rows.end);
        for q in f.tile_records[t0] as usize..f.tile_records[t1] as usize {
            let s = f.slot[q] as usize - base;
            let xb = &x[f.x[q] as usize * S::X..];
            let yb = &y[f.y[q] as usize * S::Y..];
            S::acc(xb, yb, &mut o[s * mn..(s + 1) * mn]);
        }
    };
    for_each_row_chunk(chunks, row_ptr, mn, out, unit, &body);
}

/// V3 over the kernels `K`.
pub struct FlatStreamExecutor<K> {
    schedule: Arc<FlatStreamSchedule>,
    w: Vec<f64>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
    _k: PhantomData<K>,
}

/// Groups of consecutive record tiles as output-row ranges.
fn row_groups(f: &FlatRecords) -> Vec<Range<usize>> {
    tile_groups(f.tiles())
        .into_iter()
        .map(|g| f.tile_rows[g.start] as usize..f.tile_rows[g.end] as usize)
        .collect()
}

impl<K: ProductKernels> FlatStreamExecutor<K> {
    pub fn new(schedule: Arc<FlatStreamSchedule>) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * K::BF * K::BC];
        let (ap_chunks, rw_chunks) = (row_groups(&schedule.ap), row_groups(&schedule.rw));
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            w,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
            _k: PhantomData,
        }
    }
}

impl<K: ProductKernels> GalerkinProduct for FlatStreamExecutor<K> {
    fn variant(&self) -> Variant {
        Variant::FlatStream
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        let s = &self.schedule;
        let (wp, cp) = (s.base.w.clone(), s.base.c.clone());
        flat_numeric_stage::<ApStage<K>>(
            &s.ap,
            &self.ap_chunks,
            wp.row_ptr(),
            a.values(),
            p.values(),
            &mut self.w,
            &mut self.unit_ap,
        );
        flat_numeric_stage::<PtwStage<K>>(
            &s.rw,
            &self.rw_chunks,
            cp.row_ptr(),
            p.values(),
            &self.w,
            c.values_mut(),
            &mut self.unit_rw,
        );
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V4

/// `out[slot] += x y` (`x^T y` in the `P^T W` pass) for every record, parallel
/// over fine-row tiles, with element-wise atomic adds (compare-and-swap on the bits).
fn scatter_stage<S: Stage>(f: &FlatRecords, x: &[f64], y: &[f64], out: &mut [f64]) {
    out.par_iter_mut().with_min_len(4096).for_each(|v| *v = 0.0);
    // SAFETY: AtomicU64 has the size and alignment of f64 on every target with
    // 64-bit atomics, and `out` is exclusively borrowed for the whole pass.
    let atoms: &[AtomicU64] = unsafe { std::slice::from_raw_parts(out.as_mut_ptr() as *const AtomicU64, out.len()) };
    let mn = S::M * S::N;
    (0..f.tiles()).into_par_iter().for_each(|t| {
        for q in f.tile_records[t] as usize..f.tile_records[t + 1] as usize {
            let mut tmp = S::Out::ZERO;
            let (xb, yb) = (&x[f.x[q] as usize * S::X..], &y[f.y[q] as usize * S::Y..]);
            S::acc(xb, yb, tmp.as_mut());
            let base = f.slot[q] as usize * mn;
            for (e, v) in tmp.as_ref().iter().enumerate() {
                let cell = &atoms[base + e];
                let mut old = cell.load(Ordering::Relaxed);
                loop {
                    let new = (f64::from_bits(old) + v).to_bits();
                    match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed) {
                        Ok(_) => break,
                        Err(cur) => old = cur,
                    }
                }
            }
        }
    });
}

/// V4 over the kernels `K`.
pub struct OuterProductExecutor<K> {
    schedule: Arc<OuterProductSchedule>,
    w: Vec<f64>,
    _k: PhantomData<K>,
}

impl<K: ProductKernels> OuterProductExecutor<K> {
    pub fn new(schedule: Arc<OuterProductSchedule>) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * K::BF * K::BC];
        Self {
            schedule,
            w,
            _k: PhantomData,
        }
    }
}

impl<K: ProductKernels> GalerkinProduct for OuterProductExecutor<K> {
    fn variant(&self) -> Variant {
        Variant::OuterProductScatter
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        let s = &self.schedule;
        scatter_stage::<ApStage<K>>(&s.pass1, a.values(), p.values(), &mut self.w);
        scatter_stage::<PtwStage<K>>(&s.pass2, p.values(), &self.w, c.values_mut());
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V2c

/// V2c over the kernels `K`.
pub struct PanelTiledExecutor<K> {
    schedule: Arc<PanelTiledSchedule>,
    /// One scratch panel and column map per group of tiles.
    scratch: Vec<(Vec<f64>, Vec<u32>)>,
    chunks: Vec<Range<usize>>,
    _k: PhantomData<K>,
}

impl<K: ProductKernels> PanelTiledExecutor<K> {
    pub fn new(schedule: Arc<PanelTiledSchedule>) -> Self {
        let chunks: Vec<Range<usize>> = schedule
            .groups
            .iter()
            .map(|g| schedule.tile_rows[g.start] as usize..schedule.tile_rows[g.end] as usize)
            .collect();
        let ncols = schedule.base.c.ncols();
        let scratch = chunks
            .iter()
            .map(|_| {
                (
                    vec![0.0; schedule.max_panel_blocks * K::BF * K::BC],
                    vec![u32::MAX; ncols],
                )
            })
            .collect();
        Self {
            schedule,
            scratch,
            chunks,
            _k: PhantomData,
        }
    }
}

fn panel_numeric<K: ProductKernels>(e: &mut PanelTiledExecutor<K>, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) {
    let (fc, cc) = (K::BF * K::BC, K::BC * K::BC);
    let s = &e.schedule;
    let base = &s.base;
    let (ap, pp, wp, rp, cp) = (a.pattern(), p.pattern(), &base.w, &base.r, base.c.clone());
    let body = |rows: Range<usize>, o: &mut [f64], (panel, map): &mut (Vec<f64>, Vec<u32>)| {
        let row0 = cp.row_ptr()[rows.start];
        let t0 = s.tile_rows.partition_point(|&r| (r as usize) < rows.start);
        let t1 = s.tile_rows.partition_point(|&r| (r as usize) < rows.end);
        for t in t0..t1 {
            let halo = &s.halo[s.halo_ptr[t] as usize..s.halo_ptr[t + 1] as usize];
            let offs = s.tile_offsets(t);
            // Stage the W rows of the halo exactly as V0 computes them.
            for (h, &j) in halo.iter().enumerate() {
                let j = j as usize;
                let off = offs[h] as usize;
                let wr = wp.row_range(j);
                for k in wr.clone() {
                    map[wp.col_idx()[k] as usize] = (k - wr.start) as u32;
                }
                let prow = &mut panel[off * fc..(off + wr.len()) * fc];
                prow.fill(0.0);
                for ka in ap.row_range(j) {
                    let l = ap.col_idx()[ka] as usize;
                    for kp in pp.row_range(l) {
                        let q = map[pp.col_idx()[kp] as usize] as usize;
                        K::ap_acc(a.block(ka), p.block(kp), &mut prow[q * fc..(q + 1) * fc]);
                    }
                }
            }
            // Coarse rows of the tile from the panel, in V0's order.
            for i in s.tile_rows[t] as usize..s.tile_rows[t + 1] as usize {
                let cr = cp.row_range(i);
                for k in cr.clone() {
                    map[cp.col_idx()[k] as usize] = (k - cr.start) as u32;
                }
                let crow = &mut o[(cr.start - row0) * cc..(cr.end - row0) * cc];
                crow.fill(0.0);
                for kr in rp.row_range(i) {
                    let j = rp.col_idx()[kr] as usize;
                    let pji = p.block(base.r_source[kr] as usize);
                    let off = offs[s.r_panel_row[kr] as usize] as usize;
                    let wr = wp.row_range(j);
                    for (q, k) in wr.enumerate() {
                        let slot = map[wp.col_idx()[k] as usize] as usize;
                        K::ptw_acc(
                            pji,
                            &panel[(off + q) * fc..(off + q + 1) * fc],
                            &mut crow[slot * cc..(slot + 1) * cc],
                        );
                    }
                }
            }
        }
    };
    for_each_row_chunk(&e.chunks, cp.row_ptr(), cc, c.values_mut(), &mut e.scratch, &body);
}

impl<K: ProductKernels> GalerkinProduct for PanelTiledExecutor<K> {
    fn variant(&self) -> Variant {
        Variant::PanelTiled
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        panel_numeric(self, a, p, c);
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.scratch.iter().map(|(p, m)| p.len() * 8 + m.len() * 4).sum()
    }
}

/// Row-Gustavson replay of one stage: chunk by chunk, segment by segment, each
/// `Y` block of a segment added into the output block at its position (every
/// output element sums its contributions in V0's order). Sequential: this is the
/// reference for the device's warp-per-chunk kernel.
fn row_gustavson_stage<S: Stage>(g: &RowSegments, x: &[f64], y: &[f64], out: &mut [f64]) {
    let mn = S::M * S::N;
    out.fill(0.0);
    for ch in 0..g.chunks() {
        let base = g.chunk_slot[ch] as usize * mn;
        let mut q = g.chunk_pos[ch] as usize;
        for seg in g.chunk_seg[ch] as usize..g.chunk_seg[ch + 1] as usize {
            let xb = &x[g.seg_x[seg] as usize * S::X..][..S::X];
            let y0 = g.seg_y[seg] as usize;
            for b in 0..g.seg_count(seg) {
                let at = base + g.position(q) * mn;
                S::acc(xb, &y[(y0 + b) * S::Y..][..S::Y], &mut out[at..at + mn]);
                q += 1;
            }
        }
    }
}

/// The row-Gustavson executor over the kernels `K`.
pub struct RowGustavsonExecutor<K> {
    schedule: Arc<RowGustavsonSchedule>,
    w: Vec<f64>,
    _k: PhantomData<K>,
}

impl<K: ProductKernels> RowGustavsonExecutor<K> {
    pub fn new(schedule: Arc<RowGustavsonSchedule>) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * K::BF * K::BC];
        Self {
            schedule,
            w,
            _k: PhantomData,
        }
    }
}

impl<K: ProductKernels> GalerkinProduct for RowGustavsonExecutor<K> {
    fn variant(&self) -> Variant {
        Variant::RowGustavson
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        check_inputs(&self.schedule.base, a, p, c, K::BF, K::BC)?;
        let s = &self.schedule;
        row_gustavson_stage::<ApStage<K>>(&s.ap, a.values(), p.values(), &mut self.w);
        row_gustavson_stage::<PtwStage<K>>(&s.rw, p.values(), &self.w, c.values_mut());
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}
