//! The Q2 hexahedron: shape functions, Gauss rule and the reference stiffness.
//!
//! Every element of a [`crate::BoxMesh`] is the same axis-aligned box, and the
//! modulus is constant per element, so element `e`'s stiffness is exactly
//! `E_e * K_ref` with `K_ref` the stiffness at unit modulus: it is computed once.
//! (`mu` and `lambda` are both proportional to `E` at fixed `nu`.)

/// The spec's Poisson ratio (with `E = 1`: `mu = lambda = 0.4`).
pub const POISSON_RATIO: f64 = 0.25;

/// 3-point Gauss-Legendre nodes on `[-1, 1]` (exact to degree 5).
pub const GAUSS3_POINTS: [f64; 3] = [-0.774_596_669_241_483_4, 0.0, 0.774_596_669_241_483_4];
/// Weights of [`GAUSS3_POINTS`].
pub const GAUSS3_WEIGHTS: [f64; 3] = [5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0];

/// The three 1D quadratic Lagrange functions with nodes `-1, 0, 1`.
#[inline]
pub fn q2_shape_1d(t: f64) -> [f64; 3] {
    [0.5 * t * (t - 1.0), 1.0 - t * t, 0.5 * t * (t + 1.0)]
}
/// Derivatives of [`q2_shape_1d`].
#[inline]
pub fn q2_shape_1d_deriv(t: f64) -> [f64; 3] {
    [t - 0.5, -2.0 * t, t + 0.5]
}

/// Lame parameters `(mu, lambda)` for modulus `e` and Poisson ratio `nu`.
pub fn lame(e: f64, nu: f64) -> (f64, f64) {
    (e / (2.0 * (1.0 + nu)), e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)))
}

/// Stiffness of one Q2 box element as 27 x 27 row-major 3x3 blocks: block `(a, b)`
/// starts at `(a * 27 + b) * 9` and holds `K[3a + i][3b + j]` at `i * 3 + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementStiffness {
    blocks: Vec<f64>,
}

impl ElementStiffness {
    /// Unit-modulus stiffness of a `hx x hy x hz` box, 3x3x3 Gauss (exact for
    /// the degree-4-per-direction integrand of affine Q2 elements).
    pub fn box_element(h: [f64; 3], nu: f64) -> Self {
        let (mu, lambda) = lame(1.0, nu);
        let det_j = h[0] * h[1] * h[2] / 8.0;
        let mut blocks = vec![0.0; 27 * 27 * 9];
        let mut grads = [[0.0f64; 3]; 27];
        for (qx, &tx) in GAUSS3_POINTS.iter().enumerate() {
            for (qy, &ty) in GAUSS3_POINTS.iter().enumerate() {
                for (qz, &tz) in GAUSS3_POINTS.iter().enumerate() {
                    let w = GAUSS3_WEIGHTS[qx] * GAUSS3_WEIGHTS[qy] * GAUSS3_WEIGHTS[qz] * det_j;
                    let (nx, ny, nz) = (q2_shape_1d(tx), q2_shape_1d(ty), q2_shape_1d(tz));
                    let (dx, dy, dz) = (q2_shape_1d_deriv(tx), q2_shape_1d_deriv(ty), q2_shape_1d_deriv(tz));
                    for lx in 0..3 {
                        for ly in 0..3 {
                            for lz in 0..3 {
                                grads[(lx * 3 + ly) * 3 + lz] = [
                                    dx[lx] * ny[ly] * nz[lz] * 2.0 / h[0],
                                    nx[lx] * dy[ly] * nz[lz] * 2.0 / h[1],
                                    nx[lx] * ny[ly] * dz[lz] * 2.0 / h[2],
                                ];
                            }
                        }
                    }
                    // a(u, v) = int 2 mu eps(u):eps(v) + lambda div u div v with
                    // v = N_a e_i, u = N_b e_j.
                    for (a, ga) in grads.iter().enumerate() {
                        for (b, gb) in grads.iter().enumerate() {
                            let dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
                            let blk = &mut blocks[(a * 27 + b) * 9..(a * 27 + b) * 9 + 9];
                            for i in 0..3 {
                                for j in 0..3 {
                                    let diag = if i == j { mu * dot } else { 0.0 };
                                    blk[i * 3 + j] += w * (diag + mu * ga[j] * gb[i] + lambda * ga[i] * gb[j]);
                                }
                            }
                        }
                    }
                }
            }
        }
        Self { blocks }
    }

    /// All 729 blocks, `(a * 27 + b) * 9` indexed.
    pub fn blocks(&self) -> &[f64] {
        &self.blocks
    }
    /// Block `(a, b)`.
    #[inline]
    pub fn block(&self, a: usize, b: usize) -> &[f64] {
        &self.blocks[(a * 27 + b) * 9..(a * 27 + b) * 9 + 9]
    }
    /// The 81 x 81 row-major matrix, dof `3a + component`.
    pub fn to_dense(&self) -> Vec<f64> {
        let mut d = vec![0.0; 81 * 81];
        for a in 0..27 {
            for b in 0..27 {
                let blk = self.block(a, b);
                for i in 0..3 {
                    for j in 0..3 {
                        d[(3 * a + i) * 81 + 3 * b + j] = blk[i * 3 + j];
                    }
                }
            }
        }
        d
    }
}
