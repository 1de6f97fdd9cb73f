//! Scalar (1x1-entry) sparse matrices in memory and their grouping into blocks:
//! the door through which matrices assembled by other codes, as scalar CSR or
//! COO triplets, become a [`BlockCsr`] of a given or inferred block shape.
//!
//! Conventions (the file readers of `ptap-io` follow them too): duplicate
//! entries are summed in the order given; a block is stored when any of its
//! scalars is, its other scalars become explicit zeros; NaN and infinite values
//! are refused; memory is O(rows + entries), never O(columns).
use crate::csr::BlockCsr;
use crate::error::SparseError;
use crate::pattern::BlockPattern;
use std::sync::Arc;

/// Block shapes inference considers, per dimension.
pub const MAX_INFERRED_BLOCK: usize = 6;
/// A candidate shape qualifies when at least this fraction of its stored slots hold file entries.
pub const FILL_THRESHOLD: f64 = 0.9;
/// A non-exact candidate qualifies only when its fill is at least this fraction of the
/// fill of every smaller (non-scalar) shape that tiles it.
pub const GLUE_RATIO: f64 = 0.98;

/// A scalar CSR matrix with sorted columns and no duplicates.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarCsr {
    pub rows: usize,
    pub cols: usize,
    pub row_ptr: Vec<usize>,
    pub col_idx: Vec<u32>,
    pub vals: Vec<f64>,
}

/// A zero-filled vector whose allocation failure is an error rather than an abort.
fn zeros<T: Clone + Default>(n: usize, what: &str) -> Result<Vec<T>, SparseError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| SparseError::TooLarge {
        what: format!("{what} ({n})"),
    })?;
    v.resize(n, T::default());
    Ok(v)
}

impl ScalarCsr {
    /// From triplets `(i[k], j[k], v[k])`, 0-based, in any order: sorted by
    /// `(row, column)` with duplicates summed in the order given (a stable
    /// counting sort by row, then a stable sort of each row by column, linear for
    /// rows already in order). Indices out of range, arrays of unequal length and
    /// non-finite values are errors.
    pub fn from_triplets(rows: usize, cols: usize, i: &[u32], j: &[u32], v: &[f64]) -> Result<Self, SparseError> {
        if i.len() != j.len() || i.len() != v.len() {
            return Err(SparseError::Dimension {
                what: format!(
                    "the row, column and value arrays have lengths {}, {} and {}; they must be equal",
                    i.len(),
                    j.len(),
                    v.len()
                ),
            });
        }
        for (k, ((&r, &c), &x)) in i.iter().zip(j).zip(v).enumerate() {
            if r as usize >= rows || c as usize >= cols {
                return Err(SparseError::EntryOutOfRange {
                    entry: k,
                    row: r as usize,
                    col: c as usize,
                    rows,
                    cols,
                });
            }
            if !x.is_finite() {
                return Err(SparseError::NotFinite {
                    what: format!("entry {k} (row {r}, column {c})"),
                });
            }
        }
        let n = v.len();
        let mut row_ptr = zeros::<usize>(rows + 1, "the row count")?;
        for &r in i {
            row_ptr[r as usize + 1] += 1;
        }
        for r in 0..rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        let mut next = row_ptr[..rows].to_vec();
        let mut pairs: Vec<(u32, f64)> = zeros(n, "the entry count")?;
        for ((&r, &c), &x) in i.iter().zip(j).zip(v) {
            let p = &mut next[r as usize];
            pairs[*p] = (c, x);
            *p += 1;
        }
        drop(next);
        Ok(Self::from_row_pairs(rows, cols, row_ptr, pairs))
    }

    /// From a scalar CSR whose rows may be unsorted and hold duplicates (summed
    /// in the order given). The arrays are validated: `row_ptr` has `rows + 1`
    /// non-decreasing entries from 0 to `col_idx.len()`, columns are in range,
    /// values finite and as many as columns.
    pub fn from_csr(
        rows: usize,
        cols: usize,
        row_ptr: &[usize],
        col_idx: &[u32],
        vals: &[f64],
    ) -> Result<Self, SparseError> {
        if row_ptr.len() != rows + 1 {
            return Err(SparseError::RowPtrLength {
                got: row_ptr.len(),
                expected: rows + 1,
            });
        }
        if row_ptr[0] != 0 {
            return Err(SparseError::RowPtrNotMonotone { row: 0 });
        }
        if let Some(r) = (0..rows).find(|&r| row_ptr[r + 1] < row_ptr[r]) {
            return Err(SparseError::RowPtrNotMonotone { row: r });
        }
        if row_ptr[rows] != col_idx.len() {
            return Err(SparseError::RowPtrEnd {
                got: row_ptr[rows],
                nnz: col_idx.len(),
            });
        }
        if vals.len() != col_idx.len() {
            return Err(SparseError::Dimension {
                what: format!(
                    "{} values for {} column indices; they must be equal",
                    vals.len(),
                    col_idx.len()
                ),
            });
        }
        for r in 0..rows {
            for k in row_ptr[r]..row_ptr[r + 1] {
                let c = col_idx[k] as usize;
                if c >= cols {
                    return Err(SparseError::EntryOutOfRange {
                        entry: k,
                        row: r,
                        col: c,
                        rows,
                        cols,
                    });
                }
                if !vals[k].is_finite() {
                    return Err(SparseError::NotFinite {
                        what: format!("entry {k} (row {r}, column {c})"),
                    });
                }
            }
        }
        let pairs = col_idx.iter().copied().zip(vals.iter().copied()).collect();
        Ok(Self::from_row_pairs(rows, cols, row_ptr.to_vec(), pairs))
    }

    /// Rows given as `(column, value)` runs delimited by `row_ptr`: each row
    /// sorted stably by column, then duplicates summed.
    pub fn from_row_pairs(rows: usize, cols: usize, row_ptr: Vec<usize>, mut pairs: Vec<(u32, f64)>) -> Self {
        for r in 0..rows {
            let row = &mut pairs[row_ptr[r]..row_ptr[r + 1]];
            if !row.is_sorted_by_key(|e| e.0) {
                row.sort_by_key(|e| e.0); // stable: duplicates keep their order
            }
        }
        let (col_idx, vals) = pairs.into_iter().unzip();
        let mut csr = ScalarCsr {
            rows,
            cols,
            row_ptr,
            col_idx,
            vals,
        };
        csr.sum_duplicates();
        csr
    }

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

    /// The block shape [`infer_block_shape`] picks for this pattern.
    pub fn inferred_block_shape(&self) -> (usize, usize) {
        infer_block_shape(self.rows, self.cols, &self.row_ptr, &self.col_idx)
    }

    /// Groups the scalars into `br x bc` blocks: a block is stored when at least one
    /// of its scalars is, and its other scalars are explicit zeros.
    pub fn to_block(&self, br: usize, bc: usize) -> Result<BlockCsr, SparseError> {
        if br == 0 || bc == 0 {
            return Err(SparseError::ZeroBlockSize { br, bc });
        }
        if self.rows % br != 0 || self.cols % bc != 0 {
            return Err(SparseError::BlockDoesNotTile {
                br,
                bc,
                rows: self.rows,
                cols: self.cols,
            });
        }
        let (nbr, nbc, area) = (self.rows / br, self.cols / bc, br * bc);
        if nbc > u32::MAX as usize {
            return Err(SparseError::TooLarge {
                what: format!("the block column count {nbc} (block column indices are 32-bit; use larger blocks)"),
            });
        }
        let mut row_ptr = Vec::with_capacity(nbr + 1);
        row_ptr.push(0);
        let mut col_idx: Vec<u32> = Vec::with_capacity(self.col_idx.len() / area + nbr);
        let mut values: Vec<f64> = Vec::with_capacity(self.col_idx.len() + nbr);
        let mut list: Vec<u32> = Vec::new();
        for bi in 0..nbr {
            block_columns(&self.row_ptr, &self.col_idx, bi, br, bc, &mut list);
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
        let pattern = BlockPattern::new(nbr, nbc, row_ptr, col_idx)?;
        BlockCsr::new(Arc::new(pattern), br, bc, values)
    }

    /// The scalar matrix as a dense row-major array.
    pub fn to_dense(&self) -> Result<Vec<f64>, SparseError> {
        let n = self.rows.checked_mul(self.cols).ok_or_else(|| SparseError::TooLarge {
            what: format!("a dense {}x{} array", self.rows, self.cols),
        })?;
        let mut d = zeros::<f64>(n, "the dense array")?;
        for r in 0..self.rows {
            for k in self.row_ptr[r]..self.row_ptr[r + 1] {
                d[r * self.cols + self.col_idx[k] as usize] = self.vals[k];
            }
        }
        Ok(d)
    }
}

impl BlockCsr {
    /// A block matrix from a scalar CSR (rows may be unsorted and hold
    /// duplicates, summed in order), grouped into `block` (`Some((br, bc))`) or
    /// the shape [`infer_block_shape`] finds (`None`). Every array is validated.
    pub fn from_scalar_csr(
        rows: usize,
        cols: usize,
        row_ptr: &[usize],
        col_idx: &[u32],
        vals: &[f64],
        block: Option<(usize, usize)>,
    ) -> Result<Self, SparseError> {
        let csr = ScalarCsr::from_csr(rows, cols, row_ptr, col_idx, vals)?;
        let (br, bc) = block.unwrap_or_else(|| csr.inferred_block_shape());
        csr.to_block(br, bc)
    }

    /// A block matrix from scalar triplets `(i[k], j[k], v[k])` (COO, any order,
    /// duplicates summed in order), grouped as in [`BlockCsr::from_scalar_csr`].
    pub fn from_scalar_coo(
        rows: usize,
        cols: usize,
        i: &[u32],
        j: &[u32],
        v: &[f64],
        block: Option<(usize, usize)>,
    ) -> Result<Self, SparseError> {
        let csr = ScalarCsr::from_triplets(rows, cols, i, j, v)?;
        let (br, bc) = block.unwrap_or_else(|| csr.inferred_block_shape());
        csr.to_block(br, bc)
    }

    /// The scalar CSR of this matrix: every stored block's `br x bc` scalars
    /// (explicit zeros included), rows sorted.
    pub fn to_scalar_csr(&self) -> ScalarCsr {
        let (br, bc) = self.block_shape();
        let p = self.pattern();
        let mut row_ptr = Vec::with_capacity(self.scalar_rows() + 1);
        row_ptr.push(0);
        let mut col_idx = Vec::with_capacity(self.values().len());
        let mut vals = Vec::with_capacity(self.values().len());
        for bi in 0..self.nrows() {
            let range = p.row_ptr()[bi]..p.row_ptr()[bi + 1];
            for r in 0..br {
                for k in range.clone() {
                    let bj = p.col_idx()[k] as usize;
                    for c in 0..bc {
                        col_idx.push((bj * bc + c) as u32);
                        vals.push(self.block(k)[r * bc + c]);
                    }
                }
                row_ptr.push(col_idx.len());
            }
        }
        ScalarCsr {
            rows: self.scalar_rows(),
            cols: self.scalar_cols(),
            row_ptr,
            col_idx,
            vals,
        }
    }
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
pub fn block_fill(rows: usize, row_ptr: &[usize], col_idx: &[u32], br: usize, bc: usize) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn csr_of(rows: usize, cols: usize, entries: &[(u32, u32, f64)]) -> ScalarCsr {
        let i: Vec<u32> = entries.iter().map(|e| e.0).collect();
        let j: Vec<u32> = entries.iter().map(|e| e.1).collect();
        let v: Vec<f64> = entries.iter().map(|e| e.2).collect();
        ScalarCsr::from_triplets(rows, cols, &i, &j, &v).unwrap()
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
        let b = c.to_block(2, 2).unwrap();
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
