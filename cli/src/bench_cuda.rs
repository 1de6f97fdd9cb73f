//! `ptap bench --device cuda`: the GPU executor on the beam hierarchy, timed
//! against floors measured in the same run: the device copy bandwidth, per
//! level and variant the numeric Galerkin product against V0's stream floor,
//! the merge-path SpMV as a fraction of copy bandwidth, and the transfer
//! counters of every phase, and the AMG solve on the device (hot matrix setup
//! and time per CG iteration). `--dump DIR` writes each level's `A` and `P` as
//! scalar CSR for the cuSPARSE peer (`benches/peers/cusparse_ptap.py`).
use crate::common::BenchArgs;
use anyhow::{Context, Result};
use ptap_cuda::{
    Arg, Cuda, Device, DeviceBlockCsr, DeviceOptions, DeviceProduct, DeviceSpmv, TransferCounters, DEVICE_VARIANTS,
};
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, CgOptions, CgReport, Hierarchy, HierarchyOptions};
use ptap_schedules::{v0_floor, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

#[derive(Serialize)]
struct ProductResult {
    level: usize,
    variant: &'static str,
    label: &'static str,
    numeric_s: f64,
    v0_floor_bytes: f64,
    /// Numeric time over the time V0's DRAM floor takes at measured copy bandwidth.
    ratio_to_floor: f64,
    speedup_vs_v0: f64,
    rel_frobenius_vs_cpu_v0: f64,
    deterministic: bool,
    buffer_bytes: usize,
}

#[derive(Serialize)]
struct SpmvResult {
    level: usize,
    operator: &'static str,
    block_shape: (usize, usize),
    blocks: usize,
    apply_s: f64,
    bytes: f64,
    bandwidth_bytes_per_s: f64,
    fraction_of_copy: f64,
    rel_err_vs_cpu: f64,
}

/// The AMG-preconditioned CG solve on the device (`Hierarchy<Cuda>`).
#[derive(Serialize)]
struct SolveResult {
    iterations: usize,
    converged: bool,
    relative_residual: f64,
    max_displacement: f64,
    coarse_rows: usize,
    product_variant: &'static str,
    /// Best of `repeat` device matrix setups (numeric products, Jacobi
    /// inverses, eigen-estimates, coarse Cholesky) and of `repeat` solves from zero.
    matrix_setup_s: f64,
    galerkin_numeric_s: f64,
    solve_s: f64,
    s_per_iteration: f64,
}

#[derive(Serialize)]
struct CudaBenchReport {
    k: usize,
    device: String,
    arch: String,
    fmad: bool,
    copy_bandwidth_bytes_per_s: f64,
    memcpy_dtod_bytes_per_s: f64,
    copy_kernel_bytes_per_s: f64,
    kernels_compiled: usize,
    kernels_from_cache: usize,
    compile_s: f64,
    products: Vec<ProductResult>,
    /// Per level the fastest variant and its time; and the sums.
    best_per_level: Vec<(usize, &'static str, f64)>,
    total_best_s: f64,
    total_v0_floor_s: f64,
    total_column_split_s: f64,
    total_two_pass_s: f64,
    spmv: Vec<SpmvResult>,
    solve: SolveResult,
    transfers: TransferCounters,
}

/// Hot matrix setup and solve on the device: best of `repeat` each, for the
/// CPU-built hierarchy `h` put on the device with column-split products.
fn device_solve(dev: &Arc<Device>, h: &Hierarchy, rhs: &[f64], repeat: usize) -> Result<SolveResult> {
    let variant = Variant::ColumnSplit;
    let setup = h.mesh_setup().with_variant(variant)?;
    let mut dh = Hierarchy::new(Cuda::new(dev)?, setup, &mut |_| {})?;
    let (mut setup_s, mut numeric_s) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        setup_s = setup_s.min(dh.matrix_setup()?);
        numeric_s = numeric_s.min(dh.timings.galerkin_numeric_s);
    }
    let cg = CgOptions::default();
    let mut ws = dh.workspace(cg.max_iterations)?;
    let mut x = vec![0.0; rhs.len()];
    let mut best: Option<CgReport> = None;
    for _ in 0..repeat.max(1) {
        x.fill(0.0);
        let r = dh.solve(rhs, &mut x, &cg, &mut ws)?;
        if let Some(b) = &best {
            anyhow::ensure!(b.iterations == r.iterations, "device solves differ in iterations");
        }
        if best.as_ref().is_none_or(|b| r.solve_s < b.solve_s) {
            best = Some(r);
        }
    }
    let best = best.unwrap();
    Ok(SolveResult {
        iterations: best.iterations,
        converged: best.converged,
        relative_residual: best.residual_norm / best.rhs_norm,
        max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        coarse_rows: dh.coarse_rows(),
        product_variant: variant.name(),
        matrix_setup_s: setup_s,
        galerkin_numeric_s: numeric_s,
        solve_s: best.solve_s,
        s_per_iteration: best.solve_s / best.iterations.max(1) as f64,
    })
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
    let bytes = |v: &[u8], ext: &str| -> Result<()> {
        let path = dir.join(format!("{name}.{ext}"));
        std::fs::write(&path, v).with_context(|| format!("cannot write {}", path.display()))
    };
    bytes(
        &indptr.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        "indptr",
    )?;
    bytes(
        &indices.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        "indices",
    )?;
    bytes(&data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(), "data")?;
    let meta = serde_json::json!({"rows": rows, "cols": cols, "nnz": data.len(), "block_shape": [br, bc]});
    bytes(meta.to_string().as_bytes(), "json")
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let variants: Vec<Variant> = if args.variants.is_empty() {
        DEVICE_VARIANTS.to_vec()
    } else {
        args.variants
            .iter()
            .map(|s| s.parse::<Variant>().map_err(anyhow::Error::msg))
            .collect::<Result<_>>()?
    };
    if let Some(v) = variants.iter().find(|v| !DEVICE_VARIANTS.contains(v)) {
        anyhow::bail!("the device has no {} executor; choose among two-pass, slot-tiled, column-split, flat-stream, outer-product-scatter", v.name());
    }
    let dev = Device::open(DeviceOptions { fmad: !args.no_fmad })?;
    println!(
        "device {} ({}, {} SMs), kernels compiled with --fmad={}",
        dev.name(),
        dev.arch(),
        dev.sm_count(),
        !args.no_fmad
    );
    let (bw_memcpy, bw_kernel) = copy_bandwidth(&dev)?;
    let bw = bw_memcpy.max(bw_kernel);
    println!(
        "copy bandwidth (read + write): memcpy_dtod {:.0} GB/s, copy kernel {:.0} GB/s; floors use {:.0} GB/s",
        bw_memcpy / 1e9,
        bw_kernel / 1e9,
        bw / 1e9
    );
    eprintln!("building the beam hierarchy at k = {} on the CPU ...", args.k);
    let t = Instant::now();
    let problem = BeamProblem::build(args.k).context("building the beam")?;
    let h = Hierarchy::build(
        problem.a,
        &problem.near_null,
        6,
        &HierarchyOptions::default(),
        &mut |_| {},
    )
    .context("setting up the hierarchy")?;
    eprintln!(
        "hierarchy: {} levels in {:.1} s",
        h.num_levels(),
        t.elapsed().as_secs_f64()
    );
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for l in 0..h.num_levels() - 1 {
            let lev = &h.levels()[l];
            dump_scalar_csr(&lev.a, dir, &format!("A{l}"))?;
            dump_scalar_csr(&lev.transfer.as_ref().unwrap().p, dir, &format!("P{l}"))?;
        }
        eprintln!("wrote scalar CSR of every level's A and P to {}", dir.display());
    }

    // Operators on the device once; every later phase must move nothing operator-sized.
    dev.set_phase("upload operators");
    let mut dev_a: Vec<DeviceBlockCsr> = Vec::new();
    for lev in h.levels() {
        dev_a.push(DeviceBlockCsr::upload(&dev, &lev.a)?);
    }
    let mut dev_p = Vec::new();
    let mut dev_r = Vec::new();
    for lev in &h.levels()[..h.num_levels() - 1] {
        let t = lev.transfer.as_ref().unwrap();
        dev_p.push(DeviceBlockCsr::upload(&dev, &t.p)?);
        dev_r.push(DeviceBlockCsr::upload(&dev, &t.r)?);
    }

    let mut products = Vec::new();
    let mut best_per_level = Vec::new();
    let (mut total_best, mut total_floor, mut total_cs, mut total_v0) = (0.0, 0.0, 0.0, 0.0);
    println!(
        "{:<6} {:<24} {:>11} {:>9} {:>9} {:>12}",
        "level", "variant", "numeric ms", "vs V0", "/ floor", "rel vs CPU"
    );
    for l in 0..h.num_levels() - 1 {
        let lev = &h.levels()[l];
        let p = &lev.transfer.as_ref().unwrap().p;
        let (bf, bc) = p.block_shape();
        let base = Arc::new(TwoPassSchedule::inspect(
            lev.a.pattern_arc().clone(),
            p.pattern_arc().clone(),
        )?);
        let floor = v0_floor(&base, bf, bc);
        let floor_s = floor / bw;
        total_floor += floor_s;
        // The CPU two-pass product is the reference.
        let mut cpu = BlockCsr::zeros(base.c.clone(), bc, bc);
        executor_for(&VariantSchedule::TwoPass(base.clone()), bf, bc)?.numeric(&lev.a, p, &mut cpu)?;
        let mut dc = DeviceBlockCsr::upload_pattern(&dev, &base.c, bc, bc)?;
        let mut v0_s = f64::NAN;
        let mut best: Option<(&'static str, f64)> = None;
        for &v in &variants {
            dev.set_phase("inspect + schedule upload");
            let schedule = VariantSchedule::inspect(v, base.clone(), bf * bc);
            let mut prod = DeviceProduct::new(&dev, &h.options().kernels, &schedule, bf, bc)?;
            dev.set_phase("matrix setup (numeric products)");
            let s = dev.time(args.repeat, || prod.numeric(&dev_a[l], &dev_p[l], &mut dc))?;
            dev.set_phase("verification downloads");
            let got = dc.download_values(&dev)?;
            let err = relative_frobenius(&got, cpu.values());
            if v == Variant::TwoPass {
                v0_s = s;
                total_v0 += s;
            }
            if v == Variant::ColumnSplit {
                total_cs += s;
            }
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((v.name(), s));
            }
            let r = ProductResult {
                level: l,
                variant: v.name(),
                label: v.label(),
                numeric_s: s,
                v0_floor_bytes: floor,
                ratio_to_floor: s / floor_s,
                speedup_vs_v0: v0_s / s,
                rel_frobenius_vs_cpu_v0: err,
                deterministic: prod.deterministic(),
                buffer_bytes: prod.buffer_bytes(),
            };
            println!(
                "{:<6} {:<24} {:>11.3} {:>8.2}x {:>8.2}x {:>12.1e}",
                format!("l{l}"),
                format!("{} {}", r.label, r.variant),
                1e3 * s,
                r.speedup_vs_v0,
                r.ratio_to_floor,
                err
            );
            products.push(r);
        }
        let (name, s) = best.unwrap();
        total_best += s;
        best_per_level.push((l, name, s));
        println!(
            "{:<6} V0 stream floor {:.1} MB = {:.3} ms at {:.0} GB/s",
            format!("l{l}"),
            floor / 1e6,
            1e3 * floor_s,
            bw / 1e9
        );
    }
    println!(
        "all levels: best per level {:.3} ms = {:.2}x the V0 floor ({:.3} ms); column split {:.3} ms; two-pass {:.3} ms",
        1e3 * total_best,
        total_best / total_floor,
        1e3 * total_floor,
        1e3 * total_cs,
        1e3 * total_v0
    );

    // Merge-path SpMV of A, P and R per level.
    let mut spmv = Vec::new();
    println!(
        "{:<6} {:<4} {:>6} {:>10} {:>10} {:>10} {:>9}",
        "level", "op", "shape", "blocks", "apply us", "GB/s", "of copy"
    );
    for l in 0..h.num_levels() {
        let lev = &h.levels()[l];
        let mut ops: Vec<(&'static str, &DeviceBlockCsr, &BlockCsr)> = vec![("A", &dev_a[l], &lev.a)];
        if let Some(t) = &lev.transfer {
            ops.push(("P", &dev_p[l], &t.p));
            ops.push(("R", &dev_r[l], &t.r));
        }
        for (op, dm, hm) in ops {
            dev.set_phase("solve vectors (bench)");
            let x: Vec<f64> = (0..hm.scalar_cols()).map(|i| (i as f64 * 0.37).sin()).collect();
            let dx = dev.upload(&x)?;
            let mut dy = dev.zeros::<f64>(hm.scalar_rows())?;
            let plan = DeviceSpmv::new(&dev, &h.options().kernels, dm)?;
            dev.set_phase("solve (SpMV)");
            let s = dev.time(args.repeat.max(10), || plan.apply(&dev, dm, &dx, &mut dy))?;
            dev.set_phase("verification downloads");
            let got = dev.download(&dy)?;
            let mut want = vec![0.0; hm.scalar_rows()];
            ptap_sparse::spmv::spmv(hm, &x, &mut want);
            let bytes = DeviceSpmv::stream_bytes(dm);
            let r = SpmvResult {
                level: l,
                operator: op,
                block_shape: hm.block_shape(),
                blocks: hm.nnzb(),
                apply_s: s,
                bytes,
                bandwidth_bytes_per_s: bytes / s,
                fraction_of_copy: bytes / s / bw,
                rel_err_vs_cpu: relative_frobenius(&got[..want.len()], &want),
            };
            println!(
                "{:<6} {:<4} {:>6} {:>10} {:>10.1} {:>10.0} {:>8.1}%",
                format!("l{l}"),
                op,
                format!("{}x{}", r.block_shape.0, r.block_shape.1),
                r.blocks,
                1e6 * s,
                r.bandwidth_bytes_per_s / 1e9,
                100.0 * r.fraction_of_copy
            );
            spmv.push(r);
        }
    }
    let solve = device_solve(&dev, &h, &problem.rhs, args.repeat)?;
    println!(
        "device solve: {} iterations ({}), tip {:.10e}; matrix setup {:.2} ms (numeric P^T A P {:.2} ms), solve {:.2} ms = {:.3} ms per CG iteration",
        solve.iterations,
        if solve.converged { "converged" } else { "NOT converged" },
        solve.max_displacement,
        1e3 * solve.matrix_setup_s,
        1e3 * solve.galerkin_numeric_s,
        1e3 * solve.solve_s,
        1e3 * solve.s_per_iteration
    );
    dev.synchronize()?;
    let transfers = dev.counters();
    println!("transfers per phase (host->device / device->host bytes):");
    for (phase, t) in &transfers.phases {
        println!("  {phase:<34} {:>14} {:>14}", t.h2d_bytes, t.d2h_bytes);
    }
    let cs = dev.compile_stats();
    println!(
        "kernel modules: {} compiled ({:.2} s), {} from the cache{}",
        cs.compiled,
        cs.compile_s,
        cs.cached,
        dev.cache_dir()
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default()
    );
    if let Some(path) = &args.json {
        let rep = CudaBenchReport {
            k: args.k,
            device: dev.name().to_string(),
            arch: dev.arch().to_string(),
            fmad: !args.no_fmad,
            copy_bandwidth_bytes_per_s: bw,
            memcpy_dtod_bytes_per_s: bw_memcpy,
            copy_kernel_bytes_per_s: bw_kernel,
            kernels_compiled: cs.compiled,
            kernels_from_cache: cs.cached,
            compile_s: cs.compile_s,
            products,
            best_per_level,
            total_best_s: total_best,
            total_v0_floor_s: total_floor,
            total_column_split_s: total_cs,
            total_two_pass_s: total_v0,
            spmv,
            solve,
            transfers,
        };
        std::fs::write(path, serde_json::to_string_pretty(&rep)? + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    Ok(())
}
