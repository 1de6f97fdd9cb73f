//! What `ptap solve` and `ptap run` do under `mpirun` (feature `mpi`): the
//! loop over steps, as library code the CLI calls (it parses and prints).
//!
//! Every rank loads its rows of the operator ([`Operator`]): the beam's slab
//! is assembled from the elements touching its rows only
//! ([`ptap_fem::BeamSlab`], the whole beam's values bit for bit); a user's PETSc binary
//! operator is read in parallel, each rank only its rows
//! (`ptap_io::read_petsc_mat_rows`), a Matrix Market one whole and sliced. A
//! PETSc right-hand side is read by ranges too; a Matrix Market one, the
//! coordinates and a near-null file whole (rigid-body modes are
//! orthonormalized over all nodes). Step 1 is cold: the hierarchy is built
//! over the ranks ([`crate::build_hierarchy`]) and solved. Every later step
//! (the beam's stiffening front, or the next file of the sequence) loads new
//! values on every rank and, where the pattern is the step before's (agreed
//! over the ranks), refreshes the hierarchy (numeric products, smoothers,
//! coarse factor: nothing inspected) and solves; a file of another pattern is
//! inspected anew, and the report says so.
//!
//! Each step's phases (assembly or read, mesh setup, matrix setup, solve) are
//! gathered as their maximum and mean over ranks; rank 0 gets the whole report
//! as JSON (and, when asked, the gathered solutions). A failure on one rank
//! while loading is agreed over the ranks ([`crate::agree`]) before any
//! collective, so every rank stops with a sentence instead of waiting.
use crate::{
    agree, build_hierarchy_cached, jacobi_pcg, BlockJacobi, CgOptions, CgWorkspace, Comm, DistError, DistMatrix,
    DistOptions, DistProblem, HaloPlan, LocalMatrix, Partition,
};
use ptap_fem::{stiffening_front, BeamProblem, BeamSlab};
use ptap_io::BlockSpec;
use ptap_runtime::HierarchyOptions;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A driver error: one sentence.
pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Where the near-null space of a user's operator comes from.
#[derive(Clone, Debug)]
pub enum NearNull {
    /// The block size's translations (the constant for a scalar operator).
    Translations,
    /// Nodal coordinates: rigid-body modes (or the constant for 1x1 blocks).
    Coordinates(PathBuf),
    /// A file of `rows x modes` (`ptap_io::read_near_null`).
    File(PathBuf),
}

/// The operator(s) of the run.
#[derive(Clone, Debug)]
pub enum Operator {
    /// The 3D beam at refinement `k`, `length` times longer with the same
    /// elements (1: the beam); `steps` steps of the stiffening front
    /// (`ptap run`; 1: the uniform modulus, `ptap solve`).
    Beam { k: usize, length: usize, steps: usize },
    /// A user's operators of one pattern, one per step (PETSc binary or
    /// Matrix Market), with right-hand sides (none: `A * ones`; one: every
    /// step's; else one per file).
    Files {
        a: Vec<PathBuf>,
        b: Vec<PathBuf>,
        near_null: NearNull,
        block_size: Option<usize>,
    },
}

/// The preconditioner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// Smoothed-aggregation AMG (the runtime's V-cycle on `DistBackend`).
    Amg,
    /// Point-block Jacobi (one step only).
    Jacobi,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct DriverOptions {
    pub operator: Operator,
    pub solver: Solver,
    pub cg: ptap_runtime::CgOptions,
    pub hierarchy: HierarchyOptions,
    pub dist: DistOptions,
    /// Gather every step's solution on rank 0 ([`DriverReport::solutions`]).
    pub keep_solutions: bool,
    /// The schedule cache's directory: per-rank entries of the mesh setup
    /// ([`crate::cache`]), loaded at the same rank count, else written.
    pub schedule_cache: Option<PathBuf>,
}

/// The result, on every rank; `json` and `solutions` only on rank 0.
#[derive(Debug)]
pub struct DriverReport {
    /// Every step converged (the same on every rank).
    pub converged: bool,
    /// The last step's iteration count.
    pub iterations: usize,
    /// Rank 0: the report (`ranks`, `problem`, the cold step's `iterations`,
    /// `tip_displacement`, `phases` (max and mean over ranks), `levels`,
    /// `steps[]` with each step's, `hot_mean`).
    pub json: Option<Value>,
    /// Rank 0, with `keep_solutions`: each step's gathered solution.
    pub solutions: Vec<Vec<f64>>,
}

/// A rank's rows of one operator.
struct Rows {
    /// Block size (square blocks).
    b: usize,
    /// Block rows of the whole operator.
    n: usize,
    /// Row pointers (from 0), global block columns, values of this rank's rows.
    row_ptr: Vec<usize>,
    cols: Vec<u32>,
    values: Vec<f64>,
}

impl Rows {
    fn same_pattern(&self, o: &Rows) -> bool {
        self.b == o.b && self.n == o.n && self.row_ptr == o.row_ptr && self.cols == o.cols
    }
    fn local(&self, part: &Partition, rank: usize) -> Res<LocalMatrix> {
        Ok(LocalMatrix::from_rows(
            rank,
            part,
            part,
            (self.b, self.b),
            self.row_ptr.clone(),
            &self.cols,
            self.values.clone(),
        )?)
    }
}

/// This rank's rows of a global operator.
fn rows_of(a: &ptap_sparse::BlockCsr, part: &Partition, rank: usize) -> Rows {
    let p = a.pattern();
    let r = part.range(rank);
    let (k0, k1) = (p.row_ptr()[r.start], p.row_ptr()[r.end]);
    let l = a.block_shape().0 * a.block_shape().1;
    Rows {
        b: a.block_shape().0,
        n: a.nrows(),
        row_ptr: p.row_ptr()[r.start..=r.end].iter().map(|&k| k - k0).collect(),
        cols: p.col_idx()[k0..k1].to_vec(),
        values: a.values()[k0 * l..k1 * l].to_vec(),
    }
}

/// This rank's rows of the operator file `path` on the uniform partition of
/// `size` ranks (PETSc binary: only those rows are read).
fn read_rows(path: &Path, block_size: Option<usize>, rank: usize, size: usize) -> Res<(Partition, Rows)> {
    let spec = block_size.map_or(BlockSpec::Infer, |b| BlockSpec::Given(b, b));
    let square = |b: usize, bc: usize, n: usize, nc: usize| -> Res<()> {
        if b != bc || n != nc {
            return Err(format!("{} is not a square operator with square blocks", path.display()).into());
        }
        Ok(())
    };
    if ptap_io::detect_format(path)? == ptap_io::FileFormat::PetscBinary {
        let mut part = None;
        let read = ptap_io::read_petsc_mat_rows(path, spec, |n| {
            let p = Partition::uniform(n, size);
            let range = p.as_ref().map_or(0..0, |p| p.range(rank));
            part = Some(p);
            range
        })?;
        let part = part.ok_or("the reader named no row count")??;
        let (b, bc) = read.a.block_shape();
        square(b, bc, read.block_rows, read.block_cols)?;
        let mut rows = rows_of(&read.a, &Partition::uniform(read.a.nrows(), 1)?, 0);
        rows.n = read.block_rows;
        return Ok((part, rows));
    }
    let a = ptap_io::read_matrix(path, spec)?;
    let (b, bc) = a.block_shape();
    square(b, bc, a.nrows(), a.ncols())?;
    let part = Partition::uniform(a.nrows(), size)?;
    let rows = rows_of(&a, &part, rank);
    Ok((part, rows))
}

/// This rank's entries of the right-hand side file `f` (PETSc: only those
/// are read), `n` scalar rows in all.
fn read_rhs(f: &Path, n: usize, range: std::ops::Range<usize>) -> Res<Vec<f64>> {
    if ptap_io::detect_format(f)? == ptap_io::FileFormat::PetscBinary {
        let (len, mine) = ptap_io::read_petsc_vec_range(f, |len| if len == n { range.clone() } else { 0..0 })?;
        if len != n {
            return Err(format!("the right-hand side {} has {len} entries for {n} rows", f.display()).into());
        }
        return Ok(mine);
    }
    let all = ptap_io::read_vector(f)?;
    if all.len() != n {
        return Err(format!(
            "the right-hand side {} has {} entries for {n} rows",
            f.display(),
            all.len()
        )
        .into());
    }
    Ok(all[range].to_vec())
}

/// `A * ones` on this rank's rows (ghost entries are ones too: no exchange).
fn a_ones(local: &LocalMatrix) -> Vec<f64> {
    let b = local.block_shape().0;
    let mut y = vec![0.0; local.n_rows() * b];
    let ones = vec![1.0; local.n_local_cols() * b];
    local.product_rows(&ones, &mut y, false);
    local.product_rows(&ones, &mut y, true);
    y
}

/// This rank's rows of the near-null space (`modes` columns).
fn near_null_rows(src: &NearNull, n: usize, b: usize, range: std::ops::Range<usize>) -> Res<(Vec<f64>, usize)> {
    let (all, modes) = match src {
        NearNull::Translations => (ptap_amg::translations(n, b), b),
        NearNull::Coordinates(f) => {
            let (nodes, dim, xyz) = ptap_io::read_coordinates(f)?;
            if nodes != n {
                return Err(format!("{}: {nodes} coordinates for {n} block rows", f.display()).into());
            }
            ptap_amg::near_null_from_coordinates(&xyz, dim, b)?
        }
        NearNull::File(f) => {
            let (rows, modes, data) = ptap_io::read_near_null(f)?;
            if rows != n * b {
                return Err(format!("{}: {rows} near-null rows for {} scalar rows", f.display(), n * b).into());
            }
            (data, modes)
        }
    };
    Ok((all[range.start * b * modes..range.end * b * modes].to_vec(), modes))
}

/// Free nodes (block rows) of the beam `length` times longer at refinement `k`.
fn beam_free_nodes(k: usize, length: usize) -> Res<usize> {
    let mesh = ptap_fem::beam_mesh(k, length)?;
    let [_, ny, nz] = mesh.nodes_per_dim();
    Ok(mesh.n_nodes() - ny * nz)
}

/// The report's name of the beam.
fn beam_name(k: usize, length: usize) -> String {
    if length == 1 {
        format!("beam k = {k}")
    } else {
        format!("beam k = {k} x length {length}")
    }
}

/// `[max, mean]` over ranks of each value (on rank 0).
fn max_mean<C: Comm + ?Sized>(comm: &C, values: &[f64]) -> Option<Vec<[f64; 2]>> {
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

/// Per-rank counts gathered on rank 0.
fn gathered_counts<C: Comm + ?Sized>(comm: &C, v: usize) -> Vec<usize> {
    comm.gather(0, &[v as f64])
        .map(|all| all.iter().map(|&x| x as usize).collect())
        .unwrap_or_default()
}

/// The names of the four phases, as JSON keys.
pub const PHASES: [&str; 4] = ["assembly", "mesh_setup", "matrix_setup", "solve"];

/// One step's loaded operator on this rank.
struct Loaded {
    rows: Rows,
    part: Partition,
    rhs: Vec<f64>,
    what: String,
}

/// The state of the loop: the beam (this rank's slab) or the files.
struct Source<'a> {
    opts: &'a DriverOptions,
    beam: Option<BeamSlab>,
    /// Near-null rows and modes (computed with step 1).
    near_null: Option<(Vec<f64>, usize)>,
}

impl<'a> Source<'a> {
    /// The operator source of `opts` and its number of steps (at least one).
    fn open(opts: &'a DriverOptions) -> Res<(Self, usize)> {
        let src = Source {
            opts,
            beam: None,
            near_null: None,
        };
        match src.steps() {
            0 => Err("no operator to solve".into()),
            steps => Ok((src, steps)),
        }
    }

    fn steps(&self) -> usize {
        match &self.opts.operator {
            Operator::Beam { steps, .. } => *steps,
            Operator::Files { a, .. } => a.len(),
        }
    }

    /// Step `s`'s (from 1) rows on this rank.
    fn load<C: Comm + ?Sized>(&mut self, comm: &C, s: usize) -> Res<Loaded> {
        let (rank, size) = (comm.rank(), comm.size());
        match &self.opts.operator {
            Operator::Beam { k, length, steps } => {
                let slab = match &mut self.beam {
                    Some(b) => {
                        b.assemble(&stiffening_front(&b.mesh, s, *steps))?;
                        b
                    }
                    None => {
                        let n = beam_free_nodes(*k, *length)?;
                        let mut b = BeamSlab::build_long(*k, *length, Partition::uniform(n, size)?.range(rank))?;
                        if *steps > 1 {
                            b.assemble(&stiffening_front(&b.mesh, 1, *steps))?;
                        }
                        self.beam.insert(b)
                    }
                };
                if self.near_null.is_none() {
                    self.near_null = Some((slab.near_null.clone(), slab.modes));
                }
                Ok(Loaded {
                    rows: Rows {
                        b: 3,
                        n: slab.n_free,
                        row_ptr: slab.row_ptr(),
                        cols: slab.cols(),
                        values: slab.values().to_vec(),
                    },
                    rhs: slab.rhs.clone(),
                    part: Partition::uniform(slab.n_free, size)?,
                    what: beam_name(*k, *length),
                })
            }
            Operator::Files {
                a,
                b,
                near_null,
                block_size,
            } => {
                let path = &a[s - 1];
                let (part, rows) = read_rows(path, *block_size, rank, size)?;
                let r = part.range(rank);
                let n = rows.n * rows.b;
                let rhs = match b.len() {
                    0 => None,
                    1 => Some(read_rhs(&b[0], n, r.start * rows.b..r.end * rows.b)?),
                    _ => Some(read_rhs(&b[s - 1], n, r.start * rows.b..r.end * rows.b)?),
                };
                if self.near_null.is_none() {
                    self.near_null = Some(near_null_rows(near_null, rows.n, rows.b, r.clone())?);
                }
                Ok(Loaded {
                    rhs: rhs.unwrap_or_default(),
                    rows,
                    part,
                    what: path.display().to_string(),
                })
            }
        }
    }
}

/// Runs the steps over `comm` (collective); `progress` hears each phase (on
/// every rank: the caller shows rank 0's).
pub fn run<C: Comm + ?Sized>(comm: &C, opts: &DriverOptions, progress: &mut dyn FnMut(&str)) -> Res<DriverReport> {
    let (rank, size) = (comm.rank(), comm.size());
    let (mut src, steps) = Source::open(opts)?;
    if opts.solver == Solver::Jacobi && steps > 1 {
        return Err("point-block Jacobi CG (--solver jacobi) solves one step; drop --steps or give one file".into());
    }
    let files = matches!(opts.operator, Operator::Files { .. });
    let needs_ones = matches!(&opts.operator, Operator::Files { b, .. } if b.is_empty());
    let mut step_json = Vec::new();
    let mut solutions = Vec::new();
    let mut hierarchy = None;
    let mut ws = None;
    let mut levels = Value::Null;
    let mut first_pattern: Option<Rows> = None;
    let mut cold: Option<Value> = None;
    let (mut all_converged, mut last_iterations) = (true, 0);
    for s in 1..=steps {
        let t0 = Instant::now();
        progress(&format!("step {s} of {steps}: loading the operator"));
        let mut loaded = agree(
            comm,
            src.load(comm, s).map_err(|e| DistError::Matrix { why: e.to_string() }),
        )?;
        if needs_ones {
            loaded.rhs = a_ones(&loaded.rows.local(&loaded.part, rank)?);
        }
        let same = first_pattern.as_ref().is_some_and(|p| p.same_pattern(&loaded.rows));
        let mut differs = [f64::from(u8::from(!same))];
        comm.all_reduce_sum(&mut differs);
        let inspect = hierarchy.is_none() || differs[0] > 0.0;
        if s > 1 && inspect && rank == 0 {
            crate::mpi_comm::eprint_line(&format!(
                "step {s}: {} has another block pattern than step 1's on {} rank(s); inspecting it anew",
                loaded.what, differs[0]
            ));
        }
        let assembly_s = t0.elapsed().as_secs_f64();
        let (b, rhs) = (loaded.rows.b, std::mem::take(&mut loaded.rhs));
        let mut x = vec![0.0; rhs.len()];
        let (mut mesh_setup_s, matrix_setup_s, solve_s);
        let report;
        let mut extra = json!({});
        match opts.solver {
            Solver::Jacobi => {
                let t1 = Instant::now();
                let local = loaded.rows.local(&loaded.part, rank)?;
                let plan = HaloPlan::build(&local, &loaded.part, comm)?;
                // The distributed inspector must agree with the plan read off the
                // global pattern (the beam: assembled whole for this check only).
                if let Operator::Beam { k, length: 1, .. } = &opts.operator {
                    let beam = BeamProblem::build(*k)?;
                    let global = HaloPlan::from_global(beam.a.pattern(), &loaded.part, &loaded.part, &local)?;
                    let mut mismatches = [f64::from(u8::from(plan != global))];
                    comm.all_reduce_sum(&mut mismatches);
                    if mismatches[0] != 0.0 {
                        return Err("the distributed halo plan differs from the global inspector's".into());
                    }
                    extra = json!({ "plan_matches_global": true });
                }
                let mut d = DistMatrix { local, plan };
                let jacobi = BlockJacobi::local(&d.local)?;
                let mut cg_ws = CgWorkspace::new(&d);
                matrix_setup_s = t1.elapsed().as_secs_f64();
                mesh_setup_s = 0.0;
                let cg = CgOptions {
                    rtol: opts.cg.rtol,
                    max_iterations: opts.cg.max_iterations,
                };
                progress(&format!("step {s}: Jacobi-CG"));
                let t2 = Instant::now();
                let r = jacobi_pcg(comm, &mut d, &jacobi, &rhs, &mut x, &cg, &mut cg_ws)?;
                solve_s = t2.elapsed().as_secs_f64();
                report = (r.iterations, r.converged, r.residual_norm, r.rhs_norm);
            }
            Solver::Amg => {
                mesh_setup_s = 0.0;
                if inspect {
                    let dp = DistProblem {
                        a: loaded.rows.local(&loaded.part, rank)?,
                        part: loaded.part.clone(),
                        near_null: src.near_null.clone().ok_or("no near-null space")?.0,
                        modes: src.near_null.as_ref().map_or(0, |n| n.1),
                    };
                    // The old pattern's hierarchy goes before the new one is built.
                    ws.take();
                    hierarchy.take();
                    let (h, setup) = build_hierarchy_cached(
                        comm,
                        dp,
                        &opts.hierarchy,
                        &opts.dist,
                        opts.schedule_cache.as_deref(),
                        progress,
                    )?;
                    if let Some(c) = &setup.schedule_cache {
                        extra = json!({ "schedule_cache": c });
                    }
                    mesh_setup_s = setup.mesh_setup_s;
                    matrix_setup_s = h.timings.matrix_setup_s;
                    levels = serde_json::to_value(&setup.levels)?;
                    ws = Some(h.workspace(opts.cg.max_iterations)?);
                    hierarchy = Some(h);
                } else {
                    progress(&format!("step {s}: refreshing the hierarchy"));
                    let h = hierarchy.as_mut().ok_or("no hierarchy")?;
                    matrix_setup_s = h.refresh(&loaded.rows.values)?;
                }
                let (h, w) = (
                    hierarchy.as_mut().ok_or("no hierarchy")?,
                    ws.as_mut().ok_or("no workspace")?,
                );
                progress(&format!("step {s}: AMG-CG"));
                let r = h.solve(&rhs, &mut x, &opts.cg, w)?;
                solve_s = r.solve_s;
                report = (r.iterations, r.converged, r.residual_norm, r.rhs_norm);
            }
        }
        if inspect {
            first_pattern = Some(loaded.rows);
        }
        let (iterations, converged, residual_norm, rhs_norm) = report;
        all_converged &= converged;
        last_iterations = iterations;
        let local_tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let tips = comm.gather(0, &[local_tip]);
        let phases = max_mean(comm, &[assembly_s, mesh_setup_s, matrix_setup_s, solve_s]);
        let owned = gathered_counts(comm, loaded.part.range(rank).len());
        let elements = gathered_counts(comm, src.beam.as_ref().map_or(0, |b| b.elements()));
        let solution = if opts.keep_solutions { comm.gather(0, &x) } else { None };
        if let (Some(tips), Some(ph)) = (tips, phases) {
            let phase_json: serde_json::Map<String, Value> = PHASES
                .iter()
                .zip(&ph)
                .map(|(n, [max, mean])| (n.to_string(), json!({ "max_s": max, "mean_s": mean })))
                .collect();
            let mut st = json!({
                "step": s,
                "operator": loaded.what,
                "inspected": inspect,
                "iterations": iterations,
                "converged": converged,
                "residual_norm": residual_norm,
                "rhs_norm": rhs_norm,
                "tip_displacement": tips.iter().fold(0.0f64, |m, &v| m.max(v)),
                "phases": phase_json,
            });
            if let (Some(o), Value::Object(e)) = (st.as_object_mut(), &extra) {
                o.extend(e.clone());
            }
            if s == 1 {
                let n = loaded.part.nrows();
                cold = Some(json!({
                    "problem": loaded.what,
                    "block_rows": n,
                    "block_size": b,
                    "unknowns": n * b,
                    "partition": loaded.part.starts(),
                    "owned_rows": owned,
                    "assembled_elements": if files { Value::Null } else { json!(elements) },
                }));
            }
            step_json.push(st);
        }
        if let Some(u) = solution {
            solutions.push(u);
        }
        if !converged {
            break;
        }
    }
    let json = cold.map(|cold| {
        let first = &step_json[0];
        let mut out = json!({
            "ranks": size,
            "problem": cold["problem"],
            "solver": match opts.solver { Solver::Amg => "amg", Solver::Jacobi => "jacobi" },
            "block_rows": cold["block_rows"],
            "block_size": cold["block_size"],
            "unknowns": cold["unknowns"],
            "partition": cold["partition"],
            "owned_rows": cold["owned_rows"],
            "assembled_elements": cold["assembled_elements"],
            "reduction": "allgather, summed in rank order",
        });
        if let Some(o) = out.as_object_mut() {
            o.extend(shared_keys(opts, &step_json, levels, files));
        }
        if let (Some(o), Some(Value::Object(e))) = (out.as_object_mut(), step_json_first_extra(first)) {
            o.extend(e);
        }
        out
    });
    Ok(DriverReport {
        converged: all_converged,
        iterations: last_iterations,
        json,
        solutions,
    })
}

/// The report keys the CPU and the GPU ranks' drivers share: the operator,
/// the aggregation, the first step's solve, every step, and the mean over the
/// hot steps (all but the first) of each phase's max and mean over ranks.
fn shared_keys(
    opts: &DriverOptions,
    step_json: &[Value],
    levels: Value,
    files: bool,
) -> serde_json::Map<String, Value> {
    let first = &step_json[0];
    let hot = &step_json[1..];
    let hot_mean: serde_json::Map<String, Value> = PHASES
        .iter()
        .map(|p| {
            let mean = |k: &str| {
                hot.iter()
                    .map(|s| s["phases"][p][k].as_f64().unwrap_or(0.0))
                    .sum::<f64>()
                    / hot.len().max(1) as f64
            };
            (
                p.to_string(),
                json!({ "max_s": mean("max_s"), "mean_s": mean("mean_s") }),
            )
        })
        .collect();
    let beam = match &opts.operator {
        Operator::Beam { k, length, .. } => Some((*k, *length)),
        Operator::Files { .. } => None,
    };
    let out = json!({
        "k": beam.map(|b| b.0),
        "length": beam.map(|b| b.1),
        "aggregation": crate::setup::aggregation_description(opts.hierarchy.amg.aggregation),
        "rtol": opts.cg.rtol,
        "iterations": first["iterations"],
        "converged": first["converged"],
        "residual_norm": first["residual_norm"],
        "rhs_norm": first["rhs_norm"],
        "tip_displacement": first["tip_displacement"],
        "phases": first["phases"],
        "levels": levels,
        "steps": step_json,
        "hot_mean": if hot.is_empty() { Value::Null } else { Value::Object(hot_mean) },
        "files": files,
    });
    if let Value::Object(m) = out {
        m
    } else {
        serde_json::Map::new()
    }
}

/// The step-level keys the top level repeats (`plan_matches_global`,
/// `schedule_cache`).
fn step_json_first_extra(first: &Value) -> Option<Value> {
    let mut out = serde_json::Map::new();
    for k in ["plan_matches_global", "schedule_cache"] {
        if let Some(v) = first.get(k) {
            out.insert(k.to_string(), v.clone());
        }
    }
    Some(Value::Object(out))
}

#[cfg(feature = "nccl")]
pub use gpu::run_on_gpus;

/// `ptap run --device cuda` and `ptap solve --device cuda` under mpirun
/// (feature `nccl`): one rank per GPU, the AMG on the GPU ranks
/// ([`crate::device_amg`]). The beam's every step after the cold one is
/// assembled on each rank's GPU straight into the values the device AMG
/// uses ([`ptap_fem::device::DeviceSlabAssembler`]); only the slab's part of
/// the modulus field goes up. A user's operators are read on the host, and
/// each later step's values go up once (`fine values upload`, inside the
/// read phase).
#[cfg(feature = "nccl")]
mod gpu {
    use super::*;
    use crate::device_amg::{
        build_device_hierarchy, measure_balance, product_seconds, write_fine_values, UPLOAD_PARTS,
    };
    use crate::mpi_comm::MpiComm;
    use crate::nccl::{self, node_local_rank, DeviceError, NcclComm};
    use mpi::collective::CommunicatorCollectives;
    use ptap_cuda::{CudaError, Device, DeviceOptions};
    use ptap_fem::device::{AssemblyError, DeviceSlabAssembler};
    use std::sync::Arc;

    /// The phases whose host<->device bytes the report counts per hot step.
    const TRANSFER_PHASES: [&str; 6] = [
        "assembly",
        "fine values upload",
        "matrix setup",
        "rhs upload",
        "solve",
        "solution download",
    ];

    /// This rank's GPU: its node-local rank's ordinal, one rank per GPU.
    fn open_gpu(rank: usize) -> Result<(Arc<Device>, usize), DeviceError> {
        ptap_cuda::libraries_present()?;
        let count = cudarc::driver::CudaContext::device_count()
            .map_err(|e| CudaError::NoDevice(e.to_string()))?
            .max(0) as usize;
        let local = node_local_rank(rank);
        if local >= count {
            return Err(DistError::Options {
                why: format!(
                    "this node runs more ranks than it has GPUs (node-local rank {local}, {count} GPU(s)); \
                     --device cuda under mpirun takes one rank per GPU, so run at most {count} rank(s) per node"
                ),
            }
            .into());
        }
        Ok((Device::open_on(local, DeviceOptions::default())?, local))
    }

    fn assembly_error(e: AssemblyError) -> DeviceError {
        match e {
            AssemblyError::Cuda(c) => c.into(),
            other => DistError::Matrix { why: other.to_string() }.into(),
        }
    }

    /// One step's numbers on this rank.
    struct Step {
        phases: [f64; 4],
        report: ptap_runtime::CgReport,
        tip: f64,
        products: Vec<f64>,
    }

    /// Runs the steps on the GPU ranks of `comm` (collective); the report has
    /// the CPU driver's keys ([`run`]) plus each step's Galerkin products and
    /// time per iteration (max and mean over ranks), the GPUs, and the
    /// host<->device bytes per hot step by phase (largest over ranks).
    pub fn run_on_gpus(comm: &MpiComm, opts: &DriverOptions, progress: &mut dyn FnMut(&str)) -> Res<DriverReport> {
        let (rank, size) = (comm.rank(), comm.size());
        if opts.solver != Solver::Amg {
            return Err(
                "--device cuda under mpirun runs the AMG (--solver amg); point-block Jacobi on GPU ranks is \
                        `ptap-mpi-cuda --solver jacobi`"
                    .into(),
            );
        }
        if opts.schedule_cache.is_some() {
            return Err(
                "--schedule-cache keeps CPU ranks' mesh setups; drop it with --device cuda under mpirun".into(),
            );
        }
        let (mut src, steps) = Source::open(opts)?;
        progress("opening this rank's GPU and joining NCCL");
        let (dev, ordinal) = nccl::agree(comm, open_gpu(rank))?;
        let nccl = NcclComm::init(comm, dev.context())?;

        // Step 1, cold: the host's rows (the mesh setup is the CPU's), then
        // the one upload and the matrix setup on the devices.
        let t0 = Instant::now();
        progress(&format!("step 1 of {steps}: loading the operator"));
        let mut loaded = agree(
            comm,
            src.load(comm, 1).map_err(|e| DistError::Matrix { why: e.to_string() }),
        )?;
        let files = matches!(opts.operator, Operator::Files { .. });
        if files && matches!(&opts.operator, Operator::Files { b, .. } if b.is_empty()) {
            loaded.rhs = a_ones(&loaded.rows.local(&loaded.part, rank)?);
        }
        let assembly_s = t0.elapsed().as_secs_f64();
        let (nn, modes) = src.near_null.clone().ok_or("no near-null space")?;
        let dp = DistProblem {
            a: loaded.rows.local(&loaded.part, rank)?,
            part: loaded.part.clone(),
            near_null: nn,
            modes,
        };
        dev.reset_counters();
        let (mut h, mut setup) = build_device_hierarchy(comm, &nccl, &dev, dp, &opts.hierarchy, &opts.dist, progress)?;
        let cold_matrix_setup_s = h.timings.matrix_setup_s;
        dev.set_phase("assembly setup");
        let mut dasm = match &src.beam {
            Some(slab) => Some(nccl::agree(
                comm,
                DeviceSlabAssembler::new(&dev, slab, ptap_fem::POISSON_RATIO).map_err(assembly_error),
            )?),
            None => None,
        };
        let mut ws = h.workspace(opts.cg.max_iterations)?;
        let rhs = std::mem::take(&mut loaded.rhs);
        let mut x = vec![0.0; rhs.len()];
        progress(&format!("step 1 of {steps}: AMG-CG on the GPUs"));
        let r = h.solve(&rhs, &mut x, &opts.cg, &mut ws)?;
        let mut done = vec![Step {
            phases: [assembly_s, setup.setup.mesh_setup_s, cold_matrix_setup_s, r.solve_s],
            tip: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            products: product_seconds(&h)?,
            report: r,
        }];
        let cold_upload_s = setup.upload_s;
        let upload_parts = max_mean(comm, &setup.upload_parts_s);
        let cold_counters = dev.counters();

        // Hot steps: new values on the device, matrix setup, solve.
        dev.reset_counters();
        let first_pattern = loaded.rows;
        let mut solutions = Vec::new();
        if opts.keep_solutions {
            solutions.extend(comm.gather(0, &x));
        }
        for s in 2..=steps {
            if !done.last().is_some_and(|d| d.report.converged) {
                break;
            }
            comm.communicator().barrier();
            let t = Instant::now();
            let mut rhs_s = None;
            match (&mut dasm, &src.beam) {
                (Some(dasm), Some(slab)) => {
                    progress(&format!("step {s} of {steps}: assembling on the GPUs"));
                    dev.set_phase("assembly");
                    let field = stiffening_front(&slab.mesh, s, steps);
                    write_fine_values(&mut h, |full| dasm.assemble(&field, full).map_err(assembly_error))?;
                    dev.synchronize()?;
                }
                _ => {
                    progress(&format!("step {s} of {steps}: reading the operator"));
                    let mut l = agree(
                        comm,
                        src.load(comm, s).map_err(|e| DistError::Matrix { why: e.to_string() }),
                    )?;
                    let mut differs = [f64::from(u8::from(!first_pattern.same_pattern(&l.rows)))];
                    comm.all_reduce_sum(&mut differs);
                    if differs[0] > 0.0 {
                        return Err(format!(
                            "step {s}: {} has another block pattern than step 1's on {} rank(s); on GPU ranks a \
                             sequence keeps one pattern",
                            l.what, differs[0]
                        )
                        .into());
                    }
                    if l.rhs.is_empty() {
                        l.rhs = a_ones(&l.rows.local(&l.part, rank)?);
                    }
                    h.set_fine_values(&l.rows.values)?;
                    dev.synchronize()?;
                    rhs_s = Some(l.rhs);
                }
            }
            let assembly_s = t.elapsed().as_secs_f64();
            comm.communicator().barrier();
            progress(&format!("step {s} of {steps}: matrix setup on the GPUs"));
            let matrix_setup_s = h.matrix_setup()?;
            let products = product_seconds(&h)?;
            x.fill(0.0);
            progress(&format!("step {s} of {steps}: AMG-CG on the GPUs"));
            let r = h.solve(rhs_s.as_deref().unwrap_or(&rhs), &mut x, &opts.cg, &mut ws)?;
            done.push(Step {
                phases: [assembly_s, 0.0, matrix_setup_s, r.solve_s],
                tip: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
                products,
                report: r,
            });
            if opts.keep_solutions {
                solutions.extend(comm.gather(0, &x));
            }
        }
        let hot_counters = dev.counters();
        let hot_steps = done.len() - 1;
        // Each level's time per rank, from the last matrix setup's products
        // and SpMVs timed now (outside every timed phase).
        dev.set_phase("balance");
        measure_balance(&h, &mut setup.setup.levels)?;
        let levels = serde_json::to_value(&setup.setup.levels)?;
        // Device memory in use on this rank's GPU after the steps (its context: every level, the maps).
        let used = dev.context().mem_get_info().map_or(0, |(free, total)| total - free);
        let memory = gathered_counts(comm, used);

        // Collectives (every rank, every step), then rank 0 writes.
        let mm = |v: &[f64]| max_mean(comm, v);
        let mut step_json = Vec::new();
        for (i, st) in done.iter().enumerate() {
            let tips = comm.gather(0, &[st.tip]);
            let ph = mm(&st.phases);
            let per_iter = mm(&[st.report.solve_s / st.report.iterations.max(1) as f64]);
            let prod = mm(&st.products);
            let upload = mm(&[if i == 0 { cold_upload_s } else { 0.0 }]);
            if let (Some(tips), Some(ph), Some(per_iter), Some(prod), Some(upload)) = (tips, ph, per_iter, prod, upload)
            {
                let j = |v: &[f64; 2]| json!({ "max_s": v[0], "mean_s": v[1] });
                let mut phase_json: serde_json::Map<String, Value> =
                    PHASES.iter().zip(&ph).map(|(n, v)| (n.to_string(), j(v))).collect();
                if i == 0 {
                    phase_json.insert("upload".into(), j(&upload[0]));
                }
                step_json.push(json!({
                    "step": i + 1,
                    "operator": if i == 0 { loaded.what.clone() } else { String::new() },
                    "inspected": i == 0,
                    "iterations": st.report.iterations,
                    "converged": st.report.converged,
                    "residual_norm": st.report.residual_norm,
                    "rhs_norm": st.report.rhs_norm,
                    "tip_displacement": tips.iter().fold(0.0f64, |m, &v| m.max(v)),
                    "phases": phase_json,
                    "solve_per_iteration": j(&per_iter[0]),
                    "galerkin_per_level": prod.iter().map(j).collect::<Vec<_>>(),
                }));
            }
        }
        // Bytes per hot step by phase, and the cold step's; max over ranks.
        let counts = |c: &ptap_cuda::TransferCounters, per: f64| -> Vec<f64> {
            TRANSFER_PHASES
                .iter()
                .flat_map(|p| {
                    let t = c.get(p);
                    [t.h2d_bytes, t.d2h_bytes, t.h2d_copies, t.d2h_copies].map(|v| v as f64 / per)
                })
                .collect()
        };
        let hot_t = mm(&counts(&hot_counters, hot_steps.max(1) as f64));
        let cold_t = mm(&counts(&cold_counters, 1.0));
        let owned = gathered_counts(comm, loaded.part.range(rank).len());
        let elements = gathered_counts(comm, dasm.as_ref().map_or(0, DeviceSlabAssembler::elements));
        let gpus = gathered_counts(comm, ordinal);
        let all_converged = done.iter().all(|d| d.report.converged) && done.len() == steps;
        let last_iterations = done.last().map_or(0, |d| d.report.iterations);
        let json = match (hot_t, cold_t) {
            (Some(hot_t), Some(cold_t)) => {
                let transfers = |t: &[[f64; 2]]| -> Value {
                    let mut m = serde_json::Map::new();
                    for (i, p) in TRANSFER_PHASES.iter().enumerate() {
                        let v = |k: usize| t[4 * i + k][0];
                        let copies = v(2) + v(3);
                        m.insert(
                            p.to_string(),
                            json!({
                                "h2d_bytes": v(0), "d2h_bytes": v(1), "h2d_copies": v(2), "d2h_copies": v(3),
                                "scalars_only": v(0) + v(1) <= 64.0 * copies,
                            }),
                        );
                    }
                    Value::Object(m)
                };
                let n = loaded.part.nrows();
                let b = first_pattern.b;
                let mut out = json!({
                    "ranks": size,
                    "device": format!("cuda ({}), one rank per GPU", dev.name()),
                    "gpu_of_rank": gpus,
                    "device_memory_used_bytes": memory,
                    "problem": loaded.what,
                    "solver": "amg",
                    "variant": opts.hierarchy.variant.map(|v| v.name()),
                    "block_rows": n,
                    "block_size": b,
                    "unknowns": n * b,
                    "partition": loaded.part.starts(),
                    "owned_rows": owned,
                    "assembled_elements": if files { Value::Null } else { json!(elements) },
                    "hot_assembly": if files { "host read, values uploaded" } else { "on each rank's GPU (its slab)" },
                    "reduction": "ncclAllGather, summed in rank order on the device",
                    "transfers_per_hot_step_max_over_ranks": if hot_steps == 0 { Value::Null } else { transfers(&hot_t) },
                    "transfers_cold_step_max_over_ranks": transfers(&cold_t),
                    "cold_upload_parts": upload_parts.as_ref().map(|u| {
                        UPLOAD_PARTS.iter().zip(u).map(|(k, v)| (k.to_string(), json!({ "max_s": v[0], "mean_s": v[1] })))
                            .collect::<serde_json::Map<_, _>>()
                    }),
                });
                if let Some(o) = out.as_object_mut() {
                    o.extend(shared_keys(opts, &step_json, levels, files));
                }
                Some(out)
            }
            _ => None,
        };
        Ok(DriverReport {
            converged: all_converged,
            iterations: last_iterations,
            json,
            solutions,
        })
    }
}
