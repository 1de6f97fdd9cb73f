//! Typed errors of the block-sparse layer.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SparseError {
    #[error("row pointer array has length {got}, expected nrows + 1 = {expected}")]
    RowPtrLength { got: usize, expected: usize },
    #[error("row pointers must start at 0 and never decrease (row {row})")]
    RowPtrNotMonotone { row: usize },
    #[error("row pointers end at {got} but there are {nnz} column indices")]
    RowPtrEnd { got: usize, nnz: usize },
    #[error("block column {col} in block row {row} is outside the {ncols} block columns")]
    ColumnOutOfRange { row: usize, col: usize, ncols: usize },
    #[error("block columns of block row {row} are not strictly increasing")]
    ColumnsNotSorted { row: usize },
    #[error("value array has length {got}, expected {expected} ({nnzb} blocks of {br}x{bc})")]
    ValuesLength {
        got: usize,
        expected: usize,
        nnzb: usize,
        br: usize,
        bc: usize,
    },
    #[error("block size must be at least 1x1, got {br}x{bc}")]
    ZeroBlockSize { br: usize, bc: usize },
    #[error("dimension mismatch: {what}")]
    Dimension { what: String },
    #[error("matrix is singular or not positive definite: {what}")]
    Singular { what: String },
    #[error("a product's block falls outside the output pattern: the schedule was not built for these matrices (damaged or forged); re-run the inspector")]
    PatternNotClosed,
    #[error("entry {entry} (row {row}, column {col}) is outside the {rows}x{cols} matrix")]
    EntryOutOfRange {
        entry: usize,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    },
    #[error("{br}x{bc} blocks do not tile a {rows}x{cols} matrix; give a block size that divides both dimensions")]
    BlockDoesNotTile {
        br: usize,
        bc: usize,
        rows: usize,
        cols: usize,
    },
    #[error("{what} is too large for this machine's memory")]
    TooLarge { what: String },
    #[error("value is not finite (NaN or infinity) in {what}")]
    NotFinite { what: String },
}
