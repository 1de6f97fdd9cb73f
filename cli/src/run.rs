//! `ptap run`: the time-stepping driver, ptap's main job (arguments and
//! printing; the loop is `ptap_drivers::time_loop`).
//!
//! Step 1 is cold: assemble, build the hierarchy (or load it from the schedule
//! cache), solve. Every later step changes the modulus field, re-assembles `A`
//! into the same pattern, replays the numeric Galerkin products from the
//! schedules (aggregates and `P` are reused), refreshes smoothers and the coarse
//! factor, and solves. The report has the paper's four phases (`tab:phases`)
//! per step, for the cold step and the mean of the hot ones.
use crate::out::Progress;
use anyhow::{bail, Result};
use clap::Args;
use ptap_drivers::plot;
use ptap_drivers::target::Target;
use ptap_drivers::time_loop::{run_beam, Phases, TimeLoopOptions, TimeLoopReport};
use ptap_runtime::CgOptions;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Time steps, 1 to 100,000; step 1 is cold, the rest refresh values only.
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = crate::common::count_in::<1, 100000>)]
    steps: usize,
    /// Backend: `cpu`, `cuda` (matrix setup and solve on the GPU; fails in one
    /// sentence without one) or `auto` (the GPU when there is one, else the CPU,
    /// saying so). The mesh setup runs on the CPU either way.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    device: String,
    /// Cache the inspector's output (every level's schedule and P) in DIR: the
    /// first run writes it, later runs of the same problem load it and skip the
    /// mesh setup. A stale or damaged entry is reported and rebuilt.
    #[arg(long, value_name = "DIR")]
    schedule_cache: Option<PathBuf>,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    aggregation: ptap_amg::Aggregation,
    /// Prolongator filter threshold (the paper: 0.03; 0 = off).
    #[arg(long, default_value_t = 0.0, value_name = "PF")]
    pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pf_scale: f64,
    /// Galerkin-product variant on every level (see `ptap solve --help`), or
    /// `auto` for the traffic model's pick per level (on the GPU: among the
    /// device variants, for this device, measured). Default: two-pass on the
    /// CPU, column-split (the device's product) on the GPU, so a schedule cache
    /// holds what the device replays. outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long)]
    variant: Option<String>,
    /// Relative tolerance on the unpreconditioned residual norm, in [1e-15, 1).
    #[arg(long, default_value_t = 1e-8, value_parser = crate::common::rtol)]
    rtol: f64,
    /// Write the report as JSON (keys: steps[].iterations, steps[].max_displacement,
    /// steps[].phases, cold, hot_mean, schedule_cache, ...).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Draw the four phases of every step (assembly, mesh setup, matrix setup,
    /// solve) as stacked bars in an SVG file, with the hot steps alone on a
    /// second panel. The path is checked before the first step.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Do not print progress or the table.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: &RunArgs) -> Result<()> {
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
    outln!(
        "{:>5} {:>6} {:>18} {:>10} {:>10} {:>10} {:>10}",
        "step",
        "its",
        "max |u|",
        "assembly",
        "mesh",
        "matrix",
        "solve"
    );
    for s in &r.steps {
        let p = &s.phases;
        outln!(
            "{:>5} {:>6} {:>18.12} {:>10.4} {:>10.4} {:>10.4} {:>10.4}{}",
            s.step,
            s.iterations,
            s.max_displacement,
            p.assembly_s,
            p.mesh_setup_s,
            p.matrix_setup_s,
            p.solve_s,
            if s.cold { "  (cold)" } else { "" }
        );
    }
    let row = |name: &str, p: &Phases| {
        outln!(
            "{:<9} assembly {:.4} s, mesh setup {:.4} s (+ device upload {:.4}), matrix setup {:.4} s (numeric PtAP {:.4}), solve {:.4} s",
            name, p.assembly_s, p.mesh_setup_s, p.device_upload_s, p.matrix_setup_s, p.galerkin_numeric_s, p.solve_s
        );
    };
    row("cold", &r.cold);
    if let Some(h) = &r.hot_mean {
        row("hot mean", h);
    }
}
