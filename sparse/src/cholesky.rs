//! The dense Cholesky factor of the coarsest AMG operator, refactored at every
//! matrix setup and applied in every V-cycle.
//!
//! [`cholesky_reference`] is the plain column-by-column algorithm.
//! [`Cholesky`] computes the same numbers in the same order, so it is equal to
//! it bit for bit, but fast:
//! - it factors by blocks of [`NB`] columns: each row below a block streams
//!   its prefix once for the block's `NB` columns, whose sums advance side by
//!   side (independent chains, vectorizable, each still summing one term at a
//!   time in increasing `k`);
//! - the rows below a block are independent, so they run in parallel.
//!
//! It keeps `L^T` in the upper triangle, so both triangular solves read rows:
//! the forward one as column updates (every row's sum still taken in
//! increasing `k`), the backward one as row dot products.
use crate::error::SparseError;
use rayon::prelude::*;

/// Columns factored together (the width of the sums a row advances side by side).
pub const NB: usize = 8;

/// Multiply-subtracts a parallel task of the trailing update takes at least.
const MIN_TASK_WORK: usize = 1 << 15;

/// The plain reference: `a = L L^T` column by column, `L` returned row-major
/// (`n x n`, zero above the diagonal). Reads only `a`'s lower triangle. Each
/// entry is its `a` value minus one product at a time in increasing `k`,
/// divided by the column's pivot (the square root of its own such sum).
pub fn cholesky_reference(n: usize, a: &[f64]) -> Result<Vec<f64>, SparseError> {
    let mut l = a[..n * n].to_vec();
    let scale = max_diagonal(n, &l);
    for j in 0..n {
        let mut d = l[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        let d = pivot(d, j, n, scale)?;
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = l[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
        for i in 0..j {
            l[i * n + j] = 0.0;
        }
    }
    Ok(l)
}

fn max_diagonal(n: usize, a: &[f64]) -> f64 {
    (0..n).map(|i| a[i * n + i].abs()).fold(0.0, f64::max)
}

/// The pivot `sqrt(d)` of row `j`, or the error that names it.
fn pivot(d: f64, j: usize, n: usize, scale: f64) -> Result<f64, SparseError> {
    if !d.is_finite() {
        return Err(SparseError::NotFinite {
            what: "coarse operator".into(),
        });
    }
    if d <= 1e-14 * scale {
        return Err(SparseError::Singular {
            what: format!("pivot {d:e} at row {j} of the {n}x{n} coarse operator"),
        });
    }
    Ok(d.sqrt())
}

/// Dense Cholesky factor `a = L L^T` of an SPD `n x n` row-major matrix:
/// `L` in the lower triangle, `L^T` in the upper one. Bit for bit the factor
/// of [`cholesky_reference`] and its solves.
#[derive(Clone, Debug)]
pub struct Cholesky {
    n: usize,
    l: Vec<f64>,
    /// The block of columns being factored, transposed (`k`-major, `NB` wide).
    panel: Vec<f64>,
}

impl Cholesky {
    /// Allocates the factor storage for order `n` (filled by [`Cholesky::refactor`]).
    pub fn with_order(n: usize) -> Self {
        Self {
            n,
            l: vec![0.0; n * n],
            panel: vec![0.0; n * NB],
        }
    }

    pub fn order(&self) -> usize {
        self.n
    }

    /// `L` (row-major `n x n`), zero above the diagonal, as the reference gives it.
    pub fn lower(&self) -> Vec<f64> {
        let n = self.n;
        (0..n * n)
            .map(|q| if q % n <= q / n { self.l[q] } else { 0.0 })
            .collect()
    }

    /// Factors `a` (row-major `n x n`, only the lower triangle is read) into the
    /// existing storage, allocating nothing. Fails, naming the pivot, if `a` is
    /// not positive definite (the first failing row, as the reference names it).
    pub fn refactor(&mut self, a: &[f64]) -> Result<(), SparseError> {
        let n = self.n;
        self.l.copy_from_slice(&a[..n * n]);
        let scale = max_diagonal(n, &self.l);
        let mut j0 = 0;
        while j0 < n {
            let j1 = (j0 + NB).min(n);
            self.diagonal_block(j0, j1, scale)?;
            self.trailing_update(j0, j1);
            j0 = j1;
        }
        self.mirror_upper();
        Ok(())
    }

    /// Rows `j0..j1` in order: each one's entries in the block's columns left
    /// of the diagonal, then its pivot.
    fn diagonal_block(&mut self, j0: usize, j1: usize, scale: f64) -> Result<(), SparseError> {
        let n = self.n;
        for i in j0..j1 {
            let (head, rest) = self.l.split_at_mut(i * n);
            let row = &mut rest[..n];
            for j in j0..i {
                let lj = &head[j * n..j * n + n];
                let mut s = row[j];
                for k in 0..j {
                    s -= row[k] * lj[k];
                }
                row[j] = s / lj[j];
            }
            let mut d = row[i];
            for &x in &row[..i] {
                d -= x * x;
            }
            row[i] = pivot(d, i, n, scale)?;
        }
        Ok(())
    }

    /// Every row below the block: its entries in columns `j0..j1`.
    fn trailing_update(&mut self, j0: usize, j1: usize) {
        let n = self.n;
        let nb = j1 - j0;
        if j1 == n {
            return;
        }
        // panel[k * NB + c] = L[j0 + c][k] for k < j1; lanes past the block stay 0.
        let t = &mut self.panel[..j1 * NB];
        for k in 0..j1 {
            for c in 0..NB {
                t[k * NB + c] = if c < nb { self.l[(j0 + c) * n + k] } else { 0.0 };
            }
        }
        let t = &self.panel[..j1 * NB];
        let min_rows = (MIN_TASK_WORK / (j1 * NB)).max(1);
        self.l[j1 * n..]
            .par_chunks_mut(n)
            .with_min_len(min_rows)
            .for_each(|row| {
                let mut s = [0.0f64; NB];
                s[..nb].copy_from_slice(&row[j0..j1]);
                // The prefix left of the block, all NB sums a term at a time.
                for k in 0..j0 {
                    let x = row[k];
                    let tk = &t[k * NB..k * NB + NB];
                    for c in 0..NB {
                        s[c] -= x * tk[c];
                    }
                }
                // Within the block, column by column (each needs the ones before).
                for c in 0..nb {
                    let mut sc = s[c];
                    for k in j0..j0 + c {
                        sc -= row[k] * t[k * NB + c];
                    }
                    row[j0 + c] = sc / t[(j0 + c) * NB + c];
                }
            });
    }

    /// `L^T` into the upper triangle, by tiles.
    fn mirror_upper(&mut self) {
        const TILE: usize = 32;
        let n = self.n;
        let l = &mut self.l;
        for i0 in (0..n).step_by(TILE) {
            for j0 in (0..=i0).step_by(TILE) {
                for i in i0..(i0 + TILE).min(n) {
                    for j in j0..(j0 + TILE).min(i) {
                        l[j * n + i] = l[i * n + j];
                    }
                }
            }
        }
    }

    /// Solves `a x = b` in place: `L y = b`, then `L^T x = y`, each row's sum
    /// taken in increasing `k` (the reference's order and bits).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        let (n, l) = (self.n, &self.l);
        // Forward: once y_k is known, every later row's sum takes its term
        // L_ik y_k (row k of L^T), in increasing k as the row dot product would.
        for k in 0..n {
            let yk = b[k] / l[k * n + k];
            b[k] = yk;
            let lt = &l[k * n + k + 1..k * n + n];
            for (bi, &lik) in b[k + 1..].iter_mut().zip(lt) {
                *bi -= lik * yk;
            }
        }
        // Backward: row i of L^T, k increasing.
        for i in (0..n).rev() {
            let lt = &l[i * n + i + 1..i * n + n];
            let mut s = b[i];
            for (&lki, &xk) in lt.iter().zip(&b[i + 1..]) {
                s -= lki * xk;
            }
            b[i] = s / l[i * n + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An SPD matrix of order `n` with entries over several orders of
    /// magnitude (so any change of order shows in the bits).
    fn spd(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        // B B^T + n I with B's entries scaled by powers of ten.
        let b: Vec<f64> = (0..n * n).map(|q| next() * 10f64.powi((q % 5) as i32 - 2)).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut v = 0.0;
                for k in 0..n {
                    v += b[i * n + k] * b[j * n + k];
                }
                a[i * n + j] = v;
            }
            a[i * n + i] += n as f64;
        }
        a
    }

    /// The reference's triangular solves, written out as the dot products they are.
    fn reference_solve(n: usize, l: &[f64], b: &mut [f64]) {
        for i in 0..n {
            let mut s = b[i];
            for k in 0..i {
                s -= l[i * n + k] * b[k];
            }
            b[i] = s / l[i * n + i];
        }
        for i in (0..n).rev() {
            let mut s = b[i];
            for k in i + 1..n {
                s -= l[k * n + i] * b[k];
            }
            b[i] = s / l[i * n + i];
        }
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn the_blocked_factor_and_solves_are_the_references_bit_for_bit() {
        // Orders around and across the block width, and a few blocks.
        for (n, seed) in [
            (0, 0),
            (1, 1),
            (2, 2),
            (7, 3),
            (8, 4),
            (9, 5),
            (16, 6),
            (17, 7),
            (31, 8),
            (64, 9),
            (101, 10),
            (203, 11),
        ] {
            let a = spd(n, seed);
            let want = cholesky_reference(n, &a).unwrap();
            let mut ch = Cholesky::with_order(n);
            ch.refactor(&a).unwrap();
            assert_eq!(bits(&ch.lower()), bits(&want), "n = {n}: factor");
            let b0: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.3).collect();
            let (mut got, mut reference) = (b0.clone(), b0.clone());
            ch.solve_in_place(&mut got);
            reference_solve(n, &want, &mut reference);
            assert_eq!(bits(&got), bits(&reference), "n = {n}: solve");
            // A second factorization of other values into the same storage.
            let a2: Vec<f64> = a.iter().map(|v| v * 3.0).collect();
            ch.refactor(&a2).unwrap();
            assert_eq!(
                bits(&ch.lower()),
                bits(&cholesky_reference(n, &a2).unwrap()),
                "n = {n}: refactor"
            );
        }
    }

    #[test]
    fn the_factor_is_the_same_on_any_number_of_threads() {
        let n = 150;
        let a = spd(n, 42);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let factor = |pool: &rayon::ThreadPool| {
            let mut ch = Cholesky::with_order(n);
            pool.install(|| ch.refactor(&a)).unwrap();
            ch.lower()
        };
        assert_eq!(bits(&factor(&one)), bits(&factor(&three)));
    }

    #[test]
    fn the_first_failing_pivot_is_named_as_the_reference_names_it() {
        for (n, bad) in [(5, 0), (12, 3), (20, 9), (40, 17), (40, 39)] {
            // SPD, then one diagonal entry made too small for its row.
            let mut a = spd(n, 7 + bad as u64);
            a[bad * n + bad] = -1.0;
            let want = cholesky_reference(n, &a).unwrap_err().to_string();
            let got = Cholesky::with_order(n).refactor(&a).unwrap_err().to_string();
            assert_eq!(got, want);
            assert!(got.contains(&format!("at row {bad} ")), "{got}");
        }
        let mut a = spd(10, 3);
        a[4 * 10 + 2] = f64::NAN;
        assert!(matches!(
            Cholesky::with_order(10).refactor(&a),
            Err(SparseError::NotFinite { .. })
        ));
        assert!(matches!(cholesky_reference(10, &a), Err(SparseError::NotFinite { .. })));
    }
}
