//! Executors of every Galerkin-product variant (numeric replay of a schedule).
//!
//! Each executor owns its buffers and scratch, so `numeric` allocates nothing
//! and searches nothing: every output position comes from the schedule. The
//! bodies are const-generic in the fine and coarse block sizes `(BF, BC)` and
//! dispatched from the matrices' shapes; the variants that promise V0's bytes
//! zero an accumulator and add contributions in V0's order with the same loop
//! nest per element ([`ptap_sparse::dense::gemm_acc`] and its transposed twin).
use crate::executor::TwoPassExecutor;
use crate::RuntimeError;
use ptap_schedules::variants::{
    ColumnSplitSchedule, FlatRecords, FlatStreamSchedule, FusedSchedule, OuterProductSchedule, PanelTiledSchedule,
    SlotRuns, SlotTiledSchedule,
};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::{gemm_acc, gemm_tn_acc};
use ptap_sparse::par::for_each_row_chunk;
use ptap_sparse::{dispatch_rc, BlockCsr, BlockPattern};
use rayon::prelude::*;
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

/// Largest scalar count of one output block the register accumulators take.
const MAX_BLOCK: usize = 64;

/// Builds the executor for `schedule` with `bf x bf` fine and `bc x bc` coarse blocks.
pub fn executor_for(
    schedule: &VariantSchedule,
    bf: usize,
    bc: usize,
) -> Result<Box<dyn GalerkinProduct>, RuntimeError> {
    if !matches!(schedule, VariantSchedule::TwoPass(_)) && !shipped(bf, bc) {
        return Err(RuntimeError::UnsupportedShape {
            variant: schedule.variant().name(),
            bf,
            bc,
        });
    }
    Ok(match schedule {
        VariantSchedule::TwoPass(s) => Box::new(TwoPassExecutor::new(s.clone(), bf, bc)),
        VariantSchedule::Fused { schedule, reordered } => {
            Box::new(FusedExecutor::new(schedule.clone(), *reordered, bf, bc))
        }
        VariantSchedule::SlotTiled(s) => Box::new(SlotTiledExecutor::new(s.clone(), bf, bc)),
        VariantSchedule::ColumnSplit(s) => Box::new(ColumnSplitExecutor::new(s.clone(), bf, bc)),
        VariantSchedule::PanelTiled(s) => Box::new(PanelTiledExecutor::new(s.clone(), bf, bc)),
        VariantSchedule::FlatStream(s) => Box::new(FlatStreamExecutor::new(s.clone(), bf, bc)),
        VariantSchedule::OuterProduct(s) => Box::new(OuterProductExecutor::new(s.clone(), bf, bc)),
    })
}

fn shipped(bf: usize, bc: usize) -> bool {
    matches!(
        (bf, bc),
        (1, 1) | (2, 2) | (2, 3) | (3, 2) | (3, 3) | (3, 6) | (6, 3) | (6, 6)
    )
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

pub struct FusedExecutor {
    schedule: Arc<FusedSchedule>,
    reordered: bool,
    bf: usize,
    bc: usize,
    maps: Vec<Vec<u32>>,
}

impl FusedExecutor {
    pub fn new(schedule: Arc<FusedSchedule>, reordered: bool, bf: usize, bc: usize) -> Self {
        let maps = vec![vec![u32::MAX; schedule.base.c.ncols()]; schedule.chunks.len()];
        Self {
            schedule,
            reordered,
            bf,
            bc,
            maps,
        }
    }
}

fn fused_numeric<const BF: usize, const BC: usize>(
    s: &FusedSchedule,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
    maps: &mut [Vec<u32>],
) {
    let base = &s.base;
    let (cp, r, ap, pp) = (base.c.clone(), &base.r, a.pattern(), p.pattern());
    let vals = c.values_mut();
    let out = DisjointRows {
        ptr: vals.as_mut_ptr(),
        len: vals.len(),
    };
    let out = &out;
    s.chunks.par_iter().zip(maps.par_iter_mut()).for_each(|(chunk, map)| {
        let mut t = [0.0f64; MAX_BLOCK];
        for &row in &s.row_order[chunk.clone()] {
            let i = row as usize;
            let cr = cp.row_range(i);
            // SAFETY: row `i` appears once in `row_order`, in this chunk only.
            let crow = unsafe { out.slice(cr.start * BC * BC..cr.end * BC * BC) };
            crow.fill(0.0);
            for k in cr.clone() {
                map[cp.col_idx()[k] as usize] = (k - cr.start) as u32;
            }
            for kr in r.row_range(i) {
                let j = r.col_idx()[kr] as usize;
                let pji = p.block(base.r_source[kr] as usize);
                for ka in ap.row_range(j) {
                    let l = ap.col_idx()[ka] as usize;
                    let t = &mut t[..BC * BF];
                    t.fill(0.0);
                    gemm_tn_acc::<BC, BF, BF>(pji, a.block(ka), t);
                    for kp in pp.row_range(l) {
                        let s = map[pp.col_idx()[kp] as usize] as usize;
                        gemm_acc::<BC, BF, BC>(t, p.block(kp), &mut crow[s * BC * BC..(s + 1) * BC * BC]);
                    }
                }
            }
        }
    });
}

impl GalerkinProduct for FusedExecutor {
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
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.base, a, p, c, bf, bc)?;
        let (s, maps) = (&self.schedule, &mut self.maps);
        dispatch_rc!(bf, bc; fused_numeric(s, a, p, c, maps); unreachable!("shape checked at construction"));
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        0
    }
}

// ---------------------------------------------------------------- V2b / column split

/// Runs slot-owner accumulation of one stage over `tiles` of contiguous slots.
/// `XT`: the `x` block is applied transposed (`P^T` in the `R W` stage).
#[allow(clippy::too_many_arguments)]
fn slot_runs_numeric<const M: usize, const K: usize, const N: usize, const XT: bool>(
    runs: &SlotRuns,
    tiles: &[usize],
    chunks: &[Range<usize>],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let body = |tr: Range<usize>, o: &mut [f64], _: &mut ()| {
        let first = tiles[tr.start];
        for s in first..tiles[tr.end] {
            let mut acc = [0.0f64; MAX_BLOCK];
            let acc = &mut acc[..M * N];
            for q in runs.run(s) {
                let xb = &x[runs.x[q] as usize * M * K..];
                let yb = &y[runs.y[q] as usize * K * N..];
                if XT {
                    gemm_tn_acc::<M, K, N>(xb, yb, acc);
                } else {
                    gemm_acc::<M, K, N>(xb, yb, acc);
                }
            }
            o[(s - first) * M * N..(s - first + 1) * M * N].copy_from_slice(acc);
        }
    };
    for_each_row_chunk(chunks, tiles, M * N, out, unit, &body);
}

/// Groups of consecutive tiles, one task each.
fn tile_groups(ntiles: usize) -> Vec<Range<usize>> {
    let per = ntiles.div_ceil(rayon::current_num_threads() * 16).max(1);
    (0..ntiles).step_by(per).map(|s| s..(s + per).min(ntiles)).collect()
}

fn to_usize(v: &[u64]) -> Vec<usize> {
    v.iter().map(|&x| x as usize).collect()
}

pub struct SlotTiledExecutor {
    schedule: Arc<SlotTiledSchedule>,
    bf: usize,
    bc: usize,
    w: Vec<f64>,
    ap_tiles: Vec<usize>,
    rw_tiles: Vec<usize>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
}

impl SlotTiledExecutor {
    pub fn new(schedule: Arc<SlotTiledSchedule>, bf: usize, bc: usize) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * bf * bc];
        let (ap_tiles, rw_tiles) = (to_usize(&schedule.ap_tiles), to_usize(&schedule.rw_tiles));
        let ap_chunks = tile_groups(ap_tiles.len() - 1);
        let rw_chunks = tile_groups(rw_tiles.len() - 1);
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            bf,
            bc,
            w,
            ap_tiles,
            rw_tiles,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
        }
    }
}

fn slot_tiled_numeric<const BF: usize, const BC: usize>(
    e: &mut SlotTiledExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) {
    let s = &e.schedule;
    slot_runs_numeric::<BF, BF, BC, false>(
        &s.ap,
        &e.ap_tiles,
        &e.ap_chunks,
        a.values(),
        p.values(),
        &mut e.w,
        &mut e.unit_ap,
    );
    slot_runs_numeric::<BC, BF, BC, true>(
        &s.rw,
        &e.rw_tiles,
        &e.rw_chunks,
        p.values(),
        &e.w,
        c.values_mut(),
        &mut e.unit_rw,
    );
}

impl GalerkinProduct for SlotTiledExecutor {
    fn variant(&self) -> Variant {
        Variant::SlotTiled
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.base, a, p, c, bf, bc)?;
        dispatch_rc!(bf, bc; slot_tiled_numeric(self, a, p, c); unreachable!("shape checked at construction"));
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
fn column_split_numeric_stage<const M: usize, const K: usize, const N: usize, const XT: bool>(
    runs: &SlotRuns,
    order: &[u32],
    bounds: &[usize],
    chunks: &[Range<usize>],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let body = |wr: Range<usize>, o: &mut [f64], _: &mut ()| {
        let first = bounds[wr.start];
        for &s in &order[first..bounds[wr.end]] {
            let s = s as usize;
            let dst = &mut o[(s - first) * M * N..(s - first + 1) * M * N];
            for j in 0..N {
                let mut col = [0.0f64; 16];
                for q in runs.run(s) {
                    let xb = &x[runs.x[q] as usize * M * K..];
                    let yb = &y[runs.y[q] as usize * K * N..];
                    for i in 0..M {
                        for k in 0..K {
                            let xik = if XT { xb[k * M + i] } else { xb[i * K + k] };
                            col[i] += xik * yb[k * N + j];
                        }
                    }
                }
                for i in 0..M {
                    dst[i * N + j] = col[i];
                }
            }
        }
    };
    for_each_row_chunk(chunks, bounds, M * N, out, unit, &body);
}

pub struct ColumnSplitExecutor {
    schedule: Arc<ColumnSplitSchedule>,
    bf: usize,
    bc: usize,
    w: Vec<f64>,
    ap_bounds: Vec<usize>,
    rw_bounds: Vec<usize>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
}

/// Window boundaries (slot indices, multiples of `window`, plus the end).
fn window_bounds(slots: usize, window: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..slots).step_by(window.max(1)).collect();
    b.push(slots);
    b
}

impl ColumnSplitExecutor {
    pub fn new(schedule: Arc<ColumnSplitSchedule>, bf: usize, bc: usize) -> Self {
        let t = &schedule.tiled;
        let w = vec![0.0; t.base.w.nnzb() * bf * bc];
        let ap_bounds = window_bounds(t.ap.slots(), schedule.window);
        let rw_bounds = window_bounds(t.rw.slots(), schedule.window);
        let ap_chunks = tile_groups(ap_bounds.len() - 1);
        let rw_chunks = tile_groups(rw_bounds.len() - 1);
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            bf,
            bc,
            w,
            ap_bounds,
            rw_bounds,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
        }
    }
}

fn column_split_numeric<const BF: usize, const BC: usize>(
    e: &mut ColumnSplitExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) {
    let s = &e.schedule;
    let t = &s.tiled;
    column_split_numeric_stage::<BF, BF, BC, false>(
        &t.ap,
        &s.ap_order,
        &e.ap_bounds,
        &e.ap_chunks,
        a.values(),
        p.values(),
        &mut e.w,
        &mut e.unit_ap,
    );
    column_split_numeric_stage::<BC, BF, BC, true>(
        &t.rw,
        &s.rw_order,
        &e.rw_bounds,
        &e.rw_chunks,
        p.values(),
        &e.w,
        c.values_mut(),
        &mut e.unit_rw,
    );
}

impl GalerkinProduct for ColumnSplitExecutor {
    fn variant(&self) -> Variant {
        Variant::ColumnSplit
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.tiled.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.tiled.base, a, p, c, bf, bc)?;
        dispatch_rc!(bf, bc; column_split_numeric(self, a, p, c); unreachable!("shape checked at construction"));
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V3

/// Sweeps records tile by tile: each tile owns whole output rows, zeroes them and
/// accumulates every record into the slot it names.
fn flat_numeric_stage<const M: usize, const K: usize, const N: usize, const XT: bool>(
    f: &FlatRecords,
    chunks: &[Range<usize>],
    row_ptr: &[usize],
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
    unit: &mut [()],
) {
    let body = |rows: Range<usize>, o: &mut [f64], _: &mut ()| {
        o.fill(0.0);
        let base = row_ptr[rows.start];
        // Tiles are cut at row boundaries, so the chunk's records are contiguous.
        let t0 = f.tile_rows.partition_point(|&r| (r as usize) < rows.start);
        let t1 = f.tile_rows.partition_point(|&r| (r as usize) < rows.end);
        for q in f.tile_records[t0] as usize..f.tile_records[t1] as usize {
            let s = f.slot[q] as usize - base;
            let xb = &x[f.x[q] as usize * M * K..];
            let yb = &y[f.y[q] as usize * K * N..];
            let dst = &mut o[s * M * N..(s + 1) * M * N];
            if XT {
                gemm_tn_acc::<M, K, N>(xb, yb, dst);
            } else {
                gemm_acc::<M, K, N>(xb, yb, dst);
            }
        }
    };
    for_each_row_chunk(chunks, row_ptr, M * N, out, unit, &body);
}

pub struct FlatStreamExecutor {
    schedule: Arc<FlatStreamSchedule>,
    bf: usize,
    bc: usize,
    w: Vec<f64>,
    ap_chunks: Vec<Range<usize>>,
    rw_chunks: Vec<Range<usize>>,
    unit_ap: Vec<()>,
    unit_rw: Vec<()>,
}

/// Groups of consecutive record tiles as output-row ranges.
fn row_groups(f: &FlatRecords) -> Vec<Range<usize>> {
    tile_groups(f.tiles())
        .into_iter()
        .map(|g| f.tile_rows[g.start] as usize..f.tile_rows[g.end] as usize)
        .collect()
}

impl FlatStreamExecutor {
    pub fn new(schedule: Arc<FlatStreamSchedule>, bf: usize, bc: usize) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * bf * bc];
        let (ap_chunks, rw_chunks) = (row_groups(&schedule.ap), row_groups(&schedule.rw));
        let (unit_ap, unit_rw) = (vec![(); ap_chunks.len()], vec![(); rw_chunks.len()]);
        Self {
            schedule,
            bf,
            bc,
            w,
            ap_chunks,
            rw_chunks,
            unit_ap,
            unit_rw,
        }
    }
}

fn flat_numeric<const BF: usize, const BC: usize>(
    e: &mut FlatStreamExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) {
    let s = &e.schedule;
    let (wp, cp) = (s.base.w.clone(), s.base.c.clone());
    flat_numeric_stage::<BF, BF, BC, false>(
        &s.ap,
        &e.ap_chunks,
        wp.row_ptr(),
        a.values(),
        p.values(),
        &mut e.w,
        &mut e.unit_ap,
    );
    flat_numeric_stage::<BC, BF, BC, true>(
        &s.rw,
        &e.rw_chunks,
        cp.row_ptr(),
        p.values(),
        &e.w,
        c.values_mut(),
        &mut e.unit_rw,
    );
}

impl GalerkinProduct for FlatStreamExecutor {
    fn variant(&self) -> Variant {
        Variant::FlatStream
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.base, a, p, c, bf, bc)?;
        dispatch_rc!(bf, bc; flat_numeric(self, a, p, c); unreachable!("shape checked at construction"));
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V4

/// `out[slot] += x y` (`x^T y` when `XT`) for every record, parallel over
/// fine-row tiles, with element-wise atomic adds (compare-and-swap on the bits).
fn scatter_stage<const M: usize, const K: usize, const N: usize, const XT: bool>(
    f: &FlatRecords,
    x: &[f64],
    y: &[f64],
    out: &mut [f64],
) {
    out.par_iter_mut().with_min_len(4096).for_each(|v| *v = 0.0);
    // SAFETY: AtomicU64 has the size and alignment of f64 on every target with
    // 64-bit atomics, and `out` is exclusively borrowed for the whole pass.
    let atoms: &[AtomicU64] = unsafe { std::slice::from_raw_parts(out.as_mut_ptr() as *const AtomicU64, out.len()) };
    (0..f.tiles()).into_par_iter().for_each(|t| {
        let mut tmp = [0.0f64; MAX_BLOCK];
        for q in f.tile_records[t] as usize..f.tile_records[t + 1] as usize {
            let tmp = &mut tmp[..M * N];
            tmp.fill(0.0);
            let (xb, yb) = (&x[f.x[q] as usize * K * M..], &y[f.y[q] as usize * K * N..]);
            if XT {
                gemm_tn_acc::<M, K, N>(xb, yb, tmp);
            } else {
                gemm_acc::<M, K, N>(xb, yb, tmp);
            }
            let base = f.slot[q] as usize * M * N;
            for (e, v) in tmp.iter().enumerate() {
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

pub struct OuterProductExecutor {
    schedule: Arc<OuterProductSchedule>,
    bf: usize,
    bc: usize,
    w: Vec<f64>,
}

impl OuterProductExecutor {
    pub fn new(schedule: Arc<OuterProductSchedule>, bf: usize, bc: usize) -> Self {
        let w = vec![0.0; schedule.base.w.nnzb() * bf * bc];
        Self { schedule, bf, bc, w }
    }
}

fn outer_numeric<const BF: usize, const BC: usize>(
    e: &mut OuterProductExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) {
    let s = &e.schedule;
    scatter_stage::<BF, BF, BC, false>(&s.pass1, a.values(), p.values(), &mut e.w);
    scatter_stage::<BC, BF, BC, true>(&s.pass2, p.values(), &e.w, c.values_mut());
}

impl GalerkinProduct for OuterProductExecutor {
    fn variant(&self) -> Variant {
        Variant::OuterProductScatter
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.base, a, p, c, bf, bc)?;
        dispatch_rc!(bf, bc; outer_numeric(self, a, p, c); unreachable!("shape checked at construction"));
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.w.len() * 8
    }
}

// ---------------------------------------------------------------- V2c

pub struct PanelTiledExecutor {
    schedule: Arc<PanelTiledSchedule>,
    bf: usize,
    bc: usize,
    /// One scratch panel and column map per group of tiles.
    scratch: Vec<(Vec<f64>, Vec<u32>)>,
    chunks: Vec<Range<usize>>,
}

impl PanelTiledExecutor {
    pub fn new(schedule: Arc<PanelTiledSchedule>, bf: usize, bc: usize) -> Self {
        let chunks: Vec<Range<usize>> = schedule
            .groups
            .iter()
            .map(|g| schedule.tile_rows[g.start] as usize..schedule.tile_rows[g.end] as usize)
            .collect();
        let ncols = schedule.base.c.ncols();
        let scratch = chunks
            .iter()
            .map(|_| (vec![0.0; schedule.max_panel_blocks * bf * bc], vec![u32::MAX; ncols]))
            .collect();
        Self {
            schedule,
            bf,
            bc,
            scratch,
            chunks,
        }
    }
}

fn panel_numeric<const BF: usize, const BC: usize>(
    e: &mut PanelTiledExecutor,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
) {
    let s = &e.schedule;
    let base = &s.base;
    let (ap, pp, wp, rp, cp) = (a.pattern(), p.pattern(), &base.w, &base.r, base.c.clone());
    const { assert!(BF * BC <= MAX_BLOCK) };
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
                let prow = &mut panel[off * BF * BC..(off + wr.len()) * BF * BC];
                prow.fill(0.0);
                for ka in ap.row_range(j) {
                    let l = ap.col_idx()[ka] as usize;
                    for kp in pp.row_range(l) {
                        let q = map[pp.col_idx()[kp] as usize] as usize;
                        gemm_acc::<BF, BF, BC>(a.block(ka), p.block(kp), &mut prow[q * BF * BC..(q + 1) * BF * BC]);
                    }
                }
            }
            // Coarse rows of the tile from the panel, in V0's order.
            for i in s.tile_rows[t] as usize..s.tile_rows[t + 1] as usize {
                let cr = cp.row_range(i);
                for k in cr.clone() {
                    map[cp.col_idx()[k] as usize] = (k - cr.start) as u32;
                }
                let crow = &mut o[(cr.start - row0) * BC * BC..(cr.end - row0) * BC * BC];
                crow.fill(0.0);
                for kr in rp.row_range(i) {
                    let j = rp.col_idx()[kr] as usize;
                    let pji = p.block(base.r_source[kr] as usize);
                    let off = offs[s.r_panel_row[kr] as usize] as usize;
                    let wr = wp.row_range(j);
                    for (q, k) in wr.enumerate() {
                        let slot = map[wp.col_idx()[k] as usize] as usize;
                        gemm_tn_acc::<BC, BF, BC>(
                            pji,
                            &panel[(off + q) * BF * BC..(off + q + 1) * BF * BC],
                            &mut crow[slot * BC * BC..(slot + 1) * BC * BC],
                        );
                    }
                }
            }
        }
    };
    for_each_row_chunk(&e.chunks, cp.row_ptr(), BC * BC, c.values_mut(), &mut e.scratch, &body);
}

impl GalerkinProduct for PanelTiledExecutor {
    fn variant(&self) -> Variant {
        Variant::PanelTiled
    }
    fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.schedule.base.c
    }
    fn numeric(&mut self, a: &BlockCsr, p: &BlockCsr, c: &mut BlockCsr) -> Result<(), RuntimeError> {
        let (bf, bc) = (self.bf, self.bc);
        check_inputs(&self.schedule.base, a, p, c, bf, bc)?;
        dispatch_rc!(bf, bc; panel_numeric(self, a, p, c); unreachable!("shape checked at construction"));
        Ok(())
    }
    fn buffer_bytes(&self) -> usize {
        self.scratch.iter().map(|(p, m)| p.len() * 8 + m.len() * 4).sum()
    }
}
