//! Smoothed-aggregation mesh setup, as `shared/spec/amg.md` specifies it.
//!
//! This crate holds the one-time, structure-deciding half of an AMG setup:
//! the strength graph ([`strength`]), aggregation ([`aggregate`]), the
//! tentative prolongator and its Jacobi smoothing ([`prolongator`]), optional
//! prolongator filtering with a kernel-preserving projection ([`filter`]), and the
//! Krylov eigenvalue estimate both smoothing and the Chebyshev smoother need
//! ([`eig`]), and near-null spaces from nodal coordinates ([`nullspace`]). It never forms Galerkin products: those belong to the inspector
//! (`ptap-schedules`) and executor (`ptap-runtime`), which orchestrate the
//! hierarchy level by level.
//!
//! Orderings are explicit and deterministic: nodes are visited in their natural
//! (matrix row) order, or with [`Aggregation::Petsc`] in a fixed pseudo-random
//! order ([`petsc_order`]); aggregates are numbered by increasing root index
//! (in natural order, the order their roots are chosen), and ties are broken
//! by the smaller index.

pub mod aggregate;
pub mod eig;
pub mod filter;
pub mod nullspace;
pub mod prolongator;
pub mod strength;

pub use aggregate::{
    aggregate_mis1, aggregate_mis1_in, aggregate_mis2, aggregate_mis2_in, merge_rank_deficient, petsc_order,
    Aggregates, Aggregation,
};
pub use eig::{estimate_lambda_max, EigWorkspace};
pub use filter::{
    filter_prolongator, filter_prolongator_preserving, filter_rows, smooth_and_filter, FilterStats, Filtered,
    FilteredRows,
};
pub use nullspace::{near_null_from_coordinates, rigid_body_modes, rigid_mode_count, translations};
pub use prolongator::{smooth_prolongator, tentative_prolongator, Tentative};
pub use strength::{strength_graph, StrengthGraph};

use ptap_sparse::BlockCsr;
use thiserror::Error;

/// Errors of the mesh setup, each a sentence a user can act on.
#[derive(Debug, Error)]
pub enum AmgError {
    #[error("the operator on level {level} has {br}x{bc} blocks; AMG needs square blocks")]
    NonSquareBlocks { level: usize, br: usize, bc: usize },
    #[error("the near-null space has {got} rows but the level-{level} operator has {want} scalar rows")]
    NearNullRows { level: usize, got: usize, want: usize },
    #[error("the operator on level {level} has no stored diagonal block in block row {row}; every row needs one")]
    MissingDiagonal { level: usize, row: usize },
    #[error("the operator on level {level} has a non-positive diagonal entry ({value:e}) in scalar row {row}: it is not symmetric positive definite")]
    NonPositiveDiagonal { level: usize, row: usize, value: f64 },
    #[error("the eigenvalue estimate on level {level} broke down ({why}); the operator or its smoother is not SPD")]
    EigenBreakdown { level: usize, why: String },
    #[error("near-null space: {what}")]
    NearNull { what: String },
    #[error(transparent)]
    Sparse(#[from] ptap_sparse::SparseError),
}

/// The default prolongator filter threshold on level 0 ([`AmgOptions::pf`]):
/// the fastest hot step measured on the beam at k = 16 among the thresholds
/// within two CG iterations of the best (issue #12's rule; the README's
/// "Default hierarchy" has the measurement). The paper runs 0.03.
pub const DEFAULT_PF: f64 = 0.07;

/// The paper's prolongator filter threshold (its `tab:hier` and Appendix A).
pub const PAPER_PF: f64 = 0.03;

/// Knobs of the smoothed-aggregation setup (defaults: the paper's Appendix A).
#[derive(Clone, Debug)]
pub struct AmgOptions {
    /// Strength threshold on level 0 (`-pc_gamg_threshold`); raise it for
    /// smaller aggregates and a denser hierarchy.
    pub threshold: f64,
    /// Per-level factor on the threshold (`-pc_gamg_threshold_scale`).
    pub threshold_scale: f64,
    /// Stop coarsening once a level has at most this many scalar rows.
    pub coarse_eq_limit: usize,
    /// Hard cap on the number of levels.
    pub max_levels: usize,
    /// Levels (from the finest) coarsened aggressively (distance-2 MIS).
    pub aggressive_levels: usize,
    /// How aggregates are formed: [`Aggregation::Natural`] (greedy MIS in
    /// natural order, the default) or [`Aggregation::Petsc`] (PETSc GAMG's
    /// square-graph MIS in a fixed pseudo-random order, the paper's hierarchy).
    pub aggregation: Aggregation,
    /// `omega = smoothing_factor / lambda_max(D^-1 A)` for prolongator smoothing.
    pub smoothing_factor: f64,
    /// CG iterations behind every `lambda_max` estimate.
    pub eig_iterations: usize,
    /// Relative tolerance below which an aggregate's near-null block is rank deficient.
    pub rank_tolerance: f64,
    /// Coarsening has stalled when coarse scalar rows exceed this fraction of fine.
    pub stall_ratio: f64,
    /// Prolongator filter threshold on level 0, relative to each row's largest
    /// block (`-pc_gamg_prolongator_filter`; the paper runs 0.03); 0 disables it.
    /// The default, [`DEFAULT_PF`], is the measured fastest hot step on the beam
    /// at k = 16 (the README's "Default hierarchy" says how it was chosen).
    pub pf: f64,
    /// Per-level factor on `pf` (the paper: 0.5).
    pub pf_scale: f64,
}

impl Default for AmgOptions {
    fn default() -> Self {
        Self {
            threshold: 0.05,
            threshold_scale: 0.5,
            coarse_eq_limit: 2000,
            max_levels: 10,
            aggressive_levels: 1,
            aggregation: Aggregation::Natural,
            smoothing_factor: 1.4,
            eig_iterations: 10,
            rank_tolerance: 1e-6,
            stall_ratio: 0.9,
            pf: DEFAULT_PF,
            pf_scale: 0.5,
        }
    }
}

impl AmgOptions {
    /// Strength threshold of level `l`: `theta_l = threshold * threshold_scale^l`.
    pub fn threshold_at(&self, level: usize) -> f64 {
        self.threshold * self.threshold_scale.powi(level as i32)
    }

    /// Filter threshold of level `l`: `pf_l = pf * pf_scale^l`.
    pub fn pf_at(&self, level: usize) -> f64 {
        self.pf * self.pf_scale.powi(level as i32)
    }

    /// `P` of level `level`: [`smooth_prolongator`], then, when `pf > 0`,
    /// [`Self::filter_for_level`]; both in one pass over the rows
    /// ([`filter::smooth_and_filter`], the same bits) when filtering.
    pub fn smooth_and_filter_for_level(
        &self,
        a: &BlockCsr,
        p0: &BlockCsr,
        omega: f64,
        coarse_near_null: &[f64],
        level: usize,
    ) -> Result<BlockCsr, AmgError> {
        if self.pf > 0.0 {
            filter::smooth_and_filter(
                a,
                p0,
                omega,
                level,
                coarse_near_null,
                self.pf_at(level),
                self.rank_tolerance,
            )
        } else {
            smooth_prolongator(a, p0, omega, level)
        }
    }

    /// The smoothed prolongator of level `l` as the hierarchy uses it:
    /// filtered at [`AmgOptions::pf_at`] when `pf > 0`, else `p` itself.
    pub fn filter_for_level(&self, p: BlockCsr, coarse_near_null: &[f64], level: usize) -> BlockCsr {
        if self.pf > 0.0 {
            filter_prolongator(&p, coarse_near_null, self.pf_at(level), self.rank_tolerance).p
        } else {
            p
        }
    }
}
