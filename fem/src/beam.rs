//! The spec's cantilever: one call from `k` to operator, load and near-null space.
use crate::assembly::{Assembler, Constraint};
use crate::error::FemError;
use crate::loads::{rigid_body_modes, traction_rhs, N_RIGID_MODES};
use crate::mesh::{uniform_modulus, BoxMesh};
use ptap_sparse::BlockCsr;
use std::time::Instant;

/// Free nodes (block rows) of the clamped beam: `20k (2k+1)^2`.
pub fn beam_free_nodes(k: usize) -> u64 {
    let k = k as u64;
    20 * k * (2 * k + 1) * (2 * k + 1)
}

/// 3x3 blocks of the clamped beam operator: `(8*(10k) - 4) * (9k - (k-1))^2`
/// (per axis a Q2 line of `n` elements has `8n + 1` couplings; eliminating the
/// first node removes 5 of them).
pub fn beam_block_count(k: usize) -> u64 {
    let k = k as u64;
    if k == 0 {
        return 0;
    }
    let t = 9 * k - (k - 1);
    (80 * k - 4) * t * t
}

/// Upper-ish estimate of the whole pipeline's peak memory for beam size `k`, in bytes:
/// - `A`: 72 B of values + 4 B column index per block, plus row pointers;
/// - the element map (729 u32 per element), colouring and node incidence;
/// - the AMG hierarchy and the two-pass PtAP intermediate: 3 x `A`;
/// - vectors: the 6-column near-null space plus ~10 solver/smoother work vectors.
///
/// It errs high (the hierarchy is typically well under 2 x `A`), so a `k` it
/// accepts should fit.
pub fn estimate_bytes(k: usize) -> u64 {
    let nnzb = beam_block_count(k);
    let rows = beam_free_nodes(k);
    let ndof = 3 * rows;
    let elements = 10 * (k as u64).pow(3);
    let a = nnzb * (72 + 4) + (rows + 1) * 8;
    let map = elements * (729 * 4 + 4) + rows * (8 * 4 + 8);
    let vectors = ndof * 8 * (N_RIGID_MODES as u64 + 10);
    a + map + 3 * a + vectors
}

/// Wall-clock seconds of the two setup phases.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BeamTimings {
    /// Mesh, free numbering, block pattern, element map, colouring (the inspector).
    pub setup_s: f64,
    /// The first [`Assembler::assemble`] call (the executor a modulus refresh
    /// reruns); it includes first touch of the freshly allocated value pages,
    /// so a warm refresh is faster (about 2x at k = 8).
    pub assembly_s: f64,
}

/// The assembled cantilever of the spec at size `k` (load vector and near-null
/// space are built but not timed).
#[derive(Clone, Debug)]
pub struct BeamProblem {
    pub k: usize,
    pub mesh: BoxMesh,
    pub assembler: Assembler,
    /// The operator over free nodes, 3x3 blocks.
    pub a: BlockCsr,
    /// Traction load, `3 * n_free`.
    pub rhs: Vec<f64>,
    /// Orthonormal rigid-body modes, row-major `3 n_free x 6`.
    pub near_null: Vec<f64>,
    pub timings: BeamTimings,
}

impl BeamProblem {
    /// Builds the clamped beam with uniform modulus 1.
    pub fn build(k: usize) -> Result<Self, FemError> {
        let t0 = Instant::now();
        let mesh = BoxMesh::beam(k)?;
        let assembler = Assembler::new(&mesh, Constraint::ClampXMin)?;
        let setup_s = t0.elapsed().as_secs_f64();
        let mut a = assembler.zero_matrix();
        let modulus = uniform_modulus(&mesh);
        let t1 = Instant::now();
        assembler.assemble(&modulus, &mut a)?;
        let assembly_s = t1.elapsed().as_secs_f64();
        let rhs = traction_rhs(&mesh, &assembler);
        let near_null = rigid_body_modes(&mesh, &assembler);
        Ok(Self {
            k,
            mesh,
            assembler,
            a,
            rhs,
            near_null,
            timings: BeamTimings { setup_s, assembly_s },
        })
    }

    /// Re-assembles `a` for a new per-element modulus field (same pattern).
    pub fn reassemble(&mut self, modulus: &[f64]) -> Result<(), FemError> {
        self.assembler.assemble(modulus, &mut self.a)
    }
}
