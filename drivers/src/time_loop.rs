//! The time-stepping driver, ptap's main job (`ptap run`).
//!
//! Step 1 is cold: assemble, mesh setup (or the schedule cache), the hierarchy
//! on the backend, solve. Every later step changes the modulus field,
//! re-assembles `A` into the same pattern (on the device when the backend is
//! one, so only the modulus crosses the bus), replays the numeric Galerkin
//! products from the schedules (aggregates and `P` are reused), refreshes
//! smoothers and the coarse factor, and solves. The report has the paper's
//! four phases (`tab:phases`) per step, for the cold step and the mean of the
//! hot ones.
use crate::cache::{self, Lookup};
use crate::target::{product_options, Target};
use anyhow::{bail, Context, Result};
use ptap_amg::Aggregation;
use ptap_cuda::{Cuda, MatrixUploadTimings, TransferCounters};
use ptap_fem::device::{DeviceAssembler, Modulus};
use ptap_fem::{BeamProblem, POISSON_RATIO};
use ptap_runtime::bundle::hierarchy_bundle;
use ptap_runtime::{
    Backend, CgOptions, Cpu, Hierarchy, HierarchyOptions, MatrixSetupTimings, MeshSetup, SetupTimings,
    SmootherPrecision,
};
use ptap_sparse::{BlockCsr, BlockPattern};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

pub use crate::cache::CacheReport;

/// What to run.
#[derive(Clone, Debug)]
pub struct TimeLoopOptions {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    pub k: usize,
    /// Time steps; step 1 is cold, the rest refresh values only.
    pub steps: usize,
    /// Directory of the schedule cache (`None`: no cache).
    pub schedule_cache: Option<PathBuf>,
    /// How aggregates are formed.
    pub aggregation: Aggregation,
    /// Prolongator filter threshold and per-level factor.
    pub pf: f64,
    pub pf_scale: f64,
    /// Product variant on every level; `None` = the backend's default
    /// (two-pass on the CPU, column split on a GPU); `Some("auto")` = the
    /// traffic model's pick per level for the machine at hand, measured.
    pub variant: Option<String>,
    pub cg: CgOptions,
    /// Values the V-cycle's smoothers and residuals apply (`f64`, or an `f32` copy).
    pub smoother_precision: SmootherPrecision,
    /// Report cache events on stderr.
    pub verbose: bool,
}

/// The modulus of step `s` of `steps` (the stiffening front; in `ptap_fem`,
/// which the distributed program shares).
pub use ptap_fem::stiffening_front;

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Phases {
    pub assembly_s: f64,
    pub mesh_setup_s: f64,
    /// Cold step: the one copy of the hierarchy's structure, schedules and
    /// assembly maps to the backend (kept out of `mesh_setup_s`, which is the
    /// host's aggregation and inspection, or the schedule cache's load).
    pub device_upload_s: f64,
    pub matrix_setup_s: f64,
    pub galerkin_numeric_s: f64,
    /// Of the matrix setup: every level's Jacobi inverses, eigen-estimates,
    /// and the coarse factorization (per level in [`Step::matrix`]).
    pub jacobi_s: f64,
    pub eigen_s: f64,
    pub coarse_factor_s: f64,
    /// Of the matrix setup: the wait after the products for the Jacobi
    /// inverses, eigen-estimates and coarse factor run beside them on lanes
    /// (0 where they run in order; the three above are then only their checks).
    pub beside_s: f64,
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
            jacobi_s: sum(|p| p.jacobi_s),
            eigen_s: sum(|p| p.eigen_s),
            coarse_factor_s: sum(|p| p.coarse_factor_s),
            beside_s: sum(|p| p.beside_s),
            solve_s: sum(|p| p.solve_s),
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub step: usize,
    pub cold: bool,
    pub iterations: usize,
    pub converged: bool,
    pub relative_residual: f64,
    pub max_displacement: f64,
    pub phases: Phases,
    /// This step's matrix setup phase by phase, per level.
    pub matrix: MatrixSetupTimings,
}

#[derive(Clone, Debug, Serialize)]
pub struct TimeLoopReport {
    pub k: usize,
    pub dofs: usize,
    pub device: &'static str,
    pub threads: usize,
    pub variant: String,
    pub aggregation: &'static str,
    /// The smoother's value precision (`f64` or `f32`).
    pub smoother_precision: &'static str,
    pub pf: f64,
    /// Aggregates and P are built once and reused by every hot step.
    pub hierarchy_reused: bool,
    pub levels: usize,
    pub schedule_cache: Option<CacheReport>,
    pub steps: Vec<Step>,
    pub cold: Phases,
    /// The cold step's setup in detail: mesh setup per level and step (or
    /// the schedule cache's load per level), the upload by kind of data.
    pub setup: SetupTimings,
    pub hot_mean: Option<Phases>,
    /// The product variant of each level on the device.
    pub device_variants: Option<Vec<&'static str>>,
    /// Host-device traffic per phase (absent on the CPU backend).
    pub transfers: Option<TransferCounters>,
    /// Most device memory in use at any sample (after each matrix setup and solve).
    pub peak_device_bytes: Option<u64>,
    pub peak_rss_bytes: Option<u64>,
    /// The cold step's start, wall time (its parts overlap).
    pub start: ColdStart,
}

/// From the assembled fine operator to the hierarchy on its backend: the mesh
/// setup (or the cache's load) and the upload, in wall seconds. The assembly
/// maps' upload runs during the setup; the cold step's `device_upload_s` holds
/// only the hierarchy's upload and the wait for the maps after the setup, so
/// `mesh_setup_s + device_upload_s` is the start to within the timers' gaps.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ColdStart {
    pub start_s: f64,
    /// The early uploads beside the setup (the assembly maps on one thread;
    /// the backend's creation and the fine operator on another): the longer.
    pub assembly_upload_s: f64,
    /// The start's lanes in detail (absent on the CPU backend).
    pub lanes: Option<StartLanes>,
}

/// The device start's lanes: the host's cache lookup beside the two early
/// upload lanes, then the hierarchy's upload. Seconds of wall time; each part
/// is waited for (the stream drained) before its clock stops.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct StartLanes {
    /// The host lane: the cache's lookup (open, checksum, load against the
    /// fine pattern; about 0 when the cache is off or misses).
    pub lookup_s: f64,
    /// The wait for the early lanes after the lookup (on the wall).
    pub wait_s: f64,
    /// Fine lane, in order: the backend's creation (streams, buffers, the
    /// common kernels' module), then the fine operator's parts.
    pub backend_s: f64,
    pub fine: MatrixUploadTimings,
    pub fine_lane_s: f64,
    /// Assembly lane: the device assembler (its module, the reference
    /// stiffness check, the maps) and the bytes it holds on the device.
    pub assembly_lane_s: f64,
    pub assembly_bytes: u64,
    /// Device-wide by the end of the early lanes: modules loaded and the
    /// seconds spent loading them (loads hold a lock, so they never overlap).
    pub early_modules: usize,
    pub early_module_load_s: f64,
    /// The same during the hierarchy's upload (of `setup.upload_s`).
    pub upload_modules: usize,
    pub upload_module_load_s: f64,
}

fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// The cache entry of this problem: the name hashes what shapes the hierarchy.
fn cache_name(k: usize, opts: &HierarchyOptions) -> String {
    let key = format!("beam3d k={k} {:?} variant={:?}", opts.amg, opts.variant);
    let h = blake3::hash(key.as_bytes()).to_hex();
    format!("beam3d-k{k}-{}.ptaps", &h.as_str()[..16])
}

/// How a backend gets each hot step's operator: the CPU assembles on the host
/// and copies the values in; a GPU assembles on the device in place.
/// It also answers for what only a device has: memory in use and the bus
/// traffic per phase.
trait StepAssembly<B: Backend> {
    /// Writes step `step`'s operator into `h`'s fine level.
    fn assemble(&mut self, problem: &mut BeamProblem, h: &mut Hierarchy<B>, step: usize, steps: usize) -> Result<()>;
    /// Device memory in use now (total minus free).
    fn memory_used(&self, _h: &Hierarchy<B>) -> Option<u64> {
        None
    }
    /// Transfers per phase so far.
    fn transfers(&self, _h: &Hierarchy<B>) -> Option<TransferCounters> {
        None
    }
}

struct HostAssembly;

impl StepAssembly<Cpu> for HostAssembly {
    fn assemble(&mut self, problem: &mut BeamProblem, h: &mut Hierarchy<Cpu>, step: usize, steps: usize) -> Result<()> {
        problem.reassemble(&stiffening_front(&problem.mesh, step, steps))?;
        h.set_fine_values(problem.a.values())?;
        Ok(())
    }
}

impl StepAssembly<Cuda> for DeviceAssembler {
    fn assemble(
        &mut self,
        problem: &mut BeamProblem,
        h: &mut Hierarchy<Cuda>,
        step: usize,
        steps: usize,
    ) -> Result<()> {
        let dev = h.backend().device().clone();
        dev.set_phase("assembly");
        let modulus = stiffening_front(&problem.mesh, step, steps);
        self.assemble_matrix(Modulus::Host(&modulus), &mut h.fine_operator_mut().m)?;
        dev.synchronize()?;
        Ok(())
    }
    fn memory_used(&self, h: &Hierarchy<Cuda>) -> Option<u64> {
        let (free, total) = h.backend().device().context().mem_get_info().ok()?;
        Some((total - free) as u64)
    }
    fn transfers(&self, h: &Hierarchy<Cuda>) -> Option<TransferCounters> {
        Some(h.backend().device().counters())
    }
}

/// Runs the time loop on the beam. `progress` gets a line per phase and is
/// told each finished step (`Some(step)`).
pub fn run_beam(
    options: &TimeLoopOptions,
    target: &Target,
    progress: &mut dyn FnMut(&str, Option<usize>),
) -> Result<TimeLoopReport> {
    let k = options.k;
    if options.steps == 0 {
        bail!("--steps must be at least 1");
    }
    let mut opts = HierarchyOptions::default();
    (opts.amg.pf, opts.amg.pf_scale) = (options.pf, options.pf_scale);
    opts.amg.aggregation = options.aggregation;
    opts.smoother_precision = options.smoother_precision;
    let variant = product_options(&mut opts, target, options.variant.as_deref())?;

    // Step 1, cold: mesh, assembly, mesh setup (or the cache).
    progress(&format!("assembling the beam at k = {k}"), None);
    let mut problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let t = Instant::now();
    problem.reassemble(&stiffening_front(&problem.mesh, 1, options.steps))?;
    let cold_assembly_s = problem.timings.assembly_s + t.elapsed().as_secs_f64();
    let mut say = |m: &str| progress(m, None);
    // The hierarchy takes the fine operator. The CPU re-assembles into the
    // problem's own copy every step, so it gets a copy; a device assembles on
    // the device from here on and never reads the host operator again, so it
    // is handed over (no copy of hundreds of megabytes) and the problem keeps
    // a zero-valued placeholder of the same pattern (an untouched allocation).
    let a0 = match target {
        Target::Cpu => problem.a.clone(),
        Target::Cuda(_) => {
            let (b, pattern) = (problem.a.block_shape().0, problem.a.pattern_arc().clone());
            std::mem::replace(&mut problem.a, BlockCsr::zeros(pattern, b, b))
        }
    };
    let t_start = Instant::now();
    let (mut report, mut cache, write_to, start) = match target {
        Target::Cpu => {
            let (setup, cache, write_to) = mesh_setup(options, &problem, a0, &opts, &mut say)?;
            let backend = Cpu::new(opts.kernels.clone());
            let h = Hierarchy::new(backend, setup, &mut say)?;
            let start = ColdStart {
                start_s: t_start.elapsed().as_secs_f64(),
                assembly_upload_s: 0.0,
                lanes: None,
            };
            let r = steps_on(options, &mut problem, h, HostAssembly, cold_assembly_s, 0.0, progress)?;
            (r, cache, write_to, start)
        }
        Target::Cuda(dev) => {
            dev.reset_counters();
            // The assembly maps and the fine operator exist before the mesh
            // setup: they cross the bus on threads of their own while the host
            // checks the cache file, which uses no device; the backend (its
            // module loads) is created on the fine operator's thread. Only the
            // wait for them past the load counts as upload.
            let (pattern, block) = (a0.pattern_arc().clone(), a0.block_shape().0);
            let mut lanes = StartLanes::default();
            let (looked, asm, backend, fine) = std::thread::scope(|s| {
                let early_asm = s.spawn(|| {
                    let t = Instant::now();
                    let h = problem.mesh.element_size();
                    let asm = DeviceAssembler::new(dev, &problem.assembler, h, POISSON_RATIO);
                    (asm, t.elapsed().as_secs_f64())
                });
                let early_fine = s.spawn(|| {
                    let t = Instant::now();
                    let up = Cuda::new(dev).and_then(|b| {
                        let backend_s = t.elapsed().as_secs_f64();
                        b.matrix_ref_timed(&a0).map(|(fine, ft)| (b, fine, backend_s, ft))
                    });
                    (up, t.elapsed().as_secs_f64())
                });
                let t = Instant::now();
                let looked = lookup(options, &problem, &pattern, block, &opts, &mut say);
                lanes.lookup_s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let (asm, asm_s) = early_asm.join().expect("the early upload panicked");
                let (up, fine_s) = early_fine.join().expect("the early upload panicked");
                lanes.wait_s = t.elapsed().as_secs_f64();
                let (backend, fine, backend_s, ft) = up?;
                let asm = asm?;
                (lanes.backend_s, lanes.fine, lanes.fine_lane_s) = (backend_s, ft, fine_s);
                (lanes.assembly_lane_s, lanes.assembly_bytes) = (asm_s, asm.bytes() as u64);
                anyhow::Ok((looked?, asm, backend, fine))
            })?;
            (lanes.early_modules, lanes.early_module_load_s) = dev.module_loads();
            let (setup, cache, write_to) = finish(looked, &problem, a0, &opts, &mut say)?;
            progress("uploading the hierarchy to the device", None);
            let h = Hierarchy::with_fine(backend, setup, Some(fine), &mut |m| progress(m, None))?;
            let (n, s) = dev.module_loads();
            (lanes.upload_modules, lanes.upload_module_load_s) =
                (n - lanes.early_modules, s - lanes.early_module_load_s);
            let start = ColdStart {
                start_s: t_start.elapsed().as_secs_f64(),
                assembly_upload_s: lanes.assembly_lane_s.max(lanes.fine_lane_s),
                lanes: Some(lanes),
            };
            let wait_s = lanes.wait_s;
            let r = steps_on(options, &mut problem, h, asm, cold_assembly_s, wait_s, progress)?;
            (r, cache, write_to, start)
        }
    };
    report.0.start = start;
    if let (Some((path, reason)), Some(bundle)) = (write_to, report.1.take()) {
        cache = Some(cache::store(&path, reason, &bundle, options.verbose));
    }
    let mut r = report.0;
    r.k = k;
    r.variant = variant;
    r.pf = options.pf;
    r.schedule_cache = cache;
    Ok(r)
}

type CacheWrite = Option<(PathBuf, Option<String>)>;

/// What the cache answered, before the fine operator's values are needed.
enum Looked {
    /// Off or a miss: build (and write the cache file, with why it was rebuilt).
    Build(CacheWrite),
    /// Loaded against the fine operator's pattern; its values come in [`finish`].
    Loaded(Box<MeshSetup>, CacheReport),
}

/// Mesh setup from the cache when it holds this problem, else built (and the
/// cache file to write once the hierarchy exists, with why it was rebuilt).
/// `a0` is the fine operator, which the setup takes.
fn mesh_setup(
    options: &TimeLoopOptions,
    problem: &BeamProblem,
    a0: BlockCsr,
    opts: &HierarchyOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(MeshSetup, Option<CacheReport>, CacheWrite)> {
    let looked = lookup(options, problem, a0.pattern_arc(), a0.block_shape().0, opts, progress)?;
    finish(looked, problem, a0, opts, progress)
}

/// The cache's entry of this problem, loaded against the fine operator's
/// pattern (`block` x `block` blocks): it needs no values, so a bad entry
/// still leaves the operator for the build.
fn lookup(
    options: &TimeLoopOptions,
    problem: &BeamProblem,
    pattern: &Arc<BlockPattern>,
    block: usize,
    opts: &HierarchyOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Looked> {
    let modes = problem.modes;
    let name = cache_name(options.k, opts);
    let dir = options.schedule_cache.as_deref();
    let load =
        |b: &_| MeshSetup::from_bundle_pattern(pattern, block, modes, b, opts, progress).map_err(anyhow::Error::from);
    Ok(match cache::lookup(dir, &name, options.verbose, load) {
        Lookup::Off => Looked::Build(None),
        Lookup::Loaded(setup, report) => Looked::Loaded(Box::new(setup), report),
        Lookup::Miss { path, reason } => Looked::Build(Some((path, reason))),
    })
}

/// The mesh setup with the fine operator `a0`: given its values if the cache
/// had it, else built.
fn finish(
    looked: Looked,
    problem: &BeamProblem,
    a0: BlockCsr,
    opts: &HierarchyOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(MeshSetup, Option<CacheReport>, CacheWrite)> {
    match looked {
        Looked::Build(write) => {
            let setup = MeshSetup::build(a0, &problem.near_null, problem.modes, opts, progress)
                .context("setting up the AMG hierarchy")?;
            Ok((setup, None, write))
        }
        Looked::Loaded(setup, mut report) => {
            let t = Instant::now();
            let setup = (*setup).with_fine_operator(a0)?;
            report.load_s = report.load_s.map(|s| s + t.elapsed().as_secs_f64());
            Ok((setup, Some(report), None))
        }
    }
}

/// The steps on a hierarchy already on its backend; returns the report and,
/// for the cache, the hierarchy's bundle.
fn steps_on<B: Backend, A: StepAssembly<B>>(
    options: &TimeLoopOptions,
    problem: &mut BeamProblem,
    mut h: Hierarchy<B>,
    mut assembly: A,
    cold_assembly_s: f64,
    extra_upload_s: f64,
    progress: &mut dyn FnMut(&str, Option<usize>),
) -> Result<(TimeLoopReport, Option<ptap_schedules::file::ScheduleBundle>)> {
    let bundle = options
        .schedule_cache
        .as_ref()
        .map(|_| hierarchy_bundle(&h, &format!("beam k={}", options.k)));
    let device = h.backend().name();
    let dofs = h.scalar_rows();
    let mut x = vec![0.0; dofs];
    let mut ws = h.workspace(options.cg.max_iterations)?;
    let setup = h.timings.clone();
    let mut steps = Vec::with_capacity(options.steps);
    let mut peak_device: Option<u64> = None;
    for step in 1..=options.steps {
        let cold = step == 1;
        let (assembly_s, mesh_setup_s, device_upload_s, matrix_setup_s) = if cold {
            let t = &h.timings;
            (
                cold_assembly_s,
                t.mesh_setup_s,
                t.upload_s + extra_upload_s,
                t.matrix_setup_s,
            )
        } else {
            progress("re-assembling and refreshing", None);
            let t = Instant::now();
            assembly.assemble(problem, &mut h, step, options.steps)?;
            let assembly_s = t.elapsed().as_secs_f64();
            let matrix_setup_s = h.matrix_setup().context("refreshing the hierarchy")?;
            (assembly_s, 0.0, 0.0, matrix_setup_s)
        };
        let galerkin_numeric_s = h.timings.galerkin_numeric_s;
        let matrix = h.timings.matrix.clone();
        peak_device = peak_device.max(assembly.memory_used(&h));
        progress("solving", None);
        x.fill(0.0);
        let rep = h
            .solve(&problem.rhs, &mut x, &options.cg, &mut ws)
            .with_context(|| format!("solving step {step}"))?;
        peak_device = peak_device.max(assembly.memory_used(&h));
        if !rep.converged {
            bail!(
                "step {step}: CG did not reach rtol {:e} in {} iterations; check the operator",
                options.cg.rtol,
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
                jacobi_s: matrix.jacobi_s(),
                eigen_s: matrix.eigen_s(),
                coarse_factor_s: matrix.coarse_factor_s,
                beside_s: matrix.beside_s,
                solve_s: rep.solve_s,
            },
            matrix,
        });
        progress("", Some(step));
    }
    let hot: Vec<Phases> = steps.iter().skip(1).map(|s| s.phases).collect();
    let on_device = device != "cpu";
    let report = TimeLoopReport {
        k: options.k,
        dofs,
        device,
        threads: rayon::current_num_threads(),
        variant: String::new(),
        aggregation: options.aggregation.name(),
        smoother_precision: options.smoother_precision.name(),
        pf: options.pf,
        hierarchy_reused: true,
        levels: h.num_levels(),
        schedule_cache: None,
        cold: steps[0].phases,
        setup,
        hot_mean: Phases::mean(&hot),
        steps,
        transfers: assembly.transfers(&h),
        device_variants: on_device.then(|| h.level_variants().iter().map(|v| v.name()).collect()),
        peak_device_bytes: peak_device,
        peak_rss_bytes: peak_rss_bytes(),
        start: ColdStart::default(),
    };
    Ok((report, bundle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_start_reports_its_lanes_with_the_fine_operators_bytes() {
        // Arrange: skips without a driver (no device to start on).
        let Ok(dev) = ptap_cuda::Device::open(ptap_cuda::DeviceOptions::default()) else {
            return;
        };
        let problem = BeamProblem::build(2).unwrap();
        let (nrows, nnzb) = (problem.a.nrows() as u64, problem.a.pattern().nnzb() as u64);
        let amg = ptap_amg::AmgOptions::default();
        let options = TimeLoopOptions {
            k: 2,
            steps: 1,
            schedule_cache: None,
            aggregation: Aggregation::default(),
            pf: amg.pf,
            pf_scale: amg.pf_scale,
            variant: None,
            cg: CgOptions::default(),
            smoother_precision: SmootherPrecision::F64,
            verbose: false,
        };
        // Act
        let r = run_beam(&options, &Target::Cuda(dev), &mut |_, _| {}).unwrap();
        // Assert: 3x3 blocks of f64; u32 row pointers and block columns.
        let lanes = r.start.lanes.expect("a device start reports its lanes");
        assert_eq!(lanes.fine.values_bytes, 72 * nnzb);
        assert_eq!(lanes.fine.pattern_bytes, 4 * (nrows + 1) + 4 * nnzb);
        assert!(lanes.assembly_bytes > 0 && lanes.early_modules > 0);
        assert_eq!(r.start.assembly_upload_s, lanes.fine_lane_s.max(lanes.assembly_lane_s));
        assert!(lanes.fine_lane_s >= lanes.backend_s + lanes.fine.values_s);
    }
}
