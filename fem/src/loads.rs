//! Right-hand side (end-face traction) and near-null space (rigid-body modes).
use crate::assembly::{Assembler, NONE};
use crate::element::{q2_shape_1d, GAUSS3_POINTS, GAUSS3_WEIGHTS};
use crate::mesh::BoxMesh;
use rayon::prelude::*;

/// Columns of the near-null space (3D).
pub const N_RIGID_MODES: usize = 6;

/// Rigid-body modes in `dim` dimensions: 6 in 3D, 3 in 2D (two translations, one rotation).
pub const fn rigid_mode_count(dim: usize) -> usize {
    dim * (dim + 1) / 2
}

/// The spec's end load `t(x, y, z) = (1, -z, y)`: unit axial pull plus a twist
/// about +x (resultant force 1 and torque 1/6 on the unit square section).
#[inline]
pub fn beam_traction([_, y, z]: [f64; 3]) -> [f64; 3] {
    [1.0, -z, y]
}

/// The 2D analogue of [`beam_traction`] on the end edge: `t(x, y) = (1 - y, 0)`.
/// The 3D load is `e_x` plus the rotation field about the beam axis through the
/// face centre; the one in-plane rotation is about `z`, whose field at the end
/// edge is `(-y, 0)`. Resultant: axial force 1 and bending moment 1/12 about +z
/// (the 2D polar moment of the unit edge, as 1/6 is the square's).
#[inline]
pub fn beam_traction_2d([_, y, _]: [f64; 3]) -> [f64; 3] {
    [1.0 - y, 0.0, 0.0]
}

fn check_pair(mesh: &BoxMesh, asm: &Assembler) {
    assert_eq!(
        mesh.n_nodes(),
        asm.n_nodes(),
        "mesh and assembler disagree on the node count"
    );
    assert_eq!(
        mesh.n_elements(),
        asm.n_elements(),
        "mesh and assembler disagree on the element count"
    );
}

/// Consistent load vector of [`beam_traction`] on the face `x = x_max`
/// (length `3 * n_free`, interlaced), 3x3 Gauss with the 9-node face shape
/// functions per face element; in 2D, of [`beam_traction_2d`] on the edge
/// `x = x_max` (length `2 * n_free`), 3-point Gauss with the 3-node edge
/// shape functions. Panics if `asm` was not built from `mesh`.
pub fn traction_rhs(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    if mesh.dim() == 2 {
        traction_rhs_with(mesh, asm, beam_traction_2d)
    } else {
        traction_rhs_with(mesh, asm, beam_traction)
    }
}

/// As [`traction_rhs`] for any traction `t(x)` on the face `x = x_max` (in 2D
/// `z = 0` is passed and the first two components are used). Exact when `t`
/// is linear (the integrand is then degree <= 3 per direction).
pub fn traction_rhs_with(mesh: &BoxMesh, asm: &Assembler, t: impl Fn([f64; 3]) -> [f64; 3]) -> Vec<f64> {
    check_pair(mesh, asm);
    let dim = mesh.dim();
    let [nex, ney, nez] = mesh.elements_per_dim();
    let h = mesh.element_size();
    let (lo, hi) = (mesh.lower(), mesh.upper());
    let ix = 2 * nex;
    let free = asm.free_of_node();
    let mut f = vec![0.0; asm.n_dofs()];
    // The flat z axis of 2D: one point of weight 1 (the integral is per unit
    // thickness) and one node of shape value 1.
    let (z_points, z_weights, z_nodes): (&[f64], &[f64], usize) = if dim == 2 {
        (&[0.0], &[2.0], 1)
    } else {
        (&GAUSS3_POINTS, &GAUSS3_WEIGHTS, 3)
    };
    let hz = if dim == 2 { 1.0 } else { h[2] };
    for ey in 0..ney {
        for ez in 0..nez {
            let (yc, zc) = (lo[1] + h[1] * (ey as f64 + 0.5), lo[2] + h[2] * (ez as f64 + 0.5));
            for (qy, &sy) in GAUSS3_POINTS.iter().enumerate() {
                for (qz, &sz) in z_points.iter().enumerate() {
                    let w = GAUSS3_WEIGHTS[qy] * z_weights[qz] * h[1] * hz / 4.0;
                    let tq = t([hi[0], yc + 0.5 * h[1] * sy, zc + 0.5 * h[2] * sz]);
                    let ny = q2_shape_1d(sy);
                    let nz = if dim == 2 { [1.0, 0.0, 0.0] } else { q2_shape_1d(sz) };
                    for ly in 0..3 {
                        for lz in 0..z_nodes {
                            let r = free[mesh.node_id([ix, 2 * ey + ly, 2 * ez + lz])];
                            if r == NONE {
                                continue;
                            }
                            let wn = w * ny[ly] * nz[lz];
                            for c in 0..dim {
                                f[dim * r as usize + c] += wn * tq[c];
                            }
                        }
                    }
                }
            }
        }
    }
    f
}

/// The six rigid-body displacements at point `(x, y, z)`: translations `e_x`,
/// `e_y`, `e_z`, then rotations `(0, z, -y)`, `(-z, 0, x)`, `(y, -x, 0)`.
pub fn rigid_body_modes_at([x, y, z]: [f64; 3]) -> [[f64; 3]; N_RIGID_MODES] {
    [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, z, -y],
        [-z, 0.0, x],
        [y, -x, 0.0],
    ]
}

/// The three in-plane rigid-body displacements at `(x, y)`: translations
/// `e_x`, `e_y`, then the rotation `(-y, x)` about +z (third component 0).
pub fn rigid_body_modes_2d_at([x, y, _]: [f64; 3]) -> [[f64; 3]; 3] {
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-y, x, 0.0]]
}

/// The rigid-body modes at the free nodes, not orthonormalized: row-major
/// `n_dofs x nm` (entry `[(dim * free + comp) * nm + m]`, `nm =`
/// [`rigid_mode_count`]), in global coordinates. 3D: `e_x, e_y, e_z,
/// (0, z, -y), (-z, 0, x), (y, -x, 0)`; 2D: `e_x, e_y, (-y, x)`.
pub fn rigid_body_modes_raw(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    check_pair(mesh, asm);
    let dim = mesh.dim();
    let nm = rigid_mode_count(dim);
    let mut b = vec![0.0; asm.n_dofs() * nm];
    b.par_chunks_mut(dim * nm)
        .zip(asm.node_of_free().par_iter())
        .for_each(|(rows, &node)| {
            let x = mesh.node_coords(node as usize);
            let (m2, m3);
            let modes: &[[f64; 3]] = if dim == 2 {
                m2 = rigid_body_modes_2d_at(x);
                &m2
            } else {
                m3 = rigid_body_modes_at(x);
                &m3
            };
            for (m, v) in modes.iter().enumerate() {
                for c in 0..dim {
                    rows[c * nm + m] = v[c];
                }
            }
        });
    b
}

/// [`rigid_body_modes_raw`] orthonormalized in place by modified Gram-Schmidt,
/// two passes, in mode order: the near-null space the AMG setup consumes.
/// The translations come first, so the leading `dim` columns span exactly them.
pub fn rigid_body_modes(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    let mut b = rigid_body_modes_raw(mesh, asm);
    orthonormalize_columns(&mut b, rigid_mode_count(mesh.dim()));
    b
}

/// Rows per partial sum: fixed chunks keep reductions bitwise reproducible.
const DOT_CHUNK: usize = 4096;

/// `sum_i b[i, p] * b[i, q]` over a row-major `n x ncols` array.
fn col_dot(b: &[f64], ncols: usize, p: usize, q: usize) -> f64 {
    let partial: Vec<f64> = b
        .par_chunks(DOT_CHUNK * ncols)
        .map(|c| c.chunks_exact(ncols).map(|r| r[p] * r[q]).sum::<f64>())
        .collect();
    partial.iter().sum()
}

/// Modified Gram-Schmidt with reorthogonalization on the columns of a row-major
/// `n x ncols` array. Panics on a (numerically) dependent column.
pub fn orthonormalize_columns(b: &mut [f64], ncols: usize) {
    for m in 0..ncols {
        for _pass in 0..2 {
            for j in 0..m {
                let d = col_dot(b, ncols, j, m);
                b.par_chunks_mut(DOT_CHUNK * ncols)
                    .for_each(|c| c.chunks_exact_mut(ncols).for_each(|r| r[m] -= d * r[j]));
            }
        }
        let norm = col_dot(b, ncols, m, m).sqrt();
        assert!(
            norm > 0.0 && norm.is_finite(),
            "column {m} is linearly dependent on the previous ones"
        );
        let inv = 1.0 / norm;
        b.par_chunks_mut(DOT_CHUNK * ncols)
            .for_each(|c| c.chunks_exact_mut(ncols).for_each(|r| r[m] *= inv));
    }
}
