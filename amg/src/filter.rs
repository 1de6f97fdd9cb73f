//! Prolongator filtering with a kernel-preserving projection (the paper's
//! `sec:pfilter`, amg.md step 5).
//!
//! Smoothing fills `P`, and the Galerkin product squares that fill. After
//! smoothing, block `(i, J)` is dropped when `||P_iJ||_F < pf_l * max_K ||P_iK||_F`:
//! the reference is the largest block of the same block row, so the test is
//! invariant to the row scaling the near-null space gives each level, and
//! `pf_l = pf * pf_scale^l` ([`crate::AmgOptions::pf_at`]).
//!
//! Each row `i` with kept columns `S` is then corrected so that it reproduces
//! its near-null rows again: with `E = B_i - P_iS B_c,S` (`B_c,S` the stacked
//! coarse near-null blocks of `S`), the minimum-Frobenius-norm correction is
//! `P_iS += E B_c,S^+`, taken as `E R^-1 Q^T` from the thin QR `B_c,S = Q R`.
//! A row "kept enough blocks" when `B_c,S` has full column rank (numerically,
//! at the rank tolerance of the tentative QR); each coarse block is the `R` of
//! an aggregate that carries every mode, so one kept block normally suffices.
//! A row without full rank is left exactly as smoothing made it, unfiltered.
//! So is a row that dropped nothing: near the clamp smoothing moves `P_i B_c`
//! away from `B_i`, and projecting such rows too cost an iteration at k = 8.
//! Lumping the dropped mass instead ([`filter_prolongator_preserving`] with
//! only the translations) restores the constants but not the rotations, which
//! is the point of the projection.
use ptap_sparse::dense::thin_qr;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::sync::Arc;

/// What filtering did to one prolongator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterStats {
    pub blocks_before: usize,
    pub blocks_after: usize,
    /// Rows that dropped at least one block (and were projected).
    pub filtered_rows: usize,
    /// Rows whose kept blocks could not carry the preserved modes: left unfiltered.
    pub rank_deficient_rows: usize,
}

/// The filtered prolongator and its statistics.
#[derive(Clone, Debug)]
pub struct Filtered {
    pub p: BlockCsr,
    pub stats: FilterStats,
}

/// Drops the blocks of `p` below `threshold` times their row's largest block
/// norm and restores every near-null mode row by row (see the module doc).
/// `near_null` is the fine `B` (row-major `n*b x nm`), `coarse_near_null` the
/// coarse `B_c` (`nc*nm x nm`), `tol` the rank tolerance.
pub fn filter_prolongator(
    p: &BlockCsr,
    near_null: &[f64],
    coarse_near_null: &[f64],
    threshold: f64,
    tol: f64,
) -> Filtered {
    let nm = p.block_shape().1;
    filter_prolongator_preserving(p, near_null, coarse_near_null, threshold, nm, tol)
}

/// As [`filter_prolongator`], restoring only the leading `preserved` modes
/// (`preserved = b` on the fine level of the beam: the translations, which the
/// Gram-Schmidt order keeps first; this is lumping's guarantee, kept for contrast).
pub fn filter_prolongator_preserving(
    p: &BlockCsr,
    near_null: &[f64],
    coarse_near_null: &[f64],
    threshold: f64,
    preserved: usize,
    tol: f64,
) -> Filtered {
    let (b, nm) = p.block_shape();
    let pat = p.pattern();
    assert_eq!(
        near_null.len(),
        p.scalar_rows() * nm,
        "fine near-null space has the wrong size"
    );
    assert_eq!(
        coarse_near_null.len(),
        p.scalar_cols() * nm,
        "coarse near-null space has the wrong size"
    );
    assert!(preserved <= nm, "cannot preserve more modes than P has columns");
    let rows: Vec<FilteredRow> = (0..pat.nrows())
        .into_par_iter()
        .map(|i| {
            filter_row(
                p,
                i,
                &near_null[i * b * nm..(i + 1) * b * nm],
                coarse_near_null,
                threshold,
                preserved,
                tol,
            )
        })
        .collect();

    let mut row_ptr = Vec::with_capacity(pat.nrows() + 1);
    row_ptr.push(0usize);
    let mut stats = FilterStats {
        blocks_before: pat.nnzb(),
        ..FilterStats::default()
    };
    for r in &rows {
        row_ptr.push(row_ptr.last().unwrap() + r.cols.len());
        stats.filtered_rows += usize::from(r.outcome == RowOutcome::Projected);
        stats.rank_deficient_rows += usize::from(r.outcome == RowOutcome::RankDeficient);
    }
    stats.blocks_after = row_ptr[pat.nrows()];
    let col_idx: Vec<u32> = rows.iter().flat_map(|r| r.cols.iter().copied()).collect();
    let values: Vec<f64> = rows.iter().flat_map(|r| r.values.iter().copied()).collect();
    let pattern = BlockPattern::new(pat.nrows(), pat.ncols(), row_ptr, col_idx)
        .expect("a subset of a valid pattern's columns is a valid pattern");
    let p = BlockCsr::new(Arc::new(pattern), b, nm, values).expect("one b x nm block per kept column");
    Filtered { p, stats }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowOutcome {
    /// Nothing fell below the threshold: the row is unchanged.
    Kept,
    Projected,
    RankDeficient,
}

struct FilteredRow {
    cols: Vec<u32>,
    values: Vec<f64>,
    outcome: RowOutcome,
}

/// One block row: drop, then `P_iS += E R^-1 Q^T` over the leading `t` modes.
fn filter_row(p: &BlockCsr, i: usize, b_i: &[f64], b_c: &[f64], threshold: f64, t: usize, tol: f64) -> FilteredRow {
    let (b, nm) = p.block_shape();
    let pat = p.pattern();
    let range = pat.row_range(i);
    let norm = |k: usize| p.block(k).iter().map(|v| v * v).sum::<f64>().sqrt();
    let max = range.clone().map(norm).fold(0.0, f64::max);
    let kept: Vec<usize> = range.clone().filter(|&k| norm(k) >= threshold * max).collect();
    let unchanged = |outcome| FilteredRow {
        cols: pat.row(i).to_vec(),
        values: range.clone().flat_map(|k| p.block(k).iter().copied()).collect(),
        outcome,
    };
    if kept.len() == range.len() {
        return unchanged(RowOutcome::Kept);
    }
    // Stack the leading t columns of B_c over the kept coarse nodes.
    let s = kept.len();
    let mut stack = Vec::with_capacity(s * nm * t);
    for &k in &kept {
        let j = pat.col_idx()[k] as usize;
        for row in b_c[j * nm * nm..(j + 1) * nm * nm].chunks_exact(nm) {
            stack.extend_from_slice(&row[..t]);
        }
    }
    let (q, r, rank) = thin_qr(s * nm, t, &stack, tol);
    if rank < t {
        return unchanged(RowOutcome::RankDeficient);
    }
    // E = B_i - P_iS B_c,S (b x t).
    let mut e: Vec<f64> = (0..b).flat_map(|row| b_i[row * nm..row * nm + t].to_vec()).collect();
    for (pos, &k) in kept.iter().enumerate() {
        let blk = p.block(k);
        for row in 0..b {
            for c in 0..nm {
                let v = blk[row * nm + c];
                for m in 0..t {
                    e[row * t + m] -= v * stack[(pos * nm + c) * t + m];
                }
            }
        }
    }
    // X = E R^-1: forward substitution along each row of E (R upper triangular).
    for row in e.chunks_exact_mut(t) {
        for m in 0..t {
            let s: f64 = (0..m).map(|p| row[p] * r[p * t + m]).sum();
            row[m] = (row[m] - s) / r[m * t + m];
        }
    }
    let mut values = Vec::with_capacity(s * b * nm);
    for (pos, &k) in kept.iter().enumerate() {
        let blk = p.block(k);
        for row in 0..b {
            for c in 0..nm {
                let q_row = &q[(pos * nm + c) * t..(pos * nm + c + 1) * t];
                let dv: f64 = e[row * t..(row + 1) * t].iter().zip(q_row).map(|(x, y)| x * y).sum();
                values.push(blk[row * nm + c] + dv);
            }
        }
    }
    FilteredRow {
        cols: kept.iter().map(|&k| pat.col_idx()[k]).collect(),
        values,
        outcome: RowOutcome::Projected,
    }
}
