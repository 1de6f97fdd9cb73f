//! `ptap bench`: every Galerkin-product variant on the beam hierarchy, timed
//! against floors measured in the same run.
use crate::common::{time_schedule_load, BenchArgs};
use anyhow::{Context, Result};
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions};
use ptap_schedules::{
    inspect_with_base, measure_copy_bandwidth, v0_floor, BlockShape, ProductPolicy, TwoPassSchedule, Variant,
    VariantSchedule,
};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

#[derive(Serialize)]
struct VariantResult {
    level: usize,
    variant: &'static str,
    label: &'static str,
    inspect_s: f64,
    numeric_s: f64,
    speedup_vs_v0: f64,
    v0_floor_bytes: f64,
    /// numeric time over the time V0's DRAM floor takes at measured bandwidth.
    ratio_to_floor: f64,
    bitwise_v0: bool,
    max_rel_diff_vs_v0: f64,
    buffer_bytes: usize,
    /// Bytes of this level's schedule file and the time to load it back.
    schedule_file_bytes: u64,
    load_s: f64,
}

#[derive(Serialize)]
struct BenchReport {
    k: usize,
    threads: usize,
    copy_bandwidth_bytes_per_s: f64,
    results: Vec<VariantResult>,
    /// Per variant, all levels: re-inspecting versus loading the schedules.
    whole_hierarchy: Vec<HierarchyLoad>,
}

#[derive(Serialize)]
struct HierarchyLoad {
    variant: &'static str,
    inspect_s: f64,
    load_s: f64,
    schedule_file_bytes: u64,
    load_speedup: f64,
}

fn time_numeric(
    exec: &mut dyn ptap_runtime::GalerkinProduct,
    a: &BlockCsr,
    p: &BlockCsr,
    c: &mut BlockCsr,
    repeat: usize,
) -> Result<f64> {
    exec.numeric(a, p, c)?;
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        exec.numeric(a, p, c)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.device == "cuda" {
        return crate::bench_cuda::run(args);
    }
    let variants: Vec<Variant> = if args.variants.is_empty() {
        Variant::ALL.to_vec()
    } else {
        args.variants
            .iter()
            .map(|s| s.parse::<Variant>().map_err(anyhow::Error::msg))
            .collect::<Result<_>>()?
    };
    eprintln!("measuring copy bandwidth ...");
    let bw = measure_copy_bandwidth();
    eprintln!("building the beam hierarchy at k = {} ...", args.k);
    let problem = BeamProblem::build(args.k).context("building the beam")?;
    let h = Hierarchy::build(
        problem.a,
        &problem.near_null,
        6,
        &HierarchyOptions::default(),
        &mut |_| {},
    )
    .context("setting up the hierarchy")?;
    let mut results = Vec::new();
    println!(
        "copy bandwidth {:.1} GB/s (read + write), {} threads",
        bw / 1e9,
        rayon::current_num_threads()
    );
    println!(
        "{:<6} {:<16} {:>10} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "level", "variant", "inspect s", "load s", "numeric ms", "vs V0", "/ floor", "max rel diff"
    );
    for l in 0..h.num_levels() - 1 {
        let lev = &h.levels()[l];
        let p = &lev.transfer.as_ref().expect("transfer").p;
        let (bf, bc) = p.block_shape();
        let t = Instant::now();
        let base = Arc::new(TwoPassSchedule::inspect(
            lev.a.pattern_arc().clone(),
            p.pattern_arc().clone(),
        )?);
        let base_s = t.elapsed().as_secs_f64();
        let floor = v0_floor(&base, bf, bc);
        let floor_s = floor / bw;
        let mut reference: Option<(Vec<f64>, f64)> = None;
        for &v in &variants {
            let t = Instant::now();
            let schedule = inspect_with_base(base.clone(), BlockShape::new(bf, bc), &ProductPolicy::Fixed(v))?.schedule;
            let inspect_s = base_s + t.elapsed().as_secs_f64();
            let (schedule_file_bytes, load_s) = time_schedule_load(&schedule, &lev.a, p)?;
            let mut exec = executor_for(&schedule, bf, bc)?;
            let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
            let numeric_s = time_numeric(exec.as_mut(), &lev.a, p, &mut c, args.repeat)?;
            if v == Variant::TwoPass || reference.is_none() {
                if v != Variant::TwoPass {
                    // Make V0 the reference even when it was not asked for.
                    let mut e0 = executor_for(&VariantSchedule::TwoPass(base.clone()), bf, bc)?;
                    let mut c0 = BlockCsr::zeros(base.c.clone(), bc, bc);
                    let t0 = time_numeric(e0.as_mut(), &lev.a, p, &mut c0, args.repeat)?;
                    reference = Some((c0.values().to_vec(), t0));
                } else {
                    reference = Some((c.values().to_vec(), numeric_s));
                }
            }
            let (ref_vals, v0_s) = reference.as_ref().unwrap();
            let scale = ref_vals.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let diff = c
                .values()
                .iter()
                .zip(ref_vals)
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
                / scale;
            let r = VariantResult {
                level: l,
                variant: v.name(),
                label: v.label(),
                inspect_s,
                numeric_s,
                speedup_vs_v0: v0_s / numeric_s,
                v0_floor_bytes: floor,
                ratio_to_floor: numeric_s / floor_s,
                bitwise_v0: v.bitwise_v0(),
                max_rel_diff_vs_v0: diff,
                buffer_bytes: exec.buffer_bytes(),
                schedule_file_bytes,
                load_s,
            };
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
            results.push(r);
        }
        println!(
            "{:<6} V0 stream floor {:.1} MB = {:.2} ms at measured bandwidth",
            format!("l{l}"),
            floor / 1e6,
            1e3 * floor_s
        );
    }
    println!(
        "whole hierarchy ({} products): inspecting again versus loading the schedule files",
        h.num_levels() - 1
    );
    let whole_hierarchy: Vec<HierarchyLoad> = variants
        .iter()
        .map(|v| {
            let of = results.iter().filter(|r| r.variant == v.name());
            let (inspect_s, load_s, bytes) = of.fold((0.0, 0.0, 0u64), |(i, l, b), r| {
                (i + r.inspect_s, l + r.load_s, b + r.schedule_file_bytes)
            });
            HierarchyLoad {
                variant: v.name(),
                inspect_s,
                load_s,
                schedule_file_bytes: bytes,
                load_speedup: inspect_s / load_s.max(1e-12),
            }
        })
        .collect();
    for w in &whole_hierarchy {
        println!(
            "  {:<14} inspect {:>8.3} s   load {:>8.4} s   {:>6.1}x   ({:.1} MB)",
            w.variant,
            w.inspect_s,
            w.load_s,
            w.load_speedup,
            w.schedule_file_bytes as f64 / 1e6
        );
    }
    if let Some(path) = &args.json {
        let rep = BenchReport {
            k: args.k,
            threads: rayon::current_num_threads(),
            copy_bandwidth_bytes_per_s: bw,
            results,
            whole_hierarchy,
        };
        std::fs::write(path, serde_json::to_string_pretty(&rep)? + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    Ok(())
}
