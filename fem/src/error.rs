//! Typed errors of the finite-element layer.
use ptap_sparse::SparseError;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum FemError {
    #[error("the beam size parameter k must be at least 1, got 0")]
    ZeroBeamSize,
    #[error("the beam exists in 2 or 3 dimensions, got {dim}")]
    BadDimension { dim: usize },
    #[error("a box mesh needs at least one element in each direction, got {nex} x {ney} x {nez}")]
    EmptyMesh { nex: usize, ney: usize, nez: usize },
    #[error(
        "box corners must be finite with lower < upper in every direction, got lower {lower:?} and upper {upper:?}"
    )]
    BadBox { lower: [f64; 3], upper: [f64; 3] },
    #[error("Poisson ratio {nu} is outside the admissible range (-1, 0.5)")]
    BadPoissonRatio { nu: f64 },
    #[error("the mesh is too large for 32-bit indices: {what}")]
    TooLarge { what: String },
    #[error("modulus field has {got} entries but the mesh has {expected} elements")]
    ModulusLength { got: usize, expected: usize },
    #[error("element {element} has modulus {value}; every element modulus must be finite and positive")]
    BadModulus { element: usize, value: f64 },
    #[error("block rows {start}..{end} are not a range of the beam's {n} free nodes")]
    BadRows { start: usize, end: usize, n: usize },
    #[error("the matrix passed to assemble does not have this assembler's pattern and block shape")]
    MatrixMismatch,
    #[error("building the block pattern failed: {0}")]
    Sparse(#[from] SparseError),
}
