//! V0, the two-pass product: `W = A P` materialized, `R = P^T` explicit, `A_c = R W`.
use crate::{ScheduleError, SharedArray};
use ptap_sparse::spgemm::spgemm_symbolic;
use ptap_sparse::BlockPattern;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;

/// The quantities of the paper's hierarchy table (`tab:hier`), in block units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ProductStats {
    /// Fine block rows.
    pub m_f: usize,
    /// Blocks of `A`.
    pub z_a: usize,
    /// `Z_A / m_F`.
    pub n_a: f64,
    /// Blocks of `P`.
    pub z_p: usize,
    /// `Z_P / m_F`: coarse aggregates each fine row couples to.
    pub n_p: f64,
    /// Blocks of `W = A P`.
    pub z_w: usize,
    /// `Z_W / Z_P`: fill growth of the intermediate.
    pub w: f64,
    /// Coarse block rows.
    pub m_c: usize,
    /// Blocks of `A_c`.
    pub z_c: usize,
    /// `Z_C / m_C`.
    pub n_c: f64,
    /// Block multiplies in `A P` plus `R W`.
    pub block_multiplies: usize,
}

impl ProductStats {
    /// The statistics from the block counts; the ratios follow.
    pub fn from_counts(
        m_f: usize,
        z_a: usize,
        z_p: usize,
        z_w: usize,
        m_c: usize,
        z_c: usize,
        block_multiplies: usize,
    ) -> Self {
        let ratio = |x: usize, y: usize| if y == 0 { 0.0 } else { x as f64 / y as f64 };
        Self {
            m_f,
            z_a,
            n_a: ratio(z_a, m_f),
            z_p,
            n_p: ratio(z_p, m_f),
            z_w,
            w: ratio(z_w, z_p),
            m_c,
            z_c,
            n_c: ratio(z_c, m_c),
            block_multiplies,
        }
    }
}

/// Symbolic result of the two-pass product, shared by every numeric refresh.
#[derive(Clone, Debug)]
pub struct TwoPassSchedule {
    pub a: Arc<BlockPattern>,
    pub p: Arc<BlockPattern>,
    /// Pattern of `W = A P`.
    pub w: Arc<BlockPattern>,
    /// Pattern of `R = P^T`.
    pub r: Arc<BlockPattern>,
    /// For each block of `R`, the block of `P` it is the transpose of: `R`'s
    /// numeric refresh is a pure gather.
    pub r_source: SharedArray<u32>,
    /// Pattern of `A_c = R W`.
    pub c: Arc<BlockPattern>,
    pub stats: ProductStats,
}

impl TwoPassSchedule {
    /// Builds the patterns of `W`, `R` and `A_c` from those of `A` and `P`.
    pub fn inspect(a: Arc<BlockPattern>, p: Arc<BlockPattern>) -> Result<Self, ScheduleError> {
        if a.nrows() != a.ncols() || a.ncols() != p.nrows() {
            return Err(ScheduleError::Shapes {
                a_rows: a.nrows(),
                a_cols: a.ncols(),
                p_rows: p.nrows(),
            });
        }
        // W = A P and R = P^T are independent; integer sums in any order.
        let (w, (r, r_source)) = rayon::join(|| spgemm_symbolic(&a, &p), || p.transpose());
        let w = Arc::new(w?);
        let r = Arc::new(r);
        let c = Arc::new(spgemm_symbolic(&r, &w)?);
        let ap: usize = (0..a.nrows())
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| a.row(i).iter().map(|&j| p.row(j as usize).len()).sum::<usize>())
            .sum();
        let rw: usize = (0..r.nrows())
            .into_par_iter()
            .map(|i| r.row(i).iter().map(|&j| w.row(j as usize).len()).sum::<usize>())
            .sum();
        let stats = ProductStats::from_counts(a.nrows(), a.nnzb(), p.nnzb(), w.nnzb(), c.nrows(), c.nnzb(), ap + rw);
        Ok(Self {
            a,
            p,
            w,
            r,
            r_source: r_source.into(),
            c,
            stats,
        })
    }
}
