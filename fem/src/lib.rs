//! The cantilever-beam test problem: 3D linear elasticity with Q2 (27-node)
//! hexahedra on a structured box, assembled into 3x3-block CSR over the free
//! nodes (the `x = 0` clamp is eliminated), plus its traction load and its
//! rigid-body near-null space. `problem.md` in the shared spec is the contract.
//!
//! Setup is split like every ptap phase: an inspector ([`Assembler::new`]:
//! pattern, element-to-block map, element colouring) runs once per mesh; an
//! executor ([`Assembler::assemble`]) refreshes values for a new modulus field
//! `E(x)` without searching or allocating.
//!
//! Node numbering: lexicographic with x slowest, z fastest (see [`mesh`]).

pub mod assembly;
pub mod beam;
pub mod element;
pub mod error;
pub mod loads;
pub mod mesh;

pub use assembly::{Assembler, Constraint};
pub use beam::{beam_block_count, beam_free_nodes, estimate_bytes, BeamProblem, BeamTimings};
pub use element::{lame, ElementStiffness, POISSON_RATIO};
pub use error::FemError;
pub use loads::{rigid_body_modes, rigid_body_modes_raw, traction_rhs, traction_rhs_with, N_RIGID_MODES};
pub use mesh::{modulus_from_fn, uniform_modulus, BoxMesh, ElementCentroids};
