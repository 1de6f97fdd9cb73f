//! `ptap solve` and `ptap run` under `mpirun -np N` (feature `mpi`): the
//! same commands, their rows split over the ranks (`ptap_dist::driver` runs
//! the steps; this file maps the flags and prints rank 0's report).
//!
//! A run is under a launcher when it announces a rank count
//! (`OMPI_COMM_WORLD_SIZE` from Open MPI, `PMI_SIZE` from MPICH's Hydra);
//! only then is MPI initialized, so a build with the feature still runs
//! alone without MPI. A build without the feature refuses more than one rank
//! in one sentence (each rank would otherwise solve the whole problem alone),
//! and so do commands that do not run over ranks.

/// The rank count the MPI launcher announces, `None` outside one.
pub fn launched() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// This process's rank as the launcher announces it (for errors before MPI starts).
fn launched_rank() -> usize {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
        .unwrap_or(0)
}

/// A command's work under a launcher (without the feature only its rank count matters).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub enum Job<'a> {
    Solve(&'a crate::solve::SolveArgs),
    Run(&'a crate::run::RunArgs),
    /// Any other command (by name): it does not run over ranks.
    Other(&'static str),
}

fn refuse(line: &str) -> std::process::ExitCode {
    let line = format!("error (rank {}): {line}\n", launched_rank());
    // One write, so ranks' lines do not interleave inside a line.
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    std::process::ExitCode::FAILURE
}

/// Under a launcher of `ranks` ranks: `Some(exit code)` when this decides the
/// run, `None` to run the command alone (one rank, a command that does not
/// run over ranks).
#[cfg(not(feature = "mpi"))]
pub fn main(ranks: usize, job: Job<'_>) -> Option<std::process::ExitCode> {
    let _ = job;
    (ranks > 1).then(|| {
        refuse(&format!(
            "this ptap was built without the feature `mpi`, so each of the {ranks} ranks would solve the whole \
             problem alone; build it with `cargo build --release -p ptap-cli --features mpi` (needs Open MPI)"
        ))
    })
}

#[cfg(feature = "mpi")]
pub use with_mpi::main;

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::{refuse, Job};
    use crate::common::{MpiArgs, Solver};
    use crate::out::Progress;
    use anyhow::{anyhow, bail, Result};
    use ptap_dist::driver::{self, DriverOptions, DriverReport, NearNull, Operator};
    use ptap_dist::mpi_comm::{self, MpiComm};
    use ptap_dist::{Comm, DistOptions};
    use ptap_runtime::{CgOptions, HierarchyOptions};
    use serde_json::Value;
    use std::path::PathBuf;
    use std::process::ExitCode;

    pub fn main(ranks: usize, job: Job<'_>) -> Option<ExitCode> {
        let name = match job {
            Job::Other(name) => name,
            Job::Solve(_) | Job::Run(_) => "",
        };
        if !name.is_empty() {
            return (ranks > 1).then(|| {
                refuse(&format!(
                    "`ptap {name}` does not run over MPI ranks (only `ptap solve` and `ptap run` do); run it \
                     without mpirun"
                ))
            });
        }
        let Some(universe) = mpi_comm::initialize() else {
            return Some(refuse("MPI was already initialized"));
        };
        let comm = MpiComm::world(&universe);
        let result = match job {
            Job::Solve(a) => solve(&comm, a),
            Job::Run(a) => run(&comm, a),
            Job::Other(_) => Ok(()),
        };
        crate::out::flush();
        Some(match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                mpi_comm::eprint_line(&format!("error (rank {}): {e:#}", comm.rank()));
                ExitCode::FAILURE
            }
        })
    }

    /// The hierarchy options from the flags both commands share; the default
    /// product is two-pass on CPU ranks and the tensor pair (the device's
    /// default, as a single-process `--device cuda` run's) on GPU ranks.
    fn hierarchy(
        gpus: bool,
        variant: Option<&str>,
        (pf, pf_scale): (f64, f64),
        agg: ptap_amg::Aggregation,
        precision: ptap_runtime::SmootherPrecision,
    ) -> Result<HierarchyOptions> {
        crate::common::validate_pf(&[pf], pf_scale)?;
        if !gpus && precision != ptap_runtime::SmootherPrecision::F64 {
            bail!(
                "CPU ranks' smoothers apply the f64 values; --smoother-precision {precision} runs single-process or \
                 on GPU ranks (--device cuda)"
            );
        }
        if agg != ptap_amg::Aggregation::default() {
            bail!(
                "under mpirun the aggregates are {}; --aggregation {} is single-process only",
                ptap_dist::setup::aggregation_description(ptap_amg::Aggregation::default()),
                format!("{agg:?}").to_lowercase()
            );
        }
        let mut o = HierarchyOptions::default();
        (o.amg.pf, o.amg.pf_scale) = (pf, pf_scale);
        o.smoother_precision = precision;
        match variant {
            None | Some("default") if gpus => o.variant = Some(ptap_schedules::Variant::TensorPair),
            None | Some("default") => {}
            Some("auto") => o.variant = None,
            Some(v) => o.variant = Some(v.parse().map_err(|e| anyhow!("--variant {v}: {e}"))?),
        }
        Ok(o)
    }

    /// Whether the ranks run on GPUs (one each, `--device cuda`) or CPUs.
    fn on_gpus(device: &str) -> Result<bool> {
        match device {
            "cuda" => Ok(true),
            "cpu" => Ok(false),
            other => bail!(
                "under mpirun --device is cpu (CPU ranks) or cuda (one rank per GPU); --device {other} is \
                 single-process only"
            ),
        }
    }

    fn near_null(n: &crate::common::NearNullArgs) -> NearNull {
        match (&n.near_null, &n.coords) {
            (Some(f), _) => NearNull::File(f.clone()),
            (None, Some(c)) => NearNull::Coordinates(c.clone()),
            (None, None) => NearNull::Translations,
        }
    }

    fn solve(comm: &MpiComm, args: &crate::solve::SolveArgs) -> Result<()> {
        let gpus = on_gpus(&args.device)?;
        if !(args.threshold >= 0.0 && args.threshold < 1.0) {
            bail!("--threshold must be in [0, 1), got {}", args.threshold);
        }
        let mut hierarchy = hierarchy(
            gpus,
            Some(&args.variant),
            (args.pf, args.pf_scale),
            args.aggregation,
            args.smoother_precision,
        )?;
        hierarchy.amg.threshold = args.threshold;
        hierarchy.amg.coarse_eq_limit = args.coarse_eq_limit;
        let operator = match &args.a {
            Some(_) if args.mpi.length != 1 => bail!("--length stretches the beam; drop it with --a"),
            Some(a) => Operator::Files {
                a: vec![a.clone()],
                b: args.b.iter().cloned().collect(),
                near_null: near_null(&args.near_null),
                block_size: args.near_null.block_size,
            },
            None => {
                if args.dim != 3 {
                    bail!("under mpirun the beam is the 3D one (--dim 3); --dim 2 is single-process only");
                }
                Operator::Beam {
                    k: crate::common::validate_k(args.k)?,
                    length: args.mpi.length,
                    steps: 1,
                }
            }
        };
        if let Some(x) = &args.x_out {
            ptap_io::fsio::check_replaceable(x)
                .map_err(|e| anyhow!("cannot write the solution to {}: {e}", x.display()))?;
        }
        let opts = options(
            operator,
            &args.mpi,
            (args.rtol, args.max_iterations),
            hierarchy,
            args.x_out.is_some(),
        );
        let report = go(comm, &opts, gpus, args.quiet)?;
        finish(comm, &report, args.json.as_ref(), args.quiet, |u| match &args.x_out {
            Some(path) => crate::common::write_vector(path, &u[0]),
            None => Ok(()),
        })
    }

    fn run(comm: &MpiComm, args: &crate::run::RunArgs) -> Result<()> {
        let gpus = on_gpus(&args.device)?;
        if args.plot.is_some() {
            bail!("--plot draws single-process runs only for now; under mpirun use --json");
        }
        let hierarchy = hierarchy(
            gpus,
            args.variant.as_deref(),
            (args.pf, args.pf_scale),
            args.aggregation,
            args.smoother_precision,
        )?;
        let (operator, files) = if args.a.is_empty() {
            let k = crate::common::validate_k(args.k)?;
            let length = args.mpi.length;
            (
                Operator::Beam {
                    k,
                    length,
                    steps: args.steps,
                },
                Vec::new(),
            )
        } else {
            if args.mpi.length != 1 {
                bail!("--length stretches the beam; drop it with --a");
            }
            let files = crate::common::expand_files("--a", &args.a)?;
            let b = crate::common::expand_files("--b", &args.b)?;
            if b.len() > 1 && b.len() != files.len() {
                bail!(
                    "--b names {} files for {} operators; give one for every step or one per operator",
                    b.len(),
                    files.len()
                );
            }
            if let Some(dir) = &args.x_out {
                if !dir.is_dir() {
                    bail!("--x-out {} is not a directory; create it first", dir.display());
                }
            }
            let op = Operator::Files {
                a: files.clone(),
                b,
                near_null: near_null(&args.near_null),
                block_size: args.near_null.block_size,
            };
            (op, files)
        };
        let max_iterations = if files.is_empty() { 500 } else { args.max_iterations };
        let keep = args.x_out.is_some() && !files.is_empty();
        let mut opts = options(operator, &args.mpi, (args.rtol, max_iterations), hierarchy, keep);
        opts.schedule_cache = args.schedule_cache.clone();
        let report = go(comm, &opts, gpus, args.quiet)?;
        finish(comm, &report, args.json.as_ref(), args.quiet, |u| {
            if let Some(dir) = &args.x_out {
                for (x, f) in u.iter().zip(&files) {
                    crate::common::write_vector(&dir.join(crate::run::solution_name(f)), x)?;
                }
            }
            Ok(())
        })
    }

    fn options(
        operator: Operator,
        mpi: &MpiArgs,
        (rtol, max_iterations): (f64, usize),
        hierarchy: HierarchyOptions,
        keep_solutions: bool,
    ) -> DriverOptions {
        DriverOptions {
            operator,
            solver: match mpi.solver {
                Solver::Amg => driver::Solver::Amg,
                Solver::Jacobi => driver::Solver::Jacobi,
            },
            cg: CgOptions { rtol, max_iterations },
            hierarchy,
            dist: DistOptions {
                process_eq_limit: mpi.process_eq_limit,
            },
            keep_solutions,
            schedule_cache: None,
        }
    }

    /// Runs the driver (on CPU ranks, or one rank per GPU) with rank 0's
    /// progress on its terminal.
    fn go(comm: &MpiComm, opts: &DriverOptions, gpus: bool, quiet: bool) -> Result<DriverReport> {
        let pb = Progress::spinner(quiet || comm.rank() != 0);
        let report = if gpus {
            driver::run_on_gpus(comm, opts, &mut |m: &str| pb.phase(m))
        } else {
            driver::run(comm, opts, &mut |m: &str| pb.phase(m))
        };
        pb.finish();
        report.map_err(|e| anyhow!("{e}"))
    }

    /// Rank 0 prints and writes the report and the solutions; every rank
    /// fails alike when CG did not converge.
    fn finish(
        comm: &MpiComm,
        report: &DriverReport,
        json: Option<&PathBuf>,
        quiet: bool,
        write: impl FnOnce(&[Vec<f64>]) -> Result<()>,
    ) -> Result<()> {
        // Rank 0 writes; a failed write fails every rank (agreed).
        let written: Result<()> = match &report.json {
            Some(j) => (|| {
                if !quiet {
                    print(j);
                }
                if let Some(path) = json {
                    crate::common::write_json(path, j)?;
                }
                if report.converged {
                    write(&report.solutions)?;
                }
                Ok(())
            })(),
            None => Ok(()),
        };
        let mut failed = [f64::from(u8::from(written.is_err()))];
        comm.all_reduce_sum(&mut failed);
        written?;
        if failed[0] > 0.0 {
            bail!("rank 0 could not write the report or the solution");
        }
        if !report.converged {
            bail!(
                "CG did not converge in {} iterations; raise --max-iterations or check the operator",
                report.iterations
            );
        }
        Ok(())
    }

    /// Max over mean of the non-zero entries of a per-rank count array.
    pub(crate) fn imbalance(v: &Value) -> f64 {
        let c: Vec<f64> = v
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).filter(|&x| x > 0.0).collect())
            .unwrap_or_default();
        let mean = c.iter().sum::<f64>() / c.len().max(1) as f64;
        c.iter().fold(0.0f64, |m, &x| m.max(x)) / mean.max(f64::MIN_POSITIVE)
    }

    fn print(j: &Value) {
        let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
        outln!(
            "{} ({} unknowns, blocks of {}) on {} rank(s), block rows per rank {}",
            j["problem"].as_str().unwrap_or("?"),
            j["unknowns"],
            j["block_size"],
            j["ranks"],
            j["owned_rows"]
        );
        if j["assembled_elements"].is_array() {
            outln!(
                "  beam elements assembled per rank (those touching its rows): {}",
                j["assembled_elements"]
            );
        }
        if let Some(levels) = j["levels"].as_array() {
            for l in levels {
                if l["replicated"] == true {
                    outln!(
                        "  level {}: {} block rows of {} (whole on every rank, dense Cholesky)",
                        l["level"],
                        l["block_rows"],
                        l["block_size"]
                    );
                } else {
                    let count = |k: &str| l[k].as_u64().unwrap_or(0);
                    let mut deficient = String::new();
                    if count("merged_aggregates") + count("dissolved_aggregates") > 0 {
                        deficient = format!(
                            " ({} rank-deficient merged into neighbours, {} dissolved)",
                            count("merged_aggregates"),
                            count("dissolved_aggregates")
                        );
                    }
                    if count("rank_deficient_aggregates") > 0 {
                        deficient += &format!(", {} rank deficient", count("rank_deficient_aggregates"));
                    }
                    outln!(
                        "  level {}: {} block rows of {}, per rank {}, {} aggregates in {} MIS rounds{deficient}",
                        l["level"],
                        l["block_rows"],
                        l["block_size"],
                        l["rows_per_rank"],
                        l["aggregates"],
                        l["mis_rounds"]
                    );
                    outln!(
                        "    work max / mean over the ranks holding rows: rows {:.2}, blocks {:.2}{}",
                        imbalance(&l["rows_per_rank"]),
                        imbalance(&l["blocks_per_rank"]),
                        if l["coarse_rebalanced"] == true {
                            "; the level below rebalanced"
                        } else {
                            ""
                        }
                    );
                    if let Some(b) = l["balance"].as_object() {
                        let ms = |k: &str| 1e3 * b[k].as_f64().unwrap_or(f64::NAN);
                        outln!(
                            "    time per rank (product + SpMV) max / mean {:.2} over {} rank(s): product {:.3} / {:.3} ms, SpMV {:.3} / {:.3} ms",
                            b["time_max_over_mean"].as_f64().unwrap_or(f64::NAN),
                            b["ranks_with_rows"],
                            ms("product_max_s"),
                            ms("product_mean_s"),
                            ms("spmv_max_s"),
                            ms("spmv_mean_s")
                        );
                    }
                }
            }
        }
        if let Some(c) = j["schedule_cache"].as_object() {
            outln!(
                "schedule cache: {} (rank 0's entry {}){}",
                c["status"].as_str().unwrap_or("?"),
                c["path"].as_str().unwrap_or("?"),
                c["reason"].as_str().map(|r| format!(": {r}")).unwrap_or_default()
            );
        }
        let first = if j["files"] == true { "read" } else { "assembly" };
        let steps = j["steps"].as_array().map_or(&[][..], |v| v.as_slice());
        outln!(
            "{} CG, rtol {:e}; phases in seconds, max / mean over ranks",
            j["solver"].as_str().unwrap_or("?").to_uppercase(),
            f(&j["rtol"])
        );
        outln!(
            "{:>4} {:>5} {:>20} {:>17} {:>17} {:>17} {:>17}",
            "step",
            "its",
            "tip ||u||_inf",
            first,
            "mesh setup",
            "matrix setup",
            "solve"
        );
        for s in steps {
            let ph = |p: &str| {
                format!(
                    "{:.4} / {:.4}",
                    f(&s["phases"][p]["max_s"]),
                    f(&s["phases"][p]["mean_s"])
                )
            };
            outln!(
                "{:>4} {:>5} {:>20.12e} {:>17} {:>17} {:>17} {:>17}{}",
                s["step"].as_u64().unwrap_or(0),
                s["iterations"].as_u64().unwrap_or(0),
                f(&s["tip_displacement"]),
                ph("assembly"),
                ph("mesh_setup"),
                ph("matrix_setup"),
                ph("solve"),
                match (s["converged"] == true, s["inspected"] == true && s["step"] != 1) {
                    (false, _) => "  (not converged)",
                    (true, true) => "  (new pattern: inspected)",
                    (true, false) => "",
                }
            );
        }
        if let Some(s) = steps.first() {
            outln!(
                "step 1: {} iterations, ||r||/||b|| = {:.3e}",
                s["iterations"],
                f(&s["residual_norm"]) / f(&s["rhs_norm"])
            );
        }
    }
}
