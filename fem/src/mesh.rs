//! Structured box meshes of Q2 (27-node) hexahedra.
//!
//! Numbering (aggregation depends on it, so it is fixed here): nodes form an
//! `nx x ny x nz` lattice with `nx = 2 nex + 1` etc., numbered lexicographically
//! with **x slowest, z fastest**: `id = (ix * ny + iy) * nz + iz`. Elements are
//! numbered the same way, `e = (ex * ney + ey) * nez + ez`. An element's 27 nodes
//! are in tensor order `a = (lx * 3 + ly) * 3 + lz`, `l in 0..3`, local `l`
//! sitting at lattice index `2 e + l` (reference coordinate `l - 1`).
use crate::error::FemError;

/// Length of the beam along x.
pub const BEAM_LENGTH: f64 = 10.0;

/// An axis-aligned box split into `nex x ney x nez` congruent Q2 hexahedra.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxMesh {
    nel: [usize; 3],
    lower: [f64; 3],
    upper: [f64; 3],
}

impl BoxMesh {
    /// A box `[lower, upper]` with `nex x ney x nez` elements.
    pub fn new(nex: usize, ney: usize, nez: usize, lower: [f64; 3], upper: [f64; 3]) -> Result<Self, FemError> {
        if nex == 0 || ney == 0 || nez == 0 {
            return Err(FemError::EmptyMesh { nex, ney, nez });
        }
        let ok = (0..3).all(|d| lower[d].is_finite() && upper[d].is_finite() && lower[d] < upper[d]);
        if !ok {
            return Err(FemError::BadBox { lower, upper });
        }
        // Node ids are u32 throughout the pipeline; the sentinel u32::MAX stays free.
        let nodes = (2 * nex as u128 + 1) * (2 * ney as u128 + 1) * (2 * nez as u128 + 1);
        if nodes >= u32::MAX as u128 {
            return Err(FemError::TooLarge {
                what: format!("{nodes} nodes"),
            });
        }
        Ok(Self {
            nel: [nex, ney, nez],
            lower,
            upper,
        })
    }

    /// The cantilever beam `[0,10] x [-0.5,0.5]^2` with `10k x k x k` elements.
    pub fn beam(k: usize) -> Result<Self, FemError> {
        if k == 0 {
            return Err(FemError::ZeroBeamSize);
        }
        let nex = k.checked_mul(10).ok_or_else(|| FemError::TooLarge {
            what: format!("k = {k}"),
        })?;
        Self::new(nex, k, k, [0.0, -0.5, -0.5], [BEAM_LENGTH, 0.5, 0.5])
    }

    /// Elements per direction `[nex, ney, nez]`.
    pub fn elements_per_dim(&self) -> [usize; 3] {
        self.nel
    }
    /// Lattice nodes per direction `[2nex+1, 2ney+1, 2nez+1]`.
    pub fn nodes_per_dim(&self) -> [usize; 3] {
        self.nel.map(|n| 2 * n + 1)
    }
    pub fn lower(&self) -> [f64; 3] {
        self.lower
    }
    pub fn upper(&self) -> [f64; 3] {
        self.upper
    }
    pub fn n_elements(&self) -> usize {
        self.nel[0] * self.nel[1] * self.nel[2]
    }
    pub fn n_nodes(&self) -> usize {
        let [a, b, c] = self.nodes_per_dim();
        a * b * c
    }
    /// Edge lengths `(hx, hy, hz)` shared by every element.
    pub fn element_size(&self) -> [f64; 3] {
        [0, 1, 2].map(|d| (self.upper[d] - self.lower[d]) / self.nel[d] as f64)
    }

    /// Lattice index `[ix, iy, iz]` of node `id`.
    #[inline]
    pub fn node_lattice(&self, id: usize) -> [usize; 3] {
        let [_, ny, nz] = self.nodes_per_dim();
        [id / (ny * nz), (id / nz) % ny, id % nz]
    }
    /// Node id of lattice index `[ix, iy, iz]`.
    #[inline]
    pub fn node_id(&self, [ix, iy, iz]: [usize; 3]) -> usize {
        let [_, ny, nz] = self.nodes_per_dim();
        (ix * ny + iy) * nz + iz
    }
    /// Coordinates of node `id` (computed as `lower + (upper-lower) * i / (2n)`
    /// so the far faces are hit exactly).
    #[inline]
    pub fn node_coords(&self, id: usize) -> [f64; 3] {
        let l = self.node_lattice(id);
        [0, 1, 2].map(|d| self.lower[d] + (self.upper[d] - self.lower[d]) * l[d] as f64 / (2 * self.nel[d]) as f64)
    }

    /// Element index `[ex, ey, ez]` of element `e`.
    #[inline]
    pub fn element_lattice(&self, e: usize) -> [usize; 3] {
        let [_, ney, nez] = self.nel;
        [e / (ney * nez), (e / nez) % ney, e % nez]
    }
    /// The 27 node ids of element `e`, in tensor order (increasing ids).
    #[inline]
    pub fn element_nodes(&self, e: usize) -> [u32; 27] {
        let [ex, ey, ez] = self.element_lattice(e);
        let mut out = [0u32; 27];
        for lx in 0..3 {
            for ly in 0..3 {
                for lz in 0..3 {
                    out[(lx * 3 + ly) * 3 + lz] = self.node_id([2 * ex + lx, 2 * ey + ly, 2 * ez + lz]) as u32;
                }
            }
        }
        out
    }

    /// Centroid of element `e`.
    #[inline]
    pub fn element_centroid(&self, e: usize) -> [f64; 3] {
        let el = self.element_lattice(e);
        let h = self.element_size();
        [0, 1, 2].map(|d| self.lower[d] + h[d] * (el[d] as f64 + 0.5))
    }
    /// Element centroids in element order: the points at which a modulus field `E(x)` is sampled.
    pub fn element_centroids(&self) -> ElementCentroids<'_> {
        ElementCentroids { mesh: self, next: 0 }
    }
}

/// Iterator over element centroids, in element order.
#[derive(Clone, Debug)]
pub struct ElementCentroids<'a> {
    mesh: &'a BoxMesh,
    next: usize,
}

impl Iterator for ElementCentroids<'_> {
    type Item = [f64; 3];
    fn next(&mut self) -> Option<[f64; 3]> {
        if self.next >= self.mesh.n_elements() {
            return None;
        }
        let c = self.mesh.element_centroid(self.next);
        self.next += 1;
        Some(c)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.mesh.n_elements() - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ElementCentroids<'_> {}

/// The spec's homogeneous material: modulus 1 on every element.
pub fn uniform_modulus(mesh: &BoxMesh) -> Vec<f64> {
    vec![1.0; mesh.n_elements()]
}

/// A piecewise-constant modulus field: `f` sampled at each element centroid.
pub fn modulus_from_fn(mesh: &BoxMesh, f: impl Fn([f64; 3]) -> f64) -> Vec<f64> {
    mesh.element_centroids().map(f).collect()
}
