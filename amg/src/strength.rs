//! The strength-of-connection graph (amg.md step 1).
use ptap_sparse::par::{par_concat, par_offsets, uniform_row_chunks};
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;

/// Node graph kept by the threshold, with the scaled strength of each edge.
#[derive(Clone, Debug)]
pub struct StrengthGraph {
    /// Node adjacency including the diagonal.
    pub pattern: BlockPattern,
    /// `g_ij / sqrt(g_ii g_jj)` for each stored entry (1 on the diagonal).
    pub weights: Vec<f64>,
}

impl StrengthGraph {
    pub fn nodes(&self) -> usize {
        self.pattern.nrows()
    }
    /// Strong neighbours of `i` (diagonal excluded) with their weights.
    pub fn neighbours(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.pattern
            .row_range(i)
            .filter(move |&k| self.pattern.col_idx()[k] as usize != i)
            .map(move |k| (self.pattern.col_idx()[k] as usize, self.weights[k]))
    }
    /// Whether node `i` has any strong off-diagonal neighbour.
    pub fn has_neighbours(&self, i: usize) -> bool {
        self.pattern.row(i).len() > 1 || (self.pattern.row(i).len() == 1 && self.pattern.row(i)[0] as usize != i)
    }
}

/// Collapses each block to the sum of its absolute values, scales symmetrically
/// to a unit diagonal and keeps entries strictly above `theta` (the diagonal
/// always stays).
pub fn strength_graph(a: &BlockCsr, theta: f64) -> StrengthGraph {
    let p = a.pattern();
    let n = p.nrows();
    let collapsed: Vec<f64> = (0..p.nnzb())
        .into_par_iter()
        .map(|k| a.block(k).iter().map(|v| v.abs()).sum())
        .collect();
    let diag: Vec<f64> = p
        .diagonal_positions()
        .par_iter()
        .map(|&k| if k == usize::MAX { 0.0 } else { collapsed[k] })
        .collect();
    // Rows in contiguous chunks, each chunk's kept entries in flat arrays,
    // then concatenated in parallel: the same graph for any thread count.
    let chunks = uniform_row_chunks(n);
    let parts: Vec<(Vec<usize>, Vec<u32>, Vec<f64>)> = chunks
        .par_iter()
        .map(|rows| {
            let cap = p.row_ptr()[rows.end] - p.row_ptr()[rows.start];
            let mut lens = Vec::with_capacity(rows.len());
            let mut cols = Vec::with_capacity(cap);
            let mut w = Vec::with_capacity(cap);
            for i in rows.clone() {
                let start = cols.len();
                for k in p.row_range(i) {
                    let j = p.col_idx()[k] as usize;
                    if j == i {
                        cols.push(j as u32);
                        w.push(1.0);
                        continue;
                    }
                    let d = (diag[i] * diag[j]).sqrt();
                    let g = if d > 0.0 { collapsed[k] / d } else { 0.0 };
                    if g > theta {
                        cols.push(j as u32);
                        w.push(g);
                    }
                }
                lens.push(cols.len() - start);
            }
            (lens, cols, w)
        })
        .collect();
    let (lens, (cols, w)): (Vec<_>, (Vec<_>, Vec<_>)) = parts.into_iter().map(|(l, c, w)| (l, (c, w))).unzip();
    let row_ptr = par_offsets(&lens);
    let (col_idx, weights) = rayon::join(|| par_concat(&cols), || par_concat(&w));
    let pattern = BlockPattern::new(n, p.ncols(), row_ptr, col_idx).expect("strength graph inherits a valid pattern");
    StrengthGraph { pattern, weights }
}
