//! The beam solved end to end (`ptap solve`), on the CPU or a GPU: assembly,
//! mesh setup on the host, then matrix setup and AMG-preconditioned CG on the
//! backend, through the one generic path over `ptap_runtime::Backend`.
use crate::target::{product_options, Target};
use anyhow::{bail, Context, Result};
use ptap_amg::{Aggregation, AmgOptions};
use ptap_cuda::{Cuda, TransferCounters};
use ptap_fem::BeamProblem;
use ptap_runtime::{
    Backend, CgOptions, CgReport, CgWorkspace, Cpu, Hierarchy, HierarchyOptions, LevelSummary, MeshSetup, SetupTimings,
    SmootherPrecision,
};
use serde::Serialize;

/// What to solve, and how.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// Spatial dimension, 2 or 3.
    pub dim: usize,
    /// Beam refinement (10k x k x k Q2 hexahedra, or 10k x k quadrilaterals in 2D).
    pub k: usize,
    pub cg: CgOptions,
    /// Stop coarsening at this many scalar rows.
    pub coarse_eq_limit: usize,
    /// Level-0 strength threshold, halved on each coarser level.
    pub threshold: f64,
    /// How aggregates are formed.
    pub aggregation: Aggregation,
    /// Prolongator filter threshold and per-level factor.
    pub pf: f64,
    pub pf_scale: f64,
    /// Product variant on every level; `None` = the backend's default
    /// (two-pass on the CPU, column split on a GPU); `Some("auto")` = the
    /// traffic model's pick per level for the machine at hand, measured.
    pub variant: Option<String>,
    /// Values the V-cycle's smoothers and residuals apply (`f64`, or an `f32` copy).
    pub smoother_precision: SmootherPrecision,
}

impl SolveOptions {
    /// The 3D beam at `k` with the command line's defaults.
    pub fn beam(k: usize) -> Self {
        SolveOptions {
            dim: 3,
            k,
            cg: CgOptions {
                rtol: 1e-8,
                max_iterations: 500,
            },
            coarse_eq_limit: 2000,
            threshold: 0.05,
            aggregation: Aggregation::Natural,
            pf: AmgOptions::default().pf,
            pf_scale: AmgOptions::default().pf_scale,
            variant: None,
            smoother_precision: SmootherPrecision::F64,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SolvePhases {
    pub problem_setup_s: f64,
    pub assembly_s: f64,
    pub mesh_setup_s: f64,
    pub matrix_setup_s: f64,
    pub galerkin_numeric_s: f64,
    pub solve_s: f64,
}

/// One solve's report (`ptap solve --json`). A CG that did not converge is
/// reported (`converged: false`), not an error.
#[derive(Clone, Debug, Serialize)]
pub struct SolveReport {
    pub problem: &'static str,
    pub dim: usize,
    pub k: usize,
    pub elements: usize,
    pub dofs: usize,
    pub threads: usize,
    pub iterations: usize,
    pub converged: bool,
    pub relative_residual: f64,
    pub max_displacement: f64,
    pub operator_complexity: f64,
    pub aggregation: &'static str,
    /// The smoother's value precision (`f64` or `f32`).
    pub smoother_precision: &'static str,
    pub pf: f64,
    pub levels: Vec<LevelSummary>,
    pub phases: SolvePhases,
    /// The setup phases in detail: mesh setup per level and step, upload by kind.
    pub setup: SetupTimings,
    pub residual_history: Vec<f64>,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda: Option<CudaSolveInfo>,
    /// The displacement (not in the JSON report).
    #[serde(skip)]
    pub solution: Vec<f64>,
}

/// What the device solve adds to the report (JSON key `cuda`).
#[derive(Clone, Debug, Serialize)]
pub struct CudaSolveInfo {
    pub name: String,
    pub arch: String,
    /// Kernels launched with programmatic dependent launch (`Device::programmatic_launch`).
    pub programmatic_launch: bool,
    pub product_variants: Vec<&'static str>,
    pub coarse_rows: usize,
    /// `lambda_max(D^-1 A)` per smoothed level, estimated on the device.
    pub lambda_max: Vec<f64>,
    pub kernels_compiled: usize,
    pub kernels_from_cache: usize,
    /// First matrix setup on the device (cold), and a second one (hot).
    pub matrix_setup_s: f64,
    pub hot_matrix_setup_s: f64,
    pub hot_galerkin_numeric_s: f64,
    /// First CG solve on the device, then a second from zero (hot).
    pub solve_s: f64,
    pub hot_solve_s: f64,
    pub hot_iterations: usize,
    pub hot_s_per_iteration: f64,
    /// Bytes per phase over the upload, the first matrix setup and solve (the
    /// hot repetitions are not counted).
    pub transfers: TransferCounters,
}

/// The outcome of one solve on any backend.
pub struct Solved<B: Backend> {
    pub h: Hierarchy<B>,
    pub cg: CgReport,
    pub history: Vec<f64>,
}

/// Puts `setup` on `backend` (matrix setup there) and solves `A x = b` from the `x` given.
pub fn solve_on<B: Backend>(
    backend: B,
    setup: MeshSetup,
    b: &[f64],
    cg: &CgOptions,
    x: &mut [f64],
    progress: &mut dyn FnMut(&str),
) -> Result<Solved<B>> {
    let mut h = Hierarchy::new(backend, setup, progress)?;
    progress("solving with CG + AMG V-cycle");
    let mut ws: CgWorkspace<B> = h.workspace(cg.max_iterations)?;
    let rep = h.solve(b, x, cg, &mut ws)?;
    Ok(Solved {
        cg: rep,
        history: ws.history().to_vec(),
        h,
    })
}

/// The device's figures after a solve: a hot matrix setup and a hot solve from
/// zero are run again and timed (not counted in the transfers).
pub fn device_info(s: &mut Solved<Cuda>, b: &[f64], cg: &CgOptions) -> Result<CudaSolveInfo> {
    let dev = s.h.backend().device().clone();
    let transfers = dev.counters();
    let matrix_setup_s = s.h.timings.matrix_setup_s;
    let hot_matrix_setup_s = s.h.matrix_setup()?;
    let mut ws = s.h.workspace(cg.max_iterations)?;
    let mut x2 = vec![0.0; b.len()];
    let hot = s.h.solve(b, &mut x2, cg, &mut ws)?;
    if hot.iterations != s.cg.iterations {
        bail!(
            "the device solve is not repeatable: {} then {} iterations",
            s.cg.iterations,
            hot.iterations
        );
    }
    let stats = dev.compile_stats();
    Ok(CudaSolveInfo {
        name: dev.name().to_string(),
        arch: dev.arch().to_string(),
        programmatic_launch: dev.programmatic_launch(),
        product_variants: s.h.level_variants().iter().map(|v| v.name()).collect(),
        coarse_rows: s.h.coarse_rows(),
        lambda_max: s.h.lambda_max(),
        kernels_compiled: stats.compiled,
        kernels_from_cache: stats.cached,
        matrix_setup_s,
        hot_matrix_setup_s,
        hot_galerkin_numeric_s: s.h.timings.galerkin_numeric_s,
        solve_s: s.cg.solve_s,
        hot_solve_s: hot.solve_s,
        hot_iterations: hot.iterations,
        hot_s_per_iteration: hot.solve_s / hot.iterations.max(1) as f64,
        transfers,
    })
}

/// Solves the beam of `options` on `target`. `progress` gets a line per phase.
pub fn run(options: &SolveOptions, target: &Target, progress: &mut dyn FnMut(&str)) -> Result<SolveReport> {
    let (dim, k) = (options.dim, options.k);
    progress(&format!("assembling the {dim}D beam at k = {k}"));
    let problem =
        BeamProblem::build_in(dim, k).with_context(|| format!("building the {dim}D beam problem at k = {k}"))?;
    let dofs = problem.a.scalar_rows();
    let (problem_setup_s, assembly_s) = (problem.timings.setup_s, problem.timings.assembly_s);

    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = options.coarse_eq_limit;
    opts.amg.threshold = options.threshold;
    opts.amg.aggregation = options.aggregation;
    (opts.amg.pf, opts.amg.pf_scale) = (options.pf, options.pf_scale);
    opts.smoother_precision = options.smoother_precision;
    let cg = &options.cg;
    let variant = options.variant.as_deref();
    let mut x = vec![0.0; dofs];
    // Mesh setup on the host, then matrix setup and CG on the backend.
    let (rep, history, levels, operator_complexity, timings, cuda) = match target {
        Target::Cuda(dev) => {
            let backend = Cuda::new(dev).context("starting the CUDA backend")?;
            product_options(&mut opts, target, variant)?;
            let setup = MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, progress)
                .context("setting up the AMG hierarchy")?;
            let mut s = solve_on(backend, setup, &problem.rhs, cg, &mut x, progress)
                .context("solving the beam on the device")?;
            let info = device_info(&mut s, &problem.rhs, cg)?;
            let h = &s.h;
            (
                s.cg,
                s.history,
                h.summary(),
                h.operator_complexity(),
                h.timings.clone(),
                Some(info),
            )
        }
        Target::Cpu => {
            product_options(&mut opts, target, variant)?;
            let setup = MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, progress)
                .context("setting up the AMG hierarchy")?;
            let s = solve_on(
                Cpu::new(opts.kernels.clone()),
                setup,
                &problem.rhs,
                cg,
                &mut x,
                progress,
            )
            .context("solving the beam")?;
            let h = &s.h;
            (
                s.cg,
                s.history,
                h.summary(),
                h.operator_complexity(),
                h.timings.clone(),
                None,
            )
        }
    };
    Ok(SolveReport {
        problem: if dim == 2 {
            "plane-strain cantilever beam, Q2 quadrilaterals, traction (1 - y, 0)"
        } else {
            "cantilever beam, Q2 hexahedra, traction (1, -z, y)"
        },
        dim,
        k,
        elements: problem.mesh.n_elements(),
        dofs,
        threads: rayon::current_num_threads(),
        iterations: rep.iterations,
        converged: rep.converged,
        relative_residual: rep.residual_norm / rep.rhs_norm,
        max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        operator_complexity,
        aggregation: options.aggregation.name(),
        smoother_precision: options.smoother_precision.name(),
        pf: options.pf,
        levels,
        phases: SolvePhases {
            problem_setup_s,
            assembly_s,
            mesh_setup_s: timings.mesh_setup_s,
            matrix_setup_s: timings.matrix_setup_s,
            galerkin_numeric_s: timings.galerkin_numeric_s,
            solve_s: rep.solve_s,
        },
        setup: timings,
        residual_history: history,
        device: cuda.as_ref().map_or("cpu".into(), |c| c.name.clone()),
        cuda,
        solution: x,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same numbers as `ptap solve --k 2` (the default hierarchy: natural
    /// aggregation, pf 0.07): 13 iterations and this tip displacement, bit for
    /// bit; with `--pf 0.03` (the paper's filter, the default before) and
    /// `--pf 0` (the unfiltered pin that predates filtering) their own.
    #[test]
    fn beam_k2_on_the_cpu() {
        for (pf, tip) in [(0.0, TIP_K2_UNFILTERED), (ptap_amg::PAPER_PF, TIP_K2_PAPER_PF)] {
            let o = SolveOptions {
                pf,
                ..SolveOptions::beam(2)
            };
            let r = run(&o, &Target::Cpu, &mut |_| {}).unwrap();
            assert_eq!(r.iterations, 13, "pf {pf}");
            assert_eq!(
                r.max_displacement.to_bits(),
                tip.to_bits(),
                "pf {pf}: {:e}",
                r.max_displacement
            );
        }
        let r = run(&SolveOptions::beam(2), &Target::Cpu, &mut |_| {}).unwrap();
        assert!(r.converged);
        assert_eq!(r.iterations, 13);
        assert_eq!(r.dofs, r.solution.len());
        assert_eq!(
            r.max_displacement.to_bits(),
            TIP_K2.to_bits(),
            "{:e}",
            r.max_displacement
        );
        assert_eq!(r.residual_history.len(), r.iterations + 1);
        assert!(r.cuda.is_none() && r.device == "cpu");
    }

    const TIP_K2: f64 = 14.778751250587018;
    const TIP_K2_PAPER_PF: f64 = 14.778751280387734;
    const TIP_K2_UNFILTERED: f64 = 14.778751274718589;
}
