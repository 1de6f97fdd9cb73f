//! Prolongator filtering with a kernel-preserving projection (the paper's
//! `sec:pfilter`, amg.md step 5).
//!
//! Smoothing fills `P`, and the Galerkin product squares that fill. After
//! smoothing, block `(i, J)` is dropped when `||P_iJ||_F < pf_l * max_K ||P_iK||_F`:
//! the reference is the largest block of the same block row, so the test is
//! invariant to the row scaling the near-null space gives each level, and
//! `pf_l = pf * pf_scale^l` ([`crate::AmgOptions::pf_at`]).
//!
//! Each row `i` with kept columns `S` is then corrected so that its action on
//! the coarse near-null space is what it was before dropping: with
//! `E = sum_{J dropped} P_iJ B_c[J]` (the dropped action), the
//! minimum-Frobenius-norm correction is `P_iS += E B_c,S^+` (`B_c,S` the stacked
//! coarse near-null blocks of `S`), taken as `E R^-1 Q^T` from the thin QR
//! `B_c,S = Q R`. So `P B_c` is unchanged on every projected row, and
//! `P B_c = B` wherever smoothing kept it: every row whose stencil misses the
//! Dirichlet boundary (`A B = 0` there). Near the clamp smoothing moves
//! `P_i B_c` off `B_i` on purpose; pulling those rows back to `B_i` instead
//! cost 5 iterations at k = 16 (20 against 15) in our runs, this target none.
//! A row "kept enough blocks" when `B_c,S` has full column rank (numerically,
//! at the rank tolerance of the tentative QR); each coarse block is the `R` of
//! an aggregate that carries every mode, so one kept block normally suffices.
//! A row without full rank is left exactly as smoothing made it, unfiltered,
//! and so is a row that dropped nothing.
//! Lumping the dropped mass instead ([`filter_prolongator_preserving`] with
//! only the translations) restores the constants but not the rotations, which
//! is the point of the projection.
use crate::prolongator::positive_scalar_diagonal;
use crate::AmgError;
use ptap_sparse::dense::{gemm_acc, gemm_acc_dyn, thin_qr};
use ptap_sparse::par::{par_concat, par_offsets, uniform_row_chunks};
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
/// norm and restores its action on every near-null mode row by row (see the
/// module doc). `coarse_near_null` is the coarse `B_c` (row-major `nc*nm x nm`),
/// `tol` the rank tolerance.
pub fn filter_prolongator(p: &BlockCsr, coarse_near_null: &[f64], threshold: f64, tol: f64) -> Filtered {
    let nm = p.block_shape().1;
    filter_prolongator_preserving(p, coarse_near_null, threshold, nm, tol)
}

/// As [`filter_prolongator`], restoring only the leading `preserved` modes
/// (`preserved = b` on the fine level of the beam: the translations, which the
/// Gram-Schmidt order keeps first; this is lumping's guarantee, kept for contrast).
pub fn filter_prolongator_preserving(
    p: &BlockCsr,
    coarse_near_null: &[f64],
    threshold: f64,
    preserved: usize,
    tol: f64,
) -> Filtered {
    let (b, nm) = p.block_shape();
    let pat = p.pattern();
    let rows = filter_rows(
        (pat.row_ptr(), pat.col_idx(), p.values()),
        pat.ncols(),
        (b, nm),
        coarse_near_null,
        threshold,
        preserved,
        tol,
    );
    let pattern = BlockPattern::new(pat.nrows(), pat.ncols(), rows.row_ptr, rows.cols)
        .expect("a subset of a valid pattern's columns is a valid pattern");
    let p = BlockCsr::new(Arc::new(pattern), b, nm, rows.values).expect("one b x nm block per kept column");
    Filtered { p, stats: rows.stats }
}

/// The rows [`filter_rows`] keeps, and what it did.
#[derive(Clone, Debug)]
pub struct FilteredRows {
    pub row_ptr: Vec<usize>,
    pub cols: Vec<u32>,
    pub values: Vec<f64>,
    pub stats: FilterStats,
}

/// [`filter_prolongator_preserving`] on `P`'s rows as plain arrays (row
/// pointers, sorted columns below `ncols`, `b x nm` blocks; the arrays of a
/// valid pattern), returning the kept rows as arrays: the distributed setup filters
/// its rows of `P` with this kernel and keeps its own column numbering,
/// without building (and copying out of) a [`BlockCsr`].
pub fn filter_rows(
    (row_ptr, col_idx, p_values): (&[usize], &[u32], &[f64]),
    ncols: usize,
    (b, nm): (usize, usize),
    coarse_near_null: &[f64],
    threshold: f64,
    preserved: usize,
    tol: f64,
) -> FilteredRows {
    let nrows = row_ptr.len() - 1;
    assert_eq!(
        coarse_near_null.len(),
        ncols * nm * nm,
        "coarse near-null space has the wrong size"
    );
    assert!(preserved <= nm, "cannot preserve more modes than P has columns");
    // Rows in contiguous chunks, each chunk's kept blocks in flat arrays, then
    // concatenated in parallel: the same prolongator for any thread count.
    let chunks = uniform_row_chunks(nrows);
    let parts: Vec<FilteredChunk> = chunks
        .par_iter()
        .map(|rows| {
            let cap = row_ptr[rows.end] - row_ptr[rows.start];
            let mut c = FilteredChunk {
                lens: Vec::with_capacity(rows.len()),
                cols: Vec::with_capacity(cap),
                values: Vec::with_capacity(cap * b * nm),
                filtered_rows: 0,
                rank_deficient_rows: 0,
            };
            let mut scratch = RowScratch::default();
            for i in rows.clone() {
                let start = c.cols.len();
                let range = row_ptr[i]..row_ptr[i + 1];
                let row_vals = &p_values[range.start * b * nm..range.end * b * nm];
                let outcome = filter_row(
                    (b, nm),
                    &col_idx[range],
                    row_vals,
                    coarse_near_null,
                    threshold,
                    preserved,
                    tol,
                    &mut c.cols,
                    &mut c.values,
                    &mut scratch,
                );
                c.finish_row(outcome, start);
            }
            c
        })
        .collect();
    let mut stats = FilterStats {
        blocks_before: col_idx.len(),
        ..FilterStats::default()
    };
    let (row_ptr, cols, values) = FilteredChunk::concat(parts, &mut stats);
    stats.blocks_after = row_ptr[nrows];
    FilteredRows {
        row_ptr,
        cols,
        values,
        stats,
    }
}

/// [`crate::smooth_prolongator`] followed by [`filter_prolongator`], row by
/// row, without forming the unfiltered smoothed `P`: each row of `A P0` is
/// summed in [`ptap_sparse::spgemm::spgemm_numeric`]'s order, scaled and
/// corrected exactly as smoothing does, then filtered as the filter does, so
/// the result is the same bits as the two passes (and never stores the
/// smoothed `P`, the larger of the two).
pub fn smooth_and_filter(
    a: &BlockCsr,
    p0: &BlockCsr,
    omega: f64,
    level: usize,
    coarse_near_null: &[f64],
    threshold: f64,
    tol: f64,
) -> Result<BlockCsr, AmgError> {
    let d = positive_scalar_diagonal(a, level)?;
    let (b, k) = a.block_shape();
    let (k2, nm) = p0.block_shape();
    if k != k2 || a.pattern().ncols() != p0.pattern().nrows() {
        return Err(AmgError::Sparse(ptap_sparse::SparseError::Dimension {
            what: format!(
                "A has {} block columns of width {k} but P0 has {} block rows of height {k2}",
                a.pattern().ncols(),
                p0.pattern().nrows()
            ),
        }));
    }
    assert_eq!(
        coarse_near_null.len(),
        p0.scalar_cols() * nm,
        "coarse near-null space has the wrong size"
    );
    Ok(match (b, k, nm) {
        (3, 3, 6) => smooth_and_filter_with(a, p0, omega, &d, coarse_near_null, threshold, tol, gemm_acc::<3, 3, 6>),
        (6, 6, 6) => smooth_and_filter_with(a, p0, omega, &d, coarse_near_null, threshold, tol, gemm_acc::<6, 6, 6>),
        (3, 3, 3) => smooth_and_filter_with(a, p0, omega, &d, coarse_near_null, threshold, tol, gemm_acc::<3, 3, 3>),
        _ => smooth_and_filter_with(a, p0, omega, &d, coarse_near_null, threshold, tol, |x, y, o| {
            gemm_acc_dyn(b, k, nm, x, y, o)
        }),
    })
}

/// The body of [`smooth_and_filter`] over one block kernel (`gemm_acc` and
/// `gemm_acc_dyn` sum in the same order, so any of them gives the same bits).
#[allow(clippy::too_many_arguments)]
fn smooth_and_filter_with<F>(
    a: &BlockCsr,
    p0: &BlockCsr,
    omega: f64,
    d: &[f64],
    b_c: &[f64],
    threshold: f64,
    tol: f64,
    kernel: F,
) -> BlockCsr
where
    F: Fn(&[f64], &[f64], &mut [f64]) + Sync,
{
    let b = a.block_shape().0;
    let nm = p0.block_shape().1;
    let bn = b * nm;
    let (ap, pp) = (a.pattern(), p0.pattern());
    let chunks = uniform_row_chunks(ap.nrows());
    let parts: Vec<FilteredChunk> = chunks
        .par_iter()
        .map(|rows| {
            // P0 holds at most one block per row, so a row of A P0 has at
            // most as many blocks as the row of A (a bound, not a fill).
            let cap = ap.row_ptr()[rows.end] - ap.row_ptr()[rows.start];
            let mut c = FilteredChunk {
                lens: Vec::with_capacity(rows.len()),
                cols: Vec::with_capacity(cap),
                values: Vec::with_capacity(cap * bn),
                filtered_rows: 0,
                rank_deficient_rows: 0,
            };
            let mut scratch = RowScratch::default();
            let mut marker = vec![u32::MAX; pp.ncols()];
            let mut slot = vec![u32::MAX; pp.ncols()];
            let (mut row_cols, mut row_vals): (Vec<u32>, Vec<f64>) = (Vec::new(), Vec::new());
            for i in rows.clone() {
                // Row i of A P0's pattern, as the symbolic product forms it.
                row_cols.clear();
                for &l in ap.row(i) {
                    for &j in pp.row(l as usize) {
                        if marker[j as usize] != i as u32 {
                            marker[j as usize] = i as u32;
                            row_cols.push(j);
                        }
                    }
                }
                row_cols.sort_unstable();
                for (s, &j) in row_cols.iter().enumerate() {
                    slot[j as usize] = s as u32;
                }
                // Its values in the numeric product's order.
                row_vals.clear();
                row_vals.resize(row_cols.len() * bn, 0.0);
                for kx in ap.row_range(i) {
                    let l = ap.col_idx()[kx] as usize;
                    let xb = a.block(kx);
                    for ky in pp.row_range(l) {
                        let s = slot[pp.col_idx()[ky] as usize] as usize;
                        kernel(xb, p0.block(ky), &mut row_vals[s * bn..(s + 1) * bn]);
                    }
                }
                // Scaled by -omega D^-1, then P0's block added (smoothing).
                for blk in row_vals.chunks_exact_mut(bn) {
                    for r in 0..b {
                        let s = -omega / d[i * b + r];
                        for v in &mut blk[r * nm..(r + 1) * nm] {
                            *v *= s;
                        }
                    }
                }
                for k0 in pp.row_range(i) {
                    let local = slot[pp.col_idx()[k0] as usize] as usize;
                    for (v, w) in row_vals[local * bn..(local + 1) * bn].iter_mut().zip(p0.block(k0)) {
                        *v += w;
                    }
                }
                let start = c.cols.len();
                let outcome = filter_row(
                    (b, nm),
                    &row_cols,
                    &row_vals,
                    b_c,
                    threshold,
                    nm,
                    tol,
                    &mut c.cols,
                    &mut c.values,
                    &mut scratch,
                );
                c.finish_row(outcome, start);
            }
            c
        })
        .collect();
    let (row_ptr, col_idx, values) = FilteredChunk::concat(parts, &mut FilterStats::default());
    let pattern = BlockPattern::new(ap.nrows(), pp.ncols(), row_ptr, col_idx)
        .expect("a subset of a valid product pattern's columns is a valid pattern");
    BlockCsr::new(Arc::new(pattern), b, nm, values).expect("one b x nm block per kept column")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowOutcome {
    /// Nothing fell below the threshold: the row is unchanged.
    Kept,
    Projected,
    RankDeficient,
}

/// The kept blocks of a chunk of rows, and what happened to them.
struct FilteredChunk {
    lens: Vec<usize>,
    cols: Vec<u32>,
    values: Vec<f64>,
    filtered_rows: usize,
    rank_deficient_rows: usize,
}

impl FilteredChunk {
    /// Closes a row whose kept blocks were appended from `cols[start..]` on,
    /// counting what the filter did to it.
    fn finish_row(&mut self, outcome: RowOutcome, start: usize) {
        match outcome {
            RowOutcome::Kept => {}
            RowOutcome::Projected => self.filtered_rows += 1,
            RowOutcome::RankDeficient => self.rank_deficient_rows += 1,
        }
        self.lens.push(self.cols.len() - start);
    }

    /// The chunks' rows in order, as row pointers, columns and values
    /// (concatenated in parallel); their row counts are added to `stats`.
    fn concat(parts: Vec<FilteredChunk>, stats: &mut FilterStats) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
        let (mut lens, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for c in parts {
            stats.filtered_rows += c.filtered_rows;
            stats.rank_deficient_rows += c.rank_deficient_rows;
            lens.push(c.lens);
            cols.push(c.cols);
            vals.push(c.values);
        }
        let (row_ptr, (cols, values)) = rayon::join(
            || par_offsets(&lens),
            || rayon::join(|| par_concat(&cols), || par_concat(&vals)),
        );
        (row_ptr, cols, values)
    }
}

/// Per-chunk buffers of [`filter_row`], and the last QR it factored: rows
/// that keep the same coarse columns (neighbours in one aggregate, often) stack
/// the same `B_c` rows, so they reuse its `Q`, `R` and rank (the same numbers
/// a new factorization would give).
#[derive(Default)]
struct RowScratch {
    norms: Vec<f64>,
    kept: Vec<usize>,
    dropped: Vec<usize>,
    stack: Vec<f64>,
    e: Vec<f64>,
    qr_cols: Vec<u32>,
    qr: Option<(Vec<f64>, Vec<f64>, usize)>,
}

/// One block row: drop, then `P_iS += E R^-1 Q^T` over the leading `t` modes;
/// the row's kept columns and values are appended to `cols` and `values`.
#[allow(clippy::too_many_arguments)]
fn filter_row(
    (b, nm): (usize, usize),
    row_cols: &[u32],
    row_vals: &[f64],
    b_c: &[f64],
    threshold: f64,
    t: usize,
    tol: f64,
    cols: &mut Vec<u32>,
    values: &mut Vec<f64>,
    sc: &mut RowScratch,
) -> RowOutcome {
    let bn = b * nm;
    let block = |k: usize| &row_vals[k * bn..(k + 1) * bn];
    let range = 0..row_cols.len();
    sc.norms.clear();
    sc.norms.extend(
        range
            .clone()
            .map(|k| block(k).iter().map(|v| v * v).sum::<f64>().sqrt()),
    );
    let max = sc.norms.iter().copied().fold(0.0, f64::max);
    sc.kept.clear();
    sc.dropped.clear();
    for (k, &nk) in range.clone().zip(&sc.norms) {
        if nk >= threshold * max {
            sc.kept.push(k);
        } else {
            sc.dropped.push(k);
        }
    }
    let mut unchanged = |outcome| {
        cols.extend_from_slice(row_cols);
        values.extend_from_slice(row_vals);
        outcome
    };
    if sc.dropped.is_empty() {
        return unchanged(RowOutcome::Kept);
    }
    // Stack the leading t columns of B_c over the kept coarse nodes.
    let s = sc.kept.len();
    let same =
        sc.qr.is_some() && sc.qr_cols.len() == s && sc.kept.iter().zip(&sc.qr_cols).all(|(&k, &j)| row_cols[k] == j);
    if !same {
        sc.stack.clear();
        for &k in &sc.kept {
            let j = row_cols[k] as usize;
            for row in b_c[j * nm * nm..(j + 1) * nm * nm].chunks_exact(nm) {
                sc.stack.extend_from_slice(&row[..t]);
            }
        }
        sc.qr = Some(thin_qr(s * nm, t, &sc.stack, tol));
        sc.qr_cols.clear();
        sc.qr_cols.extend(sc.kept.iter().map(|&k| row_cols[k]));
    }
    let (q, r, rank) = sc.qr.as_ref().expect("factored above or reused");
    if *rank < t {
        return unchanged(RowOutcome::RankDeficient);
    }
    // E = sum over dropped J of P_iJ B_c[J] (b x t): the action to put back.
    sc.e.clear();
    sc.e.resize(b * t, 0.0);
    let e = &mut sc.e;
    for &k in &sc.dropped {
        let (blk, j) = (block(k), row_cols[k] as usize);
        for row in 0..b {
            for c in 0..nm {
                let v = blk[row * nm + c];
                for m in 0..t {
                    e[row * t + m] += v * b_c[(j * nm + c) * nm + m];
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
    for (pos, &k) in sc.kept.iter().enumerate() {
        let blk = block(k);
        for row in 0..b {
            for c in 0..nm {
                let q_row = &q[(pos * nm + c) * t..(pos * nm + c + 1) * t];
                let dv: f64 = e[row * t..(row + 1) * t].iter().zip(q_row).map(|(x, y)| x * y).sum();
                values.push(blk[row * nm + c] + dv);
            }
        }
    }
    cols.extend(sc.kept.iter().map(|&k| row_cols[k]));
    RowOutcome::Projected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{rigid_body_modes, smooth_prolongator, strength_graph, tentative_prolongator, Aggregation};

    /// A 3D grid of `n^3` nodes with 3x3 blocks, 27-point coupling (a
    /// diagonally dominant SPD-like operator with varied entries), and its
    /// rigid-body near-null space.
    fn grid_operator(n: usize) -> (BlockCsr, Vec<f64>) {
        let id = |x: usize, y: usize, z: usize| ((x * n + y) * n + z) as u32;
        let mut rows = Vec::new();
        let mut coords = Vec::new();
        for x in 0..n {
            for y in 0..n {
                for z in 0..n {
                    coords.extend([x as f64, y as f64 * 1.1, z as f64 * 0.9]);
                    let mut r = Vec::new();
                    for dx in x.saturating_sub(1)..(x + 2).min(n) {
                        for dy in y.saturating_sub(1)..(y + 2).min(n) {
                            for dz in z.saturating_sub(1)..(z + 2).min(n) {
                                r.push(id(dx, dy, dz));
                            }
                        }
                    }
                    rows.push(r);
                }
            }
        }
        let pattern = Arc::new(BlockPattern::from_rows(n * n * n, &rows).unwrap());
        let mut values = vec![0.0; pattern.nnzb() * 9];
        for i in 0..pattern.nrows() {
            for k in pattern.row_range(i) {
                let j = pattern.col_idx()[k] as usize;
                for e in 0..9 {
                    let v = &mut values[k * 9 + e];
                    *v = if i == j {
                        if e % 4 == 0 {
                            60.0 + (i % 7) as f64
                        } else {
                            0.3
                        }
                    } else {
                        -1.0 - ((i * 31 + j * 17 + e) % 11) as f64 * 0.05
                    };
                }
            }
        }
        let a = BlockCsr::new(pattern, 3, 3, values).unwrap();
        let nn = rigid_body_modes(&coords, 3).unwrap();
        (a, nn)
    }

    #[test]
    fn smoothing_and_filtering_in_one_pass_are_the_two_passes_bits_on_any_thread_count() {
        let (a, nn) = grid_operator(9);
        let g = strength_graph(&a, 0.0);
        let aggs = Aggregation::Natural.aggregate(&g, true);
        let tent = tentative_prolongator(&aggs, &nn, 3, 6, 1e-6);
        let omega = 0.02;
        for threshold in [0.03, 0.2, 0.6] {
            let smoothed = smooth_prolongator(&a, &tent.p0, omega, 0).unwrap();
            let want = filter_prolongator(&smoothed, &tent.coarse_near_null, threshold, 1e-6);
            assert!(want.stats.filtered_rows > 0, "threshold {threshold} filters rows");
            assert!(want.stats.blocks_after < want.stats.blocks_before);
            for threads in [1, 4] {
                let got = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| smooth_and_filter(&a, &tent.p0, omega, 0, &tent.coarse_near_null, threshold, 1e-6))
                    .unwrap();
                assert_eq!(
                    got.pattern(),
                    want.p.pattern(),
                    "threshold {threshold}, {threads} threads"
                );
                let bits = |m: &BlockCsr| m.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want.p), "threshold {threshold}, {threads} threads");
            }
        }
    }
}
