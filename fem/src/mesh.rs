//! Structured box meshes of Q2 elements: 27-node hexahedra in 3D, 9-node
//! quadrilaterals in 2D.
//!
//! Numbering (aggregation depends on it, so it is fixed here): nodes form an
//! `nx x ny x nz` lattice with `nx = 2 nex + 1` etc., numbered lexicographically
//! with **x slowest, z fastest**: `id = (ix * ny + iy) * nz + iz`. Elements are
//! numbered the same way, `e = (ex * ney + ey) * nez + ez`. An element's 27 nodes
//! are in tensor order `a = (lx * 3 + ly) * 3 + lz`, `l in 0..3`, local `l`
//! sitting at lattice index `2 e + l` (reference coordinate `l - 1`).
//!
//! A 2D mesh is the same lattice with one node and one element layer in z
//! (`nz = 1`, `nez = 1`, `z = 0`): `id = ix * ny + iy`, 9 nodes per element in
//! order `a = lx * 3 + ly`. Every formula above holds unchanged.
use crate::error::FemError;

/// Spatial dimensions a [`BoxMesh`] supports.
pub const DIMENSIONS: [usize; 2] = [2, 3];

/// Nodes of one Q2 element in `dim` dimensions (`3^dim`).
#[inline]
pub const fn q2_nodes(dim: usize) -> usize {
    if dim == 2 {
        9
    } else {
        27
    }
}

/// The node ids of one element, in tensor order: 27 in 3D, 9 in 2D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementNodes {
    ids: [u32; 27],
    len: usize,
}

impl std::ops::Deref for ElementNodes {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.ids[..self.len]
    }
}

impl IntoIterator for ElementNodes {
    type Item = u32;
    type IntoIter = std::iter::Take<std::array::IntoIter<u32, 27>>;
    fn into_iter(self) -> Self::IntoIter {
        self.ids.into_iter().take(self.len)
    }
}

impl<'a> IntoIterator for &'a ElementNodes {
    type Item = &'a u32;
    type IntoIter = std::slice::Iter<'a, u32>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Length of the beam along x.
pub const BEAM_LENGTH: f64 = 10.0;

/// An axis-aligned box split into `nex x ney x nez` congruent Q2 hexahedra, or
/// a rectangle split into `nex x ney` congruent Q2 quadrilaterals.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxMesh {
    dim: usize,
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
        Self::checked(3, [nex, ney, nez], lower, upper)
    }

    /// A rectangle `[lower, upper]` with `nex x ney` Q2 quadrilaterals (plane problems).
    pub fn new_2d(nex: usize, ney: usize, lower: [f64; 2], upper: [f64; 2]) -> Result<Self, FemError> {
        if nex == 0 || ney == 0 {
            return Err(FemError::EmptyMesh { nex, ney, nez: 1 });
        }
        Self::checked(2, [nex, ney, 1], [lower[0], lower[1], 0.0], [upper[0], upper[1], 0.0])
    }

    fn checked(dim: usize, nel: [usize; 3], lower: [f64; 3], upper: [f64; 3]) -> Result<Self, FemError> {
        let ok = (0..dim).all(|d| lower[d].is_finite() && upper[d].is_finite() && lower[d] < upper[d]);
        if !ok {
            return Err(FemError::BadBox { lower, upper });
        }
        let mesh = Self { dim, nel, lower, upper };
        // Node ids are u32 throughout the pipeline; the sentinel u32::MAX stays free.
        let nodes: u128 = mesh.nodes_per_dim().iter().map(|&n| n as u128).product();
        if nodes >= u32::MAX as u128 {
            return Err(FemError::TooLarge {
                what: format!("{nodes} nodes"),
            });
        }
        Ok(mesh)
    }

    /// The cantilever beam `[0,10] x [-0.5,0.5]^2` with `10k x k x k` elements.
    pub fn beam(k: usize) -> Result<Self, FemError> {
        Self::beam_in(3, k)
    }

    /// The beam in `dim` dimensions: `10k x k x k` hexahedra on
    /// `[0,10] x [-0.5,0.5]^2`, or `10k x k` quadrilaterals on `[0,10] x [-0.5,0.5]`.
    pub fn beam_in(dim: usize, k: usize) -> Result<Self, FemError> {
        if !DIMENSIONS.contains(&dim) {
            return Err(FemError::BadDimension { dim });
        }
        if k == 0 {
            return Err(FemError::ZeroBeamSize);
        }
        let nex = k.checked_mul(10).ok_or_else(|| FemError::TooLarge {
            what: format!("k = {k}"),
        })?;
        if dim == 2 {
            return Self::new_2d(nex, k, [0.0, -0.5], [BEAM_LENGTH, 0.5]);
        }
        Self::new(nex, k, k, [0.0, -0.5, -0.5], [BEAM_LENGTH, 0.5, 0.5])
    }

    /// Spatial dimension: 3 (hexahedra) or 2 (quadrilaterals).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Nodes per element, `3^dim`.
    pub fn nodes_per_element(&self) -> usize {
        q2_nodes(self.dim)
    }
    /// Elements per direction `[nex, ney, nez]` (`nez = 1` in 2D).
    pub fn elements_per_dim(&self) -> [usize; 3] {
        self.nel
    }
    /// Lattice nodes per direction `[2nex+1, 2ney+1, 2nez+1]` (`nz = 1` in 2D).
    pub fn nodes_per_dim(&self) -> [usize; 3] {
        [0, 1, 2].map(|d| if d < self.dim { 2 * self.nel[d] + 1 } else { 1 })
    }
    /// Local nodes of an element per direction: 3, or 1 on the flat z axis of 2D.
    fn local_per_dim(&self) -> [usize; 3] {
        [0, 1, 2].map(|d| if d < self.dim { 3 } else { 1 })
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
    /// Edge lengths `(hx, hy, hz)` shared by every element (`hz = 0` in 2D).
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
    /// so the far faces are hit exactly; `z = 0` in 2D).
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
    /// The `3^dim` node ids of element `e`, in tensor order (increasing ids).
    #[inline]
    pub fn element_nodes(&self, e: usize) -> ElementNodes {
        let [ex, ey, ez] = self.element_lattice(e);
        let [_, ny, nz] = self.local_per_dim();
        let mut ids = [0u32; 27];
        for lx in 0..3 {
            for ly in 0..ny {
                for lz in 0..nz {
                    ids[(lx * ny + ly) * nz + lz] = self.node_id([2 * ex + lx, 2 * ey + ly, 2 * ez + lz]) as u32;
                }
            }
        }
        ElementNodes {
            ids,
            len: self.nodes_per_element(),
        }
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

/// A piecewise-constant modulus field: `f` sampled at each element centroid,
/// in element order. The elements are sampled in parallel: a time loop samples
/// a new field every step, and on one core the 41K elements of k = 16 took a
/// millisecond or more of each hot step's assembly. Each element's value
/// depends on its centroid only, so the field is the same whatever the threads.
pub fn modulus_from_fn(mesh: &BoxMesh, f: impl Fn([f64; 3]) -> f64 + Sync) -> Vec<f64> {
    use rayon::prelude::*;
    (0..mesh.n_elements())
        .into_par_iter()
        .with_min_len(4096)
        .map(|e| f(mesh.element_centroid(e)))
        .collect()
}

/// The modulus of step `s` of `steps` of the beam's time loop: a stiffening
/// front moving along the beam. `E = 1 + 2 S((x_f - x) / w)` with `S` a
/// smooth step (`tanh`), front position `x_f = 10 (s - 1) / steps` and width
/// `w = 0.5`: material behind the front is three times stiffer, and the field
/// changes every step.
pub fn stiffening_front(mesh: &BoxMesh, step: usize, steps: usize) -> Vec<f64> {
    let xf = BEAM_LENGTH * (step.saturating_sub(1)) as f64 / steps.max(1) as f64;
    modulus_from_fn(mesh, |c| 1.0 + (1.0 + ((xf - c[0]) / 0.5).tanh()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parallel_field_is_the_centroids_sampled_in_element_order() {
        // 5 x 7 x 150 = 5250 elements: more than one parallel chunk.
        let mesh = BoxMesh::new(5, 7, 150, [0.0, -1.0, 0.5], [1.0, 2.0, 10.0]).unwrap();
        for step in [1, 3, 10] {
            let got = stiffening_front(&mesh, step, 10);
            let xf = BEAM_LENGTH * (step - 1) as f64 / 10.0;
            let want: Vec<f64> = mesh
                .element_centroids()
                .map(|c| 1.0 + (1.0 + ((xf - c[0]) / 0.5).tanh()))
                .collect();
            assert_eq!(got.len(), 5250);
            assert!(
                got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                "step {step}"
            );
        }
    }
}
