//! Near-null spaces from what a user has: nodal coordinates (rigid-body modes),
//! or nothing but the block size (translations, or the constant).
//!
//! Layout everywhere: row-major `n_dofs x modes`, dofs interleaved node by
//! node (`x0, y0, z0, x1, ...`), the layout `MeshSetup::build` consumes.
//! Columns are orthonormalized by modified Gram-Schmidt (two passes, fixed
//! chunked sums, so the result is bitwise the same for any thread count):
//! the tentative prolongator's QR then starts from a well-conditioned basis.
use crate::AmgError;
use rayon::prelude::*;

/// Rigid-body modes in `dim` dimensions: 6 in 3D, 3 in 2D (two translations, one rotation).
pub const fn rigid_mode_count(dim: usize) -> usize {
    dim * (dim + 1) / 2
}

/// The six rigid-body displacements at point `(x, y, z)`: translations `e_x`,
/// `e_y`, `e_z`, then rotations `(0, z, -y)`, `(-z, 0, x)`, `(y, -x, 0)`.
pub fn rigid_body_modes_at([x, y, z]: [f64; 3]) -> [[f64; 3]; 6] {
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

/// Checks `coords` is `n_nodes x dim` (row-major) with `dim` 2 or 3 and finite entries.
fn check_coords(coords: &[f64], dim: usize) -> Result<usize, AmgError> {
    if dim != 2 && dim != 3 {
        return Err(AmgError::NearNull {
            what: format!("coordinates must be 2D or 3D, got {dim} columns"),
        });
    }
    if coords.is_empty() || coords.len() % dim != 0 {
        return Err(AmgError::NearNull {
            what: format!("{} coordinate values do not form rows of {dim}", coords.len()),
        });
    }
    if let Some(k) = coords.iter().position(|v| !v.is_finite()) {
        return Err(AmgError::NearNull {
            what: format!("coordinate {} of node {} is not finite", k % dim, k / dim),
        });
    }
    Ok(coords.len() / dim)
}

/// The rigid-body modes at nodes with coordinates `coords` (row-major
/// `n_nodes x dim`), not orthonormalized: row-major `(dim n_nodes) x nm`,
/// `nm =` [`rigid_mode_count`]. 3D: `e_x, e_y, e_z, (0, z, -y), (-z, 0, x),
/// (y, -x, 0)`; 2D: `e_x, e_y, (-y, x)`.
pub fn rigid_body_modes_raw(coords: &[f64], dim: usize) -> Result<Vec<f64>, AmgError> {
    let n_nodes = check_coords(coords, dim)?;
    let nm = rigid_mode_count(dim);
    let mut b = vec![0.0; n_nodes * dim * nm];
    b.par_chunks_mut(dim * nm)
        .zip(coords.par_chunks(dim))
        .for_each(|(rows, c)| {
            let x = [c[0], c[1], if dim == 3 { c[2] } else { 0.0 }];
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
    Ok(b)
}

/// [`rigid_body_modes_raw`] orthonormalized: the near-null space of linear
/// elasticity, `(dim n_nodes) x nm` with the translations first. Nodes all on
/// one line (3D) or one point are an error: their rotations are dependent.
pub fn rigid_body_modes(coords: &[f64], dim: usize) -> Result<Vec<f64>, AmgError> {
    let mut b = rigid_body_modes_raw(coords, dim)?;
    orthonormalize_columns(&mut b, rigid_mode_count(dim)).map_err(|m| AmgError::NearNull {
        what: format!(
            "rigid-body mode {m} is linearly dependent on the previous ones: the coordinates span too few \
             directions (are all nodes on one line or in one point?)"
        ),
    })?;
    Ok(b)
}

/// The `block` translations (`e_0 .. e_{block-1}` on every node), orthonormal:
/// `(block n_nodes) x block`. For `block = 1`, the constant vector.
pub fn translations(n_nodes: usize, block: usize) -> Vec<f64> {
    let mut b = vec![0.0; n_nodes * block * block];
    let v = 1.0 / (n_nodes as f64).sqrt();
    for node in 0..n_nodes {
        for c in 0..block {
            b[(node * block + c) * block + c] = v;
        }
    }
    b
}

/// The near-null space a block-`block` operator whose nodes sit at `coords`
/// (`n_nodes x dim`) should get: rigid-body modes when the block holds one
/// displacement per direction (`block == dim`), the constant when the operator
/// is scalar (`block == 1`). Returns `(values, modes)`. Other block sizes (e.g.
/// shells with rotational dofs) are an error asking for an explicit near-null
/// space.
pub fn near_null_from_coordinates(coords: &[f64], dim: usize, block: usize) -> Result<(Vec<f64>, usize), AmgError> {
    let n_nodes = check_coords(coords, dim)?;
    match block {
        1 => Ok((translations(n_nodes, 1), 1)),
        b if b == dim => Ok((rigid_body_modes(coords, dim)?, rigid_mode_count(dim))),
        b => Err(AmgError::NearNull {
            what: format!(
                "the operator has {b}x{b} blocks but the coordinates are {dim}D; rigid-body modes need one \
                 displacement per direction ({dim}x{dim} blocks); give the near-null space as a file or use \
                 translations"
            ),
        }),
    }
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
/// `n x ncols` array. A (numerically) dependent column is an error carrying its index.
pub fn orthonormalize_columns(b: &mut [f64], ncols: usize) -> Result<(), usize> {
    for m in 0..ncols {
        let before = col_dot(b, ncols, m, m).sqrt();
        for _pass in 0..2 {
            for j in 0..m {
                let d = col_dot(b, ncols, j, m);
                b.par_chunks_mut(DOT_CHUNK * ncols)
                    .for_each(|c| c.chunks_exact_mut(ncols).for_each(|r| r[m] -= d * r[j]));
            }
        }
        let norm = col_dot(b, ncols, m, m).sqrt();
        // What is left after projection must not be rounding noise.
        if !(norm > 1e-12 * before) || !norm.is_finite() {
            return Err(m);
        }
        let inv = 1.0 / norm;
        b.par_chunks_mut(DOT_CHUNK * ncols)
            .for_each(|c| c.chunks_exact_mut(ncols).for_each(|r| r[m] *= inv));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense reference: the columns' Gram matrix.
    fn gram(b: &[f64], nm: usize) -> Vec<f64> {
        let mut g = vec![0.0; nm * nm];
        for r in b.chunks_exact(nm) {
            for p in 0..nm {
                for q in 0..nm {
                    g[p * nm + q] += r[p] * r[q];
                }
            }
        }
        g
    }

    #[test]
    fn rigid_modes_of_a_tetrahedron_are_orthonormal_and_span_the_raw_ones() {
        let coords = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0];
        let raw = rigid_body_modes_raw(&coords, 3).unwrap();
        assert_eq!(raw.len(), 12 * 6);
        // Node 1 at (1, 0, 0): rotation (y, -x, 0) is (0, -1, 0): dof y of node 1, mode 5.
        assert_eq!(raw[(3 + 1) * 6 + 5], -1.0);
        let b = rigid_body_modes(&coords, 3).unwrap();
        let g = gram(&b, 6);
        for p in 0..6 {
            for q in 0..6 {
                let want = if p == q { 1.0 } else { 0.0 };
                assert!((g[p * 6 + q] - want).abs() < 1e-14, "{p} {q} {}", g[p * 6 + q]);
            }
        }
        // The first three columns are the normalized translations exactly.
        assert!((b[0] - 0.5).abs() < 1e-15 && b[1] == 0.0);
    }

    #[test]
    fn two_d_gives_three_modes_and_collinear_nodes_are_refused() {
        let b = rigid_body_modes(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0], 2).unwrap();
        assert_eq!(b.len(), 6 * 3);
        let e = rigid_body_modes(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0], 3).unwrap_err();
        assert!(e.to_string().contains("one line"), "{e}");
        let e = rigid_body_modes(&[0.0, f64::NAN, 1.0, 0.0], 2).unwrap_err();
        assert!(e.to_string().contains("not finite"), "{e}");
        let e = rigid_body_modes(&[0.0, 0.0, 1.0], 2).unwrap_err();
        assert!(e.to_string().contains("rows of 2"), "{e}");
    }

    #[test]
    fn block_size_decides_the_modes() {
        let c = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        assert_eq!(near_null_from_coordinates(&c, 2, 2).unwrap().1, 3);
        let (t, m) = near_null_from_coordinates(&c, 2, 1).unwrap();
        assert_eq!((m, t), (1, vec![0.5; 4]));
        let e = near_null_from_coordinates(&c, 2, 3).unwrap_err();
        assert!(e.to_string().contains("give the near-null space"), "{e}");
        let g = gram(&translations(2, 3), 3);
        for (k, v) in g.iter().enumerate() {
            let want = if k % 4 == 0 { 1.0 } else { 0.0 };
            assert!((v - want).abs() < 1e-15, "{k}: {v}");
        }
    }
}
