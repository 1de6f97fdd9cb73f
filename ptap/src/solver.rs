//! [`Solver`]: build once (mesh setup, inspection, matrix setup), then refresh
//! values and solve as often as the caller's time loop needs.
use crate::target::{product_options, DeviceChoice, Target};
use crate::Error;
use ptap_amg::nullspace::{near_null_from_coordinates, translations};
use ptap_cuda::{Cuda, DeviceOptions};
use ptap_runtime::bundle::hierarchy_bundle;
use ptap_runtime::hierarchy::SetupTimings;
use ptap_runtime::{CgOptions, CgWorkspace, Cpu, Hierarchy, HierarchyOptions, KernelRegistry, LevelSummary, MeshSetup};
use ptap_schedules::file::{MappedBundle, ScheduleBundle};
use ptap_sparse::{BlockCsr, BlockPattern};
use serde::Serialize;
use std::sync::Arc;

/// The near-null space of the operator: what AMG's coarse spaces must
/// represent exactly. For elasticity, the rigid-body modes.
#[derive(Clone, Debug)]
pub enum NearNull {
    /// Given columns: `values` row-major `scalar_rows x modes`.
    Modes { values: Vec<f64>, modes: usize },
    /// Nodal coordinates, row-major `nodes x dim` (`dim` 2 or 3), one node per
    /// block row: rigid-body modes (3 in 2D, 6 in 3D) when the block size is
    /// `dim`, the constant when it is 1.
    Coordinates { coords: Vec<f64>, dim: usize },
    /// The block size's translations (the constant for a scalar operator).
    Translations,
}

/// Everything a solver's build can be told; [`Default`] is what `ptap solve` uses.
#[derive(Clone, Debug)]
pub struct SolverOptions {
    /// The mesh setup's and smoother's options (aggregation, strength,
    /// prolongator filter, coarse limit, kernels by block shape).
    pub hierarchy: HierarchyOptions,
    /// CG's relative tolerance and iteration cap.
    pub cg: CgOptions,
    /// Galerkin-product variant on every level: `None` = the device's default
    /// (two-pass on the CPU, tensor pair on a GPU), `"auto"` = the traffic
    /// model's pick per level for this machine (measured), or a variant name.
    pub variant: Option<String>,
    pub device: DeviceChoice,
    /// On a GPU, let NVRTC contract `a * b + c` into FMA (fastest); `false`
    /// keeps the order-preserving products bitwise equal to the CPU's.
    pub fmad: bool,
    /// Refuse operators that are not symmetric to `symmetry_tolerance`
    /// (relative to the largest entry); CG needs SPD.
    pub check_symmetry: bool,
    pub symmetry_tolerance: f64,
}

impl Default for SolverOptions {
    fn default() -> Self {
        Self {
            hierarchy: HierarchyOptions::default(),
            cg: CgOptions {
                rtol: 1e-8,
                max_iterations: 500,
            },
            variant: None,
            device: DeviceChoice::Cpu,
            fmad: true,
            check_symmetry: true,
            symmetry_tolerance: 1e-10,
        }
    }
}

/// Builds a [`Solver`]: `Solver::builder(a).near_null(..).device(..).build()`.
pub struct SolverBuilder {
    a: BlockCsr,
    near_null: NearNull,
    options: SolverOptions,
    target: Option<Target>,
}

impl SolverBuilder {
    pub fn near_null(mut self, near_null: NearNull) -> Self {
        self.near_null = near_null;
        self
    }
    pub fn device(mut self, device: DeviceChoice) -> Self {
        self.options.device = device;
        self
    }
    /// An already opened target (overrides [`SolverBuilder::device`]).
    pub fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }
    pub fn options(mut self, options: SolverOptions) -> Self {
        self.options = options;
        self
    }
    /// Prolongator filter threshold on level 0 (the paper's `pf`: 0.03 in its
    /// runs; ptap's default is [`ptap_amg::DEFAULT_PF`]; scaled by `pf_scale`
    /// per level). 0 keeps every block.
    pub fn pf(mut self, pf: f64) -> Self {
        self.options.hierarchy.amg.pf = pf;
        self
    }
    pub fn variant(mut self, variant: &str) -> Self {
        self.options.variant = Some(variant.to_string());
        self
    }
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.options.cg.rtol = rtol;
        self
    }
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.options.cg.max_iterations = n;
        self
    }
    /// The generated kernels by block shape: the shipped sets plus a user's
    /// (`KernelRegistry::shipped().clone().with::<my::Set>()`).
    pub fn kernels(mut self, kernels: KernelRegistry) -> Self {
        self.options.hierarchy.kernels = kernels;
        self
    }

    pub fn build(self) -> Result<Solver, Error> {
        self.build_with_progress(&mut |_| {})
    }

    /// Builds the hierarchy; `progress` receives one line per setup step.
    pub fn build_with_progress(self, progress: &mut dyn FnMut(&str)) -> Result<Solver, Error> {
        let (a, p) = self.prepare(progress)?;
        let setup = MeshSetup::build(a, &p.near_null, p.modes, &p.hopts, progress)?;
        p.finish(setup, progress)
    }

    /// Builds the solver from a schedule bundle written by [`Solver::bundle`]
    /// for an operator of this pattern under the same options: every level's
    /// `P` and product schedule are loaded (checked against the operator's
    /// pattern fingerprint and the options), nothing is aggregated, smoothed
    /// or inspected; only the matrix setup runs. The result is bitwise the
    /// solver [`SolverBuilder::build`] makes. The bundle does not record the
    /// near-null space's values, only its mode count: a cache must key its
    /// entries by the near-null space too.
    pub fn build_from_bundle(
        self,
        bundle: &Arc<MappedBundle>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Solver, Error> {
        let (a, p) = self.prepare(progress)?;
        let setup = MeshSetup::from_bundle(a, p.modes, bundle, &p.hopts, progress)?;
        p.finish(setup, progress)
    }

    /// Checks the operator and options, computes the near-null space and
    /// opens the target: everything before the mesh setup.
    fn prepare(self, progress: &mut dyn FnMut(&str)) -> Result<(BlockCsr, Prepared), Error> {
        let SolverBuilder {
            a,
            near_null,
            options,
            target,
        } = self;
        options.cg.validate()?;
        let (b, bc) = a.block_shape();
        if b != bc || a.nrows() != a.ncols() {
            return Err(Error::input(format!(
                "the operator is {}x{} with {b}x{bc} blocks; AMG needs a square matrix with square blocks (give the block size, e.g. --block-size)",
                a.scalar_rows(),
                a.scalar_cols()
            )));
        }
        if a.nrows() == 0 {
            return Err(Error::input("the operator has no rows"));
        }
        a.check_finite("the operator")?;
        if options.check_symmetry {
            check_symmetric(&a, options.symmetry_tolerance)?;
        }
        let (values, modes) = near_null_values(&a, near_null)?;
        let kernels = &options.hierarchy.kernels;
        let (target, note) = match target {
            Some(t @ Target::Cuda(_)) => match device_kernels_missing(kernels, b, modes) {
                Some(e) => return Err(e),
                None => (t, None),
            },
            Some(t) => (t, None),
            None => match (options.device, device_kernels_missing(kernels, b, modes)) {
                (DeviceChoice::Cuda, Some(e)) => return Err(e),
                (DeviceChoice::Auto, Some(e)) => (Target::Cpu, Some(e.to_string())),
                (choice, _) => Target::open(
                    choice,
                    DeviceOptions {
                        fmad: options.fmad,
                        ..Default::default()
                    },
                )?,
            },
        };
        if let Some(why) = &note {
            progress(&format!("no usable GPU ({why}); solving on the CPU"));
        }
        let mut hopts = options.hierarchy.clone();
        product_options(&mut hopts, &target, options.variant.as_deref())?;
        let prepared = Prepared {
            pattern: a.pattern_arc().clone(),
            block: b,
            values_len: a.values().len(),
            near_null: values,
            modes,
            hopts,
            cg: options.cg,
            target,
            note,
        };
        Ok((a, prepared))
    }
}

/// What [`SolverBuilder::prepare`] hands to the mesh setup and [`Prepared::finish`].
struct Prepared {
    pattern: Arc<BlockPattern>,
    block: usize,
    values_len: usize,
    near_null: Vec<f64>,
    modes: usize,
    hopts: HierarchyOptions,
    cg: CgOptions,
    target: Target,
    note: Option<String>,
}

impl Prepared {
    /// The hierarchy on the target from a mesh setup: the matrix setup, and
    /// the solver around it.
    fn finish(self, setup: MeshSetup, progress: &mut dyn FnMut(&str)) -> Result<Solver, Error> {
        let Prepared {
            pattern,
            block: b,
            values_len,
            hopts,
            cg,
            target,
            note,
            ..
        } = self;
        let n = pattern.nrows() * b;
        let max_it = cg.max_iterations;
        let inner = match &target {
            Target::Cpu => {
                let h = Hierarchy::new(Cpu::new(hopts.kernels.clone()), setup, progress)?;
                let ws = h.workspace(max_it)?;
                Inner::Cpu(Box::new(h), Box::new(ws))
            }
            Target::Cuda(dev) => {
                let h = Hierarchy::new(Cuda::new(dev)?, setup, progress)?;
                let ws = h.workspace(max_it)?;
                Inner::Cuda(Box::new(h), Box::new(ws))
            }
        };
        Ok(Solver {
            inner,
            pattern,
            block: b,
            n,
            values_len,
            cg,
            device: target.name(),
            cpu_fallback: note,
        })
    }
}

/// The error a GPU run of `b x b` blocks with `modes` near-null modes meets
/// when no registered kernel set has its device kernels (checked before any
/// device is opened, so it is said even where there is no GPU).
fn device_kernels_missing(kernels: &KernelRegistry, b: usize, modes: usize) -> Option<Error> {
    if kernels.cuda_for_product(b, modes).is_some() {
        return None;
    }
    Some(Error::DeviceKernels { block: b, modes })
}

/// The near-null space's values and mode count for `a`.
fn near_null_values(a: &BlockCsr, near_null: NearNull) -> Result<(Vec<f64>, usize), Error> {
    let (n, b, nodes) = (a.scalar_rows(), a.block_shape().0, a.nrows());
    match near_null {
        NearNull::Modes { values, modes } => {
            if modes == 0 || values.len() != n * modes {
                return Err(Error::input(format!(
                    "the near-null space has {} values, not {n} rows (the operator's scalar rows) x {modes} modes",
                    values.len()
                )));
            }
            if modes > 64 {
                return Err(Error::input(format!(
                    "the near-null space has {modes} modes; more than 64 makes the coarse blocks too large to be useful"
                )));
            }
            if values.iter().any(|v| !v.is_finite()) {
                return Err(Error::input("the near-null space contains NaN or infinity"));
            }
            Ok((values, modes))
        }
        NearNull::Coordinates { coords, dim } => {
            if dim == 0 || coords.len() != nodes * dim {
                return Err(Error::input(format!(
                    "the coordinates give {} nodes in {dim}D but the operator has {nodes} block rows ({b}x{b} blocks); give one node per block row, in the operator's order",
                    coords.len() / dim.max(1)
                )));
            }
            Ok(near_null_from_coordinates(&coords, dim, b)?)
        }
        NearNull::Translations => Ok((translations(nodes, b), b)),
    }
}

/// Refuses an operator that is not symmetric: for every stored block `(i, j)`
/// the block `(j, i)` must be stored and equal to its transpose within
/// `tol * max|a|` (CG and the Chebyshev smoother need SPD).
fn check_symmetric(a: &BlockCsr, tol: f64) -> Result<(), Error> {
    let (p, b) = (a.pattern(), a.block_shape().0);
    let scale = a.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (rp, ci) = (p.row_ptr(), p.col_idx());
    for i in 0..p.nrows() {
        for k in rp[i]..rp[i + 1] {
            let j = ci[k] as usize;
            if j < i {
                continue;
            }
            let row_j = &ci[rp[j]..rp[j + 1]];
            let Ok(pos) = row_j.binary_search(&(i as u32)) else {
                return Err(Error::input(format!(
                    "the operator is not symmetric: block ({i}, {j}) is stored but block ({j}, {i}) is not; CG needs a symmetric positive definite operator"
                )));
            };
            let (x, y) = (a.block(k), a.block(rp[j] + pos));
            for r in 0..b {
                for c in 0..b {
                    let (u, v) = (x[r * b + c], y[c * b + r]);
                    if (u - v).abs() > tol * scale {
                        return Err(Error::input(format!(
                            "the operator is not symmetric: entry ({}, {}) is {u:e} but ({}, {}) is {v:e}; CG needs a symmetric positive definite operator",
                            i * b + r,
                            j * b + c,
                            j * b + c,
                            i * b + r
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

enum Inner {
    Cpu(Box<Hierarchy<Cpu>>, Box<CgWorkspace<Cpu>>),
    Cuda(Box<Hierarchy<Cuda>>, Box<CgWorkspace<Cuda>>),
}

/// One solve's outcome. A CG that did not converge is reported
/// (`converged: false`), not an error.
#[derive(Clone, Debug, Serialize)]
pub struct SolveInfo {
    pub iterations: usize,
    pub converged: bool,
    /// `||b - A x|| / ||b||` as CG tracked it.
    pub relative_residual: f64,
    pub solve_s: f64,
    /// Relative residual per iteration, starting with the initial one.
    pub residual_history: Vec<f64>,
}

/// What the solver built (`--json`'s `hierarchy`).
#[derive(Clone, Debug, Serialize)]
pub struct HierarchyInfo {
    pub device: String,
    pub scalar_rows: usize,
    pub block_size: usize,
    pub modes: usize,
    pub levels: Vec<LevelSummary>,
    pub operator_complexity: f64,
    pub variants: Vec<&'static str>,
    pub timings: SetupTimings,
}

/// An AMG-preconditioned CG solver for one block pattern.
pub struct Solver {
    inner: Inner,
    pattern: Arc<BlockPattern>,
    block: usize,
    n: usize,
    values_len: usize,
    cg: CgOptions,
    device: String,
    cpu_fallback: Option<String>,
}

/// Runs `$body` with `$h` (the hierarchy) and `$ws` (the workspace) of whichever backend.
macro_rules! on_backend {
    ($self:expr, $h:ident, $ws:ident => $body:expr) => {
        match &mut $self.inner {
            Inner::Cpu($h, $ws) => $body,
            Inner::Cuda($h, $ws) => $body,
        }
    };
}

impl Solver {
    /// A builder for the operator `a` (square, square blocks; the near-null
    /// space defaults to the block size's translations).
    pub fn builder(a: BlockCsr) -> SolverBuilder {
        SolverBuilder {
            a,
            near_null: NearNull::Translations,
            options: SolverOptions::default(),
            target: None,
        }
    }

    /// New values for the operator (same block pattern, blocks in pattern
    /// order, as `BlockCsr::values`): the numeric Galerkin products, smoothers
    /// and coarse factor are recomputed; nothing is inspected or allocated.
    /// Returns the matrix setup's seconds.
    pub fn refresh(&mut self, values: &[f64]) -> Result<f64, Error> {
        if values.len() != self.values_len {
            return Err(ptap_runtime::RuntimeError::ValuesLength {
                got: values.len(),
                expected: self.values_len,
            }
            .into());
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ptap_runtime::RuntimeError::NotFinite {
                what: "the new operator values".into(),
            }
            .into());
        }
        Ok(on_backend!(self, h, _ws => h.refresh(values)?))
    }

    /// [`Solver::refresh`] from a whole matrix, whose block pattern must be the
    /// one the solver was built for (a different pattern is an error, never
    /// silently used).
    pub fn refresh_matrix(&mut self, a: &BlockCsr) -> Result<f64, Error> {
        if let Some(detail) = self.pattern_difference(a) {
            return Err(Error::PatternChanged { detail });
        }
        self.refresh(a.values())
    }

    /// Why `a` cannot refresh this solver (`None`: it can).
    pub fn pattern_difference(&self, a: &BlockCsr) -> Option<String> {
        let (b, bc) = a.block_shape();
        if (b, bc) != (self.block, self.block) {
            return Some(format!("{b}x{bc} blocks instead of {0}x{0}", self.block));
        }
        let p = a.pattern();
        if p.nrows() != self.pattern.nrows() || p.ncols() != self.pattern.ncols() {
            return Some(format!(
                "{}x{} block rows and columns instead of {}x{}",
                p.nrows(),
                p.ncols(),
                self.pattern.nrows(),
                self.pattern.ncols()
            ));
        }
        if Arc::ptr_eq(a.pattern_arc(), &self.pattern) || *p == *self.pattern {
            return None;
        }
        if p.nnzb() != self.pattern.nnzb() {
            return Some(format!("{} stored blocks instead of {}", p.nnzb(), self.pattern.nnzb()));
        }
        let row = (0..p.nrows()).find(|&i| p.row(i) != self.pattern.row(i)).unwrap_or(0);
        Some(format!("block row {row} has other columns"))
    }

    /// Solves `A x = b` by AMG-preconditioned CG from the `x` given.
    pub fn solve(&mut self, b: &[f64], x: &mut [f64]) -> Result<SolveInfo, Error> {
        let cg = self.cg;
        on_backend!(self, h, ws => {
            let rep = h.solve(b, x, &cg, ws)?;
            let rhs = rep.rhs_norm;
            let scale = if rhs > 0.0 { 1.0 / rhs } else { 1.0 };
            Ok(SolveInfo {
                iterations: rep.iterations,
                converged: rep.converged,
                relative_residual: rep.residual_norm * scale,
                solve_s: rep.solve_s,
                residual_history: ws.history().to_vec(),
            })
        })
    }

    /// Solves `A x = b` from zero and returns `x`.
    pub fn solve_new(&mut self, b: &[f64]) -> Result<(Vec<f64>, SolveInfo), Error> {
        let mut x = vec![0.0; self.n];
        let info = self.solve(b, &mut x)?;
        Ok((x, info))
    }

    /// The fine operator's scalar rows.
    pub fn scalar_rows(&self) -> usize {
        self.n
    }

    /// Where it runs: `cpu` or the GPU's name.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// When `DeviceChoice::Auto` fell back to the CPU: why.
    pub fn cpu_fallback(&self) -> Option<&str> {
        self.cpu_fallback.as_deref()
    }

    /// The hierarchy: levels, products, variants, setup times.
    pub fn info(&self) -> HierarchyInfo {
        let device = self.device.clone();
        let (n, block) = (self.n, self.block);
        let make = |levels: Vec<LevelSummary>, oc: f64, modes: usize, variants: Vec<&'static str>, t: SetupTimings| {
            HierarchyInfo {
                device,
                scalar_rows: n,
                block_size: block,
                modes,
                levels,
                operator_complexity: oc,
                variants,
                timings: t,
            }
        };
        match &self.inner {
            Inner::Cpu(h, _) => make(
                h.summary(),
                h.operator_complexity(),
                h.modes(),
                h.level_variants().iter().map(|v| v.name()).collect(),
                h.timings.clone(),
            ),
            Inner::Cuda(h, _) => make(
                h.summary(),
                h.operator_complexity(),
                h.modes(),
                h.level_variants().iter().map(|v| v.name()).collect(),
                h.timings.clone(),
            ),
        }
    }

    /// The hierarchy's schedule bundle: every level's prolongator and product
    /// schedule with the options hash, what [`SolverBuilder::build_from_bundle`]
    /// loads (write it with `ptap_schedules::file::write_bundle`). `problem`
    /// is free text for humans.
    pub fn bundle(&self, problem: &str) -> ScheduleBundle {
        match &self.inner {
            Inner::Cpu(h, _) => hierarchy_bundle(h.as_ref(), problem),
            Inner::Cuda(h, _) => hierarchy_bundle(h.as_ref(), problem),
        }
    }

    /// The CPU hierarchy, when the solver runs on the CPU.
    pub fn cpu_hierarchy(&self) -> Option<&Hierarchy<Cpu>> {
        match &self.inner {
            Inner::Cpu(h, _) => Some(h),
            Inner::Cuda(..) => None,
        }
    }

    /// The device hierarchy, when the solver runs on a GPU.
    pub fn cuda_hierarchy_mut(&mut self) -> Option<&mut Hierarchy<Cuda>> {
        match &mut self.inner {
            Inner::Cuda(h, _) => Some(h),
            Inner::Cpu(..) => None,
        }
    }
}
