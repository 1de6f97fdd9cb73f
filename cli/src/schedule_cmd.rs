//! `ptap inspect` and `ptap replay`: schedules that outlive the process.
//!
//! `inspect` runs the inspector (for the beam: the whole AMG mesh setup) and
//! writes every level's product schedule, with its prolongator, to one bundle
//! file. `replay` loads that file in another process, checks that it was built
//! for the operator it is handed, and runs only the numeric products.
use crate::common::{validate_k, Operands};
use anyhow::{bail, Context, Result};
use clap::Args;
use ptap_fem::BeamProblem;
use ptap_io::BlockSpec;
use ptap_runtime::bundle::{hierarchy_bundle, level_record, load_level, StoredLevel};
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle, ScheduleBundle};
use ptap_schedules::model::MachineParams;
use ptap_schedules::{inspect, BlockShape, ProductPolicy, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct InspectArgs {
    #[command(flatten)]
    operands: Operands,
    /// Galerkin-product variant (two-pass, fused, fused-rcm, slot-tiled,
    /// panel-tiled, flat-stream, outer-product, column-split, or V0..V4), or
    /// `auto` to pick per level from the traffic model of this CPU, measured
    /// first (copy bandwidth, last-level cache, threads). outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long, default_value = "two-pass")]
    variant: String,
    /// The schedule file to write (replaced atomically).
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// Write a report as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Do not print the human-readable report.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A schedule file written by `ptap inspect`.
    #[arg(long, value_name = "PATH")]
    schedule: PathBuf,
    #[command(flatten)]
    operands: Operands,
    /// Timed numeric products per level (after one untimed call), 1 to 1000.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::common::count_in::<1, 1000>)]
    repeat: usize,
    /// Write A_c (Matrix Market if FILE ends in .mtx, else PETSc binary). With
    /// several levels, level l goes to FILE with `.l<l>` before the extension.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write a report as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Do not print the human-readable report.
    #[arg(long)]
    quiet: bool,
}

fn parse_variant(s: &str) -> Result<Option<Variant>> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    Ok(Some(s.parse().map_err(|e: String| anyhow::anyhow!("--variant: {e}"))?))
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write the JSON report to {}", path.display()))
}

/// The beam hierarchy with the given variant (`None`: per level from the model).
pub fn beam_hierarchy(k: usize, variant: Option<Variant>) -> Result<Hierarchy> {
    let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let mut opts = HierarchyOptions {
        variant,
        ..HierarchyOptions::default()
    };
    if variant.is_none() {
        opts.machine = Some(MachineParams::measure_cpu());
    }
    Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).context("setting up the AMG hierarchy")
}

/// Inspects `P^T A P` for matrices read from files and wraps it as a one-level bundle.
fn file_bundle(a: &BlockCsr, p: &BlockCsr, variant: Option<Variant>) -> Result<(ScheduleBundle, f64)> {
    let (bf, bc) = p.block_shape();
    if a.block_shape() != (bf, bf) {
        bail!(
            "A has {}x{} blocks but P has {bf}x{bc}: A's blocks must be square with P's row block size",
            a.block_shape().0,
            a.block_shape().1
        );
    }
    // `auto`: the model on this CPU, fed the inspector's exact counts. The
    // machine is measured before the clock starts (once per process).
    let policy = match variant {
        Some(v) => ProductPolicy::Fixed(v),
        None => ProductPolicy::model(MachineParams::measure_cpu(), &Variant::ALL).with_exact_counts(),
    };
    let t = Instant::now();
    let schedule = inspect(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
        BlockShape::new(bf, bc),
        &policy,
    )?
    .schedule;
    let inspect_s = t.elapsed().as_secs_f64();
    let stored = StoredLevel {
        p: p.clone(),
        schedule,
        aggregates: p.ncols(),
        merged_aggregates: 0,
        unaggregated_nodes: 0,
        omega: 0.0,
    };
    let bundle = ScheduleBundle {
        created_by: format!("ptap {}", env!("CARGO_PKG_VERSION")),
        problem: "A and P from files".into(),
        records: vec![level_record(0, &stored)],
    };
    Ok((bundle, inspect_s))
}

fn read_operands(a: &Path, p: &Path) -> Result<(BlockCsr, BlockCsr)> {
    ptap_io::check_operand_headers(a, p)?;
    let am = ptap_io::read_matrix(a, BlockSpec::Infer).with_context(|| format!("reading A from {}", a.display()))?;
    let pm = ptap_io::read_matrix(p, BlockSpec::Infer).with_context(|| format!("reading P from {}", p.display()))?;
    am.check_finite("A")
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.display()))?;
    pm.check_finite("P")
        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    Ok((am, pm))
}

/// Time to re-run the inspector of every level of `h` (symbolic two-pass plus
/// the level's variant), the work a loaded bundle saves.
pub fn reinspect_seconds(h: &Hierarchy) -> f64 {
    let t = Instant::now();
    for lev in h.levels() {
        if let Some(tr) = &lev.transfer {
            let (bf, bc) = tr.p.block_shape();
            let policy = ProductPolicy::Fixed(tr.variant_schedule.variant());
            std::hint::black_box(
                inspect(
                    lev.a.pattern_arc().clone(),
                    tr.p.pattern_arc().clone(),
                    BlockShape::new(bf, bc),
                    &policy,
                )
                .expect("the hierarchy's own operands"),
            );
        }
    }
    t.elapsed().as_secs_f64()
}

/// Time to open `path` and rebuild every level's schedule for the operators of
/// `h` (what `replay` and a schedule cache do instead of inspecting; loading
/// `P` too replaces the rest of the mesh setup and is timed by `replay`).
pub fn load_seconds(path: &Path, h: &Hierarchy) -> Result<f64> {
    let t = Instant::now();
    let bundle = Arc::new(MappedBundle::open(path)?);
    for (l, lev) in h.levels().iter().enumerate() {
        if let Some(tr) = &lev.transfer {
            std::hint::black_box(VariantSchedule::from_record(
                &bundle,
                l as u32,
                lev.a.pattern_arc().clone(),
                tr.p.pattern_arc().clone(),
            )?);
        }
    }
    Ok(t.elapsed().as_secs_f64())
}

#[derive(Serialize)]
struct InspectReport {
    schedule: String,
    file_bytes: u64,
    levels: Vec<InspectLevel>,
    /// Whole AMG mesh setup (beam) or the inspector alone (files).
    setup_s: f64,
    /// The inspector alone, all levels, timed again after the setup.
    inspect_s: f64,
    write_s: f64,
    /// Opening the written file and rebuilding every level's schedule and P.
    load_s: f64,
}

#[derive(Serialize)]
struct InspectLevel {
    level: u32,
    variant: String,
    fine_block: u32,
    coarse_block: u32,
    arrays_bytes: u64,
}

pub fn run_inspect(args: &InspectArgs) -> Result<()> {
    let variant = parse_variant(&args.variant)?;
    let o = &args.operands;
    let (bundle, setup_s, inspect_s, source) = match (&o.beam, &o.a, &o.p) {
        (Some(k), _, _) => {
            let k = *k;
            validate_k(k as i64)?;
            let h = beam_hierarchy(k, variant)?;
            if h.num_levels() < 2 {
                bail!(
                    "the beam at k = {k} has {} scalar rows, few enough to be solved directly: its hierarchy has one level and no Galerkin product to inspect; use k >= 2",
                    h.operator().scalar_rows()
                );
            }
            let setup_s = h.timings.mesh_setup_s;
            let inspect_s = reinspect_seconds(&h);
            (hierarchy_bundle(&h, &format!("beam k={k}")), setup_s, inspect_s, Ok(h))
        }
        (None, Some(a), Some(p)) => {
            let (am, pm) = read_operands(a, p)?;
            let (bundle, inspect_s) = file_bundle(&am, &pm, variant)?;
            (bundle, inspect_s, inspect_s, Err((am, pm)))
        }
        _ => bail!("give either --beam K or both --a FILE and --p FILE"),
    };
    let t = Instant::now();
    let file_bytes = write_bundle(&args.out, &bundle)?;
    let write_s = t.elapsed().as_secs_f64();
    let load_s = match &source {
        Ok(h) => load_seconds(&args.out, h)?,
        Err((am, pm)) => {
            let t = Instant::now();
            let b = Arc::new(MappedBundle::open(&args.out)?);
            std::hint::black_box(VariantSchedule::from_record(
                &b,
                0,
                am.pattern_arc().clone(),
                pm.pattern_arc().clone(),
            )?);
            t.elapsed().as_secs_f64()
        }
    };
    let report = InspectReport {
        schedule: args.out.display().to_string(),
        file_bytes,
        levels: bundle
            .records
            .iter()
            .map(|r| InspectLevel {
                level: r.level,
                variant: r.variant.clone(),
                fine_block: r.fine_block,
                coarse_block: r.coarse_block,
                arrays_bytes: r
                    .arrays
                    .iter()
                    .map(|a| a.data.len() as u64 * a.data.kind().elem_bytes())
                    .sum(),
            })
            .collect(),
        setup_s,
        inspect_s,
        write_s,
        load_s,
    };
    if !args.quiet {
        outln!(
            "wrote {} ({:.1} MB, {} level product{})",
            report.schedule,
            file_bytes as f64 / 1e6,
            report.levels.len(),
            if report.levels.len() == 1 { "" } else { "s" }
        );
        for l in &report.levels {
            outln!(
                "  level {}: {} ({}x{} / {}x{}), {:.1} MB of arrays",
                l.level,
                l.variant,
                l.fine_block,
                l.fine_block,
                l.fine_block,
                l.coarse_block,
                l.arrays_bytes as f64 / 1e6
            );
        }
        outln!(
            "setup {:.3} s, inspector alone {:.3} s, write {:.3} s, load {:.4} s ({:.1}x faster than inspecting)",
            setup_s,
            inspect_s,
            write_s,
            load_s,
            inspect_s / load_s.max(1e-9)
        );
    }
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct ReplayLevel {
    level: u32,
    variant: &'static str,
    coarse_block_rows: usize,
    coarse_blocks: usize,
    load_s: f64,
    numeric_best_s: f64,
    numeric_mean_s: f64,
    out: Option<String>,
}

#[derive(Serialize)]
struct ReplayReport {
    schedule: String,
    problem: String,
    repeat: usize,
    open_s: f64,
    levels: Vec<ReplayLevel>,
}

/// `FILE` for one level, `FILE` with `.l<l>` before its extension for several.
fn level_path(out: &Path, level: u32, levels: usize) -> PathBuf {
    if levels <= 1 {
        return out.to_path_buf();
    }
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match out.extension() {
        Some(ext) => format!("{stem}.l{level}.{}", ext.to_string_lossy()),
        None => format!("{stem}.l{level}"),
    };
    out.with_file_name(name)
}

/// Writes `a` as Matrix Market (`.mtx`) or PETSc binary (anything else).
pub fn write_matrix(path: &Path, a: &BlockCsr) -> Result<()> {
    let is_mm = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mtx"));
    if is_mm {
        ptap_io::write_matrix_market(path, a, false)?;
    } else {
        ptap_io::write_petsc_mat(path, a)?;
    }
    Ok(())
}

pub fn run_replay(args: &ReplayArgs) -> Result<()> {
    let o = &args.operands;
    let t_open = Instant::now();
    let bundle = Arc::new(MappedBundle::open(&args.schedule)?);
    let open_s = t_open.elapsed().as_secs_f64();
    if bundle.is_empty() {
        bail!(
            "{} holds no level products; re-run `ptap inspect`",
            args.schedule.display()
        );
    }
    // The fine operator, and P when it comes from a file rather than the bundle.
    let (mut a, given_p) = match (&o.beam, &o.a, &o.p) {
        (Some(k), _, _) => {
            let k = *k;
            validate_k(k as i64)?;
            let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
            (problem.a, None)
        }
        (None, Some(af), Some(pf)) => {
            let (am, pm) = read_operands(af, pf)?;
            (am, Some(pm))
        }
        _ => bail!("give either --beam K or both --a FILE and --p FILE"),
    };
    let nlev = if given_p.is_some() { 1 } else { bundle.len() };
    let mut levels = Vec::new();
    for l in 0..nlev as u32 {
        let t_load = Instant::now();
        let (p, schedule) = match &given_p {
            Some(p) => {
                let s = VariantSchedule::from_record(&bundle, l, a.pattern_arc().clone(), p.pattern_arc().clone())?;
                (p.clone(), s)
            }
            None => {
                let stored = load_level(&bundle, l, a.pattern_arc())?;
                (stored.p, stored.schedule)
            }
        };
        let load_s = t_load.elapsed().as_secs_f64();
        let (bf, bc) = p.block_shape();
        if a.block_shape() != (bf, bf) {
            bail!(
                "{}: level {l} was inspected for {bf}x{bf} blocks of A but A has {}x{}; re-run `ptap inspect` for this operator",
                args.schedule.display(),
                a.block_shape().0,
                a.block_shape().1
            );
        }
        let mut product = executor_for(&schedule, bf, bc)?;
        let mut ac = BlockCsr::zeros(schedule.base().c.clone(), bc, bc);
        product.numeric(&a, &p, &mut ac)?;
        let (mut best, mut total) = (f64::INFINITY, 0.0);
        for _ in 0..args.repeat {
            let t = Instant::now();
            product.numeric(&a, &p, &mut ac)?;
            let dt = t.elapsed().as_secs_f64();
            best = best.min(dt);
            total += dt;
        }
        let out = match &args.out {
            Some(path) => {
                let path = level_path(path, l, nlev);
                write_matrix(&path, &ac).with_context(|| format!("writing A_c of level {l}"))?;
                Some(path.display().to_string())
            }
            None => None,
        };
        levels.push(ReplayLevel {
            level: l,
            variant: product.variant().name(),
            coarse_block_rows: ac.nrows(),
            coarse_blocks: ac.nnzb(),
            load_s,
            numeric_best_s: best,
            numeric_mean_s: total / args.repeat as f64,
            out,
        });
        a = ac;
    }
    let report = ReplayReport {
        schedule: args.schedule.display().to_string(),
        problem: bundle.problem().to_string(),
        repeat: args.repeat,
        open_s,
        levels,
    };
    if !args.quiet {
        outln!(
            "{} ({}): opened in {:.4} s",
            report.schedule,
            report.problem,
            report.open_s
        );
        outln!(
            "{:>5} {:<14} {:>10} {:>11} {:>9} {:>12} {:>12}",
            "level",
            "variant",
            "m_C",
            "Z_C",
            "load s",
            "numeric s",
            "mean s"
        );
        for l in &report.levels {
            outln!(
                "{:>5} {:<14} {:>10} {:>11} {:>9.4} {:>12.6} {:>12.6}{}",
                l.level,
                l.variant,
                l.coarse_block_rows,
                l.coarse_blocks,
                l.load_s,
                l.numeric_best_s,
                l.numeric_mean_s,
                l.out.as_ref().map(|p| format!("  -> {p}")).unwrap_or_default()
            );
        }
    }
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}
