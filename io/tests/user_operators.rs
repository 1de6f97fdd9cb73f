//! The operators of `tests/data/operators/`, written by PyAMG's gallery and
//! scikit-fem (its `generate.py`), not by ptap: each folder's Matrix Market
//! and PETSc binary copies read as the same block matrix, with the block size
//! found from the files alone, and its `x_ref` solves `A x = b`.
mod common;

use common::{assert_bitwise_eq, bits};
use ptap_io::*;
use std::path::{Path, PathBuf};

/// Every operator folder: name, scalar rows, block size, coordinate columns.
const OPERATORS: &[(&str, usize, usize, usize)] = &[
    ("pyamg_poisson2d", 2401, 1, 2),
    ("pyamg_elasticity2d", 512, 2, 2),
    ("skfem_tet3d_eliminated", 336, 3, 3),
    ("skfem_tet3d_identity", 384, 3, 3),
    ("skfem_tri2d_eliminated", 224, 2, 2),
    ("skfem_tet3d_tiny", 36, 3, 3),
];

/// The block size `infer_block_shape` finds in a Matrix Market file without a
/// `%ptap block` comment. scikit-fem drops the scalars that are exactly zero in
/// every element; on the tiny operator's axis-aligned cubes that leaves its
/// 3x3 node blocks 81% full, under the 90% rule, so the pattern reads as 1x1:
/// such a file needs its block size given (`BlockSpec::Given(3, 3)`, or a PETSc
/// `.info` file). The jittered meshes have no exact zeros.
fn inferred_from_matrix_market(name: &str, bs: usize) -> usize {
    if name == "skfem_tet3d_tiny" {
        1
    } else {
        bs
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators")
}

fn each(mut f: impl FnMut(&str, &Path, usize, usize, usize)) {
    for &(name, n, bs, dim) in OPERATORS {
        f(name, &root().join(name), n, bs, dim);
    }
}

#[test]
fn every_operator_folder_is_checked() {
    let mut found: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = OPERATORS.iter().map(|o| o.0.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "tests/data/operators/ and OPERATORS disagree; list every operator"
    );
}

#[test]
fn matrix_market_and_petsc_copies_are_bitwise_equal_with_the_detected_block_size() {
    each(|name, d, n, bs, _| {
        let mm = d.join("A.mtx");
        let petsc = d.join("A.petsc");
        assert_eq!(detect_format(&mm).unwrap(), FileFormat::MatrixMarket, "{name}");
        assert_eq!(detect_format(&petsc).unwrap(), FileFormat::PetscBinary, "{name}");
        // Matrix Market: the files carry no `%ptap block` comment, so this is
        // infer_block_shape on the pattern; PETSc: `-matload_block_size`.
        let a = read_matrix(&mm, BlockSpec::Infer).unwrap();
        let p = read_matrix(&petsc, BlockSpec::Infer).unwrap();
        let inferred = inferred_from_matrix_market(name, bs);
        assert_eq!(
            a.block_shape(),
            (inferred, inferred),
            "{name}: block shape inferred from A.mtx"
        );
        assert_eq!(p.block_shape(), (bs, bs), "{name}: block shape from A.petsc.info");
        assert_eq!((a.scalar_rows(), a.scalar_cols()), (n, n), "{name}");
        if inferred == bs {
            assert_bitwise_eq(&a, &p);
        } else {
            assert_bitwise_eq(&a, &read_matrix(&petsc, BlockSpec::Given(inferred, inferred)).unwrap());
        }
        assert_bitwise_eq(&read_matrix(&mm, BlockSpec::Given(bs, bs)).unwrap(), &p);
        let h = read_matrix_header(&petsc).unwrap();
        assert_eq!((h.rows, h.cols), (n, n), "{name}");
    });
}

#[test]
fn right_hand_sides_read_equal_from_both_formats() {
    each(|name, d, n, _, _| {
        let b = read_mm_vector(d.join("b.mtx")).unwrap();
        assert_eq!(b.len(), n, "{name}");
        assert_eq!(bits(&b), bits(&read_petsc_vec(d.join("b.petsc")).unwrap()), "{name}");
    });
}

#[test]
fn x_ref_solves_a_x_equals_b() {
    each(|name, d, n, _, _| {
        let a = read_matrix(d.join("A.petsc"), BlockSpec::Infer).unwrap();
        let b = read_mm_vector(d.join("b.mtx")).unwrap();
        let x = read_mm_vector(d.join("x_ref.mtx")).unwrap();
        assert_eq!(x.len(), n, "{name}");
        let mut r = vec![0.0; n];
        ptap_sparse::spmv::residual(&a, &x, &b, &mut r);
        let norm = |v: &[f64]| v.iter().map(|t| t * t).sum::<f64>().sqrt();
        let rel = norm(&r) / norm(&b);
        assert!(rel < 1e-10, "{name}: ||b - A x_ref|| / ||b|| = {rel:e}");
    });
}

#[test]
fn coordinates_give_one_node_per_block_row() {
    each(|name, d, n, bs, dim| {
        let (rows, cols, c) = read_mm_dense(d.join("coords.mtx")).unwrap();
        assert_eq!((rows * bs, cols), (n, dim), "{name}");
        assert!(c.iter().all(|v| v.is_finite()), "{name}");
    });
}

#[test]
fn pyamg_near_null_space_is_its_rigid_body_modes_at_the_coordinates() {
    let d = root().join("pyamg_elasticity2d");
    let (rows, modes, b) = read_near_null(d.join("near_null.mtx")).unwrap();
    let (nodes, _, c) = read_mm_dense(d.join("coords.mtx")).unwrap();
    assert_eq!((rows, modes), (2 * nodes, 3));
    for i in 0..nodes {
        let (x, y) = (c[2 * i], c[2 * i + 1]);
        assert_eq!(&b[2 * i * 3..2 * i * 3 + 3], &[1.0, 0.0, -y], "node {i}, x component");
        assert_eq!(
            &b[(2 * i + 1) * 3..(2 * i + 2) * 3],
            &[0.0, 1.0, x],
            "node {i}, y component"
        );
    }
}

#[test]
fn the_dense_array_copy_is_the_same_matrix() {
    let d = root().join("skfem_tet3d_tiny");
    let a = read_matrix(d.join("A.mtx"), BlockSpec::Infer).unwrap().to_dense();
    let (rows, cols, dense) = read_mm_dense(d.join("A_array.mtx")).unwrap();
    assert_eq!((rows, cols), (a.rows, a.cols));
    assert_eq!(bits(&dense), bits(&a.data));
}

#[test]
fn the_identity_form_is_the_eliminated_form_plus_unit_rows_for_the_clamped_nodes() {
    let read = |name: &str| {
        let d = root().join(name);
        let a = read_matrix(d.join("A.petsc"), BlockSpec::Infer).unwrap().to_dense();
        let b = read_mm_vector(d.join("b.mtx")).unwrap();
        let (nodes, _, c) = read_mm_dense(d.join("coords.mtx")).unwrap();
        (a, b, nodes, c)
    };
    let (full, b_full, nodes, c) = read("skfem_tet3d_identity");
    let (elim, b_elim, _, _) = read("skfem_tet3d_eliminated");
    // The clamped nodes are those on x = 0; the free ones keep their order.
    let free: Vec<usize> = (0..nodes).filter(|&i| c[3 * i] != 0.0).collect();
    assert_eq!(3 * free.len(), elim.rows);
    let dofs: Vec<usize> = free.iter().flat_map(|&i| 3 * i..3 * i + 3).collect();
    for (r, &i) in dofs.iter().enumerate() {
        assert_eq!(b_full[i].to_bits(), b_elim[r].to_bits());
        for (s, &j) in dofs.iter().enumerate() {
            assert_eq!(full.at(i, j).to_bits(), elim.at(r, s).to_bits(), "({i}, {j})");
        }
    }
    for i in (0..nodes).filter(|&i| c[3 * i] == 0.0).flat_map(|i| 3 * i..3 * i + 3) {
        assert_eq!(b_full[i], 0.0);
        for j in 0..full.cols {
            let unit = if i == j { 1.0 } else { 0.0 };
            assert_eq!((full.at(i, j), full.at(j, i)), (unit, unit), "({i}, {j})");
        }
    }
}
