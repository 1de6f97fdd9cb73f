//! Element and operator correctness: patch test, rigid-body kernel, symmetry.
use ptap_fem::loads::orthonormalize_columns;
use ptap_fem::{
    lame, rigid_body_modes_raw, uniform_modulus, Assembler, BoxMesh, Constraint, ElementStiffness, N_RIGID_MODES,
    POISSON_RATIO,
};
use ptap_sparse::dense::{Cholesky, Dense};
use ptap_sparse::spmv::spmv;

fn assemble(mesh: &BoxMesh, constraint: Constraint, modulus: &[f64]) -> (Assembler, ptap_sparse::BlockCsr) {
    let asm = Assembler::new(mesh, constraint).unwrap();
    let mut a = asm.zero_matrix();
    asm.assemble(modulus, &mut a).unwrap();
    (asm, a)
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// A generic non-symmetric gradient and offset for linear fields.
const G: [[f64; 3]; 3] = [[0.3, -1.1, 0.7], [0.45, 0.2, -0.6], [-0.9, 0.35, 1.3]];
const C: [f64; 3] = [0.25, -0.5, 1.5];

fn linear_field(x: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| C[i] + G[i][0] * x[0] + G[i][1] * x[1] + G[i][2] * x[2])
}

#[test]
fn patch_test_reproduces_linear_field_at_interior_nodes() {
    // Arrange: 2x2x2 elements on a non-cubic box, unconstrained, modulus 2.5.
    let mesh = BoxMesh::new(2, 2, 2, [0.0, 0.0, 0.0], [2.0, 1.0, 3.0]).unwrap();
    let (asm, a) = assemble(&mesh, Constraint::None, &vec![2.5; mesh.n_elements()]);
    let k = a.to_dense();
    let n = asm.n_free();
    assert_eq!(n, 125);
    let u_lin: Vec<f64> = (0..n).flat_map(|i| linear_field(mesh.node_coords(i))).collect();
    let interior: Vec<bool> = (0..n)
        .map(|i| mesh.node_lattice(i).iter().all(|&l| l != 0 && l != 4))
        .collect();
    let idof: Vec<usize> = (0..3 * n).filter(|&d| interior[d / 3]).collect();
    let bdof: Vec<usize> = (0..3 * n).filter(|&d| !interior[d / 3]).collect();
    assert_eq!(idof.len(), 81);

    // Act: residual of the linear field; Dirichlet solve for the interior.
    let r = k.matvec(&u_lin);
    let m = idof.len();
    let mut kii = vec![0.0; m * m];
    for (p, &i) in idof.iter().enumerate() {
        for (q, &j) in idof.iter().enumerate() {
            kii[p * m + q] = k.at(i, j);
        }
    }
    let mut rhs: Vec<f64> = idof
        .iter()
        .map(|&i| -bdof.iter().map(|&j| k.at(i, j) * u_lin[j]).sum::<f64>())
        .collect();
    let mut chol = Cholesky::with_order(m);
    chol.refactor(&kii).unwrap();
    chol.solve_in_place(&mut rhs);

    // Assert
    let scale = k.frobenius() * norm(&u_lin);
    let max_interior_residual = idof.iter().map(|&i| r[i].abs()).fold(0.0, f64::max);
    assert!(
        max_interior_residual <= 1e-13 * scale,
        "interior residual {max_interior_residual:e}"
    );
    let exact: Vec<f64> = idof.iter().map(|&i| u_lin[i]).collect();
    let err = rhs
        .iter()
        .zip(&exact)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt()
        / norm(&exact);
    assert!(err <= 1e-12, "patch test relative error {err:e}");
}

#[test]
fn unconstrained_operator_annihilates_rigid_body_modes() {
    // Arrange: off-centre box so rotations are not about the origin.
    let mesh = BoxMesh::new(2, 1, 1, [1.0, -1.0, 2.0], [3.0, 0.5, 2.7]).unwrap();
    let modulus: Vec<f64> = vec![1.0, 3.0];
    let (asm, a) = assemble(&mesh, Constraint::None, &modulus);
    let b = rigid_body_modes_raw(&mesh, &asm);
    let ndof = asm.n_dofs();
    let knorm = norm(a.values());
    for m in 0..N_RIGID_MODES {
        let bm: Vec<f64> = (0..ndof).map(|i| b[i * N_RIGID_MODES + m]).collect();
        let mut kb = vec![0.0; ndof];
        // Act
        spmv(&a, &bm, &mut kb);
        // Assert
        let ratio = norm(&kb) / (knorm * norm(&bm));
        assert!(ratio <= 1e-12, "mode {m}: ||K b|| / (||K|| ||b||) = {ratio:e}");
    }
}

fn element_rbm(h: [f64; 3]) -> Vec<f64> {
    let mut b = vec![0.0; 81 * 6];
    for a in 0..27 {
        let l = [a / 9, (a / 3) % 3, a % 3];
        let [x, y, z] = [0, 1, 2].map(|d| h[d] * (l[d] as f64 * 0.5 - 0.3));
        for (m, v) in ptap_fem::loads::rigid_body_modes_at([x, y, z]).iter().enumerate() {
            for c in 0..3 {
                b[(3 * a + c) * 6 + m] = v[c];
            }
        }
    }
    b
}

#[test]
fn reference_stiffness_is_symmetric_with_exactly_the_rigid_modes_as_kernel() {
    // Arrange
    let h = [0.7, 1.3, 2.1];
    // Act
    let k = ElementStiffness::box_element(h, POISSON_RATIO).to_dense();
    // Assert: symmetry, positive diagonal.
    let kmax = k.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..81 {
        assert!(k[i * 81 + i] > 0.0);
        for j in 0..81 {
            assert!(
                (k[i * 81 + j] - k[j * 81 + i]).abs() <= 1e-15 * kmax,
                "asymmetric at ({i}, {j})"
            );
        }
    }
    // Rigid modes are in the kernel.
    let mut b = element_rbm(h);
    for m in 0..6 {
        let bm: Vec<f64> = (0..81).map(|i| b[i * 6 + m]).collect();
        let kb: Vec<f64> = (0..81).map(|i| (0..81).map(|j| k[i * 81 + j] * bm[j]).sum()).collect();
        assert!(norm(&kb) <= 1e-13 * kmax * 81.0 * norm(&bm), "mode {m} not annihilated");
    }
    // Nothing else is: K + B B^T (B orthonormal) is positive definite, so rank K = 75.
    orthonormalize_columns(&mut b, 6);
    let mut kp = k.clone();
    for i in 0..81 {
        for j in 0..81 {
            kp[i * 81 + j] += kmax * (0..6).map(|m| b[i * 6 + m] * b[j * 6 + m]).sum::<f64>();
        }
    }
    let mut chol = Cholesky::with_order(81);
    assert!(
        chol.refactor(&kp).is_ok(),
        "stiffness has a kernel beyond the six rigid modes"
    );
}

#[test]
fn reference_stiffness_gives_exact_energy_of_uniform_strain() {
    // Arrange: u = G x on one element; energy density 2 mu eps:eps + lambda tr(eps)^2.
    let h = [0.5, 0.8, 1.6];
    let k = ElementStiffness::box_element(h, POISSON_RATIO).to_dense();
    let u: Vec<f64> = (0..27)
        .flat_map(|a| {
            let l = [a / 9, (a / 3) % 3, a % 3];
            let x = [0, 1, 2].map(|d| h[d] * l[d] as f64 * 0.5);
            [0, 1, 2].map(|i| (0..3).map(|j| G[i][j] * x[j]).sum::<f64>())
        })
        .collect();
    let (mu, lambda) = lame(1.0, POISSON_RATIO);
    let eps = |i: usize, j: usize| 0.5 * (G[i][j] + G[j][i]);
    let eps_eps: f64 = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| eps(i, j) * eps(i, j))
        .sum();
    let tr = eps(0, 0) + eps(1, 1) + eps(2, 2);
    let expected = h[0] * h[1] * h[2] * (2.0 * mu * eps_eps + lambda * tr * tr);
    // Act
    let energy: f64 = (0..81)
        .map(|i| u[i] * (0..81).map(|j| k[i * 81 + j] * u[j]).sum::<f64>())
        .sum();
    // Assert
    assert!((mu - 0.4).abs() < 1e-15 && (lambda - 0.4).abs() < 1e-15);
    assert!(
        (energy - expected).abs() <= 1e-13 * expected,
        "energy {energy} vs {expected}"
    );
}

#[test]
fn clamped_beam_operator_is_symmetric_and_positive_definite() {
    for k in [1usize, 2] {
        // Arrange
        let mesh = BoxMesh::beam(k).unwrap();
        // Act
        let (_, a) = assemble(&mesh, Constraint::ClampXMin, &uniform_modulus(&mesh));
        let at = a.transpose();
        // Assert: A_ij = A_ji^T blockwise (the pattern is symmetric, so values align).
        assert_eq!(at.pattern(), a.pattern());
        let amax = a.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = a
            .values()
            .iter()
            .zip(at.values())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(diff <= 1e-14 * amax, "k = {k}: asymmetry {diff:e}");
        if k == 1 {
            let d: Dense = a.to_dense();
            let mut chol = Cholesky::with_order(d.rows);
            assert!(chol.refactor(&d.data).is_ok(), "clamped operator must be SPD");
        }
    }
}
