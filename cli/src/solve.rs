//! `ptap solve`: the beam end to end, on the CPU or a GPU.
use crate::solve_cuda::solve_on;
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ptap_cuda::Cuda;
use ptap_fem::BeamProblem;
use ptap_runtime::{CgOptions, Cpu, HierarchyOptions, LevelSummary, MeshSetup};
use ptap_schedules::Variant;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Beam refinement: 10k x k x k Q2 elements, 3 * 20k (2k+1)^2 unknowns
    /// (k = 16 is the paper's 1.05M-dof base case).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Spatial dimension: 3 (Q2 hexahedra, 3x3 blocks, 6 rigid modes) or 2
    /// (plane strain on [0,10] x [-0.5,0.5], 10k x k Q2 quadrilaterals, 2x2
    /// blocks, 3 rigid modes, end traction (1 - y, 0)).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    dim: u8,
    /// Write the report as JSON to PATH (keys: dofs, iterations, converged,
    /// max_displacement, levels, products, phases, ...).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Relative tolerance on the unpreconditioned residual norm, in [1e-15, 1).
    #[arg(long, default_value_t = 1e-8, value_parser = crate::common::rtol)]
    rtol: f64,
    /// CG iteration cap, 1 to 1,000,000.
    #[arg(long, default_value_t = 500, value_parser = crate::common::count_in::<1, 1000000>)]
    max_iterations: usize,
    /// Stop coarsening at this many scalar rows, 1 to 8000 (the dense coarse
    /// solve's limit; the paper: 2000).
    #[arg(long, default_value_t = 2000, value_parser = crate::common::count_in::<1, 8000>)]
    coarse_eq_limit: usize,
    /// Level-0 strength threshold, halved on each coarser level (the paper: 0.05).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Prolongator filter: drop blocks of P below PF times their row's largest
    /// block, then restore the near-null space row by row (the paper: 0.03;
    /// 0 = off).
    #[arg(long, default_value_t = 0.0, value_name = "PF")]
    pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pf_scale: f64,
    /// Galerkin-product variant on every level (two-pass, fused, fused-rcm,
    /// slot-tiled, panel-tiled, flat-stream, outer-product, column-split, or the
    /// paper's labels V0..V4), `auto` to pick per level from the traffic model
    /// of this machine (measured), or `default`: two-pass on the CPU, column
    /// split on the GPU. outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long, default_value = "default")]
    variant: String,
    /// Do not print progress or the human-readable report.
    #[arg(long)]
    quiet: bool,
    /// Where matrix setup and solve run: cpu, cuda (fails without a GPU) or
    /// auto (CUDA when present, else the CPU, said so).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    device: String,
}

#[derive(Serialize)]
struct Phases {
    problem_setup_s: f64,
    assembly_s: f64,
    mesh_setup_s: f64,
    matrix_setup_s: f64,
    galerkin_numeric_s: f64,
    solve_s: f64,
}

#[derive(Serialize)]
struct Report {
    problem: &'static str,
    dim: usize,
    k: usize,
    elements: usize,
    dofs: usize,
    threads: usize,
    iterations: usize,
    converged: bool,
    relative_residual: f64,
    max_displacement: f64,
    operator_complexity: f64,
    levels: Vec<LevelSummary>,
    phases: Phases,
    residual_history: Vec<f64>,
    device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cuda: Option<crate::solve_cuda::CudaSolveInfo>,
}

fn spinner(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"));
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

pub fn run(args: &SolveArgs) -> Result<()> {
    let dim = args.dim as usize;
    let k = crate::common::validate_beam(dim, args.k)?;
    if !(args.threshold >= 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be in [0, 1), got {}", args.threshold);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    let gpu = crate::common::open(&args.device)?;
    let pb = spinner(args.quiet);

    pb.set_message(format!("assembling the {dim}D beam at k = {k}"));
    let problem =
        BeamProblem::build_in(dim, k).with_context(|| format!("building the {dim}D beam problem at k = {k}"))?;
    let dofs = problem.a.scalar_rows();
    let (problem_setup_s, assembly_s) = (problem.timings.setup_s, problem.timings.assembly_s);

    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = args.coarse_eq_limit;
    opts.amg.threshold = args.threshold;
    (opts.amg.pf, opts.amg.pf_scale) = (args.pf, args.pf_scale);
    let cg = CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };
    let mut x = vec![0.0; dofs];
    let mut progress = |m: &str| pb.set_message(m.to_string());
    // Mesh setup on the host, then matrix setup and CG on the backend.
    let (rep, history, levels, operator_complexity, timings, cuda) = match &gpu {
        Some(dev) => {
            let backend = Cuda::new(dev).context("starting the CUDA backend")?;
            let variant = (args.variant != "default").then_some(args.variant.as_str());
            crate::solve_cuda::device_product_options(&mut opts, &backend, variant)?;
            let setup = MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, &mut progress)
                .context("setting up the AMG hierarchy")?;
            let mut s = solve_on(backend, setup, &problem.rhs, &cg, &mut x, &mut progress)
                .context("solving the beam on the device")?;
            let info = crate::solve_cuda::device_info(&mut s, &problem.rhs, &cg)?;
            let h = &s.h;
            (
                s.cg,
                s.history,
                h.summary(),
                h.operator_complexity(),
                h.timings,
                Some(info),
            )
        }
        None => {
            opts.variant = match args.variant.as_str() {
                "default" => Some(Variant::TwoPass),
                v if v.eq_ignore_ascii_case("auto") => None,
                v => Some(v.parse().map_err(|e: String| anyhow::anyhow!("--variant: {e}"))?),
            };
            if opts.variant.is_none() {
                opts.machine = Some(ptap_schedules::model::MachineParams::measure_cpu());
            }
            let setup = MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, &mut progress)
                .context("setting up the AMG hierarchy")?;
            let s = solve_on(
                Cpu::new(opts.kernels.clone()),
                setup,
                &problem.rhs,
                &cg,
                &mut x,
                &mut progress,
            )
            .context("solving the beam")?;
            let h = &s.h;
            (s.cg, s.history, h.summary(), h.operator_complexity(), h.timings, None)
        }
    };
    let solve_s = rep.solve_s;
    pb.finish_and_clear();

    let max_displacement = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let report = Report {
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
        max_displacement,
        operator_complexity,
        levels,
        phases: Phases {
            problem_setup_s,
            assembly_s,
            mesh_setup_s: timings.mesh_setup_s,
            matrix_setup_s: timings.matrix_setup_s,
            galerkin_numeric_s: timings.galerkin_numeric_s,
            solve_s,
        },
        residual_history: history,
        device: cuda.as_ref().map_or("cpu".into(), |c| c.name.clone()),
        cuda,
    };
    if !args.quiet {
        print_report(&report);
        if let Some(c) = &report.cuda {
            crate::solve_cuda::print(c);
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    if !rep.converged {
        bail!(
            "CG did not reach rtol {:e} in {} iterations (relative residual {:.3e}); raise --max-iterations or check the operator",
            args.rtol,
            rep.iterations,
            report.relative_residual
        );
    }
    Ok(())
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn print_report(r: &Report) {
    let (shape, cells) = if r.dim == 2 {
        (
            "plane-strain cantilever beam",
            format!("{}x{} Q2 quadrilaterals", 10 * r.k, r.k),
        )
    } else {
        ("cantilever beam", format!("{}x{}x{} Q2 hexahedra", 10 * r.k, r.k, r.k))
    };
    outln!(
        "{shape} k = {}: {cells}, {} dofs, {} threads",
        r.k,
        thousands(r.dofs),
        r.threads
    );
    outln!();
    outln!(
        "{:>5} {:>11} {:>12} {:>10} {:>6}",
        "level",
        "block_rows",
        "blocks",
        "blocks/row",
        "block"
    );
    for l in &r.levels {
        outln!(
            "{:>5} {:>11} {:>12} {:>10.1} {:>6}",
            l.level,
            thousands(l.block_rows),
            thousands(l.blocks),
            l.blocks_per_row,
            format!("{0}x{0}", l.block_size)
        );
    }
    outln!();
    outln!(
        "{:<8} {:>9} {:>10} {:>12} {:>6} {:>11} {:>6} {:>11} {:>6} {:>8} {:>10} {:>6}  variant",
        "product",
        "A/P",
        "m_F",
        "Z_A",
        "n_A",
        "Z_P",
        "n_P",
        "Z_W",
        "w",
        "m_C",
        "Z_C",
        "n_C"
    );
    for (i, l) in r.levels.iter().enumerate() {
        if let Some(p) = &l.product {
            let bc = r.levels[i + 1].block_size;
            outln!(
                "{:<8} {:>9} {:>10} {:>12} {:>6.1} {:>11} {:>6.2} {:>11} {:>6.2} {:>8} {:>10} {:>6.1}  {}",
                format!("l{i}"),
                format!("{0}x{0}/{0}x{1}", l.block_size, bc),
                thousands(p.m_f),
                thousands(p.z_a),
                p.n_a,
                thousands(p.z_p),
                p.n_p,
                thousands(p.z_w),
                p.w,
                thousands(p.m_c),
                thousands(p.z_c),
                p.n_c,
                l.variant.unwrap_or("-")
            );
        }
    }
    if r.levels.iter().any(|l| l.variant == Some("outer-product")) {
        outln!("note: outer-product is non-deterministic (atomic scatter): the last bits of A_c and of the solution change from run to run");
    }
    outln!();
    outln!(
        "CG: {} iterations, {} (||r||/||b|| = {:.3e}), operator complexity {:.3}",
        r.iterations,
        if r.converged { "converged" } else { "NOT converged" },
        r.relative_residual,
        r.operator_complexity
    );
    outln!("tip displacement ||u||_inf = {:.10e}", r.max_displacement);
    outln!();
    let p = &r.phases;
    outln!("phase                seconds");
    outln!(
        "problem setup     {:>10.3}   (mesh, pattern, element-to-block map)",
        p.problem_setup_s
    );
    outln!("FEM assembly      {:>10.3}", p.assembly_s);
    outln!(
        "mesh setup        {:>10.3}   (strength, aggregation, P, symbolic products)",
        p.mesh_setup_s
    );
    outln!(
        "matrix setup      {:>10.3}   (numeric P^T A P {:.3}, smoothers, coarse factor)",
        p.matrix_setup_s,
        p.galerkin_numeric_s
    );
    outln!(
        "solve             {:>10.3}   ({:.1} ms per iteration)",
        p.solve_s,
        1e3 * p.solve_s / r.iterations.max(1) as f64
    );
}
