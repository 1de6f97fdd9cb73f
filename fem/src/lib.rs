//! The cantilever-beam test problem: 3D linear elasticity with Q2 (27-node)
//! hexahedra on a structured box, assembled into 3x3-block CSR over the free
//! nodes (the `x = 0` clamp is eliminated), plus its traction load and its
//! rigid-body near-null space. `problem.md` in the shared spec is the contract.
//!
//! Its 2D plane-strain variant exercises the `2x2 / 2x3 / 3x3` block shapes:
//! `[0,10] x [-0.5,0.5]` with `10k x k` Q2 (9-node) quadrilaterals, so `k` is
//! again elements across the section (`(20k+1)(2k+1)` nodes, `2 * 20k (2k+1)`
//! unknowns after the clamp); `mu = lambda = 0.4` (`E = 1`, `nu = 0.25`) with
//! `eps_zz = 0`, per unit thickness; clamp at `x = 0`; end-edge traction
//! `(1 - y, 0)` (the 3D load's axial pull plus its rotation field about the
//! face centre, with the in-plane rotation about z in place of the twist about
//! x: force 1, moment 1/12); 3 rigid-body modes `e_x, e_y, (-y, x)`.
//!
//! Setup is split like every ptap phase: an inspector ([`Assembler::new`]:
//! pattern, element-to-block map, element colouring) runs once per mesh; an
//! executor ([`Assembler::assemble`]) refreshes values for a new modulus field
//! `E(x)` without searching or allocating.
//!
//! Node numbering: lexicographic with x slowest, z fastest (see [`mesh`]).

pub mod assembly;
pub mod beam;
#[cfg(feature = "cuda")]
pub mod device;
pub mod element;
pub mod error;
pub mod loads;
pub mod mesh;
pub mod slab;

pub use assembly::{Assembler, Constraint};
pub use beam::{
    beam_block_count, beam_block_count_in, beam_free_nodes, beam_free_nodes_in, estimate_bytes, estimate_bytes_in,
    BeamProblem, BeamTimings,
};
pub use element::{lame, ElementStiffness, POISSON_RATIO};
pub use error::FemError;
pub use loads::{
    rigid_body_modes, rigid_body_modes_raw, rigid_mode_count, traction_rhs, traction_rhs_with, N_RIGID_MODES,
};
pub use mesh::{modulus_from_fn, stiffening_front, uniform_modulus, BoxMesh, ElementCentroids, ElementNodes};
pub use slab::{beam_mesh, BeamSlab};
