//! `mpirun -np N ptap-mpi --k K` (the beam) or `mpirun -np N ptap-mpi --a A.petsc
//! --coords X [--b b]` (a user's operator): smoothed-aggregation AMG-CG over
//! N ranks (feature `mpi`); `--solver jacobi` runs point-block-Jacobi CG
//! instead.
//!
//! Every rank builds the beam (or reads the operator file) and keeps its rows
//! of a contiguous block-row partition (slabs along x for the beam). The
//! hierarchy is built over the ranks (`ptap_dist::setup`), the runtime's CG
//! and V-cycle run on `DistBackend`, and the solution is gathered on rank 0,
//! which prints the report (iterations, tip displacement `max |u|`, the
//! four-phase table with max and mean over ranks) and writes `--json` and
//! `--solution` (PETSc binary Vec).
use clap::{Parser, ValueEnum};
use ptap_dist::mpi_comm::{self, MpiComm};
use ptap_dist::{
    build_hierarchy, jacobi_pcg, BlockJacobi, CgOptions, CgWorkspace, Comm, DistMatrix, DistProblem, HaloPlan,
    LocalMatrix, Partition,
};
use ptap_fem::BeamProblem;
use ptap_io::BlockSpec;
use ptap_runtime::HierarchyOptions;
use ptap_sparse::BlockCsr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Solver {
    /// Smoothed-aggregation AMG-preconditioned CG (the runtime's V-cycle).
    Amg,
    /// Point-block-Jacobi CG.
    Jacobi,
}

#[derive(Parser, Debug)]
#[command(
    name = "ptap-mpi",
    about = "The beam, or a user's PETSc operator, by AMG-CG over MPI ranks (run under mpirun)."
)]
struct Args {
    /// Beam size: 10k x k x k Q2 hexahedra (without --a).
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// A user's operator, PETSc binary Mat (block size from its `.info`, or --block-size).
    #[arg(long)]
    a: Option<PathBuf>,
    /// Right-hand side of --a (PETSc Vec or Matrix Market); default A * ones.
    #[arg(long, requires = "a")]
    b: Option<PathBuf>,
    /// Node coordinates of --a (rigid-body modes, or the constant for 1x1 blocks);
    /// without them, translations.
    #[arg(long, requires = "a")]
    coords: Option<PathBuf>,
    /// Block size of --a when its `.info` file does not say.
    #[arg(long, requires = "a")]
    block_size: Option<usize>,
    /// The preconditioner.
    #[arg(long, value_enum, default_value_t = Solver::Amg)]
    solver: Solver,
    /// Relative residual target.
    #[arg(long, default_value_t = 1e-8)]
    rtol: f64,
    /// CG iteration cap.
    #[arg(long, default_value_t = 10_000)]
    max_iterations: usize,
    /// Scalar rows at or below which a level is the coarsest (gathered on every rank).
    #[arg(long)]
    coarse_eq_limit: Option<usize>,
    /// Writes the report as JSON (rank 0).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Writes the gathered solution as a PETSc binary Vec (rank 0).
    #[arg(long)]
    solution: Option<PathBuf>,
    /// No human-readable report.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(universe) = mpi_comm::initialize() else {
        eprintln!("error: MPI was already initialized");
        return ExitCode::FAILURE;
    };
    let comm = MpiComm::world(&universe);
    match run(&args, &comm) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error (rank {}): {e}", comm.rank());
            ExitCode::FAILURE
        }
    }
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Per-rank counts gathered on rank 0 (as f64, through [`Comm::gather`]).
fn gathered_counts(comm: &MpiComm, v: usize) -> Vec<usize> {
    comm.gather(0, &[v as f64])
        .map(|all| all.iter().map(|&x| x as usize).collect())
        .unwrap_or_default()
}

/// The whole operator, right-hand side and near-null space on every rank.
struct Problem {
    what: String,
    a: BlockCsr,
    rhs: Vec<f64>,
    near_null: Vec<f64>,
    modes: usize,
}

fn problem(args: &Args) -> Res<Problem> {
    let Some(path) = &args.a else {
        let beam = BeamProblem::build(args.k)?;
        return Ok(Problem {
            what: format!("beam k = {}", args.k),
            a: beam.a,
            rhs: beam.rhs,
            near_null: beam.near_null,
            modes: beam.modes,
        });
    };
    let spec = args.block_size.map_or(BlockSpec::Infer, |b| BlockSpec::Given(b, b));
    let a = ptap_io::read_petsc_mat(path, spec)?;
    let (b, bc) = a.block_shape();
    if b != bc || a.nrows() != a.ncols() {
        return Err(format!("{} is not a square operator with square blocks", path.display()).into());
    }
    let n = a.scalar_rows();
    let rhs = match &args.b {
        Some(p) => ptap_io::read_vector(p)?,
        None => {
            let mut y = vec![0.0; n];
            ptap_sparse::spmv::spmv(&a, &vec![1.0; n], &mut y);
            y
        }
    };
    if rhs.len() != n {
        return Err(format!("the right-hand side has {} entries for {n} rows", rhs.len()).into());
    }
    let (near_null, modes) = match &args.coords {
        Some(p) => {
            let (nodes, dim, xyz) = ptap_io::read_coordinates(p)?;
            if nodes != a.nrows() {
                return Err(format!("{nodes} coordinates for {} block rows", a.nrows()).into());
            }
            ptap_amg::near_null_from_coordinates(&xyz, dim, b)?
        }
        None => (ptap_amg::translations(a.nrows(), b), b),
    };
    Ok(Problem {
        what: path.display().to_string(),
        a,
        rhs,
        near_null,
        modes,
    })
}

/// `[max, mean]` over ranks of each value (on rank 0).
fn max_mean(comm: &MpiComm, values: &[f64]) -> Option<Vec<[f64; 2]>> {
    let all = comm.gather(0, values)?;
    let m = values.len();
    let ranks = all.len() / m;
    Some(
        (0..m)
            .map(|j| {
                let col = all.iter().skip(j).step_by(m);
                let max = col.clone().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
                [max, col.sum::<f64>() / ranks as f64]
            })
            .collect(),
    )
}

fn run(args: &Args, comm: &MpiComm) -> Res<()> {
    let (rank, size) = (comm.rank(), comm.size());
    let t0 = Instant::now();
    let prob = problem(args)?;
    let a = &prob.a;
    let bs = a.block_shape().0;
    let part = Partition::uniform(a.nrows(), size)?;
    let local = LocalMatrix::from_global(a, &part, &part, rank)?;
    let rows = part.range(rank);
    let b = prob.rhs[rows.start * bs..rows.end * bs].to_vec();
    let assembly_s = t0.elapsed().as_secs_f64();
    let mut x = vec![0.0; b.len()];
    let owned = gathered_counts(comm, rows.len());
    let ghost_counts = gathered_counts(comm, local.n_ghosts());

    let (iterations, converged, residual_norm, rhs_norm, mesh_setup_s, matrix_setup_s, solve_s, extra) =
        match args.solver {
            Solver::Jacobi => {
                let t1 = Instant::now();
                let plan = HaloPlan::build(&local, &part, comm)?;
                let plan_matches_global = {
                    let mut mismatches = [f64::from(u8::from(
                        plan != HaloPlan::from_global(a.pattern(), &part, &part, &local)?,
                    ))];
                    comm.all_reduce_sum(&mut mismatches);
                    mismatches[0] == 0.0
                };
                if !plan_matches_global {
                    return Err("the distributed halo plan differs from the global inspector's".into());
                }
                let mut d = DistMatrix { local, plan };
                let jacobi = BlockJacobi::local(&d.local)?;
                let mut ws = CgWorkspace::new(&d);
                let setup_s = t1.elapsed().as_secs_f64();
                let opts = CgOptions {
                    rtol: args.rtol,
                    max_iterations: args.max_iterations,
                };
                let t2 = Instant::now();
                let report = jacobi_pcg(comm, &mut d, &jacobi, &b, &mut x, &opts, &mut ws)?;
                let solve_s = t2.elapsed().as_secs_f64();
                (
                    report.iterations,
                    report.converged,
                    report.residual_norm,
                    report.rhs_norm,
                    0.0,
                    setup_s,
                    solve_s,
                    serde_json::json!({ "plan_matches_global": true }),
                )
            }
            Solver::Amg => {
                let mut options = HierarchyOptions::default();
                if let Some(limit) = args.coarse_eq_limit {
                    options.amg.coarse_eq_limit = limit;
                }
                let nn = prob.near_null[rows.start * bs * prob.modes..rows.end * bs * prob.modes].to_vec();
                let dp = DistProblem {
                    a: local,
                    part: part.clone(),
                    near_null: nn,
                    modes: prob.modes,
                };
                let (mut h, setup) = build_hierarchy(comm, dp, &options, &mut |_| {})?;
                let mut ws = h.workspace(args.max_iterations)?;
                let opts = ptap_runtime::CgOptions {
                    rtol: args.rtol,
                    max_iterations: args.max_iterations,
                };
                let report = h.solve(&b, &mut x, &opts, &mut ws)?;
                (
                    report.iterations,
                    report.converged,
                    report.residual_norm,
                    report.rhs_norm,
                    setup.mesh_setup_s,
                    h.timings.matrix_setup_s,
                    report.solve_s,
                    serde_json::json!({ "levels": setup.levels }),
                )
            }
        };

    let phases = max_mean(comm, &[assembly_s, mesh_setup_s, matrix_setup_s, solve_s]);
    let solution = comm.gather(0, &x);
    let verdict = || -> Res<()> {
        if !converged {
            return Err(format!("CG did not converge in {iterations} iterations").into());
        }
        Ok(())
    };
    let (Some(u), Some(phases)) = (solution, phases) else {
        return verdict();
    };
    let tip = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if let Some(path) = &args.solution {
        ptap_io::write_petsc_vec(path, &u)?;
    }
    let names = [
        if args.a.is_some() { "read" } else { "assembly" },
        "mesh setup",
        "matrix setup",
        "solve",
    ];
    let phase_json: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .zip(&phases)
        .map(|(n, [max, mean])| (n.replace(' ', "_"), serde_json::json!({ "max_s": max, "mean_s": mean })))
        .collect();
    let mut json = serde_json::json!({
        "ranks": size,
        "problem": prob.what,
        "k": args.a.is_none().then_some(args.k),
        "solver": format!("{:?}", args.solver).to_lowercase(),
        "block_rows": a.nrows(),
        "unknowns": a.scalar_rows(),
        "partition": part.starts(),
        "owned_rows": owned,
        "ghosts": ghost_counts,
        "reduction": "allgather, summed in rank order",
        "iterations": iterations,
        "converged": converged,
        "residual_norm": residual_norm,
        "rhs_norm": rhs_norm,
        "rtol": args.rtol,
        "tip_displacement": tip,
        "phases": phase_json,
    });
    if let (Some(obj), serde_json::Value::Object(extra)) = (json.as_object_mut(), extra) {
        obj.extend(extra);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")?;
    }
    if !args.quiet {
        println!(
            "{} ({} unknowns) on {size} rank(s), rows {:?}, ghosts {:?}",
            prob.what,
            a.scalar_rows(),
            owned,
            ghost_counts
        );
        if let Some(levels) = json.get("levels").and_then(|l| l.as_array()) {
            for l in levels {
                println!(
                    "  level {}: {} block rows of {}{}",
                    l["level"],
                    l["block_rows"],
                    l["block_size"],
                    if l["replicated"] == true {
                        " (whole on every rank, dense Cholesky)".to_string()
                    } else {
                        format!(
                            ", rows per rank {}, {} aggregates in {} MIS rounds",
                            l["rows_per_rank"], l["aggregates"], l["mis_rounds"]
                        )
                    }
                );
            }
        }
        println!(
            "{} CG: {iterations} iterations, converged {converged}, ||r||/||b|| = {:.3e}, tip ||u||_inf = {tip:.12e}",
            format!("{:?}", args.solver).to_uppercase(),
            residual_norm / rhs_norm
        );
        println!("{:<14} {:>10} {:>10}", "phase", "max (s)", "mean (s)");
        for (n, [max, mean]) in names.iter().zip(&phases) {
            println!("{n:<14} {max:>10.4} {mean:>10.4}");
        }
    }
    verdict()
}
