//! What only the device has, beyond the conformance suite's bodies: the
//! transfers a phase may make (matrix setup and solve move only scalars; an
//! assembly refresh moves only the modulus field), the cold hierarchy built
//! from a mesh setup alone, the device coarse factor itself, the refusals of
//! the device assembler, the symmetric pair's walks and folded `P^T W'`
//! stage, the no-driver sentence, and the k = 16 assembly
//! timing (`#[ignore]`d: run it with `--include-ignored` on the GPU machine).
//!
//! Without a CUDA driver every test prints `skipping: ...` and passes, so
//! CPU-only CI stays green.
use ptap_cuda::{Cuda, Device, DeviceBlockCsr, DeviceOptions, DeviceSpmv};
use ptap_fem::device::{DeviceAssembler, Modulus};
use ptap_fem::{modulus_from_fn, BeamProblem, POISSON_RATIO};
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions, MeshSetup, SetupBeside, SmootherPrecision};
use ptap_schedules::Variant;
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::BlockCsr;
use ptap_tests::conformance::{Exactness, SUMS};
use std::sync::Arc;
use std::time::Instant;

fn device(fmad: bool) -> Option<Arc<Device>> {
    ptap_tests::cuda_device_or_skip(DeviceOptions {
        fmad,
        ..Default::default()
    })
}

/// The beam at `k` with a low coarsening limit, so 3x3 and 6x6 levels occur.
fn beam(k: usize) -> (Hierarchy, Vec<f64>) {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    (h, problem.rhs)
}

/// The CPU-built `h` put on the device (column-split products).
fn on_device(dev: &Arc<Device>, h: &Hierarchy) -> Hierarchy<Cuda> {
    let setup = h.mesh_setup().with_variant(Variant::ColumnSplit).unwrap();
    Hierarchy::new(Cuda::new(dev).unwrap(), setup, &mut |_| {}).unwrap()
}

/// A smooth, positive, spatially varying modulus (a stiffening front along x
/// plus a section-dependent part), sampled at element centroids.
fn varying_modulus(p: &BeamProblem) -> Vec<f64> {
    modulus_from_fn(&p.mesh, |c| {
        1.0 + 0.5 * (0.7 * c[0]).sin() + 0.3 * c[1] * c[2] + 0.1 * c[1] + 0.05 * c[2]
    })
}

#[test]
fn no_driver_is_one_sentence_not_a_panic() {
    // Arrange / Act: opening never panics; without a driver the error is one line.
    match Device::open(DeviceOptions::default()) {
        Ok(d) => assert!(d.arch().starts_with("sm_")),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n') && msg.contains("--device cpu"), "{msg}");
        }
    }
}

#[test]
fn matrix_setup_and_solve_move_only_scalars() {
    let Some(dev) = device(true) else { return };
    let (h, rhs) = beam(4);
    dev.reset_counters();
    let mut dh = on_device(&dev, &h);
    let mut x = vec![0.0; rhs.len()];
    let mut ws = dh.workspace(500).unwrap();
    let rep = dh.solve(&rhs, &mut x, &CgOptions::default(), &mut ws).unwrap();
    dh.matrix_setup().unwrap();
    let c = dev.counters();
    let setup = c.get("mesh setup (upload)");
    assert!(
        setup.h2d_bytes as usize >= h.operator().values().len() * 8,
        "the structure goes up once"
    );
    // Each of the two matrix setups sends each smoothed level's three
    // Chebyshev coefficients up (the host computes them from the eigen-estimate).
    let up = c.get("matrix setup");
    let smoothed = dh.num_levels() as u64 - 1;
    assert!(
        up.h2d_copies <= 2 * smoothed && up.h2d_bytes <= 2 * 24 * smoothed,
        "{up:?}"
    );
    assert_eq!(c.get("solve").h2d_bytes, 0, "solve: nothing goes up");
    // Each matrix setup reads, per smoothed level, the Jacobi status word and
    // the eigen-estimate's scalars once (2 its + 1 of them, all steps
    // together), and the coarse factor's status word.
    let its = h.options().amg.eig_iterations as u64;
    let down = c.get("matrix setup");
    assert_eq!(down.d2h_copies, 2 * (2 * smoothed + 1), "{down:?}");
    assert_eq!(down.d2h_bytes, 2 * (smoothed * (4 + 8 * (2 * its + 1)) + 4), "{down:?}");
    let t = c.get("solve");
    assert!(t.d2h_copies > 0, "solve: the reductions' scalars come back");
    assert!(
        t.d2h_bytes <= 32 * t.d2h_copies,
        "solve: {} bytes in {} copies, more than scalars",
        t.d2h_bytes,
        t.d2h_copies
    );
    // One read of CG's four scalars per iteration plus the start's two norms.
    assert!(c.get("solve").d2h_copies as usize <= rep.iterations + 2);
    let n = rhs.len() as u64 * 8;
    assert_eq!(c.get("rhs upload").h2d_bytes, 2 * n, "b and the start x");
    assert_eq!(c.get("solution download").d2h_bytes, n);
    dev.synchronize().unwrap();
}

/// A solve replayed from CUDA graphs recorded before a refresh (new values,
/// new eigen-estimates and Chebyshev coefficients, the same storage) takes the
/// iterations and gives the bits of the same solve launched one by one.
#[test]
fn recorded_solves_replay_after_a_refresh_as_launched_one_by_one() {
    let Some(dev) = device(true) else { return };
    // Arrange: a hierarchy on the device, its graphs recorded by a first solve.
    let mut problem = BeamProblem::build(4).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let mut dh = on_device(&dev, &h);
    let cg = CgOptions::default();
    let mut ws = dh.workspace(cg.max_iterations).unwrap();
    let n = problem.rhs.len();
    let mut x0 = vec![0.0; n];
    dh.solve(&problem.rhs, &mut x0, &cg, &mut ws).unwrap();
    let lambda0 = dh.lambda_max();
    // Act: refresh to a varying modulus, solve from the recordings, then one by one.
    problem.reassemble(&varying_modulus(&problem)).unwrap();
    dh.refresh(problem.a.values()).unwrap();
    let mut x1 = vec![0.0; n];
    let replayed = dh.solve(&problem.rhs, &mut x1, &cg, &mut ws).unwrap();
    let history = ws.history().to_vec();
    dh.set_recording(false);
    let mut x2 = vec![0.0; n];
    let eager = dh.solve(&problem.rhs, &mut x2, &cg, &mut ws).unwrap();
    // Assert
    assert_ne!(dh.lambda_max(), lambda0, "the refresh changed the smoothers");
    assert!(replayed.converged && eager.converged);
    assert_eq!(replayed.iterations, eager.iterations);
    Exactness::Bitwise.assert_matches(&x1, &x2, "replayed solution");
    Exactness::Bitwise.assert_matches(&history, ws.history(), "replayed residual history");
    assert!(relative_frobenius(&x0, &x1) > 1e-3, "the refresh changed the solution");
    dev.synchronize().unwrap();
}

/// Programmatic dependent launch of the products' stages (the default on
/// sm_90) changes when a kernel starts, never what it computes: a refresh and
/// solve give the bits of the same run with every kernel launched plainly, and
/// only generated kernels (whose bodies open with the grid-dependency wait)
/// may be launched that way.
#[test]
fn programmatic_launches_give_the_bits_of_plain_launches() {
    let Some(on) = device(true) else { return };
    let off = Device::open(DeviceOptions { fmad: true, pdl: false }).unwrap();
    let major: u32 = on.arch()["sm_".len()..].parse::<u32>().unwrap() / 10;
    let wanted = major >= 9 && std::env::var("PTAP_PDL").as_deref() != Ok("0");
    assert_eq!(
        on.programmatic_launch(),
        wanted,
        "{} with PTAP_PDL={:?}",
        on.arch(),
        std::env::var("PTAP_PDL")
    );
    assert!(!off.programmatic_launch());
    if !wanted {
        eprintln!("note: {} launches plainly here; comparing two plain runs", on.arch());
    }
    // Arrange: the beam refreshed to a varying modulus, once per device.
    let mut problem = BeamProblem::build(4).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    problem.reassemble(&varying_modulus(&problem)).unwrap();
    let cg = CgOptions::default();
    let run = |dev: &Arc<Device>| {
        let mut dh = on_device(dev, &h);
        dh.refresh(problem.a.values()).unwrap();
        let mut ws = dh.workspace(cg.max_iterations).unwrap();
        let mut x = vec![0.0; problem.rhs.len()];
        let rep = dh.solve(&problem.rhs, &mut x, &cg, &mut ws).unwrap();
        assert!(rep.converged);
        (x, ws.history().to_vec(), dh.lambda_max())
    };
    // Act
    let (x_on, hist_on, lambda_on) = run(&on);
    let (x_off, hist_off, lambda_off) = run(&off);
    // Assert: the same bits; the generated kernels may be chained, the hand-written not.
    Exactness::Bitwise.assert_matches(&x_on, &x_off, "solution");
    Exactness::Bitwise.assert_matches(&hist_on, &hist_off, "residual history");
    Exactness::Bitwise.assert_matches(&lambda_on, &lambda_off, "eigen-estimates");
    let set = on.loaded("ptap_3x3_3x6_6x6").expect("the beam's kernel set is loaded");
    assert!(set.len() > 20);
    assert!(set.values().all(|k| k.programmatic_launch() == wanted));
    let upload = on.module(&ptap_cuda::upload_module()).unwrap();
    assert!(!upload.is_empty() && upload.values().all(|k| !k.programmatic_launch()));
    assert!(off
        .loaded("ptap_3x3_3x6_6x6")
        .unwrap()
        .values()
        .all(|k| !k.programmatic_launch()));
    on.synchronize().unwrap();
    off.synchronize().unwrap();
}

/// The eigen-estimates replayed from their recordings (CUDA graphs made by
/// the first matrix setup) give the bits of the estimates launched one by
/// one: the same eigen-estimates, Jacobi inverses, coarse operators and solve.
#[test]
fn recorded_eigen_estimates_give_the_bits_launched_one_by_one() {
    let Some(dev) = device(true) else { return };
    let (h, rhs) = beam(4);
    let mut dh = on_device(&dev, &h);
    let cg = CgOptions::default();
    let mut ws = dh.workspace(cg.max_iterations).unwrap();
    let mut run = |dh: &mut Hierarchy<Cuda>| {
        dh.matrix_setup().unwrap();
        let mut x = vec![0.0; rhs.len()];
        let rep = dh.solve(&rhs, &mut x, &cg, &mut ws).unwrap();
        let jacobi: Vec<Vec<f64>> = (0..dh.num_levels() - 1)
            .map(|l| dh.jacobi_inverses(l).unwrap())
            .collect();
        (dh.lambda_max(), jacobi, rep.iterations, x)
    };
    let replayed = run(&mut dh);
    dh.set_recording(false);
    let eager = run(&mut dh);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&replayed.0), bits(&eager.0), "lambda_max");
    for (l, (a, b)) in replayed.1.iter().zip(&eager.1).enumerate() {
        assert_eq!(bits(a), bits(b), "level {l}: Jacobi inverses");
    }
    assert_eq!(replayed.2, eager.2);
    Exactness::Bitwise.assert_matches(&replayed.3, &eager.3, "solution");
    dev.synchronize().unwrap();
}

/// The smoothers and the coarse factor on lanes (after the products, level
/// 0's after the fine one, and beside them; lanes at the main stream's
/// priority and at the greatest) give the bits of the serial matrix setup: eigen-estimates,
/// Jacobi inverses, coarse factor and solve, with `f64` and `f32` smoothers;
/// and the estimates are the host's to 1e-12.
#[test]
fn matrix_setup_on_lanes_gives_the_bits_of_the_serial_one() {
    let Some(dev) = device(true) else { return };
    for precision in SmootherPrecision::ALL {
        let problem = BeamProblem::build(4).unwrap();
        let mut opts = HierarchyOptions::default();
        opts.amg.coarse_eq_limit = 100;
        opts.smoother_precision = precision;
        let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
        let mut dh = on_device(&dev, &h);
        let cg = CgOptions::default();
        let mut ws = dh.workspace(cg.max_iterations).unwrap();
        let mut run = |dh: &mut Hierarchy<Cuda>, order: SetupBeside| {
            dh.set_setup_beside(order);
            // Twice: the first records, the second replays.
            dh.matrix_setup().unwrap();
            dh.matrix_setup().unwrap();
            let mut x = vec![0.0; problem.rhs.len()];
            let rep = dh.solve(&problem.rhs, &mut x, &cg, &mut ws).unwrap();
            let jacobi: Vec<Vec<f64>> = (0..dh.num_levels() - 1)
                .map(|l| dh.jacobi_inverses(l).unwrap())
                .collect();
            let factor = dh.coarse().factor(&dev).unwrap();
            (dh.lambda_max(), jacobi, factor, rep.iterations, x)
        };
        let serial = run(&mut dh, SetupBeside::Serial);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (l, (w, g)) in h.lambda_max().iter().zip(&serial.0).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs(),
                "{precision} level {l}: {g} against {w}"
            );
        }
        let lanes_runs = [
            (SetupBeside::AfterProducts, None),
            (SetupBeside::AfterFineProduct, Some(1)),
            (SetupBeside::WithProducts, None),
            (SetupBeside::WithProducts, Some(0)),
        ];
        for (order, urgent) in lanes_runs {
            dh.backend().set_lane_priority(urgent);
            let lanes = run(&mut dh, order);
            assert!(dh.timings.matrix.beside_s > 0.0, "{order:?}: the lanes were used");
            assert_eq!(bits(&lanes.0), bits(&serial.0), "{precision} {order:?}: lambda_max");
            for (l, (a, b)) in lanes.1.iter().zip(&serial.1).enumerate() {
                assert_eq!(bits(a), bits(b), "{precision} {order:?} level {l}: Jacobi inverses");
            }
            assert_eq!(bits(&lanes.2), bits(&serial.2), "{precision} {order:?}: coarse factor");
            assert_eq!(lanes.3, serial.3, "{precision} {order:?}: iterations");
            Exactness::Bitwise.assert_matches(&lanes.4, &serial.4, &format!("{precision} {order:?}: solution"));
        }
    }
    dev.synchronize().unwrap();
}

#[test]
fn cold_device_hierarchy_from_mesh_setup_alone_matches_the_cpu() {
    // The device's matrix setup computes every coarse operator itself: the
    // mesh setup hands it only patterns below the levels aggregation needed.
    let Some(dev) = device(true) else { return };
    let problem = BeamProblem::build(4).unwrap();
    let mut opts = ptap_runtime::HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let mut h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    opts.variant = Some(Variant::ColumnSplit);
    let setup = MeshSetup::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    assert!(
        !setup.levels.last().unwrap().has_values,
        "mesh setup never computes the coarsest operator"
    );
    dev.reset_counters();
    let mut dh = Hierarchy::new(Cuda::new(&dev).unwrap(), setup, &mut |_| {}).unwrap();
    let up = dev.counters().get("mesh setup (upload)").h2d_bytes as usize;
    assert!(up >= h.operator().values().len() * 8, "the fine operator goes up");
    for l in 1..h.num_levels() {
        let want = h.levels()[l].a.values();
        let got = dh.operator_values(l).unwrap();
        let err = relative_frobenius(&got[..want.len()], want);
        assert!(err <= 1e-13, "level {l}: device A differs from the CPU's by {err:e}");
    }
    let n = problem.rhs.len();
    let (mut x_cpu, mut x_dev) = (vec![0.0; n], vec![0.0; n]);
    let cpu = h
        .solve(
            &problem.rhs,
            &mut x_cpu,
            &CgOptions::default(),
            &mut CgWorkspace::new(n, 500),
        )
        .unwrap();
    let mut ws = dh.workspace(500).unwrap();
    let got = dh
        .solve(&problem.rhs, &mut x_dev, &CgOptions::default(), &mut ws)
        .unwrap();
    assert_eq!(got.iterations, cpu.iterations);
    assert!(relative_frobenius(&x_dev, &x_cpu) <= 1e-10);
    // The cold matrix setup moved up only the Chebyshev coefficients (three
    // per smoothed level): every coarse value was made on the device.
    let smoothed = dh.num_levels() - 1;
    assert!(dev.counters().get("matrix setup").h2d_bytes as usize <= 24 * smoothed);
    dev.synchronize().unwrap();
}

#[test]
fn device_coarse_cholesky_factor_matches_the_reference_factor() {
    // The suite checks the coarse solve; the factor itself lives only on the device.
    let Some(dev) = device(true) else { return };
    let (h, _) = beam(4);
    let mut dh = on_device(&dev, &h);
    // A refresh replays the factorization recorded by the first matrix setup
    // on the new values (the operator doubled).
    let doubled: Vec<f64> = h.operator().values().iter().map(|v| 2.0 * v).collect();
    dh.refresh(&doubled).unwrap();
    let nl = h.num_levels();
    let ac = &h.levels()[nl - 1].a;
    let n = ac.scalar_rows();
    assert_eq!(dh.coarse_rows(), n);
    // Factor the device's own coarse operator on the host, column by column (the plain reference).
    let dev_ac = BlockCsr::new(
        ac.pattern_arc().clone(),
        ac.block_shape().0,
        ac.block_shape().1,
        dh.operator_values(nl - 1).unwrap()[..ac.values().len()].to_vec(),
    )
    .unwrap();
    let d = dev_ac.to_dense().data;
    let l_dev = dh.coarse().factor(&dev).unwrap();
    let l_ref = ptap_sparse::dense::cholesky_reference(n, &d).unwrap();
    let lower = |m: &[f64]| -> Vec<f64> { (0..n * n).map(|q| if q % n <= q / n { m[q] } else { 0.0 }).collect() };
    let err = relative_frobenius(&lower(&l_dev), &l_ref);
    assert!(err <= 1e-12, "coarse Cholesky factor differs by {err:e}");
    dev.synchronize().unwrap();
}

#[test]
fn device_assembly_refresh_moves_only_the_modulus_and_refuses_bad_inputs() {
    // Values are the suite's (assembly_is_equivalent_to_reference); here the bus and the refusals.
    let Some(dev) = device(true) else { return };
    let prob = BeamProblem::build(2).unwrap();
    let modulus = varying_modulus(&prob);
    let n_values = prob.a.values().len();
    dev.set_phase("setup");
    let mut dasm = DeviceAssembler::new(&dev, &prob.assembler, prob.mesh.element_size(), POISSON_RATIO).unwrap();
    let mut da = DeviceBlockCsr::upload_pattern(&dev, &prob.assembler.pattern(), 3, 3).unwrap();
    let dmod = dev.upload(&modulus).unwrap();

    dev.reset_counters();
    dev.set_phase("assembly-host-modulus");
    dasm.assemble(Modulus::Host(&modulus), &mut da.values).unwrap();
    dev.set_phase("assembly-device-modulus");
    dasm.assemble_matrix(Modulus::Device(&dmod), &mut da).unwrap();
    dev.synchronize().unwrap();
    let host_t = dev.counters().get("assembly-host-modulus");
    let dev_t = dev.counters().get("assembly-device-modulus");
    dev.set_phase("check");
    // Only the modulus field crosses the bus, and nothing comes back.
    assert_eq!(host_t.h2d_bytes, 8 * modulus.len() as u64);
    assert_eq!(host_t.h2d_copies, 1);
    assert_eq!(host_t.d2h_bytes, 0);
    assert_eq!(dev_t.h2d_bytes + dev_t.d2h_bytes, 0);
    // Both refreshes agree with the CPU assembly.
    let mut cpu = prob.clone();
    cpu.reassemble(&modulus).unwrap();
    Exactness::Within(SUMS).assert_blocks_match(
        &da.download_values(&dev).unwrap(),
        cpu.a.values(),
        9,
        "device modulus refresh",
    );

    // Bad inputs are refused before any launch.
    assert!(dasm.assemble(Modulus::Host(&modulus[1..]), &mut da.values).is_err());
    let mut bad = modulus.clone();
    bad[0] = -1.0;
    assert!(dasm.assemble(Modulus::Host(&bad), &mut da.values).is_err());
    let mut short = dev.zeros::<f64>(n_values - 1).unwrap();
    assert!(dasm.assemble(Modulus::Device(&dmod), &mut short).is_err());
    dev.synchronize().unwrap();
}

#[test]
fn device_assembler_refuses_a_wrong_geometry() {
    let Some(dev) = device(true) else { return };
    let prob = BeamProblem::build(1).unwrap();
    let mut h = prob.mesh.element_size();
    h[0] *= 2.0;
    assert!(DeviceAssembler::new(&dev, &prob.assembler, h, POISSON_RATIO).is_err());
    assert!(DeviceAssembler::new(&dev, &prob.assembler, prob.mesh.element_size(), 0.3).is_err());
}

/// The k = 16 beam (1.05M dofs): ms per device assembly, its effective
/// bandwidth against a device-to-device copy of the value array measured in
/// the same run, and a check against the CPU assembly.
#[test]
#[ignore = "k = 16 needs ~6 GB of host memory and a GPU; run with --include-ignored"]
fn device_assembly_timing_k16() {
    let Some(dev) = device(true) else { return };
    let k: usize = std::env::var("PTAP_ASSEMBLY_K")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let t0 = Instant::now();
    let mut prob = BeamProblem::build(k).unwrap();
    let build_s = t0.elapsed().as_secs_f64();
    let modulus = varying_modulus(&prob);
    let t1 = Instant::now();
    prob.reassemble(&modulus).unwrap();
    let cpu_s = t1.elapsed().as_secs_f64();

    dev.set_phase("setup");
    let t2 = Instant::now();
    let mut dasm = DeviceAssembler::new(&dev, &prob.assembler, prob.mesh.element_size(), POISSON_RATIO).unwrap();
    let mut da = DeviceBlockCsr::upload_pattern(&dev, &prob.assembler.pattern(), 3, 3).unwrap();
    let dmod = dev.upload(&modulus).unwrap();
    dev.synchronize().unwrap();
    let setup_s = t2.elapsed().as_secs_f64();

    dev.reset_counters();
    dev.set_phase("assembly");
    let dev_s = dev
        .time(10, || {
            dasm.assemble(Modulus::Device(&dmod), &mut da.values)
                .map_err(|e| match e {
                    ptap_fem::device::AssemblyError::Cuda(c) => c,
                    other => panic!("{other}"),
                })
        })
        .unwrap();
    let host_s = dev
        .time(10, || {
            dasm.assemble(Modulus::Host(&modulus), &mut da.values)
                .map_err(|e| match e {
                    ptap_fem::device::AssemblyError::Cuda(c) => c,
                    other => panic!("{other}"),
                })
        })
        .unwrap();
    let moved = dev.counters().get("assembly");

    // Copy bandwidth of the same buffer size, read + write counted.
    let mut copy = dev.zeros::<f64>(da.values.len()).unwrap();
    let copy_s = dev
        .time(10, || Ok(dev.stream().memcpy_dtod(&da.values, &mut copy)?))
        .unwrap();
    let copy_bw = 2.0 * da.values.num_bytes() as f64 / copy_s;

    dev.set_phase("check");
    let got = da.download_values(&dev).unwrap();
    let bits = got
        .iter()
        .zip(prob.a.values())
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    let stream = dasm.stream_bytes();
    let values_bytes = (da.values.num_bytes()) as f64;
    println!(
        "k={k}: {} dofs, {} elements, {} blocks ({:.1} MB of values); host build {build_s:.2} s, CPU assembly {:.1} ms ({} threads), \
         device setup (maps + K_ref) {setup_s:.3} s, device maps {:.1} MB",
        prob.assembler.n_dofs(),
        prob.assembler.n_elements(),
        prob.a.pattern().nnzb(),
        values_bytes / 1e6,
        cpu_s * 1e3,
        rayon_threads(),
        dasm.bytes() as f64 / 1e6
    );
    println!(
        "k={k}: device assembly {:.3} ms (modulus on device), {:.3} ms (modulus from host, {} B h2d per refresh); \
         {:.1} MB streamed -> {:.0} GB/s = {:.1}% of the dtod copy bandwidth {:.0} GB/s (values only: {:.0} GB/s)",
        dev_s * 1e3,
        host_s * 1e3,
        moved.h2d_bytes / moved.h2d_copies.max(1),
        stream / 1e6,
        stream / dev_s / 1e9,
        100.0 * stream / dev_s / copy_bw,
        copy_bw / 1e9,
        values_bytes / dev_s / 1e9
    );
    println!(
        "k={k}: device vs CPU: relative {:.3e}, {bits} scalars differ in bits (fmad on)",
        relative_frobenius(&got, prob.a.values())
    );
    Exactness::Within(SUMS).assert_blocks_match(&got, prob.a.values(), 9, "k = 16 assembly");
    assert_eq!(moved.d2h_bytes, 0);
    dev.synchronize().unwrap();
}

/// The symmetric pair's product settings are read from the environment when a
/// product is built; the tests that set them take this lock.
static SYM_ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A random structurally symmetric `n x n` operator (`A + A^T` of a random
/// one, exactly symmetric) of `bf x bf` blocks and a random `n x m` `P`.
fn random_symmetric(rng: &mut ptap_tests::Rng, n: usize, m: usize, bf: usize, bc: usize) -> (BlockCsr, BlockCsr) {
    let a = ptap_tests::random_block_csr(rng, n, n, bf, bf, 0.03, true).to_dense();
    let mut s = a.transpose();
    for i in 0..s.rows {
        for j in 0..s.cols {
            *s.at_mut(i, j) += a.at(i, j);
        }
    }
    (
        BlockCsr::from_dense(&s, bf, bf, true).unwrap(),
        ptap_tests::random_block_csr(rng, n, m, bf, bc, 0.04, false),
    )
}

/// The symmetric pair's `P^T W'` stage folded onto `A_c`'s upper triangle
/// (`PTAP_SYM_FOLD=on`, one unit per slot `(I, J)`, `I <= J`, writing
/// `X_IJ + X_JI^T` to both) and unfolded (`off`: `X`, then the symmetrize
/// pass), and with `X`'s runs split across warps (`PTAP_SYM_SPLIT`: chunks of
/// 1, 3, 8 and whole runs, then the split pass): all give the CPU's V0 to 1e-13, exactly symmetric results, and
/// the same bytes on a second call; the units' order (`PTAP_SYM_RW_ORDER`: windows
/// sorted longest first, or the schedule's order) gives the same bytes, on random symmetric 3x3 / 3x6 and 6x6
/// products and the beam's levels (k = 3). Every slot is written (the output
/// starts as NaN).
#[test]
fn the_symmetric_pairs_folded_stage_is_v0_exactly_symmetric_and_deterministic() {
    use ptap_runtime::{Backend, TwoPassExecutor};
    use ptap_schedules::{TwoPassSchedule, VariantSchedule};
    let _env = SYM_ENV.lock().unwrap_or_else(|e| e.into_inner());
    let Some(be) = ptap_tests::conformance::cuda_or_skip(DeviceOptions {
        fmad: false,
        ..Default::default()
    }) else {
        return;
    };
    let mut rng = ptap_tests::Rng::new(4242);
    let mut cases = Vec::new();
    for (n, m, bf, bc) in [(300, 70, 3, 6), (200, 40, 6, 6), (40, 9, 6, 6)] {
        let (a, p) = random_symmetric(&mut rng, n, m, bf, bc);
        cases.push((a, p, format!("random symmetric {bf}x{bf}/{bf}x{bc} {n}x{m}")));
    }
    let (h, _) = beam(3);
    for (l, lev) in h.levels().iter().enumerate() {
        if let Some(t) = &lev.transfer {
            cases.push((lev.a.clone(), t.p.clone(), format!("beam k=3 level {l}")));
        }
    }
    for (a, p, what) in &cases {
        let (bf, bc) = p.block_shape();
        let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
        let mut want = BlockCsr::zeros(base.c.clone(), bc, bc);
        TwoPassExecutor::new(base.clone(), bf, bc)
            .numeric(a, p, &mut want)
            .unwrap();
        let schedule = VariantSchedule::inspect(Variant::TensorPairSym, base.clone(), bf * bc);
        let VariantSchedule::TensorPairSym(sym) = &schedule else {
            panic!("{what}: not the symmetric pair")
        };
        assert!(2 * sym.rw_fold.units() <= base.c.nnzb() + base.c.nrows(), "{what}");
        let (da, dp) = (be.matrix_ref(a).unwrap(), be.matrix_ref(p).unwrap());
        let mut got_by = Vec::new();
        let longest = (0..sym.rw.slots()).map(|s| sym.rw.run(s).len()).max().unwrap_or(0);
        let whole = longest.max(1).to_string();
        // Folded; X then the pass; X's runs split into chunks of 1, 3 and 8
        // contributions, and into whole runs (one chunk per slot); all with the
        // units in windows sorted longest first (the default). Then folded and
        // the pass again in the schedule's order and in windows of 3 and 5.
        let modes = [
            ("on", "off", "default"),
            ("off", "off", "default"),
            ("off", "1", "default"),
            ("off", "3", "default"),
            ("off", "8", "default"),
            ("off", &*whole, "default"),
            ("on", "off", "off"),
            ("off", "off", "off"),
            ("on", "off", "3"),
            ("off", "off", "5"),
        ];
        for (fold, split, order) in modes {
            std::env::set_var("PTAP_SYM_FOLD", fold);
            std::env::set_var("PTAP_SYM_SPLIT", split);
            std::env::set_var("PTAP_SYM_RW_ORDER", order);
            let mut product = be.product(&schedule, bf, bc).unwrap();
            std::env::remove_var("PTAP_SYM_FOLD");
            std::env::remove_var("PTAP_SYM_SPLIT");
            std::env::remove_var("PTAP_SYM_RW_ORDER");
            let fold = format!("{fold}, split {split}, order {order}");
            let mut dc = be.matrix(BlockCsr::zeros(base.c.clone(), bc, bc), false).unwrap();
            be.set_values(&mut dc, &vec![f64::NAN; want.values().len()]).unwrap();
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            let got = be.values(&dc).unwrap();
            let err = relative_frobenius(&got, want.values());
            assert!(err <= 1e-13, "{what}, fold {fold}: {err:e} from V0");
            let c = &base.c;
            for i in 0..c.nrows() {
                for k in c.row_range(i) {
                    let t = c.find(c.col_idx()[k] as usize, i).unwrap();
                    for r in 0..bc {
                        for q in 0..bc {
                            assert_eq!(
                                got[k * bc * bc + r * bc + q].to_bits(),
                                got[t * bc * bc + q * bc + r].to_bits(),
                                "{what}, fold {fold}: slot {k} ({r}, {q}) against its mirror"
                            );
                        }
                    }
                }
            }
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            let again = be.values(&dc).unwrap();
            assert!(
                again.iter().zip(&got).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{what}, fold {fold}: a second call differs"
            );
            got_by.push(got);
        }
        // The same sums to rounding: the fold only reassociates X_IJ + X_JI^T, a split X's runs.
        for (i, got) in got_by.iter().enumerate().skip(1) {
            let d = relative_frobenius(&got_by[0], got);
            assert!(d <= 1e-14, "{what}: mode {i} against the fold {d:e}");
        }
        // One chunk per slot sums each run as the pass does: the same bytes.
        assert!(
            got_by[5]
                .iter()
                .zip(&got_by[1])
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "{what}: whole-run chunks differ from the pass"
        );
        // The units' order changes no unit's sums: the same bytes in any order.
        for (i, j) in [(6, 0), (7, 1), (8, 0), (9, 1)] {
            assert!(
                got_by[i]
                    .iter()
                    .zip(&got_by[j])
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "{what}: mode {i}'s unit order changes the bytes of mode {j}"
            );
        }
    }
    assert!(cases.len() >= 5, "{} cases", cases.len());
}

/// The symmetric pair's coarse halving `A P` kernel walks `chunk` consecutive
/// slots per block, its warps interleaved (`PTAP_SYM_AP_COARSE_WALK`; by
/// default 16 where the stage fills enough waves, else one slot per warp):
/// every chunk, including chunks shorter than the block's warps, longer than
/// the stage and not dividing it, gives the bytes of one slot per warp, on
/// the beam's 6x6 levels (k = 3) and a random symmetric 6x6 product.
#[test]
fn the_symmetric_pairs_coarse_walks_give_the_bits_of_one_slot_per_warp() {
    use ptap_runtime::Backend;
    use ptap_schedules::{TwoPassSchedule, VariantSchedule};
    let _env = SYM_ENV.lock().unwrap_or_else(|e| e.into_inner());
    let Some(be) = ptap_tests::conformance::cuda_or_skip(DeviceOptions {
        fmad: false,
        ..Default::default()
    }) else {
        return;
    };
    let mut rng = ptap_tests::Rng::new(78);
    let (a, p) = random_symmetric(&mut rng, 200, 40, 6, 6);
    let mut cases = vec![(a, p, "random symmetric 6x6/6x6".to_string())];
    let (h, _) = beam(3);
    for (l, lev) in h.levels().iter().enumerate().skip(1) {
        if let Some(t) = &lev.transfer {
            cases.push((lev.a.clone(), t.p.clone(), format!("beam k=3 level {l}")));
        }
    }
    for (a, p, what) in &cases {
        let (bf, bc) = p.block_shape();
        let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
        let mut v0 = BlockCsr::zeros(base.c.clone(), bc, bc);
        ptap_runtime::TwoPassExecutor::new(base.clone(), bf, bc)
            .numeric(a, p, &mut v0)
            .unwrap();
        let schedule = VariantSchedule::inspect(Variant::TensorPairSym, base.clone(), bf * bc);
        let (da, dp) = (be.matrix_ref(a).unwrap(), be.matrix_ref(p).unwrap());
        let mut want: Option<Vec<f64>> = None;
        for walk in ["4", "1", "2", "3", "5", "8", "32", "33", "64", "100000", "default"] {
            // Read once, when the product is built.
            std::env::set_var("PTAP_SYM_AP_COARSE_WALK", walk);
            let mut product = be.product(&schedule, bf, bc).unwrap();
            std::env::remove_var("PTAP_SYM_AP_COARSE_WALK");
            let mut dc = be.matrix(BlockCsr::zeros(base.c.clone(), bc, bc), false).unwrap();
            be.set_values(&mut dc, &vec![f64::NAN; v0.values().len()]).unwrap();
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            let got = be.values(&dc).unwrap();
            match &want {
                None => {
                    let err = relative_frobenius(&got, v0.values());
                    assert!(err <= 1e-13, "{what}: {err:e} from V0");
                    want = Some(got)
                }
                Some(w) => assert!(
                    got.iter().zip(w).all(|(g, w)| g.to_bits() == w.to_bits()),
                    "{what}: coarse walk {walk:?} differs from one slot per warp"
                ),
            }
        }
    }
    assert!(cases.len() >= 3, "{} cases", cases.len());
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The symmetric pair's fine `A P` warps may walk several units each (`i8`,
/// the default); every walk gives the bytes of one unit per warp (`1,w4`, the geometry before), on
/// the beam's levels (k = 3) and on a random symmetric 3x3 / 3x6 product,
/// including walks that loop over the grid (`1,1`, `3,2`, `i3,2`), a block's
/// warps interleaved (`i...`), spans that end past the last unit, and blocks
/// of 1 to 8 warps (`,wN`; 2 by default).
#[test]
fn the_symmetric_pairs_walks_give_the_bits_of_one_unit_per_warp() {
    use ptap_runtime::Backend;
    use ptap_schedules::{TwoPassSchedule, VariantSchedule};
    let _env = SYM_ENV.lock().unwrap_or_else(|e| e.into_inner());
    let Some(be) = ptap_tests::conformance::cuda_or_skip(DeviceOptions {
        fmad: false,
        ..Default::default()
    }) else {
        return;
    };
    let mut rng = ptap_tests::Rng::new(77);
    let a = ptap_tests::random_block_csr(&mut rng, 300, 300, 3, 3, 0.03, true).to_dense();
    let mut s = a.transpose();
    for i in 0..s.rows {
        for j in 0..s.cols {
            *s.at_mut(i, j) += a.at(i, j);
        }
    }
    let mut cases = vec![(
        BlockCsr::from_dense(&s, 3, 3, true).unwrap(),
        ptap_tests::random_block_csr(&mut rng, 300, 70, 3, 6, 0.04, false),
        "random 3x3/3x6".to_string(),
    )];
    let (h, _) = beam(3);
    for (l, lev) in h.levels().iter().enumerate() {
        if let Some(t) = &lev.transfer {
            cases.push((lev.a.clone(), t.p.clone(), format!("beam k=3 level {l}")));
        }
    }
    for (a, p, what) in &cases {
        let (bf, bc) = p.block_shape();
        let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
        let schedule = VariantSchedule::inspect(Variant::TensorPairSym, base.clone(), bf * bc);
        let (da, dp) = (be.matrix_ref(a).unwrap(), be.matrix_ref(p).unwrap());
        let mut want: Option<Vec<f64>> = None;
        for walk in [
            "1,w4",
            "i8",
            "1,res",
            "1,1",
            "3,2",
            "4",
            "7",
            "i1",
            "i3,2",
            "i4",
            "i2,res",
            "i8,w4",
            "i16,w1",
            "i3,2,w8",
            "i2,res,w3",
        ] {
            // Read once, when the product is built.
            std::env::set_var("PTAP_SYM_AP_WALK", walk);
            let mut product = be.product(&schedule, bf, bc).unwrap();
            std::env::remove_var("PTAP_SYM_AP_WALK");
            let mut dc = be.matrix(BlockCsr::zeros(base.c.clone(), bc, bc), false).unwrap();
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            let got = be.values(&dc).unwrap();
            match &want {
                None => want = Some(got),
                Some(w) => assert!(
                    got.iter().zip(w).all(|(g, w)| g.to_bits() == w.to_bits()),
                    "{what}: walk {walk:?} differs from one unit per warp"
                ),
            }
        }
    }
    assert!(cases.len() >= 3, "{} cases", cases.len());
}

/// Whether every block of the square `a` equals its mirror's transpose bit
/// for bit (a structurally symmetric pattern assumed).
fn bitwise_symmetric(a: &BlockCsr) -> bool {
    let (b, p) = (a.block_shape().0, a.pattern());
    (0..p.nrows()).all(|i| {
        p.row_range(i).all(|k| {
            let j = p.col_idx()[k] as usize;
            let m = p.find(j, i).expect("a mirror");
            let (x, y) = (&a.values()[k * b * b..][..b * b], &a.values()[m * b * b..][..b * b]);
            (0..b).all(|r| (0..b).all(|c| x[r * b + c].to_bits() == y[c * b + r].to_bits()))
        })
    })
}

/// The mirrored SpMV (`DeviceSpmv::mirror`: a symmetric operator read
/// through its upper triangle) against the plain SpMV, `y = A x` and `r = b -
/// A x`, at the default and at 32, 64 and 1000 blocks per warp: the same bits
/// where every block equals its mirror's transpose bit for bit (random
/// symmetric 3x3 and 6x6 operators, and whichever of the beam's levels are),
/// within 1e-14 where the operator is symmetric only to rounding (the
/// beam's fine operator); every entry written (outputs start as NaN). A
/// pattern that is not structurally symmetric is refused and the plan stays
/// plain.
#[test]
fn the_mirrored_spmv_gives_the_plain_bits_on_symmetric_operators() {
    let Some(dev) = device(true) else { return };
    let reg = ptap_runtime::KernelRegistry::shipped().clone();
    let mut rng = ptap_tests::Rng::new(17);
    let mut ops: Vec<(String, BlockCsr)> = Vec::new();
    for b in [3, 6] {
        ops.push((format!("random {b}x{b}"), random_symmetric(&mut rng, 300, 10, b, b).0));
    }
    let (h, _) = beam(3);
    for (l, lev) in h.levels().iter().enumerate() {
        ops.push((format!("the beam's level {l}"), lev.a.clone()));
    }
    let mut exact_levels = 0;
    for (what, a) in &ops {
        let exact = bitwise_symmetric(a);
        exact_levels += exact as usize;
        let dm = DeviceBlockCsr::upload(&dev, a).unwrap();
        let (nr, nc) = (a.scalar_rows(), a.scalar_cols());
        let x: Vec<f64> = (0..nc).map(|i| (i as f64 * 0.37).sin()).collect();
        let bv: Vec<f64> = (0..nr).map(|i| (i as f64 * 0.11).cos()).collect();
        let (dx, db) = (dev.upload(&x).unwrap(), dev.upload(&bv).unwrap());
        let run = |s: &DeviceSpmv| {
            let y = dev.upload(&vec![f64::NAN; nr]).unwrap();
            let r = dev.upload(&vec![f64::NAN; nr]).unwrap();
            s.apply(&dev, &dm, &dx, &y).unwrap();
            s.residual(&dev, &dm, &dx, &db, &r).unwrap();
            (dev.download(&y).unwrap(), dev.download(&r).unwrap())
        };
        let want = run(&DeviceSpmv::new(&dev, &reg, &dm).unwrap());
        for len in [None, Some(32), Some(64), Some(1000)] {
            let mut s = DeviceSpmv::new(&dev, &reg, &dm).unwrap();
            assert!(s.mirror(&dev, &reg, &dm, len).unwrap(), "{what}: mirrored");
            assert!(s.mirror_per_warp().unwrap() >= a.pattern().row(0).len());
            let got = run(&s);
            for (g, w, op) in [(&got.0, &want.0, "y = A x"), (&got.1, &want.1, "r = b - A x")] {
                assert!(
                    g.iter().all(|v| v.is_finite()),
                    "{what} {op} at {len:?}: every entry written"
                );
                if exact {
                    let differ = g.iter().zip(w).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
                    assert_eq!(
                        differ, 0,
                        "{what} {op} at {len:?}: {differ} entries differ from the plain SpMV"
                    );
                } else {
                    let err = relative_frobenius(g, w);
                    assert!(err <= 1e-14, "{what} {op} at {len:?}: {err:e} from the plain SpMV");
                }
            }
        }
    }
    assert!(exact_levels >= 2, "the random operators are symmetric bit for bit");
    // Not structurally symmetric: refused, the plan stays plain.
    let a = loop {
        let a = ptap_tests::random_block_csr(&mut rng, 40, 40, 3, 3, 0.1, true);
        if !a.pattern().mirror_slots(None) {
            break a;
        }
    };
    let dm = DeviceBlockCsr::upload(&dev, &a).unwrap();
    let mut s = DeviceSpmv::new(&dev, &reg, &dm).unwrap();
    assert!(!s.mirror(&dev, &reg, &dm, None).unwrap());
    assert!(s.mirror_per_warp().is_none());
    dev.synchronize().unwrap();
}

/// A device hierarchy whose operators are applied through their upper
/// triangles (`HierarchyOptions::mirror_spmv`) solves the beam (k = 3, 3x3 and
/// 6x6 levels) in the iterations of the plain one, to 1e-10, with the same
/// eigen-estimates to 1e-12; a second solve gives the same bits.
#[test]
fn a_mirrored_hierarchy_solves_as_the_plain_one() {
    let Some(dev) = device(true) else { return };
    if std::env::var_os("PTAP_SPMV_MIRROR").is_some() {
        println!("skipping: PTAP_SPMV_MIRROR is set, and it overrides the option under test");
        return;
    }
    let (h, rhs) = beam(3);
    let solve = |mirror: bool| {
        let mut setup = h.mesh_setup().with_variant(Variant::ColumnSplit).unwrap();
        setup.options.mirror_spmv = mirror;
        let mut dh = Hierarchy::new(Cuda::new(&dev).unwrap(), setup, &mut |_| {}).unwrap();
        dh.matrix_setup().unwrap();
        let lambdas: Vec<f64> = dh
            .levels()
            .iter()
            .filter_map(|l| l.smoother.as_ref().map(|s| s.lambda_max))
            .collect();
        let mut ws = dh.workspace(500).unwrap();
        let mut x = vec![0.0; rhs.len()];
        let r = dh.solve(&rhs, &mut x, &CgOptions::default(), &mut ws).unwrap();
        let mut x2 = vec![0.0; rhs.len()];
        dh.solve(&rhs, &mut x2, &CgOptions::default(), &mut ws).unwrap();
        assert!(
            x.iter().zip(&x2).all(|(a, b)| a.to_bits() == b.to_bits()),
            "mirror {mirror}: repeatable"
        );
        (r.iterations, x, lambdas)
    };
    let (plain, mirrored) = (solve(false), solve(true));
    assert_eq!(mirrored.0, plain.0, "iterations");
    let err = relative_frobenius(&mirrored.1, &plain.1);
    assert!(err <= 1e-10, "solutions differ by {err:e}");
    for (m, p) in mirrored.2.iter().zip(&plain.2) {
        assert!((m - p).abs() <= 1e-12 * p.abs(), "lambda_max {m} against {p}");
    }
    dev.synchronize().unwrap();
}
