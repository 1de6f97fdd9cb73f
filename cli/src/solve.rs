//! `ptap solve`: the beam end to end, on the CPU or a GPU, or a user's own
//! operator from files (`--a`) (arguments and printing; the solves are
//! `ptap_drivers::solve` and `ptap_drivers::user`).
use crate::out::Progress;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use ptap_cuda::TransferCounters;
use ptap_drivers::solve::{CudaSolveInfo, SolveOptions, SolveReport};
use ptap_drivers::target::Target;
use ptap_drivers::user::{UserOptions, UserSolveReport};
use ptap_runtime::{CgOptions, LevelSummary};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Beam refinement: 10k x k x k Q2 elements, 3 * 20k (2k+1)^2 unknowns
    /// (k = 16 is the paper's 1.05M-dof base case). The beam only: not with --a.
    #[arg(
        long,
        default_value_t = 4,
        allow_negative_numbers = true,
        value_name = "K",
        conflicts_with = "a"
    )]
    pub(crate) k: i64,
    /// Spatial dimension: 3 (Q2 hexahedra, 3x3 blocks, 6 rigid modes) or 2
    /// (plane strain on [0,10] x [-0.5,0.5], 10k x k Q2 quadrilaterals, 2x2
    /// blocks, 3 rigid modes, end traction (1 - y, 0)). The beam only: not with --a.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3), conflicts_with = "a")]
    pub(crate) dim: u8,
    /// Solve your own operator instead of the beam: a symmetric positive
    /// definite matrix in Matrix Market (coordinate or array, general or
    /// symmetric) or PETSc binary (told apart by content).
    #[arg(long, value_name = "FILE")]
    pub(crate) a: Option<PathBuf>,
    /// Right-hand side for --a (Matrix Market or PETSc binary vector; default: A * ones).
    #[arg(long, value_name = "FILE", requires = "a")]
    pub(crate) b: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) near_null: crate::common::NearNullArgs,
    /// Write the solution (of the beam or of --a) to FILE (PETSc binary for
    /// .petsc or .bin, else a Matrix Market array; written atomically, only
    /// when CG converged).
    #[arg(long, value_name = "FILE")]
    pub(crate) x_out: Option<PathBuf>,
    /// Write the report as JSON to PATH (keys: dofs, iterations, converged,
    /// max_displacement, levels, products, phases, ...; with --a: matrix,
    /// block_size, near_null, iterations, max_abs, levels, phases, ...).
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Relative tolerance on the unpreconditioned residual norm, in [1e-15, 1).
    #[arg(long, default_value_t = 1e-8, value_parser = crate::common::rtol)]
    pub(crate) rtol: f64,
    /// CG iteration cap, 1 to 1,000,000.
    #[arg(long, default_value_t = 500, value_parser = crate::common::count_in::<1, 1000000>)]
    pub(crate) max_iterations: usize,
    /// Stop coarsening at this many scalar rows, 1 to 8000 (the dense coarse
    /// solve's limit; the paper: 2000).
    #[arg(long, default_value_t = 2000, value_parser = crate::common::count_in::<1, 8000>)]
    pub(crate) coarse_eq_limit: usize,
    /// Level-0 strength threshold, halved on each coarser level (the paper: 0.05).
    #[arg(long, default_value_t = 0.05)]
    pub(crate) threshold: f64,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    pub(crate) aggregation: ptap_amg::Aggregation,
    #[arg(long, default_value = "f64", value_parser = crate::common::smoother_precision, help = crate::common::SMOOTHER_PRECISION_HELP)]
    pub(crate) smoother_precision: ptap_runtime::SmootherPrecision,
    /// Prolongator filter: drop blocks of P below PF times their row's largest
    /// block, then restore the near-null space row by row (the default is the
    /// fastest measured hot step; the paper: 0.03; 0 = off).
    #[arg(long, default_value_t = ptap_amg::AmgOptions::default().pf, value_name = "PF")]
    pub(crate) pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub(crate) pf_scale: f64,
    /// Galerkin-product variant on every level (two-pass, fused, fused-rcm,
    /// slot-tiled, panel-tiled, flat-stream, outer-product, column-split, or the
    /// paper's labels V0..V4), `auto` to pick per level from the traffic model
    /// of this machine (measured), or `default`: two-pass on the CPU, column
    /// split on the GPU. outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long, default_value = "default")]
    pub(crate) variant: String,
    /// Do not print progress or the human-readable report.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Where matrix setup and solve run: cpu, cuda (fails without a GPU) or
    /// auto (CUDA when present, else the CPU, said so).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    pub(crate) device: String,
    #[cfg(feature = "mpi")]
    #[command(flatten)]
    pub(crate) mpi: crate::common::MpiArgs,
}

/// The AMG and CG options of the command line, for the front door.
fn solver_options(args: &SolveArgs) -> ptap::SolverOptions {
    let cg = CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };
    let amg = (args.aggregation, args.pf, args.pf_scale);
    let mut o = crate::common::solver_options(cg, Some(args.variant.as_str()), amg, args.smoother_precision);
    o.hierarchy.amg.coarse_eq_limit = args.coarse_eq_limit;
    o.hierarchy.amg.threshold = args.threshold;
    o
}

pub fn run(args: &SolveArgs) -> Result<()> {
    #[cfg(feature = "mpi")]
    if args.mpi.length != 1 {
        bail!("--length stretches the beam over MPI ranks; run it under mpirun");
    }
    if let Some(a) = &args.a {
        return run_user(args, a);
    }
    let dim = args.dim as usize;
    let k = crate::common::validate_beam(dim, args.k)?;
    if !(args.threshold >= 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be in [0, 1), got {}", args.threshold);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    if let Some(x) = &args.x_out {
        // Refused before the solve, not after it.
        ptap_io::fsio::check_replaceable(x)
            .map_err(|e| anyhow!("cannot write the solution to {}: {e}", x.display()))?;
    }
    let target = match crate::common::open(&args.device)? {
        Some(dev) => Target::Cuda(dev),
        None => Target::Cpu,
    };
    let options = SolveOptions {
        dim,
        k,
        cg: CgOptions {
            rtol: args.rtol,
            max_iterations: args.max_iterations,
        },
        coarse_eq_limit: args.coarse_eq_limit,
        threshold: args.threshold,
        aggregation: args.aggregation,
        pf: args.pf,
        pf_scale: args.pf_scale,
        variant: (args.variant != "default").then(|| args.variant.clone()),
        smoother_precision: args.smoother_precision,
    };
    let progress = Progress::spinner(args.quiet);
    let report = ptap_drivers::solve::run(&options, &target, &mut |m: &str| progress.phase(m))?;
    progress.finish();
    if !args.quiet {
        print_report(&report);
        if let Some(c) = &report.cuda {
            print_cuda(c);
        }
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &report)?;
    }
    if !report.converged {
        bail!(
            "CG did not reach rtol {:e} in {} iterations (relative residual {:.3e}); raise --max-iterations or check the operator",
            args.rtol,
            report.iterations,
            report.relative_residual
        );
    }
    if let Some(path) = &args.x_out {
        crate::common::write_vector(path, &report.solution)?;
    }
    Ok(())
}

/// `ptap solve --a FILE`: the user's operator through the front door.
fn run_user(args: &SolveArgs, a: &std::path::Path) -> Result<()> {
    if !(args.threshold >= 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be in [0, 1), got {}", args.threshold);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    if let Some(x) = &args.x_out {
        // Refused before the solve, not after it.
        ptap_io::fsio::check_replaceable(x)
            .map_err(|e| anyhow!("cannot write the solution to {}: {e}", x.display()))?;
    }
    let options = UserOptions {
        near_null: args.near_null.source(),
        block_size: args.near_null.block_size,
        device: args.device.parse()?,
        solver: solver_options(args),
    };
    let pb = Progress::spinner(args.quiet);
    let report = ptap_drivers::user::solve(a, args.b.as_deref(), &options, &mut |m: &str| pb.phase(m));
    pb.finish();
    let report = report?;
    if let Some(why) = &report.cpu_fallback {
        errln!("--device auto: {why}; solving on the CPU");
    }
    if !args.quiet {
        print_user_report(&report);
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &report)?;
    }
    if !report.converged {
        bail!(
            "CG did not reach rtol {:e} in {} iterations (relative residual {:.3e}), so no solution was written; raise --max-iterations, check that the operator is symmetric positive definite, or give its near-null space (--coords or --near-null)",
            args.rtol,
            report.iterations,
            report.relative_residual
        );
    }
    if let Some(path) = &args.x_out {
        crate::common::write_vector(path, &report.solution)?;
    }
    Ok(())
}

fn print_user_report(r: &UserSolveReport) {
    let source = match r.block_size_source {
        "given" => "--block-size",
        "coordinates" => "one node per block row",
        _ => "detected",
    };
    outln!(
        "{} ({}): {} rows, {} block rows of {b}x{b} ({source}), {} stored blocks",
        r.matrix,
        r.format,
        thousands(r.scalar_rows),
        thousands(r.block_rows),
        thousands(r.stored_blocks),
        b = r.block_size,
    );
    let nn = &r.near_null;
    let source = match nn.source {
        "coordinates" if nn.modes > 1 => format!(
            "rigid-body modes from the {}D coordinates in {}",
            nn.dim.unwrap_or(0),
            nn.path.as_deref().unwrap_or("?")
        ),
        "coordinates" => format!(
            "the constant (a scalar operator; coordinates in {})",
            nn.path.as_deref().unwrap_or("?")
        ),
        "file" => format!("from {}", nn.path.as_deref().unwrap_or("?")),
        _ if nn.default => "translations (the default, as neither --coords nor --near-null was given)".to_string(),
        _ => "translations".to_string(),
    };
    outln!(
        "near-null space: {source}, {} mode{}",
        nn.modes,
        if nn.modes == 1 { "" } else { "s" }
    );
    outln!("right-hand side: {}", r.rhs);
    outln!("device: {}, {} threads", r.device, r.threads);
    outln!();
    print_levels(&r.levels);
    outln!();
    outln!(
        "CG: {} iterations, {} (||r||/||b|| = {:.3e}), operator complexity {:.3}",
        r.iterations,
        if r.converged { "converged" } else { "NOT converged" },
        r.relative_residual,
        r.operator_complexity
    );
    outln!("||x||_inf = {:.10e}", r.max_abs);
    outln!();
    let p = &r.phases;
    outln!("phase                seconds");
    outln!(
        "read              {:>10.3}   (matrix, right-hand side, near-null space)",
        p.read_s
    );
    print_setup_and_solve(
        p.mesh_setup_s,
        p.matrix_setup_s,
        p.galerkin_numeric_s,
        p.solve_s,
        r.iterations,
    );
}

/// The phase table's last three rows, shared by the beam and the user solve.
fn print_setup_and_solve(mesh_s: f64, matrix_s: f64, numeric_s: f64, solve_s: f64, iterations: usize) {
    outln!("mesh setup        {mesh_s:>10.3}   (strength, aggregation, P, symbolic products)");
    outln!("matrix setup      {matrix_s:>10.3}   (numeric P^T A P {numeric_s:.3}, smoothers, coarse factor)");
    outln!(
        "solve             {solve_s:>10.3}   ({:.1} ms per iteration)",
        1e3 * solve_s / iterations.max(1) as f64
    );
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

fn print_report(r: &SolveReport) {
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
    print_levels(&r.levels);
    outln!();
    outln!(
        "CG: {} iterations, {} (||r||/||b|| = {:.3e}), operator complexity {:.3} (aggregation {}, pf {})",
        r.iterations,
        if r.converged { "converged" } else { "NOT converged" },
        r.relative_residual,
        r.operator_complexity,
        r.aggregation,
        r.pf
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
    print_setup_and_solve(
        p.mesh_setup_s,
        p.matrix_setup_s,
        p.galerkin_numeric_s,
        p.solve_s,
        r.iterations,
    );
}

/// The hierarchy: one row per level, one per Galerkin product (the paper's tab:hier).
fn print_levels(levels: &[LevelSummary]) {
    outln!(
        "{:>5} {:>11} {:>12} {:>10} {:>6}",
        "level",
        "block_rows",
        "blocks",
        "blocks/row",
        "block"
    );
    for l in levels {
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
    for (i, l) in levels.iter().enumerate() {
        if let Some(p) = &l.product {
            let bc = levels[i + 1].block_size;
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
    if levels.iter().any(|l| l.variant == Some("outer-product")) {
        outln!("note: outer-product is non-deterministic (atomic scatter): the last bits of A_c and of the solution change from run to run");
    }
}

fn print_cuda(c: &CudaSolveInfo) {
    outln!();
    outln!(
        "device {} ({}), products {}, coarse Cholesky of {} rows on the device",
        c.name,
        c.arch,
        c.product_variants.join(" / "),
        c.coarse_rows
    );
    outln!(
        "device phases: matrix setup {:.4} s (hot {:.4} s, numeric P^T A P {:.4} s), solve {:.4} s (hot {:.4} s, {:.3} ms per iteration)",
        c.matrix_setup_s,
        c.hot_matrix_setup_s,
        c.hot_galerkin_numeric_s,
        c.solve_s,
        c.hot_solve_s,
        1e3 * c.hot_s_per_iteration
    );
    outln!("lambda_max per level (device): {:?}", c.lambda_max);
    print_transfers(&c.transfers);
}

fn print_transfers(t: &TransferCounters) {
    outln!(
        "{:<22} {:>14} {:>8} {:>14} {:>8}",
        "transfers",
        "host->device",
        "copies",
        "device->host",
        "copies"
    );
    for (phase, t) in &t.phases {
        outln!(
            "{:<22} {:>14} {:>8} {:>14} {:>8}",
            phase,
            t.h2d_bytes,
            t.h2d_copies,
            t.d2h_bytes,
            t.d2h_copies
        );
    }
}
