//! The smoothed-aggregation hierarchy, in two steps (AMGCL's `amg` over a
//! backend):
//!
//! 1. **Mesh setup** ([`MeshSetup::build`], or [`MeshSetup::from_bundle`] from
//!    a schedule file) runs on the host once per sparsity pattern: strength
//!    graphs, aggregation, `P` (tentative, smoothed, filtered), the inspector
//!    (one [`ptap_schedules`] schedule per level product). Its result is
//!    backend-neutral: host matrices and schedules. Aggregating level `l + 1`
//!    needs `A_{l+1}`'s values, so mesh setup computes those coarse operators
//!    (two-pass product); it never computes the coarsest one, and nothing
//!    else of the matrix setup.
//! 2. **A hierarchy on a backend** ([`Hierarchy::new`]) copies each level's
//!    matrices to the backend once and runs the **matrix setup** there, and
//!    only there: numeric Galerkin products, point-block Jacobi inverses and
//!    eigen-estimates, the coarse factorization. [`Hierarchy::refresh`] redoes
//!    the matrix setup for new fine-operator values (AMGCL's `rebuild`);
//!    aggregates and `P` are frozen.
use crate::backend::Backend;
use crate::cpu::Cpu;
use crate::cycle::{
    cheb_slot, chebyshev_coefficients, finish_lambda_max, lanczos_scalars, queue_lambda_max, EigenError, EIG_SEED,
};
use crate::registry::KernelRegistry;
use crate::variants::GalerkinProduct;
use crate::RuntimeError;
use ptap_amg::eig::pseudo_random_vector;
use ptap_amg::prolongator::smoothing_omega;
use ptap_amg::{merge_rank_deficient, strength_graph, tentative_prolongator, AmgError, AmgOptions};
use ptap_schedules::model::MachineParams;
use ptap_schedules::{
    inspect_with_base, BlockShape, ProductPolicy, ProductStats, TwoPassSchedule, Variant, VariantSchedule,
};
use ptap_sparse::{BlockCsr, BlockPattern};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// The precision of the values the V-cycle's smoothers and residuals apply
/// (`--smoother-precision`). CG's own `A p`, the Galerkin products, the
/// point-block Jacobi inverses and the eigen-estimates always use the `f64`
/// values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SmootherPrecision {
    /// The operators' own `f64` values.
    #[default]
    F64,
    /// A copy of each smoothed level's values rounded to `f32` (one pass per
    /// matrix setup, into storage allocated once), widened to `f64` where
    /// used: vectors and sums stay `f64`. On a device it halves the value
    /// bytes of 4 of the 5 fine-operator applications per CG iteration.
    F32,
}

impl SmootherPrecision {
    pub const ALL: [SmootherPrecision; 2] = [SmootherPrecision::F64, SmootherPrecision::F32];

    /// The name `--smoother-precision` takes and reports print.
    pub fn name(self) -> &'static str {
        match self {
            SmootherPrecision::F64 => "f64",
            SmootherPrecision::F32 => "f32",
        }
    }
}

impl std::fmt::Display for SmootherPrecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SmootherPrecision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SmootherPrecision::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown smoother precision '{s}' (one of: f64, f32)"))
    }
}

/// How a matrix setup orders the work after each product: each smoothed
/// level's Jacobi inverse, `f32` copy and eigen-estimate, and the coarse
/// factorization, read only their own level's operator. On the H200 at
/// k = 16 the three orders on lanes took 13.1-13.3 ms against the serial
/// 14.6 ms: level 0's estimate is bound by the bandwidth of its SpMVs, and
/// beside the products it slows them about as much as it gains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetupBeside {
    /// One after the other after the products, each timed on its own.
    Serial,
    /// On lanes, concurrently with each other, after the products.
    #[default]
    AfterProducts,
    /// On lanes: level 0's after the fine product (beside the coarser
    /// products), every other as soon as its operator is queued.
    AfterFineProduct,
    /// On lanes, each as soon as its operator is queued: level 0's beside
    /// the products.
    WithProducts,
}

/// Options of the whole hierarchy: the mesh setup's plus the smoother's.
#[derive(Clone, Debug)]
pub struct HierarchyOptions {
    pub amg: AmgOptions,
    /// Chebyshev interval as fractions of `lambda_max(D_block^-1 A)`.
    pub chebyshev_bounds: (f64, f64),
    /// Values the smoothers and the V-cycle's residuals apply.
    pub smoother_precision: SmootherPrecision,
    /// Largest coarsest level the dense direct solve accepts (scalar rows).
    pub max_coarse_rows: usize,
    /// Galerkin-product variant of every level; `None` picks per level from the
    /// traffic model on `machine` among `candidates`.
    pub variant: Option<Variant>,
    /// Machine the model predicts for when `variant` is `None`: `None`
    /// measures this host (`MachineParams::measure_cpu`, once per process); a
    /// device backend gives its own measured machine.
    pub machine: Option<MachineParams>,
    /// Variants the model may pick (the ones the target backend runs).
    pub candidates: Vec<Variant>,
    /// Where a matrix setup queues each smoothed level's Jacobi inverse and
    /// eigen-estimate, and the coarse factorization, on a backend with lanes
    /// ([`Backend::lanes`]) and recordings on.
    pub setup_beside: SetupBeside,
    /// Generated kernels the products and smoothers use, by block shape: the
    /// shipped sets, plus any a user declares with `ptap_kernels::kernels!` and
    /// registers (`KernelRegistry::shipped().clone().with::<my::Set>()`).
    pub kernels: KernelRegistry,
    /// Let a backend apply every level's operator from its upper triangle
    /// ([`Backend::symmetric_operator`]; the CUDA backend reads each block
    /// above the diagonal twice, the second time from its L2, and none below
    /// it). The operators are symmetric (CG needs them so; the products'
    /// are bit for bit); a fine operator symmetric only to rounding is
    /// applied as its upper triangle's. Off by default until it is measured
    /// on a GPU; `PTAP_SPMV_MIRROR=1` (or `0`) in the environment turns it
    /// on (or off) whatever this says.
    pub mirror_spmv: bool,
}

impl HierarchyOptions {
    /// Whether the operators are applied through their upper triangles:
    /// [`Self::mirror_spmv`], unless `PTAP_SPMV_MIRROR` is `1` or `0`.
    pub fn mirror_spmv_in_effect(&self) -> bool {
        match std::env::var("PTAP_SPMV_MIRROR").as_deref() {
            Ok("1") => true,
            Ok("0") => false,
            _ => self.mirror_spmv,
        }
    }

    /// How every level's product schedule is chosen: the fixed variant, or
    /// the traffic model of the machine among the candidates.
    pub fn product_policy(&self) -> ProductPolicy {
        match self.variant {
            Some(v) => ProductPolicy::Fixed(v),
            None => {
                let machine = self.machine.clone().unwrap_or_else(MachineParams::measure_cpu);
                ProductPolicy::model(machine, &self.candidates)
            }
        }
    }
}

impl Default for HierarchyOptions {
    fn default() -> Self {
        Self {
            amg: AmgOptions::default(),
            chebyshev_bounds: (0.1, 1.1),
            smoother_precision: SmootherPrecision::F64,
            max_coarse_rows: 8000,
            variant: Some(Variant::TwoPass),
            machine: None,
            candidates: Variant::ALL.to_vec(),
            setup_beside: SetupBeside::default(),
            kernels: KernelRegistry::shipped().clone(),
            mirror_spmv: false,
        }
    }
}

/// Where one level's mesh setup spent its (host wall) time.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MeshLevelTimings {
    pub level: usize,
    /// The two-pass product that gave this level's operator the values its
    /// aggregation reads (0 on level 0, and when loaded from a bundle).
    pub coarse_product_s: f64,
    pub strength_s: f64,
    /// MIS aggregation.
    pub aggregation_s: f64,
    /// The merge of rank-deficient aggregates into their neighbours.
    pub merge_s: f64,
    pub tentative_s: f64,
    /// The eigen-estimate behind the smoothing weight `omega` (it runs beside
    /// strength graph, aggregation, merge and tentative `P`).
    pub omega_s: f64,
    /// Smoothing `P0`; with `pf > 0`, filtering too (one pass over the rows).
    pub smoothing_s: f64,
    /// Filtering when timed apart (0 where it is part of `smoothing_s`).
    pub filtering_s: f64,
    /// The symbolic products (patterns of `W`, `R`, `A_c`: the two-pass schedule).
    pub symbolic_s: f64,
    /// The chosen variant's schedule from the symbolic products (it runs
    /// beside the levels below; see [`SetupTimings::inspection_wait_s`]).
    pub inspection_s: f64,
    /// From a schedule bundle: this level's `P` and schedule loaded and checked.
    pub load_s: f64,
}

/// Where the one copy of a mesh setup to the backend spent its time.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct UploadTimings {
    /// Every level's operator: pattern, values where known, SpMV plan.
    pub operators_s: f64,
    /// `R = P^T` formed (on the host, or on the backend from `P`).
    pub transpose_s: f64,
    /// `P` and `R` copied to the backend.
    pub prolongators_s: f64,
    /// Product schedules copied (the backend's product plans).
    pub products_s: f64,
    /// Smoother state (Jacobi storage, eigen-estimate start vectors) and the
    /// coarse solver's buffers.
    pub smoothers_s: f64,
    /// The cycle's per-level vectors.
    pub work_s: f64,
    /// Products taken over from mesh setup with their buffers
    /// ([`Backend::adopt_product`]) instead of built here.
    pub products_adopted: usize,
}

/// One matrix setup phase by phase, each phase ended by one synchronize
/// (the products' time is also [`SetupTimings::galerkin_numeric_s`]).
/// With the smoothers and the coarse factorization on lanes
/// ([`HierarchyOptions::setup_beside`]), `products_s` is until the products
/// end, `beside_s` the wait after them for the rest, and the per-level and
/// coarse times only the checks and reads that follow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MatrixSetupTimings {
    /// The numeric Galerkin products of every level.
    pub products_s: f64,
    /// Per smoothed level, its Jacobi inverse and eigen-estimate.
    pub levels: Vec<SmootherTimings>,
    /// The coarsest operator's factorization.
    pub coarse_factor_s: f64,
    /// From the products' end until the work beside them has ended (0 when
    /// nothing ran beside them).
    pub beside_s: f64,
}

impl MatrixSetupTimings {
    /// Every level's Jacobi inverses.
    pub fn jacobi_s(&self) -> f64 {
        self.levels.iter().map(|l| l.jacobi_s).sum()
    }
    /// Every level's eigen-estimates.
    pub fn eigen_s(&self) -> f64 {
        self.levels.iter().map(|l| l.eigen_s).sum()
    }
}

/// One smoothed level's share of a matrix setup.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SmootherTimings {
    pub level: usize,
    /// Diagonal-block inverses (and their check).
    pub jacobi_s: f64,
    /// CG-Lanczos eigen-estimate and the Chebyshev coefficients.
    pub eigen_s: f64,
}

/// Wall time of the setup phases (the paper's four-phase split), with mesh
/// setup broken down per level and step and the upload per kind of data.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SetupTimings {
    /// Strength graphs, aggregation, `P0`, smoothing, symbolic products (and,
    /// for a backend that cannot adopt host values, the coarse operators the
    /// aggregation needed).
    pub mesh_setup_s: f64,
    /// Copying the mesh setup's matrices and schedules to the backend (once).
    pub upload_s: f64,
    /// Numeric products, smoother inverses and eigen-estimates, coarse factorization.
    pub matrix_setup_s: f64,
    /// Of which the numeric Galerkin products.
    pub galerkin_numeric_s: f64,
    /// The last matrix setup phase by phase.
    pub matrix: MatrixSetupTimings,
    /// Mesh setup per level, step by step (the coarse products aggregation
    /// needed included, wherever they are counted).
    pub mesh_levels: Vec<MeshLevelTimings>,
    /// `upload_s` by kind of data.
    pub upload: UploadTimings,
    /// Of `mesh_setup_s`, the wait at its end for the variant inspections,
    /// which run beside the levels below theirs (so `mesh_levels[].inspection_s`
    /// and `omega_s`, which runs beside the aggregation, overlap other phases).
    pub inspection_wait_s: f64,
}

/// The two-pass executor mesh setup ran to compute a coarse operator the
/// aggregation needed, kept so that a host backend whose product for the
/// level is two-pass takes it over ([`Backend::adopt_product`]) instead of
/// allocating its buffers again and faulting their pages in at the first
/// refresh. Mesh setup keeps it only where the level's chosen variant is
/// two-pass (a device's default is not). Optional state: a clone holds none,
/// and a hierarchy built without it allocates its own.
/// (A mutex only so that a mesh setup stays `Sync`: it is reached through
/// `&mut` alone and never locked.)
#[derive(Default)]
pub struct WarmProduct(std::sync::Mutex<Option<Box<dyn GalerkinProduct>>>);

impl WarmProduct {
    fn new(p: Box<dyn GalerkinProduct>) -> Self {
        Self(std::sync::Mutex::new(Some(p)))
    }

    /// The executor, leaving none.
    pub fn take(&mut self) -> Option<Box<dyn GalerkinProduct>> {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Clone for WarmProduct {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for WarmProduct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.try_lock().as_deref() {
            Ok(Some(p)) => write!(f, "WarmProduct({})", p.variant().name()),
            Ok(None) => f.write_str("WarmProduct(none)"),
            Err(_) => f.write_str("WarmProduct(..)"),
        }
    }
}

/// The transfer from one level to the next, as mesh setup built it.
#[derive(Clone, Debug)]
pub struct TransferSetup {
    /// Smoothed (and filtered) prolongator, `b_f x b_c` blocks.
    pub p: BlockCsr,
    /// The patterns and statistics every variant shares.
    pub schedule: Arc<TwoPassSchedule>,
    /// The chosen variant's schedule (what a schedule bundle stores).
    pub variant_schedule: VariantSchedule,
    pub aggregates: usize,
    pub merged_aggregates: usize,
    pub unaggregated_nodes: usize,
    pub omega: f64,
    /// The executor that computed the next level's values during mesh setup, if any.
    pub warm: WarmProduct,
}

/// One level of a mesh setup.
#[derive(Clone, Debug)]
pub struct MeshLevel {
    /// The level's operator; its values are current only where `has_values`.
    pub a: BlockCsr,
    /// Level 0, and the coarse levels the aggregation needed.
    pub has_values: bool,
    pub transfer: Option<TransferSetup>,
}

/// The backend-neutral result of mesh setup: every level's pattern, `P` and
/// product schedule. [`Hierarchy::new`] puts it on a backend.
#[derive(Clone, Debug)]
pub struct MeshSetup {
    pub levels: Vec<MeshLevel>,
    pub options: HierarchyOptions,
    /// Near-null modes (columns of `B`), the coarse block size.
    pub modes: usize,
    /// `mesh_setup_s`, and in `galerkin_numeric_s` the coarse operators computed for aggregation.
    pub timings: SetupTimings,
}

impl MeshSetup {
    /// Cold mesh setup from the fine operator and its near-null space
    /// (row-major `scalar_rows x modes`). `progress` receives one line per step.
    pub fn build(
        a0: BlockCsr,
        near_null: &[f64],
        modes: usize,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        let opts = &options.amg;
        let (b0, bc0) = a0.block_shape();
        if b0 != bc0 {
            return Err(AmgError::NonSquareBlocks {
                level: 0,
                br: b0,
                bc: bc0,
            }
            .into());
        }
        if near_null.len() != a0.scalar_rows() * modes {
            return Err(AmgError::NearNullRows {
                level: 0,
                got: near_null.len() / modes.max(1),
                want: a0.scalar_rows(),
            }
            .into());
        }
        a0.check_finite("the fine operator")
            .map_err(|e| RuntimeError::NotFinite { what: e.to_string() })?;
        let mut timings = SetupTimings::default();
        let mut levels = vec![MeshLevel {
            a: a0,
            has_values: true,
            transfer: None,
        }];
        let policy = options.product_policy();
        let mut near_null = near_null.to_vec();
        // Each level's variant inspection runs beside the levels below it: it
        // reads only that level's two-pass patterns, so it gives the same
        // schedule whenever it runs. Results come back by level.
        type InspectedLevel = (usize, Result<VariantSchedule, ptap_schedules::ScheduleError>, f64);
        let (tx, rx) = std::sync::mpsc::channel::<InspectedLevel>();
        let policy = &policy;
        let built: Result<Instant, RuntimeError> = rayon::in_place_scope(|scope| {
            loop {
                let l = levels.len() - 1;
                {
                    let a = &levels[l].a;
                    if a.scalar_rows() <= opts.coarse_eq_limit || levels.len() >= opts.max_levels {
                        break;
                    }
                }
                let mut lt = MeshLevelTimings {
                    level: l,
                    ..MeshLevelTimings::default()
                };
                if !levels[l].has_values {
                    // Aggregation reads values: compute this coarse operator (V0).
                    progress(&format!("level {}: numeric P^T A P", l - 1));
                    let t = Instant::now();
                    let (fine, coarse) = levels.split_at_mut(l);
                    let prev = &mut fine[l - 1];
                    let tr = prev.transfer.as_mut().expect("a coarse level has a transfer above it");
                    let (bf, bc) = tr.p.block_shape();
                    let mut v0 =
                        options
                            .kernels
                            .executor_for(&VariantSchedule::TwoPass(tr.schedule.clone()), bf, bc)?;
                    v0.numeric(&prev.a, &tr.p, &mut coarse[0].a)?;
                    tr.warm = WarmProduct::new(v0);
                    coarse[0].has_values = true;
                    lt.coarse_product_s = t.elapsed().as_secs_f64();
                    timings.galerkin_numeric_s += lt.coarse_product_s;
                }
                let a = &levels[l].a;
                let b = a.block_shape().0;
                progress(&format!("level {l}: aggregating {} block rows", a.nrows()));
                let t_mesh = Instant::now();
                // The eigen-estimate behind omega reads only A: it runs beside
                // the aggregation, whose merge and QRs are partly serial.
                let nn = &near_null;
                let ((aggs, merged, tent, laps), (omega, omega_s)) = rayon::join(
                    || {
                        let mut step = Instant::now();
                        let mut lap = move || {
                            let now = Instant::now();
                            let dt = now.duration_since(step).as_secs_f64();
                            step = now;
                            dt
                        };
                        let g = strength_graph(a, opts.threshold_at(l));
                        let strength_s = lap();
                        let mut aggs = opts.aggregation.aggregate(&g, l < opts.aggressive_levels);
                        let aggregation_s = lap();
                        let merged = merge_rank_deficient(&mut aggs, &g, b, modes, nn, opts.rank_tolerance);
                        drop(g);
                        let merge_s = lap();
                        let coarse_rows = aggs.count * modes;
                        let stalled = aggs.count == 0 || coarse_rows as f64 > opts.stall_ratio * a.scalar_rows() as f64;
                        let tent = (!stalled).then(|| tentative_prolongator(&aggs, nn, b, modes, opts.rank_tolerance));
                        let tentative_s = lap();
                        (aggs, merged, tent, [strength_s, aggregation_s, merge_s, tentative_s])
                    },
                    || {
                        let t = Instant::now();
                        let omega = smoothing_omega(a, opts.smoothing_factor, opts.eig_iterations, l);
                        (omega, t.elapsed().as_secs_f64())
                    },
                );
                [lt.strength_s, lt.aggregation_s, lt.merge_s, lt.tentative_s] = laps;
                let Some(tent) = tent else {
                    timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();
                    timings.mesh_levels.push(lt);
                    break; // coarsening stalled: this level is the coarsest
                };
                let omega = omega?;
                lt.omega_s = omega_s;
                let mut step = Instant::now();
                let mut lap = move || {
                    let now = Instant::now();
                    let dt = now.duration_since(step).as_secs_f64();
                    step = now;
                    dt
                };
                progress(&format!("level {l}: smoothing the prolongator and inspecting P^T A P"));
                // Smoothing and filtering are one pass over the rows when pf > 0
                // (timed as smoothing).
                let p = opts.smooth_and_filter_for_level(a, &tent.p0, omega, &tent.coarse_near_null, l)?;
                lt.smoothing_s = lap();
                let schedule = Arc::new(TwoPassSchedule::inspect(
                    a.pattern_arc().clone(),
                    p.pattern_arc().clone(),
                )?);
                lt.symbolic_s = lap();
                let (base, tx) = (schedule.clone(), tx.clone());
                scope.spawn(move |_| {
                    let t = Instant::now();
                    let inspected = inspect_with_base(base, BlockShape::new(b, modes), policy).map(|i| i.schedule);
                    // The receiver outlives the scope.
                    let _ = tx.send((l, inspected, t.elapsed().as_secs_f64()));
                });
                let ac = BlockCsr::zeros(schedule.c.clone(), modes, modes);
                timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();
                timings.mesh_levels.push(lt);
                levels[l].transfer = Some(TransferSetup {
                    p,
                    // Replaced by the inspection's schedule below.
                    variant_schedule: VariantSchedule::TwoPass(schedule.clone()),
                    schedule,
                    aggregates: aggs.count,
                    merged_aggregates: merged,
                    unaggregated_nodes: aggs.unaggregated(),
                    omega,
                    warm: WarmProduct::default(),
                });
                levels.push(MeshLevel {
                    a: ac,
                    has_values: false,
                    transfer: None,
                });
                near_null = tent.coarse_near_null;
            }
            Ok(Instant::now())
        });
        drop(tx);
        // The scope returned once every inspection had finished.
        let built = built?;
        timings.inspection_wait_s = built.elapsed().as_secs_f64();
        timings.mesh_setup_s += timings.inspection_wait_s;
        for (l, inspected, dt) in rx.try_iter() {
            let tr = levels[l].transfer.as_mut().expect("inspected levels have a transfer");
            tr.variant_schedule = inspected?;
            if tr.variant_schedule.variant() != Variant::TwoPass {
                // No backend can take it over: free its buffers now.
                tr.warm = WarmProduct::default();
            }
            if let Some(m) = timings.mesh_levels.iter_mut().find(|m| m.level == l) {
                m.inspection_s = dt;
            }
        }
        Ok(Self {
            levels,
            options: options.clone(),
            modes,
            timings,
        })
    }
}

impl MeshSetup {
    /// Total stored scalars over all levels' patterns divided by the fine
    /// level's (the coarsest level's pattern is known without its values).
    pub fn operator_complexity(&self) -> f64 {
        let size = |l: &MeshLevel| {
            let b = l.a.block_shape().0;
            (l.a.pattern().nnzb() * b * b) as f64
        };
        self.levels.iter().map(size).sum::<f64>() / size(&self.levels[0])
    }

    /// The per-level table of [`Hierarchy::summary`] from the mesh setup alone
    /// (no smoother figures: no matrix setup has run).
    pub fn summary(&self) -> Vec<LevelSummary> {
        self.levels
            .iter()
            .enumerate()
            .map(|(l, lev)| {
                let pattern = lev.a.pattern();
                let block = lev.a.block_shape().0;
                LevelSummary {
                    level: l,
                    block_rows: pattern.nrows(),
                    blocks: pattern.nnzb(),
                    blocks_per_row: pattern.nnzb() as f64 / pattern.nrows().max(1) as f64,
                    block_size: block,
                    scalar_rows: pattern.nrows() * block,
                    product: lev.transfer.as_ref().map(|t| t.schedule.stats),
                    variant: lev.transfer.as_ref().map(|t| t.variant_schedule.variant().name()),
                    aggregates: lev.transfer.as_ref().map(|t| t.aggregates),
                    merged_aggregates: lev.transfer.as_ref().map(|t| t.merged_aggregates),
                    unaggregated_nodes: lev.transfer.as_ref().map(|t| t.unaggregated_nodes),
                    chebyshev_lambda_max: None,
                }
            })
            .collect()
    }
}

impl MeshSetup {
    /// Every level's product schedule re-inspected for `variant` (from the
    /// two-pass base each level keeps), e.g. to put a hierarchy built for one
    /// backend on another whose products differ.
    pub fn with_variant(mut self, variant: Variant) -> Result<Self, RuntimeError> {
        for t in self.levels.iter_mut().filter_map(|l| l.transfer.as_mut()) {
            if t.variant_schedule.variant() != variant {
                let (bf, bc) = t.p.block_shape();
                let policy = ProductPolicy::Fixed(variant);
                t.variant_schedule = inspect_with_base(t.schedule.clone(), BlockShape::new(bf, bc), &policy)?.schedule;
            }
        }
        self.options.variant = Some(variant);
        Ok(self)
    }
}

/// The coarse-space map from one level to the next, on a backend.
pub struct Transfer<B: Backend> {
    /// Smoothed prolongator (`b_f x b_c` blocks).
    pub p: B::Matrix,
    /// `R = P^T`, built once (P is frozen), used for restriction.
    pub r: B::Matrix,
    /// The numeric Galerkin product of the chosen variant.
    pub product: B::Product,
    /// The patterns and statistics every variant shares.
    pub schedule: Arc<TwoPassSchedule>,
    /// The product's own schedule (what a schedule bundle stores).
    pub variant_schedule: VariantSchedule,
    /// `P` on the host where the backend's own copy is not one (bundles).
    pub host_p: Option<BlockCsr>,
    pub aggregates: usize,
    pub merged_aggregates: usize,
    pub unaggregated_nodes: usize,
    pub omega: f64,
}

/// Chebyshev/point-block-Jacobi smoother state of one level.
pub struct Smoother<B: Backend> {
    pub jacobi: B::Jacobi,
    /// `lambda_max(D^-1 A)` from the last matrix setup.
    pub lambda_max: f64,
    /// The eigen-estimate's fixed start vector.
    start: B::Vector,
    /// The eigen-estimate's CG scalars on the backend
    /// ([`crate::cycle::lanczos_scalars`]), read once per estimate.
    eig: B::Vector,
    /// The Chebyshev coefficients of `lambda_max` on the backend
    /// ([`crate::cycle::chebyshev_coefficients`]), written by each matrix setup.
    pub(crate) coef: B::Vector,
    /// The level operator's values as `f32` where the smoother precision is
    /// [`SmootherPrecision::F32`] (refreshed by each matrix setup).
    pub lowered: Option<B::Lowered>,
}

/// Per-level vectors of the V-cycle: solution, right-hand side, two scratch
/// (also the eigen-estimate's `z`, `p`, `r`, `A p` at matrix setup).
pub(crate) struct LevelWork<V> {
    pub x: V,
    pub rhs: V,
    pub r: V,
    pub t: V,
}

pub struct Level<B: Backend> {
    pub a: B::Matrix,
    /// `a`'s pattern and block size on the host.
    pub pattern: Arc<BlockPattern>,
    pub block: usize,
    pub transfer: Option<Transfer<B>>,
    pub smoother: Option<Smoother<B>>,
    pub(crate) work: LevelWork<B::Vector>,
    /// `a`'s values are current without a product (a cold host backend
    /// adopting the two-pass values mesh setup computed).
    fresh: bool,
}

impl<B: Backend> Level<B> {
    pub fn scalar_rows(&self) -> usize {
        self.pattern.nrows() * self.block
    }
}

/// One row of the per-level table.
#[derive(Clone, Debug, Serialize)]
pub struct LevelSummary {
    pub level: usize,
    pub block_rows: usize,
    pub blocks: usize,
    pub blocks_per_row: f64,
    pub block_size: usize,
    pub scalar_rows: usize,
    /// Statistics of the product that builds the next level (absent on the coarsest).
    pub product: Option<ProductStats>,
    /// Variant of the product that builds the next level.
    pub variant: Option<&'static str>,
    pub aggregates: Option<usize>,
    pub merged_aggregates: Option<usize>,
    pub unaggregated_nodes: Option<usize>,
    pub chebyshev_lambda_max: Option<f64>,
}

/// Slots of a recording's key: the operation's kind and up to five vectors'
/// storage ids (an array: looking a recording up allocates nothing).
pub(crate) const RECORDING_KEY: usize = 6;
/// The first kind of recording an eigen-estimate is keyed on (`+ level`;
/// the solve's kinds are below).
const EIGEN_RECORDING: usize = 100;
/// The first kind of a smoothed level's recording for a lane (its Jacobi
/// inverse, `f32` copy and eigen-estimate; `+ level`).
const SMOOTHER_RECORDING: usize = 200;
/// The coarse factorization's recording for a lane.
const COARSE_RECORDING: usize = 300;
pub(crate) type RecordingKey = [usize; RECORDING_KEY];

/// An AMG hierarchy resident on backend `B` (the CPU by default).
pub struct Hierarchy<B: Backend = Cpu> {
    pub(crate) backend: B,
    pub(crate) levels: Vec<Level<B>>,
    pub(crate) coarse: B::Coarse,
    /// Recordings of the V-cycle and the CG iteration, keyed by what they
    /// touch beyond the hierarchy (see [`Self::recorded`]).
    pub(crate) graphs: Vec<(RecordingKey, B::Graph)>,
    /// Whether the solve records and replays ([`Self::set_recording`]).
    pub(crate) recording: bool,
    pub timings: SetupTimings,
    options: HierarchyOptions,
    modes: usize,
}

impl Hierarchy<Cpu> {
    /// Cold setup on the CPU: [`MeshSetup::build`], then [`Hierarchy::new`].
    pub fn build(
        a0: BlockCsr,
        near_null: &[f64],
        modes: usize,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        let setup = MeshSetup::build(a0, near_null, modes, options, progress)?;
        Self::new(Cpu::new(options.kernels.clone()), setup, progress)
    }

    /// The fine operator.
    pub fn operator(&self) -> &BlockCsr {
        &self.levels[0].a
    }

    /// This hierarchy's mesh setup (a copy), to put on another backend: every
    /// level's operator with its current values, `P` and schedules.
    pub fn mesh_setup(&self) -> MeshSetup {
        let levels = self
            .levels
            .iter()
            .map(|l| MeshLevel {
                a: l.a.clone(),
                has_values: true,
                transfer: l.transfer.as_ref().map(|t| TransferSetup {
                    p: t.p.clone(),
                    schedule: t.schedule.clone(),
                    variant_schedule: t.variant_schedule.clone(),
                    aggregates: t.aggregates,
                    merged_aggregates: t.merged_aggregates,
                    unaggregated_nodes: t.unaggregated_nodes,
                    omega: t.omega,
                    warm: WarmProduct::default(),
                }),
            })
            .collect();
        MeshSetup {
            levels,
            options: self.options.clone(),
            modes: self.modes,
            timings: SetupTimings::default(),
        }
    }
}

/// One level built outside [`MeshSetup`] (a distributed backend's own mesh
/// setup, whose levels are per-rank pieces no global [`BlockCsr`] describes),
/// for [`Hierarchy::from_levels`].
pub struct LevelParts<B: Backend> {
    /// The level's operator on the backend; level 0's with its values, the
    /// others get theirs from the products of the matrix setup.
    pub a: B::Matrix,
    /// The pattern of the rows this process holds (its scalar rows size the
    /// level's vectors) and the block size.
    pub pattern: Arc<BlockPattern>,
    pub block: usize,
    /// The transfer to the next level (every level but the coarsest).
    pub transfer: Option<Transfer<B>>,
    /// Jacobi storage and the eigen-estimate's start vector (every level but
    /// the coarsest).
    pub smoother: Option<(B::Jacobi, B::Vector)>,
}

impl<B: Backend> Hierarchy<B> {
    /// A hierarchy from levels a backend built itself (the distributed
    /// backend's mesh setup), then the matrix setup on it, exactly as
    /// [`Hierarchy::new`] runs it: every coarse operator from its product,
    /// smoothers, the coarse factorization. `mesh_setup_s` is reported as the
    /// mesh-setup time.
    pub fn from_levels(
        backend: B,
        parts: Vec<LevelParts<B>>,
        coarse: B::Coarse,
        options: HierarchyOptions,
        modes: usize,
        mesh_setup_s: f64,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, B::Error> {
        let nl = parts.len();
        if nl == 0 {
            return Err(RuntimeError::InvalidOption {
                what: "a hierarchy needs at least one level".into(),
            }
            .into());
        }
        let mut levels = Vec::with_capacity(nl);
        for (l, part) in parts.into_iter().enumerate() {
            let LevelParts {
                a,
                pattern,
                block,
                transfer,
                smoother,
            } = part;
            if (l + 1 < nl) != (transfer.is_some() && smoother.is_some()) {
                return Err(RuntimeError::InvalidOption {
                    what: format!(
                        "level {l} of {nl}: every level but the coarsest needs a transfer and a smoother, the coarsest neither"
                    ),
                }
                .into());
            }
            let n = pattern.nrows() * block;
            let work = LevelWork {
                x: backend.vector(n)?,
                rhs: backend.vector(n)?,
                r: backend.vector(n)?,
                t: backend.vector(n)?,
            };
            let smoother = smoother
                .map(|(jacobi, start)| -> Result<_, B::Error> {
                    Ok(Smoother {
                        jacobi,
                        lambda_max: 0.0,
                        start,
                        eig: backend.vector(lanczos_scalars(options.amg.eig_iterations))?,
                        coef: backend.vector(cheb_slot::LEN)?,
                        lowered: lowered_storage(&backend, &options, &a)?,
                    })
                })
                .transpose()?;
            levels.push(Level {
                a,
                pattern,
                block,
                transfer,
                smoother,
                work,
                fresh: false,
            });
        }
        let mut h = Self {
            backend,
            levels,
            coarse,
            timings: SetupTimings {
                mesh_setup_s,
                ..SetupTimings::default()
            },
            options,
            modes,
            graphs: Vec::new(),
            recording: true,
        };
        progress("matrix setup: numeric products, smoother eigen-estimates, coarse factorization");
        let (numeric, total) = h.run_matrix_setup()?;
        h.timings.galerkin_numeric_s = numeric;
        h.timings.matrix_setup_s = total;
        Ok(h)
    }
}

/// The `f32` copy of a smoothed level's operator `a` where `options` ask for
/// one ([`SmootherPrecision::F32`]); allocated once, filled by each matrix setup.
fn lowered_storage<B: Backend>(
    backend: &B,
    options: &HierarchyOptions,
    a: &B::Matrix,
) -> Result<Option<B::Lowered>, B::Error> {
    match options.smoother_precision {
        SmootherPrecision::F64 => Ok(None),
        SmootherPrecision::F32 => backend.lowered(a).map(Some),
    }
}

impl<B: Backend> Hierarchy<B> {
    /// Puts a mesh setup on `backend` (each level's matrices copied once;
    /// only the fine operator's values, or the values a host backend adopts)
    /// and runs the matrix setup there.
    pub fn new(backend: B, setup: MeshSetup, progress: &mut dyn FnMut(&str)) -> Result<Self, B::Error> {
        Self::with_fine(backend, setup, None, progress)
    }

    /// [`Hierarchy::new`] with the fine operator already on the backend
    /// (`fine`, from [`Backend::matrix_ref`] of the setup's level 0 operator,
    /// values included), so its upload can overlap the mesh setup or the
    /// schedule cache's load. `None` uploads it here.
    pub fn with_fine(
        backend: B,
        setup: MeshSetup,
        mut fine: Option<B::Matrix>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, B::Error> {
        let MeshSetup {
            levels: mesh,
            options,
            modes,
            timings: mesh_timings,
        } = setup;
        let coarse_host = &mesh.last().expect("one level at least").a;
        let coarse_n = coarse_host.scalar_rows();
        if coarse_n > options.max_coarse_rows {
            return Err(RuntimeError::CoarseTooLarge {
                n: coarse_n,
                limit: options.max_coarse_rows,
            }
            .into());
        }
        let t_up = Instant::now();
        backend.set_phase("mesh setup (upload)");
        let host = backend.host_resident();
        let mut up = UploadTimings::default();
        let since = |t: Instant| t.elapsed().as_secs_f64();
        let t = Instant::now();
        let coarse = backend.coarse(coarse_host)?;
        up.smoothers_s += since(t);
        let nl = mesh.len();
        let mut adopted = false;
        let mut levels = Vec::with_capacity(nl);
        let mut upper_variant = None;
        // The host copy of a fine operator that was uploaded ahead (its values).
        let mut host_fine = None;
        for (l, ml) in mesh.into_iter().enumerate() {
            let MeshLevel {
                a,
                has_values,
                transfer,
            } = ml;
            let (pattern, block, n) = (a.pattern_arc().clone(), a.block_shape().0, a.scalar_rows());
            // A host backend keeps the two-pass values mesh setup computed when
            // its own product is two-pass (the same bits); others recompute.
            let fresh = l > 0 && host && has_values && upper_variant == Some(Variant::TwoPass);
            adopted |= fresh;
            let t = Instant::now();
            let smoother = if l + 1 < nl {
                Some(Smoother {
                    jacobi: backend.jacobi(&a)?,
                    lambda_max: 0.0,
                    start: backend.vector_from(&pseudo_random_vector(n, EIG_SEED))?,
                    eig: backend.vector(lanczos_scalars(options.amg.eig_iterations))?,
                    coef: backend.vector(cheb_slot::LEN)?,
                    lowered: None,
                })
            } else {
                None
            };
            up.smoothers_s += since(t);
            let transfer = match transfer {
                Some(mut t) => {
                    let (bf, bc) = t.p.block_shape();
                    upper_variant = Some(t.variant_schedule.variant());
                    let t0 = Instant::now();
                    let warm = t
                        .warm
                        .take()
                        .and_then(|w| backend.adopt_product(w, &t.variant_schedule));
                    let product = match warm {
                        Some(p) => {
                            up.products_adopted += 1;
                            p
                        }
                        None => backend.product(&t.variant_schedule, bf, bc)?,
                    };
                    up.products_s += since(t0);
                    let t0 = Instant::now();
                    let (p, host_p) = if host {
                        (backend.matrix(t.p, true)?, None)
                    } else {
                        (backend.matrix_ref(&t.p)?, Some(t.p))
                    };
                    up.prolongators_s += since(t0);
                    let t0 = Instant::now();
                    let hp = host_p
                        .as_ref()
                        .or_else(|| backend.host_matrix(&p))
                        .expect("P is kept on the host, or the backend's P is a host matrix");
                    let r = backend.transpose(&p, hp, &t.schedule.r, &t.schedule.r_source)?;
                    up.transpose_s += since(t0);
                    Some(Transfer {
                        p,
                        r,
                        product,
                        schedule: t.schedule,
                        variant_schedule: t.variant_schedule,
                        host_p,
                        aggregates: t.aggregates,
                        merged_aggregates: t.merged_aggregates,
                        unaggregated_nodes: t.unaggregated_nodes,
                        omega: t.omega,
                    })
                }
                None => None,
            };
            let t = Instant::now();
            let work = LevelWork {
                x: backend.vector(n)?,
                rhs: backend.vector(n)?,
                r: backend.vector(n)?,
                t: backend.vector(n)?,
            };
            up.work_s += since(t);
            let t = Instant::now();
            let a = match fine.take().filter(|_| l == 0) {
                Some(m) => {
                    host_fine = Some(a);
                    m
                }
                None => backend.matrix(a, l == 0)?,
            };
            let mut a = a;
            if options.mirror_spmv_in_effect() {
                backend.symmetric_operator(&mut a)?;
            }
            up.operators_s += since(t);
            let mut smoother = smoother;
            if let Some(sm) = smoother.as_mut() {
                let t = Instant::now();
                sm.lowered = lowered_storage(&backend, &options, &a)?;
                up.smoothers_s += since(t);
            }
            levels.push(Level {
                a,
                pattern,
                block,
                transfer,
                smoother,
                work,
                fresh,
            });
        }
        backend.synchronize()?;
        // Freeing its pages (1.5 GB at k = 16) took 0.04-0.08 s of the start:
        // a thread of its own does it. Without one, it is dropped here.
        if let Some(a) = host_fine {
            let _ = std::thread::Builder::new()
                .name("ptap-free".into())
                .spawn(move || drop(a));
        }
        let mut timings = SetupTimings {
            mesh_setup_s: mesh_timings.mesh_setup_s,
            upload_s: t_up.elapsed().as_secs_f64(),
            mesh_levels: mesh_timings.mesh_levels,
            upload: up,
            ..SetupTimings::default()
        };
        // Coarse operators mesh setup computed count as matrix setup where the
        // backend adopts them (the CPU's cold step), as mesh setup otherwise.
        if adopted {
            timings.matrix_setup_s += mesh_timings.galerkin_numeric_s;
            timings.galerkin_numeric_s += mesh_timings.galerkin_numeric_s;
        } else {
            timings.mesh_setup_s += mesh_timings.galerkin_numeric_s;
        }
        let mut h = Self {
            backend,
            levels,
            coarse,
            graphs: Vec::new(),
            recording: true,
            timings,
            options,
            modes,
        };
        progress("matrix setup: numeric products, smoother eigen-estimates, coarse factorization");
        let (numeric, total) = h.run_matrix_setup()?;
        h.timings.galerkin_numeric_s += numeric;
        h.timings.matrix_setup_s += total;
        Ok(h)
    }

    /// Matrix setup for new fine-operator values (same pattern): numeric
    /// products on every level, smoothers, coarse factorization, all on the
    /// backend. Aggregates and `P` are reused. Allocates nothing. Returns the
    /// elapsed seconds.
    pub fn refresh(&mut self, a0_values: &[f64]) -> Result<f64, B::Error> {
        let t = Instant::now();
        self.set_fine_values(a0_values)?;
        let (numeric, _) = self.run_matrix_setup()?;
        let dt = t.elapsed().as_secs_f64();
        self.timings.galerkin_numeric_s = numeric;
        self.timings.matrix_setup_s = dt;
        Ok(dt)
    }

    /// New fine-operator values (same pattern, checked finite) onto the
    /// backend (phase `fine values upload`), without the matrix setup.
    pub fn set_fine_values(&mut self, a0_values: &[f64]) -> Result<(), B::Error> {
        let expected = self.levels[0].pattern.nnzb() * self.levels[0].block * self.levels[0].block;
        let checked = if a0_values.len() != expected {
            Err(RuntimeError::ValuesLength {
                got: a0_values.len(),
                expected,
            })
        } else if let Some(i) = a0_values.iter().position(|v| !v.is_finite()) {
            Err(RuntimeError::NotFinite {
                what: format!("new fine-operator value {i}"),
            })
        } else {
            Ok(())
        };
        // Over ranks, each checks its own rows: all fail if one does.
        self.backend.agree(checked.map_err(Into::into))?;
        self.backend.set_phase("fine values upload");
        self.backend.set_values(&mut self.levels[0].a, a0_values)
    }

    /// Matrix setup from the fine values already on the backend (after a
    /// backend-side assembly wrote them through [`Self::fine_operator_mut`]).
    /// Returns the elapsed seconds.
    pub fn matrix_setup(&mut self) -> Result<f64, B::Error> {
        let (numeric, total) = self.run_matrix_setup()?;
        self.timings.galerkin_numeric_s = numeric;
        self.timings.matrix_setup_s = total;
        Ok(total)
    }

    /// Products (levels not already fresh), smoothers, coarse factor; returns
    /// (seconds of the products, seconds in all) and leaves the phases in
    /// `self.timings.matrix`.
    fn run_matrix_setup(&mut self) -> Result<(f64, f64), B::Error> {
        self.backend.set_phase("matrix setup");
        let t = Instant::now();
        let nl = self.levels.len();
        let mut phases = std::mem::take(&mut self.timings.matrix);
        phases.levels.clear();
        phases.beside_s = 0.0;
        if self.options.setup_beside != SetupBeside::Serial && self.recording && self.backend.lanes() > 0 {
            return self.run_matrix_setup_beside(t, phases);
        }
        self.run_products()?;
        let numeric = t.elapsed().as_secs_f64();
        phases.products_s = numeric;
        for l in 0..nl - 1 {
            let t0 = Instant::now();
            let lev = &mut self.levels[l];
            let sm = lev.smoother.as_mut().expect("a smoothed level");
            self.backend.jacobi_invert(&lev.a, &mut sm.jacobi, l)?;
            // The smoother's f32 copy (counted with the Jacobi inverse).
            if let Some(lo) = sm.lowered.as_mut() {
                self.backend.lower(&lev.a, lo, l)?;
            }
            let jacobi_s = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            self.queue_eigen_recorded(l)?;
            self.finish_eigen(l, jacobi_s, t1, &mut phases)?;
        }
        let t0 = Instant::now();
        let l = nl - 1;
        self.backend.coarse_factor(&self.levels[l].a, &mut self.coarse, l)?;
        self.backend.synchronize()?;
        phases.coarse_factor_s = t0.elapsed().as_secs_f64();
        self.timings.matrix = phases;
        Ok((numeric, t.elapsed().as_secs_f64()))
    }

    /// [`Self::run_matrix_setup`] with each smoothed level's Jacobi inverse,
    /// `f32` copy and eigen-estimate, and the coarse factorization, recorded
    /// and replayed on lanes: after the products, or each as soon as its own
    /// operator is queued (level 0's at once; [`SetupBeside`]). The checks
    /// and the reads of the estimates follow, level by level, after
    /// everything has run.
    fn run_matrix_setup_beside(&mut self, t: Instant, mut phases: MatrixSetupTimings) -> Result<(f64, f64), B::Error> {
        let nl = self.levels.len();
        // Level l's work is queued once `start(l)` products are.
        let first = match self.options.setup_beside {
            SetupBeside::AfterProducts => nl - 1,
            SetupBeside::AfterFineProduct => 1,
            _ => 0,
        };
        let start = |l: usize| l.max(first).min(nl - 1);
        for p in 0..nl {
            if p > 0 {
                self.run_product(p - 1)?;
            }
            for l in (0..nl).filter(|&l| start(l) == p) {
                if l + 1 < nl {
                    self.queue_smoother_beside(l)?;
                } else {
                    self.queue_coarse_beside(l)?;
                }
            }
        }
        // The main order holds the products only.
        self.backend.synchronize()?;
        let numeric = t.elapsed().as_secs_f64();
        phases.products_s = numeric;
        self.backend.join_lanes()?;
        self.backend.synchronize()?;
        phases.beside_s = t.elapsed().as_secs_f64() - numeric;
        for l in 0..nl - 1 {
            let t0 = Instant::now();
            let sm = self.levels[l].smoother.as_ref().expect("a smoothed level");
            self.backend.check_jacobi(&sm.jacobi, l)?;
            if let Some(lo) = sm.lowered.as_ref() {
                self.backend.check_lowered(lo, l)?;
            }
            let jacobi_s = t0.elapsed().as_secs_f64();
            self.finish_eigen(l, jacobi_s, Instant::now(), &mut phases)?;
        }
        let t0 = Instant::now();
        self.backend.check_coarse(&self.coarse, nl - 1)?;
        phases.coarse_factor_s = t0.elapsed().as_secs_f64();
        self.timings.matrix = phases;
        Ok((numeric, t.elapsed().as_secs_f64()))
    }

    /// Level `l`'s Jacobi inverse, `f32` copy and eigen-estimate, recorded
    /// with lane `l`'s scratch and replayed on that lane.
    fn queue_smoother_beside(&mut self, l: usize) -> Result<(), B::Error> {
        let key = {
            let sm = self.levels[l].smoother.as_ref().expect("a smoothed level");
            self.key(SMOOTHER_RECORDING + l, &[&sm.eig])
        };
        self.backend.use_lane(Some(l));
        let queued = self.recorded_on(key, Some(l), |h| {
            let be = &h.backend;
            let lev = &mut h.levels[l];
            let sm = lev.smoother.as_mut().expect("a smoothed level");
            be.jacobi_invert_queued(&lev.a, &mut sm.jacobi, l)?;
            if let Some(lo) = sm.lowered.as_mut() {
                be.lower_queued(&lev.a, lo, l)?;
            }
            h.queue_eigen(l)
        });
        self.backend.use_lane(None);
        queued
    }

    /// The coarse factorization of level `l` (the coarsest), recorded and
    /// replayed on lane `l`.
    fn queue_coarse_beside(&mut self, l: usize) -> Result<(), B::Error> {
        let key = self.key(COARSE_RECORDING, &[]);
        self.recorded_on(key, Some(l), |h| {
            h.backend.coarse_factor_queued(&h.levels[l].a, &mut h.coarse, l)
        })
    }

    /// Every level's numeric product (those not already fresh), then one synchronize.
    fn run_products(&mut self) -> Result<(), B::Error> {
        for l in 0..self.levels.len() - 1 {
            self.run_product(l)?;
        }
        self.backend.synchronize()
    }

    /// The numeric product that builds level `l + 1` (none when it is already fresh).
    fn run_product(&mut self, l: usize) -> Result<(), B::Error> {
        let (fine, coarse) = self.levels.split_at_mut(l + 1);
        let (lev, next) = (&mut fine[l], &mut coarse[0]);
        if std::mem::take(&mut next.fresh) {
            return Ok(());
        }
        let tr = lev
            .transfer
            .as_mut()
            .expect("every level but the coarsest has a transfer");
        self.backend.galerkin(&mut tr.product, &lev.a, &tr.p, &mut next.a)
    }

    /// [`Self::queue_eigen`] through a recording (a CUDA graph on the device;
    /// what it reads from the host is fixed, so it outlives refreshes), one
    /// per level.
    fn queue_eigen_recorded(&mut self, l: usize) -> Result<(), B::Error> {
        let key = {
            let sm = self.levels[l].smoother.as_ref().expect("a smoothed level");
            self.key(EIGEN_RECORDING + l, &[&sm.eig])
        };
        self.recorded(key, |h| h.queue_eigen(l))
    }

    /// Queues level `l`'s eigen-estimate (nothing read back).
    fn queue_eigen(&mut self, l: usize) -> Result<(), B::Error> {
        let iterations = self.options.amg.eig_iterations;
        let lev = &mut self.levels[l];
        let sm = lev.smoother.as_mut().expect("a smoothed level");
        let LevelWork { x, rhs, r, t } = &mut lev.work;
        queue_lambda_max(
            &self.backend,
            &lev.a,
            &sm.jacobi,
            &sm.start,
            iterations,
            &mut sm.eig,
            r,
            x,
            rhs,
            t,
        )
    }

    /// Reads level `l`'s eigen-estimate and puts its Chebyshev coefficients
    /// on the backend; records the level's times (`jacobi_s`, and the
    /// estimate's since `t0`).
    fn finish_eigen(
        &mut self,
        l: usize,
        jacobi_s: f64,
        t0: Instant,
        phases: &mut MatrixSetupTimings,
    ) -> Result<(), B::Error> {
        let be = &self.backend;
        let iterations = self.options.amg.eig_iterations;
        let sm = self.levels[l].smoother.as_mut().expect("a smoothed level");
        sm.lambda_max = finish_lambda_max(be, &sm.eig, iterations).map_err(|e| match e {
            EigenError::Ops(e) => e,
            EigenError::Breakdown(why) => RuntimeError::from(AmgError::EigenBreakdown { level: l, why }).into(),
        })?;
        let coef = chebyshev_coefficients(self.options.chebyshev_bounds, sm.lambda_max);
        be.write(&coef, &mut sm.coef)?;
        phases.levels.push(SmootherTimings {
            level: l,
            jacobi_s,
            eigen_s: t0.elapsed().as_secs_f64(),
        });
        Ok(())
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }
    pub fn levels(&self) -> &[Level<B>] {
        &self.levels
    }
    pub fn options(&self) -> &HierarchyOptions {
        &self.options
    }
    /// [`HierarchyOptions::setup_beside`] for later matrix setups.
    pub fn set_setup_beside(&mut self, order: SetupBeside) {
        self.options.setup_beside = order;
    }
    /// Near-null modes (the coarse block size).
    pub fn modes(&self) -> usize {
        self.modes
    }
    /// Scalar rows of the fine level.
    pub fn scalar_rows(&self) -> usize {
        self.levels[0].scalar_rows()
    }
    /// Scalar rows of the coarsest (directly solved) level.
    pub fn coarse_rows(&self) -> usize {
        self.levels.last().unwrap().scalar_rows()
    }
    /// The fine operator on the backend, for a backend-side assembly to
    /// overwrite its values in place (then call [`Self::matrix_setup`]).
    pub fn fine_operator_mut(&mut self) -> &mut B::Matrix {
        &mut self.levels[0].a
    }
    /// The coarse factor on the backend.
    pub fn coarse(&self) -> &B::Coarse {
        &self.coarse
    }
    /// `P` of level `l` on the host (what a schedule bundle stores).
    pub fn host_prolongator(&self, l: usize) -> Option<&BlockCsr> {
        let t = self.levels.get(l)?.transfer.as_ref()?;
        t.host_p.as_ref().or_else(|| self.backend.host_matrix(&t.p))
    }
    /// The values of level `l`'s operator as the backend computed them.
    pub fn operator_values(&self, l: usize) -> Result<Vec<f64>, B::Error> {
        self.backend.set_phase("verification");
        self.backend.values(&self.levels[l].a)
    }
    /// The diagonal-block inverses of level `l` (row-major blocks).
    pub fn jacobi_inverses(&self, l: usize) -> Result<Vec<f64>, B::Error> {
        self.backend.set_phase("verification");
        let sm = self.levels[l].smoother.as_ref().expect("a smoothed level");
        self.backend.jacobi_values(&sm.jacobi)
    }
    /// `lambda_max(D^-1 A)` per smoothed level, from the last matrix setup.
    pub fn lambda_max(&self) -> Vec<f64> {
        self.levels
            .iter()
            .filter_map(|l| l.smoother.as_ref().map(|s| s.lambda_max))
            .collect()
    }
    /// The Galerkin-product variant of each level's product.
    pub fn level_variants(&self) -> Vec<Variant> {
        self.levels
            .iter()
            .filter_map(|l| l.transfer.as_ref().map(|t| t.variant_schedule.variant()))
            .collect()
    }

    /// Total stored scalars over all levels divided by the fine level's.
    pub fn operator_complexity(&self) -> f64 {
        let size = |l: &Level<B>| (l.pattern.nnzb() * l.block * l.block) as f64;
        self.levels.iter().map(size).sum::<f64>() / size(&self.levels[0])
    }

    pub fn summary(&self) -> Vec<LevelSummary> {
        self.levels
            .iter()
            .enumerate()
            .map(|(l, lev)| LevelSummary {
                level: l,
                block_rows: lev.pattern.nrows(),
                blocks: lev.pattern.nnzb(),
                blocks_per_row: lev.pattern.nnzb() as f64 / lev.pattern.nrows().max(1) as f64,
                block_size: lev.block,
                scalar_rows: lev.scalar_rows(),
                product: lev.transfer.as_ref().map(|t| t.schedule.stats),
                variant: lev.transfer.as_ref().map(|t| t.variant_schedule.variant().name()),
                aggregates: lev.transfer.as_ref().map(|t| t.aggregates),
                merged_aggregates: lev.transfer.as_ref().map(|t| t.merged_aggregates),
                unaggregated_nodes: lev.transfer.as_ref().map(|t| t.unaggregated_nodes),
                chebyshev_lambda_max: lev.smoother.as_ref().map(|s| s.lambda_max),
            })
            .collect()
    }
}

/// A mesh setup crosses threads and is shared behind `Arc` (schedule caches,
/// Python): it stays `Send + Sync` with the warm executors it may hold.
#[allow(dead_code)]
fn mesh_setup_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<MeshSetup>();
}
