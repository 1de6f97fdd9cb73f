//! Right-hand side (end-face traction) and near-null space (rigid-body modes).
use crate::assembly::{Assembler, NONE};
use crate::element::{q2_shape_1d, GAUSS3_POINTS, GAUSS3_WEIGHTS};
use crate::mesh::BoxMesh;
use rayon::prelude::*;

/// Columns of the near-null space.
pub const N_RIGID_MODES: usize = 6;

/// The spec's end load `t(x, y, z) = (1, -z, y)`: unit axial pull plus a twist
/// about +x (resultant force 1 and torque 1/6 on the unit square section).
#[inline]
pub fn beam_traction([_, y, z]: [f64; 3]) -> [f64; 3] {
    [1.0, -z, y]
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
/// functions per face element. Panics if `asm` was not built from `mesh`.
pub fn traction_rhs(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    traction_rhs_with(mesh, asm, beam_traction)
}

/// As [`traction_rhs`] for any traction `t(x)` on the face `x = x_max`.
/// Exact when `t` is linear (the integrand is then degree <= 3 per direction).
pub fn traction_rhs_with(mesh: &BoxMesh, asm: &Assembler, t: impl Fn([f64; 3]) -> [f64; 3]) -> Vec<f64> {
    check_pair(mesh, asm);
    let [nex, ney, nez] = mesh.elements_per_dim();
    let h = mesh.element_size();
    let (lo, hi) = (mesh.lower(), mesh.upper());
    let ix = 2 * nex;
    let free = asm.free_of_node();
    let mut f = vec![0.0; asm.n_dofs()];
    for ey in 0..ney {
        for ez in 0..nez {
            let (yc, zc) = (lo[1] + h[1] * (ey as f64 + 0.5), lo[2] + h[2] * (ez as f64 + 0.5));
            for (qy, &sy) in GAUSS3_POINTS.iter().enumerate() {
                for (qz, &sz) in GAUSS3_POINTS.iter().enumerate() {
                    let w = GAUSS3_WEIGHTS[qy] * GAUSS3_WEIGHTS[qz] * h[1] * h[2] / 4.0;
                    let tq = t([hi[0], yc + 0.5 * h[1] * sy, zc + 0.5 * h[2] * sz]);
                    let (ny, nz) = (q2_shape_1d(sy), q2_shape_1d(sz));
                    for ly in 0..3 {
                        for lz in 0..3 {
                            let r = free[mesh.node_id([ix, 2 * ey + ly, 2 * ez + lz])];
                            if r == NONE {
                                continue;
                            }
                            let wn = w * ny[ly] * nz[lz];
                            for c in 0..3 {
                                f[3 * r as usize + c] += wn * tq[c];
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

/// The six rigid-body modes at the free nodes, not orthonormalized: row-major
/// `n_dofs x 6` (entry `[(3 * free + comp) * 6 + m]`), modes `e_x, e_y, e_z,
/// (0, z, -y), (-z, 0, x), (y, -x, 0)` in global coordinates.
pub fn rigid_body_modes_raw(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    check_pair(mesh, asm);
    let mut b = vec![0.0; asm.n_dofs() * N_RIGID_MODES];
    b.par_chunks_mut(3 * N_RIGID_MODES)
        .zip(asm.node_of_free().par_iter())
        .for_each(|(rows, &node)| {
            let [x, y, z] = mesh.node_coords(node as usize);
            for (m, v) in rigid_body_modes_at([x, y, z]).iter().enumerate() {
                for c in 0..3 {
                    rows[c * N_RIGID_MODES + m] = v[c];
                }
            }
        });
    b
}

/// [`rigid_body_modes_raw`] orthonormalized in place by modified Gram-Schmidt,
/// two passes, in mode order: the near-null space the AMG setup consumes.
pub fn rigid_body_modes(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    let mut b = rigid_body_modes_raw(mesh, asm);
    orthonormalize_columns(&mut b, N_RIGID_MODES);
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
