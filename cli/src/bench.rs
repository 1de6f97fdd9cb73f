//! `ptap bench`: arguments and printing; the harness is `ptap_drivers::bench`
//! (CPU) and `ptap_drivers::bench_cuda` (`--device cuda`).
use crate::out::Progress;
use anyhow::{Context, Result};
use clap::Args;
use ptap_cuda::{Device, DeviceOptions};
use ptap_drivers::bench::{BenchOptions, BenchReport};
use ptap_drivers::bench_cuda::{device_variants, CudaBenchOptions, CudaBenchReport};
use ptap_drivers::plot::{self, Ladder};
use ptap_schedules::Variant;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Beam refinement, 1 to 200 (the benchmark size is 8).
    #[arg(long, default_value_t = 8, value_parser = crate::common::count_in::<1, 200>)]
    pub k: usize,
    /// Timed numeric calls per variant (after one warm-up), 1 to 1000; the minimum is reported.
    #[arg(long, default_value_t = 5, value_parser = crate::common::count_in::<1, 1000>)]
    pub repeat: usize,
    /// Variants to run (comma-separated names or labels; default all).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    pub aggregation: ptap_amg::Aggregation,
    #[arg(long, default_value = "f64", value_parser = crate::common::smoother_precision, help = crate::common::SMOOTHER_PRECISION_HELP)]
    pub smoother_precision: ptap_runtime::SmootherPrecision,
    /// Prolongator filter threshold of the benched hierarchy (the default is
    /// the fastest measured hot step; the paper: 0.03; 0 = off).
    #[arg(long, default_value_t = ptap_amg::AmgOptions::default().pf, value_name = "PF")]
    pub pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub pf_scale: f64,
    /// Run on the CPU (the default; kept for compatibility).
    #[arg(long)]
    cpu: bool,
    /// Backend: `cpu` or `cuda` (the GPU executor; fails when there is no GPU).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda"])]
    pub device: String,
    /// With `--device cuda`: compile the kernels with --fmad=false.
    #[arg(long)]
    pub no_fmad: bool,
    /// With `--device cuda`: launch the products' stages plainly, without
    /// programmatic dependent launch (for comparison; `PTAP_PDL=0` does the same).
    #[arg(long)]
    pub no_pdl: bool,
    /// With `--device cuda`: write every level's A and P as scalar CSR here (for benches/peers).
    #[arg(long, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// With `--device cuda`: the JSON a cuSPARSE peer wrote for the same
    /// dump (`benches/peers/cusparse_reuse.cu`, numeric refresh with symbolic
    /// reuse), printed per level beside ptap's products and in the hot step.
    #[arg(long, value_name = "PEER.json")]
    pub peer: Option<PathBuf>,
    /// Write the results as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Draw the variant ladder as SVG: per level, each variant's numeric time
    /// as a bar against V0's stream floor (log time axis). The path is checked
    /// before the bench starts.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Do not print progress or the table (the JSON and the plot are still written).
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let variants = args
        .variants
        .iter()
        .map(|s| s.parse::<Variant>().map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    if args.peer.is_some() && args.device != "cuda" {
        anyhow::bail!("--peer compares device products: add --device cuda");
    }
    if let Some(path) = &args.plot {
        plot::check_path(path)?;
    }
    // Plain `PHASE ...` lines when stderr is not a terminal, as the bench always printed.
    let bar = Progress::spinner(args.quiet).plain_lines();
    let progress = &mut |m: &str| bar.phase(m);
    if args.device == "cuda" {
        let options = CudaBenchOptions {
            k: args.k,
            repeat: args.repeat,
            // Refused before the device is opened.
            variants: device_variants(&variants)?,
            dump: args.dump.clone(),
            aggregation: args.aggregation,
            pf: args.pf,
            pf_scale: args.pf_scale,
            smoother_precision: args.smoother_precision,
        };
        // Read before the device is opened: a bad peer file fails first.
        let peer = args.peer.as_deref().map(Peer::read).transpose()?;
        let dev = Device::open(DeviceOptions {
            fmad: !args.no_fmad,
            pdl: !args.no_pdl,
        })?;
        let report = ptap_drivers::bench_cuda::run(&dev, &options, progress)?;
        bar.finish();
        if !args.quiet {
            print_cuda_report(&report, &dev);
            print_hot_step(&report, peer.as_ref());
        }
        write_json(args.json.as_deref(), &report)?;
        return write_plot(args.plot.as_deref(), Ladder::from(&report));
    }
    if args.smoother_precision != ptap_runtime::SmootherPrecision::F64 {
        anyhow::bail!(
            "--smoother-precision applies to the device solve of --device cuda; the CPU bench times products only"
        );
    }
    let options = BenchOptions {
        k: args.k,
        repeat: args.repeat,
        variants,
        aggregation: args.aggregation,
        pf: args.pf,
        pf_scale: args.pf_scale,
    };
    let report = ptap_drivers::bench::run(&options, progress)?;
    bar.finish();
    if !args.quiet {
        print_report(&report);
    }
    write_json(args.json.as_deref(), &report)?;
    write_plot(args.plot.as_deref(), Ladder::from(&report))
}

fn write_json<T: Serialize>(path: Option<&Path>, report: &T) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    crate::common::write_json(path, report)
}

/// The variant ladder of either report, as SVG.
fn write_plot(path: Option<&Path>, ladder: Ladder) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    plot::write_svg(path, &ladder.svg()?)
}

fn print_report(rep: &BenchReport) {
    let bw = rep.copy_bandwidth_bytes_per_s;
    outln!(
        "copy bandwidth {:.1} GB/s (read + write), {} threads; hierarchy: aggregation {}, pf {} (x{} per level)",
        bw / 1e9,
        rep.threads,
        rep.aggregation,
        rep.pf,
        rep.pf_scale
    );
    outln!(
        "{:<6} {:<16} {:>10} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "level",
        "variant",
        "inspect s",
        "load s",
        "numeric ms",
        "vs V0",
        "/ floor",
        "max rel diff"
    );
    for level in rep.results.chunk_by(|a, b| a.level == b.level) {
        let l = level[0].level;
        for r in level {
            outln!(
                "{:<6} {:<16} {:>10.3} {:>9.4} {:>11.2} {:>9} {:>8.1}x {:>12.1e}",
                format!("l{l}"),
                format!("{} {}", r.label, r.variant),
                r.inspect_s,
                r.load_s,
                1e3 * r.numeric_s,
                times(r.speedup_vs_v0),
                r.ratio_to_floor,
                r.max_rel_diff_vs_v0
            );
        }
        let floor = level[0].v0_floor_bytes;
        outln!(
            "{:<6} V0 stream floor {:.1} MB = {:.2} ms at measured bandwidth",
            format!("l{l}"),
            floor / 1e6,
            1e3 * floor / bw
        );
    }
    let products = rep.results.last().map_or(0, |r| r.level + 1);
    outln!("whole hierarchy ({products} products): inspecting again versus loading the schedule files");
    for w in &rep.whole_hierarchy {
        outln!(
            "  {:<14} inspect {:>8.3} s   load {:>8.4} s   {:>6.1}x   ({:.1} MB)",
            w.variant,
            w.inspect_s,
            w.load_s,
            w.load_speedup,
            w.schedule_file_bytes as f64 / 1e6
        );
    }
}

fn print_cuda_report(rep: &CudaBenchReport, dev: &Device) {
    let bw = rep.copy_bandwidth_bytes_per_s;
    outln!(
        "device {} ({}, {} SMs), kernels compiled with --fmad={}, programmatic dependent launch {}; hierarchy: aggregation {}, pf {} (x{} per level), smoother precision {}",
        rep.device,
        rep.arch,
        dev.sm_count(),
        rep.fmad,
        if rep.programmatic_launch { "on" } else { "off" },
        rep.aggregation,
        rep.pf,
        rep.pf_scale,
        rep.smoother_precision
    );
    outln!(
        "copy bandwidth (read + write): memcpy_dtod {:.0} GB/s, copy kernel {:.0} GB/s; floors use {:.0} GB/s",
        rep.memcpy_dtod_bytes_per_s / 1e9,
        rep.copy_kernel_bytes_per_s / 1e9,
        bw / 1e9
    );
    outln!(
        "{:<6} {:<24} {:>11} {:>9} {:>9} {:>12}",
        "level",
        "variant",
        "numeric ms",
        "vs V0",
        "/ floor",
        "rel vs CPU"
    );
    for level in rep.products.chunk_by(|a, b| a.level == b.level) {
        let l = level[0].level;
        for r in level {
            outln!(
                "{:<6} {:<24} {:>11.3} {:>9} {:>8.2}x {:>12.1e}",
                format!("l{l}"),
                format!("{} {}", r.label, r.variant),
                1e3 * r.numeric_s,
                times(r.speedup_vs_v0),
                r.ratio_to_floor,
                r.rel_frobenius_vs_cpu_v0
            );
        }
        let floor = level[0].v0_floor_bytes;
        outln!(
            "{:<6} V0 stream floor {:.1} MB = {:.3} ms at {:.0} GB/s",
            format!("l{l}"),
            floor / 1e6,
            1e3 * floor / bw,
            bw / 1e9
        );
    }
    // A variant left out of `--variants` has a total of 0: print `-`, not a time.
    let total = |s: f64| {
        if s > 0.0 {
            format!("{:.3} ms", 1e3 * s)
        } else {
            "-".into()
        }
    };
    outln!(
        "all levels: best per level {:.3} ms = {:.2}x the V0 floor ({:.3} ms); column split {}; two-pass {}",
        1e3 * rep.total_best_s,
        rep.total_best_s / rep.total_v0_floor_s,
        1e3 * rep.total_v0_floor_s,
        total(rep.total_column_split_s),
        total(rep.total_two_pass_s)
    );
    outln!(
        "{:<6} {:<4} {:>6} {:>10} {:>10} {:>10} {:>9} {:>12} {:>9}",
        "level",
        "op",
        "shape",
        "blocks",
        "apply us",
        "GB/s",
        "of copy",
        "f32 apply us",
        "of copy"
    );
    for r in &rep.spmv {
        outln!(
            "{:<6} {:<4} {:>6} {:>10} {:>10.1} {:>10.0} {:>8.1}% {:>12} {:>9}",
            format!("l{}", r.level),
            r.operator,
            format!("{}x{}", r.block_shape.0, r.block_shape.1),
            r.blocks,
            1e6 * r.apply_s,
            r.bandwidth_bytes_per_s / 1e9,
            100.0 * r.fraction_of_copy,
            r.f32_apply_s.map(|s| format!("{:.1}", 1e6 * s)).unwrap_or_default(),
            r.f32_fraction_of_copy
                .map(|f| format!("{:.1}%", 100.0 * f))
                .unwrap_or_default()
        );
    }
    for r in rep.spmv.iter().filter(|r| !r.mirror.is_empty()) {
        for m in &r.mirror {
            outln!(
                "l{} {} mirrored (upper triangle through positions), {} blocks per warp: apply {:.1} us ({:.2}x the plain), residual {:.1} us; {:.1}% of copy for its {:.1} MB; vs plain {:.1e}{}",
                r.level,
                r.operator,
                m.per_warp,
                1e6 * m.apply_s,
                m.speedup,
                1e6 * m.residual_s,
                100.0 * m.fraction_of_copy,
                m.bytes / 1e6,
                m.rel_diff_vs_plain,
                if m.bitwise_equal_to_plain { " (bitwise equal)" } else { "" }
            );
        }
    }
    let s = &rep.solve;
    outln!(
        "device solve: {} iterations ({}), tip {:.10e}; matrix setup {:.2} ms (numeric P^T A P {:.2} ms), solve {:.2} ms = {:.3} ms per CG iteration",
        s.iterations,
        if s.converged { "converged" } else { "NOT converged" },
        s.max_displacement,
        1e3 * s.matrix_setup_s,
        1e3 * s.galerkin_numeric_s,
        1e3 * s.solve_s,
        1e3 * s.s_per_iteration
    );
    outln!(
        "CG iteration floor {:.1} MB = {:.3} ms at {:.0} GB/s: {:.2}x{}",
        s.iteration_floor_bytes / 1e6,
        1e3 * s.iteration_floor_s,
        bw / 1e9,
        s.ratio_to_floor,
        if s.mirrored_spmv {
            " (mirrored SpMV: the operators' upper triangles)"
        } else {
            ""
        }
    );
    outln!(
        "device matrix setup, best: {}",
        crate::run::matrix_phases_line(&s.matrix_setup)
    );
    outln!("transfers per phase (host->device / device->host bytes):");
    for (phase, t) in &rep.transfers.phases {
        outln!("  {phase:<34} {:>14} {:>14}", t.h2d_bytes, t.d2h_bytes);
    }
    outln!(
        "kernel modules: {} compiled ({:.2} s), {} from the cache{}",
        rep.kernels_compiled,
        rep.compile_s,
        rep.kernels_from_cache,
        dev.cache_dir()
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default()
    );
}

/// A peer's numeric Galerkin refresh per level, from its JSON report
/// (`cusparse_reuse.cu`: `numeric_s`; `cusparse_ptap.py`: `numeric_rt_s`).
struct Peer {
    name: String,
    levels: Vec<(usize, f64)>,
}

impl Peer {
    fn read(path: &Path) -> Result<Self> {
        use std::io::Read;
        let mut bytes = Vec::new();
        ptap_io::fsio::open_regular(path)
            .and_then(|f| f.take(16 << 20).read_to_end(&mut bytes))
            .with_context(|| format!("reading the peer report {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a peer report (JSON expected)", path.display()))?;
        let name = match v.get("api").and_then(|a| a.as_str()) {
            Some(api) => format!("cuSPARSE {api}"),
            None => "cuSPARSE (CuPy)".to_string(),
        };
        let levels = v["levels"]
            .as_array()
            .with_context(|| format!("{} has no \"levels\" array", path.display()))?
            .iter()
            .map(|l| {
                let level = l["level"].as_u64().context("a peer level without \"level\"")? as usize;
                let s = l["numeric_s"]
                    .as_f64()
                    .or_else(|| l["numeric_rt_s"].as_f64())
                    .context("a peer level without \"numeric_s\" or \"numeric_rt_s\"")?;
                Ok((level, s))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { name, levels })
    }
}

/// The hot step (assembly + matrix setup + solve) beside the paper's A100
/// column, and, with a peer, its products beside ptap's.
fn print_hot_step(rep: &CudaBenchReport, peer: Option<&Peer>) {
    use ptap_drivers::bench_cuda::PAPER_A100_HOT_STEP;
    let s = &rep.solve;
    let ours = [s.assembly_s, s.matrix_setup_s, s.solve_s];
    let paper_total: f64 = PAPER_A100_HOT_STEP.iter().map(|p| p.1).sum();
    outln!(
        "hot step on {} ({} iterations) against the paper's A100 (PETSc GAMG, k = 16, 19 iterations):",
        rep.device,
        s.iterations
    );
    outln!(
        "  {:<14} {:>11} {:>11} {:>9}",
        "phase",
        "ptap ms",
        "paper ms",
        "speedup"
    );
    for ((name, paper), t) in PAPER_A100_HOT_STEP.iter().zip(ours) {
        outln!(
            "  {:<14} {:>11.3} {:>11.1} {:>8.1}x",
            name,
            1e3 * t,
            1e3 * paper,
            paper / t
        );
    }
    outln!(
        "  {:<14} {:>11.3} {:>11.1} {:>8.1}x",
        "hot step",
        1e3 * s.hot_step_s,
        1e3 * paper_total,
        paper_total / s.hot_step_s
    );
    let Some(peer) = peer else { return };
    outln!("numeric P^T A P per level: ptap column split against {}:", peer.name);
    outln!("  {:<6} {:>11} {:>11} {:>9}", "level", "ptap ms", "peer ms", "speedup");
    let (mut ptap_total, mut peer_total) = (0.0, 0.0);
    for &(l, t_peer) in &peer.levels {
        let Some(r) = rep
            .products
            .iter()
            .find(|r| r.level == l && r.variant == Variant::ColumnSplit.name())
        else {
            outln!("  l{l:<5} (no column-split result in this run)");
            continue;
        };
        ptap_total += r.numeric_s;
        peer_total += t_peer;
        outln!(
            "  {:<6} {:>11.3} {:>11.3} {:>8.1}x",
            format!("l{l}"),
            1e3 * r.numeric_s,
            1e3 * t_peer,
            t_peer / r.numeric_s
        );
    }
    outln!(
        "  {:<6} {:>11.3} {:>11.3} {:>8.1}x; matrix setup with the peer's products instead: {:.3} ms",
        "all",
        1e3 * ptap_total,
        1e3 * peer_total,
        peer_total / ptap_total.max(f64::MIN_POSITIVE),
        1e3 * (s.matrix_setup_s - s.galerkin_numeric_s + peer_total)
    );
}

/// A speed-up cell: `2.31x`, or `-` where there is nothing to compare with
/// (V0 was not among the variants run).
fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}x")
    } else {
        "-".into()
    }
}
