//! The AMG-preconditioned CG solve on the device (issue #5, item 5).
//!
//! A [`DeviceHierarchy`] is built from a CPU [`Hierarchy`]'s structure: the
//! fine operator, every level's `P` and `R = P^T`, the coarse patterns and
//! the product schedules are uploaded once (mesh setup). After that:
//!
//! * **matrix setup** ([`DeviceHierarchy::matrix_setup`]) runs the numeric
//!   Galerkin products level by level from the device-resident level-0
//!   values, inverts every diagonal block (point-block Jacobi) on the device,
//!   estimates `lambda_max(D^-1 A)` per level by CG-Lanczos on the device
//!   (only the CG scalars come back; the tridiagonal's top eigenvalue is found
//!   on the host from them), and factors the dense coarsest operator by a
//!   column-by-column Cholesky on the device;
//! * **solve** ([`DeviceHierarchy::solve`]) runs CG with the V-cycle
//!   (Chebyshev(2) with point-block Jacobi, merge-path SpMV for `A`, `R`, `P`,
//!   the coarse triangular solves) on the device; dot products are reduced on
//!   the device and only their 8-byte results cross the bus.
//!
//! The algorithm is the CPU's step for step (`Hierarchy::vcycle`,
//! `Hierarchy::solve`, `ChebyshevSmoother::smooth`, `estimate_lambda_max`);
//! only the summation order of reductions differs, so iteration counts agree
//! and solutions agree to rounding.
//!
//! Transfers are counted per phase: `mesh setup (upload)` (structure, once),
//! `matrix setup` and `solve` (scalars only), and the vector-sized
//! `rhs upload` / `solution download` around a host-facing solve.
use crate::{grid_for, kernels, Arg, CudaError, Device, DeviceBlockCsr, DeviceProduct, DeviceSpmv, Kernel, Kernels};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ptap_amg::eig::{cg_lanczos_lambda_max, pseudo_random_vector};
use ptap_codegen_core::gpu::{vector, DOT_THREADS};
use ptap_codegen_core::gpu_solve as gs;
use ptap_runtime::Hierarchy;
use ptap_runtime::RuntimeError;
use ptap_runtime::{CgOptions, CgReport};
use ptap_schedules::model::{select, MachineParams, ModelInput};
use ptap_schedules::{Variant, VariantSchedule};
use std::sync::Arc;
use std::time::Instant;

/// Choices of the device hierarchy.
#[derive(Clone, Debug)]
pub struct DeviceSolveOptions {
    /// Galerkin-product variant the device runs on every level (the schedule
    /// is inspected once from the CPU hierarchy's two-pass patterns).
    pub variant: Variant,
    /// When set, each level's variant is instead the traffic model's pick
    /// among [`DEVICE_VARIANTS`] for these machine parameters (the paper's
    /// per-level selection, section `sec:model`).
    pub per_level: Option<MachineParams>,
}

/// The Galerkin-product variants the device executes, in order of preference
/// among variants the model ties ([`select`] keeps the first): column split
/// first, the paper's CUDA default (`sec:impl-cuda`). The model charges column
/// split its slot-order arrays and so usually ranks V2b slightly ahead, while
/// on the H200 at k = 16 column split measured 38.2 ms over all levels against
/// V2b's 53.7 ms: the model has no term for V2b's shared-memory tile.
pub const DEVICE_VARIANTS: [Variant; 5] = [
    Variant::ColumnSplit,
    Variant::SlotTiled,
    Variant::TwoPass,
    Variant::FlatStream,
    Variant::OuterProductScatter,
];

impl Default for DeviceSolveOptions {
    fn default() -> Self {
        Self {
            variant: Variant::ColumnSplit,
            per_level: None,
        }
    }
}

/// Outcome of one device solve.
#[derive(Clone, Debug)]
pub struct DeviceSolveReport {
    pub cg: CgReport,
    /// `||r_k|| / ||b||`, index 0 the start.
    pub history: Vec<f64>,
    /// Wall time of the CG loop on the device (vectors already resident).
    pub solve_s: f64,
}

/// Wall time of the device phases.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct DeviceTimings {
    /// Structure upload and schedule inspection of the device variant.
    pub upload_s: f64,
    pub matrix_setup_s: f64,
    pub galerkin_numeric_s: f64,
}

struct DevTransfer {
    p: DeviceBlockCsr,
    r: DeviceBlockCsr,
    p_spmv: DeviceSpmv,
    r_spmv: DeviceSpmv,
    product: DeviceProduct,
}

struct DevSmoother {
    diag_pos: CudaSlice<u32>,
    dinv: CudaSlice<f64>,
    eig_rhs: CudaSlice<f64>,
    lambda_max: f64,
}

struct DevLevel {
    a: DeviceBlockCsr,
    a_spmv: DeviceSpmv,
    transfer: Option<DevTransfer>,
    smoother: Option<DevSmoother>,
    jacobi: Kernels,
    b: usize,
}

/// Per-level vectors: the V-cycle's `x`, `rhs`, `r`, `t` (also the
/// eigen-estimate's `z`, `p`, `r`, `A p` at matrix setup).
struct Work {
    x: CudaSlice<f64>,
    rhs: CudaSlice<f64>,
    r: CudaSlice<f64>,
    t: CudaSlice<f64>,
    n: usize,
}

impl Work {
    fn new(dev: &Device, n: usize) -> Result<Self, CudaError> {
        Ok(Self {
            x: dev.zeros(n)?,
            rhs: dev.zeros(n)?,
            r: dev.zeros(n)?,
            t: dev.zeros(n)?,
            n,
        })
    }
}

/// Launch helpers over shared references (every kernel argument is one).
struct Ops {
    dev: Arc<Device>,
    vec: Kernels,
    coarse: Kernels,
    part: CudaSlice<f64>,
    scal: CudaSlice<f64>,
}

const MAX_PARTIALS: usize = 1024;

impl Ops {
    fn k<'a>(kernels: &'a Kernels, name: &str) -> &'a Kernel {
        kernels[name].as_ref()
    }
    fn fill(&self, y: &CudaSlice<f64>, v: f64, n: usize) -> Result<(), CudaError> {
        self.dev.launch(
            Self::k(&self.coarse, gs::FILL),
            grid_for(n as u64, 256),
            &[Arg::F64Mut(y), Arg::Scalar(v), Arg::U64(n as u64)],
        )
    }
    /// `y = a x + b y` (`b = 0` overwrites `y`).
    fn axpby(&self, a: f64, x: &CudaSlice<f64>, b: f64, y: &CudaSlice<f64>, n: usize) -> Result<(), CudaError> {
        self.dev.launch(
            Self::k(&self.vec, vector::AXPBY),
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
    fn copy(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>, n: usize) -> Result<(), CudaError> {
        self.axpby(1.0, x, 0.0, y, n)
    }
    /// `x . y`, reduced on the device in a fixed order; 8 bytes come back.
    fn dot(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>, n: usize) -> Result<f64, CudaError> {
        let g = n.div_ceil(DOT_THREADS).clamp(1, MAX_PARTIALS);
        let cfg = LaunchConfig {
            grid_dim: (g as u32, 1, 1),
            block_dim: (DOT_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            Self::k(&self.vec, vector::DOT_PARTIAL),
            cfg,
            &[Arg::F64(x), Arg::F64(y), Arg::F64Mut(&self.part), Arg::U64(n as u64)],
        )?;
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (DOT_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            Self::k(&self.vec, vector::SUM_PARTIAL),
            one,
            &[
                Arg::F64(&self.part),
                Arg::F64Mut(&self.scal),
                Arg::U32(0),
                Arg::U32(g as u32),
            ],
        )?;
        let mut out = [0.0f64];
        self.dev.download_into(&self.scal, &mut out)?;
        Ok(out[0])
    }
    /// `y = A x`.
    fn spmv(
        &self,
        plan: &DeviceSpmv,
        a: &DeviceBlockCsr,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.fill(y, 0.0, a.scalar_rows())?;
        plan.launch_zeroed(&self.dev, a, x, y)
    }
    /// `r = rhs - A x`.
    fn residual(
        &self,
        lev: &DevLevel,
        x: &CudaSlice<f64>,
        rhs: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.spmv(&lev.a_spmv, &lev.a, x, r)?;
        self.axpby(1.0, rhs, -1.0, r, lev.a.scalar_rows())
    }
    /// `x += alpha D^-1 r + beta t`.
    #[allow(clippy::too_many_arguments)]
    fn jacobi_update(
        &self,
        lev: &DevLevel,
        alpha: f64,
        r: &CudaSlice<f64>,
        beta: f64,
        t: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let sm = lev.smoother.as_ref().expect("smoother on every level but the coarsest");
        let nrows = lev.a.nrows;
        self.dev.launch(
            Self::k(&lev.jacobi, &gs::jacobi_update_name(lev.b)),
            grid_for((nrows * lev.b) as u64, 256),
            &[
                Arg::F64(&sm.dinv),
                Arg::Scalar(alpha),
                Arg::F64(r),
                Arg::Scalar(beta),
                Arg::F64(t),
                Arg::F64Mut(x),
                Arg::U32(nrows as u32),
            ],
        )
    }
    /// `y = D^-1 x`.
    fn jacobi_apply(&self, lev: &DevLevel, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<(), CudaError> {
        self.fill(y, 0.0, lev.a.scalar_rows())?;
        self.jacobi_update(lev, 1.0, x, 0.0, x, y)
    }
}

/// The hierarchy resident on the device, with its solve.
pub struct DeviceHierarchy {
    ops: Ops,
    levels: Vec<DevLevel>,
    work: Vec<Work>,
    bounds: (f64, f64),
    eig_iterations: usize,
    coarse_n: usize,
    coarse_a: CudaSlice<f64>,
    coarse_l: CudaSlice<f64>,
    coarse_lt: CudaSlice<f64>,
    coarse_scale: CudaSlice<f64>,
    status: CudaSlice<u32>,
    // CG vectors on the fine level.
    cg_b: CudaSlice<f64>,
    cg_x: CudaSlice<f64>,
    cg_r: CudaSlice<f64>,
    cg_z: CudaSlice<f64>,
    cg_p: CudaSlice<f64>,
    cg_ap: CudaSlice<f64>,
    pub timings: DeviceTimings,
}

impl DeviceHierarchy {
    /// Uploads `h`'s structure (phase `mesh setup (upload)`): the fine
    /// operator with its values, every `P` and `R`, the coarse patterns, the
    /// device variant's product schedules, the diagonal positions and the
    /// eigen-estimate's fixed start vectors. Loads (or compiles) every kernel.
    /// Call [`Self::matrix_setup`] before solving.
    pub fn new(dev: &Arc<Device>, h: &Hierarchy, opts: DeviceSolveOptions) -> Result<Self, CudaError> {
        let t = Instant::now();
        dev.set_phase("mesh setup (upload)");
        let vec = kernels::common(dev)?;
        let coarse = vec.clone();
        let ops = Ops {
            dev: dev.clone(),
            vec,
            coarse,
            part: dev.zeros(MAX_PARTIALS)?,
            scal: dev.zeros(1)?,
        };
        let hopts = h.options();
        let cpu = h.levels();
        let nl = cpu.len();
        let mut levels: Vec<DevLevel> = Vec::with_capacity(nl);
        let mut work = Vec::with_capacity(nl);
        for (l, lev) in cpu.iter().enumerate() {
            let (b, _) = lev.a.block_shape();
            let a = if l == 0 {
                DeviceBlockCsr::upload(dev, &lev.a)?
            } else {
                // Coarse values are computed on the device by the matrix setup.
                DeviceBlockCsr::upload_pattern(dev, lev.a.pattern(), b, b)?
            };
            let a_spmv = DeviceSpmv::new(dev, &hopts.kernels, &a)?;
            let transfer = match &lev.transfer {
                Some(tr) => {
                    let (bf, bc) = tr.p.block_shape();
                    let variant = match &opts.per_level {
                        Some(m) => select(&ModelInput::new(tr.schedule.stats, bf, bc), m, &DEVICE_VARIANTS),
                        None => opts.variant,
                    };
                    // Reuse the CPU hierarchy's schedule when it is the device's
                    // variant (e.g. loaded from a schedule cache); inspect otherwise.
                    let inspected;
                    let schedule = if tr.variant_schedule.variant() == variant {
                        &tr.variant_schedule
                    } else {
                        inspected = VariantSchedule::inspect(variant, tr.schedule.clone(), bf * bc);
                        &inspected
                    };
                    let product = DeviceProduct::new(dev, &hopts.kernels, schedule, bf, bc)?;
                    let p = DeviceBlockCsr::upload(dev, &tr.p)?;
                    let r = DeviceBlockCsr::upload(dev, &tr.r)?;
                    Some(DevTransfer {
                        p_spmv: DeviceSpmv::new(dev, &hopts.kernels, &p)?,
                        r_spmv: DeviceSpmv::new(dev, &hopts.kernels, &r)?,
                        p,
                        r,
                        product,
                    })
                }
                None => None,
            };
            let smoother = match &lev.smoother {
                Some(_) => {
                    let pos: Vec<u32> = lev
                        .a
                        .pattern()
                        .diagonal_positions()
                        .into_iter()
                        .map(|k| u32::try_from(k).unwrap_or(u32::MAX))
                        .collect();
                    Some(DevSmoother {
                        diag_pos: dev.upload(&pos)?,
                        dinv: dev.zeros(lev.a.nrows() * b * b)?,
                        eig_rhs: dev.upload(&pseudo_random_vector(lev.a.scalar_rows(), 0x5eed_ca11_ab1e))?,
                        lambda_max: 0.0,
                    })
                }
                None => None,
            };
            work.push(Work::new(dev, lev.a.scalar_rows())?);
            levels.push(DevLevel {
                jacobi: kernels::jacobi(dev, &hopts.kernels, b)?,
                a,
                a_spmv,
                transfer,
                smoother,
                b,
            });
        }
        let coarse_n = cpu[nl - 1].a.scalar_rows();
        let n0 = cpu[0].a.scalar_rows();
        let mut s = Self {
            coarse_a: dev.zeros(coarse_n * coarse_n)?,
            coarse_l: dev.zeros(coarse_n * coarse_n)?,
            coarse_lt: dev.zeros(coarse_n * coarse_n)?,
            coarse_scale: dev.zeros(1)?,
            status: dev.zeros(1)?,
            cg_b: dev.zeros(n0)?,
            cg_x: dev.zeros(n0)?,
            cg_r: dev.zeros(n0)?,
            cg_z: dev.zeros(n0)?,
            cg_p: dev.zeros(n0)?,
            cg_ap: dev.zeros(n0)?,
            ops,
            levels,
            work,
            bounds: hopts.chebyshev_bounds,
            eig_iterations: hopts.amg.eig_iterations,
            coarse_n,
            timings: DeviceTimings::default(),
        };
        dev.synchronize()?;
        s.timings.upload_s = t.elapsed().as_secs_f64();
        Ok(s)
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.ops.dev
    }
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }
    /// Scalar rows of the coarsest (directly solved) level.
    /// The Galerkin-product variant each level's product runs.
    pub fn level_variants(&self) -> Vec<Variant> {
        self.levels
            .iter()
            .filter_map(|l| l.transfer.as_ref().map(|t| t.product.variant()))
            .collect()
    }
    pub fn coarse_rows(&self) -> usize {
        self.coarse_n
    }
    /// `lambda_max(D^-1 A)` per smoothed level, from the last matrix setup.
    pub fn lambda_max(&self) -> Vec<f64> {
        self.levels
            .iter()
            .filter_map(|l| l.smoother.as_ref().map(|s| s.lambda_max))
            .collect()
    }

    /// The fine operator on the device, for a device assembly to overwrite
    /// its values in place (then call [`DeviceHierarchy::matrix_setup`]).
    pub fn fine_operator_mut(&mut self) -> &mut DeviceBlockCsr {
        &mut self.levels[0].a
    }

    /// New fine-operator values from the host (phase `fine values upload`:
    /// the one operator-sized copy of a refresh, the assembly's output).
    pub fn set_fine_values(&mut self, values: &[f64]) -> Result<(), CudaError> {
        let dev = self.ops.dev.clone();
        dev.set_phase("fine values upload");
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(RuntimeError::NotFinite {
                what: format!("new fine-operator value {i}"),
            }
            .into());
        }
        let expected = self.levels[0].a.nnzb * self.levels[0].b * self.levels[0].b;
        if values.len() != expected {
            return Err(RuntimeError::ValuesLength {
                got: values.len(),
                expected,
            }
            .into());
        }
        self.levels[0].a.set_values(&dev, values)
    }

    fn status_row(&self) -> Result<Option<usize>, CudaError> {
        let mut v = [0u32];
        self.ops.dev.download_into(&self.status, &mut v)?;
        Ok(gs::failing_row(v[0]))
    }

    fn reset_status(&mut self) -> Result<(), CudaError> {
        self.ops.dev.stream().memset_zeros(&mut self.status)?;
        Ok(())
    }

    /// Matrix setup on the device from the resident level-0 values (phase
    /// `matrix setup`): numeric products, diagonal-block inverses,
    /// eigen-estimates, coarse Cholesky. Returns the elapsed seconds.
    pub fn matrix_setup(&mut self) -> Result<f64, CudaError> {
        let dev = self.ops.dev.clone();
        dev.set_phase("matrix setup");
        let t = Instant::now();
        let nl = self.levels.len();
        for l in 0..nl - 1 {
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            let lev = &mut fine[l];
            let tr = lev.transfer.as_mut().expect("transfer on every level but the coarsest");
            tr.product.numeric(&lev.a, &tr.p, &mut coarse[0].a)?;
        }
        dev.synchronize()?;
        self.timings.galerkin_numeric_s = t.elapsed().as_secs_f64();
        for l in 0..nl - 1 {
            self.refresh_smoother(l)?;
        }
        self.factor_coarse()?;
        dev.synchronize()?;
        let dt = t.elapsed().as_secs_f64();
        self.timings.matrix_setup_s = dt;
        Ok(dt)
    }

    fn refresh_smoother(&mut self, l: usize) -> Result<(), CudaError> {
        self.reset_status()?;
        let lev = &self.levels[l];
        let sm = lev.smoother.as_ref().expect("smoother on every level but the coarsest");
        let nrows = lev.a.nrows;
        self.ops.dev.launch(
            Ops::k(&lev.jacobi, &gs::jacobi_invert_name(lev.b)),
            grid_for(nrows as u64, 128),
            &[
                Arg::F64(&lev.a.values),
                Arg::U32s(&sm.diag_pos),
                Arg::F64Mut(&sm.dinv),
                Arg::U32sMut(&self.status),
                Arg::U32(nrows as u32),
            ],
        )?;
        if let Some(row) = self.status_row()? {
            return Err(RuntimeError::SingularDiagonalBlock {
                level: l,
                row,
                why: "the diagonal block is missing, zero, not finite or has a pivot below 1e-14 of its largest entry"
                    .into(),
            }
            .into());
        }
        let lambda = self.estimate_lambda_max(l).map_err(|e| match e {
            EigError::Device(e) => e,
            EigError::Breakdown(why) => CudaError::Runtime(ptap_amg::AmgError::EigenBreakdown { level: l, why }.into()),
        })?;
        self.levels[l].smoother.as_mut().unwrap().lambda_max = lambda;
        Ok(())
    }

    /// `estimate_lambda_max` on the device: the same CG-Lanczos steps from the
    /// same start vector; the CG scalars come back, the tridiagonal's largest
    /// eigenvalue is found on the host.
    fn estimate_lambda_max(&self, l: usize) -> Result<f64, EigError> {
        let ops = &self.ops;
        let lev = &self.levels[l];
        let w = &self.work[l];
        let sm = lev.smoother.as_ref().unwrap();
        let n = w.n;
        let (r, z, p, ap) = (&w.r, &w.x, &w.rhs, &w.t);
        ops.copy(&sm.eig_rhs, r, n)?;
        ops.jacobi_apply(lev, r, z)?;
        ops.copy(z, p, n)?;
        let mut rz = ops.dot(r, z, n)?;
        if !(rz > 0.0) {
            return Err(EigError::Breakdown(format!(
                "preconditioned residual norm {rz:e} is not positive"
            )));
        }
        let mut alphas = [0.0f64; 64];
        let mut betas = [0.0f64; 64];
        let iterations = self.eig_iterations.clamp(1, 64);
        let mut m = 0;
        for k in 0..iterations {
            ops.spmv(&lev.a_spmv, &lev.a, p, ap)?;
            let pap = ops.dot(p, ap, n)?;
            if !pap.is_finite() {
                return Err(EigError::Breakdown("NaN or infinity in the operator".into()));
            }
            if pap <= 0.0 {
                return Err(EigError::Breakdown(format!("curvature p^T A p = {pap:e} at step {k}")));
            }
            let alpha = rz / pap;
            ops.axpby(-alpha, ap, 1.0, r, n)?;
            ops.jacobi_apply(lev, r, z)?;
            let rz_new = ops.dot(r, z, n)?;
            alphas[k] = alpha;
            m = k + 1;
            if !(rz_new > 1e-300 * rz) {
                break;
            }
            let beta = rz_new / rz;
            betas[k] = beta;
            rz = rz_new;
            ops.axpby(1.0, z, beta, p, n)?;
        }
        Ok(cg_lanczos_lambda_max(&alphas[..m], &betas[..m]))
    }

    /// Dense coarsest operator and its Cholesky factor, on the device.
    fn factor_coarse(&mut self) -> Result<(), CudaError> {
        let dev = self.ops.dev.clone();
        let n = self.coarse_n;
        let l = self.levels.len() - 1;
        dev.memset_zero(&mut self.coarse_a)?;
        self.reset_status()?;
        let lev = &self.levels[l];
        let a = &lev.a;
        let b = lev.b;
        dev.launch(
            Ops::k(&lev.jacobi, &gs::densify_name(b)),
            grid_for((a.nnzb * b * b) as u64, 256),
            &[
                Arg::F64(&a.values),
                Arg::U32s(&a.block_row),
                Arg::U32s(&a.col_idx),
                Arg::F64Mut(&self.coarse_a),
                Arg::U32(a.nnzb as u32),
                Arg::U32(n as u32),
            ],
        )?;
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        dev.launch(
            Ops::k(&self.ops.coarse, gs::CHOL_SCALE),
            one,
            &[
                Arg::F64(&self.coarse_a),
                Arg::F64Mut(&self.coarse_scale),
                Arg::U32(n as u32),
            ],
        )?;
        let col = Ops::k(&self.ops.coarse, gs::CHOL_COLUMN);
        for j in 0..n {
            let rows = n - j;
            let cfg = LaunchConfig {
                grid_dim: (rows.div_ceil(gs::CHOL_WARPS) as u32, 1, 1),
                block_dim: (32 * gs::CHOL_WARPS as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            dev.launch(
                col,
                cfg,
                &[
                    Arg::F64(&self.coarse_a),
                    Arg::F64Mut(&self.coarse_l),
                    Arg::F64Mut(&self.coarse_lt),
                    Arg::F64(&self.coarse_scale),
                    Arg::U32sMut(&self.status),
                    Arg::U32(n as u32),
                    Arg::U32(j as u32),
                ],
            )?;
        }
        if let Some(row) = self.status_row()? {
            return Err(RuntimeError::CoarseFactorization {
                level: l,
                n,
                why: format!("pivot at row {row} is not positive (below 1e-14 of the largest diagonal) or not finite"),
            }
            .into());
        }
        Ok(())
    }

    /// `x = A_coarse^-1 x` by the two triangular solves, on the device.
    fn coarse_solve(&self, x: &CudaSlice<f64>) -> Result<(), CudaError> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (gs::CHOL_SOLVE_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.ops.dev.launch(
            Ops::k(&self.ops.coarse, gs::CHOL_SOLVE),
            cfg,
            &[
                Arg::F64(&self.coarse_l),
                Arg::F64(&self.coarse_lt),
                Arg::F64Mut(x),
                Arg::U32(self.coarse_n as u32),
            ],
        )
    }

    /// Two Chebyshev steps on level `l` (`ChebyshevSmoother::smooth`).
    fn smooth(&self, l: usize, zero_guess: bool) -> Result<(), CudaError> {
        let ops = &self.ops;
        let lev = &self.levels[l];
        let w = &self.work[l];
        let n = w.n;
        let lambda = lev.smoother.as_ref().unwrap().lambda_max;
        let (emin, emax) = (self.bounds.0 * lambda, self.bounds.1 * lambda);
        let s = 2.0 / (emax + emin);
        let a_ = 1.0 - s * emin;
        let mu = 1.0 / a_;
        let c2 = 2.0 * mu * mu - 1.0;
        let om = 2.0 * mu / (a_ * c2);
        ops.fill(&w.t, 0.0, n)?;
        if zero_guess {
            ops.jacobi_update(lev, s, &w.rhs, 0.0, &w.rhs, &w.t)?;
            ops.copy(&w.t, &w.x, n)?;
        } else {
            ops.residual(lev, &w.x, &w.rhs, &w.r)?;
            ops.jacobi_update(lev, s, &w.r, 0.0, &w.r, &w.t)?;
            ops.axpby(1.0, &w.t, 1.0, &w.x, n)?;
        }
        ops.residual(lev, &w.x, &w.rhs, &w.r)?;
        ops.jacobi_update(lev, om * s, &w.r, om - 1.0, &w.t, &w.x)
    }

    /// One V-cycle `z = M^-1 r` on device vectors of the fine level.
    fn vcycle(&self, r: &CudaSlice<f64>, z: &CudaSlice<f64>) -> Result<(), CudaError> {
        let ops = &self.ops;
        let nl = self.levels.len();
        ops.copy(r, &self.work[0].rhs, self.work[0].n)?;
        for l in 0..nl - 1 {
            self.smooth(l, true)?;
            let (lev, w) = (&self.levels[l], &self.work[l]);
            ops.residual(lev, &w.x, &w.rhs, &w.r)?;
            let tr = lev.transfer.as_ref().unwrap();
            ops.spmv(&tr.r_spmv, &tr.r, &w.r, &self.work[l + 1].rhs)?;
        }
        let wc = &self.work[nl - 1];
        ops.copy(&wc.rhs, &wc.x, wc.n)?;
        self.coarse_solve(&wc.x)?;
        for l in (0..nl - 1).rev() {
            let (lev, w) = (&self.levels[l], &self.work[l]);
            let tr = lev.transfer.as_ref().unwrap();
            ops.spmv(&tr.p_spmv, &tr.p, &self.work[l + 1].x, &w.t)?;
            ops.axpby(1.0, &w.t, 1.0, &w.x, w.n)?;
            self.smooth(l, false)?;
        }
        ops.copy(&self.work[0].x, z, self.work[0].n)
    }

    /// CG on the device vectors: `cg_b` the right-hand side, `cg_x` the start
    /// (phase `solve`: only the reductions' scalars cross the bus).
    fn cg(&self, opts: &CgOptions, history: &mut Vec<f64>) -> Result<CgReport, CudaError> {
        let ops = &self.ops;
        ops.dev.set_phase("solve");
        let lev0 = &self.levels[0];
        let n = self.work[0].n;
        let (b, x, r, z, p, ap) = (&self.cg_b, &self.cg_x, &self.cg_r, &self.cg_z, &self.cg_p, &self.cg_ap);
        history.clear();
        ops.residual(lev0, x, b, r)?;
        let bnorm = ops.dot(b, b, n)?.sqrt();
        if !bnorm.is_finite() {
            return Err(RuntimeError::NotFinite {
                what: "right-hand side".into(),
            }
            .into());
        }
        let target = opts.rtol * bnorm;
        let mut rnorm = ops.dot(r, r, n)?.sqrt();
        history.push(if bnorm > 0.0 { rnorm / bnorm } else { 0.0 });
        let report = |iterations, converged, rnorm| CgReport {
            iterations,
            converged,
            residual_norm: rnorm,
            rhs_norm: bnorm,
        };
        if rnorm <= target {
            return Ok(report(0, true, rnorm));
        }
        self.vcycle(r, z)?;
        ops.copy(z, p, n)?;
        let mut rz = ops.dot(r, z, n)?;
        for it in 1..=opts.max_iterations {
            if !(rz > 0.0) {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("r^T M^-1 r = {rz:e}, the preconditioner is not positive definite"),
                }
                .into());
            }
            ops.spmv(&lev0.a_spmv, &lev0.a, p, ap)?;
            let pap = ops.dot(p, ap, n)?;
            if !pap.is_finite() {
                return Err(RuntimeError::NotFinite {
                    what: format!("CG iteration {it}"),
                }
                .into());
            }
            if pap <= 0.0 {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("p^T A p = {pap:e}"),
                }
                .into());
            }
            let alpha = rz / pap;
            ops.axpby(alpha, p, 1.0, x, n)?;
            ops.axpby(-alpha, ap, 1.0, r, n)?;
            rnorm = ops.dot(r, r, n)?.sqrt();
            if history.len() <= opts.max_iterations {
                history.push(rnorm / bnorm);
            }
            if rnorm <= target {
                return Ok(report(it, true, rnorm));
            }
            self.vcycle(r, z)?;
            let rz_new = ops.dot(r, z, n)?;
            let beta = rz_new / rz;
            rz = rz_new;
            ops.axpby(1.0, z, beta, p, n)?;
        }
        Ok(report(opts.max_iterations, false, rnorm))
    }

    /// Solves `A x = b` on the device from the `x` given: `b` and `x` go up
    /// (phase `rhs upload`), CG runs (phase `solve`), `x` comes back (phase
    /// `solution download`).
    pub fn solve(&mut self, b: &[f64], x: &mut [f64], opts: &CgOptions) -> Result<DeviceSolveReport, CudaError> {
        let dev = self.ops.dev.clone();
        let n = self.work[0].n;
        assert_eq!(b.len(), n, "right-hand side has the wrong length");
        assert_eq!(x.len(), n, "solution has the wrong length");
        if b.iter().any(|v| !v.is_finite()) {
            return Err(RuntimeError::NotFinite {
                what: "right-hand side".into(),
            }
            .into());
        }
        dev.set_phase("rhs upload");
        dev.upload_into(b, &mut self.cg_b)?;
        dev.upload_into(x, &mut self.cg_x)?;
        dev.synchronize()?;
        let mut history = Vec::with_capacity(opts.max_iterations + 1);
        let t = Instant::now();
        let cg = self.cg(opts, &mut history)?;
        dev.synchronize()?;
        let solve_s = t.elapsed().as_secs_f64();
        dev.set_phase("solution download");
        dev.download_into(&self.cg_x, x)?;
        Ok(DeviceSolveReport { cg, history, solve_s })
    }

    // Downloads for verification (counted under the phase `verification`).

    /// The diagonal-block inverses of level `l` (row-major blocks).
    pub fn jacobi_inverses(&self, l: usize) -> Result<Vec<f64>, CudaError> {
        self.ops.dev.set_phase("verification");
        let sm = self.levels[l].smoother.as_ref().expect("a smoothed level");
        self.ops.dev.download(&sm.dinv)
    }
    /// The values of level `l`'s operator as computed on the device.
    pub fn operator_values(&self, l: usize) -> Result<Vec<f64>, CudaError> {
        self.ops.dev.set_phase("verification");
        self.levels[l].a.download_values(&self.ops.dev)
    }
    /// The coarse Cholesky factor `L` (row-major `n x n`, lower triangle).
    pub fn coarse_factor(&self) -> Result<Vec<f64>, CudaError> {
        self.ops.dev.set_phase("verification");
        let mut l = self.ops.dev.download(&self.coarse_l)?;
        let n = self.coarse_n;
        l.truncate(n * n);
        Ok(l)
    }
    /// `A_coarse^-1 b` by the device triangular solves.
    pub fn coarse_solve_host(&mut self, b: &[f64]) -> Result<Vec<f64>, CudaError> {
        let dev = self.ops.dev.clone();
        dev.set_phase("verification");
        let n = self.coarse_n;
        assert_eq!(b.len(), n);
        let l = self.work.len() - 1;
        dev.upload_into(b, &mut self.work[l].x)?;
        self.coarse_solve(&self.work[l].x)?;
        let mut out = dev.download(&self.work[l].x)?;
        out.truncate(n);
        Ok(out)
    }
}

enum EigError {
    Device(CudaError),
    Breakdown(String),
}

impl From<CudaError> for EigError {
    fn from(e: CudaError) -> Self {
        EigError::Device(e)
    }
}
