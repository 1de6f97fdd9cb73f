//! Block CSR values over a shared pattern.
use crate::dense::{transpose_into, Dense};
use crate::error::SparseError;
use crate::pattern::BlockPattern;
use rayon::prelude::*;
use std::sync::Arc;

/// A block-CSR matrix: a shared [`BlockPattern`] plus `br x bc` row-major blocks
/// stored contiguously in pattern order (block `k` at `values[k*br*bc..]`).
#[derive(Debug, PartialEq)]
pub struct BlockCsr {
    pattern: Arc<BlockPattern>,
    br: usize,
    bc: usize,
    values: Vec<f64>,
}

impl Clone for BlockCsr {
    /// Shares the pattern and copies the values, in parallel when there are
    /// many (a fine operator's values are hundreds of megabytes).
    fn clone(&self) -> Self {
        const PIECE: usize = 1 << 16;
        let values = if self.values.len() < 4 * PIECE {
            self.values.clone()
        } else {
            let mut v = vec![0.0; self.values.len()];
            v.par_chunks_mut(PIECE)
                .zip(self.values.par_chunks(PIECE))
                .for_each(|(d, s)| d.copy_from_slice(s));
            v
        };
        Self {
            pattern: self.pattern.clone(),
            br: self.br,
            bc: self.bc,
            values,
        }
    }
}

impl BlockCsr {
    pub fn new(pattern: Arc<BlockPattern>, br: usize, bc: usize, values: Vec<f64>) -> Result<Self, SparseError> {
        if br == 0 || bc == 0 {
            return Err(SparseError::ZeroBlockSize { br, bc });
        }
        let expected = pattern.nnzb() * br * bc;
        if values.len() != expected {
            return Err(SparseError::ValuesLength {
                got: values.len(),
                expected,
                nnzb: pattern.nnzb(),
                br,
                bc,
            });
        }
        Ok(Self {
            pattern,
            br,
            bc,
            values,
        })
    }

    /// All-zero values over `pattern`.
    pub fn zeros(pattern: Arc<BlockPattern>, br: usize, bc: usize) -> Self {
        assert!(br > 0 && bc > 0, "block size must be at least 1x1");
        let n = pattern.nnzb() * br * bc;
        Self {
            pattern,
            br,
            bc,
            values: vec![0.0; n],
        }
    }

    pub fn pattern(&self) -> &BlockPattern {
        &self.pattern
    }
    pub fn pattern_arc(&self) -> &Arc<BlockPattern> {
        &self.pattern
    }
    /// Block shape `(rows, cols)`.
    pub fn block_shape(&self) -> (usize, usize) {
        (self.br, self.bc)
    }
    pub fn block_len(&self) -> usize {
        self.br * self.bc
    }
    pub fn nrows(&self) -> usize {
        self.pattern.nrows()
    }
    pub fn ncols(&self) -> usize {
        self.pattern.ncols()
    }
    /// Scalar rows.
    pub fn scalar_rows(&self) -> usize {
        self.nrows() * self.br
    }
    /// Scalar columns.
    pub fn scalar_cols(&self) -> usize {
        self.ncols() * self.bc
    }
    pub fn nnzb(&self) -> usize {
        self.pattern.nnzb()
    }
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }
    #[inline]
    pub fn block(&self, k: usize) -> &[f64] {
        let l = self.br * self.bc;
        &self.values[k * l..(k + 1) * l]
    }
    #[inline]
    pub fn block_mut(&mut self, k: usize) -> &mut [f64] {
        let l = self.br * self.bc;
        &mut self.values[k * l..(k + 1) * l]
    }

    /// Bytes of values plus index arrays.
    pub fn bytes(&self) -> usize {
        self.values.len() * 8 + self.pattern.index_bytes()
    }

    /// Fails naming the first block row that holds a NaN or infinity.
    pub fn check_finite(&self, what: &str) -> Result<(), SparseError> {
        // Chunks in parallel, the first bad chunk (in order) searched alone: the
        // first non-finite value, as a serial scan finds it.
        const CHUNK: usize = 1 << 16;
        let bad_chunk = self
            .values
            .par_chunks(CHUNK)
            .position_first(|c| c.iter().any(|v| !v.is_finite()));
        let first = bad_chunk.and_then(|c| {
            let start = c * CHUNK;
            self.values[start..]
                .iter()
                .position(|v| !v.is_finite())
                .map(|p| start + p)
        });
        if let Some(pos) = first {
            let blk = pos / self.block_len();
            let row = self.pattern.row_ptr().partition_point(|&p| p <= blk) - 1;
            return Err(SparseError::NotFinite {
                what: format!("{what}, block row {row}"),
            });
        }
        Ok(())
    }

    /// The scalar diagonal (requires square blocks and a stored diagonal block
    /// for every row; a missing one contributes zeros).
    pub fn scalar_diagonal(&self) -> Vec<f64> {
        assert_eq!(self.br, self.bc, "scalar diagonal needs square blocks");
        let b = self.br;
        let mut d = vec![0.0; self.nrows() * b];
        let diag = self.pattern.diagonal_positions();
        d.par_chunks_mut(b.max(1))
            .zip(diag.par_iter())
            .with_min_len(4096)
            .for_each(|(di, &k)| {
                if k != usize::MAX {
                    let blk = self.block(k);
                    for (c, v) in di.iter_mut().enumerate() {
                        *v = blk[c * b + c];
                    }
                }
            });
        d
    }

    /// `A^T` with transposed blocks (reference; executors use precomputed maps).
    pub fn transpose(&self) -> BlockCsr {
        let (tp, src) = self.pattern.transpose();
        self.transpose_onto(Arc::new(tp), &src)
            .expect("a pattern's own transpose fits it")
    }

    /// `A^T` over `pattern`, the transpose of `A`'s pattern that an inspector
    /// already built, with `source[k]` the block of `A` that block `k` of
    /// `A^T` transposes ([`BlockPattern::transpose`]'s map): a parallel gather.
    pub fn transpose_onto(&self, pattern: Arc<BlockPattern>, source: &[u32]) -> Result<BlockCsr, SparseError> {
        if pattern.nrows() != self.pattern.ncols()
            || pattern.ncols() != self.pattern.nrows()
            || pattern.nnzb() != self.pattern.nnzb()
            || source.len() != self.pattern.nnzb()
        {
            return Err(SparseError::Dimension {
                what: format!(
                    "a transpose of {}x{} blocks with {} stored (and {} sources) does not fit a {}x{} matrix with {}",
                    pattern.nrows(),
                    pattern.ncols(),
                    pattern.nnzb(),
                    source.len(),
                    self.pattern.nrows(),
                    self.pattern.ncols(),
                    self.pattern.nnzb()
                ),
            });
        }
        if let Some(&s) = source.iter().find(|&&s| s as usize >= self.pattern.nnzb()) {
            return Err(SparseError::Dimension {
                what: format!("transpose source block {s} is out of range"),
            });
        }
        let src = source;
        let l = self.block_len();
        let mut values = vec![0.0; self.values.len()];
        if l > 0 {
            values
                .par_chunks_mut(l)
                .zip(src.par_iter())
                .with_min_len(4096)
                .for_each(|(dst, &s)| transpose_into(self.br, self.bc, self.block(s as usize), dst));
        }
        Ok(BlockCsr {
            pattern,
            br: self.bc,
            bc: self.br,
            values,
        })
    }

    /// Expands to a dense matrix (tests and tiny inputs only).
    pub fn to_dense(&self) -> Dense {
        let (br, bc) = (self.br, self.bc);
        let mut d = Dense::zeros(self.scalar_rows(), self.scalar_cols());
        for i in 0..self.nrows() {
            for k in self.pattern.row_range(i) {
                let j = self.pattern.col_idx()[k] as usize;
                let blk = self.block(k);
                for r in 0..br {
                    for c in 0..bc {
                        *d.at_mut(i * br + r, j * bc + c) = blk[r * bc + c];
                    }
                }
            }
        }
        d
    }

    /// Blocks a dense matrix, keeping every block with a nonzero entry (and every
    /// diagonal block when `keep_diagonal`).
    pub fn from_dense(d: &Dense, br: usize, bc: usize, keep_diagonal: bool) -> Result<Self, SparseError> {
        if br == 0 || bc == 0 {
            return Err(SparseError::ZeroBlockSize { br, bc });
        }
        if d.rows % br != 0 || d.cols % bc != 0 {
            return Err(SparseError::Dimension {
                what: format!(
                    "{}x{} dense matrix is not a whole number of {br}x{bc} blocks",
                    d.rows, d.cols
                ),
            });
        }
        let (nr, nc) = (d.rows / br, d.cols / bc);
        let mut row_ptr = vec![0];
        let mut cols = Vec::new();
        let mut values = Vec::new();
        for i in 0..nr {
            for j in 0..nc {
                let nz = (0..br).any(|r| (0..bc).any(|c| d.at(i * br + r, j * bc + c) != 0.0));
                if nz || (keep_diagonal && i == j) {
                    cols.push(j as u32);
                    for r in 0..br {
                        for c in 0..bc {
                            values.push(d.at(i * br + r, j * bc + c));
                        }
                    }
                }
            }
            row_ptr.push(cols.len());
        }
        let pattern = BlockPattern::new(nr, nc, row_ptr, cols)?;
        Self::new(Arc::new(pattern), br, bc, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tridiagonal pattern of `n` rows with `b x b` blocks valued by position.
    fn tridiagonal(n: usize, b: usize) -> BlockCsr {
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|i| (i.saturating_sub(1)..(i + 2).min(n)).map(|j| j as u32).collect())
            .collect();
        let p = Arc::new(BlockPattern::from_rows(n, &rows).unwrap());
        let values = (0..p.nnzb() * b * b).map(|k| (k as f64 * 0.1).sin()).collect();
        BlockCsr::new(p, b, b, values).unwrap()
    }

    #[test]
    fn check_finite_names_the_row_of_the_first_bad_value_across_chunks() {
        let mut a = tridiagonal(40_000, 3);
        assert!(a.check_finite("A").is_ok());
        // Two bad values in different parallel chunks: the earlier one is reported.
        let (late, early) = (a.pattern().row_ptr()[30_000] * 9 + 4, a.pattern().row_ptr()[20_001] * 9);
        a.values_mut()[late] = f64::INFINITY;
        a.values_mut()[early] = f64::NAN;
        let e = a.check_finite("A").unwrap_err().to_string();
        assert!(e.contains("A, block row 20001"), "{e}");
    }

    #[test]
    fn parallel_clone_and_transpose_onto_are_the_serial_ones() {
        let a = tridiagonal(30_000, 2);
        let c = a.clone();
        assert_eq!(c, a);
        assert!(Arc::ptr_eq(c.pattern_arc(), a.pattern_arc()));
        let (tp, src) = a.pattern().transpose();
        let t = a.transpose_onto(Arc::new(tp), &src).unwrap();
        assert_eq!(t, a.transpose());
        for (k, &s) in src.iter().enumerate().step_by(997) {
            let (x, y) = (t.block(k), a.block(s as usize));
            assert_eq!([x[0], x[1], x[2], x[3]], [y[0], y[2], y[1], y[3]]);
        }
        // A map that does not fit is an error, not a panic.
        let (tp, mut src) = a.pattern().transpose();
        src[5] = u32::MAX;
        assert!(a.transpose_onto(Arc::new(tp), &src).is_err());
    }
}
