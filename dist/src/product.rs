//! The distributed Galerkin product `A_c = P^T A P` as inspector and executor.
//!
//! **Inspector** ([`DistGalerkin::build`], once per pattern). Each rank pads
//! its rows of `A` into a square local operator over its local columns
//! (owned rows, then one empty row per ghost column, columns sorted), fetches
//! the rows of `P` its ghost columns name from their owners (one all-to-all;
//! `P` is frozen, so they are fetched once, values included), and numbers the
//! coarse columns those rows touch (sorted by global index). Then
//! `P_ext^T A_ext P_ext` is exactly this rank's share of `A_c`
//! (`sum over owned rows i of P_i^T (A P)_i`), an ordinary serial product: the
//! serial inspector (`ptap_schedules::inspect`) schedules it and a serial
//! executor (`KernelRegistry::executor_for`) runs it. Its rows belong to the
//! owners of their coarse rows, in contiguous runs (coarse columns are sorted
//! and partitions contiguous): the inspector sends each owner the pattern of
//! its run (one all-to-all), and each owner builds the union pattern of its
//! rows and, per contributing rank, the position of each incoming block. When
//! the coarse level is the whole (replicated) one, every rank gets every
//! pattern and the union is the global pattern.
//!
//! **A schedule-cache hit** (`DistGalerkin::from_plan`) rebuilds all of this
//! from what the entry kept (`ProductPlan`: `P_ext` with its ghost rows and
//! coarse numbering, the exchange links and the maps into the owned rows, the
//! next level's pattern; the local product's schedule is the entry's record),
//! checking every index against the level's sizes: no exchange, no symbolic
//! product.
//!
//! **Executor** ([`DistGalerkin::numeric`], every matrix setup; allocates
//! nothing). Copy `A`'s values into the padded operator, run the serial
//! executor, one exchange (each run of rows goes to its owner straight from
//! the product's value array), and sum the contributions into the owned
//! rows in rank order (deterministic for a rank count). Into the whole level,
//! the exchange is one all-reduce of the coarse values (summed in rank order).
use crate::backend::{DistMat, HaloRows};
use crate::comm::{Comm, Link};
use crate::local::LocalMatrix;
use crate::partition::Partition;
use crate::DistError;
use ptap_runtime::{GalerkinProduct, KernelRegistry};
use ptap_schedules::{inspect, BlockShape, ProductPolicy, TwoPassSchedule, VariantSchedule};
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Blocks per task of the refresh's parallel copy of `A`.
const COPY_BLOCKS_PER_TASK: usize = 4096;

/// Rows of a block matrix with global column numbers (strictly increasing
/// within a row): what a rank computes of `P`, or receives of it.
#[derive(Clone, Debug, Default)]
pub struct GlobalRows {
    pub row_ptr: Vec<usize>,
    pub cols: Vec<u32>,
    pub values: Vec<f64>,
}

impl GlobalRows {
    pub fn nrows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }
    fn row(&self, i: usize) -> Range<usize> {
        self.row_ptr[i]..self.row_ptr[i + 1]
    }
}

/// The rows of `P` (owned rows `p`, `l = bf * bc` scalars a block) that the
/// ghost columns of `a` name, fetched from their owners with one
/// all-to-all, in ghost order. Collective.
pub fn fetch_ghost_rows<C: Comm + ?Sized>(
    comm: &C,
    a: &crate::local::DistMatrix,
    p: &GlobalRows,
    l: usize,
) -> Result<GlobalRows, DistError> {
    let plan = &a.plan;
    let mut send = vec![Vec::new(); comm.size()];
    for (s, link) in plan.sends().iter().enumerate() {
        let msg = &mut send[link.rank];
        for &c in plan.send_columns(s) {
            let r = p.row(c as usize);
            msg.push(r.len() as u64);
            msg.extend(p.cols[r.clone()].iter().map(|&j| j as u64));
            msg.extend(p.values[r.start * l..r.end * l].iter().map(|v| v.to_bits()));
        }
    }
    let got = comm.all_to_all_u64(&send);
    let mut out = GlobalRows {
        row_ptr: vec![0],
        ..GlobalRows::default()
    };
    let bad = || DistError::Plan {
        why: "a neighbour sent rows of P that do not parse".into(),
    };
    // Ghosts are sorted by global index, so owners come in rank order.
    for msg in &got {
        let mut at = 0;
        while at < msg.len() {
            let len = msg[at] as usize;
            let end = at + 1 + len + len * l;
            if end > msg.len() {
                return Err(bad());
            }
            out.cols.extend(msg[at + 1..at + 1 + len].iter().map(|&j| j as u32));
            out.values
                .extend(msg[at + 1 + len..end].iter().map(|&b| f64::from_bits(b)));
            out.row_ptr.push(out.cols.len());
            at = end;
        }
    }
    if out.nrows() != a.local.n_ghosts() {
        return Err(DistError::Plan {
            why: format!(
                "{} rows of P arrived for {} ghost columns",
                out.nrows(),
                a.local.n_ghosts()
            ),
        });
    }
    Ok(out)
}

/// The padded local operator's pattern (module docs: owned rows with their
/// local columns sorted, one empty row per ghost column) and, per block, the
/// block of `local` it copies.
pub(crate) fn padded(local: &LocalMatrix) -> Result<(BlockPattern, Vec<u32>), DistError> {
    let (n_own, n_ext) = (local.n_rows(), local.n_local_cols());
    let ptr = local.row_ptr();
    let mut a_map: Vec<u32> = (0..local.nnzb() as u32).collect();
    {
        // Each row's blocks sorted by local column, rows in parallel.
        let mut rows: Vec<&mut [u32]> = Vec::with_capacity(n_own);
        let mut rest = &mut a_map[..];
        for i in 0..n_own {
            let (head, tail) = rest.split_at_mut(ptr[i + 1] - ptr[i]);
            rows.push(head);
            rest = tail;
        }
        rows.into_par_iter()
            .for_each(|r| r.sort_unstable_by_key(|&k| local.col_idx()[k as usize]));
    }
    let a_cols: Vec<u32> = a_map.par_iter().map(|&k| local.col_idx()[k as usize]).collect();
    let mut a_ptr = Vec::with_capacity(n_ext + 1);
    a_ptr.extend_from_slice(ptr);
    a_ptr.resize(n_ext + 1, a_cols.len());
    Ok((BlockPattern::new(n_ext, n_ext, a_ptr, a_cols)?, a_map))
}

/// What a schedule-cache entry keeps of a level's distributed product besides
/// the local product's schedule (module docs): enough to rebuild
/// [`DistGalerkin`] and the next level's structure without an exchange or a
/// symbolic product.
#[derive(Clone, Debug)]
pub(crate) struct ProductPlan {
    /// `P_ext` (owned rows, then the ghost rows fetched from their owners),
    /// columns compressed.
    pub p_row_ptr: Vec<usize>,
    pub p_cols: Vec<u32>,
    pub p_values: Vec<f64>,
    /// The global coarse column of each column of `P_ext`.
    pub cext: Vec<u32>,
    pub out: PlanOutput,
}

/// [`Output`] as stored, with the pattern of the level it fills.
#[derive(Clone, Debug)]
pub(crate) enum PlanOutput {
    Owners {
        mine: Range<usize>,
        sends: Vec<Link>,
        recvs: Vec<Link>,
        maps: Vec<Vec<u32>>,
        /// The next level's rows on this rank, global columns.
        next_row_ptr: Vec<usize>,
        next_cols: Vec<u32>,
    },
    Everyone {
        pos: Vec<u32>,
        /// The whole coarse operator's pattern.
        row_ptr: Vec<usize>,
        cols: Vec<u32>,
    },
}

/// Where the coarse operator's values go after the local product (read by
/// the device executor, `device_amg`, which runs the same plan on the GPU).
pub(crate) enum Output {
    /// To the owners of the coarse rows (a distributed coarse level).
    Owners {
        /// Block rows of the local product this rank owns.
        mine: Range<usize>,
        sends: Vec<Link>,
        recvs: Vec<Link>,
        recv: Vec<f64>,
        /// Per rank, the owned block each incoming block adds into (this
        /// rank's entry maps the blocks of `mine`).
        maps: Vec<Vec<u32>>,
        /// Per rank, its receive link (`usize::MAX`: none).
        link_of: Vec<usize>,
        acc: Vec<f64>,
    },
    /// To every rank (the whole coarsest level): each local block's place
    /// in the global coarse pattern.
    Everyone { pos: Vec<u32>, acc: Vec<f64> },
}

/// The structure of the next level a product fills.
pub enum NextLevel {
    /// The owned rows of a distributed coarse level (values zero).
    Distributed(LocalMatrix),
    /// The whole coarse operator, on every rank (values zero).
    Whole(BlockCsr),
}

/// One level's distributed Galerkin product (module docs).
pub struct DistGalerkin {
    pub(crate) a_ext: BlockCsr,
    /// Block `k` of `a_ext` is block `a_map[k]` of the rank's local matrix.
    pub(crate) a_map: Vec<u32>,
    pub(crate) p_ext: BlockCsr,
    /// The global coarse column of each column of `p_ext` (ascending).
    pub(crate) cext: Vec<u32>,
    exec: Box<dyn GalerkinProduct>,
    pub(crate) c_ext: BlockCsr,
    /// The two-pass patterns of the local product (statistics, summaries).
    pub base: Arc<TwoPassSchedule>,
    pub schedule: VariantSchedule,
    pub(crate) out: Output,
    /// Seconds of the last refresh's local product (the copy of `A`'s values
    /// and the serial executor; not the exchange): this rank's work, which
    /// the level's balance report compares over the ranks.
    pub local_s: f64,
}

impl DistGalerkin {
    /// The inspector (module docs): `a` the fine operator's rows, `p` this
    /// rank's rows of `P` (`bf x bc` blocks, global coarse columns under
    /// `coarse`), `whole` whether the coarse level is gathered on every rank.
    /// Collective.
    #[allow(clippy::too_many_arguments)]
    pub fn build<C: Comm + ?Sized>(
        comm: &C,
        a: &crate::local::DistMatrix,
        p: &GlobalRows,
        (bf, bc): (usize, usize),
        coarse: &Partition,
        whole: bool,
        kernels: &KernelRegistry,
        policy: &ProductPolicy,
    ) -> Result<(Self, NextLevel), DistError> {
        let (me, size) = (comm.rank(), comm.size());
        let local = &a.local;
        let (n_own, n_ext) = (local.n_rows(), local.n_local_cols());
        if p.nrows() != n_own {
            return Err(DistError::Matrix {
                why: format!("{} rows of P for {n_own} rows of A", p.nrows()),
            });
        }
        let lp = bf * bc;
        let ghost_rows = fetch_ghost_rows(comm, a, p, lp)?;

        let (a_pattern, a_map) = padded(local)?;
        let a_ext = BlockCsr::zeros(Arc::new(a_pattern), bf, bf);

        // P_ext: owned rows then ghost rows, coarse columns compressed.
        let mut cext: Vec<u32> = p.cols.iter().chain(&ghost_rows.cols).copied().collect();
        cext.par_sort_unstable();
        cext.dedup();
        let mut p_ptr = Vec::with_capacity(n_ext + 1);
        p_ptr.extend_from_slice(&p.row_ptr);
        let base = p.cols.len();
        p_ptr.extend(ghost_rows.row_ptr[1..].iter().map(|&k| base + k));
        let compress = |cols: &[u32]| -> Vec<u32> {
            cols.par_iter()
                .map(|j| cext.binary_search(j).expect("every column is listed") as u32)
                .collect()
        };
        let mut p_cols = compress(&p.cols);
        p_cols.extend(compress(&ghost_rows.cols));
        // Copied in parallel (P's values are the larger part of the product's input).
        let mut p_vals = vec![0.0; p.values.len() + ghost_rows.values.len()];
        let (own_vals, ghost_vals) = p_vals.split_at_mut(p.values.len());
        own_vals
            .par_chunks_mut(COPY_BLOCKS_PER_TASK)
            .zip(p.values.par_chunks(COPY_BLOCKS_PER_TASK))
            .for_each(|(d, s)| d.copy_from_slice(s));
        ghost_vals.copy_from_slice(&ghost_rows.values);
        let p_pattern = BlockPattern::new(n_ext, cext.len(), p_ptr, p_cols)?;
        let p_ext = BlockCsr::new(Arc::new(p_pattern), bf, bc, p_vals)?;

        let inspected = inspect(
            a_ext.pattern_arc().clone(),
            p_ext.pattern_arc().clone(),
            BlockShape::new(bf, bc),
            policy,
        )
        .map_err(|e| DistError::Matrix {
            why: format!("the local product's inspector: {e}"),
        })?;
        let exec = kernels.executor_for(&inspected.schedule, bf, bc)?;
        let c_ext = BlockCsr::zeros(inspected.base.c.clone(), bc, bc);
        let cp = c_ext.pattern();
        let lc = bc * bc;

        // The pattern message of local rows `rows`: [global row, length, global columns...].
        let message = |rows: Range<usize>| -> Vec<u64> {
            let mut m = Vec::new();
            for i in rows {
                m.push(u64::from(cext[i]));
                m.push(cp.row(i).len() as u64);
                m.extend(cp.row(i).iter().map(|&j| u64::from(cext[j as usize])));
            }
            m
        };
        let parse = |msg: &[u64], f: &mut dyn FnMut(usize, &[u64])| -> Result<(), DistError> {
            let mut at = 0;
            while at < msg.len() {
                let len = *msg.get(at + 1).ok_or_else(|| DistError::Plan {
                    why: "a truncated coarse pattern arrived".into(),
                })? as usize;
                let end = at + 2 + len;
                if end > msg.len() {
                    return Err(DistError::Plan {
                        why: "a truncated coarse pattern arrived".into(),
                    });
                }
                f(msg[at] as usize, &msg[at + 2..end]);
                at = end;
            }
            Ok(())
        };

        let (out, next) = if whole {
            let all = message(0..cext.len());
            let got = comm.all_to_all_u64(&vec![all; size]);
            let nc = coarse.nrows();
            let mut rows: Vec<Vec<u32>> = vec![Vec::new(); nc];
            for msg in &got {
                parse(msg, &mut |g, cols| rows[g].extend(cols.iter().map(|&j| j as u32)))?;
            }
            for r in rows.iter_mut() {
                r.sort_unstable();
                r.dedup();
            }
            let pattern = BlockPattern::from_rows(nc, &rows)?;
            let mut pos = Vec::with_capacity(cp.nnzb());
            for i in 0..cp.nrows() {
                for &j in cp.row(i) {
                    let k = pattern
                        .find(cext[i] as usize, cext[j as usize] as usize)
                        .expect("the union holds every contribution");
                    pos.push(k as u32);
                }
            }
            let c = BlockCsr::zeros(Arc::new(pattern), bc, bc);
            let acc = vec![0.0; c.values().len()];
            (Output::Everyone { pos, acc }, NextLevel::Whole(c))
        } else {
            // Runs of local rows by owner.
            let mut runs = vec![0..0; size];
            let mut i = 0;
            while i < cext.len() {
                let q = coarse.owner(cext[i] as usize);
                let s = i;
                while i < cext.len() && coarse.owner(cext[i] as usize) == q {
                    i += 1;
                }
                runs[q] = s..i;
            }
            let send: Vec<Vec<u64>> = (0..size)
                .map(|q| if q == me { Vec::new() } else { message(runs[q].clone()) })
                .collect();
            let got = comm.all_to_all_u64(&send);
            let own = coarse.range(me);
            let mut rows: Vec<Vec<u32>> = vec![Vec::new(); own.len()];
            let mut add_row = |g: usize, cols: &[u64]| rows[g - own.start].extend(cols.iter().map(|&j| j as u32));
            for (q, msg) in got.iter().enumerate() {
                if q != me {
                    parse(msg, &mut add_row)?;
                }
            }
            parse(&message(runs[me].clone()), &mut add_row)?;
            for r in rows.iter_mut() {
                r.sort_unstable();
                r.dedup();
            }
            let mut row_ptr = vec![0usize];
            let mut cols = Vec::new();
            for r in &rows {
                cols.extend_from_slice(r);
                row_ptr.push(cols.len());
            }
            let position = |g: usize, j: u32| -> u32 {
                let i = g - own.start;
                let at = rows[i].binary_search(&j).expect("the union holds every contribution");
                (row_ptr[i] + at) as u32
            };
            let mut maps = vec![Vec::new(); size];
            let mut recvs = Vec::new();
            let mut link_of = vec![usize::MAX; size];
            let mut at = 0;
            for (q, msg) in got.iter().enumerate() {
                let mut map = Vec::new();
                if q == me {
                    parse(&message(runs[me].clone()), &mut |g, cs| {
                        map.extend(cs.iter().map(|&j| position(g, j as u32)))
                    })?;
                } else {
                    parse(msg, &mut |g, cs| map.extend(cs.iter().map(|&j| position(g, j as u32))))?;
                    if !map.is_empty() {
                        link_of[q] = recvs.len();
                        recvs.push(Link {
                            rank: q,
                            start: at,
                            len: map.len() * lc,
                        });
                        at += map.len() * lc;
                    }
                }
                maps[q] = map;
            }
            let sends: Vec<Link> = (0..size)
                .filter(|&q| q != me)
                .filter_map(|q| {
                    let r = &runs[q];
                    let (k0, k1) = (cp.row_ptr()[r.start], cp.row_ptr()[r.end]);
                    (k1 > k0).then_some(Link {
                        rank: q,
                        start: k0 * lc,
                        len: (k1 - k0) * lc,
                    })
                })
                .collect();
            let n_values = cols.len() * lc;
            let next = LocalMatrix::from_rows(me, coarse, coarse, (bc, bc), row_ptr, &cols, vec![0.0; n_values])?;
            (
                Output::Owners {
                    mine: runs[me].clone(),
                    sends,
                    recvs,
                    recv: vec![0.0; at],
                    maps,
                    link_of,
                    acc: vec![0.0; n_values],
                },
                NextLevel::Distributed(next),
            )
        };
        Ok((
            Self {
                a_ext,
                a_map,
                p_ext,
                cext,
                exec,
                c_ext,
                base: inspected.base,
                schedule: inspected.schedule,
                out,
                local_s: 0.0,
            },
            next,
        ))
    }

    /// What a schedule-cache entry keeps of this product beside its schedule
    /// (`next` is the level it fills, as [`DistGalerkin::build`] returned it).
    pub(crate) fn plan(&self, next: &NextLevel) -> ProductPlan {
        let pp = self.p_ext.pattern();
        let out = match (&self.out, next) {
            (
                Output::Owners {
                    mine,
                    sends,
                    recvs,
                    maps,
                    ..
                },
                NextLevel::Distributed(local),
            ) => PlanOutput::Owners {
                mine: mine.clone(),
                sends: sends.clone(),
                recvs: recvs.clone(),
                maps: maps.clone(),
                next_row_ptr: local.row_ptr().to_vec(),
                next_cols: local
                    .col_idx()
                    .iter()
                    .map(|&c| local.global_col(c as usize) as u32)
                    .collect(),
            },
            (Output::Everyone { pos, .. }, NextLevel::Whole(c)) => PlanOutput::Everyone {
                pos: pos.clone(),
                row_ptr: c.pattern().row_ptr().to_vec(),
                cols: c.pattern().col_idx().to_vec(),
            },
            _ => unreachable!("a product's output and the level it fills are built together"),
        };
        ProductPlan {
            p_row_ptr: pp.row_ptr().to_vec(),
            p_cols: pp.col_idx().to_vec(),
            p_values: self.p_ext.values().par_iter().copied().collect(),
            cext: self.cext.clone(),
            out,
        }
    }

    /// The product of a schedule-cache hit (module docs): `a` the level's
    /// rows, `plan` what the entry kept, `schedule` loads the local product's
    /// schedule for the patterns of `A_ext` and `P_ext` (refusing other
    /// patterns). Every stored index is checked against the level's sizes
    /// before use; a bad one is refused in one sentence. Rank-local: no
    /// communication.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_plan(
        me: usize,
        size: usize,
        a: &crate::local::DistMatrix,
        plan: ProductPlan,
        (bf, bc): (usize, usize),
        coarse: &Partition,
        kernels: &KernelRegistry,
        schedule: &mut dyn FnMut(Arc<BlockPattern>, Arc<BlockPattern>) -> Result<VariantSchedule, String>,
    ) -> Result<(Self, NextLevel), DistError> {
        let bad = |why: String| DistError::Plan {
            why: format!("the schedule cache entry's product plan {why}"),
        };
        let local = &a.local;
        let n_ext = local.n_local_cols();
        let nc = coarse.nrows();
        let ProductPlan {
            p_row_ptr,
            p_cols,
            p_values,
            cext,
            out,
        } = plan;
        if cext.windows(2).any(|w| w[0] >= w[1]) || cext.last().is_some_and(|&c| c as usize >= nc) {
            return Err(bad(format!(
                "numbers coarse columns out of order or beyond the {nc} coarse rows"
            )));
        }
        if p_row_ptr.len() != n_ext + 1 {
            return Err(bad(format!(
                "holds {} rows of P for {n_ext} local columns",
                p_row_ptr.len().saturating_sub(1)
            )));
        }
        if let Some(v) = p_values.par_iter().find_any(|v| !v.is_finite()) {
            return Err(bad(format!("holds a value {v} of P that is not finite")));
        }
        let p_pattern = BlockPattern::new(n_ext, cext.len(), p_row_ptr, p_cols).map_err(|e| bad(e.to_string()))?;
        let p_ext = BlockCsr::new(Arc::new(p_pattern), bf, bc, p_values).map_err(|e| bad(e.to_string()))?;
        let (a_pattern, a_map) = padded(local)?;
        let a_ext = BlockCsr::zeros(Arc::new(a_pattern), bf, bf);
        let schedule = schedule(a_ext.pattern_arc().clone(), p_ext.pattern_arc().clone())
            .map_err(|why| DistError::Plan { why })?;
        let base = schedule.base().clone();
        let exec = kernels.executor_for(&schedule, bf, bc)?;
        let c_ext = BlockCsr::zeros(base.c.clone(), bc, bc);
        let cp = c_ext.pattern();
        let lc = bc * bc;
        let (out, next) = match out {
            PlanOutput::Everyone { pos, row_ptr, cols } => {
                let pattern = BlockPattern::new(nc, nc, row_ptr, cols).map_err(|e| bad(e.to_string()))?;
                if pos.len() != cp.nnzb() || pos.iter().any(|&k| k as usize >= pattern.nnzb()) {
                    return Err(bad(format!(
                        "places {} blocks of {} into a coarse operator of {} blocks",
                        pos.len(),
                        cp.nnzb(),
                        pattern.nnzb()
                    )));
                }
                let c = BlockCsr::zeros(Arc::new(pattern), bc, bc);
                let acc = vec![0.0; c.values().len()];
                (Output::Everyone { pos, acc }, NextLevel::Whole(c))
            }
            PlanOutput::Owners {
                mine,
                sends,
                recvs,
                maps,
                next_row_ptr,
                next_cols,
            } => {
                let n_values = next_cols.len() * lc;
                let next = LocalMatrix::from_rows(
                    me,
                    coarse,
                    coarse,
                    (bc, bc),
                    next_row_ptr,
                    &next_cols,
                    vec![0.0; n_values],
                )
                .map_err(|e| bad(e.to_string()))?;
                let nnzb = next.nnzb();
                if mine.start > mine.end || mine.end > cp.nrows() || maps.len() != size {
                    return Err(bad(format!(
                        "names rows {mine:?} of {} and {} ranks' maps",
                        cp.nrows(),
                        maps.len()
                    )));
                }
                let c_len = cp.nnzb() * lc;
                if sends.iter().any(|l| {
                    l.rank >= size || l.rank == me || l.start % lc != 0 || l.len % lc != 0 || l.start + l.len > c_len
                }) {
                    return Err(bad(format!("sends outside the local product's {c_len} values")));
                }
                let mut link_of = vec![usize::MAX; size];
                let mut at = 0;
                for (k, l) in recvs.iter().enumerate() {
                    if l.rank >= size || l.rank == me || link_of[l.rank] != usize::MAX || l.start != at || l.len == 0 {
                        return Err(bad("receives that do not tile its receive buffer".into()));
                    }
                    link_of[l.rank] = k;
                    at += l.len;
                }
                let mine_blocks = cp.row_ptr()[mine.end] - cp.row_ptr()[mine.start];
                for (q, map) in maps.iter().enumerate() {
                    let want = if q == me {
                        mine_blocks
                    } else if link_of[q] != usize::MAX {
                        recvs[link_of[q]].len / lc
                    } else {
                        0
                    };
                    if map.len() != want {
                        return Err(bad(format!(
                            "maps {} blocks from rank {q} where {want} arrive",
                            map.len()
                        )));
                    }
                    if map.iter().any(|&k| k as usize >= nnzb) {
                        return Err(bad(format!(
                            "maps a block from rank {q} beyond the {nnzb} owned blocks"
                        )));
                    }
                }
                (
                    Output::Owners {
                        mine,
                        sends,
                        recvs,
                        recv: vec![0.0; at],
                        maps,
                        link_of,
                        acc: vec![0.0; n_values],
                    },
                    NextLevel::Distributed(next),
                )
            }
        };
        Ok((
            Self {
                a_ext,
                a_map,
                p_ext,
                cext,
                exec,
                c_ext,
                base,
                schedule,
                out,
                local_s: 0.0,
            },
            next,
        ))
    }

    /// This rank's rows of `P` (global coarse columns): the first rows of `P_ext`.
    pub(crate) fn owned_p(&self, n_own: usize) -> GlobalRows {
        let pp = self.p_ext.pattern();
        let end = pp.row_ptr()[n_own];
        let l = self.p_ext.block_len();
        let cext = &self.cext;
        GlobalRows {
            row_ptr: pp.row_ptr()[..=n_own].to_vec(),
            cols: pp.col_idx()[..end].par_iter().map(|&c| cext[c as usize]).collect(),
            values: self.p_ext.values()[..end * l].par_iter().copied().collect(),
        }
    }

    /// The executor (module docs): `c`'s values from `a`'s. Collective;
    /// allocates nothing.
    pub fn numeric<C: Comm + ?Sized>(&mut self, comm: &C, a: &HaloRows, c: &mut DistMat) -> Result<(), DistError> {
        let t = std::time::Instant::now();
        {
            let m = a.matrix();
            let src = m.local.values();
            let (bf, _) = self.a_ext.block_shape();
            let l = bf * bf;
            let dst = self.a_ext.values_mut();
            if src.len() != dst.len() {
                return Err(DistError::Matrix {
                    why: format!("{} values of A for a product inspected with {}", src.len(), dst.len()),
                });
            }
            // In parallel: on the fine level this is the whole operator (and,
            // the first time, the first touch of the padded copy's pages).
            // Tasks of at least COPY_BLOCKS_PER_TASK blocks: an unbounded split
            // queues more jobs than the pool's deques hold and they grow (allocate).
            dst.par_chunks_mut(l)
                .zip(self.a_map.par_iter())
                .with_min_len(COPY_BLOCKS_PER_TASK)
                .for_each(|(d, &from)| {
                    let from = from as usize;
                    d.copy_from_slice(&src[from * l..(from + 1) * l]);
                });
        }
        self.exec.numeric(&self.a_ext, &self.p_ext, &mut self.c_ext)?;
        self.local_s = t.elapsed().as_secs_f64();
        let lc = self.c_ext.block_len();
        match (&mut self.out, c) {
            (Output::Everyone { pos, acc }, DistMat::Whole(c)) => {
                acc.fill(0.0);
                for (e, &k) in pos.iter().enumerate() {
                    let k = k as usize;
                    for (o, v) in acc[k * lc..(k + 1) * lc]
                        .iter_mut()
                        .zip(&self.c_ext.values()[e * lc..(e + 1) * lc])
                    {
                        *o += v;
                    }
                }
                comm.all_reduce_sum(acc);
                c.values_mut().copy_from_slice(acc);
                Ok(())
            }
            (
                Output::Owners {
                    mine,
                    sends,
                    recvs,
                    recv,
                    maps,
                    link_of,
                    acc,
                },
                DistMat::Rows(c),
            ) => {
                let values = self.c_ext.values();
                comm.exchange(sends, values, recvs, recv, &mut || {});
                acc.fill(0.0);
                let me = comm.rank();
                let k0 = self.c_ext.pattern().row_ptr()[mine.start];
                for (q, map) in maps.iter().enumerate() {
                    let src = if q == me {
                        &values[k0 * lc..(k0 + map.len()) * lc]
                    } else if link_of[q] != usize::MAX {
                        let l = recvs[link_of[q]];
                        &recv[l.start..l.start + l.len]
                    } else {
                        continue;
                    };
                    for (e, &k) in map.iter().enumerate() {
                        let k = k as usize;
                        for (o, v) in acc[k * lc..(k + 1) * lc].iter_mut().zip(&src[e * lc..(e + 1) * lc]) {
                            *o += v;
                        }
                    }
                }
                c.matrix_mut().local.set_values(acc)
            }
            (out, c) => Err(DistError::Matrix {
                why: format!(
                    "this product fills {}, not {}",
                    match out {
                        Output::Owners { .. } => "distributed rows",
                        Output::Everyone { .. } => "a replicated matrix",
                    },
                    c.kind()
                ),
            }),
        }
    }
}
