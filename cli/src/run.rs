//! `ptap run`: the time-stepping driver, ptap's main job.
//!
//! Step 1 is cold: assemble, build the hierarchy (or load it from the schedule
//! cache), solve. Every later step changes the modulus field, re-assembles `A`
//! into the same pattern, replays the numeric Galerkin products from the
//! schedules (aggregates and `P` are reused), refreshes smoothers and the coarse
//! factor, and solves. The report has the paper's four phases (`tab:phases`)
//! per step, for the cold step and the mean of the hot ones.
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ptap_fem::POISSON_RATIO;
use ptap_fem::{modulus_from_fn, BeamProblem, BoxMesh};
use ptap_runtime::bundle::hierarchy_bundle;
use ptap_runtime::cuda::{Device, DeviceAssembler, DeviceHierarchy, DeviceSolveOptions, Modulus, TransferCounters};
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Time steps; step 1 is cold, the rest refresh values only.
    #[arg(long, default_value_t = 5, value_name = "N")]
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
    /// Prolongator filter threshold (the paper: 0.03; 0 = off).
    #[arg(long, default_value_t = 0.0, value_name = "PF")]
    pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pf_scale: f64,
    /// Galerkin-product variant on every level (see `ptap solve --help`), or
    /// `auto` for the traffic model's pick per level (on the GPU: among the
    /// device variants, with the H200 preset). Default: two-pass on the CPU,
    /// column-split (the device's product) on the GPU, so a schedule cache
    /// holds what the device replays.
    #[arg(long)]
    variant: Option<String>,
    /// Relative tolerance on the unpreconditioned residual norm.
    #[arg(long, default_value_t = 1e-8)]
    rtol: f64,
    /// Write the report as JSON (keys: steps[].iterations, steps[].max_displacement,
    /// steps[].phases, cold, hot_mean, schedule_cache, ...).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Do not print progress or the table.
    #[arg(long)]
    quiet: bool,
}

/// The modulus of step `s` of `steps`: a stiffening front moving along the beam.
/// `E = 1 + 2 S((x_f - x) / w)` with `S` a smooth step (`tanh`), front position
/// `x_f = 10 (s - 1) / steps` and width `w = 0.5`: material behind the front is
/// three times stiffer, and the field changes every step.
pub fn stiffening_front(mesh: &BoxMesh, step: usize, steps: usize) -> Vec<f64> {
    let xf = ptap_fem::mesh::BEAM_LENGTH * (step.saturating_sub(1)) as f64 / steps.max(1) as f64;
    modulus_from_fn(mesh, |c| 1.0 + (1.0 + ((xf - c[0]) / 0.5).tanh()))
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Phases {
    pub assembly_s: f64,
    pub mesh_setup_s: f64,
    /// Cold step on the device: the one upload of the hierarchy's structure,
    /// schedules and assembly maps (kept out of `mesh_setup_s`, which is the
    /// CPU's aggregation and inspection, or the schedule cache's load).
    pub device_upload_s: f64,
    pub matrix_setup_s: f64,
    pub galerkin_numeric_s: f64,
    pub solve_s: f64,
}

impl Phases {
    fn mean(list: &[Phases]) -> Option<Phases> {
        if list.is_empty() {
            return None;
        }
        let n = list.len() as f64;
        let sum = |f: fn(&Phases) -> f64| list.iter().map(f).sum::<f64>() / n;
        Some(Phases {
            assembly_s: sum(|p| p.assembly_s),
            mesh_setup_s: sum(|p| p.mesh_setup_s),
            device_upload_s: sum(|p| p.device_upload_s),
            matrix_setup_s: sum(|p| p.matrix_setup_s),
            galerkin_numeric_s: sum(|p| p.galerkin_numeric_s),
            solve_s: sum(|p| p.solve_s),
        })
    }
}

#[derive(Serialize)]
struct Step {
    step: usize,
    cold: bool,
    iterations: usize,
    converged: bool,
    relative_residual: f64,
    max_displacement: f64,
    phases: Phases,
}

#[derive(Serialize)]
struct CacheReport {
    path: String,
    /// "loaded", "written", or "rebuilt" (with `reason`).
    status: &'static str,
    reason: Option<String>,
    load_s: Option<f64>,
    write_s: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    k: usize,
    dofs: usize,
    device: &'static str,
    threads: usize,
    variant: String,
    pf: f64,
    /// Aggregates and P are built once and reused by every hot step.
    hierarchy_reused: bool,
    levels: usize,
    schedule_cache: Option<CacheReport>,
    steps: Vec<Step>,
    cold: Phases,
    hot_mean: Option<Phases>,
    /// The product variant of each level on the device.
    device_variants: Option<Vec<&'static str>>,
    /// Host-device traffic per phase (absent on the CPU backend).
    transfers: Option<TransferCounters>,
    /// Most device memory in use at any sample (after each matrix setup and solve).
    peak_device_bytes: Option<u64>,
    peak_rss_bytes: Option<u64>,
}

/// High-water mark of used device memory (total minus free), sampled.
#[derive(Default)]
struct PeakDeviceMemory {
    used: u64,
}

impl PeakDeviceMemory {
    fn sample(&mut self, dev: &Device) {
        if let Ok((free, total)) = dev.context().mem_get_info() {
            self.used = self.used.max((total - free) as u64);
        }
    }
}

fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// The cache file of this problem: the name hashes what shapes the hierarchy.
fn cache_path(dir: &Path, k: usize, opts: &HierarchyOptions) -> PathBuf {
    let key = format!("beam3d k={k} {:?} variant={:?}", opts.amg, opts.variant);
    let h = blake3::hash(key.as_bytes()).to_hex();
    dir.join(format!("beam3d-k{k}-{}.ptaps", &h.as_str()[..16]))
}

pub fn run(args: &RunArgs) -> Result<()> {
    let k = crate::common::validate_k(args.k)?;
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    if !(args.rtol > 0.0 && args.rtol < 1.0) {
        bail!("--rtol must be between 0 and 1, got {}", args.rtol);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    let device = crate::solve_cuda::open(&args.device)?;
    let mut opts = HierarchyOptions::default();
    (opts.amg.pf, opts.amg.pf_scale) = (args.pf, args.pf_scale);
    let variant = args
        .variant
        .clone()
        .unwrap_or_else(|| if device.is_some() { "column-split" } else { "two-pass" }.to_string());
    let auto = variant.eq_ignore_ascii_case("auto");
    opts.variant = if auto {
        opts.machine = ptap_schedules::model::MachineParams::measure_cpu();
        None
    } else {
        Some(variant.parse().map_err(|e: String| anyhow::anyhow!("--variant: {e}"))?)
    };
    let pb = if args.quiet {
        ProgressBar::hidden()
    } else {
        let pb = ProgressBar::new(args.steps as u64);
        pb.set_style(
            ProgressStyle::with_template("[{elapsed_precise}] step {pos}/{len} {msg}").expect("valid template"),
        );
        pb
    };

    // Step 1, cold: mesh, assembly, hierarchy (or the cache), solve.
    pb.set_message(format!("assembling the beam at k = {k}"));
    let mut problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let t = Instant::now();
    problem.reassemble(&stiffening_front(&problem.mesh, 1, args.steps))?;
    let cold_assembly_s = problem.timings.assembly_s + t.elapsed().as_secs_f64();
    let dofs = problem.a.scalar_rows();
    let modes = problem.modes;
    let mut progress = |m: &str| pb.set_message(m.to_string());
    let (mut h, cache) = match &args.schedule_cache {
        None => (
            Hierarchy::build(problem.a.clone(), &problem.near_null, modes, &opts, &mut progress)
                .context("setting up the AMG hierarchy")?,
            None,
        ),
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the schedule cache directory {}", dir.display()))?;
            let path = cache_path(dir, k, &opts);
            let loaded = if path.exists() {
                let t = Instant::now();
                let attempt = MappedBundle::open(&path).map_err(anyhow::Error::from).and_then(|b| {
                    Hierarchy::from_bundle(problem.a.clone(), modes, &Arc::new(b), &opts, &mut progress)
                        .map_err(anyhow::Error::from)
                });
                Some(attempt.map(|h| (h, t.elapsed().as_secs_f64())))
            } else {
                None
            };
            match loaded {
                Some(Ok((h, load_s))) => {
                    if !args.quiet {
                        eprintln!("schedule cache: loaded {} (mesh setup skipped)", path.display());
                    }
                    let report = CacheReport {
                        path: path.display().to_string(),
                        status: "loaded",
                        reason: None,
                        load_s: Some(load_s),
                        write_s: None,
                    };
                    (h, Some(report))
                }
                other => {
                    let reason = match other {
                        Some(Err(e)) => {
                            let msg = format!("{e:#}");
                            if !args.quiet {
                                eprintln!("schedule cache: {} is unusable ({msg}); rebuilding it", path.display());
                            }
                            Some(msg)
                        }
                        _ => None,
                    };
                    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, modes, &opts, &mut progress)
                        .context("setting up the AMG hierarchy")?;
                    let t = Instant::now();
                    write_bundle(&path, &hierarchy_bundle(&h, &format!("beam k={k}")))?;
                    let write_s = t.elapsed().as_secs_f64();
                    if !args.quiet {
                        eprintln!("schedule cache: wrote {}", path.display());
                    }
                    let status = if reason.is_some() { "rebuilt" } else { "written" };
                    let report = CacheReport {
                        path: path.display().to_string(),
                        status,
                        reason,
                        load_s: None,
                        write_s: Some(write_s),
                    };
                    (h, Some(report))
                }
            }
        }
    };
    // On the device: the hierarchy's structure goes up once (part of the cold
    // mesh setup); from then on matrix setup and solve run there.
    // The assembler's maps go up too: hot steps assemble on the device, so
    // only the modulus field (one value per element) crosses the bus.
    let mut dev_h = match &device {
        None => None,
        Some(dev) => {
            // `auto` picks per level on this device's measured numbers (before the clock).
            let per_level = if auto {
                Some(crate::common::device_machine(dev)?)
            } else {
                None
            };
            pb.set_message("uploading the hierarchy and the assembly maps to the device");
            dev.reset_counters();
            let t = Instant::now();
            let dev_opts = DeviceSolveOptions {
                per_level,
                ..DeviceSolveOptions::default()
            };
            let dh = DeviceHierarchy::new(dev, &h, dev_opts)?;
            let asm = DeviceAssembler::new(dev, &problem.assembler, problem.mesh.element_size(), POISSON_RATIO)?;
            Some((dh, asm, t.elapsed().as_secs_f64()))
        }
    };
    let mut peak_device = PeakDeviceMemory::default();
    let mut x = vec![0.0; dofs];
    let max_it = 500;
    let mut ws = CgWorkspace::new(dofs, max_it);
    let cg = CgOptions {
        rtol: args.rtol,
        max_iterations: max_it,
    };
    let mut steps = Vec::with_capacity(args.steps);
    for step in 1..=args.steps {
        let cold = step == 1;
        let mut device_upload_s = 0.0;
        let (assembly_s, mesh_setup_s, matrix_setup_s, galerkin_numeric_s) =
            if let Some((dh, asm, upload_s)) = &mut dev_h {
                // Device: step 1's operator went up with the hierarchy; later steps
                // assemble on the device from the new modulus field (phase
                // `assembly`), so the operator never crosses the bus.
                let assembly_s = if cold {
                    cold_assembly_s
                } else {
                    let dev = dh.device().clone();
                    dev.set_phase("assembly");
                    let t = Instant::now();
                    let modulus = stiffening_front(&problem.mesh, step, args.steps);
                    asm.assemble_matrix(Modulus::Host(&modulus), dh.fine_operator_mut())?;
                    dev.synchronize()?;
                    t.elapsed().as_secs_f64()
                };
                let matrix_setup_s = dh.matrix_setup()?;
                peak_device.sample(dh.device());
                // Cold: the CPU's mesh setup (aggregation and inspection, or
                // the cache load) is mesh setup, the structure upload its own
                // phase; the CPU's numeric setup of the coarse levels is
                // matrix setup.
                let (mesh_setup_s, matrix_setup_s) = if cold {
                    (h.timings.mesh_setup_s, h.timings.matrix_setup_s + matrix_setup_s)
                } else {
                    (0.0, matrix_setup_s)
                };
                device_upload_s = if cold { *upload_s } else { 0.0 };
                (assembly_s, mesh_setup_s, matrix_setup_s, dh.timings.galerkin_numeric_s)
            } else if cold {
                let t = &h.timings;
                (cold_assembly_s, t.mesh_setup_s, t.matrix_setup_s, t.galerkin_numeric_s)
            } else {
                pb.set_message("re-assembling and refreshing");
                let t = Instant::now();
                problem.reassemble(&stiffening_front(&problem.mesh, step, args.steps))?;
                let assembly_s = t.elapsed().as_secs_f64();
                let matrix_setup_s = h.refresh(problem.a.values()).context("refreshing the hierarchy")?;
                (assembly_s, 0.0, matrix_setup_s, h.timings.galerkin_numeric_s)
            };
        pb.set_message("solving");
        x.fill(0.0);
        let t = Instant::now();
        let rep = match &mut dev_h {
            Some((dh, _, _)) => {
                let r = dh.solve(&problem.rhs, &mut x, &cg)?;
                peak_device.sample(dh.device());
                r.cg
            }
            None => h
                .solve(&problem.rhs, &mut x, &cg, &mut ws)
                .with_context(|| format!("solving step {step}"))?,
        };
        let solve_s = t.elapsed().as_secs_f64();
        if !rep.converged {
            bail!(
                "step {step}: CG did not reach rtol {:e} in {} iterations; check the operator",
                args.rtol,
                rep.iterations
            );
        }
        steps.push(Step {
            step,
            cold,
            iterations: rep.iterations,
            converged: rep.converged,
            relative_residual: rep.residual_norm / rep.rhs_norm,
            max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            phases: Phases {
                assembly_s,
                mesh_setup_s,
                device_upload_s,
                matrix_setup_s,
                galerkin_numeric_s,
                solve_s,
            },
        });
        pb.inc(1);
    }
    pb.finish_and_clear();
    let hot: Vec<Phases> = steps.iter().skip(1).map(|s| s.phases).collect();
    let report = Report {
        k,
        dofs,
        device: if dev_h.is_some() { "cuda" } else { "cpu" },
        threads: rayon::current_num_threads(),
        variant,
        pf: args.pf,
        hierarchy_reused: true,
        levels: h.num_levels(),
        schedule_cache: cache,
        cold: steps[0].phases,
        hot_mean: Phases::mean(&hot),
        steps,
        transfers: dev_h.as_ref().map(|(dh, _, _)| dh.device().counters()),
        device_variants: dev_h
            .as_ref()
            .map(|(dh, _, _)| dh.level_variants().iter().map(|v| v.name()).collect()),
        peak_device_bytes: dev_h.as_ref().map(|_| peak_device.used),
        peak_rss_bytes: peak_rss_bytes(),
    };
    if !args.quiet {
        print_report(&report);
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    Ok(())
}

fn print_report(r: &Report) {
    println!(
        "beam k = {}: {} dofs, {} levels, {} steps on the {} ({} threads); aggregates and P built once, reused by every hot step",
        r.k,
        r.dofs,
        r.levels,
        r.steps.len(),
        r.device,
        r.threads
    );
    if let Some(c) = &r.schedule_cache {
        println!("schedule cache {}: {}", c.path, c.status);
    }
    if let Some(t) = &r.transfers {
        for (phase, b) in &t.phases {
            println!(
                "  transfers, {phase}: {} B up in {} copies, {} B down in {} copies",
                b.h2d_bytes, b.h2d_copies, b.d2h_bytes, b.d2h_copies
            );
        }
    }
    if let Some(v) = &r.device_variants {
        println!("  device products per level: {}", v.join(", "));
    }
    if let Some(b) = r.peak_device_bytes {
        println!("  peak device memory {:.2} GB", b as f64 / 1e9);
    }
    println!(
        "{:>5} {:>6} {:>18} {:>10} {:>10} {:>10} {:>10}",
        "step", "its", "max |u|", "assembly", "mesh", "matrix", "solve"
    );
    for s in &r.steps {
        let p = &s.phases;
        println!(
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
        println!(
            "{:<9} assembly {:.4} s, mesh setup {:.4} s (+ device upload {:.4}), matrix setup {:.4} s (numeric PtAP {:.4}), solve {:.4} s",
            name, p.assembly_s, p.mesh_setup_s, p.device_upload_s, p.matrix_setup_s, p.galerkin_numeric_s, p.solve_s
        );
    };
    row("cold", &r.cold);
    if let Some(h) = &r.hot_mean {
        row("hot mean", h);
    }
}
