//! `read_petsc_mat_rows` and `read_petsc_vec_range` (each rank reads its
//! rows of a PETSc Mat and its entries of a Vec) against the whole-file
//! readers: for every test operator and 1 to 4 contiguous row ranges, the
//! rows read are the whole matrix's rows bit for bit, and the entries the
//! right-hand side's; and the errors a partial read adds, one sentence each.
use ptap_io::{read_petsc_mat, read_petsc_mat_rows, read_petsc_vec, read_petsc_vec_range, BlockSpec};
use std::path::Path;

fn operators() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("A.petsc"))
        .filter(|p| p.exists())
        .collect();
    v.sort();
    assert_eq!(v.len(), 6, "the six test operators");
    v
}

#[test]
fn row_ranges_read_alone_are_the_whole_matrix_rows() {
    for path in operators() {
        let whole = read_petsc_mat(&path, BlockSpec::Infer).unwrap();
        let (br, bc) = whole.block_shape();
        let p = whole.pattern();
        let l = br * bc;
        for ranks in 1..=4 {
            let n = whole.nrows();
            let mut covered = 0;
            for r in 0..ranks {
                let want = n * r / ranks..n * (r + 1) / ranks;
                let got = read_petsc_mat_rows(&path, BlockSpec::Infer, |rows| {
                    assert_eq!(rows, n);
                    want.clone()
                })
                .unwrap();
                assert_eq!((got.block_rows, got.block_cols), (whole.nrows(), whole.ncols()));
                assert_eq!(got.rows, want);
                assert_eq!(got.a.block_shape(), (br, bc));
                assert_eq!(got.a.nrows(), want.len());
                let (k0, k1) = (p.row_ptr()[want.start], p.row_ptr()[want.end]);
                assert_eq!(got.a.pattern().col_idx(), &p.col_idx()[k0..k1], "{}", path.display());
                let same = got.a.values().iter().zip(&whole.values()[k0 * l..k1 * l]);
                assert!(
                    same.clone().all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{}",
                    path.display()
                );
                assert_eq!(same.count(), (k1 - k0) * l);
                covered += want.len();
            }
            assert_eq!(covered, n);
        }
        let b = read_petsc_vec(path.with_file_name("b.petsc")).unwrap();
        for ranks in 1..=4 {
            for r in 0..ranks {
                let want = b.len() * r / ranks..b.len() * (r + 1) / ranks;
                let (n, got) = read_petsc_vec_range(path.with_file_name("b.petsc"), |_| want.clone()).unwrap();
                assert_eq!(n, b.len());
                assert!(got
                    .iter()
                    .zip(&b[want.clone()])
                    .all(|(x, y)| x.to_bits() == y.to_bits()));
                assert_eq!(got.len(), want.len());
            }
        }
    }
}

#[test]
fn partial_reads_refuse_what_they_cannot_do() {
    let dir = std::env::temp_dir().join(format!("ptap-petsc-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators/skfem_tet3d_tiny/A.petsc");
    // Without the .info file the block size cannot be inferred from some rows.
    let bare = dir.join("A.petsc");
    std::fs::copy(&src, &bare).unwrap();
    let e = read_petsc_mat_rows(&bare, BlockSpec::Infer, |n| 0..n)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("inferring the block size") && e.contains("-matload_block_size"),
        "{e}"
    );
    // Given, it works, and rows past the end are refused.
    let ok = read_petsc_mat_rows(&bare, BlockSpec::Given(3, 3), |n| 0..n).unwrap();
    assert_eq!(ok.a.nrows(), 12);
    let e = read_petsc_mat_rows(&bare, BlockSpec::Given(3, 3), |n| 0..n + 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("block rows 0..13 were asked of a matrix of 12"), "{e}");
    let vec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators/skfem_tet3d_tiny/b.petsc");
    let e = read_petsc_vec_range(&vec, |n| 0..n + 1).unwrap_err().to_string();
    assert!(e.contains("entries 0..37 were asked of a Vec of 36"), "{e}");
    let e = read_petsc_vec_range(&src, |n| 0..n).unwrap_err().to_string();
    assert!(e.contains("is not a PETSc Vec file"), "{e}");
    // A truncated file says so.
    let bytes = std::fs::read(&src).unwrap();
    std::fs::write(&bare, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_petsc_mat_rows(&bare, BlockSpec::Given(3, 3), |n| 0..n)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bytes") || e.contains("truncated") || e.contains("short"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
