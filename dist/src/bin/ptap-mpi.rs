//! `mpirun -np N ptap-mpi --k K`: the beam solved by point-block-Jacobi CG
//! over N ranks (feature `mpi`).
//!
//! Every rank assembles the whole beam and keeps only its rows (this slice's
//! simplification; distributed assembly comes with the distributed mesh
//! setup), partitions it into contiguous slabs along x, builds its halo plan
//! with the distributed inspector (and checks it against the plan read off
//! the global pattern), solves, and gathers the solution on rank 0, which
//! prints the report and writes `--json` and `--solution` (PETSc binary Vec).
use clap::Parser;
use ptap_dist::mpi_comm::{self, MpiComm};
use ptap_dist::{jacobi_pcg, BlockJacobi, CgOptions, CgWorkspace, Comm, DistMatrix, HaloPlan, LocalMatrix, Partition};
use ptap_fem::BeamProblem;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "ptap-mpi",
    about = "The beam by point-block-Jacobi CG over MPI ranks (run under mpirun)."
)]
struct Args {
    /// Beam size: 10k x k x k Q2 hexahedra.
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Relative residual target.
    #[arg(long, default_value_t = 1e-8)]
    rtol: f64,
    /// CG iteration cap.
    #[arg(long, default_value_t = 10_000)]
    max_iterations: usize,
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

/// Per-rank counts gathered on rank 0 (as f64, through [`Comm::gather`]).
fn gathered_counts(comm: &MpiComm, v: usize) -> Vec<usize> {
    comm.gather(0, &[v as f64])
        .map(|all| all.iter().map(|&x| x as usize).collect())
        .unwrap_or_default()
}

fn run(args: &Args, comm: &MpiComm) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, size) = (comm.rank(), comm.size());
    let t0 = Instant::now();
    let beam = BeamProblem::build(args.k)?;
    let assembly_s = t0.elapsed().as_secs_f64();
    let a = &beam.a;
    let bs = a.block_shape().0;

    let t1 = Instant::now();
    let part = Partition::uniform(a.nrows(), size)?;
    let local = LocalMatrix::from_global(a, &part, &part, rank)?;
    let plan = HaloPlan::build(&local, &part, comm)?;
    let inspect_s = t1.elapsed().as_secs_f64();
    // The distributed inspector must agree with the plan read off the global
    // pattern (which every rank holds in this slice).
    let mut mismatches = [f64::from(u8::from(
        plan != HaloPlan::from_global(a.pattern(), &part, &part, &local)?,
    ))];
    comm.all_reduce_sum(&mut mismatches);
    let plan_matches_global = mismatches[0] == 0.0;
    let (ghosts, boundary, neighbours) = (local.n_ghosts(), local.n_boundary(), plan.neighbours().len());
    let mut d = DistMatrix { local, plan };

    let rows = part.range(rank);
    let b = &beam.rhs[rows.start * bs..rows.end * bs];
    let mut x = vec![0.0; b.len()];
    let opts = CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };
    let jacobi = BlockJacobi::local(&d.local)?;
    let mut ws = CgWorkspace::new(&d);
    let t2 = Instant::now();
    let report = jacobi_pcg(comm, &mut d, &jacobi, b, &mut x, &opts, &mut ws)?;
    let solve_s = t2.elapsed().as_secs_f64();

    let owned = gathered_counts(comm, rows.len());
    let ghost_counts = gathered_counts(comm, ghosts);
    let boundary_counts = gathered_counts(comm, boundary);
    let neighbour_counts = gathered_counts(comm, neighbours);
    let solution = comm.gather(0, &x);
    // Both conditions are the same on every rank (reduced or collective).
    let verdict = || -> Result<(), Box<dyn std::error::Error>> {
        if !plan_matches_global {
            return Err("the distributed halo plan differs from the global inspector's".into());
        }
        if !report.converged {
            return Err(format!("CG did not converge in {} iterations", report.iterations).into());
        }
        Ok(())
    };
    let Some(u) = solution else {
        return verdict();
    };
    let tip = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if let Some(path) = &args.solution {
        ptap_io::write_petsc_vec(path, &u)?;
    }
    let json = serde_json::json!({
        "ranks": size,
        "k": args.k,
        "block_rows": a.nrows(),
        "unknowns": a.scalar_rows(),
        "partition": part.starts(),
        "owned_rows": owned,
        "ghosts": ghost_counts,
        "boundary_rows": boundary_counts,
        "neighbours": neighbour_counts,
        "plan_matches_global": plan_matches_global,
        "reduction": "allgather, summed in rank order",
        "iterations": report.iterations,
        "converged": report.converged,
        "residual_norm": report.residual_norm,
        "rhs_norm": report.rhs_norm,
        "rtol": args.rtol,
        "tip_displacement": tip,
        "assembly_s": assembly_s,
        "inspect_s": inspect_s,
        "solve_s": solve_s,
    });
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")?;
    }
    if !args.quiet {
        println!(
            "beam k = {} ({} unknowns) on {size} rank(s), rows {:?}, ghosts {:?}",
            args.k,
            a.scalar_rows(),
            owned,
            ghost_counts
        );
        println!(
            "Jacobi-PCG: {} iterations, converged {}, ||r||/||b|| = {:.3e}, tip ||u||_inf = {tip:.12e}",
            report.iterations,
            report.converged,
            report.residual_norm / report.rhs_norm
        );
        println!("halo plan matches the global inspector: {plan_matches_global}");
    }
    verdict()
}
