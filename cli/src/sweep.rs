//! `ptap sweep-filter`: the paper's prolongator-filter sweep (`tab:pfsweep`);
//! arguments and printing, the sweep is `ptap_drivers::sweep`.
use crate::out::Progress;
use anyhow::Result;
use clap::Args;
use ptap_drivers::sweep::{SweepOptions, SweepRow};
use ptap_drivers::target::Target;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Beam refinement.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Filter thresholds to sweep (comma-separated; the paper's 0.03 and the default 0.07 among them).
    #[arg(long, value_delimiter = ',', default_value = "0,0.01,0.02,0.03,0.05,0.07")]
    pf: Vec<f64>,
    /// Per-level factor on pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5)]
    pf_scale: f64,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    aggregation: ptap_amg::Aggregation,
    /// Hot refreshes timed per threshold, 1 to 1000; the fastest numeric product is reported.
    #[arg(long, default_value_t = 3, value_parser = crate::common::count_in::<1, 1000>)]
    repeat: usize,
    /// Where the hot products run: `cpu`, `cuda` (fails without a GPU) or `auto`.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    device: String,
    /// Write the rows as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Do not print progress or the table (the JSON is still written).
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: &SweepArgs) -> Result<()> {
    let k = crate::common::validate_k(args.k)?;
    crate::common::validate_pf(&args.pf, args.pf_scale)?;
    let target = match crate::common::open(&args.device)? {
        Some(dev) => Target::Cuda(dev),
        None => Target::Cpu,
    };
    let options = SweepOptions {
        k,
        pf: args.pf.clone(),
        pf_scale: args.pf_scale,
        aggregation: args.aggregation,
        repeat: args.repeat,
    };
    if !args.quiet {
        outln!(
            "{:>6} {:>5} {:>14} {:>11} {:>11} {:>12} {:>12} {:>11} {:>6}",
            "pf",
            "its",
            "max |u|",
            "P0 blocks",
            "all P",
            "numeric ms",
            "matrix ms",
            "hier. MB",
            "op.c."
        );
    }
    // A bar over the thresholds; each row is printed as it is done.
    let progress = Progress::bar(args.quiet, args.pf.len(), "threshold");
    let at = |i: usize| {
        if let Some(pf) = args.pf.get(i) {
            progress.phase(&format!("pf {pf}: setup, solve, hot refreshes"));
        }
    };
    at(0);
    let mut done = 0;
    let rows = ptap_drivers::sweep::run(&options, &target, &mut |row| {
        if !args.quiet {
            progress.suspend(|| print_row(row));
        }
        progress.inc();
        done += 1;
        at(done);
    })?;
    progress.finish();
    if let Some(base) = rows.first().filter(|_| !args.quiet) {
        for r in rows.iter().skip(1) {
            outln!(
                "pf {}: {:+} iterations, hot numeric product {:.2}x faster than pf {}",
                r.pf,
                r.iterations as i64 - base.iterations as i64,
                base.hot_numeric_s / r.hot_numeric_s,
                base.pf
            );
        }
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &rows)?;
    }
    Ok(())
}

fn print_row(row: &SweepRow) {
    outln!(
        "{:>6} {:>5} {:>14.9} {:>11} {:>11} {:>12.2} {:>12.2} {:>11.1} {:>6.3}",
        row.pf,
        row.iterations,
        row.max_displacement,
        row.fine_p_blocks,
        row.all_p_blocks,
        1e3 * row.hot_numeric_s,
        1e3 * row.hot_matrix_setup_s,
        row.hierarchy_bytes as f64 / 1e6,
        row.operator_complexity
    );
}
