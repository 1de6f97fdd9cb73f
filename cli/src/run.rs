//! `ptap run`: the time-stepping driver, ptap's main job (arguments and
//! printing; the loop is `ptap_drivers::time_loop`).
//!
//! Step 1 is cold: assemble, build the hierarchy (or load it from the schedule
//! cache), solve. Every later step changes the modulus field, re-assembles `A`
//! into the same pattern, replays the numeric Galerkin products from the
//! schedules (aggregates and `P` are reused), refreshes smoothers and the coarse
//! factor, and solves. The report has the paper's four phases (`tab:phases`)
//! per step, for the cold step and the mean of the hot ones.
//!
//! With `--a`, the steps are a user's own operators of one pattern, one file
//! per step (`ptap_drivers::user::run_sequence`): the first is inspected, the
//! others are read, refreshed and solved.
use crate::out::Progress;
use anyhow::{bail, Result};
use clap::Args;
use ptap_drivers::plot;
use ptap_drivers::target::Target;
use ptap_drivers::time_loop::{run_beam, Phases, TimeLoopOptions, TimeLoopReport};
use ptap_drivers::user::{RhsSource, SequenceOptions, SequenceReport, UserOptions, UserPhases};
use ptap_runtime::{CgOptions, MatrixSetupTimings};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Beam refinement (10k x k x k Q2 hexahedra). The beam only: not with --a.
    #[arg(
        long,
        default_value_t = 4,
        allow_negative_numbers = true,
        value_name = "K",
        conflicts_with = "a"
    )]
    pub(crate) k: i64,
    /// Time steps, 1 to 100,000; step 1 is cold, the rest refresh values only.
    /// The beam only: with --a, one step per file.
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = crate::common::count_in::<1, 100000>, conflicts_with = "a")]
    pub(crate) steps: usize,
    /// Your own operators instead of the beam, one per step, all of one
    /// pattern (what a time-stepping code writes): files or globs (quoted globs
    /// are expanded here, in natural order: A_2 before A_10), Matrix Market or
    /// PETSc binary. The first is inspected; each later one is read, refreshed
    /// and solved; one of another pattern is reported and inspected anew.
    #[arg(long, value_name = "FILE|GLOB", num_args = 1..)]
    pub(crate) a: Vec<String>,
    /// Right-hand side(s) for --a: one file for every step, or one per step
    /// (files or globs, in the same order); default A * ones.
    #[arg(long, value_name = "FILE|GLOB", num_args = 1.., requires = "a")]
    pub(crate) b: Vec<String>,
    #[command(flatten)]
    pub(crate) near_null: crate::common::NearNullArgs,
    /// CG iteration cap for --a, 1 to 1,000,000 (the beam: 500).
    #[arg(long, default_value_t = 500, value_parser = crate::common::count_in::<1, 1000000>, requires = "a")]
    pub(crate) max_iterations: usize,
    /// Write each step's solution of --a into DIR as <A's file stem>.x.mtx
    /// (.x.petsc for a PETSc binary A), atomically.
    #[arg(long, value_name = "DIR", requires = "a")]
    pub(crate) x_out: Option<PathBuf>,
    /// Backend: `cpu`, `cuda` (matrix setup and solve on the GPU; fails in one
    /// sentence without one) or `auto` (the GPU when there is one, else the CPU,
    /// saying so). The mesh setup runs on the CPU either way.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    pub(crate) device: String,
    /// Cache the inspector's output (every level's schedule and P) in DIR: the
    /// first run writes it, later runs of the same problem load it and skip the
    /// mesh setup. A stale or damaged entry is reported and rebuilt.
    #[arg(long, value_name = "DIR")]
    pub(crate) schedule_cache: Option<PathBuf>,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    pub(crate) aggregation: ptap_amg::Aggregation,
    #[arg(long, default_value = "f64", value_parser = crate::common::smoother_precision, help = crate::common::SMOOTHER_PRECISION_HELP)]
    pub(crate) smoother_precision: ptap_runtime::SmootherPrecision,
    /// Prolongator filter threshold (the default is the fastest measured hot step; the paper: 0.03; 0 = off).
    #[arg(long, default_value_t = ptap_amg::AmgOptions::default().pf, value_name = "PF")]
    pub(crate) pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub(crate) pf_scale: f64,
    /// Galerkin-product variant on every level (see `ptap solve --help`), or
    /// `auto` for the traffic model's pick per level (on the GPU: among the
    /// device variants, for this device, measured). Default: two-pass on the
    /// CPU, tensor-pair-sym (the device's product) on the GPU, so a schedule cache
    /// holds what the device replays. outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long)]
    pub(crate) variant: Option<String>,
    /// Relative tolerance on the unpreconditioned residual norm, in [1e-15, 1).
    #[arg(long, default_value_t = 1e-8, value_parser = crate::common::rtol)]
    pub(crate) rtol: f64,
    /// Write the report as JSON (keys: steps[].iterations, steps[].max_displacement,
    /// steps[].phases, cold, hot_mean, schedule_cache, ...).
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Draw the four phases of every step (assembly, mesh setup, matrix setup,
    /// solve) as stacked bars in an SVG file, with the hot steps alone on a
    /// second panel. The path is checked before the first step.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
    /// Do not print progress or the table.
    #[arg(long)]
    pub(crate) quiet: bool,
    #[cfg(feature = "mpi")]
    #[command(flatten)]
    pub(crate) mpi: crate::common::MpiArgs,
}

pub fn run(args: &RunArgs) -> Result<()> {
    #[cfg(feature = "mpi")]
    if args.mpi.length != 1 {
        bail!("--length stretches the beam over MPI ranks; run it under mpirun");
    }
    if !args.a.is_empty() {
        return run_user(args);
    }
    let k = crate::common::validate_k(args.k)?;
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    if let Some(path) = &args.plot {
        plot::check_path(path)?;
    }
    let target = match crate::common::open(&args.device)? {
        Some(dev) => Target::Cuda(dev),
        None => Target::Cpu,
    };
    let options = TimeLoopOptions {
        k,
        steps: args.steps,
        schedule_cache: args.schedule_cache.clone(),
        aggregation: args.aggregation,
        pf: args.pf,
        pf_scale: args.pf_scale,
        variant: args.variant.clone(),
        cg: CgOptions {
            rtol: args.rtol,
            max_iterations: 500,
        },
        smoother_precision: args.smoother_precision,
        verbose: !args.quiet,
    };
    let progress = Progress::bar(args.quiet, args.steps, "step");
    let report = run_beam(&options, &target, &mut |msg, done| match done {
        Some(_) => progress.inc(),
        None => progress.phase(msg),
    })?;
    progress.finish();
    if !args.quiet {
        print_report(&report);
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &report)?;
    }
    if let Some(path) = &args.plot {
        plot::write_svg(path, &plot::phases_svg(&report)?)?;
    }
    Ok(())
}

/// One row of the per-step table.
struct StepRow {
    step: usize,
    iterations: usize,
    max_abs: f64,
    /// assembly (the beam) or read (files), mesh setup, matrix setup, solve.
    phases: [f64; 4],
    note: String,
}

/// The per-step table: `first` names the first phase (assembly or read),
/// `value` the column of `||x||_inf`.
fn print_steps(first: &str, value: &str, rows: &[StepRow]) {
    outln!(
        "{:>5} {:>6} {:>18} {:>10} {:>10} {:>10} {:>10}",
        "step",
        "its",
        value,
        first,
        "mesh",
        "matrix",
        "solve"
    );
    for s in rows {
        let p = &s.phases;
        outln!(
            "{:>5} {:>6} {:>18.12} {:>10.4} {:>10.4} {:>10.4} {:>10.4}{}",
            s.step,
            s.iterations,
            s.max_abs,
            p[0],
            p[1],
            p[2],
            p[3],
            s.note
        );
    }
}

/// The summary line of a step's (or a mean's) phases. The mesh setup's
/// copy to the backend is a device upload, or on the CPU the hierarchy's
/// build (its executors and vectors).
fn print_phases(name: &str, first: &str, device: &str, [f, mesh, upload, matrix, numeric, solve]: [f64; 6]) {
    let upload_name = if device == "cpu" {
        "hierarchy build"
    } else {
        "device upload"
    };
    outln!(
        "{name:<9} {first} {f:.4} s, mesh setup {mesh:.4} s (+ {upload_name} {upload:.4}), matrix setup {matrix:.4} s (numeric PtAP {numeric:.4}), solve {solve:.4} s"
    );
}

/// One matrix setup phase by phase (ms), per smoothed level.
pub(crate) fn matrix_phases_line(m: &MatrixSetupTimings) -> String {
    let mut s = format!("products {:.2} ms", 1e3 * m.products_s);
    for l in &m.levels {
        s += &format!(
            ", level {} Jacobi {:.2} + eigen-estimate {:.2} ms",
            l.level,
            1e3 * l.jacobi_s,
            1e3 * l.eigen_s
        );
    }
    s += &format!(", coarse factor {:.2} ms", 1e3 * m.coarse_factor_s);
    if m.beside_s > 0.0 {
        s += &format!(
            "; beside on lanes until {:.2} ms after the products (the per-level times above are their checks)",
            1e3 * m.beside_s
        );
    }
    s
}

/// The matrix setup's split of a step's (or a mean's) phases.
fn print_matrix_split(name: &str, p: &Phases) {
    outln!(
        "{name:<9} matrix setup {:.4} s = numeric PtAP {:.4} s + Jacobi {:.4} s + eigen-estimates {:.4} s + coarse factor {:.4} s + beside on lanes {:.4} s",
        p.matrix_setup_s,
        p.galerkin_numeric_s,
        p.jacobi_s,
        p.eigen_s,
        p.coarse_factor_s,
        p.beside_s
    );
}

fn beam_phases(p: &Phases) -> [f64; 6] {
    [
        p.assembly_s,
        p.mesh_setup_s,
        p.device_upload_s,
        p.matrix_setup_s,
        p.galerkin_numeric_s,
        p.solve_s,
    ]
}

fn user_phases(p: &UserPhases) -> [f64; 6] {
    [
        p.read_s,
        p.mesh_setup_s,
        p.device_upload_s,
        p.matrix_setup_s,
        p.galerkin_numeric_s,
        p.solve_s,
    ]
}

fn print_report(r: &TimeLoopReport) {
    outln!(
        "beam k = {}: {} dofs, {} levels (aggregation {}, pf {}), {} steps on the {} ({} threads); aggregates and P built once, reused by every hot step",
        r.k,
        r.dofs,
        r.levels,
        r.aggregation,
        r.pf,
        r.steps.len(),
        r.device,
        r.threads
    );
    if let Some(c) = &r.schedule_cache {
        outln!("schedule cache {}: {}", c.path, c.status);
    }
    if let Some(t) = &r.transfers {
        for (phase, b) in &t.phases {
            outln!(
                "  transfers, {phase}: {} B up in {} copies, {} B down in {} copies",
                b.h2d_bytes,
                b.h2d_copies,
                b.d2h_bytes,
                b.d2h_copies
            );
        }
    }
    if let Some(v) = &r.device_variants {
        outln!("  device products per level: {}", v.join(", "));
    }
    if r.variant == "outer-product" {
        outln!("  note: outer-product is non-deterministic (atomic scatter): the last bits change from run to run");
    }
    if let Some(b) = r.peak_device_bytes {
        outln!("  peak device memory {:.2} GB", b as f64 / 1e9);
    }
    let rows: Vec<StepRow> = r
        .steps
        .iter()
        .map(|s| StepRow {
            step: s.step,
            iterations: s.iterations,
            max_abs: s.max_displacement,
            phases: [
                s.phases.assembly_s,
                s.phases.mesh_setup_s,
                s.phases.matrix_setup_s,
                s.phases.solve_s,
            ],
            note: if s.cold { "  (cold)".into() } else { String::new() },
        })
        .collect();
    print_steps("assembly", "max |u|", &rows);
    print_phases("cold", "assembly", r.device, beam_phases(&r.cold));
    if let Some(h) = &r.hot_mean {
        print_phases("hot mean", "assembly", r.device, beam_phases(h));
        print_matrix_split("hot mean", h);
    }
    if let Some(last) = r.steps.last() {
        outln!("last step's matrix setup: {}", matrix_phases_line(&last.matrix));
    }
}

/// `ptap run --a FILES`: the user's sequence of operators.
fn run_user(args: &RunArgs) -> Result<()> {
    let files = crate::common::expand_files("--a", &args.a)?;
    let rhs = match crate::common::expand_files("--b", &args.b)?.as_slice() {
        [] => RhsSource::Ones,
        [one] => RhsSource::File(one.clone()),
        many => RhsSource::PerOperator(many.to_vec()),
    };
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    let cg = CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };
    let solver = crate::common::solver_options(
        cg,
        args.variant.as_deref(),
        (args.aggregation, args.pf, args.pf_scale),
        args.smoother_precision,
    );
    let options = SequenceOptions {
        files: files.clone(),
        rhs,
        user: UserOptions {
            near_null: args.near_null.source(),
            block_size: args.near_null.block_size,
            device: args.device.parse()?,
            solver,
        },
        schedule_cache: args.schedule_cache.clone(),
        verbose: !args.quiet,
    };
    if let Some(dir) = &args.x_out {
        if !dir.is_dir() {
            bail!("--x-out {} is not a directory; create it first", dir.display());
        }
    }
    let pb = Progress::bar(args.quiet, files.len(), "step");
    let report = ptap_drivers::user::run_sequence(&options, &mut |m| pb.phase(m), &mut |step, x| {
        pb.inc();
        match &args.x_out {
            Some(dir) => crate::common::write_vector(&dir.join(solution_name(&files[step.step - 1])), x),
            None => Ok(()),
        }
    });
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
    Ok(())
}

/// `A_3.mtx` -> `A_3.x.mtx`, `A_3.petsc` -> `A_3.x.petsc`.
pub(crate) fn solution_name(a: &std::path::Path) -> String {
    let stem = a.file_stem().map_or("A".into(), |s| s.to_string_lossy().into_owned());
    let petsc = matches!(a.extension().and_then(|e| e.to_str()), Some("petsc" | "bin"));
    format!("{stem}.x.{}", if petsc { "petsc" } else { "mtx" })
}

fn print_user_report(r: &SequenceReport) {
    let nn = &r.near_null;
    outln!(
        "{} operators of {} rows in {}x{} blocks, {} near-null mode{} ({}{}), {} inspection{}, on the {} ({} threads)",
        r.files,
        r.scalar_rows,
        r.block_size,
        r.block_size,
        nn.modes,
        if nn.modes == 1 { "" } else { "s" },
        nn.source,
        if nn.default { ", the default" } else { "" },
        r.inspections,
        if r.inspections == 1 { "" } else { "s" },
        r.device,
        r.threads
    );
    for s in &r.steps {
        if let Some(c) = &s.schedule_cache {
            outln!("schedule cache {}: {}", c.path, c.status);
        }
    }
    let rows: Vec<StepRow> = r
        .steps
        .iter()
        .map(|s| StepRow {
            step: s.step,
            iterations: s.iterations,
            max_abs: s.max_abs,
            phases: [
                s.phases.read_s,
                s.phases.mesh_setup_s,
                s.phases.matrix_setup_s,
                s.phases.solve_s,
            ],
            note: match (&s.pattern_change, s.inspected) {
                (Some(_), _) => format!("  {} (new pattern: inspected)", s.file),
                (None, true) => format!("  {} (cold)", s.file),
                (None, false) => format!("  {}", s.file),
            },
        })
        .collect();
    print_steps("read", "max |x|", &rows);
    print_phases("cold", "read", &r.device, user_phases(&r.cold));
    if let Some(h) = &r.hot_mean {
        print_phases("hot mean", "read", &r.device, user_phases(h));
    }
}
