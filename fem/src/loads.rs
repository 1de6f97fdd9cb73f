//! Right-hand side (end-face traction) and near-null space (rigid-body modes).
use crate::assembly::{Assembler, NONE};
use crate::element::{q2_shape_1d, GAUSS3_POINTS, GAUSS3_WEIGHTS};
use crate::mesh::BoxMesh;

/// Columns of the near-null space (3D).
pub const N_RIGID_MODES: usize = 6;

pub use ptap_amg::nullspace::{orthonormalize_columns, rigid_body_modes_2d_at, rigid_body_modes_at, rigid_mode_count};

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
    let free = asm.free_of_node();
    traction_rhs_numbered(mesh, &|id| free[id], asm.n_dofs(), t)
}

/// [`traction_rhs_with`] with the free numbering given as a function of the
/// node id (`NONE`: constrained) and `n_dofs` entries: what a rank's slab
/// uses without the whole beam's assembler.
pub(crate) fn traction_rhs_numbered(
    mesh: &BoxMesh,
    free: &dyn Fn(usize) -> u32,
    n_dofs: usize,
    t: impl Fn([f64; 3]) -> [f64; 3],
) -> Vec<f64> {
    let dim = mesh.dim();
    let [nex, ney, nez] = mesh.elements_per_dim();
    let h = mesh.element_size();
    let (lo, hi) = (mesh.lower(), mesh.upper());
    let ix = 2 * nex;
    let mut f = vec![0.0; n_dofs];
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
                    for (ly, &shape_y) in ny.iter().enumerate() {
                        for (lz, &shape_z) in nz.iter().enumerate().take(z_nodes) {
                            let r = free(mesh.node_id([ix, 2 * ey + ly, 2 * ez + lz]));
                            if r == NONE {
                                continue;
                            }
                            let wn = w * shape_y * shape_z;
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

/// The rigid-body modes at the free nodes, not orthonormalized: row-major
/// `n_dofs x nm` (entry `[(dim * free + comp) * nm + m]`, `nm =`
/// [`rigid_mode_count`]), in global coordinates. 3D: `e_x, e_y, e_z,
/// (0, z, -y), (-z, 0, x), (y, -x, 0)`; 2D: `e_x, e_y, (-y, x)`.
pub fn rigid_body_modes_raw(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    let (dim, coords) = free_node_coords(mesh, asm);
    ptap_amg::nullspace::rigid_body_modes_raw(&coords, dim).expect("mesh coordinates are finite")
}

/// The free nodes' coordinates, row-major `n_free x dim`.
fn free_node_coords(mesh: &BoxMesh, asm: &Assembler) -> (usize, Vec<f64>) {
    check_pair(mesh, asm);
    let dim = mesh.dim();
    let coords = asm
        .node_of_free()
        .iter()
        .flat_map(|&node| mesh.node_coords(node as usize)[..dim].to_vec())
        .collect();
    (dim, coords)
}

/// [`rigid_body_modes_raw`] orthonormalized in place by modified Gram-Schmidt,
/// two passes, in mode order: the near-null space the AMG setup consumes.
/// The translations come first, so the leading `dim` columns span exactly them.
pub fn rigid_body_modes(mesh: &BoxMesh, asm: &Assembler) -> Vec<f64> {
    let (dim, coords) = free_node_coords(mesh, asm);
    ptap_amg::nullspace::rigid_body_modes(&coords, dim).expect("a beam's nodes span every direction")
}
