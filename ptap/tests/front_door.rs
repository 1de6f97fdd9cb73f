//! The front door against references: a dense direct solve, the beam's own
//! hierarchy (bitwise), the dense `P^T A P`; and every bad input is a typed
//! error of one sentence, never a panic.
use ptap::{galerkin, BlockCsr, DeviceChoice, Error, KernelRegistry, NearNull, Solver, Variant};
use ptap_fem::BeamProblem;
use ptap_runtime::{CgOptions, CgWorkspace, Hierarchy, HierarchyOptions};
use ptap_sparse::dense::Cholesky;

/// The 2D five-point Laplacian on an `m x m` grid (Dirichlet boundary
/// eliminated), as COO triplets in a scrambled order with split duplicates.
fn laplacian_coo(m: usize) -> (usize, Vec<u32>, Vec<u32>, Vec<f64>) {
    let n = m * m;
    let (mut i, mut j, mut v) = (vec![], vec![], vec![]);
    for r in (0..n).rev() {
        let (x, y) = (r % m, r / m);
        // The diagonal in two halves: duplicates are summed.
        for _ in 0..2 {
            i.push(r as u32);
            j.push(r as u32);
            v.push(2.0);
        }
        let mut nb = |c: usize| {
            i.push(r as u32);
            j.push(c as u32);
            v.push(-1.0);
        };
        if x > 0 {
            nb(r - 1);
        }
        if x + 1 < m {
            nb(r + 1);
        }
        if y > 0 {
            nb(r - m);
        }
        if y + 1 < m {
            nb(r + m);
        }
    }
    (n, i, j, v)
}

/// `x = A^-1 b` by a dense Cholesky factorization (the reference).
fn dense_solve(a: &BlockCsr, b: &[f64]) -> Vec<f64> {
    let d = a.to_dense();
    let n = d.rows;
    let mut ch = Cholesky::with_order(n);
    ch.refactor(&d.data).unwrap();
    let mut x = b.to_vec();
    ch.solve_in_place(&mut x);
    x
}

fn rel_err(x: &[f64], y: &[f64]) -> f64 {
    let num: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = y.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

#[test]
fn a_scalar_operator_from_coo_matches_a_direct_solve() {
    let (n, i, j, v) = laplacian_coo(48);
    let a = BlockCsr::from_scalar_coo(n, n, &i, &j, &v, None).unwrap();
    assert_eq!(a.block_shape(), (1, 1));
    let b: Vec<f64> = (0..n).map(|k| ((k * 7919) % 101) as f64 / 101.0 - 0.5).collect();
    let mut solver = Solver::builder(a.clone()).build().unwrap();
    let mut x = vec![0.0; n];
    let info = solver.solve(&b, &mut x).unwrap();
    assert!(info.converged, "{info:?}");
    assert!(info.relative_residual <= 1e-8);
    assert!(info.iterations <= 30, "{} iterations", info.iterations);
    // The history is relative: 1 from x = 0, then down to the final relative residual.
    assert_eq!(info.residual_history.len(), info.iterations + 1);
    assert_eq!(info.residual_history[0], 1.0);
    let last = *info.residual_history.last().unwrap();
    assert!(
        (last - info.relative_residual).abs() <= 1e-3 * info.relative_residual,
        "{last}"
    );
    let xr = dense_solve(&a, &b);
    assert!(rel_err(&x, &xr) < 1e-6, "{}", rel_err(&x, &xr));
    let h = solver.info();
    assert!(h.levels.len() >= 2, "{h:?}");
    assert_eq!((h.block_size, h.modes, h.device.as_str()), (1, 1, "cpu"));
}

#[test]
fn refresh_reuses_the_pattern_and_a_new_pattern_is_refused() {
    let (n, i, j, v) = laplacian_coo(24);
    let a = BlockCsr::from_scalar_coo(n, n, &i, &j, &v, Some((1, 1))).unwrap();
    let b = vec![1.0; n];
    let mut solver = Solver::builder(a.clone()).build().unwrap();
    let (x1, _) = solver.solve_new(&b).unwrap();
    // A refresh loop: the operator scaled by s gives the solution scaled by 1/s.
    for s in [2.0, 0.5, 3.0] {
        let scaled: Vec<f64> = v.iter().map(|x| s * x).collect();
        let a2 = BlockCsr::from_scalar_coo(n, n, &i, &j, &scaled, Some((1, 1))).unwrap();
        solver.refresh_matrix(&a2).unwrap();
        let (x2, info) = solver.solve_new(&b).unwrap();
        assert!(info.converged);
        let want: Vec<f64> = x1.iter().map(|x| x / s).collect();
        assert!(rel_err(&x2, &want) < 1e-7, "s = {s}: {}", rel_err(&x2, &want));
    }
    // One more entry: another pattern.
    let (mut i2, mut j2, mut v2) = (i.clone(), j.clone(), v.clone());
    i2.extend([0, n as u32 - 1]);
    j2.extend([n as u32 - 1, 0]);
    v2.extend([-1e-3, -1e-3]);
    let other = BlockCsr::from_scalar_coo(n, n, &i2, &j2, &v2, Some((1, 1))).unwrap();
    let e = solver.refresh_matrix(&other).unwrap_err();
    assert!(matches!(e, Error::PatternChanged { .. }), "{e}");
    assert!(e.to_string().contains("build a new solver"), "{e}");
    let e = solver.refresh(&v[..3]).unwrap_err();
    assert!(e.to_string().contains("length 3"), "{e}");
    let mut nan = a.values().to_vec();
    nan[5] = f64::NAN;
    assert!(solver.refresh(&nan).unwrap_err().to_string().contains("NaN"));
}

#[test]
fn bad_vectors_and_operators_are_typed_errors() {
    let (n, i, j, v) = laplacian_coo(12);
    let a = BlockCsr::from_scalar_coo(n, n, &i, &j, &v, None).unwrap();
    let mut solver = Solver::builder(a.clone()).build().unwrap();
    let mut x = vec![0.0; n];
    let e = solver.solve(&vec![1.0; n + 1], &mut x).unwrap_err();
    assert!(e.to_string().contains("right-hand side has length"), "{e}");
    let e = solver.solve(&vec![1.0; n], &mut [0.0; 2]).unwrap_err();
    assert!(e.to_string().contains("solution has length 2"), "{e}");
    let mut b = vec![1.0; n];
    b[3] = f64::NAN;
    assert!(solver.solve(&b, &mut x).unwrap_err().to_string().contains("NaN"));

    // Not symmetric.
    let mut vs = v.clone();
    let k = (0..i.len()).find(|&k| i[k] != j[k]).unwrap();
    vs[k] = -0.5;
    let ns = BlockCsr::from_scalar_coo(n, n, &i, &j, &vs, None).unwrap();
    let e = Solver::builder(ns).build().map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("not symmetric"), "{e}");
    // Negative definite.
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    let nd = BlockCsr::from_scalar_coo(n, n, &i, &j, &neg, None).unwrap();
    let e = Solver::builder(nd).build().map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
    // Coordinates for another number of nodes; a near-null space of the wrong length.
    let e = Solver::builder(a.clone())
        .near_null(NearNull::Coordinates {
            coords: vec![0.0; 2 * (n - 1)],
            dim: 2,
        })
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("one node per block row"), "{e}");
    let e = Solver::builder(a.clone())
        .near_null(NearNull::Modes {
            values: vec![1.0; n + 1],
            modes: 1,
        })
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("near-null space has"), "{e}");
    // Options.
    let e = Solver::builder(a.clone()).rtol(0.0).build().map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("rtol"), "{e}");
    // Scalar arrays that do not describe a matrix.
    let e = BlockCsr::from_scalar_csr(2, 2, &[0, 1], &[0], &[1.0], None).unwrap_err();
    assert!(e.to_string().contains("row pointer array has length 2"), "{e}");
    let e = BlockCsr::from_scalar_coo(2, 2, &[0, 2], &[0, 0], &[1.0, 1.0], None).unwrap_err();
    assert!(e.to_string().contains("outside the 2x2 matrix"), "{e}");
    let e = BlockCsr::from_scalar_coo(3, 3, &[0], &[0], &[1.0], Some((2, 2))).unwrap_err();
    assert!(e.to_string().contains("do not tile"), "{e}");
}

#[test]
fn cuda_without_a_driver_is_one_sentence_and_auto_falls_back() {
    let (n, i, j, v) = laplacian_coo(8);
    let a = BlockCsr::from_scalar_coo(n, n, &i, &j, &v, None).unwrap();
    if ptap_cuda::libraries_present().is_ok() {
        eprintln!("skipping: a CUDA driver is present, the no-driver path cannot be shown here");
        return;
    }
    let e = Solver::builder(a.clone())
        .device(DeviceChoice::Cuda)
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("--device cpu"), "{e}");
    let s = Solver::builder(a).device(DeviceChoice::Auto).build().unwrap();
    assert_eq!(s.device(), "cpu");
    assert!(s.cpu_fallback().is_some());
}

/// The beam through the front door, with rigid-body modes from the free
/// nodes' coordinates, is the beam's own hierarchy and solve, bitwise.
#[test]
fn the_beam_from_coordinates_is_bitwise_the_beam_hierarchy() {
    for dim in [2, 3] {
        let p = BeamProblem::build_in(dim, 2).unwrap();
        let coords: Vec<f64> = p
            .assembler
            .node_of_free()
            .iter()
            .flat_map(|&node| p.mesh.node_coords(node as usize)[..dim].to_vec())
            .collect();
        let mut solver = Solver::builder(p.a.clone())
            .near_null(NearNull::Coordinates { coords, dim })
            .build()
            .unwrap();
        let (x, info) = solver.solve_new(&p.rhs).unwrap();

        let opts = HierarchyOptions::default();
        let mut h = Hierarchy::build(p.a.clone(), &p.near_null, p.modes, &opts, &mut |_| {}).unwrap();
        let cg = CgOptions {
            rtol: 1e-8,
            max_iterations: 500,
        };
        let mut ws: CgWorkspace = h.workspace(500).unwrap();
        let mut xr = vec![0.0; x.len()];
        let rep = h.solve(&p.rhs, &mut xr, &cg, &mut ws).unwrap();
        assert_eq!(info.iterations, rep.iterations, "{dim}D");
        assert!(x.iter().zip(&xr).all(|(a, b)| a.to_bits() == b.to_bits()), "{dim}D");
    }
}

/// Dense `P^T A P`, the reference.
fn dense_ptap(a: &BlockCsr, p: &BlockCsr) -> ptap_sparse::dense::Dense {
    let (ad, pd) = (a.to_dense(), p.to_dense());
    pd.transpose().matmul(&ad.matmul(&pd))
}

#[test]
fn galerkin_matches_the_dense_product_for_every_variant() {
    let mut rng = ptap_tests::Rng::new(7);
    for (b, c) in [(1, 1), (2, 3), (3, 6)] {
        let a = ptap_tests::random_block_csr(&mut rng, 30, 30, b, b, 0.2, true);
        let p = ptap_tests::random_block_csr(&mut rng, 30, 9, b, c, 0.3, false);
        let want = dense_ptap(&a, &p);
        for v in Variant::ALL {
            let got = galerkin(&a, &p, v, KernelRegistry::shipped());
            if v == Variant::TensorPairSym {
                // A random A is not symmetric: the symmetric pair refuses it in one sentence.
                let e = got.unwrap_err().to_string();
                assert!(e.contains("needs a structurally symmetric A"), "{e}");
                continue;
            }
            let got = got.unwrap();
            assert_eq!(got.block_shape(), (c, c));
            let err = got.to_dense().rel_diff(&want);
            assert!(err < 1e-13, "{v:?} {b}x{c}: {err}");
        }
    }
    let a = ptap_tests::random_block_csr(&mut rng, 4, 4, 2, 2, 0.5, true);
    let p = ptap_tests::random_block_csr(&mut rng, 5, 2, 2, 3, 0.5, false);
    let e = galerkin(&a, &p, Variant::TwoPass, KernelRegistry::shipped()).unwrap_err();
    assert!(e.to_string().contains("P's rows must match A's columns"), "{e}");
}

/// A solver loaded from its own schedule bundle is the built one, bitwise;
/// a bundle of another pattern or other options is refused.
#[test]
fn a_solver_from_its_bundle_is_the_built_solver_bitwise() {
    use ptap_schedules::file::{write_bundle_with_key, MappedBundle};
    use ptap_schedules::key::TagKey;
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("ptap-front-door-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = TagKey::from_bytes([7; 32]);
    // The 3D beam at k = 2: 3000 rows, two levels.
    let p = BeamProblem::build_in(3, 2).unwrap();
    let coords: Vec<f64> = p
        .assembler
        .node_of_free()
        .iter()
        .flat_map(|&node| p.mesh.node_coords(node as usize).to_vec())
        .collect();
    let near_null = NearNull::Coordinates { coords, dim: 3 };
    let mut built = Solver::builder(p.a.clone())
        .near_null(near_null.clone())
        .build()
        .unwrap();
    let (x, info) = built.solve_new(&p.rhs).unwrap();
    let path = dir.join("beam.ptaps");
    write_bundle_with_key(&path, &built.bundle("beam k = 2"), &key).unwrap();
    let bundle = Arc::new(MappedBundle::open_with_key(&path, &key).unwrap());

    let mut loaded = Solver::builder(p.a.clone())
        .near_null(near_null.clone())
        .build_from_bundle(&bundle, &mut |_| {})
        .unwrap();
    let (xl, infol) = loaded.solve_new(&p.rhs).unwrap();
    assert_eq!(info.iterations, infol.iterations);
    assert!(x.iter().zip(&xl).all(|(a, b)| a.to_bits() == b.to_bits()));
    let (hb, hl) = (built.info(), loaded.info());
    assert_eq!((hb.levels.len(), hl.levels.len()), (2, 2));
    assert_eq!(hb.levels[1].blocks, hl.levels[1].blocks);

    // Another pattern (the beam at k = 1) and other options (a filtered P) are refused.
    let other = BeamProblem::build_in(3, 1).unwrap();
    let other_coords: Vec<f64> = other
        .assembler
        .node_of_free()
        .iter()
        .flat_map(|&node| other.mesh.node_coords(node as usize).to_vec())
        .collect();
    let e = Solver::builder(other.a.clone())
        .near_null(NearNull::Coordinates {
            coords: other_coords,
            dim: 3,
        })
        .build_from_bundle(&bundle, &mut |_| {})
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("pattern"), "{e}");
    let e = Solver::builder(p.a.clone())
        .near_null(near_null)
        .pf(0.0)
        .build_from_bundle(&bundle, &mut |_| {})
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("options"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A block shape no shipped set has device kernels for is refused for
/// `cuda` (naming the `kernels!` line to add) before any device is opened,
/// and `auto` solves it on the CPU, saying why; the CPU runs it either way.
#[test]
fn a_block_size_without_device_kernels_names_the_kernels_line() {
    // Four uncoupled 1D Laplacians interleaved: 4x4 blocks.
    let (nodes, b) = (50, 4);
    let (mut i, mut j, mut v) = (vec![], vec![], vec![]);
    for node in 0..nodes {
        for c in 0..b {
            let r = (node * b + c) as u32;
            i.push(r);
            j.push(r);
            v.push(2.0 + c as f64);
            if node + 1 < nodes {
                let s = r + b as u32;
                i.extend([r, s]);
                j.extend([s, r]);
                v.extend([-1.0, -1.0]);
            }
        }
    }
    let n = nodes * b;
    let a = BlockCsr::from_scalar_coo(n, n, &i, &j, &v, Some((b, b))).unwrap();
    let e = Solver::builder(a.clone())
        .device(DeviceChoice::Cuda)
        .build()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, Error::DeviceKernels { block: 4, modes: 4 }), "{e}");
    assert!(
        e.to_string()
            .contains("add `kernels!(pub mod blocks_4x4 { 4x4 / 4x4 / 4x4 });` to kernels-generated/src/lib.rs"),
        "{e}"
    );
    let mut s = Solver::builder(a.clone()).device(DeviceChoice::Auto).build().unwrap();
    assert_eq!(s.device(), "cpu");
    assert!(
        s.cpu_fallback().unwrap().contains("kernels!(pub mod blocks_4x4"),
        "{:?}",
        s.cpu_fallback()
    );
    let rhs = vec![1.0; n];
    let (x, info) = s.solve_new(&rhs).unwrap();
    assert!(info.converged);
    assert!(rel_err(&x, &dense_solve(&a, &rhs)) < 1e-6);
}

/// Translations only (no rotations): the coarse blocks are `b x b`, shapes no
/// shipped kernel set declares; the CPU's size-generic loops run them.
#[test]
fn translations_only_run_on_the_cpu_for_unshipped_coarse_shapes() {
    for dim in [2, 3] {
        let p = BeamProblem::build_in(dim, 2).unwrap();
        let mut solver = Solver::builder(p.a.clone()).build().unwrap();
        let info = solver.info();
        assert_eq!(info.modes, dim);
        let (x, rep) = solver.solve_new(&p.rhs).unwrap();
        assert!(rep.converged, "{dim}D: {rep:?}");
        let r = p.a.to_dense().matvec(&x);
        let res: f64 = r.iter().zip(&p.rhs).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
        let bn: f64 = p.rhs.iter().map(|b| b * b).sum::<f64>().sqrt();
        assert!(res <= 1.01e-8 * bn, "{dim}D: {}", res / bn);
    }
}

/// The front door on a GPU: the beam from coordinates solves in the CPU's
/// iterations, to 1e-9 of the CPU's solution (FMA contraction on).
#[test]
fn cuda_solver_matches_the_cpu_solver() {
    if let Err(e) = ptap_cuda::libraries_present() {
        eprintln!("skipping: {e}");
        return;
    }
    let p = BeamProblem::build_in(3, 3).unwrap();
    let coords: Vec<f64> = p
        .assembler
        .node_of_free()
        .iter()
        .flat_map(|&node| p.mesh.node_coords(node as usize).to_vec())
        .collect();
    let near_null = NearNull::Coordinates { coords, dim: 3 };
    let mut cpu = Solver::builder(p.a.clone())
        .near_null(near_null.clone())
        .build()
        .unwrap();
    let mut gpu = match Solver::builder(p.a.clone())
        .near_null(near_null)
        .device(DeviceChoice::Cuda)
        .build()
    {
        Ok(s) => s,
        Err(Error::Cuda(e)) if matches!(e, ptap_cuda::CudaError::NoDevice(_) | ptap_cuda::CudaError::NoDriver) => {
            eprintln!("skipping: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_ne!(gpu.device(), "cpu");
    let (xc, rc) = cpu.solve_new(&p.rhs).unwrap();
    let (xg, rg) = gpu.solve_new(&p.rhs).unwrap();
    assert_eq!(rc.iterations, rg.iterations);
    assert!(rel_err(&xg, &xc) < 1e-9, "{}", rel_err(&xg, &xc));
    // A refresh on the device: doubled values, halved solution.
    let doubled: Vec<f64> = p.a.values().iter().map(|v| 2.0 * v).collect();
    gpu.refresh(&doubled).unwrap();
    let (xg2, _) = gpu.solve_new(&p.rhs).unwrap();
    let half: Vec<f64> = xc.iter().map(|v| v / 2.0).collect();
    assert!(rel_err(&xg2, &half) < 1e-7, "{}", rel_err(&xg2, &half));
}
