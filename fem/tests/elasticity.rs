//! Element and operator correctness: patch test, rigid-body kernel, symmetry,
//! for the 3D hexahedron and the 2D plane-strain quadrilateral.
use ptap_fem::loads::{orthonormalize_columns, rigid_body_modes_2d_at, rigid_body_modes_at};
use ptap_fem::{
    lame, rigid_body_modes_raw, rigid_mode_count, uniform_modulus, Assembler, BoxMesh, Constraint, ElementStiffness,
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

/// `C + G x` restricted to the first `dim` components and coordinates.
fn linear_field(dim: usize, x: [f64; 3]) -> Vec<f64> {
    (0..dim)
        .map(|i| (0..dim).fold(C[i], |s, j| s + G[i][j] * x[j]))
        .collect()
}

/// Patch test on an unconstrained 2x2(x2) mesh with modulus 2.5: the linear
/// field's residual vanishes at interior nodes, and the Dirichlet solve with
/// the field on the boundary reproduces it inside. Returns `(interior dofs, relative error)`.
fn patch_test(mesh: &BoxMesh) -> (usize, f64) {
    let dim = mesh.dim();
    let (asm, a) = assemble(mesh, Constraint::None, &vec![2.5; mesh.n_elements()]);
    let k = a.to_dense();
    let n = asm.n_free();
    let u_lin: Vec<f64> = (0..n).flat_map(|i| linear_field(dim, mesh.node_coords(i))).collect();
    let interior: Vec<bool> = (0..n)
        .map(|i| mesh.node_lattice(i)[..dim].iter().all(|&l| l != 0 && l != 4))
        .collect();
    let idof: Vec<usize> = (0..dim * n).filter(|&d| interior[d / dim]).collect();
    let bdof: Vec<usize> = (0..dim * n).filter(|&d| !interior[d / dim]).collect();

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
    (idof.len(), err)
}

#[test]
fn patch_test_reproduces_linear_field_at_interior_nodes() {
    // Arrange: 2x2x2 elements on a non-cubic box.
    let mesh = BoxMesh::new(2, 2, 2, [0.0, 0.0, 0.0], [2.0, 1.0, 3.0]).unwrap();
    // Act
    let (interior_dofs, err) = patch_test(&mesh);
    // Assert
    assert_eq!(interior_dofs, 81);
    assert!(err <= 1e-12, "patch test relative error {err:e}");
}

#[test]
fn plane_strain_patch_test_reproduces_linear_field_at_interior_nodes() {
    // Arrange: 2x2 Q2 quadrilaterals on a non-square rectangle.
    let mesh = BoxMesh::new_2d(2, 2, [0.0, 0.0], [2.0, 1.0]).unwrap();
    // Act
    let (interior_dofs, err) = patch_test(&mesh);
    // Assert: 3x3 interior nodes, 2 dofs each.
    assert_eq!(interior_dofs, 18);
    assert!(err <= 1e-12, "plane-strain patch test relative error {err:e}");
}

/// Largest `||K b|| / (||K|| ||b||)` over the raw rigid-body modes of the unconstrained operator.
fn worst_rigid_mode_residual(mesh: &BoxMesh, modulus: &[f64]) -> f64 {
    let (asm, a) = assemble(mesh, Constraint::None, modulus);
    let b = rigid_body_modes_raw(mesh, &asm);
    let (ndof, nm) = (asm.n_dofs(), rigid_mode_count(mesh.dim()));
    let knorm = norm(a.values());
    (0..nm)
        .map(|m| {
            let bm: Vec<f64> = (0..ndof).map(|i| b[i * nm + m]).collect();
            let mut kb = vec![0.0; ndof];
            spmv(&a, &bm, &mut kb);
            norm(&kb) / (knorm * norm(&bm))
        })
        .fold(0.0, f64::max)
}

#[test]
fn unconstrained_operator_annihilates_rigid_body_modes() {
    // Arrange: off-centre box so rotations are not about the origin.
    let mesh = BoxMesh::new(2, 1, 1, [1.0, -1.0, 2.0], [3.0, 0.5, 2.7]).unwrap();
    // Act
    let ratio = worst_rigid_mode_residual(&mesh, &[1.0, 3.0]);
    // Assert
    assert!(ratio <= 1e-12, "||K b|| / (||K|| ||b||) = {ratio:e}");
}

#[test]
fn unconstrained_plane_strain_operator_annihilates_its_three_rigid_body_modes() {
    // Arrange: off-centre rectangle, varying modulus.
    let mesh = BoxMesh::new_2d(3, 2, [1.0, -1.0], [3.0, 0.5]).unwrap();
    let modulus: Vec<f64> = (0..6).map(|e| 1.0 + 0.5 * e as f64).collect();
    // Act
    let ratio = worst_rigid_mode_residual(&mesh, &modulus);
    // Assert
    assert_eq!(rigid_mode_count(2), 3);
    assert!(ratio <= 1e-12, "||K b|| / (||K|| ||b||) = {ratio:e}");
}

/// Rigid modes at the element's `3^dim` nodes, row-major `(dim * 3^dim) x nm`.
fn element_rbm(dim: usize, h: [f64; 3]) -> Vec<f64> {
    let (n, nm) = (3usize.pow(dim as u32), rigid_mode_count(dim));
    let mut b = vec![0.0; dim * n * nm];
    for a in 0..n {
        let l = [
            a / 3usize.pow(dim as u32 - 1),
            (a / 3usize.pow(dim as u32 - 2)) % 3,
            a % 3,
        ];
        let mut x = [0, 1, 2].map(|d| h[d] * (l[d] as f64 * 0.5 - 0.3));
        if dim == 2 {
            x[2] = 0.0;
        }
        let modes = if dim == 2 {
            rigid_body_modes_2d_at(x).to_vec()
        } else {
            rigid_body_modes_at(x).to_vec()
        };
        for (m, v) in modes.iter().enumerate() {
            for c in 0..dim {
                b[(dim * a + c) * nm + m] = v[c];
            }
        }
    }
    b
}

/// Symmetry, positive diagonal, the rigid modes in the kernel and nothing else
/// (`K + kmax B B^T` with `B` orthonormal is positive definite).
fn assert_reference_kernel_is_exactly_rigid(k: &[f64], dim: usize, h: [f64; 3]) {
    let (m, nm) = (dim * 3usize.pow(dim as u32), rigid_mode_count(dim));
    let kmax = k.iter().fold(0.0f64, |mx, v| mx.max(v.abs()));
    for i in 0..m {
        assert!(k[i * m + i] > 0.0);
        for j in 0..m {
            assert!(
                (k[i * m + j] - k[j * m + i]).abs() <= 1e-15 * kmax,
                "asymmetric at ({i}, {j})"
            );
        }
    }
    let mut b = element_rbm(dim, h);
    for mode in 0..nm {
        let bm: Vec<f64> = (0..m).map(|i| b[i * nm + mode]).collect();
        let kb: Vec<f64> = (0..m).map(|i| (0..m).map(|j| k[i * m + j] * bm[j]).sum()).collect();
        assert!(
            norm(&kb) <= 1e-13 * kmax * m as f64 * norm(&bm),
            "mode {mode} not annihilated"
        );
    }
    orthonormalize_columns(&mut b, nm).unwrap();
    let mut kp = k.to_vec();
    for i in 0..m {
        for j in 0..m {
            kp[i * m + j] += kmax * (0..nm).map(|q| b[i * nm + q] * b[j * nm + q]).sum::<f64>();
        }
    }
    let mut chol = Cholesky::with_order(m);
    assert!(
        chol.refactor(&kp).is_ok(),
        "stiffness has a kernel beyond the {nm} rigid modes"
    );
}

#[test]
fn reference_stiffness_is_symmetric_with_exactly_the_rigid_modes_as_kernel() {
    // Arrange
    let h = [0.7, 1.3, 2.1];
    // Act
    let k = ElementStiffness::box_element(h, POISSON_RATIO).to_dense();
    // Assert: rank 81 - 6 = 75.
    assert_eq!(k.len(), 81 * 81);
    assert_reference_kernel_is_exactly_rigid(&k, 3, h);
}

#[test]
fn plane_strain_reference_stiffness_has_exactly_the_three_rigid_modes_as_kernel() {
    // Arrange
    let h = [0.7, 1.3, 0.0];
    // Act
    let k = ElementStiffness::rect_element([h[0], h[1]], POISSON_RATIO).to_dense();
    // Assert: rank 18 - 3 = 15.
    assert_eq!(k.len(), 18 * 18);
    assert_reference_kernel_is_exactly_rigid(&k, 2, h);
}

/// `(u^T K u, exact)` for `u = G x` on one element with edges `h[..dim]`:
/// energy `vol * (2 mu eps:eps + lambda tr(eps)^2)` (plane strain: `eps_zz = 0`).
fn uniform_strain_energy(dim: usize, h: [f64; 3]) -> (f64, f64) {
    let k = ElementStiffness::for_dim(dim, h, POISSON_RATIO).to_dense();
    let (n, m) = (3usize.pow(dim as u32), dim * 3usize.pow(dim as u32));
    let u: Vec<f64> = (0..n)
        .flat_map(|a| {
            let l = [
                a / 3usize.pow(dim as u32 - 1),
                (a / 3usize.pow(dim as u32 - 2)) % 3,
                a % 3,
            ];
            let x = [0, 1, 2].map(|d| if d < dim { h[d] * l[d] as f64 * 0.5 } else { 0.0 });
            (0..dim).map(move |i| (0..dim).map(|j| G[i][j] * x[j]).sum::<f64>())
        })
        .collect();
    let (mu, lambda) = lame(1.0, POISSON_RATIO);
    let eps = |i: usize, j: usize| 0.5 * (G[i][j] + G[j][i]);
    let eps_eps: f64 = (0..dim)
        .flat_map(|i| (0..dim).map(move |j| (i, j)))
        .map(|(i, j)| eps(i, j) * eps(i, j))
        .sum();
    let tr: f64 = (0..dim).map(|i| eps(i, i)).sum();
    let expected = h[..dim].iter().product::<f64>() * (2.0 * mu * eps_eps + lambda * tr * tr);
    let energy: f64 = (0..m)
        .map(|i| u[i] * (0..m).map(|j| k[i * m + j] * u[j]).sum::<f64>())
        .sum();
    (energy, expected)
}

#[test]
fn reference_stiffness_gives_exact_energy_of_uniform_strain() {
    for dim in [3, 2] {
        // Arrange
        let h = [0.5, 0.8, 1.6];
        // Act
        let (energy, expected) = uniform_strain_energy(dim, h);
        // Assert
        let (mu, lambda) = lame(1.0, POISSON_RATIO);
        assert!((mu - 0.4).abs() < 1e-15 && (lambda - 0.4).abs() < 1e-15);
        assert!(
            (energy - expected).abs() <= 1e-13 * expected,
            "dim {dim}: energy {energy} vs {expected}"
        );
    }
}

#[test]
fn clamped_beam_operator_is_symmetric_and_positive_definite() {
    for (dim, k) in [(3usize, 1usize), (3, 2), (2, 1), (2, 2)] {
        // Arrange
        let mesh = BoxMesh::beam_in(dim, k).unwrap();
        // Act
        let (_, a) = assemble(&mesh, Constraint::ClampXMin, &uniform_modulus(&mesh));
        let at = a.transpose();
        // Assert: A_ij = A_ji^T blockwise (the pattern is symmetric, so values align).
        assert_eq!(a.block_shape(), (dim, dim));
        assert_eq!(at.pattern(), a.pattern());
        let amax = a.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = a
            .values()
            .iter()
            .zip(at.values())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(diff <= 1e-14 * amax, "dim {dim}, k = {k}: asymmetry {diff:e}");
        if dim == 2 || k == 1 {
            let d: Dense = a.to_dense();
            let mut chol = Cholesky::with_order(d.rows);
            assert!(
                chol.refactor(&d.data).is_ok(),
                "dim {dim}, k = {k}: clamped operator must be SPD"
            );
        }
    }
}
