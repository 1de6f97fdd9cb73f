//! Errors of the distributed inspector and solver, one sentence each.
use ptap_sparse::SparseError;

#[derive(Debug, thiserror::Error)]
pub enum DistError {
    #[error("bad partition: {why}")]
    Partition { why: String },
    #[error("bad local matrix: {why}")]
    Matrix { why: String },
    #[error("bad halo plan: {why}")]
    Plan { why: String },
    #[error("diagonal block of global row {row} is singular or missing: {why}")]
    SingularDiagonalBlock { row: usize, why: String },
    #[error("CG iteration {iteration}: the operator or the preconditioner is not SPD ({why})")]
    NotSpd { iteration: usize, why: String },
    #[error("CG iteration {iteration}: a reduction is not finite")]
    NotFinite { iteration: usize },
    #[error("bad CG options: {why}")]
    Options { why: String },
    #[error("{ranks} other rank(s) failed; their message names the cause")]
    Elsewhere { ranks: usize },
    #[error(transparent)]
    Sparse(#[from] SparseError),
    #[error(transparent)]
    Amg(#[from] ptap_amg::AmgError),
    #[error(transparent)]
    Runtime(#[from] ptap_runtime::RuntimeError),
}
