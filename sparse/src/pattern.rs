//! The sparsity pattern of a block-CSR matrix, separate from its values.
use crate::error::SparseError;
use rayon::prelude::*;

/// Block-CSR pattern: `nrows x ncols` blocks, `row_ptr` of length `nrows + 1`,
/// strictly increasing block column indices within each row.
///
/// A pattern carries no block size: the same pattern serves a matrix and its
/// value refreshes, and (for `P` and `R = P^T`) matrices of different shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockPattern {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<u32>,
}

impl BlockPattern {
    /// Validates and wraps a CSR pattern.
    pub fn new(nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<u32>) -> Result<Self, SparseError> {
        if row_ptr.len() != nrows + 1 {
            return Err(SparseError::RowPtrLength {
                got: row_ptr.len(),
                expected: nrows + 1,
            });
        }
        if row_ptr[0] != 0 {
            return Err(SparseError::RowPtrNotMonotone { row: 0 });
        }
        // Rows are checked in parallel; the first bad row (in row order) is
        // then checked again alone, so the error is the serial check's.
        let bad = |i: usize| {
            let (s, e) = (row_ptr[i], row_ptr[i + 1]);
            if e < s || e > col_idx.len() {
                return true;
            }
            let cols = &col_idx[s..e];
            cols.iter().any(|&c| c as usize >= ncols) || cols.windows(2).any(|w| w[0] >= w[1])
        };
        // In chunks of rows (a per-row parallel search costs more than the check).
        const ROWS: usize = 4096;
        let first_bad = (0..nrows.div_ceil(ROWS))
            .into_par_iter()
            .find_first(|&c| (c * ROWS..nrows.min((c + 1) * ROWS)).any(bad))
            .and_then(|c| (c * ROWS..nrows.min((c + 1) * ROWS)).find(|&i| bad(i)));
        if let Some(i) = first_bad {
            let (s, e) = (row_ptr[i], row_ptr[i + 1]);
            if e < s {
                return Err(SparseError::RowPtrNotMonotone { row: i });
            }
            if e > col_idx.len() {
                return Err(SparseError::RowPtrEnd {
                    got: e,
                    nnz: col_idx.len(),
                });
            }
            let cols = &col_idx[s..e];
            for (k, &c) in cols.iter().enumerate() {
                if c as usize >= ncols {
                    return Err(SparseError::ColumnOutOfRange {
                        row: i,
                        col: c as usize,
                        ncols,
                    });
                }
                if k > 0 && cols[k - 1] >= c {
                    return Err(SparseError::ColumnsNotSorted { row: i });
                }
            }
        }
        if row_ptr[nrows] != col_idx.len() {
            return Err(SparseError::RowPtrEnd {
                got: row_ptr[nrows],
                nnz: col_idx.len(),
            });
        }
        Ok(Self {
            nrows,
            ncols,
            row_ptr,
            col_idx,
        })
    }

    /// Builds a pattern from per-row column lists (each sorted or not; duplicates removed).
    pub fn from_rows(ncols: usize, rows: &[Vec<u32>]) -> Result<Self, SparseError> {
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        let mut col_idx = Vec::new();
        row_ptr.push(0);
        for r in rows {
            let mut r = r.clone();
            r.sort_unstable();
            r.dedup();
            col_idx.extend_from_slice(&r);
            row_ptr.push(col_idx.len());
        }
        Self::new(rows.len(), ncols, row_ptr, col_idx)
    }

    pub fn nrows(&self) -> usize {
        self.nrows
    }
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Number of stored blocks.
    pub fn nnzb(&self) -> usize {
        self.col_idx.len()
    }
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Block columns of block row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.col_idx[self.row_ptr[i]..self.row_ptr[i + 1]]
    }
    /// Range of block indices of row `i`.
    #[inline]
    pub fn row_range(&self, i: usize) -> std::ops::Range<usize> {
        self.row_ptr[i]..self.row_ptr[i + 1]
    }

    /// Block index of `(i, j)`, by binary search. For setup code and tests only:
    /// numeric kernels never search.
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        let r = self.row_range(i);
        self.col_idx[r.clone()]
            .binary_search(&(j as u32))
            .ok()
            .map(|k| r.start + k)
    }

    /// Index of the diagonal block of each row (`usize::MAX` where absent).
    pub fn diagonal_positions(&self) -> Vec<usize> {
        (0..self.nrows)
            .into_par_iter()
            .with_min_len(4096)
            .map(|i| self.find(i, i).unwrap_or(usize::MAX))
            .collect()
    }

    /// The transposed pattern, and for each of its blocks the index of the source
    /// block in `self` (so a transpose's values are a pure gather).
    pub fn transpose(&self) -> (BlockPattern, Vec<u32>) {
        let mut counts = vec![0usize; self.ncols + 1];
        for &c in &self.col_idx {
            counts[c as usize + 1] += 1;
        }
        for j in 0..self.ncols {
            counts[j + 1] += counts[j];
        }
        let row_ptr = counts.clone();
        let mut next = counts;
        let mut col_idx = vec![0u32; self.nnzb()];
        let mut src = vec![0u32; self.nnzb()];
        // Rows are visited in increasing order, so each transposed row comes out sorted.
        for i in 0..self.nrows {
            for k in self.row_range(i) {
                let c = self.col_idx[k] as usize;
                let dst = next[c];
                next[c] += 1;
                col_idx[dst] = i as u32;
                src[dst] = k as u32;
            }
        }
        (
            BlockPattern {
                nrows: self.ncols,
                ncols: self.nrows,
                row_ptr,
                col_idx,
            },
            src,
        )
    }

    /// For a structurally symmetric pattern, the block at `(j, i)` of every
    /// block `(i, j)` (written into `out` when given, `nnzb` entries); `false`
    /// where some block has no mirror. Rows are walked in chunks of about
    /// equal blocks; within a chunk, column `j`'s mirrors are consecutive
    /// blocks of row `j` (rows visited in order), so one search per column
    /// and chunk finds the first and a cursor the rest, each checked.
    pub fn mirror_slots(&self, out: Option<&mut [u32]>) -> bool {
        if self.nrows != self.ncols {
            return false;
        }
        let (rp, ci) = (&self.row_ptr, &self.col_idx);
        let n = (rayon::current_num_threads() * 4).clamp(1, self.nrows.max(1));
        // Row bounds of chunks holding about nnzb / n blocks each.
        let mut bounds: Vec<usize> = (0..n)
            .map(|c| rp.partition_point(|&x| x * n < self.nnzb() * c).min(self.nrows))
            .collect();
        bounds[0] = 0;
        bounds.push(self.nrows);
        bounds.dedup();
        let walk = |rows: std::ops::Range<usize>, mut out: Option<&mut [u32]>| {
            // Column j's next mirror plus one; 0 = not met yet in this chunk
            // (zeroed memory: only the pages of touched columns cost).
            let mut cursor = vec![0usize; self.ncols];
            let base = rp[rows.start];
            for i in rows.clone() {
                for k in rp[i]..rp[i + 1] {
                    let j = ci[k] as usize;
                    let m = if cursor[j] == 0 {
                        rp[j] + ci[rp[j]..rp[j + 1]].partition_point(|&c| (c as usize) < rows.start)
                    } else {
                        cursor[j] - 1
                    };
                    if m >= rp[j + 1] || ci[m] as usize != i {
                        return false;
                    }
                    cursor[j] = m + 2;
                    if let Some(o) = out.as_deref_mut() {
                        o[k - base] = m as u32;
                    }
                }
            }
            true
        };
        match out {
            Some(out) => {
                assert_eq!(out.len(), self.nnzb(), "one mirror per block");
                let mut parts = Vec::with_capacity(bounds.len());
                let mut rest = out;
                for w in bounds.windows(2) {
                    let (head, tail) = rest.split_at_mut(rp[w[1]] - rp[w[0]]);
                    parts.push((w[0]..w[1], head));
                    rest = tail;
                }
                parts.into_par_iter().all(|(rows, o)| walk(rows, Some(o)))
            }
            None => bounds.par_windows(2).all(|w| walk(w[0]..w[1], None)),
        }
    }

    /// Whether the pattern is structurally symmetric.
    pub fn is_structurally_symmetric(&self) -> bool {
        self.nrows == self.ncols && self.transpose().0 == *self
    }

    /// Bytes held by the index arrays.
    pub fn index_bytes(&self) -> usize {
        self.row_ptr.len() * std::mem::size_of::<usize>() + self.col_idx.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_row_is_reported_whatever_the_parallel_split() {
        // 20,000 rows of one column each; rows 13,000 and 9,001 are broken.
        let n = 20_000;
        let row_ptr: Vec<usize> = (0..=n).collect();
        let mut col_idx: Vec<u32> = (0..n as u32).collect();
        assert!(BlockPattern::new(n, n, row_ptr.clone(), col_idx.clone()).is_ok());
        col_idx[13_000] = n as u32 + 5;
        col_idx[9_001] = n as u32;
        let e = BlockPattern::new(n, n, row_ptr.clone(), col_idx.clone()).unwrap_err();
        assert_eq!(
            e,
            SparseError::ColumnOutOfRange {
                row: 9_001,
                col: n,
                ncols: n
            }
        );
        // A row pointer that decreases before a bad column is reported first.
        let mut rp = row_ptr;
        rp[4_000] = 3_998;
        let e = BlockPattern::new(n, n, rp, col_idx).unwrap_err();
        assert_eq!(e, SparseError::RowPtrNotMonotone { row: 3_999 });
    }
}
