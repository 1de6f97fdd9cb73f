//! The scalar intermediate every reader goes through: triplets in file order,
//! sorted into a scalar CSR with duplicates summed, then grouped into blocks of
//! a given or inferred shape. The algorithms are `ptap_sparse::scalar`'s (the
//! in-memory door); this module adds the file's name to their errors.
use crate::error::IoError;
pub use ptap_sparse::scalar::ScalarCsr;
use ptap_sparse::SparseError;
use std::path::Path;

/// Scalar entries `(i, j, v)`, 0-based, in the order they were read.
#[derive(Default)]
pub(crate) struct Triplets {
    pub rows: usize,
    pub cols: usize,
    pub i: Vec<u32>,
    pub j: Vec<u32>,
    pub v: Vec<f64>,
}

impl Triplets {
    pub fn with_capacity(rows: usize, cols: usize, cap: usize) -> Self {
        Self {
            rows,
            cols,
            i: Vec::with_capacity(cap),
            j: Vec::with_capacity(cap),
            v: Vec::with_capacity(cap),
        }
    }

    #[inline]
    pub fn push(&mut self, i: u32, j: u32, v: f64) {
        self.i.push(i);
        self.j.push(j);
        self.v.push(v);
    }

    /// Sorts by `(row, column)` and sums duplicates in file order
    /// ([`ScalarCsr::from_triplets`]).
    pub fn into_csr(self, path: &Path) -> Result<ScalarCsr, IoError> {
        ScalarCsr::from_triplets(self.rows, self.cols, &self.i, &self.j, &self.v).map_err(|e| sparse_error(path, e))
    }
}

/// A sparse-layer error about a file's matrix, with the file named.
pub(crate) fn sparse_error(path: &Path, err: SparseError) -> IoError {
    match err {
        SparseError::TooLarge { what } => IoError::TooLarge {
            path: path.to_path_buf(),
            what,
            todo: "check the file's sizes; this machine cannot hold the arrays they imply",
        },
        err => IoError::Sparse {
            path: path.to_path_buf(),
            err,
        },
    }
}

/// Groups `csr` into `br x bc` blocks ([`ScalarCsr::to_block`]).
pub(crate) fn to_block(csr: &ScalarCsr, br: usize, bc: usize, path: &Path) -> Result<ptap_sparse::BlockCsr, IoError> {
    csr.to_block(br, bc).map_err(|e| sparse_error(path, e))
}

/// A zero-filled vector whose allocation failure is an error rather than an abort
/// (a corrupt size line must not take the process down).
pub(crate) fn zeros<T: Clone + Default>(n: usize, path: &Path, what: &str) -> Result<Vec<T>, IoError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| IoError::TooLarge {
        path: path.to_path_buf(),
        what: format!("{what} ({n})"),
        todo: "check the file's sizes; this machine cannot hold the arrays they imply",
    })?;
    v.resize(n, T::default());
    Ok(v)
}

/// Checks that `(br, bc)` tiles `rows x cols`.
pub(crate) fn check_block(
    path: &Path,
    br: usize,
    bc: usize,
    rows: usize,
    cols: usize,
    origin: impl FnOnce() -> String,
) -> Result<(), IoError> {
    if br == 0 || bc == 0 || rows % br != 0 || cols % bc != 0 {
        return Err(IoError::BlockSize {
            path: path.to_path_buf(),
            br,
            bc,
            rows,
            cols,
            origin: origin(),
        });
    }
    Ok(())
}
