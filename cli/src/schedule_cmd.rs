//! `ptap inspect` and `ptap replay`: arguments and printing; the work is
//! `ptap_drivers::schedules` (schedules that outlive the process).
use crate::common::{validate_k, Operands};
use crate::out::Progress;
use anyhow::{bail, Result};
use clap::Args;
use ptap_drivers::schedules::{InspectOptions, Operands as Source, ReplayOptions};
use ptap_schedules::Variant;
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    crate::common::write_json(path, value)
}

/// The driver's operands for `--beam` or `--a`/`--p` (the beam's `k` checked against memory).
fn source(o: &Operands) -> Result<Source> {
    match (&o.beam, &o.a, &o.p) {
        (Some(k), _, _) => Ok(Source::Beam(validate_k(*k as i64)?)),
        (None, Some(a), Some(p)) => Ok(Source::Files {
            a: a.clone(),
            p: p.clone(),
        }),
        _ => bail!("give either --beam K or both --a FILE and --p FILE"),
    }
}

pub fn run_inspect(args: &InspectArgs) -> Result<()> {
    let options = InspectOptions {
        variant: parse_variant(&args.variant)?,
        operands: source(&args.operands)?,
        out: args.out.clone(),
    };
    let progress = Progress::spinner(args.quiet);
    let report = ptap_drivers::schedules::inspect(&options, &mut |m| progress.phase(m))?;
    progress.finish();
    if !args.quiet {
        outln!(
            "wrote {} ({:.1} MB, {} level product{})",
            report.schedule,
            report.file_bytes as f64 / 1e6,
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
            report.setup_s,
            report.inspect_s,
            report.write_s,
            report.load_s,
            report.inspect_s / report.load_s.max(1e-9)
        );
    }
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}

pub fn run_replay(args: &ReplayArgs) -> Result<()> {
    let options = ReplayOptions {
        schedule: args.schedule.clone(),
        operands: source(&args.operands)?,
        repeat: args.repeat,
        out: args.out.clone(),
    };
    let progress = Progress::spinner(args.quiet);
    let report = ptap_drivers::schedules::replay(&options, &mut |m| progress.phase(m))?;
    progress.finish();
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
