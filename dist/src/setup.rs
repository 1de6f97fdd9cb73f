//! Distributed mesh setup: the smoothed-aggregation hierarchy of
//! `shared/spec/amg.md` built over ranks, then put on [`DistBackend`] so the
//! runtime's V-cycle and CG run on it ([`build_hierarchy`]).
//!
//! Per level, on each rank's rows (ghost data through halo plans of the
//! level's operator, built once):
//!
//! 1. **Strength graph**: [`ptap_amg::strength_graph`]'s rule (block sums of
//!    absolute values, symmetric diagonal scaling, kept above `theta`) on the
//!    owned rows; the ghosts' diagonals come by one exchange.
//! 2. **Aggregation.** With the default (`natural`) aggregation, the serial
//!    greedy MIS in natural order ([`ptap_amg::aggregate_mis2_in`] on
//!    aggressive levels, [`ptap_amg::aggregate_mis1_in`] below): a node with
//!    strong neighbours is a root unless an earlier root (smaller global
//!    index) reaches it within the level's distance along rows of the
//!    strength graph. Partitions are contiguous, so the earlier nodes of
//!    other ranks are on lower ranks: the ranks holding rows run the serial
//!    sweep over their rows in rank order, and after each turn the roots of
//!    that turn mark the nodes they reach on other ranks (one reverse halo
//!    exchange per step of distance; `natural_states`). The roots are the
//!    single-process ones on any rank count, so the aggregates, `P` and the
//!    iteration counts are too (the sweeps are serial in total, as in the
//!    single-process code, where they are a small part of the setup). With
//!    `petsc` aggregation, a parallel MIS (Luby's rounds): a node's priority
//!    is a bijective hash of its key (its global number at the level), an
//!    undecided node becomes a root when its priority is the largest among
//!    undecided nodes within the distance, nodes within that distance of a
//!    root leave the race; each round is four neighbour exchanges (two for
//!    distance 1) and one all-reduce (random-order aggregates, like PETSc's,
//!    independent of the rank count). Either way a neighbour of a root
//!    joins it, and (aggressive levels) a node two steps away joins the
//!    neighbour whose root has the largest priority (natural order: the
//!    smallest index, as the serial code). Nodes without strong neighbours
//!    stay unaggregated.
//!    Rank-deficient aggregates (near-null rows without every mode: fewer
//!    than 3 non-collinear nodes) are merged into the neighbouring aggregate
//!    with the most strong edges into them, across rank boundaries, in
//!    rounds, or dissolved without one (`merge_deficient`: votes are
//!    counts, ties go by the hashed priorities, so the merge too does not
//!    depend on the rank count); the level's report counts both.
//! 3. **Tentative `P`**: an aggregate's coarse node lives on its root's rank.
//!    Members send their near-null rows there (one all-to-all), the root's
//!    rank orders each aggregate's members by key and calls the serial
//!    [`ptap_amg::tentative_prolongator`] on them, and sends each member its
//!    row of `Q` back (one all-to-all). Coarse nodes are numbered rank by
//!    rank (the coarse partition), in the order of their roots.
//! 4. **Smoothing** `P = (I - omega D^-1 A) P_tent`: the ghost rows of
//!    `P_tent` (one block each) come by one exchange; `omega` is
//!    `smoothing_factor / lambda_max(D^-1 A)` from CG-Lanczos
//!    ([`ptap_amg::eig::cg_lanczos`]) over the ranks, started from the same
//!    pseudo-random vector the serial code uses, indexed by key. On one rank
//!    CG-Lanczos (it reads only `A`) runs beside steps 1 to 3, as in the
//!    single process: no message leaves the process there.
//! 5. **Filtering** (`pf > 0`): the serial
//!    [`ptap_amg::filter_prolongator`] on the rank's rows of `P`, with the
//!    rows of `B_c` their columns name fetched from the owners.
//! 6. **Galerkin product** ([`DistGalerkin`]): inspected once; mesh setup
//!    runs it for the next level's values (its aggregation reads them).
//!
//! **Consolidation.** A distributed coarse level with fewer than
//! [`DistOptions::process_eq_limit`] scalar rows per active rank moves onto
//! fewer ranks (the paper's, PETSc's `-pc_gamg_process_eq_limit`): coarse
//! nodes keep their global numbers, the partition changes (the first
//! `max(1, rows / limit)` ranks share them, the others hold no rows of this
//! level or the ones below but take part in every collective), and the coarse
//! near-null rows and keys move to the new owners by one all-to-all; `P`'s
//! columns, the product's owners and the halo plans follow the new
//! partition. When the next level has at most `coarse_eq_limit` scalar rows
//! (or the level cap is reached), it is the coarsest: its Galerkin product
//! gathers it whole on every rank, where it is factorized redundantly (the
//! dense Cholesky of the serial code). At least one level is always
//! coarsened.
//!
//! **Rebalancing.** A distributed coarse level that is not consolidated but
//! whose rows (coarse nodes live on their roots' ranks) are uneven, max over
//! mean above [`REBALANCE_RATIO`] over the ranks holding any, moves to an
//! even split over the same ranks (one all-to-all, like consolidation;
//! global numbers unchanged, so the hierarchy is too). A level's time is its
//! blocks' (its product and SpMV), not its rows': when the coarse operator's
//! blocks per rank stay above [`REBALANCE_BLOCKS_RATIO`] of their mean after
//! that, the level moves to a split by blocks and its product is inspected
//! again (`rebalanced_by_blocks`). The report gives rows and blocks per
//! rank, and, measured after the matrix setup, each level's local product
//! and SpMV time per rank, max and mean ([`LevelBalance`]; the issue's goal
//! is max at most 1.5x the mean).
//!
//! Everything above is deterministic for a rank count, and the aggregates
//! and `P` do not depend on it; different rank counts change only the
//! rounding of sums (coarse values, dots), so iteration counts agree and
//! solutions agree to the solver's tolerance.
use crate::backend::{DistBackend, DistJacobi, DistMat, DistProduct, HaloRows, Restriction};
use crate::cache;
use crate::comm::{Comm, SingleRank};
use crate::local::{DistMatrix, HaloPlan, LocalMatrix};
use crate::partition::Partition;
use crate::product::{DistGalerkin, GlobalRows, NextLevel};
use crate::DistError;
use ptap_amg::aggregate::{carries_all_modes, Aggregates};
use ptap_amg::eig::{cg_lanczos, LanczosError, LanczosOps};
use ptap_amg::Aggregation;
use ptap_amg::{tentative_prolongator, AmgError};
use ptap_runtime::cycle::EIG_SEED;
use ptap_runtime::hierarchy::Transfer;
use ptap_runtime::{Hierarchy, HierarchyOptions, LevelParts};
use ptap_schedules::VariantSchedule;
use ptap_sparse::dense::{gemm_acc, gemm_acc_dyn};
use ptap_sparse::par::{axpy, dot, par_concat, par_offsets, uniform_row_chunks, xpby};
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// A rank's rows of the fine operator and of its near-null space.
pub struct DistProblem {
    /// The rank's rows (square partition `part`).
    pub a: LocalMatrix,
    pub part: Partition,
    /// Row-major `owned scalar rows x modes`.
    pub near_null: Vec<f64>,
    pub modes: usize,
}

/// One level of the distributed hierarchy, as every rank agrees on it.
#[derive(Clone, Debug, Serialize)]
pub struct DistLevelSummary {
    pub level: usize,
    /// Global block rows and block size.
    pub block_rows: usize,
    pub block_size: usize,
    /// Whether the level is whole on every rank (the coarsest).
    pub replicated: bool,
    /// Block rows per rank (all of them on a replicated level).
    pub rows_per_rank: Vec<usize>,
    /// Aggregates, unaggregated nodes and MIS rounds of the transfer below.
    pub aggregates: Option<usize>,
    pub unaggregated_nodes: Option<usize>,
    pub mis_rounds: Option<usize>,
    pub omega: Option<f64>,
    /// Blocks of the transfer's `P` over all ranks (after filtering).
    pub p_blocks: Option<usize>,
    /// Aggregates whose near-null rows do not carry every mode, after the
    /// merge (0 unless an aggregate without aggregated neighbours was left).
    pub rank_deficient_aggregates: Option<usize>,
    /// Rank-deficient aggregates merged into a neighbour, and dissolved for
    /// want of an aggregated neighbour (`merge_deficient`).
    pub merged_aggregates: Option<usize>,
    pub dissolved_aggregates: Option<usize>,
    /// Blocks of the level's operator per rank (work counts: with
    /// `rows_per_rank`, what rebalancing evens out).
    pub blocks_per_rank: Vec<usize>,
    /// The coarse level below was rebalanced over its ranks (`rebalanced`).
    pub coarse_rebalanced: Option<bool>,
    /// The level's mesh setup by step, each the maximum over the ranks
    /// (rank 0's report; a level loaded from a schedule cache reports only
    /// `cache_load_s`: it decides, inspects and plans nothing).
    pub setup_s: Option<DistSetupTimes>,
    /// The level's work per rank after the matrix setup (rank 0's report of
    /// [`build_hierarchy`]; `None` on the replicated coarsest level).
    pub balance: Option<LevelBalance>,
}

/// A distributed level's work on each rank, measured after the matrix setup:
/// the local part of its Galerkin product's refresh (the executor on the
/// rank's rows, without the exchange) and one local SpMV of its operator
/// (the mean of a few). Max and mean are over the ranks holding rows of the
/// level; ranks a consolidation left without rows are counted apart.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LevelBalance {
    pub ranks_with_rows: usize,
    pub product_max_s: f64,
    pub product_mean_s: f64,
    pub spmv_max_s: f64,
    pub spmv_mean_s: f64,
    /// Max over mean of product plus SpMV per rank: the issue's 1.5x goal.
    pub time_max_over_mean: f64,
}

/// SpMVs timed per level for [`LevelBalance`].
const BALANCE_SPMVS: usize = 3;

/// Fills each distributed level's [`LevelBalance`] on rank 0 (collective:
/// one gather).
fn measure_balance<C: Comm + ?Sized>(comm: &C, h: &Hierarchy<DistBackend<'_, C>>, levels: &mut [DistLevelSummary]) {
    let mut mine = Vec::new();
    for lev in h.levels() {
        let (mut rows, mut spmv) = (0.0, 0.0);
        if let DistMat::Rows(r) = &lev.a {
            let m = r.matrix();
            let local = &m.local;
            let (br, bc) = local.block_shape();
            let x = vec![1.0; local.n_local_cols() * bc];
            let mut y = vec![0.0; local.n_rows() * br];
            local.product_rows(&x, &mut y, false);
            let t = Instant::now();
            for _ in 0..BALANCE_SPMVS {
                local.product_rows(&x, &mut y, false);
                local.product_rows(&x, &mut y, true);
            }
            spmv = t.elapsed().as_secs_f64() / BALANCE_SPMVS as f64;
            rows = local.n_rows() as f64;
        }
        let product = lev.transfer.as_ref().map_or(0.0, |t| t.product.0.local_s);
        mine.extend([rows, product, spmv]);
    }
    reduce_balance(comm, &mine, levels);
}

/// Each distributed level's [`LevelBalance`] on rank 0 from every rank's
/// `mine`: per level `[rows, product_s, spmv_s]` (collective: one gather;
/// the GPU ranks measure theirs on the device).
pub(crate) fn reduce_balance<C: Comm + ?Sized>(comm: &C, mine: &[f64], levels: &mut [DistLevelSummary]) {
    let Some(all) = comm.gather(0, mine) else {
        return;
    };
    let width = mine.len();
    for (l, summary) in levels.iter_mut().enumerate().take(width / 3) {
        if summary.replicated {
            continue;
        }
        let per_rank: Vec<&[f64]> = all
            .chunks_exact(width)
            .map(|r| &r[3 * l..3 * l + 3])
            .filter(|v| v[0] > 0.0)
            .collect();
        let k = per_rank.len().max(1) as f64;
        let max = |f: &dyn Fn(&[f64]) -> f64| per_rank.iter().map(|v| f(v)).fold(0.0f64, f64::max);
        let mean = |f: &dyn Fn(&[f64]) -> f64| per_rank.iter().map(|v| f(v)).sum::<f64>() / k;
        let both = |v: &[f64]| v[1] + v[2];
        summary.balance = Some(LevelBalance {
            ranks_with_rows: per_rank.len(),
            product_max_s: max(&|v| v[1]),
            product_mean_s: mean(&|v| v[1]),
            spmv_max_s: max(&|v| v[2]),
            spmv_mean_s: mean(&|v| v[2]),
            time_max_over_mean: max(&both) / mean(&both).max(f64::MIN_POSITIVE),
        });
    }
}

/// Seconds of one level's mesh setup by step (the module docs' numbering),
/// the maximum over the ranks of each.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DistSetupTimes {
    pub strength_s: f64,
    /// The MIS and the joining of neighbours to roots.
    pub aggregation_s: f64,
    /// The rank-deficiency merge.
    pub merge_s: f64,
    pub tentative_s: f64,
    /// CG-Lanczos for `omega`.
    pub omega_s: f64,
    pub smoothing_s: f64,
    /// Consolidation or rebalancing of the coarse rows.
    pub redistribute_s: f64,
    pub filtering_s: f64,
    /// The distributed product's inspector ([`DistGalerkin::build`]).
    pub inspection_s: f64,
    /// The next level's values (its aggregation reads them).
    pub coarse_product_s: f64,
    /// `P`'s and `R`'s local matrices, their halo plans and the next level's.
    pub plans_s: f64,
    /// A level loaded from the schedule cache: its product, `P`, `R` and the
    /// halo plans rebuilt from the entry's plans (checked; no exchange, no
    /// inspection: `inspection_s` and `plans_s` stay 0).
    pub cache_load_s: f64,
    /// Everything of the level (the sum, on the slowest rank).
    pub total_s: f64,
}

impl DistSetupTimes {
    fn fields(&mut self) -> [&mut f64; 13] {
        [
            &mut self.strength_s,
            &mut self.aggregation_s,
            &mut self.merge_s,
            &mut self.tentative_s,
            &mut self.omega_s,
            &mut self.smoothing_s,
            &mut self.redistribute_s,
            &mut self.filtering_s,
            &mut self.inspection_s,
            &mut self.coarse_product_s,
            &mut self.plans_s,
            &mut self.cache_load_s,
            &mut self.total_s,
        ]
    }

    /// Each field's maximum over the ranks, on rank 0 (`None` elsewhere). Collective.
    fn max_over_ranks<C: Comm + ?Sized>(mut self, comm: &C) -> Option<Self> {
        let mine: Vec<f64> = self.fields().iter().map(|v| **v).collect();
        let all = comm.gather(0, &mine)?;
        let k = mine.len();
        for (f, slot) in self.fields().into_iter().enumerate() {
            *slot = all.iter().skip(f).step_by(k).fold(0.0f64, |m, &v| m.max(v));
        }
        Some(self)
    }
}

/// `ptap_amg::eig::pseudo_random_vector`'s entry `index` (SplitMix64), so a
/// rank computes its entries of the global start vector by key.
fn pseudo_random_at(index: u64, seed: u64) -> f64 {
    let s = seed.wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(index.wrapping_add(1)));
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// The start vector's entries of nodes `keys` (`b` scalars each).
fn keyed_random(keys: &[u64], b: usize) -> Vec<f64> {
    keys.iter()
        .flat_map(|&k| (0..b as u64).map(move |c| pseudo_random_at(k * b as u64 + c, EIG_SEED)))
        .collect()
}

/// A bijection of `0..2^53` (odd multiplier and xor-shifts modulo 2^53), as
/// an exact `f64`: distinct keys get distinct priorities.
fn priority(key: u64) -> f64 {
    const MASK: u64 = (1 << 53) - 1;
    let mut x = key & MASK;
    x = (x ^ (x >> 29)) & MASK;
    x = x.wrapping_mul(0x1f_3a5c_ba95_5c6b) & MASK;
    x = (x ^ (x >> 31)) & MASK;
    x = x.wrapping_mul(0x0b_7f0e_2c4b_9a15) & MASK;
    x = (x ^ (x >> 27)) & MASK;
    x as f64
}

/// Strong neighbours of each owned row (local columns, diagonal excluded).
struct Strength {
    ptr: Vec<usize>,
    nbrs: Vec<u32>,
}

impl Strength {
    fn row(&self, i: usize) -> &[u32] {
        &self.nbrs[self.ptr[i]..self.ptr[i + 1]]
    }
}

fn strength<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    node_plan: &mut HaloPlan,
    theta: f64,
    level: usize,
) -> Result<Strength, DistError> {
    let (b, _) = a.block_shape();
    let n = a.n_rows();
    let l = b * b;
    let collapsed = |k: usize| a.values()[k * l..(k + 1) * l].iter().map(|v| v.abs()).sum::<f64>();
    let mut diag = vec![0.0; a.n_local_cols()];
    let missing = diag[..n]
        .par_iter_mut()
        .enumerate()
        .map(
            |(i, d)| match (a.row_ptr()[i]..a.row_ptr()[i + 1]).find(|&k| a.col_idx()[k] as usize == i) {
                Some(k) => {
                    *d = collapsed(k);
                    None
                }
                None => Some(i),
            },
        )
        .find_first(Option::is_some)
        .flatten()
        .map(|i| AmgError::MissingDiagonal {
            level,
            row: a.rows().start + i,
        });
    crate::comm::agree(comm, missing.map_or(Ok(()), |e| Err(e.into())))?;
    node_plan.exchange(comm, &mut diag, &mut |_| {});
    // Row chunks in parallel, concatenated in order (the same graph for any
    // thread count).
    let diag = &diag;
    let parts: Vec<(Vec<usize>, Vec<u32>)> = uniform_row_chunks(n)
        .par_iter()
        .map(|rows| {
            let (mut lens, mut nbrs) = (Vec::with_capacity(rows.len()), Vec::new());
            for i in rows.clone() {
                let before = nbrs.len();
                for k in a.row_ptr()[i]..a.row_ptr()[i + 1] {
                    let j = a.col_idx()[k] as usize;
                    if j == i {
                        continue;
                    }
                    let d = (diag[i] * diag[j]).sqrt();
                    if d > 0.0 && collapsed(k) / d > theta {
                        nbrs.push(j as u32);
                    }
                }
                lens.push(nbrs.len() - before);
            }
            (lens, nbrs)
        })
        .collect();
    let (lens, nbrs): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    Ok(Strength {
        ptr: par_offsets(&lens),
        nbrs: par_concat(&nbrs),
    })
}

/// The maximum of `v` over each owned node and its strong neighbours.
fn neighbourhood_max(s: &Strength, v: &[f64], out: &mut [f64]) {
    for (i, o) in out.iter_mut().enumerate().take(s.ptr.len() - 1) {
        *o = s.row(i).iter().fold(v[i], |m, &j| m.max(v[j as usize]));
    }
}

/// How the ranks aggregate with `a` (the run report's words).
pub fn aggregation_description(a: Aggregation) -> &'static str {
    match a {
        Aggregation::Natural => {
            "the single-process greedy MIS in natural order, the ranks in turn (the same aggregates on any rank count)"
        }
        Aggregation::Petsc => "parallel MIS, priorities hashed from global numbers (independent of the rank count)",
    }
}

/// Node states of the MIS.
const UNDECIDED: u8 = 0;
const ROOT: u8 = 1;
const OUT: u8 = 2;
const ISOLATED: u8 = 3;

/// Luby's rounds (module docs, step 2): the state of each owned node and the
/// number of rounds. Each round is four neighbour exchanges (two for distance
/// 1) and one all-reduce.
fn luby_states<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    node_plan: &mut HaloPlan,
    s: &Strength,
    prio_of: &[f64],
    distance: usize,
) -> (Vec<u8>, usize) {
    let n = a.n_rows();
    let nl = a.n_local_cols();
    let mut state: Vec<u8> = (0..n)
        .map(|i| if s.row(i).is_empty() { ISOLATED } else { UNDECIDED })
        .collect();
    let mut c = vec![-1.0; nl];
    let mut m = vec![-1.0; nl];
    let mut m2 = vec![-1.0; nl];
    let mut rounds = 0;
    loop {
        let mut undecided = [state.iter().filter(|&&st| st == UNDECIDED).count() as f64];
        comm.all_reduce_sum(&mut undecided);
        if undecided[0] == 0.0 {
            break;
        }
        rounds += 1;
        // Candidates: undecided nodes with the largest priority within `distance`.
        for i in 0..n {
            c[i] = if state[i] == UNDECIDED { prio_of[i] } else { -1.0 };
        }
        node_plan.exchange(comm, &mut c, &mut |_| {});
        neighbourhood_max(s, &c, &mut m[..n]);
        let best = if distance == 2 {
            node_plan.exchange(comm, &mut m, &mut |_| {});
            neighbourhood_max(s, &m, &mut m2[..n]);
            &m2
        } else {
            &m
        };
        for i in 0..n {
            if state[i] == UNDECIDED && c[i] >= 0.0 && c[i] == best[i] {
                state[i] = ROOT;
            }
        }
        // Nodes within `distance` of a root leave the race.
        for i in 0..n {
            c[i] = if state[i] == ROOT { 1.0 } else { 0.0 };
        }
        node_plan.exchange(comm, &mut c, &mut |_| {});
        neighbourhood_max(s, &c, &mut m[..n]);
        let near = if distance == 2 {
            node_plan.exchange(comm, &mut m, &mut |_| {});
            neighbourhood_max(s, &m, &mut m2[..n]);
            &m2
        } else {
            &m
        };
        for i in 0..n {
            if state[i] == UNDECIDED && near[i] > 0.0 {
                state[i] = OUT;
            }
        }
    }
    (state, rounds)
}

/// The strong neighbours among this rank's owned nodes of each ghost's row
/// (CSR over the ghosts, owned local indices): what a root needs to take
/// nodes two steps away through a ghost. One all-to-all: every rank sends,
/// for each strong edge from an owned node into a ghost, the pair to the
/// ghost's owner.
fn ghost_rows_into_owned<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    part: &Partition,
    s: &Strength,
) -> Result<(Vec<usize>, Vec<u32>), DistError> {
    let me = comm.rank();
    let n = a.n_rows();
    let own = a.rows();
    let mut send = vec![Vec::new(); comm.size()];
    for i in 0..n {
        for &j in s.row(i) {
            let j = j as usize;
            if j >= n {
                let g = a.global_col(j);
                send[part.owner(g)].extend([(own.start + i) as u64, g as u64]);
            }
        }
    }
    let got = comm.all_to_all_u64(&send);
    let ghosts = a.ghosts();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (q, msg) in got.iter().enumerate() {
        for rec in msg.chunks_exact(2) {
            let (k, l) = (rec[0], rec[1] as usize);
            if !own.contains(&l) {
                return Err(DistError::Plan {
                    why: format!("rank {q} named node {l} a strong neighbour on rank {me}, which does not own it"),
                });
            }
            // A row of another rank that none of this rank's rows read is no path here.
            if let Ok(g) = ghosts.binary_search(&k) {
                pairs.push((g as u32, (l - own.start) as u32));
            }
        }
    }
    pairs.sort_unstable();
    let mut ptr = vec![0usize; ghosts.len() + 1];
    for &(g, _) in &pairs {
        ptr[g as usize + 1] += 1;
    }
    for g in 0..ghosts.len() {
        ptr[g + 1] += ptr[g];
    }
    Ok((ptr, pairs.into_iter().map(|(_, l)| l).collect()))
}

/// The serial greedy MIS in natural order ([`ptap_amg::aggregate_mis2_in`],
/// [`ptap_amg::aggregate_mis1_in`] with the identity order) over the ranks:
/// a node with strong neighbours becomes a root unless an earlier root
/// (smaller global index) reaches it within `distance` steps along rows of
/// the strength graph. Partitions are contiguous, so every earlier node of
/// another rank lives on a lower rank: the ranks holding rows decide in rank
/// order, each running the serial sweep over its own rows, and between two
/// turns the last one's roots mark what they reach on the other ranks (one
/// reverse halo exchange per step of `distance`). The roots, and so the
/// aggregates, are the single-process ones whatever the rank count. The
/// sweeps run one rank after another, but they are the serial code's work
/// split, not repeated. Returns the states and the number of turns.
fn natural_states<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    part: &Partition,
    node_plan: &HaloPlan,
    s: &Strength,
    distance: usize,
) -> Result<(Vec<u8>, usize), DistError> {
    let me = comm.rank();
    let n = a.n_rows();
    let nl = a.n_local_cols();
    let (gptr, gadj) = if distance == 2 {
        ghost_rows_into_owned(comm, a, part, s)?
    } else {
        (vec![0; nl - n + 1], Vec::new())
    };
    let mut taken = vec![false; n];
    let mut root = vec![false; n];
    let mut x1 = vec![0.0; nl];
    let mut x2 = vec![0.0; nl];
    let mut recv = vec![0.0; node_plan.send_len()];
    let active: Vec<usize> = (0..comm.size()).filter(|&r| !part.range(r).is_empty()).collect();
    for (turn, &t) in active.iter().enumerate() {
        if turn > 0 {
            // What the previous rank's roots reach on other ranks.
            let prev = active[turn - 1];
            x1.fill(0.0);
            x2.fill(0.0);
            if me == prev {
                for r in (0..n).filter(|&r| root[r]) {
                    for &j in s.row(r) {
                        let j = j as usize;
                        if j >= n {
                            x1[j] = 1.0;
                        } else if distance == 2 {
                            for &l in s.row(j) {
                                if l as usize >= n {
                                    x2[l as usize] = 1.0;
                                }
                            }
                        }
                    }
                }
            }
            node_plan.reverse_add(comm, &mut x1, &mut recv);
            for j in 0..n {
                if x1[j] > 0.0 {
                    taken[j] = true;
                    if distance == 2 {
                        for &l in s.row(j) {
                            let l = l as usize;
                            if l < n {
                                taken[l] = true;
                            } else {
                                x2[l] = 1.0;
                            }
                        }
                    }
                }
            }
            if distance == 2 {
                node_plan.reverse_add(comm, &mut x2, &mut recv);
                for l in 0..n {
                    if x2[l] > 0.0 {
                        taken[l] = true;
                    }
                }
            }
        }
        if me == t {
            for i in 0..n {
                if taken[i] || s.row(i).is_empty() {
                    continue;
                }
                root[i] = true;
                taken[i] = true;
                for &j in s.row(i) {
                    let j = j as usize;
                    if j < n {
                        taken[j] = true;
                        if distance == 2 {
                            for &l in s.row(j) {
                                if (l as usize) < n {
                                    taken[l as usize] = true;
                                }
                            }
                        }
                    } else if distance == 2 {
                        for &l in &gadj[gptr[j - n]..gptr[j - n + 1]] {
                            taken[l as usize] = true;
                        }
                    }
                }
            }
        }
    }
    let state = (0..n)
        .map(|i| {
            if root[i] {
                ROOT
            } else if s.row(i).is_empty() {
                ISOLATED
            } else {
                OUT
            }
        })
        .collect();
    Ok((state, active.len()))
}

/// Per owned node: the global index (at this level) of its aggregate's root,
/// or `None`, from the MIS `state` (module docs, step 2: a neighbour of a
/// root joins it; on aggressive levels a node two steps away joins the
/// neighbour whose root has the largest priority). Collective.
fn join_roots<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    node_plan: &mut HaloPlan,
    s: &Strength,
    prio_of: &[f64],
    state: &[u8],
    distance: usize,
) -> (Vec<Option<usize>>, Vec<bool>) {
    let n = a.n_rows();
    let nl = a.n_local_cols();
    // A neighbour of a root joins the root with the largest priority (there
    // is one on aggressive levels: roots are at distance 3 or more).
    let mut rp = vec![-1.0; nl];
    for i in 0..n {
        rp[i] = if state[i] == ROOT { prio_of[i] } else { -1.0 };
    }
    node_plan.exchange(comm, &mut rp, &mut |_| {});
    let mut root = vec![-1.0; nl];
    let mut root_prio = vec![-1.0; nl];
    for i in 0..n {
        if state[i] == ROOT {
            root[i] = a.global_col(i) as f64;
            root_prio[i] = prio_of[i];
        } else if state[i] == OUT {
            if let Some(j) = s
                .row(i)
                .iter()
                .map(|&j| j as usize)
                .filter(|&j| rp[j] >= 0.0)
                .max_by(|&x, &y| rp[x].total_cmp(&rp[y]))
            {
                root[i] = a.global_col(j) as f64;
                root_prio[i] = rp[j];
            }
        }
    }
    if distance == 2 {
        // A node two steps away joins the neighbour whose root has the largest priority.
        node_plan.exchange(comm, &mut root, &mut |_| {});
        node_plan.exchange(comm, &mut root_prio, &mut |_| {});
        let snapshot = (root.clone(), root_prio.clone());
        for i in 0..n {
            if state[i] == OUT && snapshot.0[i] < 0.0 {
                if let Some(j) = s
                    .row(i)
                    .iter()
                    .map(|&j| j as usize)
                    .filter(|&j| snapshot.0[j] >= 0.0)
                    .max_by(|&x, &y| snapshot.1[x].total_cmp(&snapshot.1[y]))
                {
                    root[i] = snapshot.0[j];
                    root_prio[i] = snapshot.1[j];
                }
            }
        }
    }
    let of = (0..n).map(|i| (root[i] >= 0.0).then_some(root[i] as usize)).collect();
    let is_root = state.iter().map(|&st| st == ROOT).collect();
    (of, is_root)
}

/// Per owned node: the global index (at this level) of its aggregate's root,
/// or `None`; and the number of MIS rounds (Luby's rounds with hashed
/// priorities, the test's and `petsc` aggregation's path).
#[cfg(test)]
fn aggregate<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    node_plan: &mut HaloPlan,
    s: &Strength,
    prio_of: &[f64],
    distance: usize,
) -> (Vec<Option<usize>>, Vec<bool>, usize) {
    let (state, rounds) = luby_states(comm, a, node_plan, s, prio_of, distance);
    let (of, is_root) = join_roots(comm, a, node_plan, s, prio_of, &state, distance);
    (of, is_root, rounds)
}

/// An aggregate's members at its root's rank: (key, source rank, index in that rank's message).
type Members = Vec<(u64, usize, usize)>;

/// The aggregates' members gathered at their roots' ranks (the rank-deficiency
/// merge and the tentative prolongator both start here).
struct Gathered {
    /// What each rank sent here: `[root, key, near-null row bits...]` per member.
    got: Vec<Vec<u64>>,
    /// Per destination rank, the owned node behind each entry sent there.
    order: Vec<Vec<usize>>,
    /// This rank's roots (local indices, ascending).
    roots: Vec<usize>,
    /// Per root of `roots`, its members sorted by key.
    members: Vec<Members>,
}

/// Every owned node with a root sends the root's rank `[root, key, near-null
/// row]` (one all-to-all); each rank checks that the roots named are its
/// roots and lists each root's members in key order. Collective.
fn gather_members<C: Comm + ?Sized>(
    comm: &C,
    part: &Partition,
    root_of: &[Option<usize>],
    is_root: &[bool],
    keys: &[u64],
    near_null: &[f64],
    bm: usize,
) -> Result<Gathered, DistError> {
    let (me, size) = (comm.rank(), comm.size());
    let own = part.range(me);
    let mut send = vec![Vec::new(); size];
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); size];
    for (i, r) in root_of.iter().enumerate() {
        if let Some(g) = *r {
            let q = part.owner(g);
            let msg = &mut send[q];
            msg.push(g as u64);
            msg.push(keys[i]);
            msg.extend(near_null[i * bm..(i + 1) * bm].iter().map(|v| v.to_bits()));
            order[q].push(i);
        }
    }
    let got = all_to_all_own(comm, send);
    let entry = 2 + bm;
    let roots: Vec<usize> = (0..own.len()).filter(|&i| is_root[i]).collect();
    let mut slot_of_root = vec![u32::MAX; own.len()];
    for (a, &i) in roots.iter().enumerate() {
        slot_of_root[i] = a as u32;
    }
    let mut members: Vec<Members> = vec![Vec::new(); roots.len()];
    for (q, msg) in got.iter().enumerate() {
        if msg.len() % entry != 0 {
            return Err(DistError::Plan {
                why: format!("rank {q} sent a malformed aggregate membership"),
            });
        }
        for (e, rec) in msg.chunks_exact(entry).enumerate() {
            let g = rec[0] as usize;
            let a = g
                .checked_sub(own.start)
                .and_then(|i| slot_of_root.get(i).copied())
                .filter(|&a| a != u32::MAX)
                .ok_or_else(|| DistError::Plan {
                    why: format!("rank {q} named node {g} a root of rank {me}, which it is not"),
                })?;
            members[a as usize].push((rec[1], q, e));
        }
    }
    members.par_iter_mut().for_each(|list| list.sort_unstable());
    Ok(Gathered {
        got,
        order,
        roots,
        members,
    })
}

/// The rank-deficiency merge (`shared/spec/amg.md`, step 2, last bullet):
/// an aggregate whose stacked near-null rows do not carry all `m` modes
/// (fewer than 3 non-collinear nodes for elasticity) joins a neighbouring
/// aggregate, in rounds until none is left. Per round: each root's rank
/// stacks its members' near-null rows in key order and tests the rank (as
/// the tentative prolongator will); the members learn their aggregate's
/// verdict and root priority, the halo carries them; each node of a
/// deficient aggregate sends its root's rank one vote per strong edge into
/// another aggregate; the root's rank picks the aggregate with the most
/// votes (ties: the larger root priority). A deficient aggregate moves there
/// unless that one is itself deficient with a smaller priority (it waits: the
/// lower one moves first, so moves never form a cycle), and dissolves when it
/// has no aggregated neighbour (its nodes unaggregated, as the serial
/// `merge_rank_deficient`). Every rank learns every move, follows chains to
/// their end, and relabels its nodes. Votes are counts and ties go by the
/// hashed priorities, so the result does not depend on the rank count.
/// Returns the numbers of merges and of dissolved aggregates. Collective.
#[allow(clippy::too_many_arguments)]
fn merge_deficient<C: Comm + ?Sized>(
    comm: &C,
    a: &LocalMatrix,
    node_plan: &mut HaloPlan,
    s: &Strength,
    part: &Partition,
    (root_of, is_root): (&mut [Option<usize>], &mut [bool]),
    keys: &[u64],
    near_null: &[f64],
    (b, m, tol): (usize, usize, f64),
) -> Result<(usize, usize), DistError> {
    use std::collections::BTreeMap;
    let (me, size) = (comm.rank(), comm.size());
    let own = part.range(me);
    let n = own.len();
    let bm = b * m;
    let nl = a.n_local_cols();
    let (mut merges, mut dissolved) = (0, 0);
    loop {
        // 1. Verdicts at the roots' ranks: members send [root, key, near-null row].
        let Gathered {
            got,
            order,
            roots,
            members,
        } = gather_members(comm, part, root_of, is_root, keys, near_null, bm)?;
        let entry = 2 + bm;
        let mut verdict: Vec<Vec<(bool, f64)>> = got.iter().map(|msg| vec![(false, 0.0); msg.len() / entry]).collect();
        // The rank tests, one QR per aggregate, in parallel (aggregates with members).
        let lists: Vec<(usize, &Members)> = roots
            .iter()
            .zip(&members)
            .filter(|(_, list)| !list.is_empty())
            .map(|(&i, list)| (own.start + i, list))
            .collect();
        let bad: Vec<bool> = lists
            .par_iter()
            .map(|(_, list)| {
                let mut stack = Vec::with_capacity(list.len() * bm);
                for &(_, q, e) in list.iter() {
                    stack.extend(
                        got[q][e * entry + 2..(e + 1) * entry]
                            .iter()
                            .map(|&v| f64::from_bits(v)),
                    );
                }
                let nodes: Vec<u32> = (0..list.len() as u32).collect();
                !carries_all_modes(&nodes, b, m, &stack, tol)
            })
            .collect();
        let mut deficient_roots = Vec::new();
        for (&(g, list), bad) in lists.iter().zip(bad) {
            let prio = priority(keys[g - own.start]);
            if bad {
                deficient_roots.push(g);
            }
            for &(_, q, e) in list.iter() {
                verdict[q][e] = (bad, prio);
            }
        }
        let mut count = [deficient_roots.len() as f64];
        comm.all_reduce_sum(&mut count);
        if count[0] == 0.0 {
            return Ok((merges, dissolved));
        }
        let reply: Vec<Vec<u64>> = verdict
            .iter()
            .map(|v| v.iter().flat_map(|&(bad, p)| [u64::from(bad), p.to_bits()]).collect())
            .collect();
        let back = all_to_all_own(comm, reply);
        // 2. Each node's root, verdict and root priority, ghosts included.
        let (mut root, mut bad, mut rprio) = (vec![-1.0; nl], vec![0.0; nl], vec![-1.0; nl]);
        for (i, r) in root_of.iter().enumerate() {
            if let Some(g) = *r {
                root[i] = g as f64;
            }
        }
        for (q, msg) in back.iter().enumerate() {
            if msg.len() != 2 * order[q].len() {
                return Err(DistError::Plan {
                    why: format!(
                        "rank {q} answered {} verdicts for {} members",
                        msg.len() / 2,
                        order[q].len()
                    ),
                });
            }
            for (rec, &i) in msg.chunks_exact(2).zip(&order[q]) {
                bad[i] = rec[0] as f64;
                rprio[i] = f64::from_bits(rec[1]);
            }
        }
        node_plan.exchange(comm, &mut root, &mut |_| {});
        node_plan.exchange(comm, &mut bad, &mut |_| {});
        node_plan.exchange(comm, &mut rprio, &mut |_| {});
        // 3. Votes of deficient aggregates' nodes to their root's rank:
        //    [root, the neighbour's root, its verdict, its priority].
        let mut votes = vec![Vec::new(); size];
        for i in 0..n {
            if root[i] < 0.0 || bad[i] == 0.0 {
                continue;
            }
            for &j in s.row(i) {
                let j = j as usize;
                if root[j] >= 0.0 && root[j] != root[i] {
                    votes[part.owner(root[i] as usize)].extend([
                        root[i] as u64,
                        root[j] as u64,
                        bad[j] as u64,
                        rprio[j].to_bits(),
                    ]);
                }
            }
        }
        let got = all_to_all_own(comm, votes);
        // Per deficient root: target -> (votes, deficient, priority).
        let mut tally: BTreeMap<usize, BTreeMap<u64, (u64, bool, f64)>> =
            deficient_roots.iter().map(|&g| (g, BTreeMap::new())).collect();
        for msg in &got {
            for rec in msg.chunks_exact(4) {
                let t = tally.get_mut(&(rec[0] as usize)).ok_or_else(|| DistError::Plan {
                    why: format!("a vote for node {}, not a deficient root of rank {me}", rec[0]),
                })?;
                t.entry(rec[1]).or_insert((0, rec[2] != 0, f64::from_bits(rec[3]))).0 += 1;
            }
        }
        // 4. Moves [root, target or u64::MAX: dissolve], every rank's to every rank.
        let mut moves = Vec::new();
        for (&g, targets) in &tally {
            let mine = priority(keys[g - own.start]);
            let best = targets
                .iter()
                .max_by(|x, y| x.1 .0.cmp(&y.1 .0).then(x.1 .2.total_cmp(&y.1 .2)));
            match best {
                None => moves.extend([g as u64, u64::MAX]),
                Some((&t, &(_, t_bad, t_prio))) if !(t_bad && t_prio < mine) => moves.extend([g as u64, t]),
                Some(_) => {}
            }
        }
        let all = comm.all_to_all_u64(&vec![moves; size]);
        let map: BTreeMap<u64, u64> = all
            .iter()
            .flat_map(|m| m.chunks_exact(2).map(|r| (r[0], r[1])))
            .collect();
        if map.is_empty() {
            // Cannot happen (the deficient aggregate of the smallest priority
            // always moves or dissolves); refuse rather than loop.
            return Err(DistError::Plan {
                why: "the rank-deficiency merge made no progress".into(),
            });
        }
        // Moves go to larger priorities or to aggregates that stay: chains end.
        let last = |mut t: u64| {
            while let Some(&next) = map.get(&t) {
                t = next;
                if t == u64::MAX {
                    break;
                }
            }
            t
        };
        merges += map.values().filter(|&&t| t != u64::MAX).count();
        dissolved += map.values().filter(|&&t| t == u64::MAX).count();
        for (i, r) in root_of.iter_mut().enumerate() {
            if let Some(g) = *r {
                if map.contains_key(&(g as u64)) {
                    let t = last(g as u64);
                    *r = (t != u64::MAX).then_some(t as usize);
                    if own.start + i == g {
                        is_root[i] = false;
                    }
                }
            }
        }
    }
}

/// A node without a row of `P_tent` (unaggregated).
const NO_ROW: u32 = u32::MAX;

/// What the tentative prolongator gives a rank: its rows of `P_tent` (one
/// block each, or none), the coarse partition, and its coarse nodes' near-null
/// rows and keys.
struct TentativeRows {
    /// Per owned node: its global coarse column ([`NO_ROW`]: unaggregated)
    /// and its `b x m` block (`b * m` values a node, zero without a column).
    cols: Vec<u32>,
    blocks: Vec<f64>,
    coarse: Partition,
    coarse_near_null: Vec<f64>,
    coarse_keys: Vec<u64>,
    /// This rank's aggregates whose near-null rows do not carry every mode.
    rank_deficient: usize,
}

#[allow(clippy::too_many_arguments)]
fn tentative<C: Comm + ?Sized>(
    comm: &C,
    part: &Partition,
    root_of: &[Option<usize>],
    is_root: &[bool],
    keys: &[u64],
    near_null: &[f64],
    b: usize,
    m: usize,
    tol: f64,
) -> Result<TentativeRows, DistError> {
    let (me, size) = (comm.rank(), comm.size());
    let own = part.range(me);
    let bm = b * m;
    // Coarse partition: aggregates (roots) per rank, in root order.
    let roots: Vec<usize> = (0..own.len()).filter(|&i| is_root[i]).collect();
    let mut counts = vec![0.0; size];
    counts[me] = roots.len() as f64;
    comm.all_reduce_sum(&mut counts);
    let mut starts = vec![0usize];
    for c in &counts {
        starts.push(starts.last().unwrap() + *c as usize);
    }
    let coarse = Partition::new(starts)?;
    let Gathered {
        got, order, members, ..
    } = gather_members(comm, part, root_of, is_root, keys, near_null, bm)?;
    let entry = 2 + bm;
    // The serial QR on the gathered aggregates, members in key order (the
    // near-null rows stacked in parallel).
    let total: usize = members.iter().map(Vec::len).sum();
    let (mut of_node, mut from) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut place: Vec<Vec<usize>> = got.iter().map(|msg| vec![0; msg.len() / entry]).collect();
    for (a, list) in members.iter().enumerate() {
        for &(_, q, e) in list.iter() {
            place[q][e] = of_node.len();
            of_node.push(a as u32);
            from.push((q, e));
        }
    }
    let mut stacked = vec![0.0; total * bm];
    stacked
        .par_chunks_mut(bm.max(1))
        .zip(from.par_iter())
        .for_each(|(out, &(q, e))| {
            for (o, &v) in out.iter_mut().zip(&got[q][e * entry + 2..(e + 1) * entry]) {
                *o = f64::from_bits(v);
            }
        });
    let aggs = Aggregates {
        of_node,
        count: roots.len(),
    };
    let rank_deficient = aggs
        .members()
        .par_iter()
        .filter(|nodes| !carries_all_modes(nodes, b, m, &stacked, tol))
        .count();
    let tent = tentative_prolongator(&aggs, &stacked, b, m, tol);
    let c0 = coarse.range(me).start as u64;
    let reply: Vec<Vec<u64>> = place
        .iter()
        .map(|vs| {
            let mut msg = vec![0u64; vs.len() * (1 + bm)];
            msg.par_chunks_mut(1 + bm).zip(vs.par_iter()).for_each(|(rec, &v)| {
                rec[0] = c0 + u64::from(aggs.of_node[v]);
                for (o, x) in rec[1..].iter_mut().zip(tent.p0.block(v)) {
                    *o = x.to_bits();
                }
            });
            msg
        })
        .collect();
    let back = all_to_all_own(comm, reply);
    let mut cols = vec![NO_ROW; own.len()];
    let mut blocks = vec![0.0; own.len() * bm];
    for (q, msg) in back.iter().enumerate() {
        if msg.len() != order[q].len() * (1 + bm) {
            return Err(DistError::Plan {
                why: format!("rank {q} answered {} scalars for {} members", msg.len(), order[q].len()),
            });
        }
        for (rec, &i) in msg.chunks_exact(1 + bm).zip(&order[q]) {
            cols[i] = rec[0] as u32;
            for (o, &v) in blocks[i * bm..(i + 1) * bm].iter_mut().zip(&rec[1..]) {
                *o = f64::from_bits(v);
            }
        }
    }
    // A coarse node's key is its global number: coarse nodes are numbered in
    // the order of their roots' global numbers, which no rank count changes,
    // and the single-process code indexes its start vectors the same way.
    let coarse_keys = (c0..c0 + roots.len() as u64).collect();
    Ok(TentativeRows {
        cols,
        blocks,
        coarse,
        coarse_near_null: tent.coarse_near_null,
        coarse_keys,
        rank_deficient,
    })
}

/// [`Comm::all_to_all_u64`] with this rank's own list kept out of the
/// exchange (moved into the result, not copied three times on the way):
/// most of the setup's messages are a rank's own nodes' (all of them on one
/// rank). Collective.
fn all_to_all_own<C: Comm + ?Sized>(comm: &C, mut send: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    let me = comm.rank();
    let own = std::mem::take(&mut send[me]);
    let mut got = comm.all_to_all_u64(&send);
    got[me] = own;
    got
}

/// What CG-Lanczos needs of the ranks' operator beyond vector arithmetic:
/// the product with `A` and the sum of a dot product over the ranks.
trait RankOperator {
    fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<(), DistError>;
    fn sum(&self, local: f64) -> f64;
}

/// `A` over the ranks: the halo SpMV, dots all-reduced.
struct HaloOperator<'a, C: Comm + ?Sized> {
    comm: &'a C,
    a: &'a HaloRows,
}

impl<C: Comm + ?Sized> RankOperator for HaloOperator<'_, C> {
    fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<(), DistError> {
        self.a.spmv(self.comm, x, y)
    }
    fn sum(&self, local: f64) -> f64 {
        let mut v = [local];
        self.comm.all_reduce_sum(&mut v);
        v[0]
    }
}

/// `A` on one rank: [`HaloOperator`] without a communicator (no ghost
/// columns, sums are the identity; the same operations in the same order, so
/// the same bits), usable from any thread.
struct OneRankOperator<'a> {
    a: &'a LocalMatrix,
}

impl RankOperator for OneRankOperator<'_> {
    fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<(), DistError> {
        // DistMatrix::spmv's two passes (interior rows, then boundary rows: none here).
        self.a.product_rows(x, y, false);
        self.a.product_rows(x, y, true);
        Ok(())
    }
    fn sum(&self, local: f64) -> f64 {
        local
    }
}

/// The ranks' `A` and its scalar diagonal, as CG-Lanczos sees them.
struct DistLanczos<'a, O> {
    op: O,
    d: &'a [f64],
}

impl<O: RankOperator> LanczosOps for DistLanczos<'_, O> {
    type Vector = Vec<f64>;
    type Error = DistError;
    fn apply(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        self.op.apply(x, y)
    }
    fn precondition(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        for ((yi, xi), di) in y.iter_mut().zip(x).zip(self.d) {
            *yi = xi / di;
        }
        Ok(())
    }
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64, DistError> {
        Ok(self.op.sum(dot(x, y)))
    }
    fn axpy(&self, alpha: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        axpy(alpha, x, y);
        Ok(())
    }
    fn xpby(&self, x: &Vec<f64>, beta: f64, y: &mut Vec<f64>) -> Result<(), DistError> {
        xpby(x, beta, y);
        Ok(())
    }
    fn copy(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        y.copy_from_slice(x);
        Ok(())
    }
}

/// `local`'s scalar diagonal, checked positive (on every rank together).
/// Collective.
fn scalar_diagonal<C: Comm + ?Sized>(comm: &C, local: &LocalMatrix, level: usize) -> Result<Vec<f64>, DistError> {
    let (b, _) = local.block_shape();
    let n = local.n_rows();
    let mut d = vec![0.0; n * b];
    let check = (|| {
        for i in 0..n {
            let blk = local.diagonal_block(i).ok_or(AmgError::MissingDiagonal {
                level,
                row: local.rows().start + i,
            })?;
            for r in 0..b {
                let v = blk[r * b + r];
                if !(v > 0.0) {
                    return Err(AmgError::NonPositiveDiagonal {
                        level,
                        row: (local.rows().start + i) * b + r,
                        value: v,
                    }
                    .into());
                }
                d[i * b + r] = v;
            }
        }
        Ok(())
    })();
    crate::comm::agree(comm, check)?;
    Ok(d)
}

/// `omega = smoothing_factor / lambda_max(D^-1 A)` by CG-Lanczos through
/// `ops` on `rows` scalar rows, started from the keyed pseudo-random vector.
fn omega_by_lanczos<O: LanczosOps<Vector = Vec<f64>, Error = DistError>>(
    ops: &O,
    keys: &[u64],
    b: usize,
    opts: &ptap_amg::AmgOptions,
    level: usize,
) -> Result<f64, DistError> {
    let start = keyed_random(keys, b);
    let n = start.len();
    let (mut r, mut z, mut p, mut ap) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let lmax = cg_lanczos(ops, &start, opts.eig_iterations, &mut r, &mut z, &mut p, &mut ap).map_err(|e| match e {
        LanczosError::Ops(e) => e,
        LanczosError::Breakdown(why) => AmgError::EigenBreakdown { level, why }.into(),
    })?;
    Ok(opts.smoothing_factor / lmax)
}

/// The owned rows of the smoothed prolongator `P = (I - omega D^-1 A) P_tent`
/// (`d` the scalar diagonal of `A`). Collective.
#[allow(clippy::too_many_arguments)]
fn smoothed<C: Comm + ?Sized>(
    comm: &C,
    a: &HaloRows,
    part: &Partition,
    (tent_cols, tent_blocks): (&[u32], &[f64]),
    m: usize,
    (omega, d): (f64, &[f64]),
) -> Result<GlobalRows, DistError> {
    let am = a.matrix();
    let local = &am.local;
    let (b, _) = local.block_shape();
    let n = local.n_rows();
    let bm = b * m;
    let l = b * b;
    // Ghost rows of P_tent: [coarse column or -1, block].
    let mut plan = HaloPlan::build_with_width(local, part, 1 + bm, comm)?;
    let w = 1 + bm;
    let mut t = vec![0.0; local.n_local_cols() * w];
    t[..n * w].par_chunks_mut(w).enumerate().for_each(|(i, rec)| {
        if tent_cols[i] == NO_ROW {
            rec[0] = -1.0;
        } else {
            rec[0] = f64::from(tent_cols[i]);
            rec[1..].copy_from_slice(&tent_blocks[i * bm..(i + 1) * bm]);
        }
    });
    plan.exchange(comm, &mut t, &mut |_| {});
    // Row chunks in parallel, each row's sums in the same order whatever the
    // thread count (contributions sorted stably by coarse column).
    let t = &t;
    let chunks = uniform_row_chunks(n);
    let parts: Vec<(Vec<usize>, Vec<u32>, Vec<f64>)> = chunks
        .par_iter()
        .map(|rows| {
            let (mut lens, mut cols, mut vals) = (Vec::with_capacity(rows.len()), Vec::new(), Vec::new());
            let mut contrib: Vec<(u32, usize)> = Vec::new();
            let mut blocks: Vec<f64> = Vec::new();
            for i in rows.clone() {
                contrib.clear();
                blocks.clear();
                for k in local.row_ptr()[i]..local.row_ptr()[i + 1] {
                    let j = local.col_idx()[k] as usize;
                    let rec = &t[j * w..(j + 1) * w];
                    if rec[0] < 0.0 {
                        continue;
                    }
                    let at = blocks.len();
                    blocks.resize(at + bm, 0.0);
                    let (ak, out) = (&local.values()[k * l..(k + 1) * l], &mut blocks[at..]);
                    // Unrolled for the hierarchies' shapes (the same operations in the same order).
                    match (b, m) {
                        (3, 6) => gemm_acc::<3, 3, 6>(ak, &rec[1..], out),
                        (6, 6) => gemm_acc::<6, 6, 6>(ak, &rec[1..], out),
                        _ => gemm_acc_dyn(b, b, m, ak, &rec[1..], out),
                    }
                    contrib.push((rec[0] as u32, at));
                }
                contrib.sort_by_key(|&(c, _)| c);
                let own = (tent_cols[i] != NO_ROW).then_some(tent_cols[i]);
                let before = cols.len();
                let mut s = 0;
                while s < contrib.len() {
                    let c = contrib[s].0;
                    let at = vals.len();
                    vals.resize(at + bm, 0.0);
                    let sum = &mut vals[at..];
                    while s < contrib.len() && contrib[s].0 == c {
                        let from = contrib[s].1;
                        for (o, v) in sum.iter_mut().zip(&blocks[from..from + bm]) {
                            *o += v;
                        }
                        s += 1;
                    }
                    for rr in 0..b {
                        let f = -omega / d[i * b + rr];
                        for v in &mut sum[rr * m..(rr + 1) * m] {
                            *v *= f;
                        }
                    }
                    if own == Some(c) {
                        let p0 = &tent_blocks[i * bm..(i + 1) * bm];
                        for (o, v) in sum.iter_mut().zip(p0) {
                            *o += v;
                        }
                    }
                    cols.push(c);
                }
                lens.push(cols.len() - before);
            }
            (lens, cols, vals)
        })
        .collect();
    let (lens, (cols, vals)): (Vec<_>, (Vec<_>, Vec<_>)) = parts.into_iter().map(|(l, c, v)| (l, (c, v))).unzip();
    Ok(GlobalRows {
        row_ptr: par_offsets(&lens),
        cols: par_concat(&cols),
        values: par_concat(&vals),
    })
}

/// `P`'s rows filtered at `threshold` ([`ptap_amg::filter_prolongator`],
/// the serial filter, run on this rank's rows): blocks below `threshold`
/// times their row's largest dropped, the row's action on the coarse
/// near-null space restored. The rows of `B_c` of the coarse columns this
/// rank's rows touch come from their owners (two all-to-alls). Collective.
fn filtered<C: Comm + ?Sized>(
    comm: &C,
    p: GlobalRows,
    coarse: &Partition,
    coarse_near_null: &[f64],
    (b, m): (usize, usize),
    threshold: f64,
    tol: f64,
) -> Result<GlobalRows, DistError> {
    let (me, size) = (comm.rank(), comm.size());
    let own = coarse.range(me);
    let mm = m * m;
    let mut cols: Vec<u32> = p.cols.clone();
    cols.par_sort_unstable();
    cols.dedup();
    // Ask the owners for the rows of B_c this rank lacks.
    let mut ask = vec![Vec::new(); size];
    for &c in &cols {
        let c = c as usize;
        if !own.contains(&c) {
            ask[coarse.owner(c)].push(c as u64);
        }
    }
    let asked = comm.all_to_all_u64(&ask);
    let mut answer = vec![Vec::new(); size];
    for (q, list) in asked.iter().enumerate() {
        for &g in list {
            let i = (g as usize)
                .checked_sub(own.start)
                .filter(|&i| i < own.len())
                .ok_or_else(|| DistError::Plan {
                    why: format!("rank {q} asked rank {me} for coarse node {g}, which it does not own"),
                })?;
            answer[q].extend(coarse_near_null[i * mm..(i + 1) * mm].iter().map(|v| v.to_bits()));
        }
    }
    let got = comm.all_to_all_u64(&answer);
    let mut at = vec![0usize; size];
    let mut b_c = Vec::with_capacity(cols.len() * mm);
    for &c in &cols {
        let c = c as usize;
        if own.contains(&c) {
            b_c.extend_from_slice(&coarse_near_null[(c - own.start) * mm..(c - own.start + 1) * mm]);
        } else {
            let q = coarse.owner(c);
            let rec = got[q]
                .get(at[q] * mm..(at[q] + 1) * mm)
                .ok_or_else(|| DistError::Plan {
                    why: format!("rank {q} answered too few coarse near-null rows"),
                })?;
            b_c.extend(rec.iter().map(|&v| f64::from_bits(v)));
            at[q] += 1;
        }
    }
    // Columns as indices into `cols` (one subtraction when they are a range,
    // as on one rank).
    let contiguous = cols.last().is_none_or(|&c| (c - cols[0]) as usize + 1 == cols.len());
    let local_cols: Vec<u32> = p
        .cols
        .par_iter()
        .map(|c| {
            if contiguous {
                c - cols[0]
            } else {
                cols.binary_search(c).expect("every column is listed") as u32
            }
        })
        .collect();
    // The serial filter's kernel on the rows as they are (no matrix built
    // around them, nothing copied out).
    let f = ptap_amg::filter_rows(
        (&p.row_ptr, &local_cols, &p.values),
        cols.len(),
        (b, m),
        &b_c,
        threshold,
        m,
        tol,
    );
    let mut out = GlobalRows {
        row_ptr: f.row_ptr,
        cols: f.cols,
        values: f.values,
    };
    out.cols.par_iter_mut().for_each(|c| *c = cols[*c as usize]);
    Ok(out)
}

/// The rows of `local` as a block pattern with sorted local columns
/// (what the runtime reads of a level: its row count and blocks).
fn local_pattern(local: &LocalMatrix) -> Result<BlockPattern, DistError> {
    let ptr = local.row_ptr();
    let mut cols = local.col_idx().to_vec();
    let mut rows: Vec<&mut [u32]> = Vec::with_capacity(local.n_rows());
    let mut rest = &mut cols[..];
    for i in 0..local.n_rows() {
        let (head, tail) = rest.split_at_mut(ptr[i + 1] - ptr[i]);
        rows.push(head);
        rest = tail;
    }
    rows.into_par_iter().for_each(|r| r.sort_unstable());
    Ok(BlockPattern::new(
        local.n_rows(),
        local.n_local_cols(),
        ptr.to_vec(),
        cols,
    )?)
}

/// `local`'s blocks as a [`BlockCsr`] over its local columns, sorted.
fn sorted_local(local: &LocalMatrix) -> Result<BlockCsr, DistError> {
    let (br, bc) = local.block_shape();
    let l = br * bc;
    let pattern = local_pattern(local)?;
    // Each row's blocks in column order (columns are unique in a row), rows in parallel.
    let ptr = local.row_ptr();
    let mut order: Vec<u32> = (0..local.nnzb() as u32).collect();
    let mut rows: Vec<&mut [u32]> = Vec::with_capacity(local.n_rows());
    let mut rest = &mut order[..];
    for i in 0..local.n_rows() {
        let (head, tail) = rest.split_at_mut(ptr[i + 1] - ptr[i]);
        rows.push(head);
        rest = tail;
    }
    rows.into_par_iter()
        .for_each(|r| r.sort_unstable_by_key(|&k| local.col_idx()[k as usize]));
    let mut values = vec![0.0; local.nnzb() * l];
    values.par_chunks_mut(l).zip(order.par_iter()).for_each(|(v, &k)| {
        let k = k as usize;
        v.copy_from_slice(&local.values()[k * l..(k + 1) * l]);
    });
    Ok(BlockCsr::new(Arc::new(pattern), br, bc, values)?)
}

/// Options of the distributed setup beyond [`HierarchyOptions`].
#[derive(Clone, Copy, Debug)]
pub struct DistOptions {
    /// Consolidation (PETSc's `-pc_gamg_process_eq_limit`): a distributed
    /// coarse level with fewer than this many scalar rows per active rank
    /// moves onto `max(1, rows / limit)` ranks (the first ones; the others
    /// hold no rows of it and of the levels below). 0 never consolidates.
    pub process_eq_limit: usize,
}

impl Default for DistOptions {
    /// PETSc GAMG's default, 50 equations per process.
    fn default() -> Self {
        Self { process_eq_limit: 50 }
    }
}

/// The partition a coarse level of `rows` block rows of `b` scalars moves
/// to, `None` when it stays (module docs, consolidation).
fn consolidated(coarse: &Partition, b: usize, limit: usize) -> Option<Partition> {
    if limit == 0 {
        return None;
    }
    let n = coarse.nrows();
    let active = (0..coarse.ranks()).filter(|&r| !coarse.range(r).is_empty()).count();
    let want = ((n * b) / limit).max(1);
    if want >= active {
        return None;
    }
    let q = Partition::uniform(n, want).ok()?;
    let mut starts = q.starts().to_vec();
    starts.resize(coarse.ranks() + 1, n);
    Partition::new(starts).ok()
}

/// Work imbalance (owned rows, max over mean of the ranks holding any) above
/// which a distributed coarse level is rebalanced.
pub const REBALANCE_RATIO: f64 = 1.1;

/// The partition a distributed coarse level moves to when its rows (coarse
/// nodes live on their roots' ranks) are spread unevenly: the same ranks
/// hold rows, split evenly in global order; `None` when max over mean is at
/// most [`REBALANCE_RATIO`]. Global coarse numbers do not change, so `P`,
/// the hierarchy and the solve do not; only who owns which rows.
fn rebalanced(coarse: &Partition) -> Option<Partition> {
    let n = coarse.nrows();
    let sizes: Vec<usize> = (0..coarse.ranks()).map(|r| coarse.range(r).len()).collect();
    let active = sizes.iter().filter(|&&c| c > 0).count();
    let max = *sizes.iter().max()?;
    if active == 0 || (max * active) as f64 <= REBALANCE_RATIO * n as f64 {
        return None;
    }
    let even = Partition::uniform(n, active).ok()?;
    let mut starts = vec![0];
    let mut next = 0;
    for &c in &sizes {
        if c > 0 {
            next += 1;
        }
        starts.push(even.starts()[next.min(active)]);
    }
    Partition::new(starts).ok()
}

/// Work imbalance (blocks of the coarse operator, max over mean of the ranks
/// holding rows) above which a distributed coarse level whose rows are even
/// moves to a split by blocks: a level's product and SpMV times follow its
/// blocks, and the issue's goal is 1.5x of the mean time.
pub const REBALANCE_BLOCKS_RATIO: f64 = 1.25;

/// The partition of `coarse`'s rows (the same ranks holding rows, contiguous)
/// that evens out the blocks of `local` (this rank's rows of the coarse
/// operator), or `None` when max over mean of the blocks is at most
/// [`REBALANCE_BLOCKS_RATIO`]. Collective: one all-to-all of every row's
/// block count (a coarse level's rows: small).
fn rebalanced_by_blocks<C: Comm + ?Sized>(comm: &C, coarse: &Partition, local: &LocalMatrix) -> Option<Partition> {
    let counts: Vec<u64> = local.row_ptr().windows(2).map(|w| (w[1] - w[0]) as u64).collect();
    let all: Vec<u64> = comm.all_to_all_u64(&vec![counts; comm.size()]).concat();
    split_by_blocks(coarse, &all)
}

/// `rebalanced_by_blocks`'s split from every row's block count `blocks`
/// (global order): the ranks holding rows of `coarse` keep holding them, each
/// range ending where the running count is nearest its share.
fn split_by_blocks(coarse: &Partition, blocks: &[u64]) -> Option<Partition> {
    let size = coarse.ranks();
    let n = coarse.nrows();
    if blocks.len() != n {
        return None;
    }
    let active: Vec<usize> = (0..size).filter(|&r| !coarse.range(r).is_empty()).collect();
    let per_rank: Vec<u64> = active.iter().map(|&r| blocks[coarse.range(r)].iter().sum()).collect();
    let total: u64 = per_rank.iter().sum();
    let max = per_rank.iter().copied().max()?;
    if active.len() < 2 || (max as f64) * active.len() as f64 <= REBALANCE_BLOCKS_RATIO * total as f64 {
        return None;
    }
    // Cut the rows where the running block count passes each rank's share.
    let (mut acc, mut row) = (0u64, 0usize);
    let mut cuts = Vec::with_capacity(active.len());
    for next in 1..active.len() {
        let target = total * next as u64 / active.len() as u64;
        while row < n && acc + blocks[row] / 2 < target {
            acc += blocks[row];
            row += 1;
        }
        cuts.push(row);
    }
    cuts.push(n);
    // Active rank `a` ends at cuts[a]; the others keep empty ranges where they are.
    let mut starts = vec![0usize; size + 1];
    let (mut end, mut a) = (0, 0);
    for r in 0..size {
        if !coarse.range(r).is_empty() {
            end = cuts[a].max(end);
            a += 1;
        }
        starts[r + 1] = end;
    }
    starts[size] = n;
    Partition::new(starts).ok().filter(|p| p != coarse)
}

/// Moves rows (`w` scalars each, with their keys) from partition `from` to
/// `to` (one all-to-all). Collective.
fn redistribute<C: Comm + ?Sized>(
    comm: &C,
    from: &Partition,
    to: &Partition,
    rows: &[f64],
    keys: &[u64],
    w: usize,
) -> Result<(Vec<f64>, Vec<u64>), DistError> {
    let me = comm.rank();
    let mut send = vec![Vec::new(); comm.size()];
    for (i, g) in from.range(me).enumerate() {
        let msg = &mut send[to.owner(g)];
        msg.push(keys[i]);
        msg.extend(rows[i * w..(i + 1) * w].iter().map(|v| v.to_bits()));
    }
    let got = all_to_all_own(comm, send);
    let (mut out, mut out_keys) = (Vec::new(), Vec::new());
    // Contiguous partitions: rank order is global order.
    for msg in &got {
        for rec in msg.chunks_exact(1 + w) {
            out_keys.push(rec[0]);
            out.extend(rec[1..].iter().map(|&v| f64::from_bits(v)));
        }
    }
    if out_keys.len() != to.range(me).len() {
        return Err(DistError::Plan {
            why: format!(
                "{} coarse rows arrived for the {} this rank owns after consolidation",
                out_keys.len(),
                to.range(me).len()
            ),
        });
    }
    Ok((out, out_keys))
}

/// What steps 1 to 3 give a level: the tentative prolongator's rows and the
/// counts the report keeps, with their times.
struct Aggregated {
    /// This rank's nodes left out of every aggregate.
    unaggregated: usize,
    rounds: usize,
    /// Rank-deficient aggregates merged and dissolved.
    merged: (usize, usize),
    tent: TentativeRows,
    /// Strength, aggregation, merge and tentative times.
    times: DistSetupTimes,
}

/// Steps 1 to 3 of the module docs on `local`'s rows (partition `part`):
/// the strength graph, the aggregates, the rank-deficiency merge and the
/// tentative prolongator. Collective.
#[allow(clippy::too_many_arguments)]
fn aggregate_level<C: Comm + ?Sized>(
    comm: &C,
    local: &LocalMatrix,
    part: &Partition,
    keys: &[u64],
    near_null: &[f64],
    (b, modes): (usize, usize),
    opts: &ptap_amg::AmgOptions,
    l: usize,
) -> Result<Aggregated, DistError> {
    let mut times = DistSetupTimes::default();
    let mut step = Instant::now();
    let mut lap = move || {
        let now = Instant::now();
        let dt = now.duration_since(step).as_secs_f64();
        step = now;
        dt
    };
    let mut node_plan = HaloPlan::build_with_width(local, part, 1, comm)?;
    let s = strength(comm, local, &mut node_plan, opts.threshold_at(l), l)?;
    times.strength_s = lap();
    let distance = if l < opts.aggressive_levels { 2 } else { 1 };
    let (prio, (state, rounds)) = match opts.aggregation {
        // Natural order: the larger priority is the smaller global index.
        Aggregation::Natural => {
            let n_all = part.nrows() as f64;
            let prio: Vec<f64> = local.rows().map(|g| n_all - g as f64).collect();
            let states = natural_states(comm, local, part, &node_plan, &s, distance)?;
            (prio, states)
        }
        Aggregation::Petsc => {
            let prio: Vec<f64> = keys.iter().map(|&k| priority(k)).collect();
            let states = luby_states(comm, local, &mut node_plan, &s, &prio, distance);
            (prio, states)
        }
    };
    let (mut root_of, mut is_root) = join_roots(comm, local, &mut node_plan, &s, &prio, &state, distance);
    times.aggregation_s = lap();
    let merged = merge_deficient(
        comm,
        local,
        &mut node_plan,
        &s,
        part,
        (&mut root_of, &mut is_root),
        keys,
        near_null,
        (b, modes, opts.rank_tolerance),
    )?;
    times.merge_s = lap();
    let tent = tentative(
        comm,
        part,
        &root_of,
        &is_root,
        keys,
        near_null,
        b,
        modes,
        opts.rank_tolerance,
    )?;
    times.tentative_s = lap();
    Ok(Aggregated {
        unaggregated: root_of.iter().filter(|r| r.is_none()).count(),
        rounds,
        merged,
        tent,
        times,
    })
}

/// One level's mesh setup (steps 1 to 5 of the module docs) on the rows of
/// `cur`: the decisions a schedule cache entry keeps, and the coarse
/// near-null rows. Collective.
#[allow(clippy::too_many_arguments)]
fn decide<C: Comm + ?Sized>(
    comm: &C,
    cur: &HaloRows,
    part: &Partition,
    keys: &[u64],
    near_null: &[f64],
    (b, modes): (usize, usize),
    opts: &ptap_amg::AmgOptions,
    dist: &DistOptions,
    l: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<(cache::LevelEntry, Vec<f64>, DistSetupTimes), DistError> {
    progress(&format!(
        "level {l}: parallel aggregation of {} block rows",
        part.nrows()
    ));
    let (aggregated, early_omega) = {
        let m = cur.matrix();
        let local = &m.local;
        if comm.size() == 1 {
            // One rank: no message leaves the process, so CG-Lanczos for omega
            // (it reads only A) runs beside the aggregation, as the single
            // process does; both on SingleRank, whose collectives give what
            // the communicator's give on one rank.
            let (agg, om) = rayon::join(
                || aggregate_level(&SingleRank, local, part, keys, near_null, (b, modes), opts, l),
                || {
                    let t = Instant::now();
                    let om = scalar_diagonal(&SingleRank, local, l).and_then(|d| {
                        let omega = omega_by_lanczos(
                            &DistLanczos {
                                op: OneRankOperator { a: local },
                                d: &d,
                            },
                            keys,
                            b,
                            opts,
                            l,
                        )?;
                        Ok((omega, d))
                    });
                    (om, t.elapsed().as_secs_f64())
                },
            );
            (agg, Some(om))
        } else {
            (
                aggregate_level(comm, local, part, keys, near_null, (b, modes), opts, l),
                None,
            )
        }
    };
    let Aggregated {
        unaggregated,
        rounds,
        merged: (merged, dissolved),
        mut tent,
        mut times,
    } = aggregated?;
    let mut stats = [
        tent.coarse.nrows() as f64,
        unaggregated as f64,
        tent.rank_deficient as f64,
    ];
    comm.all_reduce_sum(&mut stats[1..]);
    let (n_aggs, unaggregated, deficient) = (stats[0] as usize, stats[1] as usize, stats[2] as usize);
    let coarse_rows = n_aggs * modes;
    if n_aggs == 0 || coarse_rows as f64 > opts.stall_ratio * (part.nrows() * b) as f64 {
        return Err(DistError::Options {
                why: format!(
                    "coarsening stalled on level {l} ({} block rows gave {n_aggs} aggregates); raise the coarse limit (now {}) or lower the strength threshold",
                    part.nrows(),
                    opts.coarse_eq_limit
                ),
            });
    }
    progress(&format!(
        "level {l}: smoothing P and inspecting the distributed P^T A P"
    ));
    let (omega, d) = match early_omega {
        Some((om, secs)) => {
            times.omega_s = secs;
            om?
        }
        None => {
            let t = Instant::now();
            let d = scalar_diagonal(comm, &cur.matrix().local, l)?;
            let omega = omega_by_lanczos(
                &DistLanczos {
                    op: HaloOperator { comm, a: cur },
                    d: &d,
                },
                keys,
                b,
                opts,
                l,
            )?;
            times.omega_s = t.elapsed().as_secs_f64();
            (omega, d)
        }
    };
    let mut step = Instant::now();
    let mut lap = move || {
        let now = Instant::now();
        let dt = now.duration_since(step).as_secs_f64();
        step = now;
        dt
    };
    let p = smoothed(comm, cur, part, (&tent.cols, &tent.blocks), modes, (omega, &d))?;
    times.smoothing_s = lap();
    let whole = coarse_rows <= opts.coarse_eq_limit || l + 2 >= opts.max_levels;
    let mut rebalance = false;
    if !whole {
        let to = consolidated(&tent.coarse, modes, dist.process_eq_limit).or_else(|| {
            let r = rebalanced(&tent.coarse);
            rebalance = r.is_some();
            r
        });
        if let Some(to) = to {
            let (nn, k) = redistribute(
                comm,
                &tent.coarse,
                &to,
                &tent.coarse_near_null,
                &tent.coarse_keys,
                modes * modes,
            )?;
            tent.coarse_near_null = nn;
            tent.coarse_keys = k;
            tent.coarse = to;
        }
    }
    times.redistribute_s = lap();
    let p = if opts.pf > 0.0 {
        filtered(
            comm,
            p,
            &tent.coarse,
            &tent.coarse_near_null,
            (b, modes),
            opts.pf_at(l),
            opts.rank_tolerance,
        )?
    } else {
        p
    };
    times.filtering_s = lap();
    let mut p_blocks = [p.cols.len() as f64];
    comm.all_reduce_sum(&mut p_blocks);
    Ok((
        cache::LevelEntry {
            part: part.clone(),
            fine_block: b,
            coarse_block: modes,
            whole,
            p,
            coarse: tent.coarse,
            coarse_keys: tent.coarse_keys,
            omega,
            aggregates: n_aggs,
            unaggregated,
            deficient,
            merged,
            dissolved,
            rebalanced: rebalance,
            mis_rounds: rounds,
            p_blocks: p_blocks[0] as usize,
            plans: None,
        },
        tent.coarse_near_null,
        times,
    ))
}

/// The cache's answer on this rank, agreed over the ranks.
struct CacheState {
    path: std::path::PathBuf,
    key: String,
    status: &'static str,
    reason: Option<String>,
    /// This rank's refusal of its entry.
    refused: Option<String>,
    /// The entry to load (every rank has one), or `None`: build and write.
    levels: Option<cache::Loaded>,
}

/// Looks up this rank's entry in `dir` and agrees with the other ranks on
/// loading (every rank has a valid entry) or rebuilding. Collective.
#[allow(clippy::too_many_arguments)]
fn lookup<C: Comm + ?Sized>(
    comm: &C,
    dir: &std::path::Path,
    a: &LocalMatrix,
    part: &Partition,
    near_null: &[f64],
    (b, modes): (usize, usize),
    options: &HierarchyOptions,
    dist: &DistOptions,
) -> Result<CacheState, DistError> {
    let (me, size) = (comm.rank(), comm.size());
    let knobs = format!(
        "{:?}; variant {:?}; max coarse rows {}; {:?}",
        options.amg, options.variant, options.max_coarse_rows, dist
    );
    let key = cache::problem_key(comm, a, near_null, modes, &knobs);
    let path = cache::entry_path(dir, &key, size, me);
    let made = std::fs::create_dir_all(dir);
    let mine = if made.is_err() || !path.exists() {
        None
    } else {
        let level0 = ptap_schedules::file::fingerprint(&crate::product::padded(a)?.0);
        Some(cache::load(&path, &key, (size, me), &level0, (part, b, modes)))
    };
    // [missing, refused] over the ranks.
    let mut counts = [
        f64::from(u8::from(mine.is_none())),
        f64::from(u8::from(matches!(mine, Some(Err(_))))),
    ];
    comm.all_reduce_sum(&mut counts);
    let (missing, refused) = (counts[0] as usize, counts[1] as usize);
    if let Some(Err(why)) = &mine {
        note(&format!(
            "schedule cache (rank {me}): {why}; refused, so this run rebuilds the entry"
        ));
    }
    if let Err(e) = &made {
        if me == 0 {
            note(&format!(
                "schedule cache: cannot create {} ({e}); the run goes on without it",
                dir.display()
            ));
        }
    }
    let reason = if refused > 0 {
        Some(format!(
            "{refused} rank(s) refused their entry (their message says why)"
        ))
    } else if missing > 0 && missing < size {
        Some(format!("{missing} of {size} rank(s) have no entry"))
    } else if missing == size {
        let others = cache::other_rank_counts(dir, &key, size);
        (!others.is_empty()).then(|| {
            format!("entries for this problem exist for {others:?} ranks, not {size}; inspecting for {size} ranks")
        })
    } else {
        None
    };
    if let (Some(r), 0) = (&reason, me) {
        if refused == 0 {
            note(&format!("schedule cache: {r}"));
        }
    }
    let load = missing == 0 && refused == 0;
    Ok(CacheState {
        path,
        key,
        status: if load {
            "loaded"
        } else if refused > 0 || missing < size {
            "rebuilt"
        } else {
            "written"
        },
        reason,
        refused: match &mine {
            Some(Err(why)) => Some(why.clone()),
            _ => None,
        },
        levels: match mine {
            Some(Ok(levels)) if load => Some(levels),
            _ => None,
        },
    })
}

/// The send half of `plan` (per rank, the global columns sent there; this
/// rank owns columns from `owned_start`): what a cache entry keeps of a halo plan.
fn send_lists(plan: &HaloPlan, owned_start: usize, size: usize) -> Vec<Vec<u64>> {
    let mut lists = vec![Vec::new(); size];
    for (s, link) in plan.sends().iter().enumerate() {
        lists[link.rank] = plan
            .send_columns(s)
            .iter()
            .map(|&c| (owned_start + c as usize) as u64)
            .collect();
    }
    lists
}

/// The halo plan of `local` (columns `cols`) from the send lists a loaded
/// entry kept for it (the top of the entry's remaining levels; taken), with
/// no exchange: the receive half follows from the ghosts. Collective (the
/// ranks agree on success).
fn plan_from_entry<C: Comm + ?Sized>(
    comm: &C,
    local: &LocalMatrix,
    cols: &Partition,
    entry: Option<&mut cache::LevelEntry>,
) -> Result<HaloPlan, DistError> {
    let sends = entry
        .and_then(|e| e.plans.as_mut())
        .map(|p| std::mem::take(&mut p.a_sends))
        .ok_or_else(|| DistError::Plan {
            why: "the schedule cache entry ends before a level it names".into(),
        });
    crate::comm::agree(comm, sends.and_then(|s| HaloPlan::from_requests(local, cols, s)))
}

/// What the distributed mesh setup reports (the same on every rank).
#[derive(Clone, Debug, Serialize)]
pub struct DistSetupReport {
    pub levels: Vec<DistLevelSummary>,
    pub mesh_setup_s: f64,
    /// With a schedule cache: what it did (`None`: no cache).
    pub schedule_cache: Option<DistCacheReport>,
}

/// What the schedule cache did for one distributed hierarchy
/// ([`build_hierarchy_cached`]; the same on every rank but `path`).
#[derive(Clone, Debug, Serialize)]
pub struct DistCacheReport {
    /// This rank's entry.
    pub path: String,
    /// `loaded`, `written`, or `rebuilt` (an entry existed and was refused).
    pub status: &'static str,
    /// Why an entry was not loaded, or that entries exist for other rank
    /// counts (rank 0's view; a refused entry's own rank also prints it).
    pub reason: Option<String>,
    /// The key of the problem and its options (partition-independent).
    pub key: String,
    /// This rank's refusal of its entry, in one sentence (`None`: it had a
    /// valid entry, or none).
    pub refused: Option<String>,
}

/// The distributed hierarchy over `comm` (module docs): mesh setup
/// ([`build_levels`]), then [`Hierarchy::from_levels`] runs the matrix setup
/// on [`DistBackend`]. Collective.
pub fn build_hierarchy<'c, C: Comm + ?Sized>(
    comm: &'c C,
    problem: DistProblem,
    options: &HierarchyOptions,
    dist: &DistOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(Hierarchy<DistBackend<'c, C>>, DistSetupReport), DistError> {
    build_hierarchy_cached(comm, problem, options, dist, None, progress)
}

/// [`build_hierarchy`] with the schedule cache in `cache`
/// ([`build_levels_cached`]). Collective.
pub fn build_hierarchy_cached<'c, C: Comm + ?Sized>(
    comm: &'c C,
    problem: DistProblem,
    options: &HierarchyOptions,
    dist: &DistOptions,
    cache: Option<&std::path::Path>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Hierarchy<DistBackend<'c, C>>, DistSetupReport), DistError> {
    let (levels, mut report) = build_levels_cached(comm, problem, options, dist, cache, progress)?;
    let DistLevels {
        backend,
        parts,
        coarse,
        modes,
        mesh_setup_s,
    } = levels;
    let h = Hierarchy::from_levels(backend, parts, coarse, options.clone(), modes, mesh_setup_s, progress)?;
    measure_balance(comm, &h, &mut report.levels);
    Ok((h, report))
}

/// The distributed mesh setup's levels, before the matrix setup: what
/// [`Hierarchy::from_levels`] takes (on [`DistBackend`], or moved onto
/// another backend first, as the GPU ranks' `device_amg` does).
pub struct DistLevels<'c, C: Comm + ?Sized> {
    pub backend: DistBackend<'c, C>,
    pub parts: Vec<LevelParts<DistBackend<'c, C>>>,
    pub coarse: ptap_runtime::cpu::DenseCoarse,
    pub modes: usize,
    pub mesh_setup_s: f64,
}

/// The distributed mesh setup (module docs) over `comm`: every level's rows,
/// transfers, products (inspected; the coarse values the aggregation needs
/// computed) and smoother storage. Collective.
pub fn build_levels<'c, C: Comm + ?Sized>(
    comm: &'c C,
    problem: DistProblem,
    options: &HierarchyOptions,
    dist: &DistOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(DistLevels<'c, C>, DistSetupReport), DistError> {
    build_levels_cached(comm, problem, options, dist, None, progress)
}

/// A line on stderr in one write (ranks' lines must not interleave).
fn note(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(format!("{line}\n").as_bytes());
}

/// [`build_levels`] with the schedule cache in `cache` (module docs of
/// [`crate::cache`]): an entry for this problem, rank count, split of the rows
/// and rank on every rank is loaded (the mesh setup's decisions: `P`, the
/// coarse partitions and keys, `omega`; and its plans: the halo plans, the
/// distributed product's plan and its local schedule, so a loaded level runs
/// no exchange and no inspection), else the levels are built and every rank
/// writes its entry. A refused entry is reported (its sentence, on its rank)
/// and rebuilt; entries for another rank count are named and left alone.
/// Collective.
pub fn build_levels_cached<'c, C: Comm + ?Sized>(
    comm: &'c C,
    problem: DistProblem,
    options: &HierarchyOptions,
    dist: &DistOptions,
    cache: Option<&std::path::Path>,
    progress: &mut dyn FnMut(&str),
) -> Result<(DistLevels<'c, C>, DistSetupReport), DistError> {
    let t0 = Instant::now();
    let opts = &options.amg;
    let DistProblem {
        a,
        part,
        near_null,
        modes,
    } = problem;
    let me = comm.rank();
    let (b0, bc0) = a.block_shape();
    if b0 != bc0 || part.ranks() != comm.size() || part.range(me) != a.rows() {
        return Err(DistError::Matrix {
            why: format!(
                "rank {me}: the fine operator must have square blocks and this rank's rows of the {}-rank partition",
                part.ranks()
            ),
        });
    }
    if modes == 0 || near_null.len() != a.n_rows() * b0 * modes {
        return Err(DistError::Matrix {
            why: format!(
                "{} near-null values for {} scalar rows and {modes} modes",
                near_null.len(),
                a.n_rows() * b0
            ),
        });
    }
    let (size, b_modes) = (comm.size(), (b0, modes));
    let mut cache_state = match cache {
        Some(dir) => Some(lookup(comm, dir, &a, &part, &near_null, b_modes, options, dist)?),
        None => None,
    };
    // A hit: the entry's levels, last first (each level takes its own and the
    // next level's halo plan from the top), and the mapped file.
    let mut loaded = cache_state.as_mut().and_then(|c| c.levels.take()).map(|mut hit| {
        hit.levels.reverse();
        hit
    });
    let writing = cache_state.is_some() && loaded.is_none();
    let mut written: Vec<cache::LevelEntry> = Vec::new();
    let backend = DistBackend::new(comm, options.kernels.clone());
    let policy = options.product_policy();
    let mut keys: Vec<u64> = a.rows().map(|g| g as u64).collect();
    let plan = match loaded.as_mut() {
        Some(hit) => plan_from_entry(comm, &a, &part, hit.levels.last_mut())?,
        None => HaloPlan::build(&a, &part, comm)?,
    };
    let mut cur = HaloRows::new(DistMatrix { local: a, plan });
    let mut part = part;
    let mut near_null = near_null;
    let mut b = b0;
    let mut parts: Vec<LevelParts<DistBackend<'c, C>>> = Vec::new();
    let mut summaries = Vec::new();
    let coarse = loop {
        let l = parts.len();
        let t_level = Instant::now();
        let mut times = DistSetupTimes::default();
        // The level's pattern as the runtime reads it.
        let pattern = Arc::new(local_pattern(&cur.matrix().local)?);
        let mut entry = match loaded.as_mut() {
            Some(hit) => {
                progress(&format!("level {l}: loading P and its plans from the schedule cache"));
                let entry = hit.levels.pop().ok_or_else(|| DistError::Plan {
                    why: format!("the schedule cache entry ends before level {l}"),
                });
                near_null = Vec::new();
                crate::comm::agree(comm, entry)?
            }
            None => {
                let (entry, coarse_near_null, decided) = decide(
                    comm,
                    &cur,
                    &part,
                    &keys,
                    &near_null,
                    (b, modes),
                    opts,
                    dist,
                    l,
                    progress,
                )?;
                near_null = coarse_near_null;
                times = decided;
                if writing {
                    written.push(entry.decisions());
                }
                entry
            }
        };
        let whole = entry.whole;
        let mut coarse_part = entry.coarse.clone();
        let mut coarse_keys = std::mem::take(&mut entry.coarse_keys);
        let mut rebalanced = entry.rebalanced;
        let coarse_rows = coarse_part.nrows() * modes;
        if whole && coarse_rows > options.max_coarse_rows {
            return Err(DistError::Options {
                why: format!(
                    "the coarsest level would have {coarse_rows} rows, above the dense solve's limit {}; allow more levels",
                    options.max_coarse_rows
                ),
            });
        }
        let t_inspect = Instant::now();
        let n_own = cur.matrix().local.n_rows();
        let (g, next, p, p_sends) = match (loaded.as_ref(), entry.plans.take()) {
            // A hit: the product and P's halo plan from the entry (module docs of `cache`).
            (Some(hit), Some(plans)) => {
                let cache::LevelPlans { p_sends, product, .. } = plans;
                let bundle = &hit.bundle;
                let built = DistGalerkin::from_plan(
                    me,
                    size,
                    &cur.matrix(),
                    product,
                    (b, modes),
                    &coarse_part,
                    &options.kernels,
                    &mut |a, p| {
                        VariantSchedule::from_record(bundle, l as u32, a, p)
                            .map_err(|e| format!("the schedule cache entry's level {l}: {e}"))
                    },
                );
                let (g, next) = crate::comm::agree(comm, built)?;
                let p = g.owned_p(n_own);
                (g, next, p, Some(p_sends))
            }
            (Some(_), None) => {
                return Err(DistError::Plan {
                    why: format!("the schedule cache entry's level {l} has no plans"),
                })
            }
            (None, _) => {
                let p = std::mem::take(&mut entry.p);
                let inspect_for = |coarse: &Partition| {
                    DistGalerkin::build(
                        comm,
                        &cur.matrix(),
                        &p,
                        (b, modes),
                        coarse,
                        whole,
                        &options.kernels,
                        &policy,
                    )
                };
                let (mut g, mut next) = inspect_for(&coarse_part)?;
                // Rows even but blocks not (the level's work is its blocks): the
                // coarse level moves to a split by blocks and is inspected again.
                if let NextLevel::Distributed(local) = &next {
                    if let Some(to) = rebalanced_by_blocks(comm, &coarse_part, local) {
                        let (nn, k) = redistribute(comm, &coarse_part, &to, &near_null, &coarse_keys, modes * modes)?;
                        near_null = nn;
                        coarse_keys = k;
                        coarse_part = to;
                        rebalanced = true;
                        if let Some(w) = written.last_mut() {
                            w.coarse = coarse_part.clone();
                            w.coarse_keys = coarse_keys.clone();
                            w.rebalanced = true;
                        }
                        (g, next) = inspect_for(&coarse_part)?;
                    }
                }
                (g, next, p, None)
            }
        };
        let from_cache = p_sends.is_some();
        if !from_cache {
            times.inspection_s = t_inspect.elapsed().as_secs_f64();
        }
        // What the entry keeps of the product (written after the levels are built).
        let product_plan = writing.then(|| g.plan(&next));
        let t_plans = Instant::now();
        let (p_mat, r_mat, p_plan_sends) = if whole {
            let pattern = BlockPattern::new(p.nrows(), coarse_part.nrows(), p.row_ptr, p.cols)?;
            let pm = BlockCsr::new(Arc::new(pattern), b, modes, p.values)?;
            let rm = pm.transpose();
            (
                DistMat::RowsToWhole(pm),
                DistMat::WholeFromRows(rm),
                vec![Vec::new(); size],
            )
        } else {
            let pl = LocalMatrix::from_rows(me, &part, &coarse_part, (b, modes), p.row_ptr, &p.cols, p.values)?;
            let plan = match p_sends {
                Some(sends) => crate::comm::agree(comm, HaloPlan::from_requests(&pl, &coarse_part, sends))?,
                None => HaloPlan::build(&pl, &coarse_part, comm)?,
            };
            let sends = if writing {
                send_lists(&plan, coarse_part.range(me).start, size)
            } else {
                Vec::new()
            };
            let r = sorted_local(&pl)?.transpose();
            let restriction = Restriction::new(r, plan.clone());
            (
                DistMat::Rows(Box::new(HaloRows::new(DistMatrix { local: pl, plan }))),
                DistMat::Restriction(Box::new(restriction)),
                sends,
            )
        };
        let mut next = match next {
            NextLevel::Whole(c) => DistMat::Whole(c),
            NextLevel::Distributed(local) => {
                let plan = match loaded.as_mut() {
                    Some(hit) => plan_from_entry(comm, &local, &coarse_part, hit.levels.last_mut())?,
                    None => HaloPlan::build(&local, &coarse_part, comm)?,
                };
                DistMat::Rows(Box::new(HaloRows::new(DistMatrix { local, plan })))
            }
        };
        if from_cache {
            times.cache_load_s = t_inspect.elapsed().as_secs_f64();
        } else {
            times.plans_s = t_plans.elapsed().as_secs_f64();
        }
        if let (Some(product), Some(w)) = (product_plan, written.last_mut()) {
            let m = cur.matrix();
            w.plans = Some(cache::LevelPlans {
                a_sends: send_lists(&m.plan, m.local.owned_cols().start, size),
                p_sends: p_plan_sends,
                product,
                schedule: Some(g.schedule.clone()),
            });
        }
        let (schedule, variant_schedule) = (g.base.clone(), g.schedule.clone());
        let mut g = Box::new(g);
        if !whole && !from_cache {
            // The next level's aggregation reads its values (a loaded level
            // is not aggregated; the matrix setup computes them).
            let t = Instant::now();
            g.numeric(comm, &cur, &mut next)?;
            times.coarse_product_s = t.elapsed().as_secs_f64();
        }
        times.total_s = t_level.elapsed().as_secs_f64();
        let setup_s = times.max_over_ranks(comm);
        let per_rank = comm
            .gather(0, &[n_own as f64, cur.matrix().local.nnzb() as f64])
            .unwrap_or_default();
        let rows_per_rank = per_rank.iter().step_by(2).map(|&x| x as usize).collect();
        let blocks_per_rank = per_rank.iter().skip(1).step_by(2).map(|&x| x as usize).collect();
        let cache::LevelEntry {
            omega,
            aggregates: n_aggs,
            unaggregated,
            deficient,
            merged,
            dissolved,
            mis_rounds: rounds,
            p_blocks,
            ..
        } = entry;
        summaries.push(DistLevelSummary {
            level: l,
            block_rows: part.nrows(),
            block_size: b,
            replicated: false,
            rows_per_rank,
            aggregates: Some(n_aggs),
            unaggregated_nodes: Some(unaggregated),
            mis_rounds: Some(rounds),
            omega: Some(omega),
            p_blocks: Some(p_blocks),
            rank_deficient_aggregates: Some(deficient),
            merged_aggregates: Some(merged),
            dissolved_aggregates: Some(dissolved),
            blocks_per_rank,
            coarse_rebalanced: Some(rebalanced),
            setup_s,
            balance: None,
        });
        parts.push(LevelParts {
            a: DistMat::Rows(Box::new(cur)),
            pattern,
            block: b,
            transfer: Some(Transfer {
                p: p_mat,
                r: r_mat,
                product: DistProduct(g),
                schedule,
                variant_schedule,
                host_p: None,
                aggregates: n_aggs,
                merged_aggregates: merged,
                unaggregated_nodes: unaggregated,
                omega,
            }),
            smoother: Some((DistJacobi::new(n_own, b), keyed_random(&keys, b))),
        });
        keys = coarse_keys;
        part = coarse_part;
        b = modes;
        match next {
            DistMat::Rows(rows) => cur = *rows,
            DistMat::Whole(c) => {
                let coarse = ptap_runtime::Backend::coarse(&backend, &c)?;
                summaries.push(DistLevelSummary {
                    level: l + 1,
                    block_rows: c.nrows(),
                    block_size: b,
                    replicated: true,
                    rows_per_rank: vec![c.nrows(); comm.size()],
                    aggregates: None,
                    unaggregated_nodes: None,
                    mis_rounds: None,
                    omega: None,
                    p_blocks: None,
                    rank_deficient_aggregates: None,
                    merged_aggregates: None,
                    dissolved_aggregates: None,
                    blocks_per_rank: vec![c.nnzb(); comm.size()],
                    coarse_rebalanced: None,
                    setup_s: None,
                    balance: None,
                });
                parts.push(LevelParts {
                    pattern: c.pattern_arc().clone(),
                    block: b,
                    a: DistMat::Whole(c),
                    transfer: None,
                    smoother: None,
                });
                break coarse;
            }
            other => {
                return Err(DistError::Matrix {
                    why: format!("level {}: a product filled {}", l + 1, other.kind()),
                })
            }
        }
    };
    let schedule_cache = cache_state.map(|c| {
        if c.status != "loaded" {
            if let Err(why) = cache::store(&c.path, &c.key, size, me, &written) {
                note(&format!(
                    "schedule cache (rank {me}): cannot write {} ({why}); the run goes on without it",
                    c.path.display()
                ));
            }
        }
        DistCacheReport {
            path: c.path.display().to_string(),
            status: c.status,
            reason: c.reason,
            refused: c.refused,
            key: c.key,
        }
    });
    let mesh_setup_s = t0.elapsed().as_secs_f64();
    Ok((
        DistLevels {
            backend,
            parts,
            coarse,
            modes,
            mesh_setup_s,
        },
        DistSetupReport {
            levels: summaries,
            mesh_setup_s,
            schedule_cache,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::SingleRank;
    use ptap_amg::aggregate::UNAGGREGATED;
    use ptap_amg::eig::pseudo_random_vector;
    use ptap_amg::{aggregate_mis1_in, aggregate_mis2_in, strength_graph};

    #[test]
    fn one_rank_aggregation_is_the_serial_greedy_mis_in_priority_order() {
        // Luby's rounds with fixed priorities select exactly the greedy MIS
        // that visits nodes by decreasing priority, and the joining rules
        // are the serial ones, so one rank reproduces ptap_amg's aggregates.
        let beam = ptap_fem::BeamProblem::build(2).unwrap();
        let a = &beam.a;
        let n = a.nrows();
        let part = Partition::uniform(n, 1).unwrap();
        let local = LocalMatrix::from_global(a, &part, &part, 0).unwrap();
        let mut plan = HaloPlan::build_with_width(&local, &part, 1, &SingleRank).unwrap();
        let prio: Vec<f64> = (0..n as u64).map(priority).collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&x, &y| prio[y as usize].total_cmp(&prio[x as usize]));
        for (theta, distance) in [(0.05, 2), (0.05, 1), (0.12, 2), (0.12, 1), (0.5, 2)] {
            let s = strength(&SingleRank, &local, &mut plan, theta, 0).unwrap();
            let g = strength_graph(a, theta);
            for i in 0..n {
                let mut mine = s.row(i).to_vec();
                mine.sort_unstable();
                let serial: Vec<u32> = g.neighbours(i).map(|(j, _)| j as u32).collect();
                assert_eq!(mine, serial, "strong neighbours of node {i}, theta {theta}");
            }
            let (of, is_root, rounds) = aggregate(&SingleRank, &local, &mut plan, &s, &prio, distance);
            let serial = if distance == 2 {
                aggregate_mis2_in(&g, &order)
            } else {
                aggregate_mis1_in(&g, &order)
            };
            let roots: Vec<usize> = (0..n).filter(|&i| is_root[i]).collect();
            assert_eq!(roots.len(), serial.count, "theta {theta}, distance {distance}");
            for (i, (o, want)) in of.iter().zip(&serial.of_node).enumerate() {
                let mine = o.map_or(UNAGGREGATED, |r| roots.binary_search(&r).unwrap() as u32);
                assert_eq!(mine, *want, "node {i}, theta {theta}, distance {distance}");
            }
            // No strong edge (theta 0.5): every node stays alone, no round runs.
            assert_eq!(
                rounds == 0,
                serial.count == 0,
                "{rounds} rounds, {} aggregates",
                serial.count
            );
            assert!(rounds <= 12, "{rounds} rounds");
            eprintln!(
                "theta {theta}, distance {distance}: {} aggregates in {rounds} rounds",
                serial.count
            );
        }
    }

    #[test]
    fn priorities_are_a_bijection_onto_exact_doubles() {
        let mut p: Vec<u64> = (0..200_000u64)
            .chain((1u64 << 40)..(1u64 << 40) + 1000)
            .map(|k| priority(k) as u64)
            .collect();
        assert!(p.iter().all(|&v| v < 1 << 53));
        let n = p.len();
        p.sort_unstable();
        p.dedup();
        assert_eq!(p.len(), n, "two keys share a priority");
    }

    #[test]
    fn the_keyed_start_vector_is_the_serial_one_on_the_fine_level() {
        let keys: Vec<u64> = (0..500).collect();
        let serial = pseudo_random_vector(500 * 3, EIG_SEED);
        let mine = keyed_random(&keys, 3);
        assert!(mine.iter().zip(&serial).all(|(x, y)| x.to_bits() == y.to_bits()));
        // A rank's slice is the slice of the whole vector.
        let slice = keyed_random(&keys[100..200], 3);
        assert!(slice
            .iter()
            .zip(&serial[300..600])
            .all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn uneven_blocks_move_to_a_split_by_blocks_over_the_same_ranks() {
        // Rows even (4, 4, 0, 4) but rank 0's rows hold 10 blocks each, the
        // others 2: blocks 40 / 8 / 8, max over mean 40 / 18.7, above 1.25.
        let coarse = Partition::new(vec![0, 4, 8, 8, 12]).unwrap();
        let blocks = [10, 10, 10, 10, 2, 2, 2, 2, 2, 2, 2, 2];
        let to = split_by_blocks(&coarse, &blocks).unwrap();
        // Shares of 56 / 3: rank 0 ends after 2 rows (20), rank 1 after 4
        // (40), rank 3 takes the rest; rank 2 stays empty.
        assert_eq!(to.starts(), &[0, 2, 4, 4, 12]);
        let sums: Vec<u64> = (0..4).map(|r| blocks[to.range(r)].iter().sum()).collect();
        assert_eq!(sums, [20, 20, 0, 16]);
        // Even blocks: no move; one rank: no move.
        assert!(split_by_blocks(&coarse, &[3; 12]).is_none());
        assert!(split_by_blocks(&Partition::new(vec![0, 12]).unwrap(), &blocks).is_none());
    }

    #[test]
    fn consolidation_keeps_the_first_ranks_and_global_numbers() {
        let coarse = Partition::new(vec![0, 40, 80, 120, 138]).unwrap();
        // 138 rows of 6: 828 scalars; 300 per rank -> 2 ranks.
        let to = consolidated(&coarse, 6, 300).unwrap();
        assert_eq!(to.starts(), &[0, 69, 138, 138, 138]);
        assert!(consolidated(&coarse, 6, 50).is_none(), "207 rows per rank is enough");
        assert!(consolidated(&coarse, 6, 0).is_none());
        // Fewer scalars than one rank's share: everything onto rank 0.
        let to = consolidated(&Partition::new(vec![0, 11, 22, 22]).unwrap(), 6, 300).unwrap();
        assert_eq!(to.starts(), &[0, 22, 22, 22]);
    }
}
