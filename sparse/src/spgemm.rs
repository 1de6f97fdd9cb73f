//! Block sparse matrix-matrix product `C = X Y`, symbolic and numeric apart.
//!
//! The symbolic phase computes `C`'s pattern once; the numeric phase refreshes
//! `C`'s values from `X`'s and `Y`'s with no allocation: each row chunk owns a
//! column-to-slot map (sized `ncols(C)`) that is filled for the row's pattern
//! and read back, so placing a contribution is one indexed load, never a search.
//! The accumulation order is fixed: row `i` of `C` sums `X[i,l] Y[l,j]` over
//! `X`'s blocks of row `i` in column order, and `Y`'s row `l` in column order.
//! This is the order the paper's two-pass product (V0) defines.
use crate::csr::BlockCsr;
use crate::dense::{gemm_acc, gemm_acc_dyn};
use crate::error::SparseError;
use crate::par::{balanced_row_chunks, default_chunk_count, for_each_row_chunk, par_concat, par_offsets};
use crate::pattern::BlockPattern;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// Pattern of `X Y` (block-level; values never read).
pub fn spgemm_symbolic(x: &BlockPattern, y: &BlockPattern) -> Result<BlockPattern, SparseError> {
    if x.ncols() != y.nrows() {
        return Err(SparseError::Dimension {
            what: format!("X has {} block columns but Y has {} block rows", x.ncols(), y.nrows()),
        });
    }
    let work: Vec<usize> = (0..x.nrows())
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| x.row(i).iter().map(|&l| y.row(l as usize).len()).sum())
        .collect();
    let chunks = balanced_row_chunks(&work, default_chunk_count(x.nrows()));
    let parts: Vec<(Vec<usize>, Vec<u32>)> = chunks
        .par_iter()
        .map(|rows| {
            let mut marker = vec![u32::MAX; y.ncols()];
            let mut lens = Vec::with_capacity(rows.len());
            let mut cols = Vec::new();
            for i in rows.clone() {
                let start = cols.len();
                for &l in x.row(i) {
                    for &j in y.row(l as usize) {
                        if marker[j as usize] != i as u32 {
                            marker[j as usize] = i as u32;
                            cols.push(j);
                        }
                    }
                }
                cols[start..].sort_unstable();
                lens.push(cols.len() - start);
            }
            (lens, cols)
        })
        .collect();
    // Concatenated in chunk order, in parallel (the same pattern for any thread count).
    let (lens, cols): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    let (row_ptr, col_idx) = rayon::join(|| par_offsets(&lens), || par_concat(&cols));
    BlockPattern::new(x.nrows(), y.ncols(), row_ptr, col_idx)
}

/// Scratch of the numeric product, built once per product pattern and reused.
#[derive(Clone, Debug)]
pub struct SpgemmWorkspace {
    chunks: Vec<Range<usize>>,
    slot_of_col: Vec<Vec<u32>>,
    flops: usize,
}

impl SpgemmWorkspace {
    /// Splits `C`'s rows into chunks of equal block-multiply work.
    pub fn new(x: &BlockPattern, y: &BlockPattern, c: &BlockPattern) -> Self {
        let work: Vec<usize> = (0..x.nrows())
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| x.row(i).iter().map(|&l| y.row(l as usize).len()).sum())
            .collect();
        let flops = work.iter().sum();
        let chunks = balanced_row_chunks(&work, default_chunk_count(x.nrows()));
        let slot_of_col = vec![vec![u32::MAX; c.ncols()]; chunks.len()];
        Self {
            chunks,
            slot_of_col,
            flops,
        }
    }
    /// Number of block multiplies one numeric call performs.
    pub fn block_multiplies(&self) -> usize {
        self.flops
    }
}

/// The row-owner numeric stage `C = X Y` over `C`'s pattern, the loop every
/// two-pass product runs (V0's order): row `i` sums `X[i,l] Y[l,j]` over `X`'s
/// row in column order, then `Y`'s row `l` in column order, each block product
/// by `kernel` into the `out_len` scalars of its slot. `chunks` split the rows
/// (each chunk owns a `slots` column-to-slot map of `C.ncols()` entries).
///
/// A product whose column is not in `C`'s row (a pattern that is not the
/// symbolic product's, e.g. a damaged or forged schedule) is never written
/// elsewhere: it is skipped and the call returns
/// [`SparseError::PatternNotClosed`].
#[allow(clippy::too_many_arguments)]
pub fn row_owner_numeric<F>(
    x: &BlockCsr,
    y: &BlockCsr,
    c_pat: &BlockPattern,
    c_vals: &mut [f64],
    chunks: &[Range<usize>],
    slots: &mut [Vec<u32>],
    out_len: usize,
    kernel: F,
) -> Result<(), SparseError>
where
    F: Fn(&[f64], &[f64], &mut [f64]) + Sync,
{
    let (xp, yp) = (x.pattern(), y.pattern());
    let missing = AtomicBool::new(false);
    let body = |rows: Range<usize>, out: &mut [f64], slot: &mut Vec<u32>| {
        let base = c_pat.row_ptr()[rows.start];
        out.fill(0.0);
        for i in rows {
            let cr = c_pat.row_range(i);
            let (lo, hi) = (cr.start - base, cr.end - base);
            for (s, &j) in (lo..).zip(c_pat.row(i)) {
                slot[j as usize] = s as u32;
            }
            for kx in xp.row_range(i) {
                let l = xp.col_idx()[kx] as usize;
                let xb = x.block(kx);
                for ky in yp.row_range(l) {
                    // Slots of earlier rows (or never set) are outside [lo, hi).
                    let s = slot[yp.col_idx()[ky] as usize] as usize;
                    if s < lo || s >= hi {
                        missing.store(true, Ordering::Relaxed);
                        continue;
                    }
                    kernel(xb, y.block(ky), &mut out[s * out_len..(s + 1) * out_len]);
                }
            }
        }
    };
    for_each_row_chunk(chunks, c_pat.row_ptr(), out_len, c_vals, slots, &body);
    if missing.into_inner() {
        return Err(SparseError::PatternNotClosed);
    }
    Ok(())
}

/// `C = X Y` over `C`'s precomputed pattern (from [`spgemm_symbolic`]).
pub fn spgemm_numeric(
    x: &BlockCsr,
    y: &BlockCsr,
    c: &mut BlockCsr,
    ws: &mut SpgemmWorkspace,
) -> Result<(), SparseError> {
    let ((m, k), (k2, n)) = (x.block_shape(), y.block_shape());
    assert_eq!(k, k2, "inner block sizes differ");
    assert_eq!(c.block_shape(), (m, n), "C has the wrong block shape");
    let c_pat = c.pattern_arc().clone();
    let c_vals = c.values_mut();
    let (chunks, slots) = (&ws.chunks, &mut ws.slot_of_col);
    // The products of the shipped hierarchies get const-size blocks (each arm
    // monomorphizes the loop); any other shape the run-time-sized loop.
    macro_rules! fixed {
        ($m:literal, $k:literal, $n:literal) => {
            row_owner_numeric(x, y, &c_pat, c_vals, chunks, slots, m * n, |a, b, o| {
                gemm_acc::<$m, $k, $n>(a, b, o)
            })
        };
    }
    match (m, k, n) {
        (1, 1, 1) => fixed!(1, 1, 1),
        (2, 2, 2) => fixed!(2, 2, 2),
        (2, 2, 3) => fixed!(2, 2, 3),
        (3, 2, 3) => fixed!(3, 2, 3),
        (3, 3, 3) => fixed!(3, 3, 3),
        (3, 3, 6) => fixed!(3, 3, 6),
        (6, 3, 6) => fixed!(6, 3, 6),
        (6, 6, 6) => fixed!(6, 6, 6),
        _ => row_owner_numeric(x, y, &c_pat, c_vals, chunks, slots, m * n, |a, b, o| {
            gemm_acc_dyn(m, k, n, a, b, o)
        }),
    }
}

/// Symbolic and numeric in one call, for setup code that runs once.
pub fn spgemm(x: &BlockCsr, y: &BlockCsr) -> Result<BlockCsr, SparseError> {
    let pat = spgemm_symbolic(x.pattern(), y.pattern())?;
    let mut ws = SpgemmWorkspace::new(x.pattern(), y.pattern(), &pat);
    let mut c = BlockCsr::zeros(std::sync::Arc::new(pat), x.block_shape().0, y.block_shape().1);
    spgemm_numeric(x, y, &mut c, &mut ws)?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn csr(ncols: usize, rows: &[Vec<u32>], b: usize) -> BlockCsr {
        let p = Arc::new(BlockPattern::from_rows(ncols, rows).unwrap());
        let values = (0..p.nnzb() * b * b).map(|i| (i as f64 * 0.37).sin()).collect();
        BlockCsr::new(p, b, b, values).unwrap()
    }

    #[test]
    fn an_output_pattern_missing_a_product_is_an_error_not_a_stray_write() {
        // X Y has row 0 = {0, 1}, row 1 = {1, 2}.
        let x = csr(2, &[vec![0], vec![1]], 3);
        let y = csr(3, &[vec![0, 1], vec![1, 2]], 3);
        let good = spgemm_symbolic(x.pattern(), y.pattern()).unwrap();
        let mut ws = SpgemmWorkspace::new(x.pattern(), y.pattern(), &good);
        let mut c = BlockCsr::zeros(Arc::new(good), 3, 3);
        spgemm_numeric(&x, &y, &mut c, &mut ws).unwrap();
        let want = c.values().to_vec();
        // A forged pattern: row 1 lost column 2 (still sorted, in range).
        let forged = BlockPattern::from_rows(3, &[vec![0, 1], vec![1]]).unwrap();
        let mut ws = SpgemmWorkspace::new(x.pattern(), y.pattern(), &forged);
        let mut c = BlockCsr::zeros(Arc::new(forged), 3, 3);
        assert_eq!(
            spgemm_numeric(&x, &y, &mut c, &mut ws),
            Err(SparseError::PatternNotClosed)
        );
        // Every block the forged pattern does hold got its true value, nothing else.
        assert_eq!(c.values(), &want[..3 * 9]);
        // Twice, so slots left from the first call do not hide the gap.
        assert_eq!(
            spgemm_numeric(&x, &y, &mut c, &mut ws),
            Err(SparseError::PatternNotClosed)
        );
    }
}
