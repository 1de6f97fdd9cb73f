//! The device bench harness (`ptap bench --device cuda`): the GPU executor on
//! the beam hierarchy, timed against floors measured in the same run: the
//! device copy bandwidth, per level and variant the numeric Galerkin product
//! against V0's stream floor, the merge-path SpMV as a fraction of copy
//! bandwidth, the transfer counters of every phase, and the AMG solve on the
//! device (hot matrix setup and time per CG iteration). `dump` writes each
//! level's `A` and `P` as scalar CSR for the cuSPARSE peer
//! (`benches/peers/cusparse_ptap.py`).
use anyhow::{bail, ensure, Context, Result};
use ptap_amg::Aggregation;
use ptap_cuda::{Arg, Cuda, Device, DeviceBlockCsr, DeviceProduct, DeviceSpmv, TransferCounters, DEVICE_EXECUTORS};
use ptap_fem::device::{DeviceAssembler, Modulus};
use ptap_fem::{Assembler, BeamProblem, BoxMesh, POISSON_RATIO};
use ptap_runtime::solver::VcyclePart;
use ptap_runtime::{
    Backend, CgOptions, CgReport, Hierarchy, HierarchyOptions, KernelRegistry, MatrixSetupTimings, SmootherPrecision,
};
use ptap_schedules::{v0_floor, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to bench on the device.
#[derive(Clone, Debug)]
pub struct CudaBenchOptions {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    pub k: usize,
    /// Timed calls per product (SpMV: at least 10); the minimum is reported.
    pub repeat: usize,
    /// Product variants, in this order; empty = [`DEVICE_EXECUTORS`].
    pub variants: Vec<Variant>,
    /// Write every level's `A` and `P` as scalar CSR into this directory.
    pub dump: Option<PathBuf>,
    /// How the hierarchy's aggregates are formed.
    pub aggregation: Aggregation,
    /// Prolongator filter threshold and per-level factor.
    pub pf: f64,
    pub pf_scale: f64,
    /// Values the device solve's smoothers and V-cycle residuals apply.
    pub smoother_precision: SmootherPrecision,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProductResult {
    pub level: usize,
    pub variant: &'static str,
    pub label: &'static str,
    pub numeric_s: f64,
    pub v0_floor_bytes: f64,
    /// Numeric time over the time V0's DRAM floor takes at measured copy bandwidth.
    pub ratio_to_floor: f64,
    /// NaN (JSON `null`) when V0 was not among the variants timed.
    pub speedup_vs_v0: f64,
    pub rel_frobenius_vs_cpu_v0: f64,
    pub deterministic: bool,
    pub buffer_bytes: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SpmvResult {
    pub level: usize,
    pub operator: &'static str,
    pub block_shape: (usize, usize),
    pub blocks: usize,
    pub apply_s: f64,
    pub bytes: f64,
    pub bandwidth_bytes_per_s: f64,
    pub fraction_of_copy: f64,
    pub rel_err_vs_cpu: f64,
    /// Square operators: the fused residual `r = b - A x` (`bytes` plus `b` read once).
    pub residual_s: Option<f64>,
    pub residual_fraction_of_copy: Option<f64>,
    /// Square operators: the SpMV reading the values rounded to `f32` (the
    /// mixed-precision smoother's), its bytes (4-byte values), the fraction
    /// of copy bandwidth, and its largest difference from the CPU's `f64`
    /// kernel on the rounded values relative to the largest `|A| |x|` row sum.
    pub f32_apply_s: Option<f64>,
    pub f32_bytes: Option<f64>,
    pub f32_fraction_of_copy: Option<f64>,
    pub f32_residual_s: Option<f64>,
    pub f32_residual_fraction_of_copy: Option<f64>,
    pub f32_rel_err_vs_cpu: Option<f64>,
    /// Square operators: the mirrored SpMV (`DeviceSpmv::mirror`: the upper
    /// triangle read through a position map), one entry per range length.
    pub mirror: Vec<MirrorSpmvResult>,
}

/// The mirrored SpMV of one operator at one range length.
#[derive(Clone, Debug, Serialize)]
pub struct MirrorSpmvResult {
    pub per_warp: usize,
    pub apply_s: f64,
    pub residual_s: f64,
    /// Bytes it must move at least: the values on and above the diagonal,
    /// the block column, row and position of every stored block, `x` and `y`.
    pub bytes: f64,
    pub fraction_of_copy: f64,
    /// Its speed against the plain SpMV's (`apply_s` of the plain / this).
    pub speedup: f64,
    /// Relative Frobenius difference of `y` from the plain device SpMV's
    /// (0 where every block equals its mirror's transpose bit for bit).
    pub rel_diff_vs_plain: f64,
    pub bitwise_equal_to_plain: bool,
}

/// The AMG-preconditioned CG solve on the device (`Hierarchy<Cuda>`).
#[derive(Clone, Debug, Serialize)]
pub struct SolveResult {
    pub iterations: usize,
    pub converged: bool,
    pub relative_residual: f64,
    pub max_displacement: f64,
    pub coarse_rows: usize,
    pub product_variant: &'static str,
    /// Best of `repeat` device matrix setups (numeric products, Jacobi
    /// inverses, eigen-estimates, coarse Cholesky) and of `repeat` solves from zero.
    pub matrix_setup_s: f64,
    pub galerkin_numeric_s: f64,
    /// The best matrix setup phase by phase.
    pub matrix_setup: MatrixSetupTimings,
    pub solve_s: f64,
    pub s_per_iteration: f64,
    /// Best of `repeat` device re-assemblies of the fine operator (the Q2
    /// element kernels into the uploaded pattern, uniform modulus).
    pub assembly_s: f64,
    /// The hot step a time-stepping code pays per step: assembly + matrix
    /// setup + solve.
    pub hot_step_s: f64,
    /// The same solve with every operation launched one by one (no CUDA graphs).
    pub s_per_iteration_eager: f64,
    /// One V-cycle replayed as a CUDA graph, and launched one by one.
    pub vcycle_s: f64,
    pub vcycle_eager_s: f64,
    /// Per level, the V-cycle's time there (launched one by one, events between parts).
    pub vcycle_levels: Vec<VcycleLevel>,
    /// The operators applied through their upper triangles (the mirrored
    /// SpMV, `HierarchyOptions::mirror_spmv_in_effect`); the floor counts
    /// their upper triangles then.
    pub mirrored_spmv: bool,
    /// What one CG iteration must move ([`iteration_floor`]) and the time that
    /// takes at the measured copy bandwidth.
    pub iteration_floor_bytes: f64,
    pub iteration_floor_s: f64,
    pub iteration_floor_parts: Vec<FloorPart>,
    /// `s_per_iteration / iteration_floor_s`.
    pub ratio_to_floor: f64,
}

/// One level's share of a V-cycle: pre-smoothing, residual and restriction
/// (`down_s`), prolongation and post-smoothing (`up_s`); the coarsest level's
/// dense solve is `down_s`.
#[derive(Clone, Debug, Serialize)]
pub struct VcycleLevel {
    pub level: usize,
    pub down_s: f64,
    pub up_s: f64,
}

/// One term of a CG iteration's byte floor.
#[derive(Clone, Debug, Serialize)]
pub struct FloorPart {
    pub what: String,
    pub applications: usize,
    pub bytes: f64,
}

/// What one V-cycle-preconditioned CG iteration must read and write at
/// least: every operator application once (values, `u32` column indices and
/// row pointers, its input vector read and output vector written once): the
/// fine `A` four times in the V-cycle plus once in CG, each coarser `A` four
/// times, `P` and `R` once per level, the `D^-1` blocks four times per
/// smoothed level (two Chebyshev steps before and after), the dense coarse
/// inverse (`n_c^2` doubles) once, and CG's vectors (`x += alpha p`, `r -=
/// alpha ap`, `p = z + beta p`: 9 passes of the fine size, the dot products
/// fused into them).
///
/// With `f32` smoother operators ([`SmootherPrecision::F32`]) the V-cycle's
/// four applications of each `A` read 4-byte values; CG's own stays `f64`.
///
/// `mirrored`: the operators are symmetric and applied through their upper
/// triangles (`HierarchyOptions::mirror_spmv`), so each `f64` application
/// of an `A` must read only the blocks on and above the diagonal, with their
/// column indices (the `f32` ones are never mirrored).
pub fn iteration_floor(h: &Hierarchy, precision: SmootherPrecision, mirrored: bool) -> Vec<FloorPart> {
    let csr_of = |m: &BlockCsr, value_bytes: usize| {
        let (br, bc) = m.block_shape();
        (m.nnzb() * (br * bc * value_bytes + 4) + (m.nrows() + 1) * 4 + (m.scalar_rows() + m.scalar_cols()) * 8) as f64
    };
    let csr = |m: &BlockCsr| csr_of(m, 8);
    // An `f64` application of a level's `A`: its upper triangle where mirrored.
    let operator = |m: &BlockCsr| {
        let (br, bc) = m.block_shape();
        if !mirrored || br != bc {
            return csr(m);
        }
        let p = m.pattern();
        let upper: usize = (0..p.nrows())
            .map(|i| p.row(i).iter().filter(|&&j| j as usize >= i).count())
            .sum();
        (upper * (br * bc * 8 + 4) + (m.nrows() + 1) * 4 + (m.scalar_rows() + m.scalar_cols()) * 8) as f64
    };
    let upper_note = if mirrored { ", upper triangle" } else { "" };
    let smoothed_bytes = match precision {
        SmootherPrecision::F64 => 8,
        SmootherPrecision::F32 => 4,
    };
    let mut parts = Vec::new();
    let nl = h.num_levels();
    for (l, lev) in h.levels().iter().enumerate() {
        if l + 1 == nl {
            let n = lev.a.scalar_rows();
            parts.push(FloorPart {
                what: format!("coarse inverse, level {l} ({n} x {n})"),
                applications: 1,
                bytes: (n * n * 8 + 2 * n * 8) as f64,
            });
            continue;
        }
        if smoothed_bytes == 8 {
            let apps = if l == 0 { 5 } else { 4 };
            parts.push(FloorPart {
                what: format!("A level {l}{upper_note}"),
                applications: apps,
                bytes: apps as f64 * operator(&lev.a),
            });
        } else {
            parts.push(FloorPart {
                what: format!("A level {l}, V-cycle (f32 values)"),
                applications: 4,
                bytes: 4.0 * csr_of(&lev.a, smoothed_bytes),
            });
            if l == 0 {
                parts.push(FloorPart {
                    what: format!("A level 0, CG (f64 values{upper_note})"),
                    applications: 1,
                    bytes: operator(&lev.a),
                });
            }
        }
        let b = lev.a.block_shape().0;
        parts.push(FloorPart {
            what: format!("D^-1 level {l}"),
            applications: 4,
            bytes: 4.0 * (lev.a.nrows() * b * b * 8) as f64,
        });
        let t = lev.transfer.as_ref().expect("every level but the coarsest has P");
        for (name, m) in [("P", &t.p), ("R", &t.r)] {
            parts.push(FloorPart {
                what: format!("{name} level {l}"),
                applications: 1,
                bytes: csr(m),
            });
        }
    }
    parts.push(FloorPart {
        what: "CG vectors (9 passes)".into(),
        applications: 1,
        bytes: 9.0 * (h.scalar_rows() * 8) as f64,
    });
    parts
}

/// The paper's single-A100 column (its `tab:phases`, k = 16, PETSc GAMG):
/// assembly, matrix setup and solve in seconds, 19 iterations.
pub const PAPER_A100_HOT_STEP: [(&str, f64); 3] = [("assembly", 0.334), ("matrix setup", 0.067), ("solve", 0.209)];

/// The whole run (what `ptap bench --device cuda --json` writes).
#[derive(Clone, Debug, Serialize)]
pub struct CudaBenchReport {
    pub k: usize,
    pub aggregation: &'static str,
    /// The device solve's smoother precision (`f64` or `f32`).
    pub smoother_precision: &'static str,
    pub pf: f64,
    pub pf_scale: f64,
    pub device: String,
    pub arch: String,
    pub fmad: bool,
    /// Kernels launched with programmatic dependent launch (`Device::programmatic_launch`).
    pub programmatic_launch: bool,
    /// The larger of the two copy measurements: the floors' denominator.
    pub copy_bandwidth_bytes_per_s: f64,
    pub memcpy_dtod_bytes_per_s: f64,
    pub copy_kernel_bytes_per_s: f64,
    pub kernels_compiled: usize,
    pub kernels_from_cache: usize,
    pub compile_s: f64,
    /// Level by level, each level's variants in the order asked for.
    pub products: Vec<ProductResult>,
    /// Per level the fastest variant and its time; and the sums.
    pub best_per_level: Vec<(usize, &'static str, f64)>,
    pub total_best_s: f64,
    pub total_v0_floor_s: f64,
    pub total_column_split_s: f64,
    pub total_two_pass_s: f64,
    pub spmv: Vec<SpmvResult>,
    pub solve: SolveResult,
    pub transfers: TransferCounters,
}

/// The variants to run: `asked`, or every device variant when it is empty;
/// one the device has no executor for is refused.
pub fn device_variants(asked: &[Variant]) -> Result<Vec<Variant>> {
    if asked.is_empty() {
        return Ok(DEVICE_EXECUTORS.to_vec());
    }
    if let Some(v) = asked.iter().find(|v| !DEVICE_EXECUTORS.contains(v)) {
        bail!(
            "the device has no {} executor; choose among two-pass, slot-tiled, column-split, tensor-core, tensor-pair, tensor-pair-sym, k-split, lane-tiled, row-gustavson, flat-stream, outer-product",
            v.name()
        );
    }
    Ok(asked.to_vec())
}

/// Runs the device bench on `dev` for the beam at `options.k` (the hierarchy
/// is built on the CPU). `progress` gets a line as each long phase starts.
pub fn run(dev: &Arc<Device>, options: &CudaBenchOptions, progress: &mut dyn FnMut(&str)) -> Result<CudaBenchReport> {
    let variants = device_variants(&options.variants)?;
    progress("measuring the device copy bandwidth");
    let (bw_memcpy, bw_kernel) = copy_bandwidth(dev)?;
    let bw = bw_memcpy.max(bw_kernel);
    progress(&format!("building the beam hierarchy at k = {} on the CPU", options.k));
    let problem = BeamProblem::build(options.k).context("building the beam")?;
    let mut opts = HierarchyOptions::default();
    opts.amg.aggregation = options.aggregation;
    (opts.amg.pf, opts.amg.pf_scale) = (options.pf, options.pf_scale);
    // The host hierarchy (the reference the bench compares against) stays
    // f64; the device solve's smoother precision is set on its own setup.
    let h = Hierarchy::build(problem.a, &problem.near_null, problem.modes, &opts, &mut |_| {})
        .context("setting up the hierarchy")?;
    if let Some(dir) = &options.dump {
        progress(&format!(
            "writing scalar CSR of every level's A and P to {}",
            dir.display()
        ));
        dump_levels(&h, dir)?;
    }
    let ops = Operators::upload(dev, &h)?;
    let kernels = &h.options().kernels;

    progress("device products per level");
    let mut products = Vec::new();
    for (l, lev) in h.levels()[..h.num_levels() - 1].iter().enumerate() {
        let p = &lev.transfer.as_ref().expect("every level but the coarsest has P").p;
        let (da, dp) = (&ops.a[l], &ops.p[l]);
        products.extend(level_products(
            dev,
            kernels,
            (&lev.a, da),
            (p, dp),
            l,
            &variants,
            bw,
            options.repeat,
        )?);
    }
    let totals = Totals::of(&products, bw);

    progress("device SpMV of every operator");
    let mut spmv = Vec::new();
    for (l, lev) in h.levels().iter().enumerate() {
        let mut on_level = vec![("A", &ops.a[l], &lev.a)];
        if let Some(t) = &lev.transfer {
            on_level.extend([("P", &ops.p[l], &t.p), ("R", &ops.r[l], &t.r)]);
        }
        for (op, dm, hm) in on_level {
            spmv.push(spmv_result(dev, kernels, l, op, dm, hm, bw, options.repeat)?);
        }
    }

    progress("the AMG solve on the device");
    let mut solve = device_solve(dev, &h, &problem.rhs, options.repeat, bw, options.smoother_precision)?;
    progress("device assembly of the fine operator");
    let mut fine = ops.a.into_iter().next().expect("the fine operator");
    solve.assembly_s = device_assembly(dev, (&problem.assembler, &problem.mesh), &mut fine, options.repeat)?;
    solve.hot_step_s = solve.assembly_s + solve.matrix_setup_s + solve.solve_s;
    dev.synchronize()?;
    let cs = dev.compile_stats();
    Ok(CudaBenchReport {
        k: options.k,
        aggregation: options.aggregation.name(),
        smoother_precision: options.smoother_precision.name(),
        pf: options.pf,
        pf_scale: options.pf_scale,
        device: dev.name().to_string(),
        arch: dev.arch().to_string(),
        fmad: dev.options().fmad,
        programmatic_launch: dev.programmatic_launch(),
        copy_bandwidth_bytes_per_s: bw,
        memcpy_dtod_bytes_per_s: bw_memcpy,
        copy_kernel_bytes_per_s: bw_kernel,
        kernels_compiled: cs.compiled,
        kernels_from_cache: cs.cached,
        compile_s: cs.compile_s,
        products,
        best_per_level: totals.best_per_level,
        total_best_s: totals.best_s,
        total_v0_floor_s: totals.v0_floor_s,
        total_column_split_s: totals.column_split_s,
        total_two_pass_s: totals.two_pass_s,
        spmv,
        solve,
        transfers: dev.counters(),
    })
}

/// Every level's operators on the device, uploaded once: every later phase
/// must move nothing operator-sized.
struct Operators {
    a: Vec<DeviceBlockCsr>,
    p: Vec<DeviceBlockCsr>,
    r: Vec<DeviceBlockCsr>,
}

impl Operators {
    fn upload(dev: &Arc<Device>, h: &Hierarchy) -> Result<Self> {
        dev.set_phase("upload operators");
        let mut ops = Self {
            a: Vec::new(),
            p: Vec::new(),
            r: Vec::new(),
        };
        for lev in h.levels() {
            ops.a.push(DeviceBlockCsr::upload(dev, &lev.a)?);
            if let Some(t) = &lev.transfer {
                ops.p.push(DeviceBlockCsr::upload(dev, &t.p)?);
                ops.r.push(DeviceBlockCsr::upload(dev, &t.r)?);
            }
        }
        Ok(ops)
    }
}

/// One level's product `P^T A P` on the device with each of `variants`, against
/// the CPU two-pass product and V0's stream floor at `bw` bytes per second.
/// `a` and `p` are each a host matrix and its device copy.
#[allow(clippy::too_many_arguments)]
fn level_products(
    dev: &Arc<Device>,
    kernels: &KernelRegistry,
    (a, da): (&BlockCsr, &DeviceBlockCsr),
    (p, dp): (&BlockCsr, &DeviceBlockCsr),
    level: usize,
    variants: &[Variant],
    bw: f64,
    repeat: usize,
) -> Result<Vec<ProductResult>> {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
    )?);
    let floor = v0_floor(&base, bf, bc);
    let mut cpu = BlockCsr::zeros(base.c.clone(), bc, bc);
    kernels
        .executor_for(&VariantSchedule::TwoPass(base.clone()), bf, bc)?
        .numeric(a, p, &mut cpu)?;
    let mut dc = DeviceBlockCsr::upload_pattern(dev, &base.c, bc, bc)?;
    let mut rows = Vec::with_capacity(variants.len());
    // The first variant's bits, to say on stderr whether each later one gives the same.
    let mut first: Option<(Variant, Vec<f64>)> = None;
    for &v in variants {
        dev.set_phase("inspect + schedule upload");
        // The symmetric pair refuses a non-symmetric A rather than run as another variant.
        let schedule = VariantSchedule::try_inspect(v, base.clone(), bf * bc)?;
        let mut prod = DeviceProduct::new(dev, kernels, &schedule, bf, bc)?;
        dev.set_phase("matrix setup (numeric products)");
        let s = dev.time(repeat, || prod.numeric(da, dp, &mut dc))?;
        dev.set_phase("verification downloads");
        let got = dc.download_values(dev)?;
        match &first {
            None => first = Some((v, got.clone())),
            Some((f, bits)) => eprintln!(
                "level {level}: {} gives the same bits as {}: {}",
                v.name(),
                f.name(),
                bits.iter().zip(&got).all(|(x, y)| x.to_bits() == y.to_bits())
            ),
        }
        rows.push(ProductResult {
            level,
            variant: v.name(),
            label: v.label(),
            numeric_s: s,
            v0_floor_bytes: floor,
            ratio_to_floor: s / (floor / bw),
            speedup_vs_v0: f64::NAN, // filled in below, once V0 has run
            rel_frobenius_vs_cpu_v0: relative_frobenius(&got, cpu.values()),
            deterministic: prod.deterministic(),
            buffer_bytes: prod.buffer_bytes(),
        });
    }
    // Whatever order the variants ran in, each is compared with V0's time.
    if let Some(v0_s) = rows
        .iter()
        .find(|r| r.variant == Variant::TwoPass.name())
        .map(|r| r.numeric_s)
    {
        for r in &mut rows {
            r.speedup_vs_v0 = v0_s / r.numeric_s;
        }
    }
    Ok(rows)
}

/// The sums over levels the report ends with.
struct Totals {
    best_per_level: Vec<(usize, &'static str, f64)>,
    best_s: f64,
    v0_floor_s: f64,
    column_split_s: f64,
    two_pass_s: f64,
}

impl Totals {
    /// Of `products` (level by level), with floors at `bw` bytes per second.
    fn of(products: &[ProductResult], bw: f64) -> Self {
        let mut t = Totals {
            best_per_level: Vec::new(),
            best_s: 0.0,
            v0_floor_s: 0.0,
            column_split_s: 0.0,
            two_pass_s: 0.0,
        };
        for level in products.chunk_by(|x, y| x.level == y.level) {
            t.v0_floor_s += level[0].v0_floor_bytes / bw;
            // The first of equally fast variants is the level's best.
            let best = level
                .iter()
                .reduce(|b, r| if r.numeric_s < b.numeric_s { r } else { b });
            let best = best.expect("chunks are not empty");
            t.best_s += best.numeric_s;
            t.best_per_level.push((best.level, best.variant, best.numeric_s));
            for r in level {
                if r.variant == Variant::TwoPass.name() {
                    t.two_pass_s += r.numeric_s;
                }
                if r.variant == Variant::ColumnSplit.name() {
                    t.column_split_s += r.numeric_s;
                }
            }
        }
        t
    }
}

/// The merge-path SpMV of operator `op` of level `level` (`dm` on the device,
/// `hm` its host copy), against the CPU SpMV and the copy bandwidth `bw`.
#[allow(clippy::too_many_arguments)]
fn spmv_result(
    dev: &Arc<Device>,
    kernels: &KernelRegistry,
    level: usize,
    op: &'static str,
    dm: &DeviceBlockCsr,
    hm: &BlockCsr,
    bw: f64,
    repeat: usize,
) -> Result<SpmvResult> {
    dev.set_phase("solve vectors (bench)");
    let x: Vec<f64> = (0..hm.scalar_cols()).map(|i| (i as f64 * 0.37).sin()).collect();
    let dx = dev.upload(&x)?;
    let dy = dev.zeros::<f64>(hm.scalar_rows())?;
    let plan = DeviceSpmv::new(dev, kernels, dm)?;
    dev.set_phase("solve (SpMV)");
    let s = dev.time(repeat.max(10), || plan.apply(dev, dm, &dx, &dy))?;
    let residual_bytes = DeviceSpmv::stream_bytes(dm) + (hm.scalar_rows() * 8) as f64;
    let residual_s = if dm.br == dm.bc {
        let db = dev.upload(&vec![1.0; hm.scalar_rows()])?;
        let dr = dev.zeros::<f64>(hm.scalar_rows())?;
        Some(dev.time(repeat.max(10), || plan.residual(dev, dm, &dx, &db, &dr))?)
    } else {
        None
    };
    dev.set_phase("verification downloads");
    let got = dev.download(&dy)?;
    let mut want = vec![0.0; hm.scalar_rows()];
    ptap_sparse::spmv::spmv(hm, &x, &mut want);
    let bytes = DeviceSpmv::stream_bytes(dm);
    // The f32 smoother operators: the same SpMV reading the rounded values.
    let f32 = if dm.br == dm.bc {
        dev.set_phase("solve vectors (bench)");
        let rounded: Vec<f32> = hm.values().iter().map(|&v| v as f32).collect();
        let d32 = dev.upload(&rounded)?;
        let db = dev.upload(&vec![1.0; hm.scalar_rows()])?;
        let dr = dev.zeros::<f64>(hm.scalar_rows())?;
        dev.set_phase("solve (SpMV)");
        let s32 = dev.time(repeat.max(10), || plan.apply_f32(dev, dm, &d32, &dx, &dy))?;
        let r32 = dev.time(repeat.max(10), || plan.residual_f32(dev, dm, &d32, &dx, &db, &dr))?;
        dev.set_phase("verification downloads");
        let got32 = dev.download(&dy)?;
        let mut lo = hm.clone();
        for (l, &v) in lo.values_mut().iter_mut().zip(&rounded) {
            *l = v as f64;
        }
        let mut want32 = vec![0.0; hm.scalar_rows()];
        ptap_sparse::spmv::spmv(&lo, &x, &mut want32);
        let mut abs = lo.clone();
        abs.values_mut().iter_mut().for_each(|v| *v = v.abs());
        let xa: Vec<f64> = x.iter().map(|v| v.abs()).collect();
        let mut scale = vec![0.0; hm.scalar_rows()];
        ptap_sparse::spmv::spmv(&abs, &xa, &mut scale);
        let scale = scale.iter().fold(0.0f64, |m, v| m.max(*v)).max(f64::MIN_POSITIVE);
        let err = got32[..want32.len()]
            .iter()
            .zip(&want32)
            .fold(0.0f64, |m, (g, w)| m.max((g - w).abs()))
            / scale;
        let b32 = DeviceSpmv::stream_bytes_of(dm, 4);
        Some((s32, b32, r32, err))
    } else {
        None
    };
    let mirror = if dm.br == dm.bc {
        mirror_spmv(dev, kernels, dm, hm, &dx, &got, s, plan.per_warp(), bw, repeat)?
    } else {
        Vec::new()
    };
    Ok(SpmvResult {
        level,
        operator: op,
        block_shape: hm.block_shape(),
        blocks: hm.nnzb(),
        apply_s: s,
        bytes,
        bandwidth_bytes_per_s: bytes / s,
        fraction_of_copy: bytes / s / bw,
        rel_err_vs_cpu: relative_frobenius(&got[..want.len()], &want),
        residual_s,
        residual_fraction_of_copy: residual_s.map(|t| residual_bytes / t / bw),
        f32_apply_s: f32.map(|f| f.0),
        f32_bytes: f32.map(|f| f.1),
        f32_fraction_of_copy: f32.map(|f| f.1 / f.0 / bw),
        f32_residual_s: f32.map(|f| f.2),
        f32_residual_fraction_of_copy: f32.map(|f| (f.1 + (hm.scalar_rows() * 8) as f64) / f.2 / bw),
        f32_rel_err_vs_cpu: f32.map(|f| f.3),
        mirror,
    })
}

/// The mirrored SpMV of the square `dm` at several range lengths (and the
/// plain plan's `plain_per_warp`), against the plain SpMV's `plain` result
/// and time `plain_s`.
#[allow(clippy::too_many_arguments)]
fn mirror_spmv(
    dev: &Arc<Device>,
    kernels: &KernelRegistry,
    dm: &DeviceBlockCsr,
    hm: &BlockCsr,
    dx: &cudarc::driver::CudaSlice<f64>,
    plain: &[f64],
    plain_s: f64,
    plain_per_warp: usize,
    bw: f64,
    repeat: usize,
) -> Result<Vec<MirrorSpmvResult>> {
    let p = hm.pattern();
    let upper: usize = (0..p.nrows())
        .map(|i| p.row(i).iter().filter(|&&j| j as usize >= i).count())
        .sum();
    let bytes = (upper * dm.br * dm.bc * 8 + dm.nnzb * 12 + dm.scalar_cols() * 8 + dm.scalar_rows() * 8) as f64;
    let mut lens = vec![128, 256, 512, 1024, plain_per_warp];
    lens.sort_unstable();
    lens.dedup();
    let mut out = Vec::new();
    for len in lens {
        let mut plan = DeviceSpmv::new(dev, kernels, dm)?;
        dev.set_phase("solve vectors (bench)");
        if !plan.mirror(dev, kernels, dm, Some(len))? {
            return Ok(out);
        }
        let per_warp = plan.mirror_per_warp().unwrap_or(len);
        if out.iter().any(|m: &MirrorSpmvResult| m.per_warp == per_warp) {
            continue;
        }
        let dy = dev.zeros::<f64>(hm.scalar_rows())?;
        let db = dev.upload(&vec![1.0; hm.scalar_rows()])?;
        let dr = dev.zeros::<f64>(hm.scalar_rows())?;
        dev.set_phase("solve (SpMV)");
        let s = dev.time(repeat.max(10), || plan.apply(dev, dm, dx, &dy))?;
        let rs = dev.time(repeat.max(10), || plan.residual(dev, dm, dx, &db, &dr))?;
        dev.set_phase("verification downloads");
        let got = dev.download(&dy)?;
        out.push(MirrorSpmvResult {
            per_warp,
            apply_s: s,
            residual_s: rs,
            bytes,
            fraction_of_copy: bytes / s / bw,
            speedup: plain_s / s,
            rel_diff_vs_plain: relative_frobenius(&got[..plain.len()], plain),
            bitwise_equal_to_plain: got[..plain.len()]
                .iter()
                .zip(plain)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
        });
    }
    Ok(out)
}

/// Hot matrix setup and solve on the device: best of `repeat` each, for the
/// CPU-built hierarchy `h` put on the device with the device's default
/// products (what `ptap run --device cuda` runs).
fn device_solve(
    dev: &Arc<Device>,
    h: &Hierarchy,
    rhs: &[f64],
    repeat: usize,
    bw: f64,
    precision: SmootherPrecision,
) -> Result<SolveResult> {
    let variant = ptap::Target::DEVICE_DEFAULT_VARIANT;
    let mut setup = h.mesh_setup().with_variant(variant)?;
    setup.options.smoother_precision = precision;
    let backend = Cuda::with_kernels(dev, h.options().kernels.clone())?;
    let mut dh = Hierarchy::new(backend, setup, &mut |_| {})?;
    let (mut setup_s, mut numeric_s) = (f64::INFINITY, f64::INFINITY);
    let mut phases = MatrixSetupTimings::default();
    for _ in 0..repeat.max(1) {
        let s = dh.matrix_setup()?;
        if s < setup_s {
            phases = dh.timings.matrix.clone();
        }
        setup_s = setup_s.min(s);
        numeric_s = numeric_s.min(dh.timings.galerkin_numeric_s);
    }
    let cg = CgOptions::default();
    let mut ws = dh.workspace(cg.max_iterations)?;
    let mut x = vec![0.0; rhs.len()];
    let mut solve_best = |dh: &mut Hierarchy<Cuda>, x: &mut Vec<f64>| -> Result<CgReport> {
        let mut best: Option<CgReport> = None;
        for _ in 0..repeat.max(1) {
            x.fill(0.0);
            let r = dh.solve(rhs, x, &cg, &mut ws)?;
            if let Some(b) = &best {
                ensure!(b.iterations == r.iterations, "device solves differ in iterations");
            }
            if best.as_ref().is_none_or(|b| r.solve_s < b.solve_s) {
                best = Some(r);
            }
        }
        Ok(best.expect("at least one solve"))
    };
    dh.set_recording(false);
    let eager = solve_best(&mut dh, &mut x)?;
    dh.set_recording(true);
    let best = solve_best(&mut dh, &mut x)?;
    ensure!(
        eager.iterations == best.iterations,
        "recorded and eager device solves differ in iterations"
    );
    // One V-cycle: recorded, one by one, and one by one with events between its parts.
    let be = dh.backend();
    let r = be.vector_from(rhs)?;
    let mut z = be.vector(rhs.len())?;
    let vcycle_s = dev.time(repeat.max(10), || dh.vcycle(&r, &mut z))?;
    dh.set_recording(false);
    let vcycle_eager_s = dev.time(repeat.max(10), || dh.vcycle(&r, &mut z))?;
    let vcycle_levels = vcycle_levels(dev, &mut dh, &r, &mut z, repeat.max(10))?;
    dh.set_recording(true);
    let mirrored = dh.options().mirror_spmv_in_effect();
    let parts = iteration_floor(h, precision, mirrored);
    let floor_bytes: f64 = parts.iter().map(|p| p.bytes).sum();
    let s_per_iteration = best.solve_s / best.iterations.max(1) as f64;
    Ok(SolveResult {
        iterations: best.iterations,
        converged: best.converged,
        relative_residual: best.residual_norm / best.rhs_norm,
        max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        coarse_rows: dh.coarse_rows(),
        product_variant: variant.name(),
        matrix_setup_s: setup_s,
        galerkin_numeric_s: numeric_s,
        matrix_setup: phases,
        solve_s: best.solve_s,
        s_per_iteration,
        s_per_iteration_eager: eager.solve_s / eager.iterations.max(1) as f64,
        vcycle_s,
        vcycle_eager_s,
        vcycle_levels,
        mirrored_spmv: mirrored,
        iteration_floor_bytes: floor_bytes,
        iteration_floor_s: floor_bytes / bw,
        iteration_floor_parts: parts,
        ratio_to_floor: s_per_iteration / (floor_bytes / bw),
        assembly_s: 0.0,
        hot_step_s: 0.0,
    })
}

/// Per level, the best over `repeat` V-cycles of the time between the
/// events recorded where its parts begin ([`Hierarchy::vcycle_marked`]).
fn vcycle_levels(
    dev: &Arc<Device>,
    dh: &mut Hierarchy<Cuda>,
    r: &cudarc::driver::CudaSlice<f64>,
    z: &mut cudarc::driver::CudaSlice<f64>,
    repeat: usize,
) -> Result<Vec<VcycleLevel>> {
    let nl = dh.num_levels();
    let mut best = vec![(f64::INFINITY, f64::INFINITY); nl];
    for _ in 0..repeat + 1 {
        let mut marks = Vec::new();
        dh.vcycle_marked(r, z, &mut |be: &Cuda, part| {
            let ev = be.device().event()?;
            ev.record(be.device().stream())?;
            marks.push((part, ev));
            Ok(())
        })?;
        dev.synchronize()?;
        let mut got = vec![(0.0, 0.0); nl];
        for w in marks.windows(2) {
            let s = w[0].1.elapsed_ms(&w[1].1)? as f64 * 1e-3;
            match w[0].0 {
                VcyclePart::Down(l) => got[l].0 += s,
                VcyclePart::Coarse => got[nl - 1].0 += s,
                VcyclePart::Up(l) => got[l].1 += s,
                VcyclePart::End => {}
            }
        }
        for (b, g) in best.iter_mut().zip(got) {
            b.0 = b.0.min(g.0);
            b.1 = b.1.min(g.1);
        }
    }
    Ok(best
        .into_iter()
        .enumerate()
        .map(|(level, (down_s, up_s))| VcycleLevel { level, down_s, up_s })
        .collect())
}

/// Best of `repeat` device assemblies of the beam's operator (uniform modulus,
/// as the bench's problem was built) into `a`, its uploaded copy: what each
/// hot step of `ptap run --device cuda` does before its matrix setup.
fn device_assembly(
    dev: &Arc<Device>,
    (assembler, mesh): (&Assembler, &BoxMesh),
    a: &mut DeviceBlockCsr,
    repeat: usize,
) -> Result<f64> {
    let mut asm = DeviceAssembler::new(dev, assembler, mesh.element_size(), POISSON_RATIO)?;
    let modulus = dev.upload(&vec![1.0; mesh.n_elements()])?;
    dev.set_phase("assembly");
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        let t = std::time::Instant::now();
        asm.assemble_matrix(Modulus::Device(&modulus), a)?;
        dev.synchronize()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Best of 5 device-to-device copies of 2 GiB (cuMemcpyDtoD) and of the
/// grid-stride copy kernel, counting read plus write bytes.
fn copy_bandwidth(dev: &Arc<Device>) -> Result<(f64, f64)> {
    let n = 1usize << 28;
    let src = dev.zeros::<f64>(n)?;
    let mut dst = dev.zeros::<f64>(n)?;
    let t_memcpy = dev.time(5, || {
        dev.stream().memcpy_dtod(&src, &mut dst)?;
        Ok(())
    })?;
    let kernels = ptap_cuda::kernels::common(dev)?;
    let copy = kernels[ptap_codegen_core::gpu::vector::COPY].clone();
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (dev.sm_count() * 8, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let t_kernel = dev.time(5, || {
        dev.launch(&copy, cfg, &[Arg::F64(&src), Arg::F64Mut(&dst), Arg::U64(n as u64)])
    })?;
    let bytes = 2.0 * (n * 8) as f64;
    Ok((bytes / t_memcpy, bytes / t_kernel))
}

/// Writes every level's `A` and `P` (all but the coarsest) as scalar CSR
/// `A{l}` and `P{l}` into `dir`, creating it, and the coarsest `A`.
fn dump_levels(h: &Hierarchy, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (l, lev) in h.levels()[..h.num_levels() - 1].iter().enumerate() {
        dump_scalar_csr(&lev.a, dir, &format!("A{l}"))?;
        dump_scalar_csr(&lev.transfer.as_ref().expect("P").p, dir, &format!("P{l}"))?;
    }
    // The coarsest A too: a peer checks its last product's pattern against it.
    let last = h.num_levels() - 1;
    dump_scalar_csr(&h.levels()[last].a, dir, &format!("A{last}"))
}

/// Writes `m` expanded to scalar CSR: `NAME.indptr` (i64), `NAME.indices`
/// (i32), `NAME.data` (f64), little-endian, plus `NAME.json` with the shape.
fn dump_scalar_csr(m: &BlockCsr, dir: &Path, name: &str) -> Result<()> {
    let (br, bc) = m.block_shape();
    let p = m.pattern();
    let (rows, cols) = (m.scalar_rows(), m.scalar_cols());
    let mut indptr: Vec<i64> = Vec::with_capacity(rows + 1);
    let mut indices: Vec<i32> = Vec::with_capacity(m.values().len());
    let mut data: Vec<f64> = Vec::with_capacity(m.values().len());
    indptr.push(0);
    for i in 0..m.nrows() {
        for r in 0..br {
            for k in p.row_range(i) {
                let j = p.col_idx()[k] as usize;
                let blk = m.block(k);
                for c in 0..bc {
                    indices.push((j * bc + c) as i32);
                    data.push(blk[r * bc + c]);
                }
            }
            indptr.push(indices.len() as i64);
        }
    }
    let write = |v: &[u8], ext: &str| -> Result<()> {
        let path = dir.join(format!("{name}.{ext}"));
        std::fs::write(&path, v).with_context(|| format!("cannot write {}", path.display()))
    };
    write(
        &indptr.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        "indptr",
    )?;
    write(
        &indices.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        "indices",
    )?;
    write(&data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(), "data")?;
    let meta = serde_json::json!({"rows": rows, "cols": cols, "nnz": data.len(), "block_shape": [br, bc]});
    write(meta.to_string().as_bytes(), "json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_the_device_lacks_are_refused_in_a_sentence() {
        assert_eq!(device_variants(&[]).unwrap(), DEVICE_EXECUTORS.to_vec());
        let asked = [Variant::TwoPass, Variant::ColumnSplit];
        assert_eq!(device_variants(&asked).unwrap(), asked.to_vec());
        let err = device_variants(&[Variant::FusedRowWise]).unwrap_err().to_string();
        assert!(
            err.starts_with("the device has no") && err.contains("choose among"),
            "{err}"
        );
    }

    /// The floor's operator terms, plain and mirrored, against counts made
    /// here block by block: a mirrored application reads the blocks on and
    /// above the diagonal (values and a 4-byte column each), the row
    /// pointers and the two vectors; everything else is the same.
    #[test]
    fn the_mirrored_floor_counts_the_operators_upper_triangles() {
        let problem = BeamProblem::build(2).unwrap();
        let mut opts = HierarchyOptions::default();
        opts.amg.coarse_eq_limit = 100;
        let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
        assert!(h.num_levels() >= 3);
        let plain = iteration_floor(&h, SmootherPrecision::F64, false);
        let mirrored = iteration_floor(&h, SmootherPrecision::F64, true);
        assert_eq!(plain.len(), mirrored.len());
        let mut saved = 0.0;
        for (l, lev) in h.levels()[..h.num_levels() - 1].iter().enumerate() {
            let a = &lev.a;
            let b = a.block_shape().0;
            let p = a.pattern();
            let (mut upper, mut all) = (0usize, 0usize);
            for i in 0..p.nrows() {
                for &j in p.row(i) {
                    all += 1;
                    upper += usize::from(j as usize >= i);
                }
            }
            let rest = ((p.nrows() + 1) * 4 + 2 * a.scalar_rows() * 8) as f64;
            let apps = if l == 0 { 5.0 } else { 4.0 };
            let find = |parts: &[FloorPart], what: &str| parts.iter().find(|q| q.what == what).unwrap().bytes;
            let want_plain = apps * ((all * (b * b * 8 + 4)) as f64 + rest);
            let want_mirrored = apps * ((upper * (b * b * 8 + 4)) as f64 + rest);
            assert_eq!(find(&plain, &format!("A level {l}")), want_plain);
            assert_eq!(find(&mirrored, &format!("A level {l}, upper triangle")), want_mirrored);
            assert!(2 * upper > all && upper < all, "level {l}: {upper} of {all}");
            saved += want_plain - want_mirrored;
        }
        let total = |parts: &[FloorPart]| parts.iter().map(|q| q.bytes).sum::<f64>();
        assert_eq!(total(&plain) - total(&mirrored), saved);
        // With f32 smoother operators only CG's own application is mirrored.
        let f32_plain = iteration_floor(&h, SmootherPrecision::F32, false);
        let f32_mirrored = iteration_floor(&h, SmootherPrecision::F32, true);
        let a0 = &h.levels()[0].a;
        let b = a0.block_shape().0;
        let lower = a0.nnzb()
            - (0..a0.nrows())
                .map(|i| a0.pattern().row(i).iter().filter(|&&j| j as usize >= i).count())
                .sum::<usize>();
        assert_eq!(
            total(&f32_plain) - total(&f32_mirrored),
            (lower * (b * b * 8 + 4)) as f64
        );
    }

    #[test]
    fn the_scalar_csr_dump_expands_every_block() {
        let problem = BeamProblem::build(1).unwrap();
        let dir = std::env::temp_dir().join(format!("ptap-dump-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dump_scalar_csr(&problem.a, &dir, "A").unwrap();
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("A.json")).unwrap()).unwrap();
        let nnz = problem.a.values().len();
        assert_eq!(meta["nnz"], nnz);
        assert_eq!(meta["rows"], problem.a.scalar_rows());
        let indptr = std::fs::read(dir.join("A.indptr")).unwrap();
        assert_eq!(indptr.len(), 8 * (problem.a.scalar_rows() + 1));
        assert_eq!(
            i64::from_le_bytes(indptr[indptr.len() - 8..].try_into().unwrap()),
            nnz as i64
        );
        assert_eq!(std::fs::read(dir.join("A.data")).unwrap().len(), 8 * nnz);
        std::fs::remove_dir_all(&dir).ok();
    }
}
