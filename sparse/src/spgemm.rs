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
use crate::par::{balanced_row_chunks, default_chunk_count, for_each_row_chunk};
use crate::pattern::BlockPattern;
use rayon::prelude::*;
use std::ops::Range;

/// Pattern of `X Y` (block-level; values never read).
pub fn spgemm_symbolic(x: &BlockPattern, y: &BlockPattern) -> Result<BlockPattern, SparseError> {
    if x.ncols() != y.nrows() {
        return Err(SparseError::Dimension {
            what: format!("X has {} block columns but Y has {} block rows", x.ncols(), y.nrows()),
        });
    }
    let work: Vec<usize> = (0..x.nrows())
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
    let mut row_ptr = Vec::with_capacity(x.nrows() + 1);
    row_ptr.push(0);
    let mut col_idx = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (lens, cols) in parts {
        for l in lens {
            row_ptr.push(row_ptr.last().unwrap() + l);
        }
        col_idx.extend_from_slice(&cols);
    }
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

fn numeric_fixed<const M: usize, const K: usize, const N: usize>(
    x: &BlockCsr,
    y: &BlockCsr,
    c_pat: &BlockPattern,
    c_vals: &mut [f64],
    ws: &mut SpgemmWorkspace,
) {
    let (xp, yp) = (x.pattern(), y.pattern());
    let body = |rows: Range<usize>, out: &mut [f64], slot: &mut Vec<u32>| {
        let base = c_pat.row_ptr()[rows.start];
        out.fill(0.0);
        for i in rows {
            let cr = c_pat.row_range(i);
            for (s, &j) in (cr.start - base..).zip(c_pat.row(i)) {
                slot[j as usize] = s as u32;
            }
            for kx in xp.row_range(i) {
                let l = xp.col_idx()[kx] as usize;
                let xb = x.block(kx);
                for ky in yp.row_range(l) {
                    let s = slot[yp.col_idx()[ky] as usize] as usize;
                    gemm_acc::<M, K, N>(xb, y.block(ky), &mut out[s * M * N..(s + 1) * M * N]);
                }
            }
        }
    };
    for_each_row_chunk(&ws.chunks, c_pat.row_ptr(), M * N, c_vals, &mut ws.slot_of_col, &body);
}

fn numeric_dyn(x: &BlockCsr, y: &BlockCsr, c_pat: &BlockPattern, c_vals: &mut [f64], ws: &mut SpgemmWorkspace) {
    let ((m, k), (_, n)) = (x.block_shape(), y.block_shape());
    let (xp, yp) = (x.pattern(), y.pattern());
    let body = |rows: Range<usize>, out: &mut [f64], slot: &mut Vec<u32>| {
        let base = c_pat.row_ptr()[rows.start];
        out.fill(0.0);
        for i in rows {
            let cr = c_pat.row_range(i);
            for (s, &j) in (cr.start - base..).zip(c_pat.row(i)) {
                slot[j as usize] = s as u32;
            }
            for kx in xp.row_range(i) {
                let l = xp.col_idx()[kx] as usize;
                for ky in yp.row_range(l) {
                    let s = slot[yp.col_idx()[ky] as usize] as usize;
                    gemm_acc_dyn(m, k, n, x.block(kx), y.block(ky), &mut out[s * m * n..(s + 1) * m * n]);
                }
            }
        }
    };
    for_each_row_chunk(&ws.chunks, c_pat.row_ptr(), m * n, c_vals, &mut ws.slot_of_col, &body);
}

/// `C = X Y` over `C`'s precomputed pattern (from [`spgemm_symbolic`]).
pub fn spgemm_numeric(x: &BlockCsr, y: &BlockCsr, c: &mut BlockCsr, ws: &mut SpgemmWorkspace) {
    let ((m, k), (k2, n)) = (x.block_shape(), y.block_shape());
    assert_eq!(k, k2, "inner block sizes differ");
    assert_eq!(c.block_shape(), (m, n), "C has the wrong block shape");
    let c_pat = c.pattern_arc().clone();
    let c_vals = c.values_mut();
    // The products of the shipped hierarchies get const-size blocks; any other shape the run-time-sized loop.
    match (m, k, n) {
        (1, 1, 1) => numeric_fixed::<1, 1, 1>(x, y, &c_pat, c_vals, ws),
        (2, 2, 2) => numeric_fixed::<2, 2, 2>(x, y, &c_pat, c_vals, ws),
        (2, 2, 3) => numeric_fixed::<2, 2, 3>(x, y, &c_pat, c_vals, ws),
        (3, 2, 3) => numeric_fixed::<3, 2, 3>(x, y, &c_pat, c_vals, ws),
        (3, 3, 3) => numeric_fixed::<3, 3, 3>(x, y, &c_pat, c_vals, ws),
        (3, 3, 6) => numeric_fixed::<3, 3, 6>(x, y, &c_pat, c_vals, ws),
        (6, 3, 6) => numeric_fixed::<6, 3, 6>(x, y, &c_pat, c_vals, ws),
        (6, 6, 6) => numeric_fixed::<6, 6, 6>(x, y, &c_pat, c_vals, ws),
        _ => numeric_dyn(x, y, &c_pat, c_vals, ws),
    }
}

/// Symbolic and numeric in one call, for setup code that runs once.
pub fn spgemm(x: &BlockCsr, y: &BlockCsr) -> Result<BlockCsr, SparseError> {
    let pat = spgemm_symbolic(x.pattern(), y.pattern())?;
    let mut ws = SpgemmWorkspace::new(x.pattern(), y.pattern(), &pat);
    let mut c = BlockCsr::zeros(std::sync::Arc::new(pat), x.block_shape().0, y.block_shape().1);
    spgemm_numeric(x, y, &mut c, &mut ws);
    Ok(c)
}
