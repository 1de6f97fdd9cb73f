//! The spec's cantilever: one call from `k` to operator, load and near-null space.
use crate::assembly::{Assembler, Constraint};
use crate::error::FemError;
use crate::loads::{rigid_body_modes, rigid_mode_count, traction_rhs};
use crate::mesh::{q2_nodes, uniform_modulus, BoxMesh};
use ptap_sparse::BlockCsr;
use std::time::Instant;

/// Free nodes (block rows) of the clamped beam: `20k (2k+1)^2`.
pub fn beam_free_nodes(k: usize) -> u64 {
    beam_free_nodes_in(3, k)
}

/// Free nodes of the clamped beam in `dim` dimensions: `20k (2k+1)^(dim-1)`.
pub fn beam_free_nodes_in(dim: usize, k: usize) -> u64 {
    let k = k as u64;
    20 * k * (2 * k + 1).pow(dim as u32 - 1)
}

/// 3x3 blocks of the clamped beam operator: `(8*(10k) - 4) * (9k - (k-1))^2`
/// (per axis a Q2 line of `n` elements has `8n + 1` couplings; eliminating the
/// first node removes 5 of them).
pub fn beam_block_count(k: usize) -> u64 {
    beam_block_count_in(3, k)
}

/// Blocks of the clamped beam operator in `dim` dimensions:
/// `(80k - 4) (8k + 1)^(dim-1)`.
pub fn beam_block_count_in(dim: usize, k: usize) -> u64 {
    let k = k as u64;
    if k == 0 {
        return 0;
    }
    (80 * k - 4) * (8 * k + 1).pow(dim as u32 - 1)
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
    estimate_bytes_in(3, k)
}

/// [`estimate_bytes`] for the beam in `dim` dimensions (2D: 2x2 blocks, 81
/// pairs per element, 4 elements per node, 3 modes).
pub fn estimate_bytes_in(dim: usize, k: usize) -> u64 {
    let d = dim as u64;
    let npe = q2_nodes(dim) as u64;
    let nnzb = beam_block_count_in(dim, k);
    let rows = beam_free_nodes_in(dim, k);
    let ndof = d * rows;
    let elements = 10 * (k as u64).pow(dim as u32);
    let a = nnzb * (8 * d * d + 4) + (rows + 1) * 8;
    let map = elements * (npe * npe * 4 + 4) + rows * ((1 << d) * 4 + 8);
    let vectors = ndof * 8 * (rigid_mode_count(dim) as u64 + 10);
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
///
/// In 2D ([`BeamProblem::build_in`] with `dim = 2`) it is the plane-strain
/// beam `[0,10] x [-0.5,0.5]` with `10k x k` Q2 quadrilaterals
/// (`20k (2k+1)` free nodes, 2x2 blocks), the same material
/// (`mu = lambda = 0.4` per unit thickness) and clamp, the end-edge traction
/// [`crate::loads::beam_traction_2d`] `(1 - y, 0)` and 3 rigid-body modes.
#[derive(Clone, Debug)]
pub struct BeamProblem {
    pub k: usize,
    /// Spatial dimension = block size (3 or 2).
    pub dim: usize,
    /// Columns of `near_null`: 6 in 3D, 3 in 2D.
    pub modes: usize,
    pub mesh: BoxMesh,
    pub assembler: Assembler,
    /// The operator over free nodes, `dim x dim` blocks.
    pub a: BlockCsr,
    /// Traction load, `dim * n_free`.
    pub rhs: Vec<f64>,
    /// Orthonormal rigid-body modes, row-major `dim n_free x modes`.
    pub near_null: Vec<f64>,
    pub timings: BeamTimings,
}

impl BeamProblem {
    /// Builds the clamped 3D beam with uniform modulus 1.
    pub fn build(k: usize) -> Result<Self, FemError> {
        Self::build_in(3, k)
    }

    /// Builds the clamped beam in `dim` (2 or 3) dimensions with uniform modulus 1.
    pub fn build_in(dim: usize, k: usize) -> Result<Self, FemError> {
        let t0 = Instant::now();
        let mesh = BoxMesh::beam_in(dim, k)?;
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
            dim,
            modes: rigid_mode_count(dim),
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
