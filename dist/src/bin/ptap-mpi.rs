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
    build_hierarchy, jacobi_pcg, BlockJacobi, CgOptions, CgWorkspace, Comm, DistError, DistMatrix, DistOptions,
    DistProblem, HaloPlan, LocalMatrix, Partition,
};
use ptap_fem::{stiffening_front, BeamProblem};
use ptap_io::BlockSpec;
use ptap_runtime::HierarchyOptions;
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
    /// Beam time steps: the stiffening front of `ptap run --steps` (step 1's
    /// field before the cold setup); steps 2.. refresh the hierarchy with the
    /// new values and solve again. 1 keeps the uniform modulus.
    #[arg(long, default_value_t = 1, conflicts_with = "a")]
    steps: usize,
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
    /// Prolongator filter threshold on level 0 (halved per level; the default
    /// is `ptap solve`'s, 0.03); 0 keeps P whole.
    #[arg(long, default_value_t = ptap_amg::AmgOptions::default().pf)]
    pf: f64,
    /// Consolidation: a distributed coarse level with fewer scalar rows per
    /// rank moves onto fewer ranks (PETSc's -pc_gamg_process_eq_limit); 0 never.
    #[arg(long, default_value_t = 50)]
    process_eq_limit: usize,
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
            mpi_comm::eprint_line(&format!("error (rank {}): {e}", comm.rank()));
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

/// This rank's rows of the operator, right-hand side and near-null space.
struct Problem {
    what: String,
    /// The beam, assembled whole on every rank (`None` for a user's operator).
    beam: Option<BeamProblem>,
    part: Partition,
    local: LocalMatrix,
    rhs: Vec<f64>,
    near_null: Vec<f64>,
    modes: usize,
    block_rows: usize,
    unknowns: usize,
}

/// The beam (assembled whole on every rank, which keeps its rows), or a
/// user's operator, of which each rank reads only its rows
/// (`ptap_io::read_petsc_mat_rows`) and of a PETSc right-hand side
/// (`read_petsc_vec_range`); a Matrix Market one and the coordinates are read
/// whole (rigid-body modes are orthonormalized over all nodes) and sliced.
fn problem(args: &Args, comm: &MpiComm) -> Res<Problem> {
    let (rank, size) = (comm.rank(), comm.size());
    let Some(path) = &args.a else {
        let mut beam = BeamProblem::build(args.k)?;
        if args.steps > 1 {
            beam.reassemble(&stiffening_front(&beam.mesh, 1, args.steps))?;
        }
        let bs = beam.dim;
        let part = Partition::uniform(beam.a.nrows(), size)?;
        let local = LocalMatrix::from_global(&beam.a, &part, &part, rank)?;
        let rows = part.range(rank);
        return Ok(Problem {
            what: format!("beam k = {}", args.k),
            rhs: beam.rhs[rows.start * bs..rows.end * bs].to_vec(),
            near_null: beam.near_null[rows.start * bs * beam.modes..rows.end * bs * beam.modes].to_vec(),
            modes: beam.modes,
            block_rows: beam.a.nrows(),
            unknowns: beam.a.scalar_rows(),
            beam: Some(beam),
            part,
            local,
        });
    };
    let spec = args.block_size.map_or(BlockSpec::Infer, |b| BlockSpec::Given(b, b));
    let mut part = None;
    let read = ptap_io::read_petsc_mat_rows(path, spec, |n| {
        let p = Partition::uniform(n, size);
        let range = p.as_ref().map_or(0..0, |p| p.range(rank));
        part = Some(p);
        range
    })?;
    let part = part.expect("the reader names the row count")?;
    let (b, bc) = read.a.block_shape();
    if b != bc || read.block_rows != read.block_cols {
        return Err(format!("{} is not a square operator with square blocks", path.display()).into());
    }
    let p = read.a.pattern();
    let local = LocalMatrix::from_rows(
        rank,
        &part,
        &part,
        (b, b),
        p.row_ptr().to_vec(),
        p.col_idx(),
        read.a.values().to_vec(),
    )?;
    let rows = part.range(rank);
    let n = read.block_rows * b;
    let rhs = match &args.b {
        // A PETSc Vec: this rank's entries only; Matrix Market: read whole.
        Some(f) if ptap_io::detect_format(f)? == ptap_io::FileFormat::PetscBinary => {
            let (len, mine) =
                ptap_io::read_petsc_vec_range(f, |len| if len == n { rows.start * b..rows.end * b } else { 0..0 })?;
            if len != n {
                return Err(format!("the right-hand side has {len} entries for {n} rows").into());
            }
            mine
        }
        Some(f) => {
            let all = ptap_io::read_vector(f)?;
            if all.len() != n {
                return Err(format!("the right-hand side has {} entries for {n} rows", all.len()).into());
            }
            all[rows.start * b..rows.end * b].to_vec()
        }
        None => {
            // A * ones on this rank's rows.
            let mut y = vec![0.0; rows.len() * b];
            let ones = vec![1.0; local.n_local_cols() * b];
            local.product_rows(&ones, &mut y, false);
            local.product_rows(&ones, &mut y, true);
            y
        }
    };
    let (near_null, modes) = match &args.coords {
        Some(f) => {
            let (nodes, dim, xyz) = ptap_io::read_coordinates(f)?;
            if nodes != read.block_rows {
                return Err(format!("{nodes} coordinates for {} block rows", read.block_rows).into());
            }
            let (all, modes) = ptap_amg::near_null_from_coordinates(&xyz, dim, b)?;
            (all[rows.start * b * modes..rows.end * b * modes].to_vec(), modes)
        }
        None => {
            let all = ptap_amg::translations(read.block_rows, b);
            (all[rows.start * b * b..rows.end * b * b].to_vec(), b)
        }
    };
    Ok(Problem {
        what: path.display().to_string(),
        beam: None,
        part,
        local,
        rhs,
        near_null,
        modes,
        block_rows: read.block_rows,
        unknowns: n,
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
    // Reading is rank-local: all ranks stop together if any failed.
    let prob = problem(args, comm);
    let mut failed = [f64::from(u8::from(prob.is_err()))];
    comm.all_reduce_sum(&mut failed);
    let prob = match prob {
        Err(e) => return Err(e),
        Ok(_) if failed[0] > 0.0 => {
            return Err(DistError::Elsewhere {
                ranks: failed[0] as usize,
            }
            .into())
        }
        Ok(p) => p,
    };
    let Problem {
        what,
        mut beam,
        part,
        local,
        rhs: b,
        near_null,
        modes,
        block_rows,
        unknowns,
    } = prob;
    let assembly_s = t0.elapsed().as_secs_f64();
    let bs = local.block_shape().0;
    let rows = part.range(rank);
    let mut x = vec![0.0; b.len()];
    let owned = gathered_counts(comm, rows.len());
    let ghost_counts = gathered_counts(comm, local.n_ghosts());

    let (iterations, converged, residual_norm, rhs_norm, mesh_setup_s, matrix_setup_s, solve_s, extra) =
        match args.solver {
            Solver::Jacobi => {
                let t1 = Instant::now();
                let plan = HaloPlan::build(&local, &part, comm)?;
                // Where every rank holds the whole operator, the distributed
                // inspector must agree with the plan read off its pattern.
                let plan_matches_global = match beam.as_ref().map(|p| &p.a) {
                    Some(a) => {
                        let mut mismatches = [f64::from(u8::from(
                            plan != HaloPlan::from_global(a.pattern(), &part, &part, &local)?,
                        ))];
                        comm.all_reduce_sum(&mut mismatches);
                        if mismatches[0] != 0.0 {
                            return Err("the distributed halo plan differs from the global inspector's".into());
                        }
                        Some(true)
                    }
                    None => None,
                };
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
                    serde_json::json!({ "plan_matches_global": plan_matches_global }),
                )
            }
            Solver::Amg => {
                let mut options = HierarchyOptions::default();
                options.amg.pf = args.pf;
                if let Some(limit) = args.coarse_eq_limit {
                    options.amg.coarse_eq_limit = limit;
                }
                let dist = DistOptions {
                    process_eq_limit: args.process_eq_limit,
                };
                let dp = DistProblem {
                    a: local,
                    part: part.clone(),
                    near_null,
                    modes,
                };
                let (mut h, setup) = build_hierarchy(comm, dp, &options, &dist, &mut |_| {})?;
                let mut ws = h.workspace(args.max_iterations)?;
                let opts = ptap_runtime::CgOptions {
                    rtol: args.rtol,
                    max_iterations: args.max_iterations,
                };
                let mut report = h.solve(&b, &mut x, &opts, &mut ws)?;
                // The four phases are the cold step's; hot steps report their own.
                let (matrix_setup_s, solve_s) = (h.timings.matrix_setup_s, report.solve_s);
                let mut step_reports = Vec::new();
                for step in 2..=args.steps {
                    // A hot step: new values on the same pattern, the numeric
                    // refresh over the ranks (no inspection), the solve.
                    let beam = beam.as_mut().ok_or("--steps needs the beam")?;
                    let t = Instant::now();
                    beam.reassemble(&stiffening_front(&beam.mesh, step, args.steps))?;
                    let p = beam.a.pattern();
                    let l = bs * bs;
                    let values = &beam.a.values()[p.row_ptr()[rows.start] * l..p.row_ptr()[rows.end] * l];
                    let assembly_s = t.elapsed().as_secs_f64();
                    let matrix_setup_s = h.refresh(values)?;
                    x.fill(0.0);
                    report = h.solve(&b, &mut x, &opts, &mut ws)?;
                    let local_tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let tips = comm.gather(0, &[local_tip]);
                    let phases = max_mean(comm, &[assembly_s, matrix_setup_s, report.solve_s]);
                    if let (Some(tips), Some(ph)) = (tips, phases) {
                        let pj = |i: usize| serde_json::json!({ "max_s": ph[i][0], "mean_s": ph[i][1] });
                        step_reports.push(serde_json::json!({
                            "step": step,
                            "iterations": report.iterations,
                            "converged": report.converged,
                            "tip_displacement": tips.iter().fold(0.0f64, |m, &v| m.max(v)),
                            "assembly": pj(0),
                            "matrix_setup": pj(1),
                            "solve": pj(2),
                        }));
                    }
                    if !report.converged {
                        break;
                    }
                }
                (
                    report.iterations,
                    report.converged,
                    report.residual_norm,
                    report.rhs_norm,
                    setup.mesh_setup_s,
                    matrix_setup_s,
                    solve_s,
                    serde_json::json!({ "levels": setup.levels, "steps": step_reports }),
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
        "problem": what,
        "k": args.a.is_none().then_some(args.k),
        "solver": format!("{:?}", args.solver).to_lowercase(),
        "block_rows": block_rows,
        "unknowns": unknowns,
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
            what, unknowns, owned, ghost_counts
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
                            ", rows per rank {}, {} aggregates in {} MIS rounds{}",
                            l["rows_per_rank"],
                            l["aggregates"],
                            l["mis_rounds"],
                            match l["rank_deficient_aggregates"].as_u64() {
                                Some(d) if d > 0 => format!(", {d} of them rank deficient (not merged)"),
                                _ => String::new(),
                            }
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
        println!("{:<14} {:>10} {:>10}   (cold step)", "phase", "max (s)", "mean (s)");
        for (n, [max, mean]) in names.iter().zip(&phases) {
            println!("{n:<14} {max:>10.4} {mean:>10.4}");
        }
        if let Some(steps) = json.get("steps").and_then(|v| v.as_array()).filter(|v| !v.is_empty()) {
            println!("hot steps (max / mean over ranks, s): refresh = numeric P^T A P, smoothers, coarse factor");
            for st in steps {
                let mm = |k: &str| {
                    format!(
                        "{:.4} / {:.4}",
                        st[k]["max_s"].as_f64().unwrap_or(0.0),
                        st[k]["mean_s"].as_f64().unwrap_or(0.0)
                    )
                };
                println!(
                    "  step {}: {} iterations, tip {:.12e}, assembly {}, refresh {}, solve {}",
                    st["step"],
                    st["iterations"],
                    st["tip_displacement"].as_f64().unwrap_or(f64::NAN),
                    mm("assembly"),
                    mm("matrix_setup"),
                    mm("solve")
                );
            }
        }
    }
    verdict()
}
