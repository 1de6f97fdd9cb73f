//! Per-rank entries of the schedule cache: what the distributed mesh setup
//! decided on this rank, written once and loaded by a later run at the same
//! rank count ([`crate::setup::build_hierarchy_cached`]).
//!
//! **What an entry holds.** One file per rank,
//! `dist-<key>-np<N>-r<R>.ptapsched`, in the schedule file format of
//! `ptap_schedules::file` (versioned, checksummed, tagged with this user's
//! key, every array bounds-checked on load), one record per distributed
//! level. The decisions: the level's row partition, the coarse partition
//! after consolidation, the coarse nodes' keys (MIS priorities and smoother
//! start vectors of the level below), `omega`, whether the next level is the
//! replicated coarsest, the level's counts for the report. The plans (the
//! communication plan is part of the schedule): the send half of the halo
//! plans of the level's operator and of `P` (the receive half follows from
//! the ghosts), and the distributed product's plan
//! (`ProductPlan`: `P_ext`, this rank's rows of `P` and
//! the ghost rows it fetched, with their coarse numbering; the exchange's
//! links and the maps of incoming blocks into the owned rows; the next
//! level's pattern). The record itself is the local product's schedule
//! record (`VariantSchedule::to_record`: the patterns of `W`, `R`, `A_c` and
//! the variant's arrays, fingerprints of the padded operator and `P_ext`),
//! the arrays above added under `dist.` names. Loading skips the strength
//! graph, the MIS rounds, the tentative prolongator's QR, the
//! eigen-estimate, smoothing, filtering, every all-to-all of the halo and
//! product inspectors and the symbolic product; each stored index is checked
//! against the level's sizes before it is used. The hierarchy, the
//! iterations and the solution are the bits of the run that wrote the entry.
//!
//! **The key.** A hash of the fine operator's pattern (global numbers) and
//! near-null space, summed row by row so it does not depend on the rank
//! count, and of the options that shape the setup. The file name adds the
//! rank count and the rank; every record repeats them and the problem line
//! names the key, so an entry renamed for another rank, rank count or problem
//! is refused in one sentence, as are a truncated or corrupt file (checksum),
//! one edited by someone without this user's key (tag), one written for
//! another split of the rows, and one whose level patterns are not this
//! run's (fingerprints). The caller reports the
//! sentence and rebuilds; every rank agrees on load-or-rebuild first, so a
//! bad entry on one rank never leaves the others waiting.
use crate::comm::{Comm, Link};
use crate::local::LocalMatrix;
use crate::partition::Partition;
use crate::product::{GlobalRows, PlanOutput, ProductPlan};
use ptap_schedules::file::{write_bundle, MappedBundle, NamedArray, PatternFingerprint, RecordView, ScheduleBundle};
use ptap_schedules::VariantSchedule;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The layout of a record this build writes and reads (sizes and arrays);
/// part of every entry's problem line, so an older layout is refused.
/// 4: natural-order aggregation and coarse keys that are global numbers.
/// 5: the halo and product plans and the local product's schedule; the row
/// partition; `P` as the rows of `P_ext`.
pub const ENTRY_VERSION: u32 = 5;

/// One distributed level's decisions on this rank.
#[derive(Clone, Debug)]
pub(crate) struct LevelEntry {
    /// The level's row partition.
    pub part: Partition,
    pub fine_block: usize,
    pub coarse_block: usize,
    /// The coarse level is the replicated coarsest.
    pub whole: bool,
    /// This rank's rows of `P` (empty in a loaded entry: they are the first
    /// rows of the product plan's `P_ext`).
    pub p: GlobalRows,
    /// The coarse partition (after consolidation).
    pub coarse: Partition,
    pub coarse_keys: Vec<u64>,
    pub omega: f64,
    pub aggregates: usize,
    pub unaggregated: usize,
    pub deficient: usize,
    /// Rank-deficient aggregates merged into neighbours.
    pub merged: usize,
    /// Rank-deficient aggregates dissolved.
    pub dissolved: usize,
    /// The coarse partition was rebalanced.
    pub rebalanced: bool,
    pub mis_rounds: usize,
    pub p_blocks: usize,
    /// What the level built from the decisions (set before the entry is
    /// written; always set in a loaded entry).
    pub plans: Option<LevelPlans>,
}

impl LevelEntry {
    /// The decisions alone (what is written is `P_ext`, not `P`; the plans
    /// are set once built).
    pub fn decisions(&self) -> Self {
        Self {
            part: self.part.clone(),
            coarse: self.coarse.clone(),
            coarse_keys: self.coarse_keys.clone(),
            p: GlobalRows::default(),
            plans: None,
            ..*self
        }
    }
}

/// A level's plans in a cache entry (module docs).
#[derive(Clone, Debug)]
pub(crate) struct LevelPlans {
    /// Per rank, the global columns of the level's operator this rank sends
    /// it (the send half of its halo plan).
    pub a_sends: Vec<Vec<u64>>,
    /// The same for `P`'s halo plan (none when the coarse level is whole).
    pub p_sends: Vec<Vec<u64>>,
    pub product: ProductPlan,
    /// The local product's schedule (to write; a loaded one is read from the
    /// level's record once its patterns are known).
    pub schedule: Option<VariantSchedule>,
}

/// The fine problem's key (collective): hex of a hash of every row's global
/// pattern and near-null values, summed over rows (so the same on any rank
/// count), and of `options` (the setup's knobs as text).
pub(crate) fn problem_key<C: Comm + ?Sized>(
    comm: &C,
    local: &LocalMatrix,
    near_null: &[f64],
    modes: usize,
    options: &str,
) -> String {
    let (b, _) = local.block_shape();
    let owned = local.owned_cols();
    let n_owned = local.n_owned_cols();
    let nn = b * modes;
    // Rows in parallel: the lanes are wrapping sums, so the order does not matter.
    let first = local.rows().start;
    let row_lanes = |i: usize| -> [u64; 4] {
        let g = first + i;
        let mut h = blake3::Hasher::new();
        h.update(&(g as u64).to_le_bytes());
        for &c in &local.col_idx()[local.row_ptr()[i]..local.row_ptr()[i + 1]] {
            let c = c as usize;
            let global = if c < n_owned {
                (owned.start + c) as u64
            } else {
                local.ghosts()[c - n_owned]
            };
            h.update(&global.to_le_bytes());
        }
        h.update(&[0xff; 8]);
        for v in &near_null[i * nn..(i + 1) * nn] {
            h.update(&v.to_bits().to_le_bytes());
        }
        let d = h.finalize();
        let mut lanes = [0u64; 4];
        for (lane, chunk) in lanes.iter_mut().zip(d.as_bytes().chunks_exact(8)) {
            *lane = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        lanes
    };
    let lanes = (0..local.n_rows())
        .into_par_iter()
        .map(row_lanes)
        .reduce(|| [0u64; 4], |x, y| std::array::from_fn(|k| x[k].wrapping_add(y[k])));
    // Lanes travel as exact halves (u32 in f64), summed on rank 0 and broadcast.
    let halves: Vec<f64> = lanes
        .iter()
        .flat_map(|&l| [(l >> 32) as f64, (l & 0xffff_ffff) as f64])
        .collect();
    let mut total = [0.0f64; 8];
    if let Some(all) = comm.gather(0, &halves) {
        let mut sum = [0u64; 4];
        for rank in all.chunks_exact(8) {
            for (k, s) in sum.iter_mut().enumerate() {
                *s = s.wrapping_add(((rank[2 * k] as u64) << 32) | rank[2 * k + 1] as u64);
            }
        }
        for (k, s) in sum.iter().enumerate() {
            total[2 * k] = (s >> 32) as f64;
            total[2 * k + 1] = (s & 0xffff_ffff) as f64;
        }
    }
    comm.broadcast(0, &mut total);
    let mut h = blake3::Hasher::new();
    h.update(format!("ptap-dist entry v{ENTRY_VERSION}; blocks {b}, modes {modes}; {options}").as_bytes());
    for v in total {
        h.update(&(v as u64).to_le_bytes());
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The entry of rank `rank` of `ranks` for `key` in `dir`.
pub(crate) fn entry_path(dir: &Path, key: &str, ranks: usize, rank: usize) -> PathBuf {
    dir.join(format!("dist-{key}-np{ranks}-r{rank}.ptapsched"))
}

/// The rank counts other than `ranks` with entries for `key` in `dir`.
pub(crate) fn other_rank_counts(dir: &Path, key: &str, ranks: usize) -> Vec<usize> {
    let prefix = format!("dist-{key}-np");
    let mut found: Vec<usize> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_prefix(&prefix)?.strip_suffix("-r0.ptapsched")?.parse().ok()
            })
            .filter(|&n| n != ranks)
            .collect()
        })
        .unwrap_or_default();
    found.sort_unstable();
    found
}

fn problem_line(key: &str, ranks: usize, rank: usize) -> String {
    format!("ptap-dist entry v{ENTRY_VERSION} key {key} ranks {ranks} rank {rank}")
}

/// Per-rank lists as `(ptr over ranks, concatenation)`.
fn flatten(lists: &[Vec<u64>]) -> (Vec<u64>, Vec<u64>) {
    let mut ptr = vec![0u64];
    let mut all = Vec::new();
    for l in lists {
        all.extend_from_slice(l);
        ptr.push(all.len() as u64);
    }
    (ptr, all)
}

fn u64s(v: &[usize]) -> Vec<u64> {
    v.iter().map(|&x| x as u64).collect()
}

fn links(v: &[Link]) -> Vec<u64> {
    v.iter()
        .flat_map(|l| [l.rank as u64, l.start as u64, l.len as u64])
        .collect()
}

/// Writes this rank's entry (atomically).
pub(crate) fn store(path: &Path, key: &str, ranks: usize, rank: usize, levels: &[LevelEntry]) -> Result<(), String> {
    let records = levels
        .iter()
        .enumerate()
        .map(|(l, e)| {
            let plans = e.plans.as_ref().ok_or_else(|| format!("level {l} has no plans"))?;
            let schedule = plans
                .schedule
                .as_ref()
                .ok_or_else(|| format!("level {l} has no schedule"))?;
            let mut rec = schedule.to_record(l as u32, e.fine_block, e.coarse_block);
            rec.sizes.extend(
                [
                    ("ranks", ranks),
                    ("rank", rank),
                    ("whole", usize::from(e.whole)),
                    ("aggregates", e.aggregates),
                    ("unaggregated", e.unaggregated),
                    ("deficient", e.deficient),
                    ("merged", e.merged),
                    ("dissolved", e.dissolved),
                    ("rebalanced", usize::from(e.rebalanced)),
                    ("mis_rounds", e.mis_rounds),
                    ("p_blocks", e.p_blocks),
                ]
                .iter()
                .map(|(n, v)| (format!("dist.{n}"), *v as u64)),
            );
            let pp = &plans.product;
            let (a_ptr, a_cols) = flatten(&plans.a_sends);
            let (p_ptr, p_cols) = flatten(&plans.p_sends);
            let mut arrays = vec![
                NamedArray::u64("dist.part_starts", u64s(e.part.starts())),
                NamedArray::u64("dist.coarse_starts", u64s(e.coarse.starts())),
                NamedArray::u64("dist.coarse_keys", e.coarse_keys.clone()),
                NamedArray::f64("dist.omega", vec![e.omega]),
                NamedArray::u64("dist.a.send_ptr", a_ptr),
                NamedArray::u64("dist.a.send_cols", a_cols),
                NamedArray::u64("dist.p.send_ptr", p_ptr),
                NamedArray::u64("dist.p.send_cols", p_cols),
                NamedArray::u64("dist.p_ext.row_ptr", u64s(&pp.p_row_ptr)),
                NamedArray::u32("dist.p_ext.cols", pp.p_cols.clone()),
                NamedArray::f64("dist.p_ext.values", pp.p_values.clone()),
                NamedArray::u32("dist.p_ext.cext", pp.cext.clone()),
            ];
            match &pp.out {
                PlanOutput::Owners {
                    mine,
                    sends,
                    recvs,
                    maps,
                    next_row_ptr,
                    next_cols,
                } => {
                    let (maps_ptr, maps_all) = flatten(
                        &maps
                            .iter()
                            .map(|m| m.iter().map(|&k| u64::from(k)).collect())
                            .collect::<Vec<Vec<u64>>>(),
                    );
                    arrays.extend([
                        NamedArray::u64("dist.out.mine", vec![mine.start as u64, mine.end as u64]),
                        NamedArray::u64("dist.out.sends", links(sends)),
                        NamedArray::u64("dist.out.recvs", links(recvs)),
                        NamedArray::u64("dist.out.maps_ptr", maps_ptr),
                        NamedArray::u32("dist.out.maps", maps_all.into_iter().map(|k| k as u32).collect()),
                        NamedArray::u64("dist.next.row_ptr", u64s(next_row_ptr)),
                        NamedArray::u32("dist.next.cols", next_cols.clone()),
                    ]);
                }
                PlanOutput::Everyone { pos, row_ptr, cols } => arrays.extend([
                    NamedArray::u32("dist.out.pos", pos.clone()),
                    NamedArray::u64("dist.whole.row_ptr", u64s(row_ptr)),
                    NamedArray::u32("dist.whole.cols", cols.clone()),
                ]),
            }
            rec.arrays.extend(arrays);
            Ok(rec)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let bundle = ScheduleBundle {
        created_by: format!("ptap-dist {}", env!("CARGO_PKG_VERSION")),
        problem: problem_line(key, ranks, rank),
        records,
    };
    write_bundle(path, &bundle).map(|_| ()).map_err(|e| e.to_string())
}

/// What is wrong with an entry the file layer refused, in the cache's words:
/// the schedule-file messages advise re-running `ptap inspect`, but a
/// per-rank entry is rebuilt by the run itself (the caller says so).
fn entry_error(path: &Path, err: ptap_schedules::ScheduleFileError) -> String {
    use ptap_schedules::ScheduleFileError as E;
    let name = path.display();
    match err {
        E::NotASchedule { .. } => format!("schedule cache entry {name} is not a ptap schedule file"),
        E::Version { found, supported, .. } => {
            format!("schedule cache entry {name} has format version {found}, this build reads {supported}")
        }
        E::Truncated { expected, actual, .. } => {
            format!("schedule cache entry {name} is truncated ({actual} bytes of {expected})")
        }
        E::Corrupt { .. } => format!("schedule cache entry {name} is corrupt (checksum mismatch)"),
        E::Untrusted { .. } => format!(
            "schedule cache entry {name} was not written by this user's ptap (its integrity tag does not verify)"
        ),
        E::Invalid { why, .. } => format!("schedule cache entry {name} is malformed ({why})"),
        E::MissingArray { level, name: array, .. } => {
            format!("schedule cache entry {name} has no array `{array}` at level {level} (an older layout)")
        }
        E::WrongArrayType {
            level,
            name: array,
            expected,
            found,
            ..
        } => format!("schedule cache entry {name} stores `{array}` at level {level} as {found}, not {expected}"),
        E::ForeignEndian { .. } => {
            format!("schedule cache entry {name} was written on a machine of the other byte order")
        }
        other => format!("schedule cache entry {name} cannot be read ({other})"),
    }
}

/// A loaded entry: its levels, and the mapped file the local products'
/// schedules are read from ([`VariantSchedule::from_record`], level by level).
pub(crate) struct Loaded {
    pub bundle: Arc<MappedBundle>,
    pub levels: Vec<LevelEntry>,
}

/// `ptr`'s lists over `all` (per rank), checked: `ranks + 1` offsets from 0,
/// not decreasing, ending at `all`'s length.
fn unflatten<T: Copy>(ptr: &[u64], all: &[T], ranks: usize) -> Option<Vec<Vec<T>>> {
    if ptr.len() != ranks + 1 || ptr[0] != 0 || ptr.windows(2).any(|w| w[0] > w[1]) || ptr[ranks] != all.len() as u64 {
        return None;
    }
    Some(
        ptr.windows(2)
            .map(|w| all[w[0] as usize..w[1] as usize].to_vec())
            .collect(),
    )
}

fn to_links(v: &[u64]) -> Option<Vec<Link>> {
    (v.len() % 3 == 0).then(|| {
        v.chunks_exact(3)
            .map(|c| Link {
                rank: c[0] as usize,
                start: c[1] as usize,
                len: c[2] as usize,
            })
            .collect()
    })
}

/// Loads and checks this rank's entry: the rows of partition `part` with
/// `fine_block` blocks on level 0, whose padded local pattern (the product
/// inspector's, [`crate::product`]) has fingerprint `level0`; `modes` coarse
/// columns a block. Every check that needs no other rank and no level below
/// the first is made here, before any collective; the product plans are
/// checked against each level's sizes as it is rebuilt.
pub(crate) fn load(
    path: &Path,
    key: &str,
    (ranks, rank): (usize, usize),
    level0: &PatternFingerprint,
    (part, fine_block, modes): (&Partition, usize, usize),
) -> Result<Loaded, String> {
    let name = path.display();
    let bundle = Arc::new(MappedBundle::open(path).map_err(|e| entry_error(path, e))?);
    if bundle.problem() != problem_line(key, ranks, rank) {
        let first = bundle.record(0);
        let size = |n: &str| first.as_ref().and_then(|r| r.size(n));
        return Err(match (size("dist.ranks"), size("dist.rank")) {
            (Some(n), Some(r)) if (n, r) != (ranks as u64, rank as u64) => {
                format!("schedule cache entry {name} was written for rank {r} of {n} ranks, not rank {rank} of {ranks}")
            }
            _ => format!(
                "schedule cache entry {name} is not this problem's entry for rank {rank} of {ranks} (it says \"{}\")",
                bundle.problem()
            ),
        });
    }
    let bad = |l: usize, why: String| format!("schedule cache entry {name} is malformed at level {l} ({why})");
    let mut out: Vec<LevelEntry> = Vec::with_capacity(bundle.len());
    let (mut level_part, mut b) = (part.clone(), fine_block);
    for (l, r) in bundle.records().enumerate() {
        let e = out_of(path, &r, l, (ranks, rank), (&level_part, b, modes), level0)?;
        level_part = e.coarse.clone();
        b = modes;
        out.push(e);
        if out[l].whole != (l + 1 == bundle.len()) {
            return Err(bad(l, "the replicated coarsest level is not the last".into()));
        }
    }
    if out.is_empty() {
        return Err(format!("schedule cache entry {name} holds no level"));
    }
    Ok(Loaded { bundle, levels: out })
}

/// Level `l`'s record `r` as a [`LevelEntry`], checked (see [`load`]): the
/// level's rows are `part`'s, `b x modes` blocks of `P`.
fn out_of(
    path: &Path,
    r: &RecordView<'_>,
    l: usize,
    (ranks, rank): (usize, usize),
    (part, b, modes): (&Partition, usize, usize),
    level0: &PatternFingerprint,
) -> Result<LevelEntry, String> {
    let name = path.display();
    let bad = |why: String| format!("schedule cache entry {name} is malformed at level {l} ({why})");
    if r.level() as usize != l {
        return Err(bad(format!("record {l} is level {}", r.level())));
    }
    let size = |n: &str| {
        r.size(&format!("dist.{n}"))
            .ok_or_else(|| bad(format!("no size `dist.{n}`")))
    };
    if (size("ranks")?, size("rank")?) != (ranks as u64, rank as u64) {
        return Err(bad("its rank and rank count differ from the file's".into()));
    }
    let e = |err: ptap_schedules::ScheduleFileError| entry_error(path, err);
    let u64s = |n: &str| r.array_u64(n).map_err(e);
    let usizes = |n: &str| -> Result<Vec<usize>, String> { Ok(u64s(n)?.iter().map(|&k| k as usize).collect()) };
    let u32s = |n: &str| r.array_u32(n).map_err(e);
    // The split first: another split changes the rows' pattern too, and the
    // split is what the sentence should name.
    let stored_part = Partition::new(usizes("dist.part_starts")?).map_err(|err| bad(err.to_string()))?;
    if &stored_part != part {
        return Err(format!(
            "schedule cache entry {name} was written for the split {:?} of level {l}'s rows, not this run's {:?}",
            stored_part.starts(),
            part.starts()
        ));
    }
    if l == 0 {
        if let Some(d) = r.a_fingerprint().difference(level0) {
            return Err(format!(
                "schedule cache entry {name} was built for another pattern of this rank's rows: {d}"
            ));
        }
    }
    let (fb, cb) = (r.fine_block() as usize, r.coarse_block() as usize);
    if fb != b || cb != modes {
        return Err(bad(format!("{fb}x{cb} blocks of P where {b}x{modes} are expected")));
    }
    let starts = usizes("dist.coarse_starts")?;
    if starts.len() != ranks + 1 {
        return Err(bad(format!(
            "a coarse partition of {} ranks",
            starts.len().saturating_sub(1)
        )));
    }
    let coarse = Partition::new(starts).map_err(|err| bad(err.to_string()))?;
    let coarse_keys = u64s("dist.coarse_keys")?.to_vec();
    let omega = r.array_f64("dist.omega").map_err(e)?;
    if omega.len() != 1 || !omega[0].is_finite() {
        return Err(bad("omega is not one finite number".into()));
    }
    if coarse_keys.len() != coarse.range(rank).len() {
        return Err(bad("the coarse keys do not match the coarse partition".into()));
    }
    let whole = size("whole")? != 0;
    let sends = |which: &str| -> Result<Vec<Vec<u64>>, String> {
        unflatten(
            u64s(&format!("dist.{which}.send_ptr"))?,
            u64s(&format!("dist.{which}.send_cols"))?,
            ranks,
        )
        .ok_or_else(|| {
            bad(format!(
                "the send lists of {which}'s halo plan do not cover {ranks} ranks"
            ))
        })
    };
    let (a_sends, p_sends) = (sends("a")?, sends("p")?);
    if whole && p_sends.iter().any(|s| !s.is_empty()) {
        return Err(bad("P into the replicated level has a halo plan".into()));
    }
    let out = if whole {
        PlanOutput::Everyone {
            pos: u32s("dist.out.pos")?.to_vec(),
            row_ptr: usizes("dist.whole.row_ptr")?,
            cols: u32s("dist.whole.cols")?.to_vec(),
        }
    } else {
        let mine = u64s("dist.out.mine")?;
        if mine.len() != 2 {
            return Err(bad("the product's own rows are not one range".into()));
        }
        let maps = unflatten(u64s("dist.out.maps_ptr")?, u32s("dist.out.maps")?, ranks)
            .ok_or_else(|| bad(format!("the product's maps do not cover {ranks} ranks")))?;
        let links = |n: &str| to_links(u64s(n)?).ok_or_else(|| bad(format!("`{n}` is not a list of links")));
        PlanOutput::Owners {
            mine: mine[0] as usize..mine[1] as usize,
            sends: links("dist.out.sends")?,
            recvs: links("dist.out.recvs")?,
            maps,
            next_row_ptr: usizes("dist.next.row_ptr")?,
            next_cols: u32s("dist.next.cols")?.to_vec(),
        }
    };
    Ok(LevelEntry {
        part: stored_part,
        fine_block: fb,
        coarse_block: cb,
        whole,
        p: GlobalRows::default(),
        coarse,
        coarse_keys,
        omega: omega[0],
        aggregates: size("aggregates")? as usize,
        unaggregated: size("unaggregated")? as usize,
        deficient: size("deficient")? as usize,
        merged: size("merged")? as usize,
        dissolved: size("dissolved")? as usize,
        rebalanced: size("rebalanced")? != 0,
        mis_rounds: size("mis_rounds")? as usize,
        p_blocks: size("p_blocks")? as usize,
        plans: Some(LevelPlans {
            a_sends,
            p_sends,
            product: ProductPlan {
                p_row_ptr: usizes("dist.p_ext.row_ptr")?,
                p_cols: u32s("dist.p_ext.cols")?.to_vec(),
                // The largest array: copied out of the mapping in parallel.
                p_values: r
                    .array_f64("dist.p_ext.values")
                    .map_err(e)?
                    .par_iter()
                    .copied()
                    .collect(),
                cext: u32s("dist.p_ext.cext")?.to_vec(),
                out,
            },
            schedule: None,
        }),
    })
}
