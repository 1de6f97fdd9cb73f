//! Users' own operators (`ptap solve --a`, `ptap run --a`): a matrix from a
//! Matrix Market or PETSc binary file, a right-hand side, a near-null space
//! (from a file, rigid-body modes from nodal coordinates, or translations),
//! solved through the front door ([`ptap::Solver`]); and a sequence of
//! operators of one pattern, as a time-stepping code writes them: inspected
//! once, then per file read, refreshed and solved, with the schedule cache.
use crate::cache::{self, note, CacheReport, Lookup};
use anyhow::{anyhow, bail, Result};
use ptap::{DeviceChoice, NearNull, Solver, SolverOptions};
use ptap_io::{BlockSpec, FileFormat};
use ptap_runtime::LevelSummary;
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where the near-null space comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NearNullSource {
    /// An `n x m` file (`ptap_io::read_near_null`): Matrix Market dense, PETSc Vecs or Mat.
    File(PathBuf),
    /// Nodal coordinates (`ptap_io::read_coordinates`): rigid-body modes when
    /// the block size is the dimension, the constant when it is 1.
    Coordinates(PathBuf),
    /// The block size's translations; `default` when the user gave none.
    Translations { default: bool },
}

/// How to solve a user's operator.
#[derive(Clone, Debug)]
pub struct UserOptions {
    pub near_null: NearNullSource,
    /// `b x b` blocks; `None`: one node per block row when coordinates are
    /// given, else the file's record or `ptap_io::infer_block_shape`.
    pub block_size: Option<usize>,
    pub device: DeviceChoice,
    /// AMG, CG and product options (its `device` is replaced by `device`).
    pub solver: SolverOptions,
}

/// Where the right-hand side comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RhsSource {
    /// `b = A * ones`.
    Ones,
    /// One file for every operator.
    File(PathBuf),
    /// One file per operator, in order.
    PerOperator(Vec<PathBuf>),
}

/// The near-null space as the report gives it.
#[derive(Clone, Debug, Serialize)]
pub struct NearNullInfo {
    /// "coordinates", "file" or "translations".
    pub source: &'static str,
    pub path: Option<String>,
    /// True when none was given and translations were taken.
    pub default: bool,
    /// Coordinates' dimension.
    pub dim: Option<usize>,
    pub modes: usize,
}

/// What the phases of one solve cost (the paper's four, with reading files
/// in place of assembly).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct UserPhases {
    /// Reading the matrix, right-hand side and near-null space.
    pub read_s: f64,
    /// Strength, aggregation, P, symbolic products (0 on a refresh or a cache hit).
    pub mesh_setup_s: f64,
    /// Copying the hierarchy to the backend (once per inspection).
    pub device_upload_s: f64,
    pub matrix_setup_s: f64,
    /// Of which the numeric Galerkin products.
    pub galerkin_numeric_s: f64,
    pub solve_s: f64,
}

impl UserPhases {
    fn mean(list: &[UserPhases]) -> Option<UserPhases> {
        if list.is_empty() {
            return None;
        }
        let n = list.len() as f64;
        let sum = |f: fn(&UserPhases) -> f64| list.iter().map(f).sum::<f64>() / n;
        Some(UserPhases {
            read_s: sum(|p| p.read_s),
            mesh_setup_s: sum(|p| p.mesh_setup_s),
            device_upload_s: sum(|p| p.device_upload_s),
            matrix_setup_s: sum(|p| p.matrix_setup_s),
            galerkin_numeric_s: sum(|p| p.galerkin_numeric_s),
            solve_s: sum(|p| p.solve_s),
        })
    }
}

/// One user solve's report (`ptap solve --a ... --json`). A CG that did not
/// converge is reported (`converged: false`), not an error.
#[derive(Clone, Debug, Serialize)]
pub struct UserSolveReport {
    pub matrix: String,
    /// "Matrix Market" or "PETSc binary".
    pub format: &'static str,
    /// The right-hand side's file, or "A * ones".
    pub rhs: String,
    pub scalar_rows: usize,
    pub block_rows: usize,
    pub block_size: usize,
    /// "given", "coordinates" (one node per block row) or "detected".
    pub block_size_source: &'static str,
    pub stored_blocks: usize,
    pub near_null: NearNullInfo,
    pub device: String,
    /// Why `--device auto` solved on the CPU.
    pub cpu_fallback: Option<String>,
    pub threads: usize,
    pub iterations: usize,
    pub converged: bool,
    pub relative_residual: f64,
    /// `||x||_inf`.
    pub max_abs: f64,
    pub operator_complexity: f64,
    pub levels: Vec<LevelSummary>,
    pub phases: UserPhases,
    pub residual_history: Vec<f64>,
    /// The solution (not in the JSON report).
    #[serde(skip)]
    pub solution: Vec<f64>,
}

/// An operator read from a file, with what the report says about it.
struct Operator {
    a: BlockCsr,
    format: &'static str,
    block_source: &'static str,
}

fn format_name(path: &Path) -> Result<&'static str> {
    Ok(match ptap_io::detect_format(path)? {
        FileFormat::MatrixMarket => "Matrix Market",
        FileFormat::PetscBinary => "PETSc binary",
    })
}

/// The near-null space read from its file, with the block size it implies
/// for an operator of `rows` scalar rows (coordinates: one node per block row).
struct NearNullRead {
    near_null: NearNull,
    info: NearNullInfo,
    implied_block: Option<usize>,
}

fn read_near_null(source: &NearNullSource, rows: usize) -> Result<NearNullRead> {
    Ok(match source {
        NearNullSource::Translations { default } => NearNullRead {
            near_null: NearNull::Translations,
            info: NearNullInfo {
                source: "translations",
                path: None,
                default: *default,
                dim: None,
                modes: 0,
            },
            implied_block: None,
        },
        NearNullSource::File(path) => {
            let (n, modes, values) = ptap_io::read_near_null(path)?;
            if n != rows {
                bail!(
                    "{} has {n} rows but the operator has {rows}; give the near-null space as {rows} rows (one per \
                     unknown, in the operator's order) x one column per mode",
                    path.display()
                );
            }
            NearNullRead {
                near_null: NearNull::Modes { values, modes },
                info: NearNullInfo {
                    source: "file",
                    path: Some(path.display().to_string()),
                    default: false,
                    dim: None,
                    modes,
                },
                implied_block: None,
            }
        }
        NearNullSource::Coordinates(path) => {
            let (nodes, dim, coords) = ptap_io::read_coordinates(path)?;
            let implied = (rows % nodes == 0)
                .then_some(rows / nodes)
                .filter(|&b| b == 1 || b == dim);
            if implied.is_none() {
                bail!(
                    "{} gives {nodes} nodes in {dim}D but the operator has {rows} rows, neither one nor {dim} per \
                     node; give one node per block row, in the operator's order",
                    path.display()
                );
            }
            NearNullRead {
                near_null: NearNull::Coordinates { coords, dim },
                info: NearNullInfo {
                    source: "coordinates",
                    path: Some(path.display().to_string()),
                    default: false,
                    dim: Some(dim),
                    modes: 0,
                },
                implied_block: implied,
            }
        }
    })
}

/// Reads the operator of `path` with the block size `given`, else the one
/// the near-null space implies, else the file's or the inferred one.
fn read_operator(path: &Path, given: Option<usize>, implied: Option<usize>) -> Result<Operator> {
    let format = format_name(path)?;
    let (spec, block_source) = match (given, implied) {
        (Some(b), _) => (BlockSpec::Given(b, b), "given"),
        (None, Some(b)) => (BlockSpec::Given(b, b), "coordinates"),
        (None, None) => (BlockSpec::Infer, "detected"),
    };
    let a = ptap_io::read_matrix(path, spec)?;
    let (br, bc) = a.block_shape();
    if a.scalar_rows() != a.scalar_cols() {
        bail!(
            "{} is {}x{}, not square; AMG solves square systems",
            path.display(),
            a.scalar_rows(),
            a.scalar_cols()
        );
    }
    if br != bc {
        bail!(
            "{}: the detected blocks are {br}x{bc}, not square; give the block size (--block-size)",
            path.display()
        );
    }
    Ok(Operator {
        a,
        format,
        block_source,
    })
}

/// The scalar rows a matrix file declares, read from its header alone.
fn declared_rows(path: &Path) -> Result<usize> {
    Ok(ptap_io::read_matrix_header(path)?.rows)
}

/// The right-hand side of `a` from `path` (`None`: `A * ones`), length checked.
fn read_rhs(path: Option<&Path>, a: &BlockCsr, a_path: &Path) -> Result<Vec<f64>> {
    let n = a.scalar_rows();
    let Some(path) = path else {
        let mut b = vec![0.0; n];
        ptap_sparse::spmv::spmv(a, &vec![1.0; n], &mut b);
        return Ok(b);
    };
    let b = ptap_io::read_vector(path)?;
    if b.len() != n {
        bail!(
            "{} has {} entries but {} has {n} rows; give one right-hand-side entry per row",
            path.display(),
            b.len(),
            a_path.display()
        );
    }
    Ok(b)
}

/// The front door's builder for `a`. The device is opened by the build,
/// after the block shape is known: a GPU run of a shape without device
/// kernels is refused naming the `kernels!` line to add, GPU or not.
fn builder(a: BlockCsr, near_null: NearNull, options: &UserOptions) -> ptap::SolverBuilder {
    let mut opts = options.solver.clone();
    opts.device = options.device;
    Solver::builder(a).near_null(near_null).options(opts)
}

/// A solver error about the operator of `file`, prefixed with its name (a
/// device's error is about the device and stays as it is).
fn about(file: &Path, e: ptap::Error) -> anyhow::Error {
    match e {
        ptap::Error::Cuda(_) | ptap::Error::DeviceKernels { .. } => e.into(),
        e => anyhow!("{}: {e}", file.display()),
    }
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Solves `A x = b` for the operator in `a_path`. `progress` gets a line per phase.
pub fn solve(
    a_path: &Path,
    rhs: Option<&Path>,
    options: &UserOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<UserSolveReport> {
    progress(&format!("reading {}", a_path.display()));
    let t = Instant::now();
    let rows = declared_rows(a_path)?;
    let nn = read_near_null(&options.near_null, rows)?;
    let op = read_operator(a_path, options.block_size, nn.implied_block)?;
    let b = read_rhs(rhs, &op.a, a_path)?;
    let read_s = t.elapsed().as_secs_f64();

    let (scalar_rows, block_rows, block_size, stored_blocks) =
        (op.a.scalar_rows(), op.a.nrows(), op.a.block_shape().0, op.a.nnzb());
    let mut solver = builder(op.a, nn.near_null, options)
        .build_with_progress(progress)
        .map_err(|e| about(a_path, e))?;
    progress("solving with CG + AMG V-cycle");
    let (x, info) = solver.solve_new(&b).map_err(|e| about(a_path, e))?;
    let h = solver.info();
    Ok(UserSolveReport {
        matrix: a_path.display().to_string(),
        format: op.format,
        rhs: rhs.map_or("A * ones".into(), |p| p.display().to_string()),
        scalar_rows,
        block_rows,
        block_size,
        block_size_source: op.block_source,
        stored_blocks,
        near_null: NearNullInfo {
            modes: h.modes,
            ..nn.info
        },
        device: h.device.clone(),
        cpu_fallback: solver.cpu_fallback().map(str::to_string),
        threads: rayon::current_num_threads(),
        iterations: info.iterations,
        converged: info.converged,
        relative_residual: info.relative_residual,
        max_abs: max_abs(&x),
        operator_complexity: h.operator_complexity,
        levels: h.levels,
        phases: UserPhases {
            read_s,
            mesh_setup_s: h.timings.mesh_setup_s,
            device_upload_s: h.timings.upload_s,
            matrix_setup_s: h.timings.matrix_setup_s,
            galerkin_numeric_s: h.timings.galerkin_numeric_s,
            solve_s: info.solve_s,
        },
        residual_history: info.residual_history,
        solution: x,
    })
}

/// A sequence of operators (`ptap run --a`).
#[derive(Clone, Debug)]
pub struct SequenceOptions {
    /// The operators, in the order they are solved.
    pub files: Vec<PathBuf>,
    pub rhs: RhsSource,
    pub user: UserOptions,
    /// Directory of the schedule cache (`None`: no cache).
    pub schedule_cache: Option<PathBuf>,
    /// Report cache events on stderr.
    pub verbose: bool,
}

/// One operator of the sequence.
#[derive(Clone, Debug, Serialize)]
pub struct SequenceStep {
    pub step: usize,
    pub file: String,
    /// A hierarchy was set up for this operator (the first, or a new pattern):
    /// mesh setup (or the cache), upload, matrix setup.
    pub inspected: bool,
    /// Why it was inspected anew: how its pattern differs from the previous one's.
    pub pattern_change: Option<String>,
    /// The cache's answer for this inspection.
    pub schedule_cache: Option<CacheReport>,
    pub iterations: usize,
    pub converged: bool,
    pub relative_residual: f64,
    pub max_abs: f64,
    pub phases: UserPhases,
}

/// `ptap run --a ... --json`.
#[derive(Clone, Debug, Serialize)]
pub struct SequenceReport {
    pub files: usize,
    pub scalar_rows: usize,
    pub block_size: usize,
    pub block_size_source: &'static str,
    pub near_null: NearNullInfo,
    pub device: String,
    pub cpu_fallback: Option<String>,
    pub threads: usize,
    /// Hierarchies set up: 1 when every file has the first one's pattern.
    pub inspections: usize,
    /// The levels of the last hierarchy.
    pub levels: Vec<LevelSummary>,
    /// The cache's answer for the first inspection.
    pub schedule_cache: Option<CacheReport>,
    pub steps: Vec<SequenceStep>,
    /// The first step, and the mean of the steps that only refreshed.
    pub cold: UserPhases,
    pub hot_mean: Option<UserPhases>,
}

/// The cache entry of a user operator: the name hashes its block pattern, the
/// near-null space, the AMG options, the product variant and the device asked for.
fn cache_name(a: &BlockCsr, near_null: &NearNull, options: &UserOptions) -> String {
    let mut h = blake3::Hasher::new();
    let fp = ptap_schedules::file::fingerprint(a.pattern());
    let b = a.block_shape().0;
    h.update(&fp.hash);
    h.update(&(b as u64).to_le_bytes());
    match near_null {
        NearNull::Translations => {
            h.update(b"translations");
        }
        NearNull::Coordinates { coords, dim } => {
            h.update(format!("coordinates {dim}").as_bytes());
            coords.iter().for_each(|v| {
                h.update(&v.to_le_bytes());
            });
        }
        NearNull::Modes { values, modes } => {
            h.update(format!("modes {modes}").as_bytes());
            values.iter().for_each(|v| {
                h.update(&v.to_le_bytes());
            });
        }
    }
    let opts = &options.solver;
    h.update(
        format!(
            "{:?} variant={:?} device={:?}",
            opts.hierarchy.amg, opts.variant, options.device
        )
        .as_bytes(),
    );
    let hex = h.finalize().to_hex();
    format!("user-b{b}-n{}-{}.ptaps", a.nrows(), &hex.as_str()[..16])
}

/// A solver for `a`, through the schedule cache when there is one: returns
/// it with the cache's answer.
fn inspect(
    a: BlockCsr,
    near_null: NearNull,
    options: &SequenceOptions,
    file: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(Solver, Option<CacheReport>)> {
    let label = format!("{} (ptap run --a)", file.display());
    let user = &options.user;
    let name = cache_name(&a, &near_null, user);
    let dir = options.schedule_cache.as_deref();
    // The loader copies the operator only when the cache has an entry.
    let load = |bundle: &_| {
        builder(a.clone(), near_null.clone(), user)
            .build_from_bundle(bundle, progress)
            .map_err(anyhow::Error::from)
    };
    match cache::lookup(dir, &name, options.verbose, load) {
        Lookup::Off => Ok((
            builder(a, near_null, user)
                .build_with_progress(progress)
                .map_err(|e| about(file, e))?,
            None,
        )),
        Lookup::Loaded(solver, report) => Ok((solver, Some(report))),
        Lookup::Miss { path, reason } => {
            let solver = builder(a, near_null, user)
                .build_with_progress(progress)
                .map_err(|e| about(file, e))?;
            let report = if solver.info().levels.len() < 2 {
                CacheReport {
                    path: path.display().to_string(),
                    status: "skipped",
                    reason: Some("the hierarchy has one level: there is no mesh setup to cache".into()),
                    load_s: None,
                    open_s: None,
                    open: None,
                    setup_s: None,
                    write_s: None,
                }
            } else {
                cache::store(&path, reason, &solver.bundle(&label), options.verbose)
            };
            Ok((solver, Some(report)))
        }
    }
}

/// Solves every operator of `options.files` in order: the first is inspected
/// (mesh setup, or the schedule cache), every later one of the same block
/// pattern only refreshes the values; one of another pattern is reported on
/// stderr and inspected anew. `on_step` gets each finished step and its
/// solution; `progress` a line per phase.
pub fn run_sequence(
    options: &SequenceOptions,
    progress: &mut dyn FnMut(&str),
    on_step: &mut dyn FnMut(&SequenceStep, &[f64]) -> Result<()>,
) -> Result<SequenceReport> {
    let files = &options.files;
    let Some(first) = files.first() else {
        bail!("no operator files to solve; give --a FILE (or a glob that matches some)");
    };
    if let RhsSource::PerOperator(list) = &options.rhs {
        if list.len() != files.len() {
            bail!(
                "{} right-hand sides for {} operators; give one --b for all, or one per operator",
                list.len(),
                files.len()
            );
        }
    }
    let user = &options.user;
    let t = Instant::now();
    let rows = declared_rows(first)?;
    let nn = read_near_null(&user.near_null, rows)?;
    let near_null_read_s = t.elapsed().as_secs_f64();
    let mut solver: Option<Solver> = None;
    let mut inspected_file = first.clone();
    let mut steps: Vec<SequenceStep> = Vec::with_capacity(files.len());
    let mut block_size = (0, "detected");
    let (mut first_cache, mut inspections) = (None, 0);
    let mut x = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let step = i + 1;
        progress(&format!("step {step}: reading {}", file.display()));
        let t = Instant::now();
        // Later files take the block size of the first.
        let op = match &solver {
            None => read_operator(file, user.block_size, nn.implied_block)?,
            Some(_) => read_operator(file, Some(block_size.0), None)?,
        };
        let rhs_path = match &options.rhs {
            RhsSource::Ones => None,
            RhsSource::File(p) => Some(p.as_path()),
            RhsSource::PerOperator(list) => Some(list[i].as_path()),
        };
        let b = read_rhs(rhs_path, &op.a, file)?;
        let read_s = t.elapsed().as_secs_f64() + if i == 0 { near_null_read_s } else { 0.0 };
        let change = solver.as_ref().and_then(|s| s.pattern_difference(&op.a));
        if let Some(detail) = &change {
            note!(
                "{}: its block pattern differs from {}'s ({detail}); inspecting it anew",
                file.display(),
                inspected_file.display()
            );
        }
        let mut phases = UserPhases {
            read_s,
            ..UserPhases::default()
        };
        let mut cache_report = None;
        let inspected = solver.is_none() || change.is_some();
        match &mut solver {
            Some(s) if change.is_none() => {
                phases.matrix_setup_s = s.refresh_matrix(&op.a).map_err(|e| about(file, e))?;
                phases.galerkin_numeric_s = s.info().timings.galerkin_numeric_s;
            }
            _ => {
                if i == 0 {
                    block_size = (op.a.block_shape().0, op.block_source);
                }
                let (s, report) = inspect(op.a, nn.near_null.clone(), options, file, progress)?;
                let tm = s.info().timings;
                phases.mesh_setup_s = tm.mesh_setup_s;
                phases.device_upload_s = tm.upload_s;
                phases.matrix_setup_s = tm.matrix_setup_s;
                phases.galerkin_numeric_s = tm.galerkin_numeric_s;
                if inspections == 0 {
                    first_cache.clone_from(&report);
                }
                inspections += 1;
                cache_report = report;
                inspected_file.clone_from(file);
                solver = Some(s);
            }
        }
        let s = solver.as_mut().expect("a solver was set up above");
        progress(&format!("step {step}: solving"));
        x.clear();
        x.resize(s.scalar_rows(), 0.0);
        let info = s.solve(&b, &mut x).map_err(|e| about(file, e))?;
        if !info.converged {
            bail!(
                "step {step} ({}): CG did not reach rtol {:e} in {} iterations (relative residual {:.3e}); raise \
                 --max-iterations, or give the operator's near-null space (--coords or --near-null)",
                file.display(),
                user.solver.cg.rtol,
                info.iterations,
                info.relative_residual
            );
        }
        phases.solve_s = info.solve_s;
        let rec = SequenceStep {
            step,
            file: file.display().to_string(),
            inspected,
            pattern_change: change,
            schedule_cache: cache_report,
            iterations: info.iterations,
            converged: info.converged,
            relative_residual: info.relative_residual,
            max_abs: max_abs(&x),
            phases,
        };
        on_step(&rec, &x)?;
        steps.push(rec);
    }
    let s = solver.expect("at least one step ran");
    let h = s.info();
    let hot: Vec<UserPhases> = steps.iter().filter(|s| !s.inspected).map(|s| s.phases).collect();
    Ok(SequenceReport {
        files: files.len(),
        scalar_rows: s.scalar_rows(),
        block_size: block_size.0,
        block_size_source: block_size.1,
        near_null: NearNullInfo {
            modes: h.modes,
            ..nn.info
        },
        device: h.device.clone(),
        cpu_fallback: s.cpu_fallback().map(str::to_string),
        threads: rayon::current_num_threads(),
        inspections,
        levels: h.levels,
        schedule_cache: first_cache,
        cold: steps[0].phases,
        hot_mean: UserPhases::mean(&hot),
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laplacian(n: usize, extra: bool) -> BlockCsr {
        let (mut i, mut j, mut v) = (vec![], vec![], vec![]);
        for r in 0..n {
            for (c, x) in [(r as i64 - 1, -1.0), (r as i64, 2.0), (r as i64 + 1, -1.0)] {
                if (0..n as i64).contains(&c) {
                    i.push(r as u32);
                    j.push(c as u32);
                    v.push(x);
                }
            }
        }
        if extra {
            i.extend([0, n as u32 - 1]);
            j.extend([n as u32 - 1, 0]);
            v.extend([-0.1, -0.1]);
        }
        BlockCsr::from_scalar_coo(n, n, &i, &j, &v, Some((1, 1))).unwrap()
    }

    fn options() -> UserOptions {
        UserOptions {
            near_null: NearNullSource::Translations { default: true },
            block_size: None,
            device: DeviceChoice::Cpu,
            solver: SolverOptions::default(),
        }
    }

    /// The cache key changes with the pattern, the near-null space and the
    /// options, and with nothing else (not the values).
    #[test]
    fn the_cache_key_is_pattern_near_null_and_options() {
        let (a, o) = (laplacian(30, false), options());
        let key = cache_name(&a, &NearNull::Translations, &o);
        assert!(key.starts_with("user-b1-n30-") && key.ends_with(".ptaps"), "{key}");
        let mut scaled = a.clone();
        scaled.values_mut().iter_mut().for_each(|v| *v *= 3.0);
        assert_eq!(cache_name(&scaled, &NearNull::Translations, &o), key);
        assert_ne!(cache_name(&laplacian(30, true), &NearNull::Translations, &o), key);
        let coords = |x0: f64| NearNull::Coordinates {
            coords: (0..60).map(|k| x0 + k as f64).collect(),
            dim: 2,
        };
        let with_coords = cache_name(&a, &coords(0.0), &o);
        assert_ne!(with_coords, key);
        assert_ne!(cache_name(&a, &coords(1.0), &o), with_coords);
        let mut filtered = options();
        filtered.solver.hierarchy.amg.pf = 0.0;
        assert_ne!(cache_name(&a, &NearNull::Translations, &filtered), key);
        let mut fused = options();
        fused.solver.variant = Some("fused".into());
        assert_ne!(cache_name(&a, &NearNull::Translations, &fused), key);
    }
}
