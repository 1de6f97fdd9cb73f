//! The scalar intermediate every reader goes through: triplets in file order,
//! sorted into a scalar CSR with duplicates summed, then grouped into blocks of
//! a given or inferred shape.
use crate::error::IoError;
use ptap_sparse::{BlockCsr, BlockPattern};
use std::path::Path;
use std::sync::Arc;

/// Block shapes inference considers, per dimension.
pub(crate) const MAX_INFERRED_BLOCK: usize = 6;
/// A candidate shape qualifies when at least this fraction of its stored slots hold file entries.
pub(crate) const FILL_THRESHOLD: f64 = 0.9;
/// A non-exact candidate qualifies only when its fill is at least this fraction of the
/// fill of every smaller (non-scalar) shape that tiles it.
pub(crate) const GLUE_RATIO: f64 = 0.98;

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

    /// Sorts by `(row, column)` and sums duplicates in file order: a stable
    /// counting sort by row, then a stable sort of each row by column (linear for
    /// rows already in order). Memory is O(rows + entries), never O(columns), so a
    /// corrupt column count cannot make it allocate.
    pub fn into_csr(self, path: &Path) -> Result<ScalarCsr, IoError> {
        let n = self.v.len();
        let rows = self.rows;
        let mut row_ptr = zeros::<usize>(rows + 1, path, "the row count")?;
        for &i in &self.i {
            row_ptr[i as usize + 1] += 1;
        }
        for r in 0..rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        let mut next = row_ptr[..rows].to_vec();
        let mut pairs: Vec<(u32, f64)> = vec![(0, 0.0); n];
        for ((&i, &j), &v) in self.i.iter().zip(&self.j).zip(&self.v) {
            let p = &mut next[i as usize];
            pairs[*p] = (j, v);
            *p += 1;
        }
        drop((next, self.i, self.j, self.v));
        for r in 0..rows {
            let row = &mut pairs[row_ptr[r]..row_ptr[r + 1]];
            if !row.is_sorted_by_key(|e| e.0) {
                row.sort_by_key(|e| e.0); // stable: duplicates keep file order
            }
        }
        let (col_idx, vals) = pairs.into_iter().unzip();
        let mut csr = ScalarCsr {
            rows,
            cols: self.cols,
            row_ptr,
            col_idx,
            vals,
        };
        csr.sum_duplicates();
        Ok(csr)
    }
}

/// A scalar CSR matrix with sorted columns; duplicates summed once
/// [`ScalarCsr::sum_duplicates`] has run.
pub(crate) struct ScalarCsr {
    pub rows: usize,
    pub cols: usize,
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
    pub vals: Vec<f64>,
}

impl ScalarCsr {
    /// Merges equal column indices of each (sorted) row by summing, in place.
    pub fn sum_duplicates(&mut self) {
        let mut w = 0;
        let mut start = 0;
        for r in 0..self.rows {
            let end = self.row_ptr[r + 1];
            let row_start = w;
            for k in start..end {
                if w > row_start && self.col_idx[w - 1] == self.col_idx[k] {
                    self.vals[w - 1] += self.vals[k];
                } else {
                    self.col_idx[w] = self.col_idx[k];
                    self.vals[w] = self.vals[k];
                    w += 1;
                }
            }
            start = end;
            self.row_ptr[r + 1] = w;
        }
        self.col_idx.truncate(w);
        self.vals.truncate(w);
    }

    /// Groups the scalars into `br x bc` blocks: a block is stored when at least one
    /// of its scalars is, and its other scalars are explicit zeros.
    pub fn to_block(&self, br: usize, bc: usize, path: &Path) -> Result<BlockCsr, IoError> {
        debug_assert!(br > 0 && bc > 0 && self.rows % br == 0 && self.cols % bc == 0);
        let (nbr, nbc, area) = (self.rows / br, self.cols / bc, br * bc);
        if nbc > u32::MAX as usize {
            return Err(IoError::TooLarge {
                path: path.to_path_buf(),
                what: format!("the block column count {nbc}"),
                todo: "block column indices are 32-bit; use larger blocks",
            });
        }
        let mut row_ptr = Vec::with_capacity(nbr + 1);
        row_ptr.push(0);
        let mut col_idx: Vec<u32> = Vec::with_capacity(self.col_idx.len() / area + nbr);
        let mut values: Vec<f64> = Vec::with_capacity(self.col_idx.len() + nbr);
        let mut list: Vec<u32> = Vec::new();
        for bi in 0..nbr {
            self.block_columns(bi, br, bc, &mut list);
            let base = col_idx.len();
            col_idx.extend_from_slice(&list);
            values.resize(values.len() + list.len() * area, 0.0);
            for r in 0..br {
                let row = bi * br + r;
                // Both the row's columns and `list` are sorted: walk them together.
                let mut s = 0;
                for k in self.row_ptr[row]..self.row_ptr[row + 1] {
                    let c = self.col_idx[k] as usize;
                    while list[s] as usize != c / bc {
                        s += 1;
                    }
                    values[(base + s) * area + r * bc + c % bc] = self.vals[k];
                }
            }
            row_ptr.push(col_idx.len());
        }
        let sparse = |err| IoError::Sparse {
            path: path.to_path_buf(),
            err,
        };
        let pattern = BlockPattern::new(nbr, nbc, row_ptr, col_idx).map_err(sparse)?;
        BlockCsr::new(Arc::new(pattern), br, bc, values).map_err(sparse)
    }

    /// The sorted distinct block columns of block row `bi` into `list`.
    fn block_columns(&self, bi: usize, br: usize, bc: usize, list: &mut Vec<u32>) {
        block_columns(&self.row_ptr, &self.col_idx, bi, br, bc, list);
    }

    /// The scalar matrix as a dense row-major array.
    pub fn to_dense(&self, path: &Path) -> Result<Vec<f64>, IoError> {
        let n = self.rows.checked_mul(self.cols).ok_or_else(|| IoError::TooLarge {
            path: path.to_path_buf(),
            what: format!("a dense {}x{} array", self.rows, self.cols),
            todo: "store it sparse",
        })?;
        let mut d = zeros::<f64>(n, path, "the dense array")?;
        for r in 0..self.rows {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                d[r * self.cols + self.col_idx[k] as usize] = self.vals[k];
            }
        }
        Ok(d)
    }
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

/// The sorted distinct block columns of block row `bi` of a scalar CSR pattern
/// with sorted rows, into `list` (no array over the columns).
fn block_columns(row_ptr: &[usize], col_idx: &[u32], bi: usize, br: usize, bc: usize, list: &mut Vec<u32>) {
    list.clear();
    for r in bi * br..(bi + 1) * br {
        let mut last = u32::MAX;
        for &c in &col_idx[row_ptr[r]..row_ptr[r + 1]] {
            let b = (c as usize / bc) as u32;
            if b != last {
                list.push(b);
                last = b;
            }
        }
    }
    if br > 1 {
        list.sort_unstable();
        list.dedup();
    }
}

/// Fraction of the slots of the `br x bc` blocks touched by the pattern that
/// the pattern fills (`nnz / (blocks * br * bc)`). Requires `br | rows`, `bc | cols`.
pub(crate) fn block_fill(rows: usize, row_ptr: &[usize], col_idx: &[u32], br: usize, bc: usize) -> f64 {
    let nnz = row_ptr[rows];
    if nnz == 0 {
        return 1.0;
    }
    let mut list = Vec::new();
    let mut blocks = 0usize;
    for bi in 0..rows / br {
        block_columns(row_ptr, col_idx, bi, br, bc, &mut list);
        blocks += list.len();
    }
    nnz as f64 / (blocks * br * bc) as f64
}

/// Whether every `br x bc` block the pattern touches is completely filled; stops
/// at the first block row that has a hole (so rejecting a wrong shape is cheap).
fn is_exact(rows: usize, row_ptr: &[usize], col_idx: &[u32], br: usize, bc: usize) -> bool {
    let mut list = Vec::new();
    (0..rows / br).all(|bi| {
        block_columns(row_ptr, col_idx, bi, br, bc, &mut list);
        row_ptr[(bi + 1) * br] - row_ptr[bi * br] == list.len() * br * bc
    })
}

/// Infers the block shape of a scalar CSR pattern (sorted rows, no duplicates).
///
/// Candidates are the `(br, bc)` with `br, bc` in `1..=6` dividing `(rows, cols)`.
/// The fill of a candidate is `stored scalars / (stored blocks * br * bc)`, where a
/// block is stored when any of its scalars is. Candidates are ranked by block
/// area, then square before rectangular, then larger `br`. The rule:
///
/// 1. **Exact blocks.** The best-ranked candidate larger than 1x1 whose fill is
///    exactly 1 (every stored block completely filled) wins. Assembled
///    finite-element matrices store complete nodal blocks, so this finds their
///    block size even when gluing neighbouring nodes would also be fairly dense.
/// 2. **Nearly full blocks** (files that dropped explicit zeros). Otherwise the
///    best-ranked candidate with fill at least 0.9 wins, provided its fill is at
///    least 0.98 times the fill of every smaller non-scalar candidate that tiles
///    it (so it is not merely smaller blocks glued together with padding).
/// 3. Otherwise 1x1.
///
/// Why not "largest area with fill >= 0.9" alone: the `k = 1` beam (3x3 blocks)
/// has fill 0.95 for 6x6 blocks, and the plain rule would pick 6x6.
pub fn infer_block_shape(rows: usize, cols: usize, row_ptr: &[usize], col_idx: &[u32]) -> (usize, usize) {
    assert_eq!(row_ptr.len(), rows + 1, "row_ptr must have rows + 1 entries");
    if row_ptr[rows] == 0 {
        return (1, 1);
    }
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    for br in 1..=MAX_INFERRED_BLOCK {
        for bc in 1..=MAX_INFERRED_BLOCK {
            if rows % br == 0 && cols % bc == 0 {
                shapes.push((br, bc));
            }
        }
    }
    // Best first: larger area, then square, then larger br.
    shapes.sort_by(|a, b| {
        (b.0 * b.1)
            .cmp(&(a.0 * a.1))
            .then((b.0 == b.1).cmp(&(a.0 == a.1)))
            .then(b.0.cmp(&a.0))
    });
    if let Some(&(br, bc)) = shapes
        .iter()
        .find(|&&(br, bc)| br * bc > 1 && is_exact(rows, row_ptr, col_idx, br, bc))
    {
        return (br, bc);
    }
    let cands: Vec<(usize, usize, f64)> = shapes
        .iter()
        .map(|&(br, bc)| (br, bc, block_fill(rows, row_ptr, col_idx, br, bc)))
        .collect();
    for &(br, bc, f) in &cands {
        if f < FILL_THRESHOLD {
            continue;
        }
        let glued = cands.iter().any(|&(dr, dc, df)| {
            (dr, dc) != (br, bc) && dr * dc > 1 && br % dr == 0 && bc % dc == 0 && f < GLUE_RATIO * df
        });
        if !glued {
            return (br, bc);
        }
    }
    (1, 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn csr_of(rows: usize, cols: usize, entries: &[(u32, u32, f64)]) -> ScalarCsr {
        let mut t = Triplets::with_capacity(rows, cols, entries.len());
        for &(i, j, v) in entries {
            t.push(i, j, v);
        }
        t.into_csr(Path::new("mem")).unwrap()
    }

    #[test]
    fn triplets_sort_by_row_then_column_and_sum_duplicates_in_file_order() {
        let c = csr_of(
            3,
            4,
            &[
                (2, 3, 1.0),
                (0, 1, 2.0),
                (2, 0, 3.0),
                (0, 1, 0.5),
                (1, 2, -1.0),
                (0, 0, 4.0),
            ],
        );
        assert_eq!(c.row_ptr, vec![0, 2, 3, 5]);
        assert_eq!(c.col_idx, vec![0, 1, 2, 0, 3]);
        assert_eq!(c.vals, vec![4.0, 2.5, -1.0, 3.0, 1.0]);
        // File order of duplicates: 1e16 + 1 - 1e16 = 0 (left to right), not 1.
        let c = csr_of(1, 1, &[(0, 0, 1e16), (0, 0, 1.0), (0, 0, -1e16)]);
        assert_eq!(c.vals, vec![0.0]);
    }

    #[test]
    fn grouping_stores_partially_filled_blocks_with_explicit_zeros() {
        // 4x4 scalar, 2x2 blocks: entries in blocks (0,0) and (1,1) only.
        let c = csr_of(4, 4, &[(0, 0, 1.0), (3, 3, 2.0), (2, 3, 3.0)]);
        let b = c.to_block(2, 2, Path::new("mem")).unwrap();
        assert_eq!(b.pattern().row_ptr(), &[0, 1, 2]);
        assert_eq!(b.pattern().col_idx(), &[0, 1]);
        assert_eq!(b.values(), &[1.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 2.0]);
    }

    /// Scalar pattern of the `k = 1` beam: 10x1x1 Q2 hexahedra, the x = 0 plane
    /// eliminated, 3 dofs per node, node id `(ix*ny + iy)*nz + iz`.
    fn beam_k1_pattern() -> (usize, Vec<usize>, Vec<u32>) {
        let (ex, ey, ez) = (10usize, 1usize, 1usize);
        let (ny, nz) = (2 * ey + 1, 2 * ez + 1);
        let nnodes = 2 * ex * ny * nz;
        let mut adj = vec![std::collections::BTreeSet::new(); nnodes];
        for a in 0..ex {
            let nodes: Vec<usize> = (0..27)
                .map(|l| ((2 * a + l / 9) * ny + (l / 3) % 3) * nz + l % 3)
                .filter(|&id| id >= ny * nz)
                .map(|id| id - ny * nz)
                .collect();
            for &p in &nodes {
                adj[p].extend(nodes.iter().copied());
            }
        }
        let n = 3 * nnodes;
        let mut row_ptr = vec![0];
        let mut col_idx = Vec::new();
        for cols in &adj {
            for _ in 0..3 {
                for &q in cols {
                    col_idx.extend((0..3).map(|c| (3 * q + c) as u32));
                }
                row_ptr.push(col_idx.len());
            }
        }
        (n, row_ptr, col_idx)
    }

    #[test]
    fn beam_k1_infers_3x3_although_6x6_is_95_percent_full() {
        let (n, rp, ci) = beam_k1_pattern();
        assert_eq!(n, 540);
        assert_eq!(block_fill(n, &rp, &ci, 3, 3), 1.0);
        let f66 = block_fill(n, &rp, &ci, 6, 6);
        assert!((f66 - 0.95).abs() < 1e-12, "{f66}");
        // The plain "largest area with fill >= 0.9" rule would have chosen 6x6.
        assert!(f66 >= FILL_THRESHOLD);
        assert_eq!(infer_block_shape(n, n, &rp, &ci), (3, 3));
    }

    #[test]
    fn nearly_full_blocks_are_found_and_glued_ones_rejected() {
        // Block-tridiagonal with 3x3 blocks whose writer dropped the centre scalar of every other
        // diagonal block: no candidate beyond 1x1 is exact, 3x3 is 98% full.
        let nb: usize = 8;
        let mut e = Vec::new();
        for bi in 0..nb {
            for bj in bi.saturating_sub(1)..(bi + 2).min(nb) {
                for r in 0..3 {
                    for c in 0..3 {
                        if bi == bj && r == 1 && c == 1 && bi % 2 == 0 {
                            continue; // a dropped zero
                        }
                        e.push(((3 * bi + r) as u32, (3 * bj + c) as u32, 1.0));
                    }
                }
            }
        }
        let c = csr_of(3 * nb, 3 * nb, &e);
        let f33 = block_fill(c.rows, &c.row_ptr, &c.col_idx, 3, 3);
        assert!((0.9..1.0).contains(&f33), "{f33}");
        assert_eq!(infer_block_shape(c.rows, c.cols, &c.row_ptr, &c.col_idx), (3, 3));
    }

    #[test]
    fn scalar_tridiagonal_and_empty_infer_1x1() {
        let n = 12u32;
        let mut e = Vec::new();
        for i in 0..n {
            for j in i.saturating_sub(1)..(i + 2).min(n) {
                e.push((i, j, 1.0));
            }
        }
        let c = csr_of(n as usize, n as usize, &e);
        assert_eq!(infer_block_shape(c.rows, c.cols, &c.row_ptr, &c.col_idx), (1, 1));
        assert_eq!(infer_block_shape(6, 6, &[0; 7], &[]), (1, 1));
    }

    #[test]
    fn ties_prefer_square_then_larger_rows() {
        // A completely dense 6x6: every candidate is exact, 6x6 has the largest area.
        let e: Vec<_> = (0..36).map(|k| (k / 6, k % 6, 1.0)).collect();
        let c = csr_of(6, 6, &e);
        assert_eq!(infer_block_shape(6, 6, &c.row_ptr, &c.col_idx), (6, 6));
        // Dense 6x4: 6x4 (area 24) wins over 3x4, 6x2, ...
        let e: Vec<_> = (0..24).map(|k| (k / 4, k % 4, 1.0)).collect();
        let c = csr_of(6, 4, &e);
        assert_eq!(infer_block_shape(6, 4, &c.row_ptr, &c.col_idx), (6, 4));
        // Dense 2x3 blocks on the diagonal of a 4x6 matrix: every larger candidate is half
        // empty, and 2x3 is the first exact one.
        let mut e = Vec::new();
        for b in 0..2u32 {
            for r in 0..2 {
                for cc in 0..3 {
                    e.push((2 * b + r, 3 * b + cc, 1.0));
                }
            }
        }
        let c = csr_of(4, 6, &e);
        assert_eq!(infer_block_shape(4, 6, &c.row_ptr, &c.col_idx), (2, 3));
    }
}
