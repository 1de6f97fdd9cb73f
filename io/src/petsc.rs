//! PETSc binary files (what `MatView` / `VecView` write to a binary viewer), in
//! the default 32-bit-index, real double-precision build.
//!
//! Layout, all big-endian:
//! - Mat: `i32 MAT_FILE_CLASSID (1211216)`, `i32 M`, `i32 N`, `i32 nz`, `M x i32`
//!   row lengths, `nz x i32` 0-based column indices (row by row), `nz x f64` values.
//!   Block (BAIJ/SBAIJ) matrices are written in this scalar layout too; the block
//!   size travels in the `<file>.info` options file as `-matload_block_size <b>`.
//! - Vec: `i32 VEC_FILE_CLASSID (1211214)`, `i32 n`, `n x f64`. Several objects
//!   may follow one another in one file.
use crate::error::IoError;
use crate::mm::{create, finish, Lines};
use crate::scalar::{check_block, to_block, ScalarCsr, Triplets};
use crate::BlockSpec;
use ptap_sparse::infer_block_shape;
use ptap_sparse::BlockCsr;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

/// Class id PETSc writes at the start of a binary `Mat`.
pub const MAT_FILE_CLASSID: i32 = 1211216;
/// Class id PETSc writes at the start of a binary `Vec`.
pub const VEC_FILE_CLASSID: i32 = 1211214;

#[inline]
fn be_i32(b: &[u8], pos: usize) -> i32 {
    i32::from_be_bytes([b[pos], b[pos + 1], b[pos + 2], b[pos + 3]])
}

#[inline]
fn be_f64(b: &[u8], pos: usize) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[pos..pos + 8]);
    f64::from_be_bytes(a)
}

fn read_all(path: &Path) -> Result<Vec<u8>, IoError> {
    use std::io::Read;
    let (mut f, len) = crate::mm::open(path).map_err(|e| match e {
        IoError::Os { path, err, .. } => IoError::Os {
            action: "read",
            path,
            err,
        },
        other => other,
    })?;
    let mut b = Vec::with_capacity(len as usize);
    f.read_to_end(&mut b).map_err(|e| IoError::os("read", path, e))?;
    Ok(b)
}

/// Checks a Mat header's counts against the file's length before anything is
/// allocated: the row lengths, column indices and values must fit, and the
/// column count is bounded by the nonzeros (`max_dim`).
fn check_mat_claims(path: &Path, file_len: u64, m: usize, n: usize, nz: usize) -> Result<(), IoError> {
    let promised = 16 + 4 * m as u64 + 12 * nz as u64;
    if file_len < promised {
        return Err(crate::mm::claim(
            path,
            format!("{m} rows and {nz} nonzeros ({promised} bytes)"),
            file_len,
        ));
    }
    if n as u64 > crate::mm::max_dim(nz as u64) {
        return Err(crate::mm::claim(
            path,
            format!("{n} columns for {nz} nonzeros"),
            file_len,
        ));
    }
    Ok(())
}

/// The rows, columns and nonzeros a PETSc Mat header claims, checked against
/// the file's length; reads 16 bytes.
pub(crate) fn read_mat_header(path: &Path) -> Result<(usize, usize, usize), IoError> {
    use std::io::Read;
    let (f, len) = crate::mm::open(path)?;
    let mut b = Vec::with_capacity(16);
    f.take(16)
        .read_to_end(&mut b)
        .map_err(|e| IoError::os("read", path, e))?;
    check_class(path, &b, 0, MAT_FILE_CLASSID, "Mat")?;
    if b.len() < 16 {
        return Err(truncated(path, b.len(), 16));
    }
    let (m, n, nz) = (be_i32(&b, 4), be_i32(&b, 8), be_i32(&b, 12));
    for (what, v) in [("the row count", m), ("the column count", n), ("the nonzero count", nz)] {
        if v < 0 {
            return Err(negative(path, what, v as i64));
        }
    }
    let (m, n, nz) = (m as usize, n as usize, nz as usize);
    check_mat_claims(path, len, m, n, nz)?;
    Ok((m, n, nz))
}

fn truncated(path: &Path, len: usize, promised: u64) -> IoError {
    IoError::Truncated {
        path: path.to_path_buf(),
        len: len as u64,
        promised,
    }
}

fn class_name(id: i32) -> &'static str {
    match id {
        MAT_FILE_CLASSID => ", a PETSc Mat",
        VEC_FILE_CLASSID => ", a PETSc Vec",
        _ => "",
    }
}

/// Checks the class id at `pos`.
fn check_class(path: &Path, b: &[u8], pos: usize, want: i32, name: &'static str) -> Result<(), IoError> {
    if b.len() < pos + 4 {
        return Err(truncated(path, b.len(), pos as u64 + 4));
    }
    let id = be_i32(b, pos);
    if id == want {
        return Ok(());
    }
    if id == 0 && b.len() >= pos + 8 && be_i32(b, pos + 4) == want {
        return Err(IoError::UnsupportedBinary {
            path: path.to_path_buf(),
            what: "a PETSc binary file with 64-bit integers (a --with-64-bit-indices build)",
            todo: "write it from a PETSc build with 32-bit indices, or as Matrix Market",
        });
    }
    let mut note = class_name(id).to_string();
    if pos > 0 {
        note.push_str(&format!(", at byte {pos}"));
    }
    Err(IoError::NotPetsc {
        path: path.to_path_buf(),
        expected: name,
        classid: id,
        note,
    })
}

fn negative(path: &Path, what: impl Into<String>, value: i64) -> IoError {
    IoError::NegativeSize {
        path: path.to_path_buf(),
        what: what.into(),
        value,
    }
}

/// The scalar matrix of a PETSc binary Mat (rows sorted by column, duplicates summed).
fn read_scalar_mat(path: &Path) -> Result<ScalarCsr, IoError> {
    let b = read_all(path)?;
    check_class(path, &b, 0, MAT_FILE_CLASSID, "Mat")?;
    if b.len() < 16 {
        return Err(truncated(path, b.len(), 16));
    }
    let (m, n, nz) = (be_i32(&b, 4), be_i32(&b, 8), be_i32(&b, 12));
    if m < 0 {
        return Err(negative(path, "the row count", m as i64));
    }
    if n < 0 {
        return Err(negative(path, "the column count", n as i64));
    }
    if nz == -1 {
        return Err(IoError::UnsupportedBinary {
            path: path.to_path_buf(),
            what: "a PETSc Mat in dense binary format",
            todo: "convert it to AIJ before MatView",
        });
    }
    if nz < 0 {
        return Err(negative(path, "the nonzero count", nz as i64));
    }
    let (m, n, nzu) = (m as usize, n as usize, nz as usize);
    let promised = 16 + 4 * m as u64 + 12 * nzu as u64;
    if (b.len() as u64) < promised {
        return Err(truncated(path, b.len(), promised));
    }
    check_mat_claims(path, b.len() as u64, m, n, nzu)?;
    let mut row_ptr = Vec::with_capacity(m + 1);
    row_ptr.push(0usize);
    let mut sum: i64 = 0;
    for r in 0..m {
        let l = be_i32(&b, 16 + 4 * r);
        if l < 0 {
            return Err(negative(path, format!("the length of row {r}"), l as i64));
        }
        sum += l as i64;
        row_ptr.push(sum.min(nz as i64) as usize);
    }
    if sum != nz as i64 {
        return Err(IoError::RowLengthSum {
            path: path.to_path_buf(),
            sum,
            nz: nz as i64,
        });
    }
    let cstart = 16 + 4 * m;
    let vstart = cstart + 4 * nzu;
    let mut col_idx = Vec::with_capacity(nzu);
    let mut vals = Vec::with_capacity(nzu);
    let mut sorted = true;
    for r in 0..m {
        for k in row_ptr[r]..row_ptr[r + 1] {
            let c = be_i32(&b, cstart + 4 * k);
            if c < 0 || c as usize >= n {
                return Err(IoError::ColumnOutOfRange {
                    path: path.to_path_buf(),
                    row: r,
                    col: c as i64,
                    ncols: n,
                });
            }
            let v = be_f64(&b, vstart + 8 * k);
            if !v.is_finite() {
                return Err(IoError::NotFiniteBinary {
                    path: path.to_path_buf(),
                    what: format!("the value at row {r}, column {c} (0-based)"),
                });
            }
            if k > row_ptr[r] && col_idx[k - 1] > c as u32 {
                sorted = false;
            }
            col_idx.push(c as u32);
            vals.push(v);
        }
    }
    drop(b);
    if sorted {
        let mut csr = ScalarCsr {
            rows: m,
            cols: n,
            row_ptr,
            col_idx,
            vals,
        };
        csr.sum_duplicates();
        Ok(csr)
    } else {
        let mut t = Triplets::with_capacity(m, n, nzu);
        for r in 0..m {
            for k in row_ptr[r]..row_ptr[r + 1] {
                t.push(r as u32, col_idx[k], vals[k]);
            }
        }
        drop((col_idx, vals));
        t.into_csr(path)
    }
}

/// `<path>.info`, the options file PETSc reads beside a binary file.
pub fn info_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".info");
    PathBuf::from(s)
}

/// An options file's path and its lines.
type InfoLines = (PathBuf, Lines<BufReader<std::fs::File>>);

/// `<path>.info` and its lines, `None` when there is no such file.
fn open_info(path: &Path) -> Result<Option<InfoLines>, IoError> {
    let info = info_path(path);
    match crate::mm::open(&info) {
        Ok((f, _)) => Ok(Some((info, Lines::new(BufReader::new(f))))),
        Err(IoError::Os { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The block shape recorded in `<path>.info`: `-matload_block_size <b>` (the last
/// one wins, as PETSc options do; prefixed forms such as `-a_matload_block_size`
/// count) gives `b x b`; otherwise a `#ptap block <br> <bc>` comment (what
/// [`write_petsc_mat`] writes for rectangular blocks). `None` when there is no
/// `.info` file or it records neither.
fn info_block(path: &Path) -> Result<Option<(usize, usize, String)>, IoError> {
    let Some((info, mut lines)) = open_info(path)? else {
        return Ok(None);
    };
    let (mut opt, mut ptap) = (None, None);
    let bad = |line: usize, msg: &str| IoError::Malformed {
        path: info.clone(),
        line,
        msg: msg.to_string(),
    };
    let positive = |t: &str| t.parse::<usize>().ok().filter(|&v| v >= 1);
    while lines.advance(&info)? {
        let text = String::from_utf8_lossy(&lines.buf);
        let line = lines.line;
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else { continue };
        if let Some(rest) = first.strip_prefix('#') {
            // `#ptap block br bc` or `# ptap block br bc`.
            let mut w: Vec<&str> = Vec::with_capacity(4);
            if !rest.is_empty() {
                w.push(rest);
            }
            w.extend(words);
            if w.len() >= 2 && w[0].eq_ignore_ascii_case("ptap") && w[1].eq_ignore_ascii_case("block") {
                match (
                    w.len(),
                    w.get(2).and_then(|t| positive(t)),
                    w.get(3).and_then(|t| positive(t)),
                ) {
                    (4, Some(br), Some(bc)) => ptap = Some((br, bc, line)),
                    _ => {
                        return Err(bad(
                            line,
                            "the comment must read `#ptap block <rows> <cols>` with positive block dimensions; \
                             fix or delete it",
                        ))
                    }
                }
            }
        } else if first.starts_with('-') && first.ends_with("matload_block_size") {
            match words.next().and_then(positive) {
                Some(bs) => opt = Some((bs, line)),
                None => {
                    return Err(bad(
                        line,
                        "`-matload_block_size` needs a positive integer value; fix or delete the line",
                    ))
                }
            }
        }
    }
    let shown = info.display();
    Ok(match (opt, ptap) {
        (Some((bs, line)), _) => Some((bs, bs, format!("`-matload_block_size` on {shown}:{line}"))),
        (None, Some((br, bc, line))) => Some((br, bc, format!("`#ptap block` on {shown}:{line}"))),
        (None, None) => None,
    })
}

/// The `-vecload_block_size <b>` of `<path>.info` (the last one wins; prefixed
/// forms count), `None` without an `.info` file or such a line.
pub(crate) fn info_vec_block_size(path: &Path) -> Result<Option<usize>, IoError> {
    let Some((info, mut lines)) = open_info(path)? else {
        return Ok(None);
    };
    let mut found = None;
    while lines.advance(&info)? {
        let text = String::from_utf8_lossy(&lines.buf);
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first.starts_with('-') && first.ends_with("vecload_block_size") {
            match words.next().and_then(|t| t.parse::<usize>().ok()).filter(|&b| b >= 1) {
                Some(b) => found = Some(b),
                None => {
                    return Err(IoError::Malformed {
                        path: info.clone(),
                        line: lines.line,
                        msg: "`-vecload_block_size` needs a positive integer value; fix or delete the line".into(),
                    })
                }
            }
        }
    }
    Ok(found)
}

/// Reads a PETSc binary Mat (AIJ layout; BAIJ and SBAIJ are saved that way too)
/// into `br x bc` blocks.
///
/// Rows need not be sorted by column; duplicate `(row, column)` entries are
/// summed. Bytes after the Mat (say, a right-hand side Vec saved into the same
/// file) are ignored. The block shape is `Given(br, bc)`; else, for
/// [`BlockSpec::Infer`], `-matload_block_size <b>` from `<path>.info`, or the
/// `#ptap block <br> <bc>` comment there; else [`infer_block_shape`] (the same
/// rule as for Matrix Market). Blocks are grouped as for Matrix Market: a block
/// with any stored scalar is stored, the rest of it explicit zeros.
///
/// Errors: a wrong class id ("... is not a PETSc Mat file (class id X)"), a file
/// shorter than its header promises, negative sizes, a column index out of
/// range, row lengths that do not sum to the nonzero count, NaN or infinite
/// values, a block shape that does not divide the dimensions, and the dense
/// and 64-bit-index variants, which are not read.
pub fn read_petsc_mat(path: impl AsRef<Path>, block: BlockSpec) -> Result<BlockCsr, IoError> {
    let path = path.as_ref();
    let csr = read_scalar_mat(path)?;
    let (br, bc) = match block {
        BlockSpec::Given(br, bc) => {
            check_block(path, br, bc, csr.rows, csr.cols, || "the requested block size".into())?;
            (br, bc)
        }
        BlockSpec::Infer => match info_block(path)? {
            Some((br, bc, origin)) => {
                check_block(path, br, bc, csr.rows, csr.cols, || origin)?;
                (br, bc)
            }
            None => infer_block_shape(csr.rows, csr.cols, &csr.row_ptr, &csr.col_idx),
        },
    };
    to_block(&csr, br, bc, path)
}

fn to_i32(path: &Path, what: &str, v: usize) -> Result<i32, IoError> {
    i32::try_from(v).map_err(|_| IoError::TooLarge {
        path: path.to_path_buf(),
        what: format!("{what} ({v})"),
        todo: "PETSc's 32-bit binary format holds at most 2^31 - 1 rows, columns, nonzeros and vector entries",
    })
}

struct BeWriter<'a, W: Write> {
    w: &'a mut W,
    path: &'a Path,
}

impl<W: Write> BeWriter<'_, W> {
    #[inline]
    fn i32(&mut self, v: i32) -> Result<(), IoError> {
        self.w
            .write_all(&v.to_be_bytes())
            .map_err(|e| IoError::os("write", self.path, e))
    }
    #[inline]
    fn f64s(&mut self, v: &[f64]) -> Result<(), IoError> {
        let mut buf = [0u8; 8 * 64];
        for chunk in v.chunks(64) {
            for (d, x) in buf.chunks_exact_mut(8).zip(chunk) {
                d.copy_from_slice(&x.to_be_bytes());
            }
            self.w
                .write_all(&buf[..8 * chunk.len()])
                .map_err(|e| IoError::os("write", self.path, e))?;
        }
        Ok(())
    }
}

/// Writes `a` as a PETSc binary Mat in the scalar AIJ layout (what PETSc itself
/// writes for AIJ and BAIJ), every scalar of every stored block included, and
/// (re)writes `<path>.info`: `-matload_block_size <b>` for square `b x b`
/// blocks (1x1 included, so `MatLoad` and [`read_petsc_mat`] both get the block
/// size back), or a `#ptap block <br> <bc>` comment, which PETSc ignores, for
/// rectangular ones.
pub fn write_petsc_mat(path: impl AsRef<Path>, a: &BlockCsr) -> Result<(), IoError> {
    let path = path.as_ref();
    let (br, bc) = a.block_shape();
    let m = to_i32(path, "the row count", a.scalar_rows())?;
    let n = to_i32(path, "the column count", a.scalar_cols())?;
    let nz = to_i32(path, "the nonzero count", a.values().len())?;
    let p = a.pattern();
    let mut w = create(path)?;
    let mut out = BeWriter { w: &mut w, path };
    for v in [MAT_FILE_CLASSID, m, n, nz] {
        out.i32(v)?;
    }
    for bi in 0..a.nrows() {
        let len = (p.row_range(bi).len() * bc) as i32;
        for _ in 0..br {
            out.i32(len)?;
        }
    }
    for bi in 0..a.nrows() {
        for _ in 0..br {
            for &bj in p.row(bi) {
                for c in 0..bc {
                    out.i32((bj as usize * bc + c) as i32)?;
                }
            }
        }
    }
    for bi in 0..a.nrows() {
        for r in 0..br {
            for k in p.row_range(bi) {
                out.f64s(&a.block(k)[r * bc..(r + 1) * bc])?;
            }
        }
    }
    finish(w, path)?;
    let info = info_path(path);
    let text = if br == bc {
        format!("-matload_block_size {br}\n")
    } else {
        format!("#ptap block {br} {bc}\n")
    };
    std::fs::write(&info, text).map_err(|e| IoError::os("write", &info, e))
}

/// One Vec at byte `pos`: its values and the position after it.
fn parse_vec(path: &Path, b: &[u8], pos: usize) -> Result<(Vec<f64>, usize), IoError> {
    check_class(path, b, pos, VEC_FILE_CLASSID, "Vec")?;
    if b.len() < pos + 8 {
        return Err(truncated(path, b.len(), pos as u64 + 8));
    }
    let n = be_i32(b, pos + 4);
    if n < 0 {
        return Err(negative(path, "the vector length", n as i64));
    }
    let end = pos as u64 + 8 + 8 * n as u64;
    if (b.len() as u64) < end {
        return Err(truncated(path, b.len(), end));
    }
    let mut v = Vec::with_capacity(n as usize);
    for k in 0..n as usize {
        let x = be_f64(b, pos + 8 + 8 * k);
        if !x.is_finite() {
            return Err(IoError::NotFiniteBinary {
                path: path.to_path_buf(),
                what: format!("entry {k} of the Vec at byte {pos}"),
            });
        }
        v.push(x);
    }
    Ok((v, end as usize))
}

/// Reads the first PETSc binary Vec of a file (bytes after it are ignored;
/// [`read_petsc_vecs`] reads them all).
pub fn read_petsc_vec(path: impl AsRef<Path>) -> Result<Vec<f64>, IoError> {
    let path = path.as_ref();
    let b = read_all(path)?;
    Ok(parse_vec(path, &b, 0)?.0)
}

/// Reads every PETSc binary Vec stored one after another in a file (how a
/// near-null space is commonly saved: one `VecView` per mode). Anything after
/// the last Vec that is not a whole Vec is an error.
pub fn read_petsc_vecs(path: impl AsRef<Path>) -> Result<Vec<Vec<f64>>, IoError> {
    let path = path.as_ref();
    let b = read_all(path)?;
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let (v, next) = parse_vec(path, &b, pos)?;
        out.push(v);
        pos = next;
        if pos == b.len() {
            return Ok(out);
        }
    }
}

/// Writes one PETSc binary Vec.
pub fn write_petsc_vec(path: impl AsRef<Path>, v: &[f64]) -> Result<(), IoError> {
    write_petsc_vecs(path, &[v])
}

/// Writes several PETSc binary Vecs one after another (read back by [`read_petsc_vecs`]).
pub fn write_petsc_vecs<V: AsRef<[f64]>>(path: impl AsRef<Path>, vecs: &[V]) -> Result<(), IoError> {
    let path = path.as_ref();
    let lens = vecs
        .iter()
        .map(|v| to_i32(path, "the vector length", v.as_ref().len()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut w = create(path)?;
    let mut out = BeWriter { w: &mut w, path };
    for (v, n) in vecs.iter().zip(lens) {
        out.i32(VEC_FILE_CLASSID)?;
        out.i32(n)?;
        out.f64s(v.as_ref())?;
    }
    finish(w, path)
}

/// The class id of the first object in a PETSc binary file (reads four bytes).
pub(crate) fn first_class(bytes: &[u8]) -> Option<i32> {
    match bytes.len() {
        0..=3 => None,
        4..=7 => Some(be_i32(bytes, 0)),
        _ if be_i32(bytes, 0) == 0 => Some(be_i32(bytes, 4)),
        _ => Some(be_i32(bytes, 0)),
    }
}

/// One process's block rows of a PETSc binary Mat ([`read_petsc_mat_rows`]).
#[derive(Clone, Debug)]
pub struct PetscRows {
    /// Block rows and block columns of the whole matrix.
    pub block_rows: usize,
    pub block_cols: usize,
    /// The block rows read.
    pub rows: std::ops::Range<usize>,
    /// Those rows (`rows.len()` of them), with global block columns.
    pub a: BlockCsr,
}

/// Reads only block rows `pick(block_rows)` of the PETSc binary Mat at
/// `path`: the header and the row lengths (4 bytes a scalar row), then, by
/// seeking, the column indices and values of those rows and nothing else.
/// This is how each rank of a distributed run reads its part of an operator
/// (PETSc's `MatLoad` with a row layout).
///
/// The block shape is `Given`, or the one `<path>.info` records; `Infer`
/// without such a line is an error, since inferring it needs the whole
/// pattern. The rows read get [`read_petsc_mat`]'s checks (class id, sizes
/// the file can hold, row lengths summing to the nonzero count, columns in
/// range, finite values) and its grouping into blocks (columns sorted,
/// duplicates summed).
pub fn read_petsc_mat_rows(
    path: impl AsRef<Path>,
    block: BlockSpec,
    pick: impl FnOnce(usize) -> std::ops::Range<usize>,
) -> Result<PetscRows, IoError> {
    use std::io::{Read, Seek, SeekFrom};
    let path = path.as_ref();
    let (mut f, file_len) = crate::mm::open(path)?;
    let mut read_at = |pos: u64, buf: &mut [u8]| -> Result<(), IoError> {
        f.seek(SeekFrom::Start(pos))
            .and_then(|_| f.read_exact(buf))
            .map_err(|e| IoError::os("read", path, e))
    };
    let mut head = [0u8; 16];
    if file_len < 16 {
        let mut b = vec![0u8; file_len as usize];
        read_at(0, &mut b)?;
        check_class(path, &b, 0, MAT_FILE_CLASSID, "Mat")?;
        return Err(truncated(path, b.len(), 16));
    }
    read_at(0, &mut head)?;
    check_class(path, &head, 0, MAT_FILE_CLASSID, "Mat")?;
    let (m, n, nz) = (be_i32(&head, 4), be_i32(&head, 8), be_i32(&head, 12));
    if m < 0 {
        return Err(negative(path, "the row count", m as i64));
    }
    if n < 0 {
        return Err(negative(path, "the column count", n as i64));
    }
    if nz == -1 {
        return Err(IoError::UnsupportedBinary {
            path: path.to_path_buf(),
            what: "a PETSc Mat in dense binary format",
            todo: "convert it to AIJ before MatView",
        });
    }
    if nz < 0 {
        return Err(negative(path, "the nonzero count", nz as i64));
    }
    let (m, n, nzu) = (m as usize, n as usize, nz as usize);
    check_mat_claims(path, file_len, m, n, nzu)?;
    let (br, bc) = match block {
        BlockSpec::Given(br, bc) => {
            check_block(path, br, bc, m, n, || "the requested block size".into())?;
            (br, bc)
        }
        BlockSpec::Infer => match info_block(path)? {
            Some((br, bc, origin)) => {
                check_block(path, br, bc, m, n, || origin)?;
                (br, bc)
            }
            None => {
                return Err(IoError::UnsupportedBinary {
                    path: path.to_path_buf(),
                    what: "inferring the block size while reading only some rows",
                    todo: "give the block size, or write `-matload_block_size <b>` into the file's .info",
                })
            }
        },
    };
    let mut lens = vec![0u8; 4 * m];
    read_at(16, &mut lens)?;
    let mut row_ptr = Vec::with_capacity(m + 1);
    row_ptr.push(0usize);
    let mut sum: i64 = 0;
    for r in 0..m {
        let l = be_i32(&lens, 4 * r);
        if l < 0 {
            return Err(negative(path, format!("the length of row {r}"), l as i64));
        }
        sum += l as i64;
        row_ptr.push(sum.min(nz as i64) as usize);
    }
    drop(lens);
    if sum != nz as i64 {
        return Err(IoError::RowLengthSum {
            path: path.to_path_buf(),
            sum,
            nz: nz as i64,
        });
    }
    let (block_rows, block_cols) = (m / br, n / bc);
    let rows = pick(block_rows);
    if rows.start > rows.end || rows.end > block_rows {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!("block rows {rows:?} were asked of a matrix of {block_rows}"),
        });
    }
    let (s0, s1) = (rows.start * br, rows.end * br);
    let (k0, k1) = (row_ptr[s0], row_ptr[s1]);
    let mut cbytes = vec![0u8; 4 * (k1 - k0)];
    read_at(16 + 4 * m as u64 + 4 * k0 as u64, &mut cbytes)?;
    let mut vbytes = vec![0u8; 8 * (k1 - k0)];
    read_at(16 + 4 * m as u64 + 4 * nzu as u64 + 8 * k0 as u64, &mut vbytes)?;
    let mut col_idx = Vec::with_capacity(k1 - k0);
    let mut vals = Vec::with_capacity(k1 - k0);
    for r in s0..s1 {
        for k in row_ptr[r]..row_ptr[r + 1] {
            let c = be_i32(&cbytes, 4 * (k - k0));
            if c < 0 || c as usize >= n {
                return Err(IoError::ColumnOutOfRange {
                    path: path.to_path_buf(),
                    row: r,
                    col: c as i64,
                    ncols: n,
                });
            }
            let v = be_f64(&vbytes, 8 * (k - k0));
            if !v.is_finite() {
                return Err(IoError::NotFiniteBinary {
                    path: path.to_path_buf(),
                    what: format!("the value at row {r}, column {c} (0-based)"),
                });
            }
            col_idx.push(c as u32);
            vals.push(v);
        }
    }
    let local_ptr: Vec<usize> = row_ptr[s0..=s1].iter().map(|&k| k - k0).collect();
    let a = BlockCsr::from_scalar_csr(s1 - s0, n, &local_ptr, &col_idx, &vals, Some((br, bc)))
        .map_err(|e| crate::scalar::sparse_error(path, e))?;
    Ok(PetscRows {
        block_rows,
        block_cols,
        rows,
        a,
    })
}

/// Entries `pick(n)` of the first PETSc binary Vec of a file (`n` its
/// length), read without the rest: the 8-byte header, then a seek to the
/// range. [`read_petsc_vec`]'s checks (class id, length the file holds,
/// finite values) on what is read. Returns `n` and the entries.
pub fn read_petsc_vec_range(
    path: impl AsRef<Path>,
    pick: impl FnOnce(usize) -> std::ops::Range<usize>,
) -> Result<(usize, Vec<f64>), IoError> {
    use std::io::{Read, Seek, SeekFrom};
    let path = path.as_ref();
    let (mut f, file_len) = crate::mm::open(path)?;
    let mut head = vec![0u8; file_len.min(8) as usize];
    f.read_exact(&mut head).map_err(|e| IoError::os("read", path, e))?;
    check_class(path, &head, 0, VEC_FILE_CLASSID, "Vec")?;
    if head.len() < 8 {
        return Err(truncated(path, head.len(), 8));
    }
    let n = be_i32(&head, 4);
    if n < 0 {
        return Err(negative(path, "the vector length", n as i64));
    }
    let n = n as usize;
    let end = 8 + 8 * n as u64;
    if file_len < end {
        return Err(truncated(path, file_len as usize, end));
    }
    let range = pick(n);
    if range.start > range.end || range.end > n {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!("entries {range:?} were asked of a Vec of {n}"),
        });
    }
    let mut b = vec![0u8; 8 * range.len()];
    f.seek(SeekFrom::Start(8 + 8 * range.start as u64))
        .and_then(|_| f.read_exact(&mut b))
        .map_err(|e| IoError::os("read", path, e))?;
    let mut v = Vec::with_capacity(range.len());
    for (k, c) in b.chunks_exact(8).enumerate() {
        let x = be_f64(c, 0);
        if !x.is_finite() {
            return Err(IoError::NotFiniteBinary {
                path: path.to_path_buf(),
                what: format!("entry {} of the Vec at byte 0", range.start + k),
            });
        }
        v.push(x);
    }
    Ok((n, v))
}
