//! Matrix Market text: sparse `coordinate` matrices, dense `array` vectors and
//! multi-column arrays.
//!
//! Reading streams the file through one `BufReader` and one reused line buffer;
//! entries go into flat triplet arrays, so memory is about 16 bytes per entry
//! plus the result.
use crate::error::IoError;
use crate::scalar::{check_block, sparse_error, to_block, zeros, Triplets};
use crate::BlockSpec;
use ptap_sparse::infer_block_shape;
use ptap_sparse::BlockCsr;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Coordinate,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
}

/// What the caller will accept, so the banner can be refused before any data is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    SparseMatrix,
    Dense,
}

struct Header {
    layout: Layout,
    symmetry: Symmetry,
    rows: usize,
    cols: usize,
    /// Entries the data section holds (for `array`, implied by the size line).
    entries: usize,
    size_line: usize,
    /// `%ptap block br bc` and its line.
    hint: Option<(usize, usize, usize)>,
}

/// Lines of a text file, 1-based numbering, `\n` or `\r\n` endings, one reused buffer.
pub(crate) struct Lines<R> {
    r: R,
    pub buf: Vec<u8>,
    pub line: usize,
}

impl<R: BufRead> Lines<R> {
    pub fn new(r: R) -> Self {
        Self {
            r,
            buf: Vec::with_capacity(128),
            line: 0,
        }
    }

    /// Reads the next line into `buf` (without its ending); `false` at the end of the file.
    pub fn advance(&mut self, path: &Path) -> Result<bool, IoError> {
        self.buf.clear();
        let n = self
            .r
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| IoError::os("read", path, e))?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(true)
    }
}

/// An `io::Error` of [`crate::fsio`] as this crate's typed error: a refused
/// non-regular file names its kind, anything else is the OS's error.
fn file_error(action: &'static str, path: &Path, e: std::io::Error) -> IoError {
    match crate::fsio::not_regular_kind(&e) {
        Some(kind) => IoError::NotRegular {
            path: path.to_path_buf(),
            kind,
        },
        None => IoError::os(action, path, e),
    }
}

/// Opens `path` for reading and returns it with its length, refusing anything
/// but a regular file ([`crate::fsio::open_regular`]: a FIFO never blocks).
pub(crate) fn open(path: &Path) -> Result<(File, u64), IoError> {
    let f = crate::fsio::open_regular(path).map_err(|e| file_error("open", path, e))?;
    let len = f.metadata().map_err(|e| IoError::os("read", path, e))?.len();
    Ok((f, len))
}

/// Creates (or truncates) `path` for writing; refuses to write through a
/// symbolic link or into a FIFO, device or directory
/// ([`crate::fsio::check_replaceable`]).
pub(crate) fn create(path: &Path) -> Result<BufWriter<File>, IoError> {
    crate::fsio::check_replaceable(path).map_err(|e| file_error("create", path, e))?;
    let f = File::create(path).map_err(|e| IoError::os("create", path, e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

/// Most rows (or columns) a sparse file with `stored` scalar entries may
/// claim: 64 per entry, plus 64. More means nearly every row is empty, which no
/// block operator or prolongator is, and it would cost memory the file does
/// not pay for.
pub(crate) fn max_dim(stored: u64) -> u64 {
    stored.saturating_mul(64).saturating_add(64)
}

pub(crate) fn claim(path: &Path, claim: String, file_len: u64) -> IoError {
    IoError::HeaderClaim {
        path: path.to_path_buf(),
        claim,
        file_len,
    }
}

pub(crate) fn finish(w: BufWriter<File>, path: &Path) -> Result<(), IoError> {
    w.into_inner().map_err(|e| IoError::os("write", path, e.into_error()))?;
    Ok(())
}

#[inline]
fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

/// Up to `N` tokens of a line and the total count.
#[inline]
fn split_n<const N: usize>(line: &[u8]) -> ([&[u8]; N], usize) {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    for t in tokens(line) {
        if n < N {
            out[n] = t;
        }
        n += 1;
    }
    (out, n)
}

fn shown(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.into_owned()
    }
}

/// A decimal integer with an optional sign; `None` when malformed or beyond `i64`.
#[inline]
fn parse_int(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.first()? {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((d - b'0') as i64)?;
    }
    Some(if neg { -v } else { v })
}

/// A real number, also in Fortran's `1.5D+03` notation. `None` when malformed.
#[inline]
fn parse_real(tok: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    match s.parse::<f64>() {
        Ok(v) => Some(v),
        Err(_) if s.bytes().any(|b| b == b'd' || b == b'D') => s.replace(['d', 'D'], "e").parse().ok(),
        Err(_) => None,
    }
}

fn malformed(path: &Path, line: usize, msg: impl Into<String>) -> IoError {
    IoError::Malformed {
        path: path.to_path_buf(),
        line,
        msg: msg.into(),
    }
}

fn read_size(path: &Path, line: usize, tok: &[u8]) -> Result<usize, IoError> {
    parse_int(tok)
        .filter(|&v| v >= 0)
        .map(|v| v as usize)
        .ok_or_else(|| IoError::BadNumber {
            path: path.to_path_buf(),
            line,
            token: shown(tok),
            what: "a non-negative size",
        })
}

const BANNER: &str = "`%%MatrixMarket matrix <coordinate|array> <real|integer> <general|symmetric>`";

fn read_header<R: BufRead>(
    lines: &mut Lines<R>,
    path: &Path,
    purpose: Purpose,
    file_len: u64,
) -> Result<Header, IoError> {
    if !lines.advance(path)? {
        return Err(malformed(
            path,
            1,
            format!("the file is empty; a Matrix Market file starts with the banner {BANNER}"),
        ));
    }
    let (t, n) = split_n::<5>(&lines.buf);
    if n == 0 || !t[0].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Err(malformed(
            path,
            1,
            format!(
                "expected the banner {BANNER}, found `{}`; is this a Matrix Market file?",
                shown(&lines.buf)
            ),
        ));
    }
    if n != 5 {
        return Err(malformed(
            path,
            1,
            format!(
                "the banner has {} words after `%%MatrixMarket`, expected 4 as in {BANNER}",
                n - 1
            ),
        ));
    }
    let unsupported = |what: &str, hint: &'static str| IoError::Unsupported {
        path: path.to_path_buf(),
        line: 1,
        what: what.to_string(),
        hint,
    };
    let bad_word = |which: &str, tok: &[u8]| {
        malformed(
            path,
            1,
            format!("unknown {which} `{}` in the banner; expected {BANNER}", shown(tok)),
        )
    };
    if !t[1].eq_ignore_ascii_case(b"matrix") {
        return Err(unsupported(
            &format!("the Matrix Market object `{}`", shown(t[1])),
            "; write a `matrix`",
        ));
    }
    let layout = if t[2].eq_ignore_ascii_case(b"coordinate") {
        Layout::Coordinate
    } else if t[2].eq_ignore_ascii_case(b"array") {
        Layout::Array
    } else {
        return Err(bad_word("format", t[2]));
    };
    if t[3].eq_ignore_ascii_case(b"pattern") {
        return Err(unsupported(
            "the `pattern` field (entries without values)",
            "; give every entry a value",
        ));
    } else if t[3].eq_ignore_ascii_case(b"complex") {
        return Err(unsupported("the `complex` field", "; store the real part"));
    } else if !(t[3].eq_ignore_ascii_case(b"real")
        || t[3].eq_ignore_ascii_case(b"integer")
        || t[3].eq_ignore_ascii_case(b"double"))
    {
        return Err(bad_word("field", t[3]));
    }
    let symmetry = if t[4].eq_ignore_ascii_case(b"general") {
        Symmetry::General
    } else if t[4].eq_ignore_ascii_case(b"symmetric") {
        Symmetry::Symmetric
    } else if t[4].eq_ignore_ascii_case(b"skew-symmetric") {
        return Err(unsupported(
            "`skew-symmetric` storage",
            "; write both triangles as `general`",
        ));
    } else if t[4].eq_ignore_ascii_case(b"hermitian") {
        return Err(unsupported(
            "`hermitian` storage",
            "; write both triangles as `general`",
        ));
    } else {
        return Err(bad_word("symmetry", t[4]));
    };

    // Comments (where `%ptap block br bc` may sit) and blank lines up to the size line.
    let mut hint = None;
    loop {
        if !lines.advance(path)? {
            return Err(malformed(
                path,
                lines.line + 1,
                "the file ends before its size line; add `rows columns entries` (coordinate) or `rows columns` \
                 (array)",
            ));
        }
        let line = lines.line;
        let buf = &lines.buf;
        let first = buf.iter().position(|b| !b.is_ascii_whitespace());
        match first {
            None => continue,
            Some(p) if buf[p] == b'%' => {
                let body = &buf[p..];
                let body = &body[body.iter().position(|&b| b != b'%').unwrap_or(body.len())..];
                let (w, n) = split_n::<4>(body);
                if n >= 2 && w[0].eq_ignore_ascii_case(b"ptap") && w[1].eq_ignore_ascii_case(b"block") {
                    let parse = |tok: &[u8]| parse_int(tok).filter(|&v| v >= 1).map(|v| v as usize);
                    match (n, parse(w[2]), parse(w[3])) {
                        (4, Some(br), Some(bc)) => hint = Some((br, bc, line)),
                        _ => {
                            return Err(malformed(
                                path,
                                line,
                                "the comment must read `%ptap block <rows> <cols>` with positive block \
                                 dimensions; fix or delete it",
                            ))
                        }
                    }
                }
            }
            Some(_) => break,
        }
    }
    let size_line = lines.line;
    let want = match layout {
        Layout::Coordinate => 3,
        Layout::Array => 2,
    };
    let (t, n) = split_n::<3>(&lines.buf);
    if n != want {
        return Err(IoError::Fields {
            path: path.to_path_buf(),
            line: size_line,
            expected: want,
            got: n,
            layout: match layout {
                Layout::Coordinate => "the size line `rows columns entries`",
                Layout::Array => "the size line `rows columns`",
            },
        });
    }
    let rows = read_size(path, size_line, t[0])?;
    let cols = read_size(path, size_line, t[1])?;
    if symmetry == Symmetry::Symmetric && rows != cols {
        return Err(malformed(
            path,
            size_line,
            format!(
                "a `symmetric` matrix must be square, but the size line gives {rows}x{cols}; write it as `general`"
            ),
        ));
    }
    let too_large = |what: String| IoError::TooLarge {
        path: path.to_path_buf(),
        what,
        todo: "ptap's scalar indices are 32-bit",
    };
    if rows > u32::MAX as usize || cols > u32::MAX as usize {
        return Err(too_large(format!("the size {rows}x{cols} on line {size_line}")));
    }
    let entries = match layout {
        Layout::Coordinate => read_size(path, size_line, t[2])?,
        Layout::Array => match symmetry {
            Symmetry::General => rows.checked_mul(cols),
            Symmetry::Symmetric => rows.checked_mul(rows + 1).map(|v| v / 2),
        }
        .ok_or_else(|| too_large(format!("the dense size {rows}x{cols} on line {size_line}")))?,
    };
    // The file's size bounds what the size line may claim, before anything is
    // allocated: a coordinate entry takes at least 6 bytes (`1 1 1` and a line
    // end; 5 for the last), an array value 2; and the row and column counts are
    // bounded by the entries (`max_dim`).
    let (per_entry, layout_name) = match layout {
        Layout::Coordinate => (6u64, "entries"),
        Layout::Array => (2u64, "values"),
    };
    if (entries as u64).saturating_mul(per_entry) > file_len.saturating_add(1) {
        return Err(claim(
            path,
            format!("{entries} {layout_name} on line {size_line}"),
            file_len,
        ));
    }
    if layout == Layout::Coordinate {
        let stored = if symmetry == Symmetry::Symmetric {
            2 * entries as u64
        } else {
            entries as u64
        };
        // A dense read (a near-null space, a vector) allocates rows x cols: sparse
        // vectors are fine up to 2^24 values (128 MB), beyond that the entries bound it.
        let dense_cap = max_dim(stored).max(1 << 24);
        let too_many = match purpose {
            Purpose::SparseMatrix => rows as u64 > max_dim(stored) || cols as u64 > max_dim(stored),
            Purpose::Dense => (rows as u64).saturating_mul(cols as u64) > dense_cap,
        };
        if too_many {
            return Err(claim(
                path,
                format!("a {rows}x{cols} matrix with {entries} entries on line {size_line}"),
                file_len,
            ));
        }
    }
    Ok(Header {
        layout,
        symmetry,
        rows,
        cols,
        entries,
        size_line,
        hint,
    })
}

/// Advances to the next data line, skipping blank and `%` lines; `false` at the end.
#[inline]
fn next_data<R: BufRead>(lines: &mut Lines<R>, path: &Path) -> Result<bool, IoError> {
    while lines.advance(path)? {
        match lines.buf.iter().find(|b| !b.is_ascii_whitespace()) {
            None | Some(b'%') => continue,
            Some(_) => return Ok(true),
        }
    }
    Ok(false)
}

fn too_few(path: &Path, h: &Header, got: usize, last: usize) -> IoError {
    IoError::TooFewEntries {
        path: path.to_path_buf(),
        line: h.size_line,
        expected: h.entries,
        got,
        last,
    }
}

fn too_many(path: &Path, h: &Header, line: usize) -> IoError {
    IoError::TooManyEntries {
        path: path.to_path_buf(),
        line,
        expected: h.entries,
    }
}

#[inline]
fn read_value(path: &Path, line: usize, tok: &[u8]) -> Result<f64, IoError> {
    match parse_real(tok) {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(IoError::NotFinite {
            path: path.to_path_buf(),
            line,
            token: shown(tok),
        }),
        None => Err(IoError::BadNumber {
            path: path.to_path_buf(),
            line,
            token: shown(tok),
            what: "a real number",
        }),
    }
}

#[inline]
fn read_index(path: &Path, line: usize, tok: &[u8], axis: &'static str, size: usize) -> Result<u32, IoError> {
    let v = parse_int(tok).ok_or_else(|| IoError::BadNumber {
        path: path.to_path_buf(),
        line,
        token: shown(tok),
        what: "an integer index",
    })?;
    if v < 1 || v as u64 > size as u64 {
        return Err(IoError::IndexOutOfRange {
            path: path.to_path_buf(),
            line,
            axis,
            index: v,
            size,
        });
    }
    Ok((v - 1) as u32)
}

/// The coordinate entries, mirrored for `symmetric` files.
fn read_coordinate<R: BufRead>(
    lines: &mut Lines<R>,
    path: &Path,
    h: &Header,
    file_len: u64,
) -> Result<Triplets, IoError> {
    // Never trust the entry count for the reservation: each entry takes at least 6 bytes.
    let cap = h.entries.min((file_len / 6) as usize + 1);
    let cap = if h.symmetry == Symmetry::Symmetric {
        2 * cap
    } else {
        cap
    };
    let mut t = Triplets::with_capacity(h.rows, h.cols, cap);
    let mut got = 0;
    while next_data(lines, path)? {
        let line = lines.line;
        if got == h.entries {
            return Err(too_many(path, h, line));
        }
        let (f, n) = split_n::<3>(&lines.buf);
        if n != 3 {
            return Err(IoError::Fields {
                path: path.to_path_buf(),
                line,
                expected: 3,
                got: n,
                layout: "`row column value`",
            });
        }
        let i = read_index(path, line, f[0], "row", h.rows)?;
        let j = read_index(path, line, f[1], "column", h.cols)?;
        let v = read_value(path, line, f[2])?;
        t.push(i, j, v);
        if h.symmetry == Symmetry::Symmetric && i != j {
            t.push(j, i, v);
        }
        got += 1;
    }
    if got < h.entries {
        return Err(too_few(path, h, got, lines.line));
    }
    Ok(t)
}

/// The values of an `array` file, returned row-major (the file is column-major;
/// `symmetric` arrays hold the lower triangle column by column).
fn read_array<R: BufRead>(lines: &mut Lines<R>, path: &Path, h: &Header, file_len: u64) -> Result<Vec<f64>, IoError> {
    let mut col_major: Vec<f64> = Vec::with_capacity(h.entries.min((file_len / 2) as usize + 1));
    while next_data(lines, path)? {
        let line = lines.line;
        if col_major.len() == h.entries {
            return Err(too_many(path, h, line));
        }
        let (f, n) = split_n::<1>(&lines.buf);
        if n != 1 {
            return Err(IoError::Fields {
                path: path.to_path_buf(),
                line,
                expected: 1,
                got: n,
                layout: "one value per line",
            });
        }
        col_major.push(read_value(path, line, f[0])?);
    }
    if col_major.len() < h.entries {
        return Err(too_few(path, h, col_major.len(), lines.line));
    }
    let (m, n) = (h.rows, h.cols);
    let mut out = zeros::<f64>(m * n, path, "the dense array")?;
    match h.symmetry {
        Symmetry::General => {
            for j in 0..n {
                for i in 0..m {
                    out[i * n + j] = col_major[j * m + i];
                }
            }
        }
        Symmetry::Symmetric => {
            let mut k = 0;
            for j in 0..n {
                for i in j..m {
                    out[i * n + j] = col_major[k];
                    out[j * n + i] = col_major[k];
                    k += 1;
                }
            }
        }
    }
    Ok(out)
}

/// Reads a sparse Matrix Market matrix into `br x bc` blocks.
///
/// Accepts `%%MatrixMarket matrix coordinate|array real|integer general|symmetric`
/// (words case-insensitive; `double` is taken for `real`, Fortran `D` exponents
/// are understood). A `symmetric` file holds one triangle: every off-diagonal
/// entry `(i, j)` is also stored at `(j, i)` (the diagonal is not doubled; a
/// symmetric file that lists both `(i, j)` and `(j, i)` therefore sums them).
/// **Duplicate entries are summed**, in file order. Blank lines and `%` lines
/// are skipped anywhere after the banner. A dense `array` file stores its
/// nonzero values (exact zeros are dropped). `pattern`, `complex`, `hermitian`
/// and `skew-symmetric` files are refused.
///
/// Scalars are grouped into `br x bc` blocks; a block is stored when at least
/// one of its scalars is in the file, and its other scalars are explicit zeros.
/// The block shape is `block`'s `Given(br, bc)`, or for [`BlockSpec::Infer`]:
/// the `%ptap block <br> <bc>` comment that [`write_matrix_market`] emits if the
/// header has one, else [`infer_block_shape`] of the scalar pattern (exact
/// blocks first, then at least 90% full ones, else 1x1).
///
/// Errors name the file and the 1-based line: a bad banner or size line, too
/// few or too many entries, an index that is 0 or beyond the size, a token that
/// is not a number, a NaN or infinite value, a block shape that does not divide
/// the dimensions.
pub fn read_matrix_market(path: impl AsRef<Path>, block: BlockSpec) -> Result<BlockCsr, IoError> {
    let path = path.as_ref();
    let (f, len) = open(path)?;
    let mut lines = Lines::new(BufReader::with_capacity(1 << 16, f));
    let h = read_header(&mut lines, path, Purpose::SparseMatrix, len)?;
    let t = match h.layout {
        Layout::Coordinate => read_coordinate(&mut lines, path, &h, len)?,
        Layout::Array => {
            // A dense matrix: its nonzeros, row by row (exact zeros are not stored).
            let d = read_array(&mut lines, path, &h, len)?;
            let mut t = Triplets::with_capacity(h.rows, h.cols, d.iter().filter(|v| **v != 0.0).count());
            for (k, &v) in d.iter().enumerate() {
                if v != 0.0 {
                    t.push((k / h.cols) as u32, (k % h.cols) as u32, v);
                }
            }
            t
        }
    };
    let csr = t.into_csr(path)?;
    let (br, bc) = match block {
        BlockSpec::Given(br, bc) => {
            check_block(path, br, bc, h.rows, h.cols, || "the requested block size".into())?;
            (br, bc)
        }
        BlockSpec::Infer => match h.hint {
            Some((br, bc, line)) => {
                check_block(path, br, bc, h.rows, h.cols, || {
                    format!("the `%ptap block` comment on line {line}")
                })?;
                (br, bc)
            }
            None => infer_block_shape(csr.rows, csr.cols, &csr.row_ptr, &csr.col_idx),
        },
    };
    to_block(&csr, br, bc, path)
}

/// The scalar rows, columns and entries a sparse Matrix Market file's header
/// claims, checked against the file's size (see [`crate::read_matrix_header`]).
pub(crate) fn read_mm_header(path: &Path) -> Result<(usize, usize, usize), IoError> {
    let (f, len) = open(path)?;
    let mut lines = Lines::new(BufReader::with_capacity(1 << 12, f));
    let h = read_header(&mut lines, path, Purpose::SparseMatrix, len)?;
    Ok((h.rows, h.cols, h.entries))
}

/// Reads a dense Matrix Market matrix as `(rows, cols, values row-major)`.
///
/// Accepts `array` files (column-major on disk, converted here; `symmetric`
/// ones hold the lower triangle) and `coordinate` files (absent entries are
/// zero, duplicates summed, `symmetric` mirrored), `real` or `integer`.
pub fn read_mm_dense(path: impl AsRef<Path>) -> Result<(usize, usize, Vec<f64>), IoError> {
    let path = path.as_ref();
    let (f, len) = open(path)?;
    let mut lines = Lines::new(BufReader::with_capacity(1 << 16, f));
    let h = read_header(&mut lines, path, Purpose::Dense, len)?;
    let data = match h.layout {
        Layout::Array => read_array(&mut lines, path, &h, len)?,
        Layout::Coordinate => read_coordinate(&mut lines, path, &h, len)?
            .into_csr(path)?
            .to_dense()
            .map_err(|e| sparse_error(path, e))?,
    };
    Ok((h.rows, h.cols, data))
}

/// Reads a Matrix Market vector: a dense (`array`) or sparse (`coordinate`)
/// matrix with one column (or one row).
pub fn read_mm_vector(path: impl AsRef<Path>) -> Result<Vec<f64>, IoError> {
    let path = path.as_ref();
    let (rows, cols, data) = read_mm_dense(path)?;
    if cols != 1 && rows != 1 {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!("the file holds a {rows}x{cols} matrix, not a vector; pass a file with one column"),
        });
    }
    Ok(data)
}

/// Shortest decimal that parses back to the same bits (Rust's `{:e}`), so a
/// write-read round trip is bitwise.
struct Fmt<'a, W: Write> {
    w: &'a mut W,
    path: &'a Path,
}

impl<W: Write> Fmt<'_, W> {
    fn err(&self, e: std::io::Error) -> IoError {
        IoError::os("write", self.path, e)
    }
    fn text(&mut self, s: &str) -> Result<(), IoError> {
        self.w.write_all(s.as_bytes()).map_err(|e| self.err(e))
    }
    #[inline]
    fn entry(&mut self, i: usize, j: usize, v: f64) -> Result<(), IoError> {
        writeln!(self.w, "{} {} {:e}", i + 1, j + 1, v).map_err(|e| self.err(e))
    }
    #[inline]
    fn value(&mut self, v: f64) -> Result<(), IoError> {
        writeln!(self.w, "{v:e}").map_err(|e| self.err(e))
    }
}

/// Relative tolerance (of the largest entry) under which a matrix counts as
/// symmetric for [`write_matrix_market`]'s `symmetric` output.
pub const SYMMETRY_TOLERANCE: f64 = 1e-10;

fn scalar_get(a: &BlockCsr, i: usize, j: usize) -> Option<f64> {
    let (br, bc) = a.block_shape();
    a.pattern()
        .find(i / br, j / bc)
        .map(|k| a.block(k)[(i % br) * bc + j % bc])
}

/// Writes `a` as a Matrix Market `coordinate real` file with a
/// `%ptap block <br> <bc>` comment, every scalar of every stored block
/// (explicit zeros included, so the block pattern survives), in row-major order,
/// each value as the shortest decimal that reads back to the same bits.
///
/// With `symmetric`, writes `symmetric` storage: only the lower triangle
/// (`i >= j`). Refuses a matrix that is not square, or whose entries differ
/// from their mirrors by more than [`SYMMETRY_TOLERANCE`] times the largest
/// entry (a missing mirror counts as zero), since the upper triangle is dropped.
///
/// Non-finite values are written as they are (`NaN`, `inf`) for inspection;
/// the readers refuse them.
pub fn write_matrix_market(path: impl AsRef<Path>, a: &BlockCsr, symmetric: bool) -> Result<(), IoError> {
    let path = path.as_ref();
    let (br, bc) = a.block_shape();
    let (m, n) = (a.scalar_rows(), a.scalar_cols());
    let p = a.pattern();
    let mut entries = a.values().len();
    if symmetric {
        if m != n {
            return Err(IoError::NotSquare {
                path: path.to_path_buf(),
                rows: m,
                cols: n,
            });
        }
        let tol = SYMMETRY_TOLERANCE * a.values().iter().fold(0.0f64, |s, v| s.max(v.abs()));
        entries = 0;
        for bi in 0..a.nrows() {
            for k in p.row_range(bi) {
                let bj = p.col_idx()[k] as usize;
                let blk = a.block(k);
                for r in 0..br {
                    for c in 0..bc {
                        let (i, j) = (bi * br + r, bj * bc + c);
                        entries += (i >= j) as usize;
                        if i == j {
                            continue;
                        }
                        let (v, w) = (blk[r * bc + c], scalar_get(a, j, i).unwrap_or(0.0));
                        if !((v - w).abs() <= tol) {
                            return Err(IoError::NotSymmetric {
                                path: path.to_path_buf(),
                                row: i + 1,
                                col: j + 1,
                                a_ij: v,
                                a_ji: w,
                            });
                        }
                    }
                }
            }
        }
    }
    let mut w = create(path)?;
    let mut out = Fmt { w: &mut w, path };
    out.text(&format!(
        "%%MatrixMarket matrix coordinate real {}\n%ptap block {br} {bc}\n{m} {n} {entries}\n",
        if symmetric { "symmetric" } else { "general" }
    ))?;
    for bi in 0..a.nrows() {
        for r in 0..br {
            let i = bi * br + r;
            for k in p.row_range(bi) {
                let j0 = p.col_idx()[k] as usize * bc;
                if symmetric && j0 > i {
                    break;
                }
                let row = &a.block(k)[r * bc..(r + 1) * bc];
                for (c, &v) in row.iter().enumerate() {
                    if symmetric && j0 + c > i {
                        break;
                    }
                    out.entry(i, j0 + c, v)?;
                }
            }
        }
    }
    finish(w, path)
}

/// Writes a vector as a Matrix Market `array real general` file with one column.
pub fn write_mm_vector(path: impl AsRef<Path>, v: &[f64]) -> Result<(), IoError> {
    write_mm_dense(path, v.len(), 1, v)
}

/// Writes a dense `rows x cols` row-major array as a Matrix Market
/// `array real general` file (column-major on disk, as the format requires).
pub fn write_mm_dense(path: impl AsRef<Path>, rows: usize, cols: usize, data: &[f64]) -> Result<(), IoError> {
    let path = path.as_ref();
    if rows.checked_mul(cols) != Some(data.len()) {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!(
                "cannot write {} values as a {rows}x{cols} array; pass rows * cols values",
                data.len()
            ),
        });
    }
    let mut w = create(path)?;
    let mut out = Fmt { w: &mut w, path };
    out.text(&format!("%%MatrixMarket matrix array real general\n{rows} {cols}\n"))?;
    for j in 0..cols {
        for i in 0..rows {
            out.value(data[i * cols + j])?;
        }
    }
    finish(w, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_reals_parse() {
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"-3"), Some(-3));
        assert_eq!(parse_int(b"+7"), Some(7));
        assert_eq!(parse_int(b"4x"), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"99999999999999999999"), None);
        assert_eq!(parse_real(b"1.5D+03"), Some(1500.0));
        assert_eq!(parse_real(b"-2.5e-1"), Some(-0.25));
        assert!(parse_real(b"nan").unwrap().is_nan());
        assert_eq!(parse_real(b"abc"), None);
    }
}
