//! The smoothed-aggregation hierarchy: cold build and values-only refresh.
use crate::registry::KernelRegistry;
use crate::smoother::ChebyshevSmoother;
use crate::variants::GalerkinProduct;
use crate::RuntimeError;
use ptap_amg::prolongator::smoothing_omega;
use ptap_amg::{
    aggregate_mis1, aggregate_mis2, merge_rank_deficient, smooth_prolongator, strength_graph, tentative_prolongator,
    AmgError, AmgOptions,
};
use ptap_schedules::file::MappedBundle;
use ptap_schedules::model::{select, MachineParams, ModelInput};
use ptap_schedules::{ProductStats, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::Cholesky;
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Options of the whole hierarchy: the mesh setup's plus the smoother's.
#[derive(Clone, Debug)]
pub struct HierarchyOptions {
    pub amg: AmgOptions,
    /// Chebyshev interval as fractions of `lambda_max(D_block^-1 A)`.
    pub chebyshev_bounds: (f64, f64),
    /// Largest coarsest level the dense direct solve accepts (scalar rows).
    pub max_coarse_rows: usize,
    /// Galerkin-product variant of every level; `None` picks per level from the
    /// traffic model on `machine`.
    pub variant: Option<Variant>,
    /// Machine the model predicts for when `variant` is `None`.
    pub machine: MachineParams,
    /// Generated kernels the products and smoothers use, by block shape: the
    /// shipped sets, plus any a user declares with `ptap_kernels::kernels!` and
    /// registers (`KernelRegistry::shipped().clone().with::<my::Set>()`).
    pub kernels: KernelRegistry,
}

impl Default for HierarchyOptions {
    fn default() -> Self {
        Self {
            amg: AmgOptions::default(),
            chebyshev_bounds: (0.1, 1.1),
            max_coarse_rows: 8000,
            variant: Some(Variant::TwoPass),
            machine: MachineParams::cpu(10e9),
            kernels: KernelRegistry::shipped().clone(),
        }
    }
}

/// The coarse-space map from one level to the next.
pub struct Transfer {
    /// Smoothed prolongator (`b_f x b_c` blocks).
    pub p: BlockCsr,
    /// `R = P^T`, built once (P is frozen), used for restriction.
    pub r: BlockCsr,
    /// The numeric Galerkin product of the chosen variant.
    pub product: Box<dyn GalerkinProduct>,
    /// The patterns and statistics every variant shares.
    pub schedule: Arc<TwoPassSchedule>,
    /// The product's own schedule (what a schedule bundle stores).
    pub variant_schedule: VariantSchedule,
    pub aggregates: usize,
    pub merged_aggregates: usize,
    pub unaggregated_nodes: usize,
    pub omega: f64,
}

pub struct Level {
    pub a: BlockCsr,
    pub transfer: Option<Transfer>,
    pub smoother: Option<ChebyshevSmoother>,
}

/// Wall time of the setup phases (the paper's four-phase split).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SetupTimings {
    /// Strength graphs, aggregation, `P0`, smoothing, symbolic products.
    pub mesh_setup_s: f64,
    /// Numeric products, smoother inverses and eigen-estimates, coarse factorization.
    pub matrix_setup_s: f64,
    /// Of which the numeric Galerkin products.
    pub galerkin_numeric_s: f64,
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

/// A built hierarchy with its V-cycle workspace.
pub struct Hierarchy {
    pub(crate) levels: Vec<Level>,
    pub(crate) coarse: Cholesky,
    pub(crate) coarse_dense: Vec<f64>,
    pub(crate) work: Vec<LevelWork>,
    pub timings: SetupTimings,
    options: HierarchyOptions,
}

/// Per-level vectors of the V-cycle: solution, right-hand side, two scratch.
pub(crate) struct LevelWork {
    pub x: Vec<f64>,
    pub rhs: Vec<f64>,
    pub r: Vec<f64>,
    pub t: Vec<f64>,
}

impl Hierarchy {
    /// Cold setup from the fine operator and its near-null space (row-major
    /// `scalar_rows x modes`). `progress` receives one line per step.
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
        let mut levels = vec![Level {
            a: a0,
            transfer: None,
            smoother: None,
        }];
        let mut near_null = near_null.to_vec();
        loop {
            let l = levels.len() - 1;
            let a = &levels[l].a;
            let b = a.block_shape().0;
            if a.scalar_rows() <= opts.coarse_eq_limit || levels.len() >= opts.max_levels {
                break;
            }
            progress(&format!("level {l}: aggregating {} block rows", a.nrows()));
            let t_mesh = Instant::now();
            let g = strength_graph(a, opts.threshold_at(l));
            let mut aggs = if l < opts.aggressive_levels {
                aggregate_mis2(&g)
            } else {
                aggregate_mis1(&g)
            };
            let merged = merge_rank_deficient(&mut aggs, &g, b, modes, &near_null, opts.rank_tolerance);
            drop(g);
            let coarse_rows = aggs.count * modes;
            if aggs.count == 0 || coarse_rows as f64 > opts.stall_ratio * a.scalar_rows() as f64 {
                timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();
                break; // coarsening stalled: this level is the coarsest
            }
            let tent = tentative_prolongator(&aggs, &near_null, b, modes, opts.rank_tolerance);
            let omega = smoothing_omega(a, opts.smoothing_factor, opts.eig_iterations, l)?;
            progress(&format!("level {l}: smoothing the prolongator and inspecting P^T A P"));
            let p = smooth_prolongator(a, &tent.p0, omega, l)?;
            let p = opts.filter_for_level(p, &tent.coarse_near_null, l);
            let schedule = Arc::new(TwoPassSchedule::inspect(
                a.pattern_arc().clone(),
                p.pattern_arc().clone(),
            )?);
            let variant = match options.variant {
                Some(v) => v,
                None => select(
                    &ModelInput::new(schedule.stats, b, modes),
                    &options.machine,
                    &Variant::ALL,
                ),
            };
            let variant_schedule = VariantSchedule::inspect(variant, schedule.clone(), b * modes);
            let mut product = options.kernels.executor_for(&variant_schedule, b, modes)?;
            let r = p.transpose();
            let mut ac = BlockCsr::zeros(schedule.c.clone(), modes, modes);
            timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();

            progress(&format!(
                "level {l}: numeric P^T A P ({} coarse block rows)",
                aggs.count
            ));
            let t_num = Instant::now();
            product.numeric(a, &p, &mut ac)?;
            let dt = t_num.elapsed().as_secs_f64();
            timings.matrix_setup_s += dt;
            timings.galerkin_numeric_s += dt;

            levels[l].transfer = Some(Transfer {
                p,
                r,
                product,
                schedule,
                variant_schedule,
                aggregates: aggs.count,
                merged_aggregates: merged,
                unaggregated_nodes: aggs.unaggregated(),
                omega,
            });
            levels.push(Level {
                a: ac,
                transfer: None,
                smoother: None,
            });
            near_null = tent.coarse_near_null;
        }
        Self::finish(levels, timings, options, progress)
    }

    /// Rebuilds a hierarchy from a schedule bundle written for a fine operator
    /// of `a0`'s pattern under the same options ([`crate::bundle`]): every
    /// level's `P` and product schedule are loaded, nothing is aggregated,
    /// smoothed or inspected. Each level keeps the variant stored in the bundle.
    pub fn from_bundle(
        a0: BlockCsr,
        modes: usize,
        bundle: &Arc<MappedBundle>,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        a0.check_finite("the fine operator")
            .map_err(|e| RuntimeError::NotFinite { what: e.to_string() })?;
        let first = bundle.level(0)?;
        let want = crate::bundle::options_hash(options, modes);
        if first.size("options_hash") != Some(want) {
            return Err(RuntimeError::StaleBundle {
                path: bundle.path().display().to_string(),
            });
        }
        let mut timings = SetupTimings::default();
        let mut levels = vec![Level {
            a: a0,
            transfer: None,
            smoother: None,
        }];
        for l in 0..bundle.len() {
            progress(&format!("level {l}: loading P and the product schedule"));
            let t_mesh = Instant::now();
            let a = &levels[l].a;
            let stored = crate::bundle::load_level(bundle, l as u32, a.pattern_arc())?;
            let (bf, bc) = stored.p.block_shape();
            if a.block_shape() != (bf, bf) {
                return Err(RuntimeError::BundleShape {
                    path: bundle.path().display().to_string(),
                    level: l,
                    stored: bf,
                    given: a.block_shape().0,
                });
            }
            let mut product = options.kernels.executor_for(&stored.schedule, bf, bc)?;
            let r = stored.p.transpose();
            let schedule = stored.schedule.base().clone();
            let mut ac = BlockCsr::zeros(schedule.c.clone(), bc, bc);
            timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();
            let t_num = Instant::now();
            product.numeric(a, &stored.p, &mut ac)?;
            let dt = t_num.elapsed().as_secs_f64();
            timings.matrix_setup_s += dt;
            timings.galerkin_numeric_s += dt;
            levels[l].transfer = Some(Transfer {
                p: stored.p,
                r,
                product,
                schedule,
                variant_schedule: stored.schedule,
                aggregates: stored.aggregates,
                merged_aggregates: stored.merged_aggregates,
                unaggregated_nodes: stored.unaggregated_nodes,
                omega: stored.omega,
            });
            levels.push(Level {
                a: ac,
                transfer: None,
                smoother: None,
            });
        }
        Self::finish(levels, timings, options, progress)
    }

    /// Smoothers, V-cycle vectors and the coarse factorization of built levels.
    fn finish(
        mut levels: Vec<Level>,
        timings: SetupTimings,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        let opts = &options.amg;
        let coarse_n = levels.last().unwrap().a.scalar_rows();
        if coarse_n > options.max_coarse_rows {
            return Err(RuntimeError::CoarseTooLarge {
                n: coarse_n,
                limit: options.max_coarse_rows,
            });
        }
        let t_mesh = Instant::now();
        let nlev = levels.len();
        for lev in levels.iter_mut().take(nlev - 1) {
            lev.smoother = Some(ChebyshevSmoother::with_registry(
                &lev.a,
                options.chebyshev_bounds,
                opts.eig_iterations,
                &options.kernels,
            ));
        }
        let work = levels
            .iter()
            .map(|lev| {
                let n = lev.a.scalar_rows();
                LevelWork {
                    x: vec![0.0; n],
                    rhs: vec![0.0; n],
                    r: vec![0.0; n],
                    t: vec![0.0; n],
                }
            })
            .collect();
        let mut h = Hierarchy {
            levels,
            coarse: Cholesky::with_order(coarse_n),
            coarse_dense: vec![0.0; coarse_n * coarse_n],
            work,
            timings,
            options: options.clone(),
        };
        h.timings.mesh_setup_s += t_mesh.elapsed().as_secs_f64();
        progress("smoother eigen-estimates and coarse factorization");
        let t = Instant::now();
        h.refresh_smoothers_and_coarse()?;
        h.timings.matrix_setup_s += t.elapsed().as_secs_f64();
        Ok(h)
    }

    /// Matrix setup for new fine-operator values (same pattern): numeric
    /// products on every level, smoothers, coarse factorization. Aggregates and
    /// `P` are reused. Allocates nothing. Returns the elapsed seconds.
    pub fn refresh(&mut self, a0_values: &[f64]) -> Result<f64, RuntimeError> {
        let t = Instant::now();
        let expected = self.levels[0].a.values().len();
        if a0_values.len() != expected {
            return Err(RuntimeError::ValuesLength {
                got: a0_values.len(),
                expected,
            });
        }
        if let Some(i) = a0_values.iter().position(|v| !v.is_finite()) {
            return Err(RuntimeError::NotFinite {
                what: format!("new fine-operator value {i}"),
            });
        }
        self.levels[0].a.values_mut().copy_from_slice(a0_values);
        let t_num = Instant::now();
        for l in 0..self.levels.len() - 1 {
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            let lev = &mut fine[l];
            let tr = lev
                .transfer
                .as_mut()
                .expect("every level but the coarsest has a transfer");
            tr.product.numeric(&lev.a, &tr.p, &mut coarse[0].a)?;
        }
        self.timings.galerkin_numeric_s = t_num.elapsed().as_secs_f64();
        self.refresh_smoothers_and_coarse()?;
        let dt = t.elapsed().as_secs_f64();
        self.timings.matrix_setup_s = dt;
        Ok(dt)
    }

    fn refresh_smoothers_and_coarse(&mut self) -> Result<(), RuntimeError> {
        for (l, lev) in self.levels.iter_mut().enumerate() {
            if let Some(s) = lev.smoother.as_mut() {
                s.refresh(&lev.a, l)?;
            }
        }
        let l = self.levels.len() - 1;
        let a = &self.levels[l].a;
        let n = a.scalar_rows();
        let b = a.block_shape().0;
        let d = &mut self.coarse_dense;
        d.fill(0.0);
        let p = a.pattern();
        for i in 0..a.nrows() {
            for k in p.row_range(i) {
                let j = p.col_idx()[k] as usize;
                let blk = a.block(k);
                for r in 0..b {
                    for c in 0..b {
                        d[(i * b + r) * n + j * b + c] = blk[r * b + c];
                    }
                }
            }
        }
        self.coarse.refactor(d).map_err(|e| RuntimeError::CoarseFactorization {
            level: l,
            n,
            why: e.to_string(),
        })
    }

    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }
    pub fn options(&self) -> &HierarchyOptions {
        &self.options
    }
    /// The fine operator.
    pub fn operator(&self) -> &BlockCsr {
        &self.levels[0].a
    }

    /// Total stored scalars over all levels divided by the fine level's.
    pub fn operator_complexity(&self) -> f64 {
        let f = self.levels[0].a.values().len() as f64;
        self.levels.iter().map(|l| l.a.values().len() as f64).sum::<f64>() / f
    }

    pub fn summary(&self) -> Vec<LevelSummary> {
        self.levels
            .iter()
            .enumerate()
            .map(|(l, lev)| LevelSummary {
                level: l,
                block_rows: lev.a.nrows(),
                blocks: lev.a.nnzb(),
                blocks_per_row: lev.a.nnzb() as f64 / lev.a.nrows().max(1) as f64,
                block_size: lev.a.block_shape().0,
                scalar_rows: lev.a.scalar_rows(),
                product: lev.transfer.as_ref().map(|t| t.schedule.stats),
                variant: lev.transfer.as_ref().map(|t| t.product.variant().name()),
                aggregates: lev.transfer.as_ref().map(|t| t.aggregates),
                merged_aggregates: lev.transfer.as_ref().map(|t| t.merged_aggregates),
                unaggregated_nodes: lev.transfer.as_ref().map(|t| t.unaggregated_nodes),
                chebyshev_lambda_max: lev.smoother.as_ref().map(|s| s.lambda_max),
            })
            .collect()
    }
}
