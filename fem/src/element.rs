//! The Q2 hexahedron and quadrilateral: shape functions, Gauss rule and the
//! reference stiffness.
//!
//! Every element of a [`crate::BoxMesh`] is the same axis-aligned box, and the
//! modulus is constant per element, so element `e`'s stiffness is exactly
//! `E_e * K_ref` with `K_ref` the stiffness at unit modulus: it is computed once.
//! (`mu` and `lambda` are both proportional to `E` at fixed `nu`.)

use crate::mesh::q2_nodes;

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

/// Stiffness of one Q2 element as `n x n` row-major `d x d` blocks (`d` the
/// dimension, `n = 3^d` nodes): block `(a, b)` starts at `(a * n + b) * d * d`
/// and holds `K[d a + i][d b + j]` at `i * d + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementStiffness {
    dim: usize,
    blocks: Vec<f64>,
}

impl ElementStiffness {
    /// Unit-modulus stiffness of a `hx x hy x hz` box, 3x3x3 Gauss (exact for
    /// the degree-4-per-direction integrand of affine Q2 elements).
    pub fn box_element(h: [f64; 3], nu: f64) -> Self {
        Self::tensor_element(&h, nu)
    }

    /// Unit-modulus plane-strain stiffness of a `hx x hy` rectangle per unit
    /// thickness (`eps_zz = 0`, same Lame parameters as 3D), 3x3 Gauss.
    pub fn rect_element(h: [f64; 2], nu: f64) -> Self {
        Self::tensor_element(&h, nu)
    }

    /// The element of [`crate::BoxMesh::dim`] dimensions with edges `h[..dim]`.
    pub fn for_dim(dim: usize, h: [f64; 3], nu: f64) -> Self {
        Self::tensor_element(&h[..dim], nu)
    }

    /// `a(u, v) = int 2 mu eps(u):eps(v) + lambda div u div v` on the tensor
    /// Q2 element with edges `h` (`h.len()` = dimension, 2 or 3).
    fn tensor_element(h: &[f64], nu: f64) -> Self {
        let d = h.len();
        let n = q2_nodes(d);
        let (mu, lambda) = lame(1.0, nu);
        let det_j = h.iter().product::<f64>() / (1usize << d) as f64;
        let mut blocks = vec![0.0; n * n * d * d];
        let mut grads = [[0.0f64; 3]; 27];
        // Multi-indices (x slowest) of nodes and of Gauss points share the tensor order.
        let digit = |a: usize, axis: usize| (a / 3usize.pow((d - 1 - axis) as u32)) % 3;
        for q in 0..n {
            let t = |axis: usize| GAUSS3_POINTS[digit(q, axis)];
            let w = (0..d).fold(1.0, |w, axis| w * GAUSS3_WEIGHTS[digit(q, axis)]) * det_j;
            let shape: Vec<[f64; 3]> = (0..d).map(|axis| q2_shape_1d(t(axis))).collect();
            let deriv: Vec<[f64; 3]> = (0..d).map(|axis| q2_shape_1d_deriv(t(axis))).collect();
            for (a, g) in grads.iter_mut().enumerate().take(n) {
                for (c, gc) in g.iter_mut().enumerate().take(d) {
                    let f = |axis: usize| {
                        let table = if axis == c { &deriv } else { &shape };
                        table[axis][digit(a, axis)]
                    };
                    *gc = (1..d).fold(f(0), |v, axis| v * f(axis)) * 2.0 / h[c];
                }
            }
            // v = N_a e_i, u = N_b e_j.
            for (a, ga) in grads.iter().enumerate().take(n) {
                for (b, gb) in grads.iter().enumerate().take(n) {
                    let dot = (1..d).fold(ga[0] * gb[0], |s, c| s + ga[c] * gb[c]);
                    let blk = &mut blocks[(a * n + b) * d * d..(a * n + b + 1) * d * d];
                    for i in 0..d {
                        for j in 0..d {
                            let diag = if i == j { mu * dot } else { 0.0 };
                            blk[i * d + j] += w * (diag + mu * ga[j] * gb[i] + lambda * ga[i] * gb[j]);
                        }
                    }
                }
            }
        }
        Self { dim: d, blocks }
    }

    /// Spatial dimension = block size.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Nodes per element, `3^dim`.
    pub fn nodes(&self) -> usize {
        q2_nodes(self.dim)
    }
    /// All `nodes^2` blocks, `(a * nodes + b) * dim^2` indexed.
    pub fn blocks(&self) -> &[f64] {
        &self.blocks
    }
    /// Block `(a, b)`.
    #[inline]
    pub fn block(&self, a: usize, b: usize) -> &[f64] {
        let bb = self.dim * self.dim;
        let k = a * self.nodes() + b;
        &self.blocks[k * bb..(k + 1) * bb]
    }
    /// The dense row-major matrix of order `dim * nodes`, dof `dim * a + component`.
    pub fn to_dense(&self) -> Vec<f64> {
        let (d, n) = (self.dim, self.nodes());
        let m = d * n;
        let mut out = vec![0.0; m * m];
        for a in 0..n {
            for b in 0..n {
                let blk = self.block(a, b);
                for i in 0..d {
                    for j in 0..d {
                        out[(d * a + i) * m + d * b + j] = blk[i * d + j];
                    }
                }
            }
        }
        out
    }
}
