//! [`Backend`] on one CUDA device: every vector, matrix, schedule and factor
//! of a hierarchy resident on the GPU; the solver in `ptap-runtime` drives it.
//!
//! Matrix setup (products, diagonal-block inverses, the CG-Lanczos
//! eigen-estimates, the dense coarse Cholesky) and the solve run on the device;
//! only reduction scalars (8 bytes each) and a status word per factorization
//! cross the bus. Transfers are counted per phase ([`Device::counters`]).
use crate::{grid_for, kernels, Arg, CudaError, Device, DeviceBlockCsr, DeviceProduct, DeviceSpmv, Kernel, Kernels};
use cudarc::driver::{result, sys, CudaEvent, CudaGraph, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use ptap_codegen_core::gpu::{self, vector, DOT_THREADS};
use ptap_codegen_core::gpu_cg as gc;
use ptap_codegen_core::gpu_solve as gs;
use ptap_codegen_core::ShapeSet;
use ptap_runtime::backend::cg_slot;
use ptap_runtime::{Backend, KernelRegistry, RuntimeError};
use ptap_schedules::model::MachineParams;
use ptap_schedules::VariantSchedule;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

/// Largest dot-product partial count (one per thread block of the first pass).
const MAX_PARTIALS: usize = 1024;

/// Streams beside the main one that recordings are replayed on
/// ([`Backend::replay_beside`]; lane `l` on stream `l % LANES`): a matrix
/// setup's three smoothed levels and the coarse factorization at k = 16.
const LANES: usize = 4;

/// The CUDA backend: the device plus the shape-independent kernels and the
/// reduction scratch every operation shares.
pub struct Cuda {
    dev: Arc<Device>,
    /// The registered shape sets whose CUDA sources the device compiles and launches.
    registry: KernelRegistry,
    /// The shape-free kernels, resolved once: a launch looks up no name.
    ks: CommonKernels,
    /// Reduction partials: the main order's, then one per lane.
    parts: Vec<CudaSlice<f64>>,
    /// Which of `parts` the operations use now ([`Backend::use_lane`]).
    part_at: AtomicUsize,
    scal: CudaSlice<f64>,
    /// The lanes' streams (the main stream's priority, then the greatest),
    /// and per stream the events its replays wait on (recorded on the main
    /// stream) and the main stream waits on at the join.
    lanes: Vec<Arc<CudaStream>>,
    forks: Vec<CudaEvent>,
    joins: Vec<CudaEvent>,
    /// Streams replayed on since the last join (a bit per stream).
    pending: AtomicU32,
    /// The first lane (by `lane % LANES`) that replays on the streams of the
    /// greatest priority (`LANES`: none).
    urgent_from: AtomicUsize,
}

/// A recorded CUDA graph ([`Backend::begin_capture`]).
pub struct DeviceGraph(CudaGraph);

// SAFETY: cudarc's graph is not `Send` because a graph must not be used from
// two threads at once. A graph is reachable only through the `Hierarchy` that
// recorded it, which replays it from `&mut self`; moving that owner to another
// thread (a Python solver released by the GIL) keeps every use serialized.
// `Sync` is not claimed.
unsafe impl Send for DeviceGraph {}

/// A block matrix on the device with its SpMV plan.
/// A device matrix's values rounded to `f32` (the mixed-precision
/// smoother's operator), allocated once, refreshed by each matrix setup.
pub struct CudaLowered {
    pub values: CudaSlice<f32>,
    /// Set by the conversion where a finite value overflows `f32`.
    overflow: CudaSlice<u32>,
}

/// Seconds and bytes of [`Cuda::matrix_ref_timed`]'s parts.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct MatrixUploadTimings {
    /// Row pointers (as `u32`) and block columns, and the block rows built on the device.
    pub pattern_s: f64,
    pub pattern_bytes: u64,
    pub values_s: f64,
    pub values_bytes: u64,
    /// The SpMV plan: its kernels' module and the per-warp ranges.
    pub spmv_s: f64,
}

pub struct CudaMatrix {
    pub m: DeviceBlockCsr,
    spmv: DeviceSpmv,
}

/// Point-block Jacobi on the device.
pub struct CudaJacobi {
    b: usize,
    nrows: usize,
    diag_pos: CudaSlice<u32>,
    dinv: CudaSlice<f64>,
    status: CudaSlice<u32>,
    /// Its kernels, looked up once here: a launch formats no kernel name.
    ks: JacobiKernels,
}

/// The point-block Jacobi kernels of one block size.
struct JacobiKernels {
    invert: Arc<Kernel>,
    update: Arc<Kernel>,
    update_at: Arc<Kernel>,
    step: Arc<Kernel>,
    lanczos: Arc<Kernel>,
}

impl JacobiKernels {
    fn new(k: &Kernels, b: usize) -> Self {
        Self {
            invert: k[&gs::jacobi_invert_name(b)].clone(),
            update: k[&gs::jacobi_update_name(b)].clone(),
            update_at: k[&gc::jacobi_update_at_name(b)].clone(),
            step: k[&gc::jacobi_step_name(b)].clone(),
            lanczos: k[&gc::lanczos_step_name(b)].clone(),
        }
    }
}

/// The shape-free kernels the backend launches (vectors, CG steps, the dense
/// coarse Cholesky), resolved from the common module once.
struct CommonKernels {
    axpby: Arc<Kernel>,
    dot_partial: Arc<Kernel>,
    sum_partial: Arc<Kernel>,
    sum_partial_keep: Arc<Kernel>,
    axpby_ratio: Arc<Kernel>,
    cg_update: Arc<Kernel>,
    cg_direction: Arc<Kernel>,
    fill: Arc<Kernel>,
    chol_scale: Arc<Kernel>,
    chol_panel: Arc<Kernel>,
    chol_update: Arc<Kernel>,
    chol_inverse_panel: Arc<Kernel>,
    chol_inverse_update: Arc<Kernel>,
    chol_solve: Arc<Kernel>,
    tri_mv: Arc<Kernel>,
    to_f32: Arc<Kernel>,
}

impl CommonKernels {
    /// Every kernel from `k`; a missing one (a common module of another ptap
    /// version) is an error here, not a panic at its first launch.
    fn new(k: &Kernels) -> Result<Self, CudaError> {
        let get = |name: &str| {
            k.get(name).cloned().ok_or_else(|| CudaError::StaleKernels {
                declaration: gpu::COMMON_MODULE.to_string(),
                missing: name.to_string(),
            })
        };
        Ok(Self {
            axpby: get(vector::AXPBY)?,
            dot_partial: get(vector::DOT_PARTIAL)?,
            sum_partial: get(vector::SUM_PARTIAL)?,
            sum_partial_keep: get(gc::SUM_PARTIAL_KEEP)?,
            axpby_ratio: get(gc::AXPBY_RATIO)?,
            cg_update: get(gc::CG_UPDATE)?,
            cg_direction: get(gc::CG_DIRECTION)?,
            fill: get(gs::FILL)?,
            chol_scale: get(gs::CHOL_SCALE)?,
            chol_panel: get(gs::CHOL_PANEL)?,
            chol_update: get(gs::CHOL_UPDATE)?,
            chol_inverse_panel: get(gc::CHOL_INVERSE_PANEL)?,
            chol_inverse_update: get(gc::CHOL_INVERSE_UPDATE)?,
            chol_solve: get(gs::CHOL_SOLVE)?,
            tri_mv: get(gc::TRI_MV)?,
            to_f32: get(vector::TO_F32)?,
        })
    }
}

/// The dense coarsest operator and its Cholesky factor on the device.
pub struct CudaCoarse {
    n: usize,
    a: CudaSlice<f64>,
    l: CudaSlice<f64>,
    lt: CudaSlice<f64>,
    scale: CudaSlice<f64>,
    status: CudaSlice<u32>,
    /// `L^-1` and its transpose (row-major), when `n` is at most
    /// [`gc::CHOL_INVERSE_MAX_N`]: the solve is then two triangular
    /// matrix-vector products instead of `2 n` dependent substitution steps.
    inverse: Option<(CudaSlice<f64>, CudaSlice<f64>)>,
    /// The intermediate vector of the two products.
    y: CudaSlice<f64>,
    /// The densify kernel of the coarse block size.
    densify: Arc<Kernel>,
    /// The recorded factorization and what it is keyed on: the storage of
    /// the operator's values, block rows and columns, and its block count.
    graph: Option<([usize; 4], DeviceGraph)>,
}

impl Cuda {
    /// The backend on `dev` with the shipped kernel sets.
    pub fn new(dev: &Arc<Device>) -> Result<Self, CudaError> {
        Self::with_kernels(dev, KernelRegistry::shipped().clone())
    }

    /// The backend on `dev` running the CUDA sources of `registry`'s sets (a
    /// user-declared `kernels!` set included); loads the shape-free kernels.
    pub fn with_kernels(dev: &Arc<Device>, registry: KernelRegistry) -> Result<Self, CudaError> {
        let common = kernels::common(dev)?;
        let ctx = dev.context();
        ctx.bind_to_thread()?;
        let (_, greatest) = result::stream::get_priority_range()?;
        let event = || ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING));
        Ok(Self {
            dev: dev.clone(),
            registry,
            ks: CommonKernels::new(&common)?,
            parts: (0..=LANES).map(|_| dev.zeros(MAX_PARTIALS)).collect::<Result<_, _>>()?,
            part_at: AtomicUsize::new(0),
            scal: dev.zeros(1)?,
            lanes: (0..2 * LANES)
                .map(|i| {
                    if i < LANES {
                        ctx.new_stream()
                    } else {
                        ctx.new_stream_with_priority(greatest)
                    }
                })
                .collect::<Result<_, _>>()?,
            forks: (0..2 * LANES).map(|_| event()).collect::<Result<_, _>>()?,
            joins: (0..2 * LANES).map(|_| event()).collect::<Result<_, _>>()?,
            pending: AtomicU32::new(0),
            // The coarser levels' estimates and the coarse factor first, level
            // 0's long estimate in their gaps (k = 16: 13.1 against 13.5 ms).
            urgent_from: AtomicUsize::new(1),
        })
    }

    /// Which replays beside the main order go to streams of the greatest
    /// priority (the device starts their blocks first): those on lanes from
    /// `from` on (by `lane % 4`; in a hierarchy's matrix setup lane `l` is
    /// level `l`'s), none for `None`.
    pub fn set_lane_priority(&self, from: Option<usize>) {
        self.urgent_from
            .store(from.map_or(LANES, |f| f.min(LANES)), Ordering::Relaxed);
    }

    /// The reduction partials of the lane in use ([`Backend::use_lane`]).
    fn part(&self) -> &CudaSlice<f64> {
        &self.parts[self.part_at.load(Ordering::Relaxed)]
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }

    /// [`Backend::matrix_ref`] in its three parts, each waited for and timed:
    /// the pattern (with the block rows built on the device), the values, and
    /// the SpMV plan (its module load included). For a start's breakdown.
    pub fn matrix_ref_timed(&self, m: &BlockCsr) -> Result<(CudaMatrix, MatrixUploadTimings), CudaError> {
        self.matrix_in_parts(m, true)
    }

    /// The one body of [`Backend::matrix_ref`] and [`Self::matrix_ref_timed`]:
    /// with `timed`, each part drains the stream before its clock stops;
    /// without, nothing waits (the timings are then only the host's share).
    fn matrix_in_parts(&self, m: &BlockCsr, timed: bool) -> Result<(CudaMatrix, MatrixUploadTimings), CudaError> {
        let (br, bc) = m.block_shape();
        let p = m.pattern();
        let mut t = MatrixUploadTimings {
            pattern_bytes: (4 * (p.nrows() + 1) + std::mem::size_of_val(p.col_idx())) as u64,
            values_bytes: std::mem::size_of_val(m.values()) as u64,
            ..MatrixUploadTimings::default()
        };
        let since = |t: std::time::Instant| t.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let mut d = DeviceBlockCsr::upload_pattern(&self.dev, p, br, bc)?;
        if timed {
            self.dev.synchronize()?;
        }
        t.pattern_s = since(t0);
        let t0 = std::time::Instant::now();
        if !m.values().is_empty() {
            self.dev.upload_into(m.values(), &mut d.values)?;
        }
        if timed {
            self.dev.synchronize()?;
        }
        t.values_s = since(t0);
        let t0 = std::time::Instant::now();
        let spmv = DeviceSpmv::new(&self.dev, &self.registry, &d)?;
        t.spmv_s = since(t0);
        Ok((CudaMatrix { spmv, m: d }, t))
    }

    /// `y = a x + b y` (`b = 0` overwrites `y`).
    fn axpby(&self, a: f64, x: &CudaSlice<f64>, b: f64, y: &CudaSlice<f64>) -> Result<(), CudaError> {
        let n = y.len();
        self.dev.launch(
            &self.ks.axpby,
            grid_for(n as u64, 256),
            &[
                Arg::Scalar(a),
                Arg::F64(x),
                Arg::Scalar(b),
                Arg::F64Mut(y),
                Arg::U64(n as u64),
            ],
        )
    }

    fn fill_n(&self, y: &CudaSlice<f64>, v: f64, n: usize) -> Result<(), CudaError> {
        self.dev.launch(
            &self.ks.fill,
            grid_for(n as u64, 256),
            &[Arg::F64Mut(y), Arg::Scalar(v), Arg::U64(n as u64)],
        )
    }

    /// Partial sums of `x . y` into [`Self::part`] (the first pass of
    /// [`Backend::dot`]); returns how many.
    fn dot_partials(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<usize, CudaError> {
        let n = x.len().min(y.len());
        let g = Self::partial_blocks(n);
        self.dev.launch(
            &self.ks.dot_partial,
            Self::partial_config(g),
            &[Arg::F64(x), Arg::F64(y), Arg::F64Mut(self.part()), Arg::U64(n as u64)],
        )?;
        Ok(g)
    }

    /// Thread blocks of a reduction's first pass over `n` entries.
    fn partial_blocks(n: usize) -> usize {
        n.div_ceil(DOT_THREADS).clamp(1, MAX_PARTIALS)
    }

    fn partial_config(g: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (g as u32, 1, 1),
            block_dim: (DOT_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// `out[slot] = ` the sum of `g` partials in [`Self::part`], in a fixed tree.
    fn sum_partials(&self, g: usize, out: &CudaSlice<f64>, slot: usize) -> Result<(), CudaError> {
        self.dev.launch(
            &self.ks.sum_partial,
            Self::partial_config(1),
            &[
                Arg::F64(self.part()),
                Arg::F64Mut(out),
                Arg::U32(slot as u32),
                Arg::U32(g as u32),
            ],
        )
    }

    /// [`gc::AXPBY_RATIO`] in `mode`.
    fn ratio(
        &self,
        s: &CudaSlice<f64>,
        num: usize,
        den: usize,
        mode: u32,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let n = y.len();
        self.dev.launch(
            &self.ks.axpby_ratio,
            grid_for(n as u64, 256),
            &[
                Arg::F64(s),
                Arg::U32(num as u32),
                Arg::U32(den as u32),
                Arg::U32(mode),
                Arg::F64(x),
                Arg::F64Mut(y),
                Arg::U64(n as u64),
            ],
        )
    }

    /// Queues the densification and the blocked factorization (and the
    /// inverse factor) of `a` into `c`, with its status word zeroed first.
    fn queue_coarse_factor(&self, a: &CudaMatrix, c: &mut CudaCoarse) -> Result<(), CudaError> {
        let n = c.n;
        self.dev.memset_zero(&mut c.a)?;
        self.dev.stream().memset_zeros(&mut c.status)?;
        let m = &a.m;
        let b = m.br;
        self.dev.launch(
            &c.densify,
            grid_for((m.nnzb * b * b) as u64, 256),
            &[
                Arg::F64(&m.values),
                Arg::U32s(&m.block_row),
                Arg::U32s(&m.col_idx),
                Arg::F64Mut(&c.a),
                Arg::U32(m.nnzb as u32),
                Arg::U32(n as u32),
            ],
        )?;
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            &self.ks.chol_scale,
            one,
            &[Arg::F64(&c.a), Arg::F64Mut(&c.scale), Arg::U32(n as u32)],
        )?;
        // Blocked right-looking: per panel of CHOL_NB columns, the panel
        // (its diagonal block and the rows below), then the trailing update.
        let panel = &self.ks.chol_panel;
        let update = &self.ks.chol_update;
        let nb = gs::CHOL_NB;
        for k0 in (0..n).step_by(nb) {
            let below = n.saturating_sub(k0 + nb);
            let cfg = LaunchConfig {
                grid_dim: (below.div_ceil(gs::CHOL_PANEL_WARPS).max(1) as u32, 1, 1),
                block_dim: (32 * gs::CHOL_PANEL_WARPS as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            self.dev.launch(
                panel,
                cfg,
                &[
                    Arg::F64Mut(&c.a),
                    Arg::F64Mut(&c.l),
                    Arg::F64Mut(&c.lt),
                    Arg::F64(&c.scale),
                    Arg::U32sMut(&c.status),
                    Arg::U32(n as u32),
                    Arg::U32(k0 as u32),
                ],
            )?;
            if below > 0 {
                let tiles = below.div_ceil(nb) as u32;
                let cfg = LaunchConfig {
                    grid_dim: (tiles, tiles, 1),
                    block_dim: (nb as u32, 8, 1),
                    shared_mem_bytes: 0,
                };
                self.dev.launch(
                    update,
                    cfg,
                    &[
                        Arg::F64Mut(&c.a),
                        Arg::F64(&c.l),
                        Arg::U32(n as u32),
                        Arg::U32(k0 as u32),
                    ],
                )?;
            }
        }
        // W = L^-1 by the same panels: L W = I forward-substituted a panel of
        // rows at a time (w holds minus the earlier panels' terms).
        if let Some((w, wt)) = &mut c.inverse {
            self.dev.memset_zero(w)?;
            let panel = &self.ks.chol_inverse_panel;
            let update = &self.ks.chol_inverse_update;
            for k0 in (0..n).step_by(nb) {
                let cols = (k0 + nb).min(n);
                let cfg = LaunchConfig {
                    grid_dim: (cols.div_ceil(gc::CHOL_INVERSE_WARPS) as u32, 1, 1),
                    block_dim: (32 * gc::CHOL_INVERSE_WARPS as u32, 1, 1),
                    shared_mem_bytes: 0,
                };
                let args = [
                    Arg::F64(&c.l),
                    Arg::F64Mut(w),
                    Arg::F64Mut(wt),
                    Arg::U32(n as u32),
                    Arg::U32(k0 as u32),
                ];
                self.dev.launch(panel, cfg, &args)?;
                let below = n.saturating_sub(k0 + nb);
                if below > 0 {
                    let cfg = LaunchConfig {
                        grid_dim: (((k0 + nb) / nb) as u32, below.div_ceil(nb) as u32, 1),
                        block_dim: (nb as u32, 8, 1),
                        shared_mem_bytes: 0,
                    };
                    self.dev.launch(
                        update,
                        cfg,
                        &[Arg::F64(&c.l), Arg::F64Mut(w), Arg::U32(n as u32), Arg::U32(k0 as u32)],
                    )?;
                }
            }
        }
        Ok(())
    }

    fn status_row(&self, status: &CudaSlice<u32>) -> Result<Option<usize>, CudaError> {
        let mut v = [0u32];
        self.dev.download_into(status, &mut v)?;
        Ok(gs::failing_row(v[0]))
    }

    /// This device as the traffic model sees it: copy bandwidth measured now
    /// (device-to-device copies, read plus write), L2 size and SM count from
    /// the driver; see [`Device::measure_copy_bandwidth`].
    pub fn machine(&self) -> Result<MachineParams, CudaError> {
        self.dev.machine_params()
    }
}

impl Backend for Cuda {
    type Vector = CudaSlice<f64>;
    type Matrix = CudaMatrix;
    type Graph = DeviceGraph;
    type Product = DeviceProduct;
    type Jacobi = CudaJacobi;
    type Coarse = CudaCoarse;
    type Lowered = CudaLowered;
    type Error = CudaError;

    fn name(&self) -> &'static str {
        "cuda"
    }
    fn set_phase(&self, phase: &str) {
        self.dev.set_phase(phase);
    }
    fn synchronize(&self) -> Result<(), CudaError> {
        self.dev.synchronize()
    }

    fn vector(&self, n: usize) -> Result<CudaSlice<f64>, CudaError> {
        self.dev.zeros(n)
    }
    fn vector_from(&self, host: &[f64]) -> Result<CudaSlice<f64>, CudaError> {
        self.dev.upload(host)
    }
    fn write(&self, host: &[f64], v: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        self.dev.upload_into(host, v)
    }
    fn read(&self, v: &CudaSlice<f64>, host: &mut [f64]) -> Result<(), CudaError> {
        self.dev.download_into(v, host)
    }
    fn matrix(&self, m: BlockCsr, with_values: bool) -> Result<CudaMatrix, CudaError> {
        if with_values {
            self.matrix_ref(&m)
        } else {
            let (br, bc) = m.block_shape();
            let d = DeviceBlockCsr::upload_pattern(&self.dev, m.pattern(), br, bc)?;
            Ok(CudaMatrix {
                spmv: DeviceSpmv::new(&self.dev, &self.registry, &d)?,
                m: d,
            })
        }
    }
    fn matrix_ref(&self, m: &BlockCsr) -> Result<CudaMatrix, CudaError> {
        Ok(self.matrix_in_parts(m, false)?.0)
    }
    /// `R = P^T` gathered on the device from its `P` (the product module's
    /// gather kernel): only `R`'s pattern and the map cross the bus.
    fn transpose(
        &self,
        p: &CudaMatrix,
        _host_p: &BlockCsr,
        pattern: &Arc<BlockPattern>,
        source: &[u32],
    ) -> Result<CudaMatrix, CudaError> {
        let (bf, bc, nnzb) = (p.m.br, p.m.bc, p.m.nnzb);
        let fits = pattern.nrows() == p.m.ncols
            && pattern.ncols() == p.m.nrows
            && pattern.nnzb() == nnzb
            && source.len() == nnzb;
        // The kernel reads P's block `source[k]`: every one must exist.
        if !fits
            || source
                .par_chunks(1 << 16)
                .any(|c| c.iter().any(|&s| s as usize >= nnzb))
        {
            return Err(RuntimeError::PatternMismatch {
                what: "R = P^T",
                detail: format!(
                    "a transpose of {}x{} blocks with {} stored and {} sources does not fit P of {}x{} blocks with {}",
                    pattern.nrows(),
                    pattern.ncols(),
                    pattern.nnzb(),
                    source.len(),
                    p.m.nrows,
                    p.m.ncols,
                    nnzb
                ),
            }
            .into());
        }
        let r = DeviceBlockCsr::upload_pattern(&self.dev, pattern, bc, bf)?;
        if nnzb > 0 {
            let src = self.dev.upload(source)?;
            let k = kernels::product(&self.dev, &self.registry, bf, bc)?;
            self.dev.launch(
                k[&gpu::gather_r_name(ShapeSet { bf, bc })].as_ref(),
                grid_for((nnzb * bf * bc) as u64, 256),
                &[
                    Arg::F64(&p.m.values),
                    Arg::U32s(&src),
                    Arg::F64Mut(&r.values),
                    Arg::U32(nnzb as u32),
                ],
            )?;
        }
        Ok(CudaMatrix {
            spmv: DeviceSpmv::new(&self.dev, &self.registry, &r)?,
            m: r,
        })
    }
    fn symmetric_operator(&self, m: &mut CudaMatrix) -> Result<(), CudaError> {
        m.spmv.mirror(&self.dev, &self.registry, &m.m, None)?;
        Ok(())
    }
    fn set_values(&self, m: &mut CudaMatrix, values: &[f64]) -> Result<(), CudaError> {
        let expected = m.m.nnzb * m.m.br * m.m.bc;
        if values.len() != expected {
            return Err(RuntimeError::ValuesLength {
                got: values.len(),
                expected,
            }
            .into());
        }
        m.m.set_values(&self.dev, values)
    }
    fn values(&self, m: &CudaMatrix) -> Result<Vec<f64>, CudaError> {
        m.m.download_values(&self.dev)
    }

    fn spmv(&self, a: &CudaMatrix, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        a.spmv.apply(&self.dev, &a.m, x, y)
    }
    /// One fused pass, `r = b - A x` row by row, for square blocks (every
    /// operator of a hierarchy); the SpMV and a vector update otherwise.
    fn residual(
        &self,
        a: &CudaMatrix,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        if a.m.br == a.m.bc {
            return a.spmv.residual(&self.dev, &a.m, x, b, r);
        }
        self.spmv(a, x, r)?;
        self.axpby(1.0, b, -1.0, r)
    }
    fn axpy(&self, alpha: f64, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        self.axpby(alpha, x, 1.0, y)
    }
    fn xpby(&self, x: &CudaSlice<f64>, beta: f64, y: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        self.axpby(1.0, x, beta, y)
    }
    fn lowered(&self, a: &CudaMatrix) -> Result<CudaLowered, CudaError> {
        if a.m.br != a.m.bc {
            return Err(RuntimeError::InvalidOption {
                what: format!("f32 smoother operators need square blocks, got {}x{}", a.m.br, a.m.bc),
            }
            .into());
        }
        Ok(CudaLowered {
            values: self.dev.zeros(a.m.nnzb * a.m.br * a.m.bc)?,
            overflow: self.dev.zeros(1)?,
        })
    }
    /// One conversion pass on the device, then a 4-byte read of the overflow flag.
    fn lower(&self, a: &CudaMatrix, lo: &mut CudaLowered, level: usize) -> Result<(), CudaError> {
        self.lower_queued(a, lo, level)?;
        self.check_lowered(lo, level)
    }
    /// The overflow flag zeroed and the conversion launched: both can be recorded.
    fn lower_queued(&self, a: &CudaMatrix, lo: &mut CudaLowered, _level: usize) -> Result<(), CudaError> {
        let n = a.m.values.len();
        if lo.values.len() != n {
            return Err(RuntimeError::ValuesLength {
                got: n,
                expected: lo.values.len(),
            }
            .into());
        }
        if n == 0 {
            return Ok(());
        }
        self.dev.stream().memset_zeros(&mut lo.overflow)?;
        let cfg = LaunchConfig {
            grid_dim: (
                (n as u64).div_ceil(256).min(self.dev.sm_count() as u64 * 16) as u32,
                1,
                1,
            ),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            &self.ks.to_f32,
            cfg,
            &[
                Arg::F64(&a.m.values),
                Arg::F32Mut(&lo.values),
                Arg::U32sMut(&lo.overflow),
                Arg::U64(n as u64),
            ],
        )
    }
    /// A 4-byte read of the overflow flag.
    fn check_lowered(&self, lo: &CudaLowered, level: usize) -> Result<(), CudaError> {
        let mut flag = [0u32];
        self.dev.download_into(&lo.overflow, &mut flag)?;
        if flag[0] != 0 {
            return Err(ptap_runtime::cpu::f32_overflow(level).into());
        }
        Ok(())
    }
    fn spmv_lowered(
        &self,
        a: &CudaMatrix,
        lo: &CudaLowered,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        a.spmv.apply_f32(&self.dev, &a.m, &lo.values, x, y)
    }
    fn residual_lowered(
        &self,
        a: &CudaMatrix,
        lo: &CudaLowered,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        a.spmv.residual_f32(&self.dev, &a.m, &lo.values, x, b, r)
    }
    fn copy(&self, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        self.axpby(1.0, x, 0.0, y)
    }
    fn fill(&self, y: &mut CudaSlice<f64>, value: f64) -> Result<(), CudaError> {
        self.fill_n(y, value, y.len())
    }
    /// Two passes on the device in a fixed order; 8 bytes come back.
    fn dot(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<f64, CudaError> {
        let g = self.dot_partials(x, y)?;
        self.sum_partials(g, &self.scal, 0)?;
        let mut out = [0.0f64];
        self.dev.download_into(&self.scal, &mut out)?;
        Ok(out[0])
    }
    fn dot_into(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), CudaError> {
        let g = self.dot_partials(x, y)?;
        match keep {
            None => self.sum_partials(g, s, slot),
            Some(k) => self.dev.launch(
                &self.ks.sum_partial_keep,
                Self::partial_config(1),
                &[
                    Arg::F64(self.part()),
                    Arg::F64Mut(s),
                    Arg::U32(slot as u32),
                    Arg::U32(k as u32),
                    Arg::U32(g as u32),
                ],
            ),
        }
    }
    /// One pass over `p`, `ap`, `x`, `r` with `r . r`'s partials (the
    /// thread-to-entry map of [`Backend::dot`]), then the fixed-tree sum.
    fn cg_update(
        &self,
        s: &mut CudaSlice<f64>,
        p: &CudaSlice<f64>,
        ap: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let n = r.len();
        let g = Self::partial_blocks(n);
        self.dev.launch(
            &self.ks.cg_update,
            Self::partial_config(g),
            &[
                Arg::F64(s),
                Arg::U32(cg_slot::RZ as u32),
                Arg::U32(cg_slot::PAP as u32),
                Arg::F64(p),
                Arg::F64(ap),
                Arg::F64Mut(x),
                Arg::F64Mut(r),
                Arg::F64Mut(self.part()),
                Arg::U64(n as u64),
            ],
        )?;
        self.sum_partials(g, s, cg_slot::RR)
    }
    fn cg_direction(&self, s: &CudaSlice<f64>, z: &CudaSlice<f64>, p: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        let n = p.len();
        self.dev.launch(
            &self.ks.cg_direction,
            grid_for(n as u64, 256),
            &[
                Arg::F64(s),
                Arg::U32(cg_slot::RZ as u32),
                Arg::U32(cg_slot::RZ_OLD as u32),
                Arg::F64(z),
                Arg::F64Mut(p),
                Arg::U64(n as u64),
            ],
        )
    }

    fn axpy_ratio(
        &self,
        s: &CudaSlice<f64>,
        num: usize,
        den: usize,
        negate: bool,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let mode = if negate {
            gc::ratio_mode::AXPY_NEG
        } else {
            gc::ratio_mode::AXPY
        };
        self.ratio(s, num, den, mode, x, y)
    }
    fn xpby_ratio(
        &self,
        s: &CudaSlice<f64>,
        num: usize,
        den: usize,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.ratio(s, num, den, gc::ratio_mode::XPBY, x, y)
    }
    /// Stream capture into a CUDA graph (thread-local mode: this thread's
    /// stream only; the device's stream is never the legacy one, and event
    /// tracking is off).
    fn begin_capture(&self) -> Result<bool, CudaError> {
        self.dev
            .stream()
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        Ok(true)
    }
    fn end_capture(&self, discard: bool) -> Result<Option<DeviceGraph>, CudaError> {
        let g = self.dev.stream().end_capture(sys::CUgraphInstantiate_flags(0))?;
        Ok(if discard { None } else { g.map(DeviceGraph) })
    }
    fn replay(&self, graph: &DeviceGraph) -> Result<(), CudaError> {
        Ok(graph.0.launch()?)
    }
    fn lanes(&self) -> usize {
        LANES
    }
    fn use_lane(&self, lane: Option<usize>) {
        self.part_at.store(lane.map_or(0, |l| 1 + l % LANES), Ordering::Relaxed);
    }
    /// The graph launched on lane `lane`'s stream after an event recorded on
    /// the main stream.
    fn replay_beside(&self, graph: &DeviceGraph, lane: usize) -> Result<(), CudaError> {
        let urgent = lane % LANES >= self.urgent_from.load(Ordering::Relaxed);
        let i = lane % LANES + if urgent { LANES } else { 0 };
        self.forks[i].record(self.dev.stream())?;
        self.lanes[i].wait(&self.forks[i])?;
        // SAFETY: the graph and the stream are alive; what the graph reads and
        // writes is ordered by the event above and by `join_lanes`.
        unsafe { result::graph::launch(graph.0.cu_graph_exec(), self.lanes[i].cu_stream()) }?;
        self.pending.fetch_or(1 << i, Ordering::Relaxed);
        Ok(())
    }
    fn join_lanes(&self) -> Result<(), CudaError> {
        let pending = self.pending.swap(0, Ordering::Relaxed);
        for i in (0..2 * LANES).filter(|i| pending & (1 << i) != 0) {
            self.joins[i].record(&self.lanes[i])?;
            self.dev.stream().wait(&self.joins[i])?;
        }
        Ok(())
    }
    fn storage_id(&self, v: &CudaSlice<f64>) -> usize {
        let (ptr, _sync) = v.device_ptr(self.dev.stream());
        ptr as usize
    }

    fn jacobi(&self, a: &BlockCsr) -> Result<CudaJacobi, CudaError> {
        let b = a.block_shape().0;
        let pos: Vec<u32> = a
            .pattern()
            .diagonal_positions()
            .into_iter()
            .map(|k| u32::try_from(k).unwrap_or(u32::MAX))
            .collect();
        Ok(CudaJacobi {
            b,
            nrows: a.nrows(),
            diag_pos: self.dev.upload(&pos)?,
            dinv: self.dev.zeros(a.nrows() * b * b)?,
            status: self.dev.zeros(1)?,
            ks: JacobiKernels::new(&kernels::jacobi(&self.dev, &self.registry, b)?, b),
        })
    }
    fn jacobi_invert(&self, a: &CudaMatrix, j: &mut CudaJacobi, level: usize) -> Result<(), CudaError> {
        self.jacobi_invert_queued(a, j, level)?;
        self.check_jacobi(j, level)
    }
    /// The status word zeroed and the inversion launched: both can be recorded.
    fn jacobi_invert_queued(&self, a: &CudaMatrix, j: &mut CudaJacobi, _level: usize) -> Result<(), CudaError> {
        self.dev.stream().memset_zeros(&mut j.status)?;
        self.dev.launch(
            &j.ks.invert,
            grid_for(j.nrows as u64, 128),
            &[
                Arg::F64(&a.m.values),
                Arg::U32s(&j.diag_pos),
                Arg::F64Mut(&j.dinv),
                Arg::U32sMut(&j.status),
                Arg::U32(j.nrows as u32),
            ],
        )
    }
    /// A 4-byte read of the status word.
    fn check_jacobi(&self, j: &CudaJacobi, level: usize) -> Result<(), CudaError> {
        if let Some(row) = self.status_row(&j.status)? {
            return Err(RuntimeError::SingularDiagonalBlock {
                level,
                row,
                why: "the diagonal block is missing, zero, not finite or has a pivot below 1e-14 of its largest entry"
                    .into(),
            }
            .into());
        }
        Ok(())
    }
    fn jacobi_update(
        &self,
        j: &CudaJacobi,
        alpha: f64,
        r: &CudaSlice<f64>,
        beta: f64,
        t: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.dev.launch(
            &j.ks.update,
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::Scalar(alpha),
                Arg::F64(r),
                Arg::Scalar(beta),
                Arg::F64(t),
                Arg::F64Mut(x),
                Arg::U32(j.nrows as u32),
            ],
        )
    }
    fn jacobi_update_at(
        &self,
        j: &CudaJacobi,
        coef: &CudaSlice<f64>,
        alpha_at: usize,
        beta_at: Option<usize>,
        r: &CudaSlice<f64>,
        t: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.dev.launch(
            &j.ks.update_at,
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::F64(coef),
                Arg::U32(alpha_at as u32),
                Arg::U32(beta_at.map_or(u32::MAX, |b| b as u32)),
                Arg::F64(r),
                Arg::F64(t),
                Arg::F64Mut(x),
                Arg::U32(j.nrows as u32),
            ],
        )
    }
    /// One pass ([`gc::jacobi_step_name`]): reads `D^-1`, `r` (and `x`),
    /// writes `t` and `x`, the bits of the default's four.
    fn jacobi_first_step(
        &self,
        j: &CudaJacobi,
        coef: &CudaSlice<f64>,
        alpha_at: usize,
        r: &CudaSlice<f64>,
        t: &mut CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        zero_guess: bool,
    ) -> Result<(), CudaError> {
        self.dev.launch(
            &j.ks.step,
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::F64(coef),
                Arg::U32(alpha_at as u32),
                Arg::F64(r),
                Arg::F64Mut(t),
                Arg::F64Mut(x),
                Arg::U32(zero_guess as u32),
                Arg::U32(j.nrows as u32),
            ],
        )
    }
    /// One pass over the block rows ([`gc::lanczos_step_name`]) with the
    /// partials of `r . z`, then the fixed-tree sum into `s[slot]`.
    fn lanczos_update(
        &self,
        j: &CudaJacobi,
        s: &mut CudaSlice<f64>,
        num: usize,
        den: usize,
        ap: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
        slot: usize,
    ) -> Result<(), CudaError> {
        let g = Self::partial_blocks(j.nrows);
        self.dev.launch(
            &j.ks.lanczos,
            Self::partial_config(g),
            &[
                Arg::F64(s),
                Arg::U32(num as u32),
                Arg::U32(den as u32),
                Arg::F64(&j.dinv),
                Arg::F64(ap),
                Arg::F64Mut(r),
                Arg::F64Mut(z),
                Arg::F64Mut(self.part()),
                Arg::U64(j.nrows as u64),
            ],
        )?;
        self.sum_partials(g, s, slot)
    }
    fn jacobi_values(&self, j: &CudaJacobi) -> Result<Vec<f64>, CudaError> {
        self.dev.download(&j.dinv)
    }

    fn product(&self, schedule: &VariantSchedule, bf: usize, bc: usize) -> Result<DeviceProduct, CudaError> {
        DeviceProduct::new(&self.dev, &self.registry, schedule, bf, bc)
    }
    fn galerkin(
        &self,
        product: &mut DeviceProduct,
        a: &CudaMatrix,
        p: &CudaMatrix,
        c: &mut CudaMatrix,
    ) -> Result<(), CudaError> {
        product.numeric(&a.m, &p.m, &mut c.m)
    }

    fn coarse(&self, a: &BlockCsr) -> Result<CudaCoarse, CudaError> {
        let n = a.scalar_rows();
        let b = a.block_shape().0;
        let jac = kernels::jacobi(&self.dev, &self.registry, b)?;
        Ok(CudaCoarse {
            n,
            a: self.dev.zeros(n * n)?,
            l: self.dev.zeros(n * n)?,
            lt: self.dev.zeros(n * n)?,
            scale: self.dev.zeros(1)?,
            status: self.dev.zeros(1)?,
            inverse: if n <= gc::CHOL_INVERSE_MAX_N {
                // W is zeroed at each factorization; W^T is zero below its
                // diagonal, never written there.
                Some((self.dev.zeros(n * n)?, self.dev.zeros(n * n)?))
            } else {
                None
            },
            y: self.dev.zeros(n)?,
            densify: jac[&gs::densify_name(b)].clone(),
            graph: None,
        })
    }
    /// The factorization's ~4 n / 32 launches recorded once as a CUDA graph
    /// (keyed on `a`'s storage and block count; every other buffer is the
    /// factor's own) and replayed by later factorizations; then the status
    /// word is read.
    fn coarse_factor(&self, a: &CudaMatrix, c: &mut CudaCoarse, level: usize) -> Result<(), CudaError> {
        let stream = self.dev.stream();
        let key = [
            self.storage_id(&a.m.values),
            a.m.block_row.device_ptr(stream).0 as usize,
            a.m.col_idx.device_ptr(stream).0 as usize,
            a.m.nnzb,
        ];
        match &c.graph {
            Some((k, g)) if *k == key => g.0.launch()?,
            _ => {
                c.graph = None;
                stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
                let queued = self.queue_coarse_factor(a, c);
                let g = stream.end_capture(sys::CUgraphInstantiate_flags(0))?;
                queued?;
                match g {
                    Some(g) => {
                        g.launch()?;
                        c.graph = Some((key, DeviceGraph(g)));
                    }
                    None => self.queue_coarse_factor(a, c)?,
                }
            }
        }
        self.check_coarse(c, level)
    }
    /// The factorization's launches, queued (a caller's recording holds them).
    fn coarse_factor_queued(&self, a: &CudaMatrix, c: &mut CudaCoarse, _level: usize) -> Result<(), CudaError> {
        self.queue_coarse_factor(a, c)
    }
    /// A 4-byte read of the status word.
    fn check_coarse(&self, c: &CudaCoarse, level: usize) -> Result<(), CudaError> {
        let n = c.n;
        if let Some(row) = self.status_row(&c.status)? {
            return Err(RuntimeError::CoarseFactorization {
                level,
                n,
                why: format!("pivot at row {row} is not positive (below 1e-14 of the largest diagonal) or not finite"),
            }
            .into());
        }
        Ok(())
    }
    /// `x = W^T (W x)` with `W = L^-1` where the inverse factor exists (two
    /// launches reading `n^2` doubles), else the one-block substitutions.
    fn coarse_solve(&self, c: &CudaCoarse, x: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        if let Some((w, wt)) = &c.inverse {
            let mv = &self.ks.tri_mv;
            let cfg = grid_for((c.n * 32) as u64, (32 * gc::TRI_MV_WARPS) as u32);
            let n = Arg::U32(c.n as u32);
            self.dev
                .launch(mv, cfg, &[Arg::F64(w), Arg::F64(x), Arg::F64Mut(&c.y), n, Arg::U32(1)])?;
            let n = Arg::U32(c.n as u32);
            return self
                .dev
                .launch(mv, cfg, &[Arg::F64(wt), Arg::F64(&c.y), Arg::F64Mut(x), n, Arg::U32(0)]);
        }
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (gs::CHOL_SOLVE_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            &self.ks.chol_solve,
            cfg,
            &[Arg::F64(&c.l), Arg::F64(&c.lt), Arg::F64Mut(x), Arg::U32(c.n as u32)],
        )
    }
}

impl CudaCoarse {
    /// The Cholesky factor `L` (row-major `n x n`, lower triangle), on the host.
    pub fn factor(&self, dev: &Device) -> Result<Vec<f64>, CudaError> {
        let mut l = dev.download(&self.l)?;
        l.truncate(self.n * self.n);
        Ok(l)
    }
}
