//! Every malformed input is an `Err` whose message names the file (and for
//! Matrix Market the 1-based line as `file:line:`), never a panic.
mod common;

use common::{random_block, Tmp};
use ptap_io::*;

/// Writes `text` and reads it as a matrix (Infer), returning the error message.
fn mm_err(text: &str) -> (String, String, IoError) {
    let f = Tmp::new("bad.mtx");
    f.write(text);
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err();
    (e.to_string(), f.name(), e)
}

/// Asserts that the message names `file:line:` and contains every fragment.
fn assert_at(msg: &str, name: &str, line: usize, fragments: &[&str]) {
    assert!(
        msg.contains(&format!("{name}:{line}:")),
        "no `{name}:{line}:` in: {msg}"
    );
    for f in fragments {
        assert!(msg.contains(f), "no `{f}` in: {msg}");
    }
}

const GOOD: &str = "%%MatrixMarket matrix coordinate real general\n";

#[test]
fn bad_banner() {
    let (m, n, e) = mm_err("%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n");
    assert_at(&m, &n, 1, &["expected the banner", "%%MatrixMarkt"]);
    assert_eq!(e.line(), Some(1));
    let (m, n, _) = mm_err("hello world\n");
    assert_at(&m, &n, 1, &["is this a Matrix Market file?"]);
    let (m, n, _) = mm_err("");
    assert_at(&m, &n, 1, &["the file is empty"]);
    let (m, n, _) = mm_err("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n");
    assert_at(&m, &n, 1, &["3 words after `%%MatrixMarket`, expected 4"]);
    let (m, n, _) = mm_err("%%MatrixMarket matrix coordinate real sideways\n1 1 1\n1 1 1\n");
    assert_at(&m, &n, 1, &["unknown symmetry `sideways`"]);
}

#[test]
fn unsupported_kinds_are_named() {
    for (banner, what) in [
        ("matrix coordinate pattern general", "`pattern` field"),
        ("matrix coordinate complex general", "`complex` field"),
        ("matrix coordinate real hermitian", "`hermitian` storage"),
        ("matrix coordinate real skew-symmetric", "`skew-symmetric` storage"),
        ("vector coordinate real general", "object `vector`"),
    ] {
        let (m, n, e) = mm_err(&format!("%%MatrixMarket {banner}\n2 2 1\n1 1 1\n"));
        assert!(matches!(e, IoError::Unsupported { .. }), "{m}");
        assert_at(
            &m,
            &n,
            1,
            &[what, "is not supported; ptap reads Matrix Market matrices"],
        );
    }
    // read_mm_dense refuses complex too, but takes arrays.
    let f = Tmp::new("c.mtx");
    f.write("%%MatrixMarket matrix array complex general\n1 1\n1 0\n");
    assert_at(
        &read_mm_dense(&f).unwrap_err().to_string(),
        &f.name(),
        1,
        &["`complex` field"],
    );
}

#[test]
fn a_dense_array_matrix_stores_its_nonzeros() {
    // Column-major on disk: [[4, 0], [1, 3]] has nonzeros (0,0), (1,0), (1,1).
    let f = Tmp::new("dense.mtx");
    f.write("%%MatrixMarket matrix array real general\n2 2\n4\n1\n0\n3\n");
    let a = ptap_io::read_matrix_market(&f, ptap_io::BlockSpec::Given(1, 1)).unwrap();
    assert_eq!(a.pattern().row_ptr(), &[0, 1, 3]);
    assert_eq!(a.pattern().col_idx(), &[0, 0, 1]);
    assert_eq!(a.values(), &[4.0, 1.0, 3.0]);
    // A symmetric array holds the lower triangle, mirrored.
    f.write("%%MatrixMarket matrix array real symmetric\n2 2\n4\n1\n3\n");
    let a = ptap_io::read_matrix_market(&f, ptap_io::BlockSpec::Infer).unwrap();
    assert_eq!(a.block_shape(), (2, 2));
    assert_eq!(a.values(), &[4.0, 1.0, 1.0, 3.0]);
}

#[test]
fn too_few_and_too_many_entries() {
    let (m, n, e) = mm_err(&format!("{GOOD}% c\n3 3 3\n1 1 1\n2 2 1\n"));
    assert_at(&m, &n, 3, &["promises 3 entries but the file ends after 2 (line 5)"]);
    assert!(matches!(
        e,
        IoError::TooFewEntries {
            line: 3,
            expected: 3,
            got: 2,
            last: 5,
            ..
        }
    ));
    let (m, n, _) = mm_err(&format!("{GOOD}3 3 2\n1 1 1\n2 2 1\n3 3 1\n"));
    assert_at(&m, &n, 5, &["entry beyond the 2 the size line promises"]);
    let (m, n, _) = mm_err(GOOD);
    assert_at(&m, &n, 2, &["ends before its size line"]);
}

#[test]
fn indices_out_of_range() {
    let (m, n, e) = mm_err(&format!("{GOOD}3 4 2\n1 1 1\n0 2 1\n"));
    assert_at(&m, &n, 4, &["row index 0 is outside 1..=3", "1-based"]);
    assert!(matches!(e, IoError::IndexOutOfRange { index: 0, size: 3, .. }));
    let (m, n, _) = mm_err(&format!("{GOOD}3 4 2\n1 1 1\n2 5 1\n"));
    assert_at(&m, &n, 4, &["column index 5 is outside 1..=4"]);
    let (m, n, _) = mm_err(&format!("{GOOD}3 4 2\n1 1 1\n4 1 1\n"));
    assert_at(&m, &n, 4, &["row index 4 is outside 1..=3"]);
    let (m, n, _) = mm_err(&format!("{GOOD}3 4 1\n-1 1 1\n"));
    assert_at(&m, &n, 3, &["row index -1 is outside"]);
}

#[test]
fn bad_and_non_finite_numbers() {
    for (tok, what) in [
        ("nan", "value `nan` is not finite"),
        ("-inf", "value `-inf` is not finite"),
        ("1e999", "`1e999` is not finite"),
    ] {
        let (m, n, e) = mm_err(&format!("{GOOD}2 2 2\n1 1 1\n2 2 {tok}\n"));
        assert_at(&m, &n, 4, &[what]);
        assert!(matches!(e, IoError::NotFinite { line: 4, .. }));
    }
    let (m, n, _) = mm_err(&format!("{GOOD}2 2 1\n1 1 1.2.3\n"));
    assert_at(&m, &n, 3, &["cannot read `1.2.3` as a real number"]);
    let (m, n, _) = mm_err(&format!("{GOOD}2 2 1\n1 x 1\n"));
    assert_at(&m, &n, 3, &["cannot read `x` as an integer index"]);
    let (m, n, _) = mm_err(&format!("{GOOD}2 two 1\n1 1 1\n"));
    assert_at(&m, &n, 2, &["cannot read `two` as a non-negative size"]);
    let (m, n, _) = mm_err(&format!("{GOOD}2 2 1\n1 1\n"));
    assert_at(&m, &n, 3, &["expected 3 fields (`row column value`), found 2"]);
    let (m, n, _) = mm_err(&format!("{GOOD}2 2\n1 1 1\n"));
    assert_at(
        &m,
        &n,
        2,
        &["expected 3 fields (the size line `rows columns entries`), found 2"],
    );
    let (m, n, _) = mm_err("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n");
    assert_at(&m, &n, 2, &["must be square, but the size line gives 2x3"]);
    // Dense arrays: NaN with its line.
    let f = Tmp::new("nan-array.mtx");
    f.write("%%MatrixMarket matrix array real general\n3 1\n1\nNaN\n3\n");
    assert_at(
        &read_mm_vector(&f).unwrap_err().to_string(),
        &f.name(),
        4,
        &["value `NaN` is not finite"],
    );
    f.write("%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
    assert_at(
        &read_mm_vector(&f).unwrap_err().to_string(),
        &f.name(),
        2,
        &["promises 3 entries"],
    );
}

#[test]
fn block_sizes_that_do_not_divide() {
    let a = random_block(3, 3, 3, 3, 0.5, 4);
    let f = Tmp::new("bs.mtx");
    write_matrix_market(&f, &a, false).unwrap();
    let e = read_matrix_market(&f, BlockSpec::Given(2, 3)).unwrap_err().to_string();
    assert!(
        e.contains(&f.name()) && e.contains("block size 2x3 (the requested block size) does not tile the 9x9"),
        "{e}"
    );
    let e = read_matrix_market(&f, BlockSpec::Given(0, 3)).unwrap_err().to_string();
    assert!(e.contains("block size 0x3"), "{e}");
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("%ptap block 3 3", "%ptap block 4 4");
    f.write(&text);
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains("block size 4x4 (the `%ptap block` comment on line 2)"),
        "{e}"
    );
    f.write(&text.replace("%ptap block 4 4", "%ptap block four"));
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert_at(&e, &f.name(), 2, &["`%ptap block <rows> <cols>`"]);
    // PETSc: from the .info file.
    let g = Tmp::new("bs.petsc");
    write_petsc_mat(&g, &a).unwrap();
    std::fs::write(info_path(&g), "-matload_block_size 2\n").unwrap();
    let e = read_petsc_mat(&g, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains("block size 2x2 (`-matload_block_size` on") && e.contains(".info:1)"),
        "{e}"
    );
    std::fs::write(info_path(&g), "\n-matload_block_size x\n").unwrap();
    let e = read_petsc_mat(&g, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{}.info:2:", g.name())) && e.contains("positive integer"),
        "{e}"
    );
    let e = read_petsc_mat(&g, BlockSpec::Given(2, 2)).unwrap_err().to_string();
    assert!(e.contains("the requested block size"), "{e}");
}

#[test]
fn missing_files_and_unknown_formats() {
    let f = Tmp::new("missing.mtx");
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(e.contains("cannot open") && e.contains(&f.name()), "{e}");
    let e = read_petsc_vec(&f).unwrap_err().to_string();
    assert!(e.contains("cannot read") && e.contains(&f.name()), "{e}");
    f.write("just text\n");
    let e = detect_format(&f).unwrap_err().to_string();
    assert!(
        e.contains(&f.name()) && e.contains("neither a Matrix Market file"),
        "{e}"
    );
    assert!(read_matrix(&f, BlockSpec::Infer).is_err());
    assert!(read_near_null(&f).is_err());
    f.write("");
    assert!(matches!(detect_format(&f), Err(IoError::UnknownFormat { .. })));
}

fn ints(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

fn reals(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// A 2x3 PETSc Mat with rows {0: [0, 2]}, {1: [1]}.
fn mat_bytes() -> Vec<u8> {
    let mut b = ints(&[1211216, 2, 3, 3, 2, 1, 0, 2, 1]);
    b.extend(reals(&[1.0, 2.0, 3.0]));
    b
}

fn petsc_err(bytes: &[u8]) -> (String, String) {
    let f = Tmp::new("bad.petsc");
    f.write_bytes(bytes);
    let e = read_petsc_mat(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(e.contains(&f.name()), "no file name in: {e}");
    (e, f.name())
}

#[test]
fn petsc_reference_file_reads() {
    let f = Tmp::new("ok.petsc");
    f.write_bytes(&mat_bytes());
    let a = read_petsc_mat(&f, BlockSpec::Infer).unwrap();
    assert_eq!(a.to_dense().data, vec![1.0, 0.0, 2.0, 0.0, 3.0, 0.0]);
}

#[test]
fn petsc_truncated_files() {
    let b = mat_bytes();
    let (e, _) = petsc_err(&b[..b.len() - 1]);
    assert!(e.contains("ends after 59 bytes but the header promises 60"), "{e}");
    let (e, _) = petsc_err(&b[..10]);
    assert!(e.contains("ends after 10 bytes but the header promises 16"), "{e}");
    let (e, _) = petsc_err(&b[..2]);
    assert!(e.contains("ends after 2 bytes but the header promises 4"), "{e}");
    let f = Tmp::new("v.petsc");
    f.write_bytes(&[ints(&[1211214, 3]), reals(&[1.0, 2.0])].concat());
    let e = read_petsc_vec(&f).unwrap_err().to_string();
    assert!(
        e.contains(&f.name()) && e.contains("ends after 24 bytes but the header promises 32"),
        "{e}"
    );
    // Trailing bytes that are not a whole Vec.
    f.write_bytes(&[ints(&[1211214, 1]), reals(&[1.0]), vec![0, 1]].concat());
    let e = read_petsc_vecs(&f).unwrap_err().to_string();
    assert!(e.contains("ends after 18 bytes but the header promises 20"), "{e}");
    assert_eq!(read_petsc_vec(&f).unwrap(), vec![1.0]);
}

#[test]
fn petsc_wrong_class_ids() {
    let mut b = mat_bytes();
    b[3] ^= 1;
    let (e, _) = petsc_err(&b);
    assert!(
        e.contains(&format!("is not a PETSc Mat file (class id {})", 1211216 ^ 1)),
        "{e}"
    );
    let f = Tmp::new("m.petsc");
    f.write_bytes(&mat_bytes());
    let e = read_petsc_vec(&f).unwrap_err().to_string();
    assert!(
        e.contains("is not a PETSc Vec file (class id 1211216, a PETSc Mat)"),
        "{e}"
    );
    // 64-bit indices: the class id as a big-endian i64.
    let (e, _) = petsc_err(&[0, 0, 0, 0, 0, 0x12, 0x7b, 0x50, 0, 0, 0, 0]);
    assert!(e.contains("64-bit integers"), "{e}");
}

#[test]
fn petsc_inconsistent_contents() {
    // Row lengths 2 + 2 != nz 3.
    let mut b = ints(&[1211216, 2, 3, 3, 2, 2, 0, 2, 1]);
    b.extend(reals(&[1.0, 2.0, 3.0]));
    let (e, _) = petsc_err(&b);
    assert!(
        e.contains("the row lengths sum to 4 but the header promises 3 nonzeros"),
        "{e}"
    );
    // Negative sizes.
    let (e, _) = petsc_err(&ints(&[1211216, -2, 3, 0]));
    assert!(e.contains("the row count is -2, which is negative"), "{e}");
    let (e, _) = petsc_err(&ints(&[1211216, 2, 3, -5]));
    assert!(e.contains("the nonzero count is -5"), "{e}");
    let (e, _) = petsc_err(&[ints(&[1211216, 2, 3, 1, -1, 2, 0]), reals(&[1.0])].concat());
    assert!(e.contains("the length of row 0 is -1"), "{e}");
    // Column index out of range.
    let mut b = mat_bytes();
    b[8 * 4 + 3] = 3; // row 1's column 1 -> 3
    let (e, _) = petsc_err(&b);
    assert!(e.contains("column index 3 in row 1 is outside the 3 columns"), "{e}");
    // NaN value.
    let mut b = mat_bytes();
    let l = b.len();
    b[l - 8..].copy_from_slice(&f64::NAN.to_be_bytes());
    let (e, _) = petsc_err(&b);
    assert!(
        e.contains("the value at row 1, column 1 (0-based) is not finite"),
        "{e}"
    );
    // Dense storage.
    let (e, _) = petsc_err(&ints(&[1211216, 2, 2, -1]));
    assert!(e.contains("dense binary format is not supported"), "{e}");
}

#[test]
fn huge_column_counts_are_refused_from_the_header() {
    // N = 2^31 - 1 with three entries: refused before anything is allocated
    // (the matrix itself would be cheap, but its transpose is not).
    let mut b = ints(&[1211216, 2, i32::MAX, 3, 2, 1, 0, i32::MAX - 1, 5]);
    b.extend(reals(&[1.0, 2.0, 3.0]));
    let f = Tmp::new("wide.petsc");
    f.write_bytes(&b);
    let e = read_petsc_mat(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains(&f.name())
            && e.contains("the header claims 2147483647 columns for 3 nonzeros, more than a file of 60 bytes can hold"),
        "{e}"
    );
    assert_eq!(read_matrix_header(&f).unwrap_err().to_string(), e);
    let e = read_near_null(&f).unwrap_err().to_string();
    assert!(e.contains("2147483647 columns"), "{e}");
    // Within the bound (64 per entry, plus 64) a wide matrix still reads.
    let g = Tmp::new("wide.mtx");
    g.write(&format!("{GOOD}1 128 1\n1 128 2.5\n"));
    let a = read_matrix_market(&g, BlockSpec::Infer).unwrap();
    assert_eq!(a.pattern().col_idx(), &[127]);
    g.write(&format!("{GOOD}1 3000000000 1\n1 4294967295 2.5\n"));
    let e = read_matrix_market(&g, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains("the header claims a 1x3000000000 matrix with 1 entries on line 2"),
        "{e}"
    );
    g.write(&format!("{GOOD}1 4294967296 1\n1 1 2.5\n"));
    let e = read_matrix_market(&g, BlockSpec::Infer).unwrap_err().to_string();
    assert!(e.contains("the size 1x4294967296 on line 2 is too large"), "{e}");
}

#[test]
fn size_lines_are_bounded_by_the_file_size() {
    // A 76-byte file declaring 300,000,000 rows: refused from the header.
    let f = Tmp::new("tall.mtx");
    let text = format!("{GOOD}300000000 300000000 3\n1 1 1.0\n2 2 1.0\n3 3 1.0\n");
    f.write(&text);
    let len = text.len();
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(
        e.contains(&f.name())
            && e.contains(&format!(
                "the header claims a 300000000x300000000 matrix with 3 entries on line 2, more than a file of {len} \
                 bytes can hold"
            )),
        "{e}"
    );
    // More entries than the bytes can hold.
    f.write(&format!("{GOOD}4 4 1000\n1 1 1.0\n"));
    let e = read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string();
    assert!(e.contains("the header claims 1000 entries on line 2"), "{e}");
    // A PETSc header promising more rows than the file holds.
    let g = Tmp::new("tall.petsc");
    g.write_bytes(&ints(&[1211216, 1 << 30, 4, 0]));
    let e = read_matrix_header(&g).unwrap_err().to_string();
    assert!(e.contains("the header claims 1073741824 rows and 0 nonzeros"), "{e}");
}

#[test]
fn operand_shapes_are_checked_from_the_headers() {
    let a = Tmp::new("a.mtx");
    a.write(&format!("{GOOD}4 4 2\n1 1 1.0\n4 4 1.0\n"));
    let p = Tmp::new("p.mtx");
    p.write(&format!("{GOOD}3 2 2\n1 1 1.0\n3 2 1.0\n"));
    assert_eq!(
        read_matrix_header(&a).unwrap(),
        MatrixHeader {
            rows: 4,
            cols: 4,
            entries: 2
        }
    );
    let e = check_operand_headers(&a, &p).unwrap_err().to_string();
    assert!(e.contains("P has 3 rows but A") && e.contains("has 4"), "{e}");
    p.write(&format!("{GOOD}4 2 2\n1 1 1.0\n3 2 1.0\n"));
    check_operand_headers(&a, &p).unwrap();
    let e = check_operand_headers(&p, &a).unwrap_err().to_string();
    assert!(e.contains("A is 4x2, not square"), "{e}");
}

#[cfg(unix)]
#[test]
fn fifos_and_directories_are_refused_without_blocking() {
    let f = Tmp::new("fifo.mtx");
    let path: &std::path::Path = f.as_ref();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for e in [
        read_matrix_market(&f, BlockSpec::Infer).unwrap_err().to_string(),
        read_matrix(&f, BlockSpec::Infer).unwrap_err().to_string(),
        read_petsc_vec(&f).unwrap_err().to_string(),
        read_near_null(&f).unwrap_err().to_string(),
    ] {
        assert!(e.contains("is a FIFO, not a regular file"), "{e}");
    }
    let e = write_mm_vector(&f, &[1.0]).unwrap_err().to_string();
    assert!(e.contains("is a FIFO, not a regular file"), "{e}");
    let e = read_matrix(std::env::temp_dir(), BlockSpec::Infer)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a directory, not a regular file"), "{e}");
}
