//! Numeric Galerkin products on the device, replaying the inspector's
//! schedules (paper, `sec:impl-cuda`). Schedule arrays are uploaded once; a
//! numeric call moves nothing across the bus.
//!
//! Launch geometry follows the output, not the coarse rows (the occupancy
//! finding of `sec:measured`): the two-pass stages launch one thread per
//! output scalar, the slot-tiled and column-split stages one thread (group)
//! per output slot, and the scatter one thread per record scalar, so coarse
//! levels still fill the device. The flat stream's warps follow the
//! inspector's record tiles.
use crate::{grid_for, Arg, CudaError, Device, DeviceBlockCsr, Kernel, Kernels};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ptap_codegen_core::gpu::{self, Stage};
use ptap_codegen_core::ShapeSet;
use ptap_codegen_core::{gpu_lane, gpu_mma};
use ptap_runtime::KernelRegistry;
use ptap_schedules::variants::{
    ColumnSplitSchedule, FlatRecords, FoldedRuns, PairedRuns, RowSegments, SlotRuns, TensorPairSymSchedule,
    COLUMN_SPLIT_WINDOW, DIAGONAL_FLAG,
};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockPattern;
use std::sync::Arc;

struct DevPattern {
    rp: CudaSlice<u32>,
    ci: CudaSlice<u32>,
    /// Row of every block.
    row: CudaSlice<u32>,
    nnzb: usize,
}

impl DevPattern {
    fn upload(dev: &Device, p: &BlockPattern) -> Result<Self, CudaError> {
        let rp = dev.upload_u32("row pointers", p.row_ptr())?;
        // Built on the device from the row pointers, as a matrix's are.
        let row = dev.zeros::<u32>(p.nnzb())?;
        device_block_rows(dev, &rp, p.nrows(), &row)?;
        Ok(Self {
            rp,
            ci: dev.upload(p.col_idx())?,
            row,
            nnzb: p.nnzb(),
        })
    }
}

struct DevRuns {
    ptr: CudaSlice<u32>,
    x: CudaSlice<u32>,
    y: CudaSlice<u32>,
    slots: usize,
}

impl DevRuns {
    fn upload(dev: &Device, r: &SlotRuns) -> Result<Self, CudaError> {
        Ok(Self {
            ptr: dev.upload_u32("slot-run pointers", &r.ptr)?,
            x: dev.upload(&r.x)?,
            y: dev.upload(&r.y)?,
            slots: r.slots(),
        })
    }
}

/// The module of the kernels that build index arrays on the device from what
/// was uploaded, so that they never cross the bus.
const UPLOAD_MODULE: &str = "ptap_upload";
const PAIR_ENTRIES: &str = "ptap_pair_entries";
const BLOCK_ROWS: &str = "ptap_block_rows";
const MIRROR_POSITIONS: &str = "ptap_mirror_positions";

/// `ptap_block_rows`: the block row of every stored block of a pattern (the
/// merge-path SpMV's segment keys), one thread per row.
///
/// `ptap_mirror_positions`: for the mirrored SpMV of a square pattern, one
/// thread per stored block `k = (i, j)`: `pos[k] = k` on and above the
/// diagonal, below it the slot of `(j, i)` (a binary search of row `j`) with
/// bit 31 set. A block without a mirror sets `status` and keeps `pos[k] = k`.
///
/// `ptap_pair_entries`: one thread per unit writes its entries `uptr[u]..uptr[u + 1]`: with
/// `width` 1 its slot's run `(x, y)` interleaved (none for an absent slot, a
/// folded diagonal unit's empty half), with `width` 2 the
/// order-preserving merge by `y` of its two slots' runs, exactly as the
/// inspector's `merge_runs` (`ptap_schedules::variants`). A unit whose merge
/// is not as long as its pointer range sets `status` and writes nothing past
/// its range (the loader checked the units; this keeps a bad one in bounds).
const UPLOAD_SOURCE: &str = r#"
extern "C" __global__ void ptap_block_rows(
    const unsigned int* __restrict__ row_ptr, unsigned int* __restrict__ rows, unsigned int nrows)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nrows) return;
    for (unsigned int k = row_ptr[i], e = row_ptr[i + 1]; k < e; ++k) rows[k] = i;
}

extern "C" __global__ void ptap_mirror_positions(
    const unsigned int* __restrict__ row_ptr, const unsigned int* __restrict__ ci,
    const unsigned int* __restrict__ rows, unsigned int* __restrict__ pos,
    unsigned int* __restrict__ status, unsigned int nnzb)
{
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nnzb) return;
    unsigned int i = rows[k], j = ci[k];
    if (j >= i) { pos[k] = k; return; }
    unsigned int lo = row_ptr[j], hi = row_ptr[j + 1];
    while (lo < hi) {
        unsigned int mid = lo + (hi - lo) / 2;
        if (ci[mid] < i) lo = mid + 1; else hi = mid;
    }
    if (lo < row_ptr[j + 1] && ci[lo] == i) {
        pos[k] = lo | 0x80000000u;
    } else {
        pos[k] = k;
        atomicOr(status, 1u);
    }
}

extern "C" __global__ void ptap_pair_entries(
    const unsigned int* __restrict__ run_ptr, const unsigned int* __restrict__ x,
    const unsigned int* __restrict__ y, const unsigned int* __restrict__ uptr,
    const unsigned int* __restrict__ uslots, unsigned int* __restrict__ ent,
    unsigned int* __restrict__ status, unsigned int units, unsigned int width)
{
    const unsigned int NO = 0xffffffffu;
    unsigned int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= units) return;
    unsigned int k = uptr[u], ke = uptr[u + 1];
    unsigned int s0 = uslots[width * u];
    if (s0 == NO) { if (k != ke) atomicOr(status, 1u); return; }
    unsigned int a = run_ptr[s0], ae = run_ptr[s0 + 1];
    if (width == 1) {
        if (ae - a != ke - k) { atomicOr(status, 1u); return; }
        for (; a < ae; ++a, ++k) {
            uint2 e; e.x = x[a]; e.y = y[a];
            reinterpret_cast<uint2*>(ent)[k] = e;
        }
        return;
    }
    unsigned int s1 = uslots[2 * u + 1], b = 0, be = 0;
    if (s1 != NO) { b = run_ptr[s1]; be = run_ptr[s1 + 1]; }
    while (a < ae || b < be) {
        if (k >= ke) { atomicOr(status, 1u); return; }
        unsigned int x0 = NO, x1 = NO, yy;
        if (a < ae) {
            unsigned int ya = y[a];
            if (b < be && y[b] <= ya) {
                yy = y[b]; x1 = x[b]; ++b;
                if (yy == ya) { x0 = x[a]; ++a; }
            } else { yy = ya; x0 = x[a]; ++a; }
        } else { yy = y[b]; x1 = x[b]; ++b; }
        uint4 e; e.x = x0; e.y = yy; e.z = x1; e.w = yy;
        reinterpret_cast<uint4*>(ent)[k++] = e;
    }
    if (k != ke) atomicOr(status, 1u);
}
"#;

/// The module of the upload's kernels (public for the NVRTC test, which
/// compiles every source the backend launches).
#[doc(hidden)]
pub fn upload_module() -> ptap_codegen_core::CudaModule {
    use ptap_codegen_core::{param, KernelEntry, ParamTy};
    let p = |n| param(n, ParamTy::PtrU32);
    ptap_codegen_core::CudaModule {
        name: UPLOAD_MODULE.into(),
        source: UPLOAD_SOURCE.into(),
        entries: vec![
            KernelEntry {
                name: BLOCK_ROWS.into(),
                params: vec![
                    p("row_ptr"),
                    param("rows", ParamTy::PtrMutU32),
                    param("nrows", ParamTy::U32),
                ],
                doc: "The block row of every stored block of a pattern.".into(),
            },
            KernelEntry {
                name: MIRROR_POSITIONS.into(),
                params: vec![
                    p("row_ptr"),
                    p("ci"),
                    p("rows"),
                    param("pos", ParamTy::PtrMutU32),
                    param("status", ParamTy::PtrMutU32),
                    param("nnzb", ParamTy::U32),
                ],
                doc: "The mirrored SpMV's position of every stored block of a square pattern.".into(),
            },
            KernelEntry {
                name: PAIR_ENTRIES.into(),
                params: vec![
                    p("run_ptr"),
                    p("x"),
                    p("y"),
                    p("uptr"),
                    p("uslots"),
                    param("ent", ParamTy::PtrMutU32),
                    param("status", ParamTy::PtrMutU32),
                    param("units", ParamTy::U32),
                    param("width", ParamTy::U32),
                ],
                doc: "The tensor pair's entries of each unit, from its slots' runs.".into(),
            },
        ],
    }
}

/// The row of every stored block of the pattern whose `u32` row pointers
/// (`nrows + 1`) are `row_ptr` on the device, into `rows` (`nnzb` long).
pub(crate) fn device_block_rows(
    dev: &Device,
    row_ptr: &CudaSlice<u32>,
    nrows: usize,
    rows: &CudaSlice<u32>,
) -> Result<(), CudaError> {
    if nrows == 0 {
        return Ok(());
    }
    let n = u32::try_from(nrows).map_err(|_| CudaError::TooLarge {
        what: "a pattern's rows".into(),
        n: nrows,
    })?;
    let k = dev.module(&upload_module())?;
    dev.launch(
        &k[BLOCK_ROWS],
        grid_for(nrows as u64, 256),
        &[Arg::U32s(row_ptr), Arg::U32sMut(rows), Arg::U32(n)],
    )
}

/// The mirrored SpMV's positions of `a`'s blocks ([`crate::DeviceSpmv::mirror`]),
/// built on the device from its pattern; `None` where some block has no
/// mirror (the pattern is not structurally symmetric) or `a` is not square.
pub(crate) fn device_mirror_positions(dev: &Device, a: &DeviceBlockCsr) -> Result<Option<CudaSlice<u32>>, CudaError> {
    if a.nrows != a.ncols {
        return Ok(None);
    }
    let pos = dev.zeros::<u32>(a.nnzb.max(1))?;
    if a.nnzb == 0 {
        return Ok(Some(pos));
    }
    let status = dev.zeros::<u32>(1)?;
    let k = dev.module(&upload_module())?;
    dev.launch(
        &k[MIRROR_POSITIONS],
        grid_for(a.nnzb as u64, 256),
        &[
            Arg::U32s(&a.row_ptr),
            Arg::U32s(&a.col_idx),
            Arg::U32s(&a.block_row),
            Arg::U32sMut(&pos),
            Arg::U32sMut(&status),
            Arg::U32(a.nnzb as u32),
        ],
    )?;
    Ok((dev.download(&status)?[0] == 0).then_some(pos))
}

/// The tensor-pair units of one stage.
struct DevUnits {
    ptr: CudaSlice<u32>,
    slots: CudaSlice<u32>,
    ent: CudaSlice<u32>,
    units: usize,
}

impl DevUnits {
    /// Uploads the units and builds their entries on the device from `runs`
    /// (uploaded for it, then freed): the entries are about as many bytes as
    /// the runs and never cross the bus, and a schedule loaded from a file
    /// has none on the host ([`PairedRuns`]).
    fn upload(dev: &Device, r: &PairedRuns, runs: &SlotRuns) -> Result<Self, CudaError> {
        let ptr = dev.upload_u32("tensor-pair unit pointers", &r.ptr)?;
        let slots = dev.upload(&r.slots)?;
        let ent = dev.zeros::<u32>(2 * r.width * r.entries())?;
        let units = r.units();
        if units > 0 && r.entries() > 0 {
            let run_ptr = dev.upload_u32("slot-run pointers", &runs.ptr)?;
            let (x, y) = (dev.upload(&runs.x)?, dev.upload(&runs.y)?);
            let status = dev.zeros::<u32>(1)?;
            let k = dev.module(&upload_module())?;
            let n = u32::try_from(units).map_err(|_| CudaError::TooLarge {
                what: "the tensor-pair units".into(),
                n: units,
            })?;
            dev.launch(
                &k[PAIR_ENTRIES],
                grid_for(units as u64, 256),
                &[
                    Arg::U32s(&run_ptr),
                    Arg::U32s(&x),
                    Arg::U32s(&y),
                    Arg::U32s(&ptr),
                    Arg::U32s(&slots),
                    Arg::U32sMut(&ent),
                    Arg::U32sMut(&status),
                    Arg::U32(n),
                    Arg::U32(r.width as u32),
                ],
            )?;
            if dev.download(&status)?[0] != 0 {
                return Err(CudaError::Runtime(ptap_runtime::RuntimeError::PatternMismatch {
                    what: "tensor-pair units",
                    detail: "a unit's entry range is not as long as the merge of its slots' runs".into(),
                }));
            }
        }
        Ok(Self { ptr, slots, ent, units })
    }
    /// The symmetric pair's folded `P^T W'` units: their halves' entries built
    /// as width-1 units' (an absent slot: an empty half), `units` the folded count.
    /// `window`: see [`longest_first`] (`None`: the schedule's order).
    fn upload_fold(dev: &Device, f: &FoldedRuns, runs: &SlotRuns, window: Option<usize>) -> Result<Self, CudaError> {
        let halves = f.halves();
        let halves = match window {
            Some(w) => longest_first(&halves, 2, w),
            None => halves,
        };
        let mut u = Self::upload(dev, &halves, runs)?;
        u.units = f.units();
        Ok(u)
    }
    fn bytes(&self) -> usize {
        self.ptr.num_bytes() + self.slots.num_bytes() + self.ent.num_bytes()
    }
}

/// The entries of `units` as the device builds them from `runs` (what the
/// tensor pair's upload does), copied back: for tests against the inspector's.
#[doc(hidden)]
pub fn pair_entries_on_device(dev: &Device, units: &PairedRuns, runs: &SlotRuns) -> Result<Vec<u32>, CudaError> {
    let u = DevUnits::upload(dev, units, runs)?;
    let mut ent = dev.download(&u.ent)?;
    ent.truncate(2 * units.width * units.entries());
    Ok(ent)
}

/// One stage of the tensor-pair product: its units, or, where those do not pay
/// ([`gpu_mma::mma_pair_fits`]), column split's runs under the tensor core's kernel.
enum PairStage {
    Units(DevUnits),
    Runs {
        runs: DevRuns,
        order: CudaSlice<u32>,
    },
    /// The symmetric pair's runs, under its halving kernel: `bounds` holds per
    /// warp the run bounds of slot `order[w]` (the kernel's `ptr`); a block
    /// walks `chunk` consecutive slots of `order` ([`coarse_walk`]).
    HalfRuns {
        runs: DevRuns,
        order: CudaSlice<u32>,
        bounds: CudaSlice<u32>,
        chunk: u32,
    },
}

impl PairStage {
    /// `halve`: the symmetric pair's `A P` stage, whose runs kernel reads per-warp run bounds.
    fn upload(
        dev: &Device,
        st: Stage,
        units: &PairedRuns,
        runs: &SlotRuns,
        order: &[u32],
        halve: bool,
    ) -> Result<Self, CudaError> {
        Ok(if gpu_mma::mma_pair_fits(st) {
            Self::Units(DevUnits::upload(dev, units, runs)?)
        } else {
            let (dev_runs, dev_order) = (DevRuns::upload(dev, runs)?, dev.upload(order)?);
            if halve {
                // A run's end bound carries the diagonal flag of its last block: the schedule
                // puts a slot's diagonal contribution last (V0's order; the loader checks it),
                // and the kernel takes it after the others (`gpu_mma::mma_half_name`).
                if runs.contributions() >= DIAGONAL_FLAG as usize {
                    return Err(CudaError::TooLarge {
                        what: "symmetric A P contributions".into(),
                        n: runs.contributions(),
                    });
                }
                let b: Vec<u64> = order
                    .iter()
                    .flat_map(|&o| {
                        let (a, e) = (runs.ptr[o as usize], runs.ptr[o as usize + 1]);
                        let dg = e > a && runs.x[e as usize - 1] & DIAGONAL_FLAG != 0;
                        [a, e | if dg { DIAGONAL_FLAG as u64 } else { 0 }]
                    })
                    .collect();
                Self::HalfRuns {
                    runs: dev_runs,
                    order: dev_order,
                    bounds: dev.upload_u32("slot-run bounds", &b)?,
                    chunk: gpu_mma::mma_pair_launch().1,
                }
            } else {
                Self::Runs {
                    runs: dev_runs,
                    order: dev_order,
                }
            }
        })
    }
    fn bytes(&self) -> usize {
        match self {
            Self::Units(u) => u.bytes(),
            Self::Runs { runs, order } => runs_bytes(runs) + order.num_bytes(),
            Self::HalfRuns {
                runs, order, bounds, ..
            } => runs_bytes(runs) + order.num_bytes() + bounds.num_bytes(),
        }
    }
    /// The halving kernel's blocks walk the slots as [`coarse_walk`] says
    /// (`PTAP_SYM_AP_COARSE_WALK=CHUNK` overrides it, read once, here, for
    /// measurement and tests).
    fn walk_coarse(mut self, dev: &Device, kernels: &Kernels, st: Stage) -> Result<Self, CudaError> {
        if let Self::HalfRuns { runs, chunk, .. } = &mut self {
            *chunk = match std::env::var("PTAP_SYM_AP_COARSE_WALK")
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
            {
                Some(c) if c > 0 => c,
                _ => {
                    let resident = match kernels.get(&gpu_mma::mma_half_name(st)) {
                        Some(k) => k.blocks_per_sm(gpu_mma::mma_pair_launch().0)? * dev.sm_count(),
                        None => 0,
                    };
                    coarse_walk(runs.slots, resident as usize)
                }
            };
        }
        Ok(self)
    }
}

/// Slots a block of the symmetric pair's coarse halving `A P` kernel walks,
/// its 4 warps interleaved (4 slots per warp), where the stage has enough
/// slots: the block's slots are neighbours in the window order, so its warps
/// share their `A` and `P` blocks in the L1. On an H100 at k = 16 (ledger
/// step 33) level 1 took 0.388 ms walking 16 slots per block against
/// 0.404-0.405 one slot per warp; 8 / 32 / 64 slots took 0.394 / 0.393-0.395
/// / 0.430 (at 32 its `A P` read 48.1 M L2 sectors against 52.2 M, L1 hits
/// 43 % against 41 %). Level 2 walked lost (16 slots: 0.112 ms against
/// 0.095-0.097): a warp's slots run in series, so a stage needs
/// [`COARSE_WALK_WAVES`] waves of blocks.
const COARSE_WALK: u32 = 16;
/// Waves of resident blocks a coarse `A P` stage must fill before it walks.
const COARSE_WALK_WAVES: usize = 4;

/// The chunk of [`COARSE_WALK`] slots per block where `slots` fill
/// [`COARSE_WALK_WAVES`] waves of `resident` blocks, else one slot per warp.
fn coarse_walk(slots: usize, resident: usize) -> u32 {
    if resident > 0 && slots.div_ceil(COARSE_WALK as usize) >= COARSE_WALK_WAVES * resident {
        COARSE_WALK
    } else {
        gpu_mma::mma_pair_launch().1
    }
}

struct DevRecords {
    x: CudaSlice<u32>,
    y: CudaSlice<u32>,
    slot: CudaSlice<u32>,
    tile_rows: CudaSlice<u32>,
    tile_records: CudaSlice<u32>,
    records: usize,
    tiles: usize,
}

impl DevRecords {
    fn upload(dev: &Device, f: &FlatRecords) -> Result<Self, CudaError> {
        Ok(Self {
            x: dev.upload(&f.x)?,
            y: dev.upload(&f.y)?,
            slot: dev.upload(&f.slot)?,
            tile_rows: dev.upload(&f.tile_rows)?,
            tile_records: dev.upload_u32("record tile offsets", &f.tile_records)?,
            records: f.records(),
            tiles: f.tiles(),
        })
    }
}

struct DevSegments {
    chunk_slot: CudaSlice<u32>,
    chunk_seg: CudaSlice<u32>,
    chunk_pos: CudaSlice<u32>,
    seg_x: CudaSlice<u32>,
    seg_y: CudaSlice<u32>,
    seg_n: CudaSlice<u32>,
    pos: CudaSlice<u32>,
    chunks: usize,
}

impl DevSegments {
    fn upload(dev: &Device, r: &RowSegments) -> Result<Self, CudaError> {
        Ok(Self {
            chunk_slot: dev.upload_u32("row-Gustavson chunk slots", &r.chunk_slot)?,
            chunk_seg: dev.upload_u32("row-Gustavson segment offsets", &r.chunk_seg)?,
            chunk_pos: dev.upload_u32("row-Gustavson position offsets", &r.chunk_pos)?,
            seg_x: dev.upload(&r.seg_x)?,
            seg_y: dev.upload(&r.seg_y)?,
            seg_n: dev.upload(&r.seg_n)?,
            pos: dev.upload(&r.pos)?,
            chunks: r.chunks(),
        })
    }
    fn bytes(&self) -> usize {
        [
            &self.chunk_slot,
            &self.chunk_seg,
            &self.chunk_pos,
            &self.seg_x,
            &self.seg_y,
            &self.seg_n,
            &self.pos,
        ]
        .iter()
        .map(|a| a.num_bytes())
        .sum()
    }
}

enum Plan {
    TwoPass {
        r_source: CudaSlice<u32>,
        r: CudaSlice<f64>,
        rp: DevPattern,
        wp: DevPattern,
        cp: DevPattern,
    },
    SlotTiled {
        ap: DevRuns,
        rw: DevRuns,
    },
    ColumnSplit {
        ap: DevRuns,
        rw: DevRuns,
        ap_order: CudaSlice<u32>,
        rw_order: CudaSlice<u32>,
        window: u32,
    },
    FlatStream {
        ap: DevRecords,
        rw: DevRecords,
        w_rp: CudaSlice<u32>,
        c_rp: CudaSlice<u32>,
    },
    Scatter {
        p1: DevRecords,
        p2: DevRecords,
    },
    RowGustavson {
        ap: DevSegments,
        rw: DevSegments,
    },
    LaneTiled {
        ap: DevRuns,
        rw: DevRuns,
        ap_order: CudaSlice<u32>,
        rw_order: CudaSlice<u32>,
    },
    KSplit {
        ap: DevRuns,
        rw: DevRuns,
        ap_order: CudaSlice<u32>,
        rw_order: CudaSlice<u32>,
    },
    TensorCore {
        ap: DevRuns,
        rw: DevRuns,
        ap_order: CudaSlice<u32>,
        rw_order: CudaSlice<u32>,
    },
    TensorPair {
        ap: PairStage,
        rw: PairStage,
    },
    /// The symmetric tensor pair: `W' = (L + D/2) P` (the `A P` stage's
    /// halving kernels), then `A_c = X + X^T` ([`SymRw`]).
    TensorPairSym {
        ap: PairStage,
        rw: SymRw,
        walk: Walk,
    },
}

/// The symmetric pair's `P^T W'` stage: the folded units (one per slot of
/// `A_c`'s upper triangle, writing `X_IJ + X_JI^T` to both slots), or one
/// unit per slot writing `X`, then the symmetrize pass over the transposed
/// slot pairs `tr`, or (a stage of few runs) one unit per chunk of a run,
/// then the split pass.
enum SymRw {
    Fold(DevUnits),
    Pass {
        units: DevUnits,
        tr: CudaSlice<u32>,
    },
    /// One unit per chunk of a split run (`ptap_schedules::variants::SplitRuns`) writing its partial
    /// sum of `X` to `xs`, then the split pass summing each slot's chunks and
    /// its mirror's into `C` (`first`: each slot's first chunk).
    Split {
        units: DevUnits,
        xs: CudaSlice<f64>,
        first: CudaSlice<u32>,
        tr: CudaSlice<u32>,
    },
}

impl SymRw {
    /// Folds where [`fold_pays`] says so (`PTAP_SYM_FOLD=on|off` overrides it,
    /// read once, here, for measurement and tests).
    fn upload(dev: &Device, kernels: &Kernels, st: Stage, s: &TensorPairSymSchedule) -> Result<Self, CudaError> {
        // One unit per slot (folded or not) runs in windows sorted longest first
        // ([`RW_ORDER_WINDOW`]; `PTAP_SYM_RW_ORDER=off|W` overrides it, read once, here).
        let window = match std::env::var("PTAP_SYM_RW_ORDER").as_deref() {
            Ok("off") => None,
            Ok(v) if v.trim().parse::<usize>().is_ok_and(|w| w > 0) => v.trim().parse::<usize>().ok(),
            _ => Some(RW_ORDER_WINDOW),
        };
        let fold = match std::env::var("PTAP_SYM_FOLD").as_deref() {
            Ok("on") => true,
            Ok("off") => false,
            _ => {
                let (threads, per_block) = gpu_mma::mma_pair_launch();
                let resident = match kernels.get(&gpu_mma::mma_fold_name(st)) {
                    Some(k) => k.blocks_per_sm(threads)? * per_block * dev.sm_count(),
                    None => 0,
                };
                fold_pays(st, s.rw_fold.units(), resident as usize)
            }
        };
        if fold {
            return Ok(Self::Fold(DevUnits::upload_fold(dev, &s.rw_fold, &s.rw, window)?));
        }
        // Unfolded, a stage of few runs splits them ([`split_len`]; `PTAP_SYM_SPLIT=off|LEN`
        // overrides it, read once, here). The chunks follow from the validated runs alone.
        let split_len = match std::env::var("PTAP_SYM_SPLIT").as_deref() {
            Ok("off") => None,
            Ok(v) if v.trim().parse::<usize>().is_ok() => v.trim().parse::<usize>().ok(),
            _ => {
                let (threads, per_block) = gpu_mma::mma_pair_launch();
                let resident = match kernels.get(&gpu_mma::mma_pair_name(st)) {
                    Some(k) => k.blocks_per_sm(threads)? * per_block * dev.sm_count(),
                    None => 0,
                };
                split_len(s.rw.slots(), s.rw.contributions(), resident as usize)
            }
        };
        if let Some(split) = split_len.and_then(|n| s.rw.split(n)) {
            let units = PairedRuns {
                width: 1,
                ptr: split.runs.ptr.clone(),
                slots: (0..split.chunks() as u32).collect::<Vec<_>>().into(),
                ent: Default::default(),
            };
            return Ok(Self::Split {
                units: DevUnits::upload(dev, &units, &split.runs)?,
                xs: dev.zeros::<f64>((split.chunks() * st.m * st.n).max(1))?,
                first: dev.upload(&split.first)?,
                tr: dev.upload(&s.transpose)?,
            });
        }
        let mut single = PairedRuns {
            width: 1,
            ptr: s.rw.ptr.clone(),
            slots: (0..s.rw.slots() as u32).collect::<Vec<_>>().into(),
            ent: Default::default(),
        };
        if let Some(w) = window {
            single = longest_first(&single, 1, w);
        }
        Ok(Self::Pass {
            units: DevUnits::upload(dev, &single, &s.rw)?,
            tr: dev.upload(&s.transpose)?,
        })
    }
    fn bytes(&self) -> usize {
        match self {
            Self::Fold(u) => u.bytes(),
            Self::Pass { units, tr } => units.bytes() + tr.num_bytes(),
            Self::Split { units, xs, first, tr } => units.bytes() + xs.num_bytes() + first.num_bytes() + tr.num_bytes(),
        }
    }
}

/// Waves of resident warps below which the symmetric pair's unfolded
/// `P^T W'` stage splits its runs, and the waves of chunks it aims for.
/// Measured on the H200 (k = 16, pf 0.03; ledger step 12): level 2's 6,356
/// runs are one wave and its longest (175) 3x the mean per resident warp;
/// split to at most 15 (6,991 units, 4.4 waves) the stage takes 29 us
/// instead of 44 (ncu), the level 0.127-0.130 ms instead of 0.139-0.142.
/// Chunks of 8 to 64 measured within 0.003 ms of that; forced onto level 0
/// (166 waves) a split only loses (4.11 -> 4.14-5.10 ms).
const SPLIT_WAVES: usize = 4;
/// The shortest chunk a split makes (a chunk costs a partial block written
/// and read back, and its warp's start). At pf 0.07 on an H100 (k = 16,
/// ledger step 33) level 2 took 0.092-0.093 ms at chunks of 32 against
/// 0.095-0.096 at the 4 waves' length, 0.094 at 16 and 0.092-0.094 at 24.
const SPLIT_MIN_LEN: usize = 32;

/// The chunk length the unfolded `P^T W'` stage of `slots` runs and
/// `entries` contributions splits its runs to, on a device holding
/// `resident` warps of the pair kernel; `None`: one unit per slot.
fn split_len(slots: usize, entries: usize, resident: usize) -> Option<usize> {
    (resident > 0 && slots < SPLIT_WAVES * resident)
        .then(|| entries.div_ceil(SPLIT_WAVES * resident).max(SPLIT_MIN_LEN))
}

/// Units per window that the symmetric pair's `P^T W'` stage sorts longest
/// first where it runs one unit per slot, folded or not ([`longest_first`]).
/// Measured on an H100 at k = 16 (ledger step 37), against the schedule's
/// slot order in the same calls:
/// - level 1's fold: 0.359-0.361 ms against 0.369-0.371; its kernel's warp
///   slots 66 % busy instead of 56 % at windows of 64 (175-178 us against
///   183-186). Windows of 8 / 16 / 64 / 256 took 0.362-0.364 / 0.360-0.361 /
///   0.362 / 0.369-0.370 ms, the whole stage sorted 0.487 (its neighbours'
///   `P` and `W'` blocks no longer shared in the L1 and L2).
/// - level 0's single units: 2.430-2.435 ms against 2.461-2.469; windows of
///   16 / 64 / 256 took 2.432-2.434 / 2.438-2.443 / 2.474-2.477 (at 256 the
///   warp slots are 91 % busy instead of 80 %, but the L1 hits fall from 17 %
///   to 12 %).
///
/// The split chunks of a stage of few runs are near-equal already.
const RW_ORDER_WINDOW: usize = 32;

/// Width-1 units `r` (no entries: the device builds them) taken `group` at a
/// time (a folded unit's two halves), each window of `window` groups sorted
/// by their entries, most first (stable), a group keeping its halves in
/// order. A block of the pair kernels leaves its SM only when its last warp
/// ends, so warps next to a much longer unit idle their slots; sorting within
/// a short window evens the blocks while the window's units still share their
/// operands. Each unit adds what it did before: the same bits. Once, at upload.
fn longest_first(r: &PairedRuns, group: usize, window: usize) -> PairedRuns {
    assert!(r.width == 1 && group > 0 && window > 0 && r.slots.len() % group == 0);
    let n = r.slots.len() / group;
    let len = |u: usize| r.ptr[group * u + group] - r.ptr[group * u];
    let mut order: Vec<usize> = (0..n).collect();
    for c in order.chunks_mut(window) {
        c.sort_by_key(|&u| std::cmp::Reverse(len(u)));
    }
    let mut ptr = Vec::with_capacity(r.ptr.len());
    let mut slots = Vec::with_capacity(r.slots.len());
    ptr.push(0u64);
    let mut at = 0u64;
    for u in order {
        for h in group * u..group * u + group {
            slots.push(r.slots[h]);
            at += r.ptr[h + 1] - r.ptr[h];
            ptr.push(at);
        }
    }
    PairedRuns {
        width: 1,
        ptr: ptr.into(),
        slots: slots.into(),
        ent: Default::default(),
    }
}

/// Waves of resident warps the folded `P^T W'` units must fill before the
/// fold pays: a folded unit runs about twice as long, so a level of few units
/// waits on its longest ones.
const FOLD_MIN_WAVES: usize = 4;

/// Whether the symmetric pair folds its `P^T W'` stage `st` of `units`
/// folded units on a device holding `resident` warps of the fold kernel at
/// once. Measured on the H200 (k = 16, pf 0.03; ledger step 10): the fold
/// saves the symmetrize pass and wins on the 6x6 level 1 (0.717 -> 0.675 ms,
/// 110k units), but loses where a unit's second half (the mirror slot's run,
/// the fine rows of aggregate `J` read while row `I` runs) leaves L2: on the
/// fine 6x3x6 level 0 (L2 hit rate 79 -> 53 %, 4.145 -> 4.524 ms); and on
/// level 2 (3.3k units, under one wave: 0.142 -> 0.161 ms). Hence only
/// square stages (`K = M`, the coarse levels) with [`FOLD_MIN_WAVES`] waves.
fn fold_pays(st: Stage, units: usize, resident: usize) -> bool {
    st.k == st.m && resident > 0 && units >= FOLD_MIN_WAVES * resident
}

/// The symmetric pair's fine `A P` walk (see [`Walk::new`]): spans of 4
/// units per warp, a block's 4 warps interleaved over 16 units. With the
/// kernel's register cap ([`gpu_mma::mma_pair_half_bounds`]: 64 warps per SM)
/// it measured 4.089-4.095 ms on level 0 against the former `i8` over 2-warp
/// blocks (40 registers, 48 warps) at 4.394-4.408 (one H100, k = 16); `i8` /
/// `i2` over 4 warps, `i4` / `i2` over 8 and `i4` over 2 capped took 4.312 /
/// 4.137, 4.141 / 4.234 and 4.181; `i4` over 4 uncapped 4.430 (ledger step 21).
/// Shorter spans keep the SMs' front of units narrower, so more of its `A`
/// and `P` rows stay in the L2 (ledger step 20).
const DEFAULT_WALK: &str = "i4";

/// Warps per block of the symmetric pair's walking fine `A P` kernel (the
/// tensor pair's kernels keep [`gpu_mma::MMA_PAIR_WARPS`]): 4, the most its
/// register cap allows (see [`DEFAULT_WALK`]). Before the cap, 2 measured
/// better (H200, k = 16, level 0: 4.119 ms against 4.145-4.152 with 4 warps;
/// ledger step 11).
const SYM_AP_WARPS: u32 = 4;

/// How the halving `A P` kernel's warps walk its units: spans of `chunk`
/// consecutive units per warp (`inter`: a block's warps interleave over a span
/// of `chunk` units per warp), then a grid's worth of spans on, over `grid`
/// blocks of `warps` warps.
#[derive(Clone, Copy, Debug)]
struct Walk {
    grid: u32,
    chunk: u32,
    inter: bool,
    warps: u32,
}

impl Walk {
    /// By default ([`DEFAULT_WALK`]) a block's warps interleave over spans of
    /// 4 units per warp, one span per block (walks first measured in ledger
    /// step 8: H200, k = 16, fine `A P` 2.83 ms at 8 units per warp against
    /// 3.64 for one unit per warp). `PTAP_SYM_AP_WALK` overrides it for
    /// measurement and tests (read once, here): `[i]CHUNK` (one span per warp
    /// or block; `1` is one unit per warp, the geometry before),
    /// `[i]CHUNK,res` (a grid of the resident blocks, slower: the warps of an
    /// SM no longer run neighbouring units) or `[i]CHUNK,BLOCKS`; a last
    /// `,wWARPS` (1 to 32, and at most the kernel's bound allows: 4 where it
    /// has one) sets the warps per block ([`SYM_AP_WARPS`] unless given).
    fn new(dev: &Device, kernels: &Kernels, st: Stage, units: u32) -> Result<Self, CudaError> {
        let spec = std::env::var("PTAP_SYM_AP_WALK").unwrap_or_else(|_| DEFAULT_WALK.to_string());
        let (spec, warps) = match spec.rsplit_once(",w") {
            Some((head, w)) => (head.to_string(), w.trim().parse::<u32>().unwrap_or(SYM_AP_WARPS)),
            None => (spec.clone(), SYM_AP_WARPS),
        };
        let most = gpu_mma::mma_pair_half_bounds(st).map_or(32, |(threads, _)| threads as u32 / 32);
        let per_block = warps.clamp(1, most);
        let threads = 32 * per_block;
        let (chunk, blocks) = spec.split_once(',').unwrap_or((&spec, ""));
        let (chunk, inter) = match chunk.trim().strip_prefix('i') {
            Some(c) => (c, true),
            None => (chunk.trim(), false),
        };
        let chunk = chunk.parse().unwrap_or(1u32).max(1);
        let needed = units.div_ceil(per_block * chunk).max(1);
        let grid = match (blocks.trim(), kernels.get(&gpu_mma::mma_pair_half_name(st))) {
            ("res", Some(k)) => needed.min(k.blocks_per_sm(threads)?.max(1) * dev.sm_count()),
            (b, _) => b.parse::<u32>().map_or(needed, |b| needed.min(b.max(1))),
        };
        Ok(Self {
            grid,
            chunk,
            inter,
            warps: per_block,
        })
    }
}

/// A numeric Galerkin product `A_c = P^T A P` of one variant on the device.
pub struct DeviceProduct {
    dev: Arc<Device>,
    variant: Variant,
    shape: ShapeSet,
    base: Arc<TwoPassSchedule>,
    plan: Plan,
    /// The intermediate `W = A P` (`bf x bc` blocks over `W`'s pattern).
    w: CudaSlice<f64>,
    /// Its refresh's kernels, looked up once here.
    ks: Resolved,
}

/// The kernels of a product's shape that its refresh may launch, looked up
/// once when the product is built, so that a refresh formats no kernel name
/// and searches no table. Pairs are `[A P, P^T W]` (`row_owner`: `[A P, R W]`);
/// `None` where the shape's set has no such kernel.
struct Resolved {
    gather_r: Option<Arc<Kernel>>,
    row_owner: [Option<Arc<Kernel>>; 2],
    slot_tiled: [Option<Arc<Kernel>>; 2],
    column_split: [Option<Arc<Kernel>>; 2],
    lane_tiled: [Option<Arc<Kernel>>; 2],
    k_split: [Option<Arc<Kernel>>; 2],
    flat_stream: [Option<Arc<Kernel>>; 2],
    row_gustavson: [Option<Arc<Kernel>>; 2],
    scatter: [Option<Arc<Kernel>>; 2],
    mma: [Option<Arc<Kernel>>; 2],
    mma_pair: [Option<Arc<Kernel>>; 2],
    /// The symmetric pair's halving `A P` kernels (runs, units).
    mma_half: Option<Arc<Kernel>>,
    mma_pair_half: Option<Arc<Kernel>>,
    /// Its folded `P^T W'` kernel and its symmetrize passes (whole, split).
    mma_fold: Option<Arc<Kernel>>,
    symmetrize: Option<Arc<Kernel>>,
    symmetrize_split: Option<Arc<Kernel>>,
}

impl Resolved {
    fn new(k: &Kernels, s: ShapeSet) -> Self {
        let (ap, ptw, rw) = (Stage::ap(s), Stage::ptw(s), Stage::rw(s));
        let get = |name: String| k.get(&name).cloned();
        let pair = |f: fn(Stage) -> String| [get(f(ap)), get(f(ptw))];
        Self {
            gather_r: get(gpu::gather_r_name(s)),
            row_owner: [get(gpu::row_owner_name(ap)), get(gpu::row_owner_name(rw))],
            slot_tiled: pair(gpu::slot_tiled_name),
            column_split: pair(gpu::column_split_name),
            lane_tiled: pair(gpu_lane::lane_tiled_name),
            k_split: pair(gpu_lane::k_split_name),
            flat_stream: pair(gpu::flat_stream_name),
            row_gustavson: pair(gpu::row_gustavson_name),
            scatter: pair(gpu::scatter_name),
            mma: pair(gpu_mma::mma_name),
            mma_pair: pair(gpu_mma::mma_pair_name),
            mma_half: get(gpu_mma::mma_half_name(ap)),
            mma_pair_half: get(gpu_mma::mma_pair_half_name(ap)),
            mma_fold: get(gpu_mma::mma_fold_name(ptw)),
            symmetrize: get(gpu_mma::symmetrize_name(s.bc)),
            symmetrize_split: get(gpu_mma::symmetrize_split_name(s.bc)),
        }
    }
}

/// A resolved kernel that the product's plan launches. The set's module defines
/// every kernel the device looks up for its shapes (codegen's
/// `set_module_defines_every_entry_the_device_looks_up_once`), so a plan's
/// kernels are present; before they were resolved, a missing one panicked at
/// its launch just the same.
fn kern(k: &Option<Arc<Kernel>>) -> &Kernel {
    k.as_deref().expect("a product's kernels are resolved when it is built")
}

impl DeviceProduct {
    /// Uploads `schedule`'s arrays for `bf x bf` / `bf x bc` blocks and loads
    /// the kernels of the registered set that serves `(bf, bc)` (compiled once
    /// per set, cached on disk).
    pub fn new(
        dev: &Arc<Device>,
        kernels: &KernelRegistry,
        schedule: &VariantSchedule,
        bf: usize,
        bc: usize,
    ) -> Result<Self, CudaError> {
        let shape = ShapeSet { bf, bc };
        // The tensor pair carries column split's schedule and runs it where its MMA cannot
        // (blocks past 8x8, or no FP64 MMA): so it can be the default for every block set.
        if let VariantSchedule::TensorPair(s) = schedule {
            let fits = [Stage::ap(shape), Stage::ptw(shape)]
                .iter()
                .all(|&st| gpu_mma::mma_fits(st));
            if !fits || !mma_arch(dev.arch()) {
                return Self::new(dev, kernels, &VariantSchedule::ColumnSplit(s.split.clone()), bf, bc);
            }
        }
        // Likewise the symmetric pair, with column split's schedule inspected here (it carries none).
        if let VariantSchedule::TensorPairSym(s) = schedule {
            let fits = [Stage::ap(shape), Stage::ptw(shape)]
                .iter()
                .all(|&st| gpu_mma::mma_fits(st));
            if !fits || !mma_arch(dev.arch()) {
                let split = ColumnSplitSchedule::inspect(s.base.clone(), COLUMN_SPLIT_WINDOW);
                return Self::new(dev, kernels, &VariantSchedule::ColumnSplit(Arc::new(split)), bf, bc);
            }
        }
        let kernels = crate::kernels::product(dev, kernels, bf, bc)?;
        // A window whose shared memory passes the limit would fail at launch: refuse it here.
        if let VariantSchedule::ColumnSplit(s) = schedule {
            let too_large = s.window > gpu::COLUMN_SPLIT_WINDOW_MAX; // refused below as TooLarge
            if let Some((st, bytes)) = column_split_smem(shape, s.window).filter(|_| !too_large) {
                return Err(CudaError::UnsupportedShape {
                    what: format!(
                        "the column-split product of {bf}x{bf} / {bf}x{bc} blocks with a window of {} slots",
                        s.window
                    ),
                    limit: format!(
                        "its {}x{}x{} stage needs {bytes} bytes of shared memory per thread block, more than the {} \
                         a block gets without opt-in",
                        st.m,
                        st.k,
                        st.n,
                        gpu::SMEM_LIMIT
                    ),
                    fix: format!(
                        "inspect it with a window of at most {} slots, or use the slot-tiled or two-pass variant",
                        column_split_max_window(shape)
                    ),
                });
            }
        }
        let base = schedule.base().clone();
        let plan = match schedule {
            VariantSchedule::TwoPass(s) => Plan::TwoPass {
                r_source: dev.upload(&s.r_source)?,
                r: dev.zeros(s.r.nnzb() * bf * bc)?,
                rp: DevPattern::upload(dev, &s.r)?,
                wp: DevPattern::upload(dev, &s.w)?,
                cp: DevPattern::upload(dev, &s.c)?,
            },
            VariantSchedule::SlotTiled(s) => Plan::SlotTiled {
                ap: DevRuns::upload(dev, &s.ap)?,
                rw: DevRuns::upload(dev, &s.rw)?,
            },
            VariantSchedule::ColumnSplit(s) if s.window > gpu::COLUMN_SPLIT_WINDOW_MAX => {
                return Err(CudaError::TooLarge {
                    what: format!(
                        "column-split window (the kernels take at most {})",
                        gpu::COLUMN_SPLIT_WINDOW_MAX
                    ),
                    n: s.window,
                })
            }
            VariantSchedule::ColumnSplit(s) => Plan::ColumnSplit {
                ap: DevRuns::upload(dev, &s.tiled.ap)?,
                rw: DevRuns::upload(dev, &s.tiled.rw)?,
                ap_order: dev.upload(&s.ap_order)?,
                rw_order: dev.upload(&s.rw_order)?,
                window: s.window as u32,
            },
            VariantSchedule::FlatStream(s) => Plan::FlatStream {
                ap: DevRecords::upload(dev, &s.ap)?,
                rw: DevRecords::upload(dev, &s.rw)?,
                w_rp: dev.upload_u32("row pointers", s.base.w.row_ptr())?,
                c_rp: dev.upload_u32("row pointers", s.base.c.row_ptr())?,
            },
            VariantSchedule::RowGustavson(_)
                if [Stage::ap(shape), Stage::ptw(shape)]
                    .iter()
                    .any(|&st| gpu::row_gustavson_warps(st) == 0) =>
            {
                return Err(CudaError::UnsupportedShape {
                    what: format!("the row-Gustavson product of {bf}x{bf} / {bf}x{bc} blocks"),
                    limit: format!(
                        "a chunk of {} {bc}x{bc} output blocks needs more than the {} bytes of shared memory a block gets \
                         without opt-in",
                        gpu::ROW_GUSTAVSON_CHUNK,
                        gpu::SMEM_LIMIT
                    ),
                    fix: "use the column-split or slot-tiled variant".into(),
                });
            }
            VariantSchedule::LaneTiled(s) => Plan::LaneTiled {
                ap: DevRuns::upload(dev, &s.tiled.ap)?,
                rw: DevRuns::upload(dev, &s.tiled.rw)?,
                ap_order: dev.upload(&s.ap_order)?,
                rw_order: dev.upload(&s.rw_order)?,
            },
            VariantSchedule::KSplit(_)
                if [Stage::ap(shape), Stage::ptw(shape)]
                    .iter()
                    .any(|&st| gpu_lane::k_split(st).is_none()) =>
            {
                return Err(CudaError::UnsupportedShape {
                    what: format!("the k-split product of {bf}x{bf} / {bf}x{bc} blocks"),
                    limit: format!(
                        "one slot's partial sums need more than the {} bytes of shared memory a block gets without opt-in",
                        gpu::SMEM_LIMIT
                    ),
                    fix: "use the column-split or slot-tiled variant".into(),
                });
            }
            VariantSchedule::KSplit(s) => Plan::KSplit {
                ap: DevRuns::upload(dev, &s.tiled.ap)?,
                rw: DevRuns::upload(dev, &s.tiled.rw)?,
                ap_order: dev.upload(&s.ap_order)?,
                rw_order: dev.upload(&s.rw_order)?,
            },
            VariantSchedule::TensorCore(_)
                if [Stage::ap(shape), Stage::ptw(shape)]
                    .iter()
                    .any(|&st| !gpu_mma::mma_fits(st)) =>
            {
                return Err(CudaError::UnsupportedShape {
                    what: format!(
                        "the {} product of {bf}x{bf} / {bf}x{bc} blocks",
                        schedule.variant().name()
                    ),
                    limit: "its output blocks must fit the 8x8 accumulator of the FP64 MMA".into(),
                    fix: "use the column-split or slot-tiled variant".into(),
                });
            }
            VariantSchedule::TensorCore(_) if !mma_arch(dev.arch()) => {
                return Err(CudaError::UnsupportedShape {
                    what: format!("the tensor-core product on {}", dev.arch()),
                    limit: "FP64 MMA (mma.sync m8n8k4 f64) needs compute capability 8.0 or later".into(),
                    fix: "use the column-split variant".into(),
                });
            }
            VariantSchedule::TensorPair(s) => Plan::TensorPair {
                ap: PairStage::upload(
                    dev,
                    Stage::ap(shape),
                    &s.ap,
                    &s.split.tiled.ap,
                    &s.split.ap_order,
                    false,
                )?,
                rw: PairStage::upload(
                    dev,
                    Stage::ptw(shape),
                    &s.rw,
                    &s.split.tiled.rw,
                    &s.split.rw_order,
                    false,
                )?,
            },
            VariantSchedule::TensorPairSym(s) => Plan::TensorPairSym {
                ap: PairStage::upload(dev, Stage::ap(shape), &s.ap_pairs, &s.ap, &s.ap_order, true)?.walk_coarse(
                    dev,
                    &kernels,
                    Stage::ap(shape),
                )?,
                // `P^T W'` always runs units where the MMA fits (checked above).
                rw: SymRw::upload(dev, &kernels, Stage::ptw(shape), s)?,
                walk: Walk::new(dev, &kernels, Stage::ap(shape), s.ap_pairs.units() as u32)?,
            },
            VariantSchedule::TensorCore(s) => Plan::TensorCore {
                ap: DevRuns::upload(dev, &s.tiled.ap)?,
                rw: DevRuns::upload(dev, &s.tiled.rw)?,
                ap_order: dev.upload(&s.ap_order)?,
                rw_order: dev.upload(&s.rw_order)?,
            },
            VariantSchedule::RowGustavson(s) => Plan::RowGustavson {
                ap: DevSegments::upload(dev, &s.ap)?,
                rw: DevSegments::upload(dev, &s.rw)?,
            },
            VariantSchedule::OuterProduct(s) => Plan::Scatter {
                p1: DevRecords::upload(dev, &s.pass1)?,
                p2: DevRecords::upload(dev, &s.pass2)?,
            },
            other => {
                return Err(CudaError::UnsupportedVariant {
                    variant: other.variant().name(),
                })
            }
        };
        // The symmetric pair's intermediate is W' (a subset of W's pattern).
        let w_blocks = match schedule {
            VariantSchedule::TensorPairSym(s) => s.wh.nnzb(),
            _ => base.w.nnzb(),
        };
        let w = dev.zeros(w_blocks * bf * bc)?;
        Ok(Self {
            dev: dev.clone(),
            variant: schedule.variant(),
            shape,
            base,
            plan,
            w,
            ks: Resolved::new(&kernels, shape),
        })
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }
    pub fn coarse_pattern(&self) -> &Arc<BlockPattern> {
        &self.base.c
    }
    /// Whether repeated calls give the same bytes (all but the atomic scatter).
    pub fn deterministic(&self) -> bool {
        !matches!(self.plan, Plan::Scatter { .. })
    }

    /// `c = P^T a P` on the device (`c` over the schedule's coarse pattern).
    /// Its stages are launched chained ([`Device::launch_chained`]): each may
    /// be scheduled under the previous one's tail.
    pub fn numeric(&mut self, a: &DeviceBlockCsr, p: &DeviceBlockCsr, c: &mut DeviceBlockCsr) -> Result<(), CudaError> {
        let (bf, bc) = (self.shape.bf, self.shape.bc);
        let b = &self.base;
        let ok = a.nnzb == b.a.nnzb()
            && p.nnzb == b.p.nnzb()
            && c.nnzb == b.c.nnzb()
            && (a.br, a.bc, p.br, p.bc, c.br, c.bc) == (bf, bf, bf, bc, bc, bc);
        if !ok {
            return Err(CudaError::Runtime(ptap_runtime::RuntimeError::PatternMismatch {
                what: "device operands",
                detail: format!(
                    "schedule has A {} / P {} / A_c {} blocks of {bf}x{bf} / {bf}x{bc}, got {} / {} / {}",
                    b.a.nnzb(),
                    b.p.nnzb(),
                    b.c.nnzb(),
                    a.nnzb,
                    p.nnzb,
                    c.nnzb
                ),
            }));
        }
        let s = self.shape;
        let (ap, ptw) = (Stage::ap(s), Stage::ptw(s));
        let dev = &self.dev;
        // Lane-tiled and k-split share their arm: the same runs, another kernel.
        match &mut self.plan {
            Plan::TwoPass {
                r_source,
                r,
                rp,
                wp,
                cp,
            } => {
                let l = (bf * bc) as u64;
                let nr = rp.nnzb as u32;
                dev.launch_chained(
                    kern(&self.ks.gather_r),
                    grid_for(nr as u64 * l, 256),
                    &[Arg::F64(&p.values), Arg::U32s(r_source), Arg::F64Mut(r), Arg::U32(nr)],
                )?;
                let nw = wp.nnzb as u32;
                dev.launch_chained(
                    kern(&self.ks.row_owner[0]),
                    grid_for(nw as u64 * l, 128),
                    &[
                        Arg::F64(&a.values),
                        Arg::F64(&p.values),
                        Arg::U32s(&a.row_ptr),
                        Arg::U32s(&a.col_idx),
                        Arg::U32s(&p.row_ptr),
                        Arg::U32s(&p.col_idx),
                        Arg::U32s(&wp.row),
                        Arg::U32s(&wp.ci),
                        Arg::F64Mut(&self.w),
                        Arg::U32(nw),
                    ],
                )?;
                let nc = cp.nnzb as u32;
                dev.launch_chained(
                    kern(&self.ks.row_owner[1]),
                    grid_for(nc as u64 * (bc * bc) as u64, 128),
                    &[
                        Arg::F64(r),
                        Arg::F64(&self.w),
                        Arg::U32s(&rp.rp),
                        Arg::U32s(&rp.ci),
                        Arg::U32s(&wp.rp),
                        Arg::U32s(&wp.ci),
                        Arg::U32s(&cp.row),
                        Arg::U32s(&cp.ci),
                        Arg::F64Mut(&c.values),
                        Arg::U32(nc),
                    ],
                )?;
            }
            Plan::SlotTiled { ap: r1, rw: r2 } => {
                for (i, st, runs, x, y, out) in [
                    (0, ap, &*r1, &a.values, &p.values, &self.w),
                    (1, ptw, &*r2, &p.values, &self.w, &c.values),
                ] {
                    let n = runs.slots as u32;
                    dev.launch_chained(
                        kern(&self.ks.slot_tiled[i]),
                        grid_for(n as u64, gpu::slot_tile(st) as u32),
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&runs.ptr),
                            Arg::U32s(&runs.x),
                            Arg::U32s(&runs.y),
                            Arg::F64Mut(out),
                            Arg::U32(n),
                        ],
                    )?;
                }
            }
            Plan::ColumnSplit {
                ap: r1,
                rw: r2,
                ap_order,
                rw_order,
                window,
            } => {
                for (i, st, runs, order, x, y, out) in [
                    (0, ap, &*r1, &*ap_order, &a.values, &p.values, &self.w),
                    (1, ptw, &*r2, &*rw_order, &p.values, &self.w, &c.values),
                ] {
                    let n = runs.slots as u32;
                    let c = gpu::column_split_effective(st, gpu::column_split_config(st), gpu::COLUMN_SPLIT_WINDOW_MAX);
                    let (threads, smem) = gpu::column_split_launch(st, c, *window as usize);
                    let cfg = LaunchConfig {
                        grid_dim: ((n as usize).div_ceil(*window as usize) as u32, 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: smem,
                    };
                    dev.launch_chained(
                        kern(&self.ks.column_split[i]),
                        cfg,
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&runs.ptr),
                            Arg::U32s(&runs.x),
                            Arg::U32s(&runs.y),
                            Arg::U32s(order),
                            Arg::F64Mut(out),
                            Arg::U32(n),
                            Arg::U32(*window),
                        ],
                    )?;
                }
            }
            Plan::LaneTiled {
                ap: r1,
                rw: r2,
                ap_order,
                rw_order,
            }
            | Plan::KSplit {
                ap: r1,
                rw: r2,
                ap_order,
                rw_order,
            }
            | Plan::TensorCore {
                ap: r1,
                rw: r2,
                ap_order,
                rw_order,
            } => {
                for (i, st, runs, order, x, y, out) in [
                    (0, ap, &*r1, &*ap_order, &a.values, &p.values, &self.w),
                    (1, ptw, &*r2, &*rw_order, &p.values, &self.w, &c.values),
                ] {
                    let n = runs.slots as u32;
                    let (kernel, threads, per_block, smem) = match self.variant {
                        Variant::KSplit => {
                            // Checked at construction: both stages have a k-split kernel.
                            let Some((threads, per_block, smem)) = gpu_lane::k_split_launch(st) else {
                                return Err(CudaError::UnsupportedVariant {
                                    variant: Variant::KSplit.name(),
                                });
                            };
                            (&self.ks.k_split[i], threads, per_block, smem)
                        }
                        Variant::TensorCore => {
                            let (threads, per_block) = gpu_mma::mma_launch();
                            (&self.ks.mma[i], threads, per_block, 0)
                        }
                        _ => {
                            let (threads, per_block) = gpu_lane::lane_tiled_launch(st);
                            (&self.ks.lane_tiled[i], threads, per_block, 0)
                        }
                    };
                    let cfg = LaunchConfig {
                        grid_dim: (n.div_ceil(per_block).max(1), 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: smem,
                    };
                    dev.launch_chained(
                        kern(kernel),
                        cfg,
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&runs.ptr),
                            Arg::U32s(&runs.x),
                            Arg::U32s(&runs.y),
                            Arg::U32s(order),
                            Arg::F64Mut(out),
                            Arg::U32(n),
                        ],
                    )?;
                }
            }
            Plan::TensorPair { ap: u1, rw: u2 } => {
                launch_pair_stage(dev, &self.ks, 0, u1, &a.values, &p.values, &self.w, None)?;
                launch_pair_stage(dev, &self.ks, 1, u2, &p.values, &self.w, &c.values, None)?;
            }
            Plan::TensorPairSym { ap: u1, rw, walk } => {
                launch_pair_stage(dev, &self.ks, 0, u1, &a.values, &p.values, &self.w, Some(*walk))?;
                let (threads, per_block) = gpu_mma::mma_pair_launch();
                let (u2, kernel, out) = match rw {
                    SymRw::Fold(u) => (u, &self.ks.mma_fold, &c.values),
                    SymRw::Pass { units, .. } => (units, &self.ks.mma_pair[1], &c.values),
                    SymRw::Split { units, xs, .. } => (units, &self.ks.mma_pair[1], &*xs),
                };
                let n = u2.units as u32;
                dev.launch_chained(
                    kern(kernel),
                    LaunchConfig {
                        grid_dim: (n.div_ceil(per_block).max(1), 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: 0,
                    },
                    &[
                        Arg::F64(&p.values),
                        Arg::F64(&self.w),
                        Arg::U32s(&u2.ptr),
                        Arg::U32s(&u2.slots),
                        Arg::U32s(&u2.ent),
                        Arg::F64Mut(out),
                        Arg::U32(n),
                    ],
                )?;
                let n = c.nnzb as u32;
                match rw {
                    SymRw::Fold(_) => {}
                    SymRw::Pass { tr, .. } => dev.launch_chained(
                        kern(&self.ks.symmetrize),
                        grid_for(n as u64 * (bc * bc) as u64, 256),
                        &[Arg::F64Mut(&c.values), Arg::U32s(tr), Arg::U32(n)],
                    )?,
                    SymRw::Split { xs, first, tr, .. } => dev.launch_chained(
                        kern(&self.ks.symmetrize_split),
                        grid_for(n as u64 * (bc * bc) as u64, 256),
                        &[
                            Arg::F64Mut(&c.values),
                            Arg::F64(xs),
                            Arg::U32s(first),
                            Arg::U32s(tr),
                            Arg::U32(n),
                        ],
                    )?,
                }
            }
            Plan::FlatStream {
                ap: f1,
                rw: f2,
                w_rp,
                c_rp,
            } => {
                for (i, f, rp, x, y, out) in [
                    (0, &*f1, &*w_rp, &a.values, &p.values, &self.w),
                    (1, &*f2, &*c_rp, &p.values, &self.w, &c.values),
                ] {
                    let nt = f.tiles as u32;
                    dev.launch_chained(
                        kern(&self.ks.flat_stream[i]),
                        grid_for(nt as u64 * 32, 128),
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&f.x),
                            Arg::U32s(&f.y),
                            Arg::U32s(&f.slot),
                            Arg::U32s(&f.tile_rows),
                            Arg::U32s(&f.tile_records),
                            Arg::U32s(rp),
                            Arg::F64Mut(out),
                            Arg::U32(nt),
                        ],
                    )?;
                }
            }
            Plan::RowGustavson { ap: g1, rw: g2 } => {
                for (i, st, g, x, y, out) in [
                    (0, ap, &*g1, &a.values, &p.values, &self.w),
                    (1, ptw, &*g2, &p.values, &self.w, &c.values),
                ] {
                    let n = g.chunks as u32;
                    let warps = gpu::row_gustavson_warps(st) as u32;
                    let cfg = LaunchConfig {
                        grid_dim: (n.div_ceil(warps).max(1), 1, 1),
                        block_dim: (warps * 32, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    dev.launch_chained(
                        kern(&self.ks.row_gustavson[i]),
                        cfg,
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&g.chunk_slot),
                            Arg::U32s(&g.chunk_seg),
                            Arg::U32s(&g.chunk_pos),
                            Arg::U32s(&g.seg_x),
                            Arg::U32s(&g.seg_y),
                            Arg::U32s(&g.seg_n),
                            Arg::U32s(&g.pos),
                            Arg::F64Mut(out),
                            Arg::U32(n),
                        ],
                    )?;
                }
            }
            Plan::Scatter { p1, p2 } => {
                dev.memset_zero(&mut self.w)?;
                dev.memset_zero(&mut c.values)?;
                for (i, st, f, x, y, out) in [
                    (0, ap, &*p1, &a.values, &p.values, &self.w),
                    (1, ptw, &*p2, &p.values, &self.w, &c.values),
                ] {
                    let n = f.records as u32;
                    dev.launch_chained(
                        kern(&self.ks.scatter[i]),
                        grid_for(n as u64 * (st.m * st.n) as u64, 256),
                        &[
                            Arg::F64(x),
                            Arg::F64(y),
                            Arg::U32s(&f.x),
                            Arg::U32s(&f.y),
                            Arg::U32s(&f.slot),
                            Arg::F64Mut(out),
                            Arg::U32(n),
                        ],
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Bytes of device buffers the executor holds beyond its operands (`W`, `R`, schedule arrays).
    pub fn buffer_bytes(&self) -> usize {
        let w = self.w.num_bytes();
        let sched = match &self.plan {
            Plan::TwoPass {
                r_source,
                r,
                rp,
                wp,
                cp,
            } => {
                r_source.num_bytes()
                    + r.num_bytes()
                    + [rp, wp, cp]
                        .iter()
                        .map(|p| p.rp.num_bytes() + p.ci.num_bytes() + p.row.num_bytes())
                        .sum::<usize>()
            }
            Plan::SlotTiled { ap, rw } => runs_bytes(ap) + runs_bytes(rw),
            Plan::ColumnSplit {
                ap,
                rw,
                ap_order,
                rw_order,
                ..
            } => runs_bytes(ap) + runs_bytes(rw) + ap_order.num_bytes() + rw_order.num_bytes(),
            Plan::LaneTiled {
                ap,
                rw,
                ap_order,
                rw_order,
            }
            | Plan::KSplit {
                ap,
                rw,
                ap_order,
                rw_order,
            }
            | Plan::TensorCore {
                ap,
                rw,
                ap_order,
                rw_order,
            } => runs_bytes(ap) + runs_bytes(rw) + ap_order.num_bytes() + rw_order.num_bytes(),
            Plan::FlatStream { ap, rw, w_rp, c_rp } => {
                rec_bytes(ap) + rec_bytes(rw) + w_rp.num_bytes() + c_rp.num_bytes()
            }
            Plan::Scatter { p1, p2 } => rec_bytes(p1) + rec_bytes(p2),
            Plan::RowGustavson { ap, rw } => ap.bytes() + rw.bytes(),
            Plan::TensorPair { ap, rw } => ap.bytes() + rw.bytes(),
            Plan::TensorPairSym { ap, rw, .. } => ap.bytes() + rw.bytes(),
        };
        w + sched
    }
}

/// One stage of the tensor pair: its units under the pair kernel, or its runs
/// under the tensor core's; `halve`: the symmetric pair's `A P` stage (the
/// kernels that halve the diagonal blocks flagged in the `x` indices); `i`:
/// the stage, 0 for `A P`, 1 for `P^T W`.
#[allow(clippy::too_many_arguments)]
fn launch_pair_stage(
    dev: &Device,
    ks: &Resolved,
    i: usize,
    u: &PairStage,
    x: &CudaSlice<f64>,
    y: &CudaSlice<f64>,
    out: &CudaSlice<f64>,
    walk: Option<Walk>,
) -> Result<(), CudaError> {
    // Only the symmetric product's `A P` stage walks (and halves).
    let halve = walk.is_some();
    let (threads, per_block) = gpu_mma::mma_pair_launch();
    let grid = |n: u32| LaunchConfig {
        grid_dim: (n.div_ceil(per_block).max(1), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // A run kernel's block covers `per_block` slots, one per warp, or (the halving kernel)
    // walks `chunk` slots, its last parameter.
    let launch_runs =
        |runs: &DevRuns, order: &CudaSlice<u32>, ptr: &CudaSlice<u32>, kernel: &Kernel, chunk: Option<u32>| {
            let n = runs.slots as u32;
            // On the stack: a refresh allocates nothing.
            let args = [
                Arg::F64(x),
                Arg::F64(y),
                Arg::U32s(ptr),
                Arg::U32s(&runs.x),
                Arg::U32s(&runs.y),
                Arg::U32s(order),
                Arg::F64Mut(out),
                Arg::U32(n),
                Arg::U32(chunk.unwrap_or(0)),
            ];
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(chunk.unwrap_or(per_block)).max(1), 1, 1),
                ..grid(n)
            };
            dev.launch_chained(kernel, cfg, &args[..8 + chunk.is_some() as usize])
        };
    match u {
        PairStage::Units(u) => {
            let n = u.units as u32;
            let kernel = kern(if halve { &ks.mma_pair_half } else { &ks.mma_pair[i] });
            // On the stack: a refresh allocates nothing (the walking kernel takes two more).
            let args = [
                Arg::F64(x),
                Arg::F64(y),
                Arg::U32s(&u.ptr),
                Arg::U32s(&u.slots),
                Arg::U32s(&u.ent),
                Arg::F64Mut(out),
                Arg::U32(n),
                Arg::U32(walk.map_or(0, |wk| wk.chunk)),
                Arg::U32(walk.map_or(0, |wk| wk.inter as u32)),
            ];
            match walk {
                Some(wk) => {
                    let cfg = LaunchConfig {
                        grid_dim: (wk.grid, 1, 1),
                        block_dim: (32 * wk.warps, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    dev.launch_chained(kernel, cfg, &args)
                }
                None => dev.launch_chained(kernel, grid(n), &args[..7]),
            }
        }
        // The kernel follows the stage's kind; the halving one reads per-warp run bounds.
        PairStage::Runs { runs, order } => launch_runs(runs, order, &runs.ptr, kern(&ks.mma[i]), None),
        PairStage::HalfRuns {
            runs,
            order,
            bounds,
            chunk,
        } => launch_runs(runs, order, bounds, kern(&ks.mma_half), Some(*chunk)),
    }
}

/// The first stage of `(bf, bc)` whose column-split block of `window` slots
/// needs more shared memory than a launch gets without opt-in, with its bytes.
fn column_split_smem(s: ShapeSet, window: usize) -> Option<(Stage, usize)> {
    [Stage::ap(s), Stage::ptw(s)].into_iter().find_map(|st| {
        let cfg = gpu::column_split_effective(st, gpu::column_split_config(st), gpu::COLUMN_SPLIT_WINDOW_MAX);
        let bytes = gpu::column_split_bytes(st, cfg, window);
        (bytes > gpu::SMEM_LIMIT).then_some((st, bytes))
    })
}

/// The largest column-split window `(bf, bc)` runs with.
fn column_split_max_window(s: ShapeSet) -> usize {
    (1..=gpu::COLUMN_SPLIT_WINDOW_MAX)
        .rev()
        .find(|&w| column_split_smem(s, w).is_none())
        .unwrap_or(0)
}

/// Whether the device architecture `sm_XY` has FP64 MMA (8.0 and later).
fn mma_arch(arch: &str) -> bool {
    arch.strip_prefix("sm_")
        .and_then(|v| {
            v.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse::<u32>()
                .ok()
        })
        .is_some_and(|v| v >= 80)
}

fn runs_bytes(r: &DevRuns) -> usize {
    r.ptr.num_bytes() + r.x.num_bytes() + r.y.num_bytes()
}
fn rec_bytes(r: &DevRecords) -> usize {
    r.x.num_bytes() + r.y.num_bytes() + r.slot.num_bytes() + r.tile_rows.num_bytes() + r.tile_records.num_bytes()
}

/// The Galerkin-product variants the device executes, in order of preference;
/// `auto` chooses among those [`device_candidates`] keeps.
///
/// The traffic model counts DRAM and L2 bytes. On the device it ranks V0
/// first on every level (V0 moves the fewest bytes; the slot-run family, V2b,
/// column split, the tensor core and the tensor pair, adds its schedule), and
/// ranks the family's members by their schedule arrays alone. What decides on
/// a GPU is the L1 and issue work per block multiply, which it does not count:
/// on the H200 at k = 16 (natural aggregation, pf 0.03) `auto` among the
/// tensor pair, two-pass, V3 and V4 picked two-pass on every level, 70.5 ms
/// of products per matrix setup against the tensor pair's 7.2; per level (ms, levels 0 / 1 /
/// 2) the tensor pair takes 5.76 / 1.08 / 0.21, the tensor core 8.42 / 1.09 /
/// 0.21, column split 9.23 / 1.43 / 0.38 (ledger 2026-11-23, step 4). Hence
/// the rule, until the model has a calibrated L1 term: on a device `auto`
/// runs the fastest member of the family the device has, the tensor pair
/// where it has FP64 MMA (sm_80 and later), column split before.
///
/// The symmetric tensor pair is faster still on every level (4.82 / 0.705 /
/// 0.139 ms, ledger 2026-11-25, step 6) and is the solver's default on a GPU
/// (`ptap::Target::DEVICE_DEFAULT_VARIANT`), but not an `auto` candidate:
/// `auto` serves any `A`, and the symmetric pair refuses a structurally
/// non-symmetric one and reads only the lower triangle of a symmetric one.
pub const DEVICE_VARIANTS: [Variant; 8] = [
    Variant::TensorPairSym,
    Variant::TensorPair,
    Variant::ColumnSplit,
    Variant::TensorCore,
    Variant::SlotTiled,
    Variant::TwoPass,
    Variant::FlatStream,
    Variant::OuterProductScatter,
];

/// `auto`'s candidates on `dev` (see [`DEVICE_VARIANTS`] for the rule).
pub fn device_candidates(dev: &Device) -> Vec<Variant> {
    candidates_for(dev.arch())
}

fn candidates_for(arch: &str) -> Vec<Variant> {
    if mma_arch(arch) {
        vec![Variant::TensorPair]
    } else {
        vec![Variant::ColumnSplit]
    }
}

/// Every variant the device executes: [`DEVICE_VARIANTS`] and three executors
/// that run only when asked for. The k-split and lane-tiled stages replay
/// column split's schedule with another split of a slot over lanes (the
/// inner index; a small output tile per lane, no shared memory); on the H200
/// at k = 16 (pf 0.03) they take 10.9 and 10.6 ms on level 0 against column
/// split's 9.2 ms: both issue about as many L1 wavefronts per block multiply,
/// and k-split, which issues 4-9 % fewer there, keeps the L1 pipe only 72 %
/// busy (see the ledger's step 2). The row-Gustavson executor, measured on
/// the H200 at k = 16, is 1.1x to 2.5x slower than column split on every
/// level (its shared-memory accumulator keeps the L1 as busy as column
/// split's operand loads did, see
/// `benches/results/h200-2026-11-22-products-ledger.md`). None of the three is
/// an `auto` candidate (the traffic model ties the first two with column
/// split and ranks row Gustavson behind V0: V0's streams plus its schedule,
/// and a segment's `x` block read on top of V0's reads).
pub const DEVICE_EXECUTORS: [Variant; 11] = [
    Variant::ColumnSplit,
    Variant::TensorCore,
    Variant::TensorPair,
    Variant::TensorPairSym,
    Variant::KSplit,
    Variant::LaneTiled,
    Variant::RowGustavson,
    Variant::SlotTiled,
    Variant::TwoPass,
    Variant::FlatStream,
    Variant::OuterProductScatter,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_runs_the_fastest_slot_run_variant_the_device_has() {
        assert_eq!(candidates_for("sm_90"), [Variant::TensorPair]);
        assert_eq!(candidates_for("sm_80"), [Variant::TensorPair]);
        assert_eq!(candidates_for("sm_75"), [Variant::ColumnSplit]);
    }

    #[test]
    fn only_a_stage_of_few_runs_splits_them() {
        // The beam at k = 16, pf 0.03, on the H200 (6,336 resident warps): level 2 splits (4 waves would
        // make chunks of 15; the shortest chunk is longer), level 0 does not.
        assert_eq!(split_len(6_356, 366_513, 6_336), Some(SPLIT_MIN_LEN.max(15)));
        assert_eq!(split_len(6_356, 366_513 * 4, 6_336), Some(58));
        assert_eq!(split_len(1_054_265, 40_703_845, 6_336), None);
        // Short runs keep the shortest chunk; a device without the kernel never splits.
        assert_eq!(split_len(100, 400, 6_336), Some(SPLIT_MIN_LEN));
        assert_eq!(split_len(100, 400, 0), None);
    }

    #[test]
    fn longest_first_sorts_each_window_and_keeps_every_unit_whole() {
        use ptap_schedules::variants::NO_BLOCK;
        // Folded units (two halves; a diagonal unit's second half absent and empty) and single
        // units of pseudo-random lengths.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for (group, window) in [(2, 32), (2, 5), (1, 32), (1, 1), (1, 1000)] {
            let n = 203;
            let slots: Vec<u32> = (0..group * n)
                .map(|h| {
                    if group == 2 && h % 2 == 1 && next(4) == 0 {
                        NO_BLOCK
                    } else {
                        h as u32
                    }
                })
                .collect();
            let mut ptr = vec![0u64];
            for &s in &slots {
                let l = if s == NO_BLOCK { 0 } else { next(40) };
                ptr.push(ptr.last().unwrap() + l);
            }
            let r = PairedRuns {
                width: 1,
                ptr: ptr.clone().into(),
                slots: slots.clone().into(),
                ent: Default::default(),
            };
            let o = longest_first(&r, group, window);
            assert_eq!((o.width, o.ptr.len(), o.slots.len()), (1, ptr.len(), slots.len()));
            assert_eq!((o.ptr[0], o.entries()), (0, r.entries()));
            let half_len = |p: &[u64], h: usize| p[h + 1] - p[h];
            // Every half keeps its length, every unit its halves in order; the units permute
            // within their own window, longest first, ties in the schedule's order.
            let mut seen = vec![false; n];
            for (w, c) in (0..n).collect::<Vec<_>>().chunks(window).enumerate() {
                let mut last = (u64::MAX, 0usize);
                for &k in c {
                    // A unit's first half is never absent: its slot names the unit.
                    let u = o.slots[group * k] as usize / group;
                    assert!(u / window == w && !seen[u], "unit {u} out of its window or twice");
                    seen[u] = true;
                    let mut total = 0;
                    for h in 0..group {
                        assert_eq!(o.slots[group * k + h], slots[group * u + h]);
                        assert_eq!(half_len(&o.ptr, group * k + h), half_len(&ptr, group * u + h));
                        total += half_len(&ptr, group * u + h);
                    }
                    assert!(
                        total < last.0 || (total == last.0 && u > last.1),
                        "window {w} not longest first"
                    );
                    last = (total, u);
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn fp64_mma_needs_compute_capability_8() {
        assert!(mma_arch("sm_80") && mma_arch("sm_90") && mma_arch("sm_90a") && mma_arch("sm_100"));
        assert!(!mma_arch("sm_75") && !mma_arch("sm_70") && !mma_arch("compute_90"));
    }

    #[test]
    fn row_gustavson_chunk_agrees_with_the_inspector() {
        assert_eq!(gpu::ROW_GUSTAVSON_CHUNK, ptap_schedules::variants::ROW_GUSTAVSON_CHUNK);
    }

    #[test]
    fn column_split_refuses_only_windows_past_the_shared_memory_limit() {
        // Every shipped shape and the user shape 4x4 / 4x10 / 10x10 run the largest window.
        for (bf, bc) in [(1, 1), (2, 3), (3, 3), (3, 6), (6, 6), (4, 10), (10, 10)] {
            let s = ShapeSet { bf, bc };
            assert!(
                column_split_smem(s, gpu::COLUMN_SPLIT_WINDOW_MAX).is_none(),
                "{bf}x{bc}"
            );
            assert_eq!(column_split_max_window(s), gpu::COLUMN_SPLIT_WINDOW_MAX);
        }
        // 16x16 blocks: two 2192-byte groups per warp, 11 warps fit 48 KiB.
        let s = ShapeSet { bf: 16, bc: 16 };
        let (st, bytes) = column_split_smem(s, gpu::COLUMN_SPLIT_WINDOW_MAX).unwrap();
        assert_eq!((st.m, st.k, st.n, bytes), (16, 16, 16, 105216));
        assert_eq!(column_split_max_window(s), 22);
        assert!(column_split_smem(s, 22).is_none());
    }
}
