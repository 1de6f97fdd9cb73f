//! Per-rank entries of the schedule cache: what the distributed mesh setup
//! decided on this rank, written once and loaded by a later run at the same
//! rank count ([`crate::setup::build_hierarchy_cached`]).
//!
//! **What an entry holds.** One file per rank,
//! `dist-<key>-np<N>-r<R>.ptapsched`, in the schedule file format of
//! `ptap_schedules::file` (versioned, checksummed, tagged with this user's
//! key, every array bounds-checked on load), one record per distributed
//! level: this rank's rows of the level's `P` (row pointers, global coarse
//! columns, values), the coarse partition after consolidation, the coarse
//! nodes' keys (MIS priorities and smoother start vectors of the level
//! below), `omega`, whether the next level is the replicated coarsest, the
//! level's counts for the report, and the fingerprint of the rank's local
//! operator pattern. Loading skips the strength graph, the MIS rounds, the
//! tentative prolongator's QR, the eigen-estimate, smoothing and filtering;
//! the halo plans and the rank-local product inspection are derived again
//! from the loaded `P` (their all-to-all of index lists and the serial
//! symbolic product), so the hierarchy, the iterations and the solution are
//! the bits of the run that wrote the entry.
//!
//! **The key.** A hash of the fine operator's pattern (global numbers) and
//! near-null space, summed row by row so it does not depend on the rank
//! count, and of the options that shape the setup. The file name adds the
//! rank count and the rank; every record repeats them and the problem line
//! names the key, so an entry renamed for another rank, rank count or problem
//! is refused in one sentence, as are a truncated or corrupt file (checksum),
//! one edited by someone without this user's key (tag), and one whose level
//! patterns are not this run's (fingerprints). The caller reports the
//! sentence and rebuilds; every rank agrees on load-or-rebuild first, so a
//! bad entry on one rank never leaves the others waiting.
use crate::comm::Comm;
use crate::local::LocalMatrix;
use crate::partition::Partition;
use crate::product::GlobalRows;
use ptap_schedules::file::{
    fingerprint, write_bundle, MappedBundle, NamedArray, PatternFingerprint, ScheduleBundle, ScheduleRecord,
};
use ptap_sparse::BlockPattern;
use std::path::{Path, PathBuf};

/// The layout of a record this build writes and reads (sizes and arrays);
/// part of every entry's problem line, so an older layout is refused.
/// 4: natural-order aggregation and coarse keys that are global numbers.
pub const ENTRY_VERSION: u32 = 4;

/// One distributed level's decisions on this rank.
#[derive(Clone, Debug)]
pub(crate) struct LevelEntry {
    /// Fingerprint of the level's local operator pattern (local numbering).
    pub a: PatternFingerprint,
    pub fine_block: usize,
    pub coarse_block: usize,
    /// The coarse level is the replicated coarsest.
    pub whole: bool,
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
    let mut lanes = [0u64; 4];
    let nn = b * modes;
    for (i, g) in local.rows().enumerate() {
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
        for (lane, chunk) in lanes.iter_mut().zip(d.as_bytes().chunks_exact(8)) {
            *lane = lane.wrapping_add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
    }
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

/// Writes this rank's entry (atomically).
pub(crate) fn store(path: &Path, key: &str, ranks: usize, rank: usize, levels: &[LevelEntry]) -> Result<(), String> {
    let records = levels
        .iter()
        .enumerate()
        .map(|(l, e)| {
            let p_pattern = BlockPattern::new(e.p.nrows(), e.coarse.nrows(), e.p.row_ptr.clone(), e.p.cols.clone())
                .map_err(|err| format!("level {l}: {err}"))?;
            Ok(ScheduleRecord {
                level: l as u32,
                variant: "dist-level".to_string(),
                fine_block: e.fine_block as u32,
                coarse_block: e.coarse_block as u32,
                a: e.a.clone(),
                p: fingerprint(&p_pattern),
                sizes: [
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
                .map(|(n, v)| (n.to_string(), *v as u64))
                .collect(),
                arrays: vec![
                    NamedArray::u64("p_row_ptr", e.p.row_ptr.iter().map(|&k| k as u64).collect()),
                    NamedArray::u32("p_cols", e.p.cols.clone()),
                    NamedArray::f64("p_values", e.p.values.clone()),
                    NamedArray::u64("coarse_starts", e.coarse.starts().iter().map(|&s| s as u64).collect()),
                    NamedArray::u64("coarse_keys", e.coarse_keys.clone()),
                    NamedArray::f64("omega", vec![e.omega]),
                ],
            })
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

/// Loads and checks this rank's entry: `rows` block rows of `fine_block` on
/// level 0 with local pattern `level0`, `modes` coarse columns a block.
/// Every check that needs no other rank is made here, before any collective.
pub(crate) fn load(
    path: &Path,
    key: &str,
    (ranks, rank): (usize, usize),
    level0: &PatternFingerprint,
    (rows, fine_block, modes): (usize, usize, usize),
) -> Result<Vec<LevelEntry>, String> {
    let name = path.display();
    let bundle = MappedBundle::open(path).map_err(|e| entry_error(path, e))?;
    if bundle.problem() != problem_line(key, ranks, rank) {
        let first = bundle.record(0);
        let size = |n: &str| first.as_ref().and_then(|r| r.size(n));
        return Err(match (size("ranks"), size("rank")) {
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
    let (mut n_own, mut b) = (rows, fine_block);
    for (l, r) in bundle.records().enumerate() {
        if r.level() as usize != l || r.variant() != "dist-level" {
            return Err(bad(
                l,
                format!("record {l} is level {} of kind {}", r.level(), r.variant()),
            ));
        }
        if l == 0 {
            if let Some(d) = r.a_fingerprint().difference(level0) {
                return Err(format!(
                    "schedule cache entry {name} was built for another pattern of this rank's rows: {d}"
                ));
            }
        }
        let size = |n: &str| r.size(n).ok_or_else(|| bad(l, format!("no size `{n}`")));
        if (size("ranks")?, size("rank")?) != (ranks as u64, rank as u64) {
            return Err(bad(l, "its rank and rank count differ from the file's".into()));
        }
        let (fb, cb) = (r.fine_block() as usize, r.coarse_block() as usize);
        if fb != b || cb != modes {
            return Err(bad(l, format!("{fb}x{cb} blocks of P where {b}x{modes} are expected")));
        }
        let e = |err: ptap_schedules::ScheduleFileError| entry_error(path, err);
        let row_ptr: Vec<usize> = r
            .array_u64("p_row_ptr")
            .map_err(e)?
            .iter()
            .map(|&k| k as usize)
            .collect();
        let cols = r.array_u32("p_cols").map_err(e)?.to_vec();
        let values = r.array_f64("p_values").map_err(e)?.to_vec();
        let starts: Vec<usize> = r
            .array_u64("coarse_starts")
            .map_err(e)?
            .iter()
            .map(|&s| s as usize)
            .collect();
        let coarse_keys = r.array_u64("coarse_keys").map_err(e)?.to_vec();
        let omega = r.array_f64("omega").map_err(e)?;
        if starts.len() != ranks + 1 {
            return Err(bad(
                l,
                format!("a coarse partition of {} ranks", starts.len().saturating_sub(1)),
            ));
        }
        let coarse = Partition::new(starts).map_err(|err| bad(l, err.to_string()))?;
        let nc = coarse.nrows();
        if row_ptr.len() != n_own + 1
            || row_ptr[0] != 0
            || row_ptr.windows(2).any(|w| w[0] > w[1])
            || row_ptr[n_own] != cols.len()
        {
            return Err(bad(
                l,
                format!("P's row pointers do not describe {n_own} rows of {} blocks", cols.len()),
            ));
        }
        if let Some(c) = cols.iter().find(|&&c| c as usize >= nc) {
            return Err(bad(l, format!("a column {c} of P beyond the {nc} coarse rows")));
        }
        if values.len() != cols.len() * fb * cb || omega.len() != 1 || !omega[0].is_finite() {
            return Err(bad(l, "P's values or omega have the wrong length".into()));
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(bad(l, format!("a value {v} of P is not finite")));
        }
        if coarse_keys.len() != coarse.range(rank).len() {
            return Err(bad(l, "the coarse keys do not match the coarse partition".into()));
        }
        let whole = size("whole")? != 0;
        out.push(LevelEntry {
            a: r.a_fingerprint(),
            fine_block: fb,
            coarse_block: cb,
            whole,
            p: GlobalRows { row_ptr, cols, values },
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
        });
        n_own = out[l].coarse.range(rank).len();
        b = modes;
        if whole != (l + 1 == bundle.len()) {
            return Err(bad(l, "the replicated coarsest level is not the last".into()));
        }
    }
    if out.is_empty() {
        return Err(format!("schedule cache entry {name} holds no level"));
    }
    Ok(out)
}
