//! Small dense kernels on row-major blocks, and a plain dense matrix for references.
//!
//! The const-generic kernels (`M`, `K`, `N` known at compile time) let the compiler
//! fully unroll the block contractions of the shipped shapes; the `_dyn` twins take
//! run-time sizes and serve any other shape and the references.
use crate::error::SparseError;

pub use crate::cholesky::{cholesky_reference, Cholesky};

/// `c (M x N) += a (M x K) * b (K x N)`, all row-major.
#[inline(always)]
pub fn gemm_acc<const M: usize, const K: usize, const N: usize>(a: &[f64], b: &[f64], c: &mut [f64]) {
    let (a, b, c) = (&a[..M * K], &b[..K * N], &mut c[..M * N]);
    for i in 0..M {
        for k in 0..K {
            let aik = a[i * K + k];
            for j in 0..N {
                c[i * N + j] += aik * b[k * N + j];
            }
        }
    }
}

/// `c (M x N) += a^T * b` where `a` is stored `K x M` and `b` is `K x N`.
#[inline(always)]
pub fn gemm_tn_acc<const M: usize, const K: usize, const N: usize>(a: &[f64], b: &[f64], c: &mut [f64]) {
    let (a, b, c) = (&a[..K * M], &b[..K * N], &mut c[..M * N]);
    for k in 0..K {
        for i in 0..M {
            let aki = a[k * M + i];
            for j in 0..N {
                c[i * N + j] += aki * b[k * N + j];
            }
        }
    }
}

/// `y (M) += a (M x N) * x (N)`.
#[inline(always)]
pub fn gemv_acc<const M: usize, const N: usize>(a: &[f64], x: &[f64], y: &mut [f64]) {
    let (a, x, y) = (&a[..M * N], &x[..N], &mut y[..M]);
    for i in 0..M {
        let mut s = 0.0;
        for j in 0..N {
            s += a[i * N + j] * x[j];
        }
        y[i] += s;
    }
}

/// `y (N) += a^T x` where `a` is `M x N` and `x` has length `M`.
#[inline(always)]
pub fn gemv_t_acc<const M: usize, const N: usize>(a: &[f64], x: &[f64], y: &mut [f64]) {
    let (a, x, y) = (&a[..M * N], &x[..M], &mut y[..N]);
    for i in 0..M {
        let xi = x[i];
        for j in 0..N {
            y[j] += a[i * N + j] * xi;
        }
    }
}

/// Run-time-sized `c (m x n) += a (m x k) * b (k x n)`.
pub fn gemm_acc_dyn(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    for i in 0..m {
        for l in 0..k {
            let ail = a[i * k + l];
            for j in 0..n {
                c[i * n + j] += ail * b[l * n + j];
            }
        }
    }
}

/// Run-time-sized `c (m x n) += a^T b` where `a` is `k x m`.
pub fn gemm_tn_acc_dyn(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    for l in 0..k {
        for i in 0..m {
            let ali = a[l * m + i];
            for j in 0..n {
                c[i * n + j] += ali * b[l * n + j];
            }
        }
    }
}

/// Run-time-sized `y (m) += a (m x n) x`, each row summed left to right before the add.
///
/// The row sum starts from its first product, not from `0.0`: the same expression
/// tree as the generated `BlockKernels::gemv_acc` (`a0 x0 + a1 x1 + ..`), so the two
/// agree bit for bit, signed zeros included.
pub fn gemv_acc_dyn(m: usize, n: usize, a: &[f64], x: &[f64], y: &mut [f64]) {
    if n == 0 {
        return;
    }
    for i in 0..m {
        let row = &a[i * n..(i + 1) * n];
        let mut s = row[0] * x[0];
        for j in 1..n {
            s += row[j] * x[j];
        }
        y[i] += s;
    }
}

/// Run-time-sized `y (n) += a^T x`, `a` is `m x n`.
pub fn gemv_t_acc_dyn(m: usize, n: usize, a: &[f64], x: &[f64], y: &mut [f64]) {
    for i in 0..m {
        for j in 0..n {
            y[j] += a[i * n + j] * x[i];
        }
    }
}

/// Transpose of an `m x n` row-major block into `out` (`n x m`).
pub fn transpose_into(m: usize, n: usize, a: &[f64], out: &mut [f64]) {
    for i in 0..m {
        for j in 0..n {
            out[j * m + i] = a[i * n + j];
        }
    }
}

/// Inverts the `n x n` row-major matrix `a` in place by Gauss-Jordan elimination
/// with partial pivoting. Fails on a (numerically) singular matrix: pivot below
/// `1e-14` times the largest entry.
pub fn invert_in_place(n: usize, a: &mut [f64]) -> Result<(), SparseError> {
    debug_assert!(n <= 16, "small blocks only");
    let scale = a[..n * n].iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !scale.is_finite() {
        return Err(SparseError::NotFinite {
            what: "block to invert".into(),
        });
    }
    if scale == 0.0 {
        return Err(SparseError::Singular {
            what: format!("{n}x{n} zero block"),
        });
    }
    let mut perm = [0usize; 16];
    for (i, p) in perm.iter_mut().enumerate().take(n) {
        *p = i;
    }
    for col in 0..n {
        let (mut piv, mut best) = (col, a[col * n + col].abs());
        for r in col + 1..n {
            if a[r * n + col].abs() > best {
                best = a[r * n + col].abs();
                piv = r;
            }
        }
        if best <= 1e-14 * scale {
            return Err(SparseError::Singular {
                what: format!("{n}x{n} block with pivot {best:e} at column {col}"),
            });
        }
        if piv != col {
            for j in 0..n {
                a.swap(piv * n + j, col * n + j);
            }
            perm.swap(piv, col);
        }
        let inv = 1.0 / a[col * n + col];
        a[col * n + col] = 1.0;
        for j in 0..n {
            a[col * n + j] *= inv;
        }
        for r in 0..n {
            if r != col {
                let f = a[r * n + col];
                if f != 0.0 {
                    a[r * n + col] = 0.0;
                    for j in 0..n {
                        a[r * n + j] -= f * a[col * n + j];
                    }
                }
            }
        }
    }
    // Row swaps on the input become column swaps on the inverse, undone in reverse order.
    let mut cols = [0usize; 16];
    for (i, &p) in perm.iter().enumerate().take(n) {
        cols[p] = i;
    }
    let mut tmp = [0.0; 16];
    for r in 0..n {
        for (j, t) in tmp.iter_mut().enumerate().take(n) {
            *t = a[r * n + j];
        }
        for j in 0..n {
            a[r * n + j] = tmp[cols[j]];
        }
    }
    Ok(())
}

/// Thin QR of the `m x n` row-major matrix `a` (`m >= n`) by modified Gram-Schmidt
/// with one re-orthogonalization pass. Returns `(q, r)` with `q` `m x n` row-major
/// and `r` `n x n` upper triangular, and the numerical rank (columns whose
/// remaining norm exceeds `tol` times the largest column norm). Columns beyond the
/// rank come out as zero in `q`, so `q r = a` still holds.
pub fn thin_qr(m: usize, n: usize, a: &[f64], tol: f64) -> (Vec<f64>, Vec<f64>, usize) {
    let mut q = a[..m * n].to_vec();
    let mut r = vec![0.0; n * n];
    let col_norm = |q: &[f64], j: usize| (0..m).map(|i| q[i * n + j] * q[i * n + j]).sum::<f64>().sqrt();
    let max_norm = (0..n).map(|j| col_norm(&q, j)).fold(0.0, f64::max);
    let mut rank = 0;
    for j in 0..n {
        for _pass in 0..2 {
            for p in 0..j {
                let d: f64 = (0..m).map(|i| q[i * n + p] * q[i * n + j]).sum();
                r[p * n + j] += d;
                for i in 0..m {
                    q[i * n + j] -= d * q[i * n + p];
                }
            }
        }
        let nrm = col_norm(&q, j);
        if nrm > tol * max_norm && nrm > 0.0 {
            r[j * n + j] = nrm;
            for i in 0..m {
                q[i * n + j] /= nrm;
            }
            rank += 1;
        } else {
            r[j * n + j] = 0.0;
            for i in 0..m {
                q[i * n + j] = 0.0;
            }
        }
    }
    (q, r, rank)
}

/// A dense row-major matrix: the plain reference every sparse kernel is checked against.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f64>,
}

impl Dense {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }
    #[inline]
    pub fn at_mut(&mut self, i: usize, j: usize) -> &mut f64 {
        &mut self.data[i * self.cols + j]
    }
    pub fn transpose(&self) -> Dense {
        let mut t = Dense::zeros(self.cols, self.rows);
        transpose_into(self.rows, self.cols, &self.data, &mut t.data);
        t
    }
    /// Textbook triple loop.
    pub fn matmul(&self, other: &Dense) -> Dense {
        assert_eq!(self.cols, other.rows);
        let mut c = Dense::zeros(self.rows, other.cols);
        gemm_acc_dyn(self.rows, self.cols, other.cols, &self.data, &other.data, &mut c.data);
        c
    }
    pub fn matvec(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.rows];
        gemv_acc_dyn(self.rows, self.cols, &self.data, x, &mut y);
        y
    }
    pub fn frobenius(&self) -> f64 {
        self.data.iter().map(|v| v * v).sum::<f64>().sqrt()
    }
    /// `||self - other||_F / ||other||_F` (absolute when `other` is zero).
    pub fn rel_diff(&self, other: &Dense) -> f64 {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        let d = self
            .data
            .iter()
            .zip(&other.data)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        let n = other.frobenius();
        if n > 0.0 {
            d / n
        } else {
            d
        }
    }
}

/// `||x - y||_2 / ||y||_2`, the relative Frobenius distance every comparison of
/// an optimized path with its reference reports; an all-zero reference leaves
/// the absolute distance.
pub fn relative_frobenius(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    let d: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let n: f64 = y.iter().map(|b| b * b).sum();
    if n > 0.0 {
        (d / n).sqrt()
    } else {
        d.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_and_dyn_gemm_agree() {
        let a: Vec<f64> = (0..18).map(|i| (i as f64 * 0.37).sin()).collect(); // 6x3
        let b: Vec<f64> = (0..18).map(|i| (i as f64 * 0.11).cos()).collect(); // 3x6
        let mut c1 = vec![1.0; 36];
        let mut c2 = vec![1.0; 36];
        gemm_acc::<6, 3, 6>(&a, &b, &mut c1);
        gemm_acc_dyn(6, 3, 6, &a, &b, &mut c2);
        assert_eq!(c1, c2);
        // a^T stored as 3x6 -> (6x3)^T... use a as K x M = 3 x 6 for tn.
        let mut t1 = vec![0.0; 36];
        let mut t2 = vec![0.0; 36];
        gemm_tn_acc::<6, 3, 6>(&b, &b, &mut t1);
        gemm_tn_acc_dyn(6, 3, 6, &b, &b, &mut t2);
        assert_eq!(t1, t2);
        let bt = Dense {
            rows: 3,
            cols: 6,
            data: b.clone(),
        };
        let want = bt.transpose().matmul(&bt);
        assert!(
            Dense {
                rows: 6,
                cols: 6,
                data: t1
            }
            .rel_diff(&want)
                < 1e-15
        );
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let n = 6;
        let mut a: Vec<f64> = (0..n * n).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.1).collect();
        for i in 0..n {
            a[i * n + i] += 3.0;
        }
        a.swap(0, 1); // force pivoting on a non-symmetric matrix
        let mut inv = a.clone();
        invert_in_place(n, &mut inv).unwrap();
        let p = Dense {
            rows: n,
            cols: n,
            data: a,
        }
        .matmul(&Dense {
            rows: n,
            cols: n,
            data: inv,
        });
        for i in 0..n {
            for j in 0..n {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((p.at(i, j) - want).abs() < 1e-13, "{i} {j} {}", p.at(i, j));
            }
        }
    }

    #[test]
    fn singular_block_is_an_error() {
        let mut a = vec![1.0, 2.0, 2.0, 4.0];
        assert!(matches!(invert_in_place(2, &mut a), Err(SparseError::Singular { .. })));
    }

    #[test]
    fn thin_qr_reconstructs_and_is_orthonormal() {
        let (m, n) = (9, 6);
        let a: Vec<f64> = (0..m * n).map(|i| ((i * 13 % 17) as f64 - 8.0) / 7.0).collect();
        let (q, r, rank) = thin_qr(m, n, &a, 1e-12);
        assert_eq!(rank, 6);
        let qd = Dense {
            rows: m,
            cols: n,
            data: q,
        };
        let rd = Dense {
            rows: n,
            cols: n,
            data: r.clone(),
        };
        assert!(
            qd.matmul(&rd).rel_diff(&Dense {
                rows: m,
                cols: n,
                data: a
            }) < 1e-14
        );
        let qtq = qd.transpose().matmul(&qd);
        for i in 0..n {
            for j in 0..n {
                assert!((qtq.at(i, j) - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
            for j in 0..i {
                assert_eq!(r[i * n + j], 0.0);
            }
        }
    }

    #[test]
    fn thin_qr_reports_rank_deficiency() {
        // Two equal columns.
        let a = vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0];
        let (_, _, rank) = thin_qr(3, 2, &a, 1e-10);
        assert_eq!(rank, 1);
    }

    #[test]
    fn cholesky_solves_spd_and_rejects_indefinite() {
        let a = vec![4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
        let mut ch = Cholesky::with_order(3);
        ch.refactor(&a).unwrap();
        let mut x = vec![1.0, 2.0, 3.0];
        ch.solve_in_place(&mut x);
        let ax = Dense {
            rows: 3,
            cols: 3,
            data: a,
        }
        .matvec(&x);
        for (got, want) in ax.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 1e-14);
        }
        let bad = vec![1.0, 2.0, 2.0, 1.0];
        let mut ch = Cholesky::with_order(2);
        assert!(matches!(ch.refactor(&bad), Err(SparseError::Singular { .. })));
    }
}
