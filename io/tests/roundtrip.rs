//! Write-read round trips (bitwise), symmetric expansion, block-shape inference,
//! duplicates, vectors, dense arrays and near-null spaces.
mod common;

use common::{assert_bitwise_eq, bits, random_block, stencil_block, Rng, Tmp};
use ptap_io::*;
use ptap_sparse::dense::Dense;

const SHAPES: [(usize, usize); 4] = [(3, 3), (3, 6), (6, 6), (1, 1)];

#[test]
fn matrix_market_round_trip_is_bitwise_for_every_block_shape() {
    for (s, &(br, bc)) in SHAPES.iter().enumerate() {
        let a = random_block(9, 7, br, bc, 0.3, 11 + s as u64);
        let f = Tmp::new("rt.mtx");
        write_matrix_market(&f, &a, false).unwrap();
        assert_bitwise_eq(&read_matrix_market(&f, BlockSpec::Given(br, bc)).unwrap(), &a);
        assert_bitwise_eq(&read_matrix_market(&f, BlockSpec::Infer).unwrap(), &a);
        assert_bitwise_eq(&read_matrix(&f, BlockSpec::Infer).unwrap(), &a);
        // The header carries the block shape and the size line the scalar counts.
        let text = std::fs::read_to_string(&f).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("%%MatrixMarket matrix coordinate real general"));
        assert_eq!(lines.next(), Some(format!("%ptap block {br} {bc}").as_str()));
        assert_eq!(
            lines.next(),
            Some(format!("{} {} {}", 9 * br, 7 * bc, a.values().len()).as_str())
        );
        assert_eq!(text.lines().count(), 3 + a.values().len());
    }
}

#[test]
fn petsc_round_trip_is_bitwise_for_every_block_shape_with_its_info_file() {
    for (s, &(br, bc)) in SHAPES.iter().enumerate() {
        let a = random_block(8, 10, br, bc, 0.25, 21 + s as u64);
        let f = Tmp::new("rt.petsc");
        write_petsc_mat(&f, &a).unwrap();
        let info = std::fs::read_to_string(info_path(&f)).unwrap();
        if br == bc {
            assert_eq!(info, format!("-matload_block_size {br}\n"));
        } else {
            assert_eq!(info, format!("#ptap block {br} {bc}\n"));
        }
        // Header: class id, M, N, nz, big-endian; total size 16 + 4M + 12nz.
        let b = std::fs::read(&f).unwrap();
        let be = |k: usize| i32::from_be_bytes(b[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(
            [be(0), be(1), be(2), be(3)],
            [1211216, (8 * br) as i32, (10 * bc) as i32, a.values().len() as i32]
        );
        assert_eq!(b.len(), 16 + 4 * 8 * br + 12 * a.values().len());
        assert_bitwise_eq(&read_petsc_mat(&f, BlockSpec::Given(br, bc)).unwrap(), &a);
        assert_bitwise_eq(&read_petsc_mat(&f, BlockSpec::Infer).unwrap(), &a);
        assert_bitwise_eq(&read_matrix(&f, BlockSpec::Infer).unwrap(), &a);
    }
}

#[test]
fn empty_matrices_round_trip() {
    for &(br, bc) in &SHAPES {
        let a = random_block(0, 0, br, bc, 0.5, 1);
        let b = random_block(4, 3, br, bc, 0.0, 2); // rows 3 empty; diagonal blocks only
        for m in [&a, &b] {
            let f = Tmp::new("empty.mtx");
            write_matrix_market(&f, m, false).unwrap();
            assert_bitwise_eq(&read_matrix_market(&f, BlockSpec::Infer).unwrap(), m);
            let g = Tmp::new("empty.petsc");
            write_petsc_mat(&g, m).unwrap();
            assert_bitwise_eq(&read_petsc_mat(&g, BlockSpec::Infer).unwrap(), m);
        }
    }
}

#[test]
fn vectors_and_dense_arrays_round_trip_bitwise() {
    let mut rng = Rng(7);
    let v: Vec<f64> = (0..101).map(|_| rng.nasty()).collect();
    let f = Tmp::new("v.mtx");
    write_mm_vector(&f, &v).unwrap();
    assert_eq!(bits(&read_mm_vector(&f).unwrap()), bits(&v));
    let g = Tmp::new("v.petsc");
    write_petsc_vec(&g, &v).unwrap();
    assert_eq!(bits(&read_petsc_vec(&g).unwrap()), bits(&v));
    assert_eq!(std::fs::read(&g).unwrap().len(), 8 + 8 * 101);
    let vs = vec![v.clone(), v[..5].to_vec(), vec![]];
    write_petsc_vecs(&g, &vs).unwrap();
    let back = read_petsc_vecs(&g).unwrap();
    assert_eq!(back.len(), 3);
    for (x, y) in back.iter().zip(&vs) {
        assert_eq!(bits(x), bits(y));
    }
    // The first Vec alone.
    assert_eq!(bits(&read_petsc_vec(&g).unwrap()), bits(&v));

    let (r, c) = (17, 6);
    let d: Vec<f64> = (0..r * c).map(|_| rng.nasty()).collect();
    let h = Tmp::new("d.mtx");
    write_mm_dense(&h, r, c, &d).unwrap();
    let (r2, c2, d2) = read_mm_dense(&h).unwrap();
    assert_eq!((r2, c2), (r, c));
    assert_eq!(bits(&d2), bits(&d));
}

#[test]
fn dense_arrays_are_column_major_on_disk() {
    let f = Tmp::new("cm.mtx");
    write_mm_dense(&f, 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "%%MatrixMarket matrix array real general",
            "2 3",
            "1e0",
            "4e0",
            "2e0",
            "5e0",
            "3e0",
            "6e0"
        ]
    );
    // A hand-written column-major file comes back row-major.
    let g = Tmp::new("cm2.mtx");
    g.write("%%MatrixMarket matrix array real general\n% two columns\n3 2\n1\n2\n3\n10\n20\n30\n");
    assert_eq!(
        read_mm_dense(&g).unwrap(),
        (3, 2, vec![1.0, 10.0, 2.0, 20.0, 3.0, 30.0])
    );
    // A symmetric array holds the lower triangle column by column.
    g.write("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n");
    assert_eq!(read_mm_dense(&g).unwrap(), (2, 2, vec![1.0, 2.0, 2.0, 3.0]));
}

#[test]
fn symmetric_file_expands_mirrors_without_doubling_the_diagonal() {
    let f = Tmp::new("sym.mtx");
    f.write(
        "%%MatrixMarket matrix coordinate real symmetric\n\
         % lower triangle only\n\
         4 4 6\n\
         1 1 4.0\n\
         2 1 -1.0\n\
         2 2 4.0\n\
         3 2 -1\n\
         4 1 0.5\n\
         4 4 2e0\n",
    );
    #[rustfmt::skip]
    let want = Dense { rows: 4, cols: 4, data: vec![
         4.0, -1.0,  0.0, 0.5,
        -1.0,  4.0, -1.0, 0.0,
         0.0, -1.0,  0.0, 0.0,
         0.5,  0.0,  0.0, 2.0,
    ] };
    let a = read_matrix_market(&f, BlockSpec::Given(1, 1)).unwrap();
    assert_eq!(a.nnzb(), 9); // 3 diagonal + 2 x 3 off-diagonal
    assert_eq!(a.to_dense(), want);
    let a2 = read_matrix_market(&f, BlockSpec::Given(2, 2)).unwrap();
    assert_eq!(a2.nnzb(), 4);
    assert_eq!(a2.to_dense(), want);
    // No hint and no dense blocks: inferred 1x1.
    assert_eq!(read_matrix_market(&f, BlockSpec::Infer).unwrap().block_shape(), (1, 1));
}

#[test]
fn symmetric_write_keeps_the_lower_triangle_and_reads_back_bitwise() {
    // A symmetric 3x3-blocked matrix: S = M + M^T on a symmetric pattern.
    let m = stencil_block(3, 4, 3, 5).to_dense();
    let s = Dense {
        rows: m.rows,
        cols: m.cols,
        data: (0..m.rows * m.cols)
            .map(|k| m.at(k / m.cols, k % m.cols) + m.at(k % m.cols, k / m.cols))
            .collect(),
    };
    let a = ptap_sparse::BlockCsr::from_dense(&s, 3, 3, false).unwrap();
    let f = Tmp::new("symw.mtx");
    write_matrix_market(&f, &a, true).unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n%ptap block 3 3\n"));
    let n = a.scalar_rows();
    let lower = text.lines().skip(3).count();
    let nnz = a.values().len();
    assert_eq!(lower, (nnz + n) / 2, "lower triangle plus diagonal");
    for l in text.lines().skip(3) {
        let w: Vec<usize> = l.split(' ').take(2).map(|t| t.parse().unwrap()).collect();
        assert!(w[0] >= w[1], "{l}");
    }
    assert_bitwise_eq(&read_matrix_market(&f, BlockSpec::Infer).unwrap(), &a);

    // Not square / not symmetric: refused, nothing half-written matters.
    let r = random_block(3, 2, 3, 3, 0.5, 9);
    let e = write_matrix_market(&f, &r, true).unwrap_err();
    assert!(matches!(e, IoError::NotSquare { rows: 9, cols: 6, .. }), "{e}");
    let ns = stencil_block(2, 2, 3, 8);
    let e = write_matrix_market(&f, &ns, true).unwrap_err();
    assert!(matches!(e, IoError::NotSymmetric { .. }), "{e}");
    assert!(e.to_string().contains(&f.name()) && e.to_string().contains("write it as general"));
}

/// Rewrites a Matrix Market file without its `%ptap block` comment.
fn strip_hint(f: &Tmp) {
    let text = std::fs::read_to_string(f).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.starts_with("%ptap"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept.len(), text.len());
    f.write(&kept);
}

#[test]
fn inference_finds_3x3_stiffness_blocks_and_scalar_tridiagonal() {
    let a = stencil_block(5, 4, 3, 42);
    let f = Tmp::new("stiff.mtx");
    write_matrix_market(&f, &a, false).unwrap();
    strip_hint(&f);
    let back = read_matrix_market(&f, BlockSpec::Infer).unwrap();
    assert_eq!(back.block_shape(), (3, 3));
    assert_bitwise_eq(&back, &a);
    // PETSc without its .info file.
    let g = Tmp::new("stiff.petsc");
    write_petsc_mat(&g, &a).unwrap();
    std::fs::remove_file(info_path(&g)).unwrap();
    assert_bitwise_eq(&read_petsc_mat(&g, BlockSpec::Infer).unwrap(), &a);

    // 6x6 coarse-like blocks are found as 6x6, not as 3x3 or 2x2.
    let c = stencil_block(3, 3, 6, 43);
    write_matrix_market(&f, &c, false).unwrap();
    strip_hint(&f);
    assert_eq!(read_matrix_market(&f, BlockSpec::Infer).unwrap().block_shape(), (6, 6));

    // Scalar tridiagonal (12x12, divisible by 2, 3, 4 and 6): 1x1.
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n12 12 34\n");
    for i in 1..=12 {
        for j in i.max(2) - 1..=(i + 1).min(12) {
            text += &format!("{i} {j} {}\n", if i == j { 2.0 } else { -1.0 });
        }
    }
    f.write(&text);
    let t = read_matrix_market(&f, BlockSpec::Infer).unwrap();
    assert_eq!(t.block_shape(), (1, 1));
    assert_eq!(t.nnzb(), 34);
}

#[test]
fn a_block_size_comment_wins_over_inference_but_not_over_given() {
    let a = stencil_block(4, 3, 3, 1);
    let f = Tmp::new("hint.mtx");
    write_matrix_market(&f, &a, false).unwrap();
    // Rewrite the hint to 1x1: Infer follows the comment.
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("%ptap block 3 3", "%ptap block 1 1");
    f.write(&text);
    assert_eq!(read_matrix_market(&f, BlockSpec::Infer).unwrap().block_shape(), (1, 1));
    assert_eq!(
        read_matrix_market(&f, BlockSpec::Given(3, 3)).unwrap().block_shape(),
        (3, 3)
    );
    // Regrouping into other blocks keeps the scalar matrix.
    let r = read_matrix_market(&f, BlockSpec::Given(6, 2)).unwrap();
    assert_eq!(r.block_shape(), (6, 2));
    assert_eq!(r.to_dense(), a.to_dense());
    // .info precedence: -matload_block_size beats #ptap block.
    let g = Tmp::new("hint.petsc");
    write_petsc_mat(&g, &a).unwrap();
    std::fs::write(
        info_path(&g),
        "#ptap block 1 3\n-viewer_binary_skip_info\n-matload_block_size 2\n",
    )
    .unwrap();
    assert_eq!(read_petsc_mat(&g, BlockSpec::Infer).unwrap().block_shape(), (2, 2));
    std::fs::write(info_path(&g), "# ptap block 1 3\n").unwrap();
    assert_eq!(read_petsc_mat(&g, BlockSpec::Infer).unwrap().block_shape(), (1, 3));
}

#[test]
fn duplicates_are_summed_and_unsorted_rows_sorted() {
    let f = Tmp::new("dup.mtx");
    f.write(
        "%%MatrixMarket matrix coordinate integer general\r\n\
         2 3 5\r\n\
         2 3 1\r\n\
         \r\n\
         1 1 2\r\n\
         % a comment between entries\r\n\
         2 3 4\r\n\
         1 2 -1.5D+00\r\n\
         1 1 3\r\n",
    );
    let a = read_matrix_market(&f, BlockSpec::Given(1, 1)).unwrap();
    assert_eq!(a.pattern().row_ptr(), &[0, 2, 3]);
    assert_eq!(a.pattern().col_idx(), &[0, 1, 2]);
    assert_eq!(a.values(), &[5.0, -1.5, 5.0]);

    // PETSc rows out of order with a duplicate: row 0 = {2: 1.0, 0: 2.0, 2: 0.5}, row 1 = {1: 7.0}.
    let mut b = Vec::new();
    for v in [1211216i32, 2, 3, 4, 3, 1, 2, 0, 2, 1] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    for v in [1.0f64, 2.0, 0.5, 7.0] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    let g = Tmp::new("dup.petsc");
    g.write_bytes(&b);
    let a = read_petsc_mat(&g, BlockSpec::Infer).unwrap();
    assert_eq!(a.block_shape(), (1, 1));
    assert_eq!(a.pattern().row_ptr(), &[0, 2, 3]);
    assert_eq!(a.pattern().col_idx(), &[0, 2, 1]);
    assert_eq!(a.values(), &[2.0, 1.5, 7.0]);
}

#[test]
fn vectors_in_coordinate_form_and_row_vectors_are_read() {
    let f = Tmp::new("cv.mtx");
    f.write("%%MatrixMarket matrix coordinate real general\n4 1 2\n3 1 2.5\n1 1 -1\n");
    assert_eq!(read_mm_vector(&f).unwrap(), vec![-1.0, 0.0, 2.5, 0.0]);
    f.write("%%MatrixMarket matrix array real general\n1 3\n1\n2\n3\n");
    assert_eq!(read_mm_vector(&f).unwrap(), vec![1.0, 2.0, 3.0]);
    f.write("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
    let e = read_mm_vector(&f).unwrap_err();
    assert!(e.to_string().contains("2x2 matrix, not a vector"), "{e}");
}

#[test]
fn near_null_space_from_either_format() {
    let (n, k) = (12, 6);
    let mut rng = Rng(3);
    let b: Vec<f64> = (0..n * k).map(|_| rng.nasty()).collect();
    // Matrix Market dense array.
    let f = Tmp::new("nn.mtx");
    write_mm_dense(&f, n, k, &b).unwrap();
    assert_eq!(detect_format(&f).unwrap(), FileFormat::MatrixMarket);
    let (r, m, d) = read_near_null(&f).unwrap();
    assert_eq!((r, m), (n, k));
    assert_eq!(bits(&d), bits(&b));
    // PETSc: one Vec per mode.
    let modes: Vec<Vec<f64>> = (0..k).map(|j| (0..n).map(|i| b[i * k + j]).collect()).collect();
    let g = Tmp::new("nn.petsc");
    write_petsc_vecs(&g, &modes).unwrap();
    assert_eq!(detect_format(&g).unwrap(), FileFormat::PetscBinary);
    let (r, m, d) = read_near_null(&g).unwrap();
    assert_eq!((r, m), (n, k));
    assert_eq!(bits(&d), bits(&b));
    // PETSc Mat with one column per mode (zeros dropped from the dense block are zero again).
    let dense = Dense {
        rows: n,
        cols: k,
        data: b.iter().map(|&x| x + 0.0).collect(), // -0.0 -> +0.0: from_dense drops zeros
    };
    let pm = ptap_sparse::BlockCsr::from_dense(&dense, 1, 1, false).unwrap();
    write_petsc_mat(&g, &pm).unwrap();
    let (r, m, d) = read_near_null(&g).unwrap();
    assert_eq!((r, m), (n, k));
    assert_eq!(bits(&d), bits(&dense.data));
    // Modes of different lengths.
    write_petsc_vecs(&g, &[vec![1.0; 5], vec![1.0; 4]]).unwrap();
    let e = read_near_null(&g).unwrap_err();
    assert!(e.to_string().contains("Vec 2 has 4 entries but Vec 1 has 5"), "{e}");
}

#[test]
fn detect_format_and_read_matrix_dispatch() {
    let a = random_block(5, 5, 3, 3, 0.4, 77);
    let f = Tmp::new("any.mtx");
    let g = Tmp::new("any.petsc");
    write_matrix_market(&f, &a, false).unwrap();
    write_petsc_mat(&g, &a).unwrap();
    assert_eq!(detect_format(&f).unwrap(), FileFormat::MatrixMarket);
    assert_eq!(detect_format(&g).unwrap(), FileFormat::PetscBinary);
    assert_bitwise_eq(&read_matrix(&f, BlockSpec::Infer).unwrap(), &a);
    assert_bitwise_eq(&read_matrix(&g, BlockSpec::Given(3, 3)).unwrap(), &a);
    // Lower-case banner is still Matrix Market.
    let h = Tmp::new("lower.mtx");
    h.write("%%matrixmarket MATRIX Coordinate REAL General\n1 1 1\n1 1 5\n");
    assert_eq!(read_matrix(&h, BlockSpec::Infer).unwrap().values(), &[5.0]);
    // A Vec file is not a matrix.
    write_petsc_vec(&g, &[1.0, 2.0]).unwrap();
    let e = read_matrix(&g, BlockSpec::Infer).unwrap_err();
    assert!(
        e.to_string()
            .contains("is not a PETSc Mat file (class id 1211214, a PETSc Vec)"),
        "{e}"
    );
}
