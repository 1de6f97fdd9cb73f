//! The CPU bench harness (`ptap bench`): every Galerkin-product variant on
//! each level of the beam hierarchy, timed against V0 and against V0's DRAM
//! stream floor at the copy bandwidth measured in the same run, and the time
//! to load each schedule from its file against inspecting it again.
use crate::target::beam_hierarchy_with;
use anyhow::Result;
use ptap_amg::{Aggregation, AmgOptions};
use ptap_runtime::{GalerkinProduct, KernelRegistry};
use ptap_schedules::file::{write_bundle, MappedBundle, ScheduleBundle};
use ptap_schedules::{
    inspect_with_base, measure_copy_bandwidth, v0_floor, BlockShape, ProductPolicy, TwoPassSchedule, Variant,
    VariantSchedule,
};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// What to bench.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    pub k: usize,
    /// Timed numeric calls per variant (after one warm-up); the minimum is reported.
    pub repeat: usize,
    /// Variants to run, in this order; empty = all of [`Variant::ALL`].
    pub variants: Vec<Variant>,
    /// How the hierarchy's aggregates are formed.
    pub aggregation: Aggregation,
    /// Prolongator filter threshold and per-level factor.
    pub pf: f64,
    pub pf_scale: f64,
}

impl BenchOptions {
    /// The mesh setup's options these ask for (the defaults otherwise).
    pub fn amg(&self) -> AmgOptions {
        AmgOptions {
            aggregation: self.aggregation,
            pf: self.pf,
            pf_scale: self.pf_scale,
            ..AmgOptions::default()
        }
    }
}

/// One variant on one level.
#[derive(Clone, Debug, Serialize)]
pub struct VariantResult {
    pub level: usize,
    pub variant: &'static str,
    pub label: &'static str,
    pub inspect_s: f64,
    pub numeric_s: f64,
    pub speedup_vs_v0: f64,
    pub v0_floor_bytes: f64,
    /// numeric time over the time V0's DRAM floor takes at measured bandwidth.
    pub ratio_to_floor: f64,
    pub bitwise_v0: bool,
    pub max_rel_diff_vs_v0: f64,
    pub buffer_bytes: usize,
    /// Bytes of this level's schedule file and the time to load it back.
    pub schedule_file_bytes: u64,
    pub load_s: f64,
}

/// Per variant, all levels: re-inspecting versus loading the schedules.
#[derive(Clone, Debug, Serialize)]
pub struct HierarchyLoad {
    pub variant: &'static str,
    pub inspect_s: f64,
    pub load_s: f64,
    pub schedule_file_bytes: u64,
    pub load_speedup: f64,
}

/// The whole run (what `ptap bench --json` writes).
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub k: usize,
    pub aggregation: &'static str,
    pub pf: f64,
    pub pf_scale: f64,
    pub threads: usize,
    pub copy_bandwidth_bytes_per_s: f64,
    /// Level by level, each level's variants in the order asked for.
    pub results: Vec<VariantResult>,
    /// Per variant, all levels: re-inspecting versus loading the schedules.
    pub whole_hierarchy: Vec<HierarchyLoad>,
}

/// One level's bench: the rows, and V0's product values (the reference every
/// row is compared against).
pub struct LevelBench {
    pub results: Vec<VariantResult>,
    pub v0_values: Vec<f64>,
}

/// Runs the CPU bench on the beam at `options.k`. `progress` gets a line as
/// each long phase starts.
pub fn run(options: &BenchOptions, progress: &mut dyn FnMut(&str)) -> Result<BenchReport> {
    let variants = if options.variants.is_empty() {
        Variant::ALL.to_vec()
    } else {
        options.variants.clone()
    };
    progress("measuring copy bandwidth");
    let bw = measure_copy_bandwidth();
    progress(&format!("building the beam hierarchy at k = {}", options.k));
    let h = beam_hierarchy_with(options.k, Some(Variant::TwoPass), &options.amg())?;
    let kernels = &h.options().kernels;
    let mut results = Vec::new();
    for (l, lev) in h.levels()[..h.num_levels() - 1].iter().enumerate() {
        progress(&format!("level {l}: {} variants", variants.len()));
        let p = &lev.transfer.as_ref().expect("every level but the coarsest has P").p;
        results.extend(bench_level(kernels, &lev.a, p, l, &variants, bw, options.repeat)?.results);
    }
    let whole_hierarchy = variants.iter().map(|&v| whole_hierarchy(v, &results)).collect();
    Ok(BenchReport {
        k: options.k,
        aggregation: options.aggregation.name(),
        pf: options.pf,
        pf_scale: options.pf_scale,
        threads: rayon::current_num_threads(),
        copy_bandwidth_bytes_per_s: bw,
        results,
        whole_hierarchy,
    })
}

/// The product `P^T a P` of level `level` with each of `variants` (by
/// `kernels`), against V0 and V0's stream floor at `bw` bytes per second.
pub fn bench_level(
    kernels: &KernelRegistry,
    a: &BlockCsr,
    p: &BlockCsr,
    level: usize,
    variants: &[Variant],
    bw: f64,
    repeat: usize,
) -> Result<LevelBench> {
    let (bf, bc) = p.block_shape();
    let t = Instant::now();
    let base = Arc::new(TwoPassSchedule::inspect(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
    )?);
    let base_s = t.elapsed().as_secs_f64();
    let floor = v0_floor(&base, bf, bc);
    let measure = |v| measure_variant(kernels, v, &base, base_s, a, p, repeat);
    // V0 is the reference: its own row when asked for, else a run of its own.
    let mut v0 = if variants.contains(&Variant::TwoPass) {
        Some(measure(Variant::TwoPass)?)
    } else {
        None
    };
    let (v0_values, v0_s) = match &v0 {
        Some(m) => (m.values.clone(), m.numeric_s),
        None => {
            let mut e0 = kernels.executor_for(&VariantSchedule::TwoPass(base.clone()), bf, bc)?;
            let mut c0 = BlockCsr::zeros(base.c.clone(), bc, bc);
            let t0 = time_numeric(e0.as_mut(), a, p, &mut c0, repeat)?;
            (c0.values().to_vec(), t0)
        }
    };
    let mut results = Vec::with_capacity(variants.len());
    for &v in variants {
        let m = match v0.take_if(|_| v == Variant::TwoPass) {
            Some(m) => m,
            None => measure(v)?,
        };
        results.push(VariantResult {
            level,
            variant: v.name(),
            label: v.label(),
            inspect_s: m.inspect_s,
            numeric_s: m.numeric_s,
            speedup_vs_v0: v0_s / m.numeric_s,
            v0_floor_bytes: floor,
            ratio_to_floor: m.numeric_s / (floor / bw),
            bitwise_v0: v.bitwise_v0(),
            max_rel_diff_vs_v0: max_rel_diff(&m.values, &v0_values),
            buffer_bytes: m.buffer_bytes,
            schedule_file_bytes: m.schedule_file_bytes,
            load_s: m.load_s,
        });
    }
    Ok(LevelBench { results, v0_values })
}

/// What one variant's run on one level measured.
struct Measured {
    inspect_s: f64,
    schedule_file_bytes: u64,
    load_s: f64,
    numeric_s: f64,
    buffer_bytes: usize,
    values: Vec<f64>,
}

/// Inspects `v` over `base` (whose own inspection took `base_s`), times its
/// schedule file's load and its numeric product.
fn measure_variant(
    kernels: &KernelRegistry,
    v: Variant,
    base: &Arc<TwoPassSchedule>,
    base_s: f64,
    a: &BlockCsr,
    p: &BlockCsr,
    repeat: usize,
) -> Result<Measured> {
    let (bf, bc) = p.block_shape();
    let t = Instant::now();
    let schedule = inspect_with_base(base.clone(), BlockShape::new(bf, bc), &ProductPolicy::Fixed(v))?.schedule;
    let inspect_s = base_s + t.elapsed().as_secs_f64();
    let (schedule_file_bytes, load_s) = time_schedule_load(&schedule, a, p)?;
    let mut exec = kernels.executor_for(&schedule, bf, bc)?;
    let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
    let numeric_s = time_numeric(exec.as_mut(), a, p, &mut c, repeat)?;
    Ok(Measured {
        inspect_s,
        schedule_file_bytes,
        load_s,
        numeric_s,
        buffer_bytes: exec.buffer_bytes(),
        values: c.values().to_vec(),
    })
}

/// `max |x - y| / max |y|`.
fn max_rel_diff(x: &[f64], y: &[f64]) -> f64 {
    let scale = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    x.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs())) / scale
}

/// Variant `v`'s inspect and load times and file bytes summed over all levels.
fn whole_hierarchy(v: Variant, results: &[VariantResult]) -> HierarchyLoad {
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
}

/// One warm-up call, then the best of `repeat` timed numeric calls.
fn time_numeric(
    exec: &mut dyn GalerkinProduct,
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

/// Writes `schedule` as a one-record bundle to a temporary file and times
/// loading it back for `a` and `p` (open, checksum, validation, rebuild).
/// Returns (file bytes, load seconds); the file is removed.
fn time_schedule_load(schedule: &VariantSchedule, a: &BlockCsr, p: &BlockCsr) -> Result<(u64, f64)> {
    let (bf, bc) = p.block_shape();
    let bundle = ScheduleBundle {
        created_by: format!("ptap {}", env!("CARGO_PKG_VERSION")),
        problem: "bench".into(),
        records: vec![schedule.to_record(0, bf, bc)],
    };
    let path = std::env::temp_dir().join(format!("ptap-bench-{}.ptaps", std::process::id()));
    let bytes = write_bundle(&path, &bundle)?;
    drop(bundle);
    let t = Instant::now();
    let loaded = Arc::new(MappedBundle::open(&path)?);
    let s = VariantSchedule::from_record(&loaded, 0, a.pattern_arc().clone(), p.pattern_arc().clone());
    let load_s = t.elapsed().as_secs_f64();
    drop(s?);
    let _ = std::fs::remove_file(&path);
    Ok((bytes, load_s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::beam_hierarchy;
    use ptap_runtime::TwoPassExecutor;

    #[test]
    fn every_variant_on_every_level_and_v0_is_the_two_pass_executor() {
        let options = BenchOptions {
            k: 2,
            repeat: 1,
            variants: Vec::new(),
            aggregation: Aggregation::Natural,
            pf: 0.0,
            pf_scale: 0.5,
        };
        let report = run(&options, &mut |_| {}).unwrap();
        let h = beam_hierarchy(2, Some(Variant::TwoPass)).unwrap();
        let products = h.num_levels() - 1;
        assert!(products >= 1);
        assert_eq!(report.results.len(), products * Variant::ALL.len());
        for (l, level) in report.results.chunks(Variant::ALL.len()).enumerate() {
            for (r, v) in level.iter().zip(Variant::ALL) {
                assert_eq!((r.level, r.variant), (l, v.name()));
                assert!(r.ratio_to_floor > 0.0, "{l} {}: {}", r.variant, r.ratio_to_floor);
            }
        }
        assert_eq!(report.whole_hierarchy.len(), Variant::ALL.len());
        let v0 = report.results.iter().filter(|r| r.variant == Variant::TwoPass.name());
        assert!(v0
            .clone()
            .all(|r| r.max_rel_diff_vs_v0 == 0.0 && r.speedup_vs_v0 == 1.0));

        // V0's values, with and without its own row, are a direct two-pass run's, bit for bit.
        for (l, lev) in h.levels()[..products].iter().enumerate() {
            let p = &lev.transfer.as_ref().unwrap().p;
            let (bf, bc) = p.block_shape();
            let base =
                Arc::new(TwoPassSchedule::inspect(lev.a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
            let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
            TwoPassExecutor::new(base, bf, bc).numeric(&lev.a, p, &mut c).unwrap();
            let want: Vec<u64> = c.values().iter().map(|v| v.to_bits()).collect();
            for variants in [vec![Variant::TwoPass, Variant::ColumnSplit], vec![Variant::SlotTiled]] {
                let got = bench_level(&h.options().kernels, &lev.a, p, l, &variants, 1e10, 1).unwrap();
                let got_bits: Vec<u64> = got.v0_values.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got_bits, want, "level {l}, {variants:?}");
                assert_eq!(got.results.len(), variants.len());
            }
        }
    }
}
