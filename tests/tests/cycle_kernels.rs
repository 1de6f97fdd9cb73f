//! The solve's operations one by one on the device at k = 16 (`#[ignore]`d:
//! run it with `--include-ignored` on the GPU machine): each level's SpMVs,
//! Chebyshev and CG vector passes, and the eigen-estimate's step, as the
//! backend's separate operations and as the fused passes that replace them,
//! with the bytes each streams; the matrix setup in each order of its work
//! after the products ([`SetupBeside`]). `PTAP_CYCLE_JSON=path` writes the table.
//! Without a CUDA driver it prints `skipping: ...` and passes.
use ptap_cuda::{Cuda, DeviceOptions};
use ptap_fem::BeamProblem;
use ptap_runtime::cycle::{cheb_slot, chebyshev_coefficients};
use ptap_runtime::{Backend, CgOptions, Hierarchy, HierarchyOptions, SetupBeside};
use ptap_schedules::Variant;

#[test]
#[ignore = "k = 16 timing: run on the GPU machine"]
fn solve_operations_one_by_one_at_k16() {
    let Some(dev) = ptap_tests::cuda_device_or_skip(DeviceOptions::default()) else {
        return;
    };
    let problem = BeamProblem::build(16).unwrap();
    let h = Hierarchy::build(
        problem.a,
        &problem.near_null,
        6,
        &HierarchyOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    // The device's default product (the tensor pair), as `ptap run` runs it.
    let setup = h.mesh_setup().with_variant(Variant::TensorPair).unwrap();
    let mut dh = Hierarchy::new(Cuda::new(&dev).unwrap(), setup, &mut |_| {}).unwrap();
    dh.matrix_setup().unwrap();
    // The fused eigen-estimate sums r.z in its own order: within 1e-12 of the host's (the suite's LAMBDA is 1e-8).
    let (want, got) = (h.lambda_max(), dh.lambda_max());
    assert_eq!(want.len(), got.len());
    for (l, (w, g)) in want.iter().zip(&got).enumerate() {
        let rel = (g - w).abs() / w.abs();
        println!("level {l}: lambda_max host {w:.17e}, device {g:.17e}, relative {rel:.1e}");
        assert!(rel <= 1e-12, "level {l}: {g} against {w}");
    }
    let reps = 20;
    let mut rows: Vec<(usize, String, f64, f64)> = Vec::new();
    let nl = dh.num_levels();
    {
        let be = dh.backend();
        for (l, lev) in dh.levels()[..nl - 1].iter().enumerate() {
            let n = lev.scalar_rows();
            let b = lev.block;
            let sm = lev.smoother.as_ref().unwrap();
            let tr = lev.transfer.as_ref().unwrap();
            let nc = tr.p.m.ncols * tr.p.m.bc;
            let host: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.125).collect();
            let hc: Vec<f64> = (0..nc).map(|i| 1.0 + (i % 5) as f64 * 0.25).collect();
            let x0 = be.vector_from(&host).unwrap();
            let bv = be.vector_from(&host).unwrap();
            let (mut x, mut r, mut t, mut y) = (
                be.vector_from(&host).unwrap(),
                be.vector_from(&host).unwrap(),
                be.vector_from(&host).unwrap(),
                be.vector(n).unwrap(),
            );
            let xc = be.vector_from(&hc).unwrap();
            let mut yc = be.vector(nc).unwrap();
            let coef = be
                .vector_from(&chebyshev_coefficients((0.1, 1.1), sm.lambda_max))
                .unwrap();
            let mut s = be.vector_from(&[1.0, 1e30, 1.0, 1.0, 1.0]).unwrap();
            let f = 8.0 * n as f64;
            let dinv = f * b as f64;
            let mat = |m: &ptap_cuda::DeviceBlockCsr| {
                (m.nnzb * (m.br * m.bc * 8 + 8)) as f64 + 8.0 * (m.nrows * m.br + m.ncols * m.bc) as f64
            };
            let mut time = |what: &str, bytes: f64, op: &mut dyn FnMut() -> Result<(), ptap_cuda::CudaError>| {
                let s = dev.time(reps, op).unwrap();
                rows.push((l, what.to_string(), s, bytes));
            };
            time("A spmv", mat(&lev.a.m), &mut || be.spmv(&lev.a, &x0, &mut y));
            time("A residual", mat(&lev.a.m) + f, &mut || {
                be.residual(&lev.a, &x0, &bv, &mut r)
            });
            time("R spmv", mat(&tr.r.m), &mut || be.spmv(&tr.r, &x0, &mut yc));
            time("P spmv", mat(&tr.p.m), &mut || be.spmv(&tr.p, &xc, &mut y));
            time("fill", f, &mut || be.fill(&mut t, 0.0));
            time("copy", 2.0 * f, &mut || be.copy(&x0, &mut y));
            time("axpy", 3.0 * f, &mut || be.axpy(1.0, &x0, &mut y));
            time("dot_into", 2.0 * f, &mut || be.dot_into(&x0, &bv, &mut s, 4, None));
            time("jacobi step 2 (update_at, t term)", dinv + 4.0 * f, &mut || {
                be.jacobi_update_at(
                    &sm.jacobi,
                    &coef,
                    cheb_slot::WS,
                    Some(cheb_slot::W_MINUS_1),
                    &bv,
                    &x0,
                    &mut x,
                )
            });
            // Chebyshev's first step: fill, update, copy / axpy against the one pass.
            time("first step, zero guess: fill+update+copy", dinv + 6.0 * f, &mut || {
                be.fill(&mut t, 0.0)?;
                be.jacobi_update_at(&sm.jacobi, &coef, cheb_slot::S, None, &bv, &bv, &mut t)?;
                be.copy(&t, &mut x)
            });
            time("first step, zero guess: fused", dinv + 3.0 * f, &mut || {
                be.jacobi_first_step(&sm.jacobi, &coef, cheb_slot::S, &bv, &mut t, &mut x, true)
            });
            time("first step: fill+update+axpy", dinv + 7.0 * f, &mut || {
                be.fill(&mut t, 0.0)?;
                be.jacobi_update_at(&sm.jacobi, &coef, cheb_slot::S, None, &bv, &bv, &mut t)?;
                be.axpy(1.0, &t, &mut x)
            });
            time("first step: fused", dinv + 4.0 * f, &mut || {
                be.jacobi_first_step(&sm.jacobi, &coef, cheb_slot::S, &bv, &mut t, &mut x, false)
            });
            // The eigen-estimate's update: slots 0 / 1 hold 1 and 1e30 (a tiny step).
            time("lanczos: axpy_ratio+fill+update+dot", dinv + 8.0 * f, &mut || {
                be.axpy_ratio(&s, 0, 1, true, &x0, &mut r)?;
                be.fill(&mut t, 0.0)?;
                be.jacobi_update(&sm.jacobi, 1.0, &r, 0.0, &r, &mut t)?;
                be.dot_into(&r, &t, &mut s, 2, None)
            });
            time("lanczos: fused", dinv + 4.0 * f, &mut || {
                be.lanczos_update(&sm.jacobi, &mut s, 0, 1, &x0, &mut r, &mut t, 2)
            });
            time("xpby_ratio", 3.0 * f, &mut || be.xpby_ratio(&s, 0, 1, &x0, &mut y));
            if l == 0 {
                time("cg_update (+ r.r partials)", 6.0 * f, &mut || {
                    be.cg_update(&mut s, &x0, &bv, &mut x, &mut r)
                });
                time("cg_direction", 3.0 * f, &mut || be.cg_direction(&s, &x0, &mut y));
            }
        }
    }
    // The V-cycle (recorded) and a whole solve.
    let n = dh.scalar_rows();
    let rhs = problem.rhs.clone();
    let (r, mut z) = {
        let be = dh.backend();
        (be.vector_from(&rhs).unwrap(), be.vector(n).unwrap())
    };
    let vcycle = dev.time(reps, || dh.vcycle(&r, &mut z)).unwrap();
    let mut ws = dh.workspace(500).unwrap();
    let mut xs = vec![0.0; n];
    let mut solve = f64::INFINITY;
    let mut its = 0;
    for _ in 0..4 {
        xs.fill(0.0);
        let rep = dh.solve(&rhs, &mut xs, &CgOptions::default(), &mut ws).unwrap();
        solve = solve.min(rep.solve_s);
        its = rep.iterations;
    }
    // Matrix setup in each order of the work after the products (best of 6
    // each): one after the other (each phase timed on its own), on lanes
    // after the products, on lanes beside them. All give the same bits.
    let mut orders = Vec::new();
    let mut lambda_serial = Vec::new();
    // Lane priority: from which lane on replays go to the streams of the
    // greatest priority (none, the coarser levels', all).
    let runs = [
        (SetupBeside::Serial, None),
        (SetupBeside::AfterProducts, None),
        (SetupBeside::AfterProducts, Some(1)),
        (SetupBeside::AfterFineProduct, None),
        (SetupBeside::AfterFineProduct, Some(1)),
        (SetupBeside::WithProducts, None),
        (SetupBeside::WithProducts, Some(1)),
        (SetupBeside::WithProducts, Some(0)),
    ];
    for (order, urgent) in runs {
        dh.set_setup_beside(order);
        dh.backend().set_lane_priority(urgent);
        let (mut best, mut phases) = (f64::INFINITY, None);
        for _ in 0..6 {
            let s = dh.matrix_setup().unwrap();
            if s < best {
                best = s;
                phases = Some(dh.timings.matrix.clone());
            }
        }
        let lambda = dh.lambda_max();
        if order == SetupBeside::Serial {
            lambda_serial = lambda.clone();
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&lambda), bits(&lambda_serial), "{order:?}: lambda_max");
        for (l, (w, g)) in want.iter().zip(&lambda).enumerate() {
            assert!((g - w).abs() <= 1e-12 * w.abs(), "{order:?} level {l}: {g} against {w}");
        }
        let m = phases.unwrap();
        println!(
            "matrix setup {order:?}, lane priority from {urgent:?}: {:.3} ms; products {:.3}, beside {:.3}, per level (jacobi, eigen) {:?} ms, coarse factor {:.3} ms",
            best * 1e3,
            m.products_s * 1e3,
            m.beside_s * 1e3,
            m.levels
                .iter()
                .map(|l| ((l.jacobi_s * 1e6).round() / 1e3, (l.eigen_s * 1e6).round() / 1e3))
                .collect::<Vec<_>>(),
            m.coarse_factor_s * 1e3
        );
        orders.push(serde_json::json!({"order": order, "lane_priority": urgent, "matrix_setup_s": best, "phases": m}));
    }
    dh.set_setup_beside(SetupBeside::Serial);
    let mut setup = f64::INFINITY;
    let mut eig = vec![f64::INFINITY; nl - 1];
    for _ in 0..4 {
        setup = setup.min(dh.matrix_setup().unwrap());
        for (e, lv) in eig.iter_mut().zip(&dh.timings.matrix.levels) {
            *e = e.min(lv.eigen_s);
        }
    }
    let bw = dev.measure_copy_bandwidth().unwrap();
    println!("copy bandwidth {:.0} GB/s", bw / 1e9);
    println!(
        "{:<5} {:<44} {:>10} {:>10} {:>8}",
        "level", "operation", "us", "MB", "of copy"
    );
    let mut json = Vec::new();
    for (l, what, s, bytes) in &rows {
        println!(
            "{l:<5} {what:<44} {:>10.1} {:>10.2} {:>7.1}%",
            s * 1e6,
            bytes / 1e6,
            100.0 * bytes / s / bw
        );
        json.push(serde_json::json!({"level": l, "operation": what, "s": s, "bytes": bytes, "fraction_of_copy": bytes / s / bw}));
    }
    println!(
        "V-cycle (graph) {:.3} ms; solve {:.2} ms, {its} iterations, {:.3} ms per iteration; matrix setup {:.2} ms, eigen-estimates {:?} ms",
        vcycle * 1e3,
        solve * 1e3,
        solve * 1e3 / its as f64,
        setup * 1e3,
        eig.iter().map(|e| (e * 1e5).round() / 100.0).collect::<Vec<_>>()
    );
    if let Ok(path) = std::env::var("PTAP_CYCLE_JSON") {
        let doc = serde_json::json!({
            "copy_bandwidth_bytes_per_s": bw,
            "operations": json,
            "vcycle_s": vcycle,
            "solve_s": solve,
            "iterations": its,
            "matrix_setup_s": setup,
            "eigen_s": eig,
            "matrix_setup_orders": orders,
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    assert!(its > 0 && its <= 19, "{its} iterations");
}
