//! Largest-eigenvalue estimates from the Lanczos tridiagonal hidden in CG.
use ptap_sparse::par::{axpy, dot, xpby};
use ptap_sparse::spmv::spmv;
use ptap_sparse::BlockCsr;

/// Vectors an estimate needs, allocated once per level and reused by every refresh.
#[derive(Clone, Debug)]
pub struct EigWorkspace {
    rhs: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
}

impl EigWorkspace {
    /// Workspace for `n` scalar rows with the fixed pseudo-random right-hand side.
    pub fn new(n: usize) -> Self {
        Self {
            rhs: pseudo_random_vector(n, 0x5eed_ca11_ab1e),
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            ap: vec![0.0; n],
        }
    }
}

/// Deterministic values in `[-1, 1)` (SplitMix64), the same on every machine.
pub fn pseudo_random_vector(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// The operations CG-Lanczos needs on some vector type, so the host's
/// estimate (mesh setup's Jacobi smoothing of `P`) and every backend's (the
/// Chebyshev smoother's, `ptap_runtime::cycle`) run the same steps.
pub trait LanczosOps {
    type Vector;
    type Error;
    /// `y = A x`.
    fn apply(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = M^-1 x`.
    fn precondition(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    fn dot(&self, x: &Self::Vector, y: &Self::Vector) -> Result<f64, Self::Error>;
    /// `y += alpha x`.
    fn axpy(&self, alpha: f64, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = x + beta y`.
    fn xpby(&self, x: &Self::Vector, beta: f64, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = x`.
    fn copy(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
}

/// Why an estimate stopped short.
#[derive(Debug)]
pub enum LanczosError<E> {
    /// An operation failed (a device error).
    Ops(E),
    /// CG-Lanczos broke down: the operator or preconditioner is not SPD, or NaN.
    Breakdown(String),
}

impl<E> From<E> for LanczosError<E> {
    fn from(e: E) -> Self {
        LanczosError::Ops(e)
    }
}

/// `lambda_max(M^-1 A)` from `iterations` (at most 64) steps of
/// `M`-preconditioned CG on `A x = start` from `x = 0`: the CG coefficients
/// define the Lanczos tridiagonal `T` (`T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1}`,
/// `T_j,j+1 = sqrt(beta_j)/alpha_j`) whose largest eigenvalue is returned.
/// `r`, `z`, `p`, `ap` are scratch of the operator's size. A non-positive
/// curvature or preconditioned residual (not SPD) or NaN is a breakdown.
#[allow(clippy::too_many_arguments)]
pub fn cg_lanczos<O: LanczosOps>(
    ops: &O,
    start: &O::Vector,
    iterations: usize,
    r: &mut O::Vector,
    z: &mut O::Vector,
    p: &mut O::Vector,
    ap: &mut O::Vector,
) -> Result<f64, LanczosError<O::Error>> {
    ops.copy(start, r)?;
    ops.precondition(r, z)?;
    ops.copy(z, p)?;
    let mut rz = ops.dot(r, z)?;
    if !(rz > 0.0) {
        return Err(LanczosError::Breakdown(format!(
            "preconditioned residual norm {rz:e} is not positive"
        )));
    }
    let mut alphas = [0.0f64; 64];
    let mut betas = [0.0f64; 64];
    let iterations = iterations.clamp(1, 64);
    let mut m = 0;
    for k in 0..iterations {
        ops.apply(p, ap)?;
        let pap = ops.dot(p, ap)?;
        if !pap.is_finite() {
            return Err(LanczosError::Breakdown("NaN or infinity in the operator".into()));
        }
        if pap <= 0.0 {
            return Err(LanczosError::Breakdown(format!(
                "curvature p^T A p = {pap:e} at step {k}"
            )));
        }
        let alpha = rz / pap;
        ops.axpy(-alpha, ap, r)?;
        ops.precondition(r, z)?;
        let rz_new = ops.dot(r, z)?;
        alphas[k] = alpha;
        m = k + 1;
        if !(rz_new > 1e-300 * rz) {
            break; // exact convergence: T is complete
        }
        let beta = rz_new / rz;
        betas[k] = beta;
        rz = rz_new;
        ops.xpby(z, beta, p)?;
    }
    Ok(cg_lanczos_lambda_max(&alphas[..m], &betas[..m]))
}

/// [`cg_lanczos`]'s decisions taken after the fact, from its scalars
/// recorded without being looked at: `rz[k]` is `r_k . z_k` before step `k`
/// (`rz[0]` of the start vector) and `pap[k]` the curvature `p_k . A p_k` of
/// step `k`, with `rz.len() == pap.len() + 1`. A backend that keeps these on
/// the device and runs every step regardless (reading them once at the end)
/// gets, step by step and in [`cg_lanczos`]'s order, the same breakdowns
/// (the same sentences, the first one met), the same stop at exact
/// convergence (steps after it are ignored), `alpha = rz / pap` and `beta =
/// rz_new / rz`: hence the same bits of `lambda_max`.
pub fn cg_lanczos_from_history(rz: &[f64], pap: &[f64]) -> Result<f64, String> {
    assert_eq!(rz.len(), pap.len() + 1, "one more r.z than p.Ap");
    let mut rzc = rz[0];
    if !(rzc > 0.0) {
        return Err(format!("preconditioned residual norm {rzc:e} is not positive"));
    }
    let mut alphas = [0.0f64; 64];
    let mut betas = [0.0f64; 64];
    let iterations = pap.len().clamp(1, 64);
    let mut m = 0;
    for k in 0..iterations.min(pap.len()) {
        let pap = pap[k];
        if !pap.is_finite() {
            return Err("NaN or infinity in the operator".into());
        }
        if pap <= 0.0 {
            return Err(format!("curvature p^T A p = {pap:e} at step {k}"));
        }
        let alpha = rzc / pap;
        let rz_new = rz[k + 1];
        alphas[k] = alpha;
        m = k + 1;
        if !(rz_new > 1e-300 * rzc) {
            break; // exact convergence: T is complete
        }
        let beta = rz_new / rzc;
        betas[k] = beta;
        rzc = rz_new;
    }
    Ok(cg_lanczos_lambda_max(&alphas[..m], &betas[..m]))
}

/// Host vectors: `A` a block-CSR operator, `M^-1` any closure.
struct HostLanczos<'a> {
    a: &'a BlockCsr,
    precondition: &'a dyn Fn(&[f64], &mut [f64]),
}

impl LanczosOps for HostLanczos<'_> {
    type Vector = Vec<f64>;
    type Error = std::convert::Infallible;
    fn apply(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), Self::Error> {
        spmv(self.a, x, y);
        Ok(())
    }
    fn precondition(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), Self::Error> {
        (self.precondition)(x, y);
        Ok(())
    }
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64, Self::Error> {
        Ok(dot(x, y))
    }
    fn axpy(&self, alpha: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), Self::Error> {
        axpy(alpha, x, y);
        Ok(())
    }
    fn xpby(&self, x: &Vec<f64>, beta: f64, y: &mut Vec<f64>) -> Result<(), Self::Error> {
        xpby(x, beta, y);
        Ok(())
    }
    fn copy(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), Self::Error> {
        y.copy_from_slice(x);
        Ok(())
    }
}

/// [`cg_lanczos`] on the host: `lambda_max(M^-1 A)` with `M^-1` given as a
/// closure, from the workspace's fixed pseudo-random right-hand side.
pub fn estimate_lambda_max(
    a: &BlockCsr,
    precondition: &dyn Fn(&[f64], &mut [f64]),
    iterations: usize,
    ws: &mut EigWorkspace,
) -> Result<f64, String> {
    let EigWorkspace { rhs, r, z, p, ap } = ws;
    let ops = HostLanczos { a, precondition };
    cg_lanczos(&ops, rhs, iterations, r, z, p, ap).map_err(|e| match e {
        LanczosError::Breakdown(why) => why,
        LanczosError::Ops(never) => match never {},
    })
}

/// The largest Ritz value of `m` CG steps with step lengths `alphas` and
/// direction updates `betas` (at least `m - 1` of them): the Lanczos
/// tridiagonal `T` (`T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1}`,
/// `T_j,j+1 = sqrt(beta_j)/alpha_j`, at most 64 steps) and its top eigenvalue.
pub fn cg_lanczos_lambda_max(alphas: &[f64], betas: &[f64]) -> f64 {
    let m = alphas.len().min(64);
    let mut diag = [0.0f64; 64];
    let mut off = [0.0f64; 64];
    for j in 0..m {
        diag[j] = 1.0 / alphas[j] + if j > 0 { betas[j - 1] / alphas[j - 1] } else { 0.0 };
        if j + 1 < m {
            off[j] = betas[j].sqrt() / alphas[j];
        }
    }
    tridiagonal_max_eigenvalue(&diag[..m], &off[..m.saturating_sub(1)])
}

/// Largest eigenvalue of the symmetric tridiagonal matrix by Sturm bisection.
pub fn tridiagonal_max_eigenvalue(diag: &[f64], off: &[f64]) -> f64 {
    let n = diag.len();
    // Gershgorin interval.
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let r = if i > 0 { off[i - 1].abs() } else { 0.0 } + if i + 1 < n { off[i].abs() } else { 0.0 };
        lo = lo.min(diag[i] - r);
        hi = hi.max(diag[i] + r);
    }
    // Number of eigenvalues below x.
    let count_below = |x: f64| {
        let mut c = 0;
        let mut q = 1.0;
        for i in 0..n {
            let o2 = if i > 0 { off[i - 1] * off[i - 1] } else { 0.0 };
            q = diag[i] - x - if i > 0 { o2 / q } else { 0.0 };
            if q == 0.0 {
                q = -1e-300;
            }
            if q < 0.0 {
                c += 1;
            }
        }
        c
    };
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if count_below(mid) >= n {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptap_sparse::dense::Dense;

    #[test]
    fn sturm_bisection_finds_the_top_eigenvalue() {
        // tridiag(-1, 2, -1) of order 5: eigenvalues 2 - 2cos(k pi / 6).
        let d = [2.0; 5];
        let o = [-1.0; 4];
        let want = 2.0 - 2.0 * (5.0 * std::f64::consts::PI / 6.0).cos();
        assert!((tridiagonal_max_eigenvalue(&d, &o) - want).abs() < 1e-12);
    }

    #[test]
    fn cg_lanczos_recovers_lambda_max_of_a_small_diagonal_operator() {
        // Diagonal SPD with spectrum 1..=8: enough iterations see the top exactly.
        let mut dm = Dense::zeros(8, 8);
        for i in 0..8 {
            *dm.at_mut(i, i) = (i + 1) as f64;
        }
        let a = BlockCsr::from_dense(&dm, 1, 1, true).unwrap();
        let mut ws = EigWorkspace::new(8);
        let id = |x: &[f64], y: &mut [f64]| y.copy_from_slice(x);
        let l = estimate_lambda_max(&a, &id, 10, &mut ws).unwrap();
        assert!((l - 8.0).abs() < 1e-10, "{l}");
    }

    /// The steps of [`cg_lanczos`] run to the end with the scalars only
    /// recorded (as a device runs them), then decided by
    /// [`cg_lanczos_from_history`].
    fn deferred(a: &BlockCsr, start: &[f64], iterations: usize) -> Result<f64, String> {
        let n = start.len();
        let (mut r, mut z, mut p, mut ap) = (start.to_vec(), start.to_vec(), vec![0.0; n], vec![0.0; n]);
        p.copy_from_slice(&z);
        let mut rz = vec![dot(&r, &z)];
        let mut pap = Vec::new();
        for k in 0..iterations {
            spmv(a, &p, &mut ap);
            pap.push(dot(&p, &ap));
            axpy(-(rz[k] / pap[k]), &ap, &mut r);
            z.copy_from_slice(&r);
            rz.push(dot(&r, &z));
            xpby(&z, rz[k + 1] / rz[k], &mut p);
        }
        cg_lanczos_from_history(&rz, &pap)
    }

    #[test]
    fn decisions_from_the_history_give_cg_lanczos_bits_and_errors() {
        // Spectrum 1..=8 (exact convergence at step 8, steps after it run on
        // NaN), a full 10 steps on 40 rows, and an indefinite operator.
        let diag = |v: &[f64]| {
            let mut dm = Dense::zeros(v.len(), v.len());
            for (i, x) in v.iter().enumerate() {
                *dm.at_mut(i, i) = *x;
            }
            BlockCsr::from_dense(&dm, 1, 1, true).unwrap()
        };
        let id = |x: &[f64], y: &mut [f64]| y.copy_from_slice(x);
        let spread: Vec<f64> = (0..40).map(|i| 1.0 + (i as f64 * 0.37).sin().abs() * 50.0).collect();
        for (a, its) in [
            (diag(&(1..=8).map(|i| i as f64).collect::<Vec<_>>()), 10),
            (diag(&spread), 10),
            (diag(&spread), 3),
        ] {
            let mut ws = EigWorkspace::new(a.nrows());
            let want = estimate_lambda_max(&a, &id, its, &mut ws).unwrap();
            let got = deferred(&a, &EigWorkspace::new(a.nrows()).rhs, its).unwrap();
            assert_eq!(got.to_bits(), want.to_bits());
        }
        let bad = diag(&[1.0, -2.0, 3.0]);
        let mut ws = EigWorkspace::new(3);
        ws.rhs = vec![0.0, 1.0, 0.0];
        let want = estimate_lambda_max(&bad, &id, 10, &mut ws).unwrap_err();
        assert_eq!(deferred(&bad, &[0.0, 1.0, 0.0], 10).unwrap_err(), want);
        assert_eq!(
            cg_lanczos_from_history(&[0.0, 1.0], &[1.0]).unwrap_err(),
            "preconditioned residual norm 0e0 is not positive"
        );
        assert_eq!(
            cg_lanczos_from_history(&[1.0, 1.0], &[f64::NAN]).unwrap_err(),
            "NaN or infinity in the operator"
        );
    }

    #[test]
    fn indefinite_operator_is_reported() {
        let mut dm = Dense::zeros(3, 3);
        for (i, v) in [1.0, -2.0, 3.0].iter().enumerate() {
            *dm.at_mut(i, i) = *v;
        }
        let a = BlockCsr::from_dense(&dm, 1, 1, true).unwrap();
        let mut ws = EigWorkspace::new(3);
        ws.rhs = vec![0.0, 1.0, 0.0];
        let id = |x: &[f64], y: &mut [f64]| y.copy_from_slice(x);
        assert!(estimate_lambda_max(&a, &id, 10, &mut ws).is_err());
    }
}
