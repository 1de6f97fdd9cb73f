//! A rank's slab of the clamped 3D beam: the block rows `rows` of the whole
//! beam's operator, right-hand side and near-null space, assembled from only
//! the elements that touch those rows.
//!
//! The beam's free nodes are numbered with x slowest, so a contiguous range
//! of block rows is a slab of node planes; the elements touching it are a
//! contiguous range of element layers along x, widened to start at an even
//! layer. [`BeamSlab`] builds the FEM inspector ([`Assembler`]) of that
//! sub-box only (its own pattern, element map, colouring and incidence),
//! with the whole beam's element size, and assembles it; the slab's rows
//! are complete there (every element touching them is in the sub-box) and
//! their values are the whole beam's bit for bit: the row-parallel gather
//! sums a block's contributions in colour order, the colours of an element
//! depend on the parity of its layer (the even start keeps them), the
//! reference stiffness is the whole beam's, and both free numberings keep
//! the global order, so a row's columns come in the same order. A refresh
//! ([`BeamSlab::assemble`]) reads the slab's part of the whole beam's
//! modulus field and touches only the slab's elements.
//!
//! The right-hand side (the end-face traction) is computed for the whole
//! beam without an assembler and sliced; the rigid-body modes are
//! orthonormalized over all nodes (a global operation on coordinates, no
//! matrix), then sliced.
use crate::assembly::{Assembler, Constraint, NONE};
use crate::error::FemError;
use crate::loads::{beam_traction, traction_rhs_numbered, N_RIGID_MODES};
use crate::mesh::BoxMesh;
use ptap_sparse::BlockCsr;
use std::ops::Range;

/// The sub-box a non-empty slab assembles.
#[derive(Clone, Debug)]
struct SubBox {
    /// Element layers along x (`layers.start` even).
    layers: Range<usize>,
    assembler: Assembler,
    a: BlockCsr,
    /// The slab's rows in the sub-box's free numbering.
    rows: Range<usize>,
    /// Global free index minus the sub-box's.
    offset: usize,
}

/// Block rows `rows` of the clamped 3D beam at refinement `k` (module docs).
#[derive(Clone, Debug)]
pub struct BeamSlab {
    pub k: usize,
    /// Length factor: `10 k length x k x k` elements on `[0, 10 length] x [-0.5, 0.5]^2`.
    pub length: usize,
    /// The whole beam's mesh (a description; no arrays).
    pub mesh: BoxMesh,
    /// The slab's block rows (free nodes) of the whole beam.
    pub rows: Range<usize>,
    /// Free nodes (block rows) of the whole beam.
    pub n_free: usize,
    /// Rigid-body modes (6).
    pub modes: usize,
    /// The slab's rows of the right-hand side (3 per row).
    pub rhs: Vec<f64>,
    /// The slab's rows of the orthonormalized rigid-body modes (`3 x 6` per row).
    pub near_null: Vec<f64>,
    sub: Option<SubBox>,
}

impl BeamSlab {
    /// The slab of `rows`, assembled with the uniform modulus 1.
    pub fn build(k: usize, rows: Range<usize>) -> Result<Self, FemError> {
        Self::build_long(k, 1, rows)
    }

    /// The slab of `rows` of the beam `length` times longer with the same
    /// elements (`length` 1: [`BeamSlab::build`]'s), for weak scaling over ranks.
    pub fn build_long(k: usize, length: usize, rows: Range<usize>) -> Result<Self, FemError> {
        let mesh = beam_mesh(k, length)?;
        let [_, ny, nz] = mesh.nodes_per_dim();
        let plane = ny * nz;
        let n_free = mesh.n_nodes() - plane;
        if rows.start > rows.end || rows.end > n_free {
            return Err(FemError::BadRows {
                start: rows.start,
                end: rows.end,
                n: n_free,
            });
        }
        // The clamp eliminates the plane x = 0: free index = node id - plane.
        let free = |id: usize| if id < plane { NONE } else { (id - plane) as u32 };
        let rhs_all = traction_rhs_numbered(&mesh, &free, 3 * n_free, beam_traction);
        let coords: Vec<f64> = (plane..mesh.n_nodes()).flat_map(|id| mesh.node_coords(id)).collect();
        let modes_all = ptap_amg::nullspace::rigid_body_modes(&coords, 3).expect("a beam's nodes span every direction");
        let m = 3 * N_RIGID_MODES;
        let sub = if rows.is_empty() {
            None
        } else {
            let nex = mesh.elements_per_dim()[0];
            let (ix0, ix1) = ((rows.start + plane) / plane, (rows.end - 1 + plane) / plane);
            // Elements touching node plane ix: layers (ix - 1) / 2 ..= ix / 2.
            let lo = ix0.saturating_sub(1) / 2;
            let layers = (lo & !1)..(ix1 / 2).min(nex - 1) + 1;
            let sub_mesh = BoxMesh::new(
                layers.len(),
                k,
                k,
                [layers.start as f64, -0.5, -0.5],
                [layers.end as f64, 0.5, 0.5],
            )?;
            let (constraint, offset) = if layers.start == 0 {
                (Constraint::ClampXMin, 0)
            } else {
                (Constraint::None, 2 * layers.start * plane - plane)
            };
            let assembler = Assembler::with_element_size(&sub_mesh, constraint, mesh.element_size())?;
            let a = assembler.zero_matrix();
            Some(SubBox {
                rows: rows.start - offset..rows.end - offset,
                layers,
                assembler,
                a,
                offset,
            })
        };
        let mut slab = Self {
            k,
            length,
            rhs: rhs_all[3 * rows.start..3 * rows.end].to_vec(),
            near_null: modes_all[m * rows.start..m * rows.end].to_vec(),
            modes: N_RIGID_MODES,
            n_free,
            rows,
            sub,
            mesh,
        };
        let uniform = crate::mesh::uniform_modulus(&slab.mesh);
        slab.assemble(&uniform)?;
        Ok(slab)
    }

    /// Re-assembles the slab's rows for the whole beam's per-element modulus
    /// field (its slab's part is read; nothing is allocated).
    pub fn assemble(&mut self, modulus: &[f64]) -> Result<(), FemError> {
        if modulus.len() != self.mesh.n_elements() {
            return Err(FemError::ModulusLength {
                got: modulus.len(),
                expected: self.mesh.n_elements(),
            });
        }
        if let Some(s) = &mut self.sub {
            let layer = self.k * self.k;
            let part = &modulus[s.layers.start * layer..s.layers.end * layer];
            s.assembler.assemble(part, &mut s.a)?;
        }
        Ok(())
    }

    /// The sub-box's assembler, the slab's rows in its free numbering, and
    /// the sub-box's elements among the whole beam's (`None` for no rows):
    /// what a device assembly of the slab's rows needs.
    pub fn sub_box(&self) -> Option<(&Assembler, Range<usize>, Range<usize>)> {
        let layer = self.k * self.k;
        self.sub.as_ref().map(|s| {
            (
                &s.assembler,
                s.rows.clone(),
                s.layers.start * layer..s.layers.end * layer,
            )
        })
    }

    /// Elements assembled (the slab's sub-box).
    pub fn elements(&self) -> usize {
        self.sub.as_ref().map_or(0, |s| s.layers.len() * self.k * self.k)
    }

    /// The slab's row pointers, from 0.
    pub fn row_ptr(&self) -> Vec<usize> {
        match &self.sub {
            Some(s) => {
                let rp = &s.a.pattern().row_ptr()[s.rows.start..=s.rows.end];
                rp.iter().map(|&k| k - rp[0]).collect()
            }
            None => vec![0],
        }
    }

    /// The slab's block columns, as the whole beam's free indices.
    pub fn cols(&self) -> Vec<u32> {
        match &self.sub {
            Some(s) => {
                let p = s.a.pattern();
                p.col_idx()[p.row_ptr()[s.rows.start]..p.row_ptr()[s.rows.end]]
                    .iter()
                    .map(|&c| c + s.offset as u32)
                    .collect()
            }
            None => Vec::new(),
        }
    }

    /// The slab's block values (3x3 each, in [`BeamSlab::cols`]' order).
    pub fn values(&self) -> &[f64] {
        match &self.sub {
            Some(s) => {
                let p = s.a.pattern();
                &s.a.values()[p.row_ptr()[s.rows.start] * 9..p.row_ptr()[s.rows.end] * 9]
            }
            None => &[],
        }
    }
}

/// The beam's mesh, `length` times longer with the same elements.
pub fn beam_mesh(k: usize, length: usize) -> Result<BoxMesh, FemError> {
    if length == 1 {
        return BoxMesh::beam(k);
    }
    // Length 0 is an empty mesh, refused by BoxMesh::new in one sentence.
    BoxMesh::new(
        10 * k * length,
        k,
        k,
        [0.0, -0.5, -0.5],
        [10.0 * length as f64, 0.5, 0.5],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{stiffening_front, BeamProblem};

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn slabs_are_the_whole_beams_rows_bit_for_bit_from_fewer_elements() {
        for k in [1, 2, 3] {
            let mut beam = BeamProblem::build(k).unwrap();
            let n = beam.a.nrows();
            for ranks in [1, 2, 3, 5, 7] {
                let starts: Vec<usize> = (0..=ranks).map(|r| r * n / ranks).collect();
                let mut slabs: Vec<BeamSlab> = starts
                    .windows(2)
                    .map(|w| BeamSlab::build(k, w[0]..w[1]).unwrap())
                    .collect();
                // The whole beam back to the uniform modulus the slabs start from.
                beam.reassemble(&crate::uniform_modulus(&beam.mesh)).unwrap();
                for step in [0, 2, 3] {
                    if step > 0 {
                        let field = stiffening_front(&beam.mesh, step, 3);
                        beam.reassemble(&field).unwrap();
                        for s in &mut slabs {
                            s.assemble(&field).unwrap();
                        }
                    }
                    let p = beam.a.pattern();
                    for s in &slabs {
                        let r = s.rows.clone();
                        let (k0, k1) = (p.row_ptr()[r.start], p.row_ptr()[r.end]);
                        let what = format!("k {k}, {ranks} ranks, rows {r:?}, step {step}");
                        let rp: Vec<usize> = p.row_ptr()[r.start..=r.end].iter().map(|&x| x - k0).collect();
                        assert_eq!(s.row_ptr(), rp, "{what}");
                        assert_eq!(s.cols(), p.col_idx()[k0..k1], "{what}");
                        assert_eq!(bits(s.values()), bits(&beam.a.values()[k0 * 9..k1 * 9]), "{what}");
                        assert_eq!(bits(&s.rhs), bits(&beam.rhs[3 * r.start..3 * r.end]), "{what}");
                        assert_eq!(
                            bits(&s.near_null),
                            bits(&beam.near_null[18 * r.start..18 * r.end]),
                            "{what}"
                        );
                        if ranks >= 3 && k >= 2 {
                            assert!(
                                s.elements() < beam.mesh.n_elements(),
                                "{what}: {} elements",
                                s.elements()
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn slabs_of_a_longer_beam_are_its_rows_bit_for_bit() {
        for (k, length) in [(1, 2), (2, 3)] {
            let mesh = beam_mesh(k, length).unwrap();
            let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
            let mut a = asm.zero_matrix();
            let field = crate::stiffening_front(&mesh, 2, 3);
            asm.assemble(&field, &mut a).unwrap();
            let p = a.pattern();
            let n = a.nrows();
            for ranks in [1, 2, 3] {
                for r in 0..ranks {
                    let rows = r * n / ranks..(r + 1) * n / ranks;
                    let mut s = BeamSlab::build_long(k, length, rows.clone()).unwrap();
                    s.assemble(&field).unwrap();
                    assert_eq!(s.n_free, n);
                    let (k0, k1) = (p.row_ptr()[rows.start], p.row_ptr()[rows.end]);
                    assert_eq!(s.cols(), p.col_idx()[k0..k1], "k {k} length {length} rows {rows:?}");
                    assert_eq!(
                        bits(s.values()),
                        bits(&a.values()[k0 * 9..k1 * 9]),
                        "k {k} length {length}"
                    );
                }
            }
        }
        assert!(BeamSlab::build_long(1, 0, 0..0).is_err());
    }

    #[test]
    fn rows_outside_the_beam_are_refused() {
        let e = BeamSlab::build(1, 170..200).unwrap_err();
        assert_eq!(
            e.to_string(),
            "block rows 170..200 are not a range of the beam's 180 free nodes"
        );
        assert!(BeamSlab::build(1, 5..5).unwrap().values().is_empty());
    }
}
