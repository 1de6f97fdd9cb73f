//! `ptap bench`: arguments and printing; the harness is `ptap_drivers::bench`
//! (CPU) and `ptap_drivers::bench_cuda` (`--device cuda`).
use crate::common::BenchArgs;
use anyhow::{Context, Result};
use ptap_drivers::bench::{BenchOptions, BenchReport};
use ptap_schedules::Variant;
use serde::Serialize;
use std::path::Path;

pub fn run(args: &BenchArgs) -> Result<()> {
    let variants = args
        .variants
        .iter()
        .map(|s| s.parse::<Variant>().map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    if args.device == "cuda" {
        return crate::bench_cuda::run(args);
    }
    let options = BenchOptions {
        k: args.k,
        repeat: args.repeat,
        variants,
    };
    let report = ptap_drivers::bench::run(&options, &mut |m| eprintln!("{m} ..."))?;
    print_report(&report);
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}

fn write_json<T: Serialize>(path: &Path, report: &T) -> Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("cannot write the JSON report to {}", path.display()))
}

fn print_report(rep: &BenchReport) {
    let bw = rep.copy_bandwidth_bytes_per_s;
    println!(
        "copy bandwidth {:.1} GB/s (read + write), {} threads",
        bw / 1e9,
        rep.threads
    );
    println!(
        "{:<6} {:<16} {:>10} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "level", "variant", "inspect s", "load s", "numeric ms", "vs V0", "/ floor", "max rel diff"
    );
    for level in rep.results.chunk_by(|a, b| a.level == b.level) {
        let l = level[0].level;
        for r in level {
            println!(
                "{:<6} {:<16} {:>10.3} {:>9.4} {:>11.2} {:>8.2}x {:>8.1}x {:>12.1e}",
                format!("l{l}"),
                format!("{} {}", r.label, r.variant),
                r.inspect_s,
                r.load_s,
                1e3 * r.numeric_s,
                r.speedup_vs_v0,
                r.ratio_to_floor,
                r.max_rel_diff_vs_v0
            );
        }
        let floor = level[0].v0_floor_bytes;
        println!(
            "{:<6} V0 stream floor {:.1} MB = {:.2} ms at measured bandwidth",
            format!("l{l}"),
            floor / 1e6,
            1e3 * floor / bw
        );
    }
    let products = rep.results.last().map_or(0, |r| r.level + 1);
    println!("whole hierarchy ({products} products): inspecting again versus loading the schedule files");
    for w in &rep.whole_hierarchy {
        println!(
            "  {:<14} inspect {:>8.3} s   load {:>8.4} s   {:>6.1}x   ({:.1} MB)",
            w.variant,
            w.inspect_s,
            w.load_s,
            w.load_speedup,
            w.schedule_file_bytes as f64 / 1e6
        );
    }
}
