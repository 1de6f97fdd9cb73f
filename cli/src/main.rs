//! `ptap`: the command line over the ptap libraries (thin glue, no algorithms).
#[macro_use]
mod out;
mod bench;
mod common;
mod hier;
mod model;
mod ranks;
mod run;
mod schedule_cmd;
mod solve;
mod sweep;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// ptap: cheap recurring setup of block algebraic multigrid.
///
/// The AMG hierarchy's structure is analysed once (the inspector); operator
/// values are refreshed and the Galerkin products P^T A P replayed on every
/// step (the executor). `ptap solve` runs the whole pipeline on the paper's
/// cantilever beam.
#[derive(Parser, Debug)]
#[command(name = "ptap", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Worker threads, 1 to 1024 (default: all cores).
    #[arg(long, global = true, value_name = "N", value_parser = common::count_in::<1, 1024>)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Assemble the 3D cantilever beam, build the smoothed-aggregation
    /// hierarchy and solve it with AMG-preconditioned CG on the CPU.
    ///
    /// The beam is [0,10] x [-0.5,0.5]^2 with 10k x k x k Q2 hexahedra, clamped
    /// at x = 0, pulled and twisted by the traction (1, -z, y) at x = 10
    /// (shared/spec/problem.md). Prints the hierarchy (per level and per
    /// Galerkin product, the quantities of the paper's tab:hier), the CG
    /// iteration count, the tip displacement ||u||_inf and the time of each
    /// phase.
    ///
    /// With --a FILE it solves your own operator instead (Matrix Market or
    /// PETSc binary; --b, --coords or --near-null, --x-out).
    Solve(solve::SolveArgs),
    /// Time every Galerkin-product variant (V0..V4, column split) on each level
    /// of the beam hierarchy, against V0 and against V0's DRAM stream floor at
    /// the copy bandwidth measured in the same run.
    Bench(bench::BenchArgs),
    /// Print the traffic model (the paper's tab:model) for every Galerkin
    /// product of the beam hierarchy, or of A and P read from files: DRAM
    /// floors, request volumes, footprints, flops, predicted time per variant
    /// and the predicted best variant per level.
    Model(model::ModelArgs),
    /// Run the inspector once and write its schedules to a file: for the beam,
    /// the whole AMG mesh setup and one record per level product (schedule and
    /// prolongator); for A and P from files, one record. Reports the time to
    /// inspect again versus the time to load the file.
    Inspect(schedule_cmd::InspectArgs),
    /// Load a schedule file written by `ptap inspect`, check that it was built
    /// for these operators (pattern fingerprints), and run only the numeric
    /// Galerkin products, timing each and optionally writing A_c.
    Replay(schedule_cmd::ReplayArgs),
    /// The time-stepping driver: step 1 builds everything (cold); every later
    /// step changes the modulus field (a stiffening front moving along the
    /// beam), re-assembles A, replays the numeric products from the schedules,
    /// refreshes smoothers and the coarse factor, and solves. Reports the
    /// paper's four phases for the cold step and the mean of the hot steps.
    ///
    /// With --a FILES|GLOB the steps are your own operators of one pattern,
    /// one file per step: the first is inspected, every later one read,
    /// refreshed and solved.
    Run(run::RunArgs),
    /// The prolongator-filter sweep (the paper's tab:pfsweep): per threshold,
    /// iterations, hot numeric-product time, fine P blocks and hierarchy size.
    SweepFilter(sweep::SweepArgs),
    /// The beam hierarchy beside the paper's tab:hier: builds the beam and the
    /// mesh setup only (aggregation, P, the symbolic products; no solve) and
    /// prints, per Galerkin product, m_F, Z_A, n_A, Z_P, n_P, Z_W, w, m_C,
    /// Z_C, n_C next to the paper's row (at k = 16), and the operator
    /// complexity.
    Hier(hier::HierArgs),
}

fn main() -> ExitCode {
    out::restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // A usage error: its one sentence (clap's first line, with the
            // line it announces when it ends in a colon), exit 2.
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("error: invalid arguments; see --help");
            match lines.next().filter(|_| first.ends_with(':')) {
                Some(what) => errln!("{first} {what}"),
                None => errln!("{first}"),
            }
            return ExitCode::from(2);
        }
        Err(e) => {
            // Help and version go to stdout with success.
            if let Err(io) = e.print() {
                out::fail(io);
            }
            return ExitCode::SUCCESS;
        }
    };
    if let Some(n) = cli.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global() {
            errln!("error: cannot start {n} worker threads: {e}");
            return ExitCode::FAILURE;
        }
    }
    // Under mpirun: `solve` and `run` over the ranks (feature `mpi`), or a
    // refusal in one sentence on every rank.
    if let Some(n) = ranks::launched() {
        let job = match &cli.command {
            Command::Solve(a) => ranks::Job::Solve(a),
            Command::Run(a) => ranks::Job::Run(a),
            Command::Bench(_) => ranks::Job::Other("bench"),
            Command::Model(_) => ranks::Job::Other("model"),
            Command::Inspect(_) => ranks::Job::Other("inspect"),
            Command::Replay(_) => ranks::Job::Other("replay"),
            Command::SweepFilter(_) => ranks::Job::Other("sweep-filter"),
            Command::Hier(_) => ranks::Job::Other("hier"),
        };
        if let Some(code) = ranks::main(n, job) {
            return code;
        }
    }
    let result = match cli.command {
        Command::Solve(args) => solve::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Model(args) => model::run(&args),
        Command::Inspect(args) => schedule_cmd::run_inspect(&args),
        Command::Replay(args) => schedule_cmd::run_replay(&args),
        Command::Run(args) => run::run(&args),
        Command::SweepFilter(args) => sweep::run(&args),
        Command::Hier(args) => hier::run(&args),
    };
    match result {
        Ok(()) => {
            out::flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
