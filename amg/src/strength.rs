//! The strength-of-connection graph (amg.md step 1).
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
        .iter()
        .map(|&k| if k == usize::MAX { 0.0 } else { collapsed[k] })
        .collect();
    let rows: Vec<(Vec<u32>, Vec<f64>)> = (0..n)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let mut cols = Vec::new();
            let mut w = Vec::new();
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
            (cols, w)
        })
        .collect();
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let mut col_idx = Vec::new();
    let mut weights = Vec::new();
    for (c, w) in rows {
        col_idx.extend_from_slice(&c);
        weights.extend_from_slice(&w);
        row_ptr.push(col_idx.len());
    }
    let pattern = BlockPattern::new(n, p.ncols(), row_ptr, col_idx).expect("strength graph inherits a valid pattern");
    StrengthGraph { pattern, weights }
}
