//! Typed errors of the file layer.
//!
//! Every message is one sentence that names the file (and, for Matrix Market
//! text, the 1-based line as `file:line:`), says what is wrong and what to do.
use ptap_sparse::SparseError;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum IoError {
    /// The operating system refused to open, read, create or write a file.
    #[error("cannot {action} {}: {err}; check that the path exists and is accessible", .path.display())]
    Os {
        action: &'static str,
        path: PathBuf,
        err: std::io::Error,
    },

    /// A Matrix Market banner, size line, `%ptap` comment or PETSc `.info`
    /// line that cannot be understood.
    #[error("{}:{line}: {msg}", .path.display())]
    Malformed { path: PathBuf, line: usize, msg: String },

    /// A well-formed Matrix Market file of a kind ptap does not read.
    #[error(
        "{}:{line}: {what} is not supported; ptap reads Matrix Market matrices with `real` or `integer` values, \
         `general` or `symmetric`{hint}",
        .path.display()
    )]
    Unsupported {
        path: PathBuf,
        line: usize,
        what: String,
        hint: &'static str,
    },

    /// A data line with the wrong number of fields.
    #[error("{}:{line}: expected {expected} fields ({layout}), found {got}; fix the line", .path.display())]
    Fields {
        path: PathBuf,
        line: usize,
        expected: usize,
        got: usize,
        layout: &'static str,
    },

    /// The file ends before the number of entries its size line promises.
    #[error(
        "{}:{line}: the size line promises {expected} entries but the file ends after {got} (line {last}); \
         complete the file or correct the count",
        .path.display()
    )]
    TooFewEntries {
        path: PathBuf,
        line: usize,
        expected: usize,
        got: usize,
        last: usize,
    },

    /// An entry beyond the number the size line promises.
    #[error(
        "{}:{line}: entry beyond the {expected} the size line promises; remove it or correct the count",
        .path.display()
    )]
    TooManyEntries {
        path: PathBuf,
        line: usize,
        expected: usize,
    },

    /// A row or column index of 0, negative, or beyond the matrix size.
    #[error(
        "{}:{line}: {axis} index {index} is outside 1..={size}; Matrix Market indices are 1-based and bounded \
         by the size line",
        .path.display()
    )]
    IndexOutOfRange {
        path: PathBuf,
        line: usize,
        axis: &'static str,
        index: i64,
        size: usize,
    },

    /// A token that is not a number of the expected kind.
    #[error("{}:{line}: cannot read `{token}` as {what}; fix the entry", .path.display())]
    BadNumber {
        path: PathBuf,
        line: usize,
        token: String,
        what: &'static str,
    },

    /// A NaN or infinite value in a Matrix Market file.
    #[error("{}:{line}: value `{token}` is not finite; ptap reads only finite numbers, so fix the entry", .path.display())]
    NotFinite { path: PathBuf, line: usize, token: String },

    /// A NaN or infinite value in a PETSc binary file.
    #[error("{}: {what} is not finite (NaN or infinity); ptap reads only finite numbers, so fix the writer", .path.display())]
    NotFiniteBinary { path: PathBuf, what: String },

    /// A block size that does not tile the matrix.
    #[error(
        "block size {br}x{bc} ({origin}) does not tile the {rows}x{cols} matrix in {}; give block dimensions of at \
         least 1 that divide the row and column counts",
        .path.display()
    )]
    BlockSize {
        path: PathBuf,
        br: usize,
        bc: usize,
        rows: usize,
        cols: usize,
        origin: String,
    },

    /// A binary file whose class id is not the one expected.
    #[error("{} is not a PETSc {expected} file (class id {classid}{note}); pass a file written by {expected}View", .path.display())]
    NotPetsc {
        path: PathBuf,
        expected: &'static str,
        classid: i32,
        note: String,
    },

    /// A binary file shorter than its header says.
    #[error("{} ends after {len} bytes but the header promises {promised}; the file is truncated, write it again", .path.display())]
    Truncated { path: PathBuf, len: u64, promised: u64 },

    /// A negative size or length in a PETSc binary header.
    #[error("{}: {what} is {value}, which is negative; the file is corrupt, write it again", .path.display())]
    NegativeSize { path: PathBuf, what: String, value: i64 },

    /// A PETSc column index outside `0..ncols`.
    #[error(
        "{}: column index {col} in row {row} is outside the {ncols} columns; the file is corrupt, write it again",
        .path.display()
    )]
    ColumnOutOfRange {
        path: PathBuf,
        row: usize,
        col: i64,
        ncols: usize,
    },

    /// PETSc row lengths that do not add up to the stored nonzero count.
    #[error(
        "{}: the row lengths sum to {sum} but the header promises {nz} nonzeros; the file is corrupt, write it again",
        .path.display()
    )]
    RowLengthSum { path: PathBuf, sum: i64, nz: i64 },

    /// A PETSc binary variant ptap does not read (dense storage, 64-bit indices).
    #[error("{}: {what} is not supported; {todo}", .path.display())]
    UnsupportedBinary {
        path: PathBuf,
        what: &'static str,
        todo: &'static str,
    },

    /// Neither a Matrix Market nor a PETSc binary file.
    #[error(
        "{} is neither a Matrix Market file (no `%%MatrixMarket` banner) nor a PETSc binary Mat or Vec; \
         convert it to one of those",
        .path.display()
    )]
    UnknownFormat { path: PathBuf },

    /// Data of the wrong shape for what was asked (a matrix where a vector was
    /// expected, near-null vectors of different lengths, a buffer of the wrong length).
    #[error("{}: {what}", .path.display())]
    Shape { path: PathBuf, what: String },

    /// `symmetric` output asked for a matrix that is not square.
    #[error(
        "cannot write {} as symmetric: the matrix is {rows}x{cols}, not square; write it as general",
        .path.display()
    )]
    NotSquare { path: PathBuf, rows: usize, cols: usize },

    /// `symmetric` output asked for a matrix that is not symmetric.
    #[error(
        "cannot write {} as symmetric: entry ({row}, {col}) is {a_ij:e} but its mirror is {a_ji:e}; write it as general",
        .path.display()
    )]
    NotSymmetric {
        path: PathBuf,
        row: usize,
        col: usize,
        a_ij: f64,
        a_ji: f64,
    },

    /// A header that claims more than a file of this size can hold (checked
    /// before anything is allocated).
    #[error(
        "{}: the header claims {claim}, more than a file of {file_len} bytes can hold; the file is truncated or its \
         header is wrong, so fix it",
        .path.display()
    )]
    HeaderClaim {
        path: PathBuf,
        claim: String,
        file_len: u64,
    },

    /// A path that is not a regular file (a FIFO, a device, a directory).
    #[error("{} is {kind}, not a regular file; pass a regular file", .path.display())]
    NotRegular { path: PathBuf, kind: &'static str },

    /// Sizes beyond what the format or the in-memory types can hold.
    #[error("{}: {what} is too large; {todo}", .path.display())]
    TooLarge {
        path: PathBuf,
        what: String,
        todo: &'static str,
    },

    /// The block-sparse layer rejected the assembled matrix (a bug in this crate).
    #[error("{}: building the block matrix failed ({err}); please report this", .path.display())]
    Sparse { path: PathBuf, err: SparseError },
}

impl IoError {
    pub(crate) fn os(action: &'static str, path: &std::path::Path, err: std::io::Error) -> Self {
        IoError::Os {
            action,
            path: path.to_path_buf(),
            err,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            IoError::Os { path, .. }
            | IoError::Malformed { path, .. }
            | IoError::Unsupported { path, .. }
            | IoError::Fields { path, .. }
            | IoError::TooFewEntries { path, .. }
            | IoError::TooManyEntries { path, .. }
            | IoError::IndexOutOfRange { path, .. }
            | IoError::BadNumber { path, .. }
            | IoError::NotFinite { path, .. }
            | IoError::NotFiniteBinary { path, .. }
            | IoError::BlockSize { path, .. }
            | IoError::NotPetsc { path, .. }
            | IoError::Truncated { path, .. }
            | IoError::NegativeSize { path, .. }
            | IoError::ColumnOutOfRange { path, .. }
            | IoError::RowLengthSum { path, .. }
            | IoError::UnsupportedBinary { path, .. }
            | IoError::UnknownFormat { path }
            | IoError::Shape { path, .. }
            | IoError::NotSquare { path, .. }
            | IoError::NotSymmetric { path, .. }
            | IoError::TooLarge { path, .. }
            | IoError::HeaderClaim { path, .. }
            | IoError::NotRegular { path, .. }
            | IoError::Sparse { path, .. } => path,
        }
    }

    /// The 1-based line of a Matrix Market (or `.info`) error, where there is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            IoError::Malformed { line, .. }
            | IoError::Unsupported { line, .. }
            | IoError::Fields { line, .. }
            | IoError::TooFewEntries { line, .. }
            | IoError::TooManyEntries { line, .. }
            | IoError::IndexOutOfRange { line, .. }
            | IoError::BadNumber { line, .. }
            | IoError::NotFinite { line, .. } => Some(*line),
            _ => None,
        }
    }
}
