//! Inspectors of the variants beyond V0 (the paper's section `sec:variants`).
//!
//! Every schedule here is built from a [`TwoPassSchedule`] (the patterns of
//! `W = A P`, `R = P^T` and `A_c`), so all variants produce `A_c` over the same
//! pattern. Contribution lists are recorded in V0's accumulation order: slot
//! `(i, k)` of `W` sums `A[i,l] P[l,k]` over `A`'s row `i` in column order, and
//! slot `(I, K)` of `A_c` sums `R[I,j] W[j,K]` over `R`'s row `I` in column
//! order. An executor that keeps that order per output element reproduces V0
//! bit for bit; the docs of each schedule say whether it does.
use crate::two_pass::TwoPassSchedule;
use crate::SharedArray;
use ptap_sparse::par::{balanced_row_chunks, default_chunk_count, par_concat, par_offsets};
use ptap_sparse::spgemm::spgemm_symbolic;
use ptap_sparse::BlockPattern;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

#[doc(hidden)]
pub mod reference;

/// Column-to-slot map of one row of `pattern`, written into `map` (no search later).
fn fill_slot_map(pattern: &BlockPattern, row: usize, map: &mut [u32]) {
    for k in pattern.row_range(row) {
        map[pattern.col_idx()[k] as usize] = k as u32;
    }
}

/// Contributions grouped by output slot: slot `s` owns pairs
/// `ptr[s]..ptr[s+1]` of `(x, y)` block indices, in V0's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlotRuns {
    pub ptr: SharedArray<u64>,
    pub x: SharedArray<u32>,
    pub y: SharedArray<u32>,
}

impl SlotRuns {
    pub fn slots(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
    pub fn contributions(&self) -> usize {
        self.x.len()
    }
    #[inline]
    pub fn run(&self, s: usize) -> Range<usize> {
        self.ptr[s] as usize..self.ptr[s + 1] as usize
    }
}

/// Slot runs cut into contiguous chunks of at most `max_len` contributions
/// ([`SlotRuns::split`]), so that a stage of few, long runs (the symmetric
/// pair's `P^T W'` on a small coarse level: under one wave of warps, its
/// longest run 3x the mean) spreads over more warps. Chunk `c` is the run
/// `runs.ptr[c]..runs.ptr[c + 1]` of the original `x`, `y` arrays (cutting
/// keeps their order), and slot `s` owns chunks `first[s]..first[s + 1]`
/// (at least one, so an empty run is one empty chunk). Adding a slot's chunk
/// sums in chunk order gives the same bytes for the same inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplitRuns {
    pub runs: SlotRuns,
    pub first: Vec<u32>,
}

impl SplitRuns {
    pub fn chunks(&self) -> usize {
        self.runs.slots()
    }
}

impl SlotRuns {
    /// The runs cut into chunks of at most `max_len` (at least 1)
    /// contributions: a run of `n` into `ceil(n / max_len)` near-equal pieces
    /// (the longest at most one longer than the shortest). `None` where the
    /// chunks would not fit `u32` indices. Derived from the (validated) runs
    /// alone: nothing new to store or check in a schedule file.
    pub fn split(&self, max_len: usize) -> Option<SplitRuns> {
        let max_len = max_len.max(1) as u64;
        let slots = self.slots();
        let mut first = Vec::with_capacity(slots + 1);
        let mut ptr = Vec::with_capacity(slots + 1);
        ptr.push(self.ptr.first().copied().unwrap_or(0));
        for s in 0..slots {
            first.push(u32::try_from(ptr.len() - 1).ok()?);
            let (a, n) = (self.ptr[s], self.ptr[s + 1] - self.ptr[s]);
            let c = n.div_ceil(max_len).max(1);
            ptr.extend((1..=c).map(|j| a + n * j / c));
        }
        first.push(u32::try_from(ptr.len() - 1).ok()?);
        Some(SplitRuns {
            runs: SlotRuns {
                ptr: ptr.into(),
                x: self.x.clone(),
                y: self.y.clone(),
            },
            first,
        })
    }
}

/// Consecutive disjoint slices of `rx` and `ry`, one pair per chunk of
/// `sizes` contributions, for the chunks to fill side by side.
fn split_chunks<'a>(rx: &'a mut [u32], ry: &'a mut [u32], sizes: &[usize]) -> Vec<(&'a mut [u32], &'a mut [u32])> {
    let mut slices = Vec::with_capacity(sizes.len());
    let (mut xrest, mut yrest) = (rx, ry);
    for &n in sizes {
        let (xh, xt) = xrest.split_at_mut(n);
        let (yh, yt) = yrest.split_at_mut(n);
        slices.push((xh, yh));
        (xrest, yrest) = (xt, yt);
    }
    slices
}

/// Builds slot runs of `C = X Y` over `C`'s pattern: row by row, contributions in
/// traversal order, counting-sorted by slot within the row (which keeps order).
/// `x_block(kx)` maps an `X` row entry to the block index recorded for it (lets
/// the `R W` stage record `P`'s block instead of `R`'s).
fn slot_runs(
    x: &BlockPattern,
    y: &BlockPattern,
    c: &BlockPattern,
    x_block: &(dyn Fn(usize) -> u32 + Sync),
) -> SlotRuns {
    let work = row_work(x, y);
    let chunks = balanced_row_chunks(&work, default_chunk_count(x.nrows()));
    // Every block product is one contribution, so each chunk's share of the
    // output is known up front: chunks write their contributions straight
    // into disjoint slices of the final arrays (no second copy).
    let sizes: Vec<usize> = chunks.par_iter().map(|r| work[r.clone()].iter().sum()).collect();
    let total: usize = sizes.iter().sum();
    let (mut rx, mut ry) = (vec![0u32; total], vec![0u32; total]);
    let slices = split_chunks(&mut rx, &mut ry, &sizes);
    let counts: Vec<Vec<u64>> = chunks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(rows, (xs, ys))| {
            let mut map = vec![u32::MAX; c.ncols()];
            let slots = c.row_ptr()[rows.end] - c.row_ptr()[rows.start];
            let mut counts = Vec::with_capacity(slots);
            let mut cursor: Vec<usize> = Vec::new();
            let mut start = 0;
            for i in rows.clone() {
                let cr = c.row_range(i);
                for k in cr.clone() {
                    map[c.col_idx()[k] as usize] = (k - cr.start) as u32;
                }
                let base_count = counts.len();
                counts.resize(base_count + cr.len(), 0u64);
                for kx in x.row_range(i) {
                    for &j in y.row(x.col_idx()[kx] as usize) {
                        counts[base_count + map[j as usize] as usize] += 1;
                    }
                }
                // Exclusive prefix within the row, then place in traversal order.
                cursor.clear();
                let mut acc = start;
                for s in 0..cr.len() {
                    cursor.push(acc);
                    acc += counts[base_count + s] as usize;
                }
                for kx in x.row_range(i) {
                    let l = x.col_idx()[kx] as usize;
                    for ky in y.row_range(l) {
                        let s = map[y.col_idx()[ky] as usize] as usize;
                        xs[cursor[s]] = x_block(kx);
                        ys[cursor[s]] = ky as u32;
                        cursor[s] += 1;
                    }
                }
                start = acc;
            }
            counts
        })
        .collect();
    let ptr = par_offsets(&counts);
    let runs = SlotRuns {
        ptr: ptr.into(),
        x: rx.into(),
        y: ry.into(),
    };
    debug_assert_eq!(runs.slots(), c.nnzb());
    runs
}

/// The pattern of `C = X Y` and its slot runs ([`spgemm_symbolic`] then
/// [`slot_runs`], the same arrays) in two walks of each row's products
/// instead of three: the first finds the row's columns and counts each
/// column's contributions, the second places them.
fn symbolic_slot_runs(
    x: &BlockPattern,
    y: &BlockPattern,
    x_block: &(dyn Fn(usize) -> u32 + Sync),
) -> (BlockPattern, SlotRuns) {
    let work = row_work(x, y);
    let chunks = balanced_row_chunks(&work, default_chunk_count(x.nrows()));
    let sizes: Vec<usize> = chunks.par_iter().map(|r| work[r.clone()].iter().sum()).collect();
    let total: usize = sizes.iter().sum();
    let (mut rx, mut ry) = (vec![0u32; total], vec![0u32; total]);
    let slices = split_chunks(&mut rx, &mut ry, &sizes);
    // Per chunk: row lengths, columns, and per slot its contribution count.
    type Part = (Vec<usize>, Vec<u32>, Vec<u64>);
    let parts: Vec<Part> = chunks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(rows, (xs, ys))| {
            // Per column: the row that last met it and, for that row, its
            // contributions so far, then its cursor into the chunk's slices.
            let mut marker = vec![u32::MAX; y.ncols()];
            let mut count = vec![0usize; y.ncols()];
            let (mut lens, mut cols, mut counts) = (Vec::with_capacity(rows.len()), Vec::new(), Vec::new());
            let mut start = 0;
            for i in rows.clone() {
                let first = cols.len();
                for &l in x.row(i) {
                    for &j in y.row(l as usize) {
                        let j = j as usize;
                        if marker[j] != i as u32 {
                            marker[j] = i as u32;
                            count[j] = 0;
                            cols.push(j as u32);
                        }
                        count[j] += 1;
                    }
                }
                cols[first..].sort_unstable();
                lens.push(cols.len() - first);
                // Exclusive prefix over the row's slots, in column order.
                for &j in &cols[first..] {
                    let n = count[j as usize];
                    counts.push(n as u64);
                    count[j as usize] = start;
                    start += n;
                }
                for kx in x.row_range(i) {
                    let l = x.col_idx()[kx] as usize;
                    for ky in y.row_range(l) {
                        let c = &mut count[y.col_idx()[ky] as usize];
                        xs[*c] = x_block(kx);
                        ys[*c] = ky as u32;
                        *c += 1;
                    }
                }
            }
            (lens, cols, counts)
        })
        .collect();
    let (lens, (cols, counts)): (Vec<_>, (Vec<_>, Vec<_>)) = parts.into_iter().map(|(l, c, n)| (l, (c, n))).unzip();
    let ((row_ptr, col_idx), ptr) = rayon::join(
        || rayon::join(|| par_offsets(&lens), || par_concat(&cols)),
        || par_offsets(&counts),
    );
    let c = BlockPattern::new(x.nrows(), y.ncols(), row_ptr, col_idx).expect("a product's rows are sorted, in range");
    let runs = SlotRuns {
        ptr: ptr.into(),
        x: rx.into(),
        y: ry.into(),
    };
    debug_assert_eq!(runs.slots(), c.nnzb());
    (c, runs)
}

/// Block multiplies of each row of `X Y`.
pub fn row_work(x: &BlockPattern, y: &BlockPattern) -> Vec<usize> {
    (0..x.nrows())
        .into_par_iter()
        .map(|i| x.row(i).iter().map(|&l| y.row(l as usize).len()).sum())
        .collect()
}

/// Contiguous slot ranges of about equal contribution count.
fn slot_tiles(runs: &SlotRuns, target_contributions: usize) -> SharedArray<u64> {
    let mut tiles = vec![0u64];
    let mut acc = 0usize;
    for s in 0..runs.slots() {
        acc += runs.run(s).len().max(1);
        if acc >= target_contributions {
            tiles.push(s as u64 + 1);
            acc = 0;
        }
    }
    if *tiles.last().unwrap() != runs.slots() as u64 {
        tiles.push(runs.slots() as u64);
    }
    tiles.into()
}

/// V2b: both stages as slot runs, slots grouped in tiles (contiguous slot
/// ranges). The `R W` stage records `P`'s block (the executor applies it
/// transposed), so no `R` is needed. **Bitwise identical to V0.**
#[derive(Clone, Debug)]
pub struct SlotTiledSchedule {
    pub base: Arc<TwoPassSchedule>,
    /// `W` slots: `x` = block of `A`, `y` = block of `P`.
    pub ap: SlotRuns,
    /// `A_c` slots: `x` = block of `P` (used as `P^T`), `y` = block of `W`.
    pub rw: SlotRuns,
    /// Slot boundaries of the tiles of each stage.
    pub ap_tiles: SharedArray<u64>,
    pub rw_tiles: SharedArray<u64>,
}

/// Contributions per tile the CPU executor targets (a few L2-resident output tiles).
pub const TILE_CONTRIBUTIONS: usize = 4096;

impl SlotTiledSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Self {
        let ap = slot_runs(&base.a, &base.p, &base.w, &|kx| kx as u32);
        let src = &base.r_source;
        let rw = slot_runs(&base.r, &base.w, &base.c, &|kx| src[kx]);
        let ap_tiles = slot_tiles(&ap, TILE_CONTRIBUTIONS);
        let rw_tiles = slot_tiles(&rw, TILE_CONTRIBUTIONS);
        Self {
            base,
            ap,
            rw,
            ap_tiles,
            rw_tiles,
        }
    }
}

/// The column-split assignment (the paper's section `sec:impl-cuda`): within
/// each window of `window` consecutive slots, slots are visited in order of
/// descending run length (stable), and each slot is owned by `b_c` lanes, one
/// output column per lane. Only the owning lane changes, never the order in
/// which an element sums its contributions. **Bitwise identical to V0.**
#[derive(Clone, Debug)]
pub struct ColumnSplitSchedule {
    pub tiled: SlotTiledSchedule,
    pub window: usize,
    /// Slot visiting order of each stage (a permutation within each window).
    pub ap_order: SharedArray<u32>,
    pub rw_order: SharedArray<u32>,
}

/// Slots per window: one 256-thread block of 6-lane groups on the GPU.
pub const COLUMN_SPLIT_WINDOW: usize = 42;

fn windowed_run_length_order(runs: &SlotRuns, window: usize) -> SharedArray<u32> {
    let n = runs.slots();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_chunks_mut(window.max(1)).for_each(|w| {
        w.sort_by_key(|&s| std::cmp::Reverse(runs.run(s as usize).len()));
    });
    order.into()
}

impl ColumnSplitSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>, window: usize) -> Self {
        let tiled = SlotTiledSchedule::inspect(base);
        let ap_order = windowed_run_length_order(&tiled.ap, window);
        let rw_order = windowed_run_length_order(&tiled.rw, window);
        Self {
            tiled,
            window,
            ap_order,
            rw_order,
        }
    }
}

/// An absent slot or `x` block in [`PairedRuns`].
pub const NO_BLOCK: u32 = u32::MAX;

/// The work units of one stage of the tensor-pair executor, built from the
/// stage's slot runs. With `width` 1 a unit is one slot and its entries are
/// the run's `(x, y)` pairs, interleaved so that a warp reads an entry with
/// one uniform 8-byte load. With `width` 2 a unit is the slots of one column
/// `K` in output rows `2r` and `2r + 1` (the second [`NO_BLOCK`] where only
/// one row has the column), and its entries `(x1, y, x2, y)` merge the two
/// runs by their `y` block: an entry where both runs hold `y` serves two
/// contributions with one `y` load; an absent side's `x` is [`NO_BLOCK`].
/// Each slot's own entries are its run in order, so each output element
/// still sums in V0's order.
///
/// The entries follow from the units and the runs, and only the device reads
/// them: it builds them from the runs it uploads. So neither the inspector nor
/// a schedule file holds them (`ent` is empty; at k = 16 level 0's would take
/// 654 MB, 16 bytes per entry); [`PairedRuns::rebuild`] builds them on the host, for tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairedRuns {
    /// Slots per unit: 1 or 2.
    pub width: usize,
    /// Per unit its entries `ptr[u]..ptr[u + 1]`.
    pub ptr: SharedArray<u64>,
    /// `width` slots per unit.
    pub slots: SharedArray<u32>,
    /// `2 width` indices per entry; empty but from [`PairedRuns::rebuild`] (see above).
    pub ent: SharedArray<u32>,
}

impl PairedRuns {
    pub fn units(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
    pub fn entries(&self) -> usize {
        self.ptr.last().map_or(0, |&e| e as usize)
    }
    /// Whether `ent` holds the entries (rebuilt, not inspected or loaded).
    pub fn has_entries(&self) -> bool {
        self.ent.len() == 2 * self.width * self.entries()
    }

    /// Whether `width`, `ptr` and `slots` are exactly the units the inspector
    /// builds from `runs` over `out` ([`PairedRuns::paired`] for width 2,
    /// [`PairedRuns::single`] for width 1): the same slots in the same order,
    /// each unit's pointer range as long as the merge of its runs. `runs` must
    /// be valid over `out` (pointers and indices checked). One parallel pass
    /// that reads `out`'s columns and the runs' `y` blocks, and writes nothing.
    pub fn matches(width: usize, ptr: &[u64], slots: &[u32], runs: &SlotRuns, out: &BlockPattern) -> bool {
        Self::check(width, ptr, slots, runs, out, false).is_ok()
    }

    /// [`PairedRuns::matches`], and with `tails` (width 2, the symmetric
    /// pair's `A P` units) also that a run whose last block is flagged
    /// [`DIAGONAL_FLAG`] (the caller has checked that only a run's last block
    /// may be) merges it among its unit's last two entries: where the device's
    /// pair kernel halves it (`ptap_mma2h_*`'s tail step). The inspector's
    /// units always do: each run ends on its diagonal, and only row `2r + 1`'s
    /// diagonal has a larger `y` than row `2r`'s. The same single pass.
    pub fn check(
        width: usize,
        ptr: &[u64],
        slots: &[u32],
        runs: &SlotRuns,
        out: &BlockPattern,
        tails: bool,
    ) -> Result<(), UnitsMismatch> {
        let units = ptr.len().saturating_sub(1);
        if ptr.first() != Some(&0) || slots.len() != width * units || runs.slots() != out.nnzb() {
            return Err(UnitsMismatch::Units);
        }
        let fits = |ok: bool| if ok { Ok(()) } else { Err(UnitsMismatch::Units) };
        match width {
            1 => fits(
                units == runs.slots()
                    && ptr
                        .par_chunks(1 << 14)
                        .zip(runs.ptr.par_chunks(1 << 14))
                        .all(|(a, b)| a == b)
                    && slots
                        .par_chunks(1 << 14)
                        .enumerate()
                        .all(|(c, s)| s.iter().enumerate().all(|(i, &v)| v as usize == (c << 14) + i)),
            ),
            2 => {
                let pairs = out.nrows().div_ceil(2);
                let n = default_chunk_count(pairs);
                let chunk = |c: usize| pairs * c / n..pairs * (c + 1) / n;
                // Units per chunk of row pairs, then each chunk compares its own.
                let counts: Vec<usize> = (0..n)
                    .into_par_iter()
                    .map(|c| chunk(c).map(|r| pair_units(out, r, |_, _| {})).sum())
                    .collect();
                if counts.iter().sum::<usize>() != units {
                    return Err(UnitsMismatch::Units);
                }
                let starts: Vec<usize> = counts
                    .iter()
                    .scan(0, |acc, &k| {
                        *acc += k;
                        Some(*acc - k)
                    })
                    .collect();
                let flagged = |s: u32| {
                    let e = runs.ptr[s as usize + 1] as usize;
                    e > runs.ptr[s as usize] as usize && runs.x[e - 1] & DIAGONAL_FLAG != 0
                };
                let (units_ok, tails_ok) = (0..n)
                    .into_par_iter()
                    .map(|c| {
                        let mut u = starts[c];
                        let (mut ok, mut tail) = (true, true);
                        for r in chunk(c) {
                            pair_units(out, r, |s0, s1| {
                                let s1 = s1.map_or(NO_BLOCK, |s| s as u32);
                                ok = ok && slots[2 * u] as usize == s0 && slots[2 * u + 1] == s1;
                                if ok {
                                    let (len, last0, last1) = merged_tails(runs, s0, s1);
                                    ok = ptr[u + 1].checked_sub(ptr[u]) == Some(len as u64);
                                    tail = tail
                                        && (!tails
                                            || ((!flagged(s0 as u32) || last0 + 2 >= len)
                                                && (s1 == NO_BLOCK || !flagged(s1) || last1 + 2 >= len)));
                                }
                                u += 1;
                            });
                        }
                        (ok, tail)
                    })
                    .reduce(|| (true, true), |a, b| (a.0 && b.0, a.1 && b.1));
                fits(units_ok)?;
                if tails_ok {
                    Ok(())
                } else {
                    Err(UnitsMismatch::DiagonalOutsideTail)
                }
            }
            _ => Err(UnitsMismatch::Units),
        }
    }

    /// One unit per slot of `runs` (entries: its `(x, y)` interleaved, built
    /// where read, see [`PairedRuns`]).
    pub fn single(runs: &SlotRuns) -> Self {
        PairedRuns {
            width: 1,
            ptr: runs.ptr.clone(),
            slots: (0..runs.slots() as u32).collect::<Vec<_>>().into(),
            ent: SharedArray::default(),
        }
    }

    /// Units of the slots of one column in rows `2r`, `2r + 1` of `out` (the pattern `runs` fills).
    pub fn paired(runs: &SlotRuns, out: &BlockPattern) -> Self {
        let chunks = pair_chunks(runs, out);
        // Count the units first (a walk of `out`'s columns), then fill each
        // chunk's disjoint slices of the final arrays (as `slot_runs` does): no
        // per-chunk copies to concatenate.
        let units: Vec<usize> = chunks
            .par_iter()
            .map(|rp| rp.clone().map(|r| pair_units(out, r, |_, _| {})).sum())
            .collect();
        crate::laps::lap("pairs.count");
        Self::fill_pairs(runs, out, &chunks, &units)
    }

    /// [`PairedRuns::paired`]'s arrays from its chunks of row pairs and each
    /// chunk's number of units: every chunk fills its own slices. Each unit's
    /// pointer range is the merge's length; the entries themselves are not
    /// built (see [`PairedRuns`]).
    pub(crate) fn fill_pairs(
        runs: &SlotRuns,
        out: &BlockPattern,
        chunks: &[std::ops::Range<usize>],
        units: &[usize],
    ) -> Self {
        let total: usize = units.iter().sum();
        let (mut ptr, mut slots) = (vec![0u64; total + 1], vec![0u32; 2 * total]);
        let mut parts = Vec::with_capacity(chunks.len());
        let (mut prest, mut srest) = (&mut ptr[1..], &mut slots[..]);
        for &u in units {
            let (ph, pt) = prest.split_at_mut(u);
            let (sh, st) = srest.split_at_mut(2 * u);
            parts.push((ph, sh));
            (prest, srest) = (pt, st);
        }
        // Each chunk's end pointers counted from 0 (the merge's length alone: a
        // branch-free walk of the `y` blocks), then moved past the chunks before it.
        let ends: Vec<u64> = chunks
            .par_iter()
            .zip(parts.par_iter_mut())
            .map(|(rp, (ps, ss))| {
                let (mut u, mut end) = (0, 0u64);
                for r in rp.clone() {
                    pair_units(out, r, |s0, s1| {
                        let s1 = s1.map_or(NO_BLOCK, |s| s as u32);
                        ss[2 * u..2 * u + 2].copy_from_slice(&[s0 as u32, s1]);
                        end += merged_len(runs, s0, s1) as u64;
                        ps[u] = end;
                        u += 1;
                    });
                }
                end
            })
            .collect();
        let bases: Vec<u64> = ends
            .iter()
            .scan(0, |acc, &e| {
                *acc += e;
                Some(*acc - e)
            })
            .collect();
        parts.into_par_iter().zip(bases).for_each(|((ps, _), b)| {
            if b > 0 {
                ps.iter_mut().for_each(|p| *p += b);
            }
        });
        PairedRuns {
            width: 2,
            ptr: ptr.into(),
            slots: slots.into(),
            ent: SharedArray::default(),
        }
    }
}

/// Chunks of row pairs of `out` of about equal work (the runs' entries), for
/// [`PairedRuns::paired`].
pub(crate) fn pair_chunks(runs: &SlotRuns, out: &BlockPattern) -> Vec<std::ops::Range<usize>> {
    let pairs = out.nrows().div_ceil(2);
    let work: Vec<usize> = (0..pairs)
        .into_par_iter()
        .map(|r| {
            let rows = 2 * r..(2 * r + 2).min(out.nrows());
            let slots = out.row_ptr()[rows.start]..out.row_ptr()[rows.end];
            (runs.ptr[slots.end] - runs.ptr[slots.start]) as usize
        })
        .collect();
    balanced_row_chunks(&work, default_chunk_count(pairs))
}

/// The units of output rows `2r`, `2r + 1` of `out`, in order: `f(s0, s1)`
/// per unit (`s1` the second row's slot of the same column, if any). Returns
/// how many there were.
fn pair_units(out: &BlockPattern, r: usize, mut f: impl FnMut(usize, Option<usize>)) -> usize {
    let r0 = out.row_range(2 * r);
    let r1 = if 2 * r + 1 < out.nrows() {
        out.row_range(2 * r + 1)
    } else {
        0..0
    };
    let (c0, c1) = (&out.col_idx()[r0.clone()], &out.col_idx()[r1.clone()]);
    let (mut a, mut b, mut n) = (0, 0, 0);
    while a < c0.len() || b < c1.len() {
        // Columns ascend in both rows: equal columns pair up; a lone slot takes the first side.
        let (s0, s1) = match (c0.get(a), c1.get(b)) {
            (Some(x), Some(y)) if x == y => (r0.start + a, Some(r1.start + b)),
            (Some(x), Some(y)) if x < y => (r0.start + a, None),
            (Some(_), None) => (r0.start + a, None),
            _ => (r1.start + b, None),
        };
        if s0 < r0.end {
            a += 1;
            b += s1.is_some() as usize;
        } else {
            b += 1;
        }
        f(s0, s1);
        n += 1;
    }
    n
}

/// How many entries [`merge_runs`] makes of slots `s0` and `s1` (or [`NO_BLOCK`]).
fn merged_len(runs: &SlotRuns, s0: usize, s1: u32) -> usize {
    merged_tails(runs, s0, s1).0
}

/// How many entries [`merge_runs`] makes of slots `s0` and `s1` (or [`NO_BLOCK`]),
/// and the entries that merge each run's last block (`usize::MAX` for an empty or
/// absent run): the same walk, reading only the `y` blocks.
fn merged_tails(runs: &SlotRuns, s0: usize, s1: u32) -> (usize, usize, usize) {
    let y = &runs.y[..];
    let (mut a, ae) = (runs.ptr[s0] as usize, runs.ptr[s0 + 1] as usize);
    let (mut b, be) = if s1 == NO_BLOCK {
        (0, 0)
    } else {
        (runs.ptr[s1 as usize] as usize, runs.ptr[s1 as usize + 1] as usize)
    };
    let (mut n, mut last0, mut last1) = (0, usize::MAX, usize::MAX);
    while a < ae && b < be {
        let (u, v) = (y[a], y[b]);
        if u <= v && a + 1 == ae {
            last0 = n;
        }
        if v <= u && b + 1 == be {
            last1 = n;
        }
        a += (u <= v) as usize;
        b += (v <= u) as usize;
        n += 1;
    }
    // What is left of one run follows, an entry per block.
    if a < ae {
        last0 = n + (ae - a) - 1;
    }
    if b < be {
        last1 = n + (be - b) - 1;
    }
    (n + (ae - a) + (be - b), last0, last1)
}

/// The order-preserving merge by `y` block of the runs of slots `s0` and
/// `s1` (absent: `None`): `entry([x0, y, x1, y])` per merged entry, where a
/// `y` both runs hold serves both sides and an absent side's `x` is
/// [`NO_BLOCK`]. Whatever the runs hold, each side's entries are its run in
/// order and both sides of an entry name one `y`: [`PairedRuns::rebuild`]
/// builds the entries with it (the device's upload runs the same merge).
#[inline]
fn merge_runs(runs: &SlotRuns, s0: usize, s1: Option<usize>, mut entry: impl FnMut([u32; 4])) {
    let (x, y) = (&runs.x[..], &runs.y[..]);
    let (mut a, ae) = (runs.ptr[s0] as usize, runs.ptr[s0 + 1] as usize);
    let (mut b, be) = s1.map_or((0, 0), |s| (runs.ptr[s] as usize, runs.ptr[s + 1] as usize));
    loop {
        if a < ae {
            let u = y[a];
            if b < be && y[b] <= u {
                let v = y[b];
                if v == u {
                    entry([x[a], u, x[b], u]);
                    a += 1;
                } else {
                    entry([NO_BLOCK, v, x[b], v]);
                }
                b += 1;
            } else {
                entry([x[a], u, NO_BLOCK, u]);
                a += 1;
            }
        } else if b < be {
            entry([NO_BLOCK, y[b], x[b], y[b]]);
            b += 1;
        } else {
            break;
        }
    }
}

impl PairedRuns {
    /// The units `slots` (`width` per unit) with their entries rebuilt from
    /// `runs` on the host (a schedule file stores no entries: they follow from
    /// the slots and the runs; the device builds them the same way when it
    /// uploads a loaded schedule). `ptr` must be a pointer array over the
    /// units; each unit's merge must yield exactly `ptr[u + 1] - ptr[u]`
    /// entries, else `None`. The caller has checked every slot (below
    /// `runs.slots()`, the second side of a width-2 unit possibly [`NO_BLOCK`])
    /// and `runs` (pointers and indices), e.g. with [`PairedRuns::matches`];
    /// the entries are then right by construction. One parallel pass.
    pub fn rebuild(width: usize, ptr: SharedArray<u64>, slots: SharedArray<u32>, runs: &SlotRuns) -> Option<Self> {
        assert!(width == 1 || width == 2, "a unit pairs one or two slots");
        let units = ptr.len().saturating_sub(1);
        let total = ptr.last().map_or(0, |&t| t as usize);
        let stride = 2 * width;
        let mut ent = vec![0u32; stride * total];
        // Chunks of whole units holding about equal numbers of entries, each
        // filling its own slice of `ent`.
        let n = default_chunk_count(units).max(1);
        let mut bounds: Vec<usize> = (0..n)
            .map(|c| ptr.partition_point(|&e| (e as usize) * n < total * c).min(units))
            .collect();
        bounds.push(units);
        bounds.dedup();
        let mut parts = Vec::with_capacity(bounds.len());
        let mut rest = &mut ent[..];
        for w in bounds.windows(2) {
            let len = stride * (ptr[w[1]] - ptr[w[0]]) as usize;
            let (head, tail) = rest.split_at_mut(len);
            parts.push((w[0]..w[1], head));
            rest = tail;
        }
        let ok = parts.into_par_iter().all(|(us, es)| {
            let base = ptr[us.start] as usize;
            us.into_iter().all(|u| {
                let (lo, hi) = (ptr[u] as usize - base, ptr[u + 1] as usize - base);
                let s0 = slots[width * u] as usize;
                let mut k = lo;
                if width == 1 {
                    let run = runs.run(s0);
                    if run.len() != hi - lo {
                        return false;
                    }
                    for (q, e) in run.zip(es[2 * lo..2 * hi].chunks_exact_mut(2)) {
                        e.copy_from_slice(&[runs.x[q], runs.y[q]]);
                    }
                    return true;
                }
                let s1 = slots[2 * u + 1];
                let mut fits = true;
                merge_runs(runs, s0, (s1 != NO_BLOCK).then_some(s1 as usize), |q| {
                    if k < hi {
                        es[4 * k..4 * k + 4].copy_from_slice(&q);
                    } else {
                        fits = false;
                    }
                    k += 1;
                });
                fits && k == hi
            })
        });
        ok.then(|| PairedRuns {
            width,
            ptr,
            slots,
            ent: ent.into(),
        })
    }
}

/// The tensor-pair schedule: column split's (which the CPU executes, and
/// which the pairs are built from) and the device's work units: the `A P`
/// stage's slots paired by column ([`PairedRuns::paired`]), the `P^T W`
/// stage's one per unit with interleaved indices.
#[derive(Clone, Debug)]
pub struct TensorPairSchedule {
    pub split: Arc<ColumnSplitSchedule>,
    pub ap: PairedRuns,
    pub rw: PairedRuns,
}

impl TensorPairSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Self {
        let split = Arc::new(ColumnSplitSchedule::inspect(base, COLUMN_SPLIT_WINDOW));
        let ap = PairedRuns::paired(&split.tiled.ap, &split.tiled.base.w);
        let rw = PairedRuns::single(&split.tiled.rw);
        Self { split, ap, rw }
    }
}

/// Why stored pair units are not the inspector's ([`PairedRuns::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitsMismatch {
    /// Other slots, another order, or a pointer range not as long as its merge.
    Units,
    /// A flagged diagonal block merges three or more entries from its unit's end.
    DiagonalOutsideTail,
}

/// Bit 31 of an `x` index of the symmetric product's `A P` runs: the block is
/// on `A`'s diagonal and the stage halves it (`W' = (L + D/2) P`). A block
/// index below `2^31` leaves room for it (checked by the inspector).
pub const DIAGONAL_FLAG: u32 = 1 << 31;

/// The symmetric tensor pair (paper: `P^T A P = X + X^T`): for a symmetric
/// `A = L + D + L^T` (`L` strictly lower, `D` the diagonal blocks),
/// `X = P^T W'` with `W' = (L + D/2) P`. The `A P` stage runs only the
/// contributions `A[i,k] P[k,J]` with `k <= i` (about half of `A P`'s), its
/// diagonal ones marked with [`DIAGONAL_FLAG`] so the kernel halves them
/// (exact); `W'`'s pattern ([`Self::wh`]) is a subset of `W`'s, so `X` has
/// fewer contributions than `P^T W` too. `A_c = X + X^T` two ways, both
/// exactly symmetric: the folded units ([`FoldedRuns`]) sum `X[I,J] +
/// X[J,I]^T` per slot of `A_c`'s upper triangle and write both slots of the
/// transposed pair in one launch; or one unit per slot writes `X` and a last
/// pass writes `X[I,J] + X[J,I]^T` to both slots of each transposed pair
/// ([`Self::transpose`]). The device picks per level. Deterministic, not
/// bitwise V0 (the sums are reassociated; equal to rounding, as the tensor
/// pair).
///
/// The device's `A P` units are the tensor pair's, built over `W'` and these
/// runs.
/// On the host, the schedule runs V0 over [`Self::base`] (the algorithm buys a
/// CPU nothing it was measured for).
#[derive(Clone, Debug)]
pub struct TensorPairSymSchedule {
    pub base: Arc<TwoPassSchedule>,
    /// The pattern of `W' = (L + D/2) P`.
    pub wh: Arc<BlockPattern>,
    /// `W'` slots: `x` = block of `A` (its full value array; [`DIAGONAL_FLAG`]
    /// on diagonal blocks), `y` = block of `P`, in V0's order.
    pub ap: SlotRuns,
    /// `A_c` slots of `X`: `x` = block of `P` (applied transposed), `y` = block of `W'`.
    pub rw: SlotRuns,
    /// Column split's window order of the `A P` runs (the stage runs them
    /// with the tensor core's kernel where two output blocks do not fit the
    /// accumulator, as the tensor pair does).
    pub window: usize,
    pub ap_order: SharedArray<u32>,
    pub ap_pairs: PairedRuns,
    /// The `P^T W'` units over `A_c`'s upper triangle.
    pub rw_fold: FoldedRuns,
    /// Per slot `(I, J)` of `A_c`, the slot of `(J, I)` (the symmetrize
    /// pass's and the host's; the folded units name the mirrors themselves).
    pub transpose: SharedArray<u32>,
}

/// The symmetric pair's `P^T W'` units, folded onto `A_c`'s upper triangle:
/// `C_IJ = X_IJ + X_JI^T` with `X = P^T W'`, so one unit per slot `(I, J)`
/// with `I <= J`, in slot order, sums both. Half 0 of unit `u` is the run of
/// its slot `slots[2u]` (entries `(P_iI, W'_iJ)`, applied as `P_iI^T W'_iJ`),
/// half 1 the run of the mirror slot `slots[2u + 1]` = `(J, I)` (entries
/// `(P_iJ, W'_iI)`, applied with the roles swapped, `W'_iI^T P_iJ`: `X_JI^T`'s
/// term, the blocks having the same shape). One accumulator adds half 0's run
/// in order, then half 1's (the same bytes for the same inputs), and the unit
/// writes the sum to `(I, J)` and its transpose to `(J, I)`. A diagonal unit's
/// second slot is [`NO_BLOCK`] and its half 1 empty: it sums `X_II` and writes
/// `X_II + X_II^T`. Either way the result is exactly symmetric.
///
/// `ptr` bounds each half's entries (`2 units + 1` pointers). The entries are
/// the runs themselves, so neither the inspector nor a file holds them: the
/// device builds them from the runs as it does the width-1 units
/// ([`FoldedRuns::halves`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FoldedRuns {
    pub ptr: SharedArray<u64>,
    pub slots: SharedArray<u32>,
}

/// Why stored folded units are not the inspector's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("there are {slots} slots and {ptrs} pointers, but A_c's upper triangle has {units} units (2 slots and 2 pointers each, plus one)")]
    Shape { units: usize, slots: usize, ptrs: usize },
    #[error("unit {unit} names slot {slot}, which is not slot {unit} of A_c's upper triangle")]
    NotUpper { unit: usize, slot: u32 },
    #[error("unit {unit}'s second slot {slot} is not the mirror of its first (on the diagonal: absent)")]
    Mirror { unit: usize, slot: u32 },
    #[error("unit {unit}'s entry ranges are not as long as its slots' runs")]
    Length { unit: usize },
}

impl FoldedRuns {
    pub fn units(&self) -> usize {
        self.slots.len() / 2
    }
    pub fn entries(&self) -> usize {
        self.ptr.last().map_or(0, |&e| e as usize)
    }

    /// The units of `runs` (the `P^T W'` runs over `c`'s slots), `transpose`
    /// mapping every slot of `c` onto its mirror.
    pub fn fold(runs: &SlotRuns, c: &BlockPattern, transpose: &[u32]) -> Self {
        let (slots, lens) = fold_slots(runs, c, transpose);
        let mut ptr = Vec::with_capacity(lens.len() + 1);
        ptr.push(0u64);
        let mut acc = 0u64;
        for n in lens {
            acc += n;
            ptr.push(acc);
        }
        FoldedRuns {
            ptr: ptr.into(),
            slots: slots.into(),
        }
    }

    /// Whether `ptr` and `slots` are exactly the units [`FoldedRuns::fold`]
    /// builds, else the first difference. `runs` and `transpose` must be valid
    /// over `c` (the loader checked them).
    pub fn check(
        ptr: &[u64],
        slots: &[u32],
        runs: &SlotRuns,
        c: &BlockPattern,
        transpose: &[u32],
    ) -> Result<(), FoldError> {
        let (want, lens) = fold_slots(runs, c, transpose);
        let units = want.len() / 2;
        if slots.len() != want.len() || ptr.len() != want.len() + 1 || ptr[0] != 0 {
            return Err(FoldError::Shape {
                units,
                slots: slots.len(),
                ptrs: ptr.len(),
            });
        }
        let bad = (0..units).into_par_iter().find_first(|&u| {
            slots[2 * u..2 * u + 2] != want[2 * u..2 * u + 2]
                || (0..2).any(|h| ptr[2 * u + h + 1].checked_sub(ptr[2 * u + h]) != Some(lens[2 * u + h]))
        });
        match bad {
            None => Ok(()),
            Some(unit) if slots[2 * unit] != want[2 * unit] => Err(FoldError::NotUpper {
                unit,
                slot: slots[2 * unit],
            }),
            Some(unit) if slots[2 * unit + 1] != want[2 * unit + 1] => Err(FoldError::Mirror {
                unit,
                slot: slots[2 * unit + 1],
            }),
            Some(unit) => Err(FoldError::Length { unit }),
        }
    }

    /// The halves as width-1 units (a [`NO_BLOCK`] slot: an empty half), whose
    /// entries the device builds from the runs as it does the tensor pair's.
    pub fn halves(&self) -> PairedRuns {
        PairedRuns {
            width: 1,
            ptr: self.ptr.clone(),
            slots: self.slots.clone(),
            ent: SharedArray::default(),
        }
    }

    /// The entries of every half, `(x, y)` interleaved, as the device builds them.
    pub fn entries_of(&self, runs: &SlotRuns) -> Vec<u32> {
        let mut ent = Vec::with_capacity(2 * self.entries());
        for &s in self.slots.iter().filter(|&&s| s != NO_BLOCK) {
            for q in runs.run(s as usize) {
                ent.extend_from_slice(&[runs.x[q], runs.y[q]]);
            }
        }
        ent
    }
}

/// The slots of the folded units (two per unit) and each half's run length.
fn fold_slots(runs: &SlotRuns, c: &BlockPattern, transpose: &[u32]) -> (Vec<u32>, Vec<u64>) {
    let slots: Vec<u32> = (0..c.nrows())
        .into_par_iter()
        .flat_map_iter(|i| {
            c.row_range(i)
                .filter(move |&k| c.col_idx()[k] as usize >= i)
                .flat_map(|k| {
                    let t = transpose[k];
                    [k as u32, if t as usize == k { NO_BLOCK } else { t }]
                })
        })
        .collect();
    let lens = slots
        .par_iter()
        .map(|&s| {
            if s == NO_BLOCK {
                0
            } else {
                runs.run(s as usize).len() as u64
            }
        })
        .collect();
    (slots, lens)
}

/// Why the symmetric product cannot serve a pattern.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SymmetryError {
    #[error(
        "the symmetric tensor pair (tensor-pair-sym) needs a structurally symmetric A, but block ({row}, {col}) \
         has no mirror ({col}, {row}); use the tensor pair"
    )]
    NotSymmetric { row: usize, col: usize },
    #[error("the symmetric tensor pair flags A's diagonal in bit 31 of a block index, but A has {0} blocks")]
    TooLarge(usize),
}

/// The block of `p` at `(j, i)` for every block `(i, j)`, or the first block without one.
pub fn transposed_slots(p: &BlockPattern) -> Result<Vec<u32>, SymmetryError> {
    let mut tr = vec![0u32; p.nnzb()];
    // The cursor walk (no search per block) decides; where it finds a block
    // without a mirror, the search below names the first one.
    if p.mirror_slots(Some(&mut tr)) {
        return Ok(tr);
    }
    Err(first_unmirrored(p))
}

/// Where `p` is not structurally symmetric: the first block (in block order)
/// without a mirror, by a search per block.
fn first_unmirrored(p: &BlockPattern) -> SymmetryError {
    if p.nrows() != p.ncols() {
        return SymmetryError::NotSymmetric {
            row: p.nrows(),
            col: p.ncols(),
        };
    }
    let rp = p.row_ptr();
    let bad = (0..p.nnzb().div_ceil(1 << 14))
        .into_par_iter()
        .map(|c| {
            let first = c << 14;
            let mut i = rp.partition_point(|&x| x <= first) - 1;
            for k in first..p.nnzb().min(first + (1 << 14)) {
                while rp[i + 1] <= k {
                    i += 1;
                }
                let j = p.col_idx()[k] as usize;
                if p.find(j, i).is_none() {
                    return Some((i, j));
                }
            }
            None
        })
        .find_first(|b| b.is_some())
        .flatten();
    // The cursor walk and the search agree on symmetry (both check every mirror).
    let (row, col) = bad.unwrap_or((0, 0));
    SymmetryError::NotSymmetric { row, col }
}

/// `L + D`: each row of `a` up to its diagonal, and per block its block of
/// `a` ([`DIAGONAL_FLAG`] on the diagonal). Rows in parallel chunks, each
/// filling its own slices.
fn lower_half(a: &BlockPattern) -> (BlockPattern, Vec<u32>) {
    let lens: Vec<usize> = (0..a.nrows())
        .into_par_iter()
        .with_min_len(1 << 12)
        .map(|i| a.row(i).partition_point(|&j| j as usize <= i))
        .collect();
    let mut rp = Vec::with_capacity(a.nrows() + 1);
    rp.push(0usize);
    let mut acc = 0;
    for &n in &lens {
        acc += n;
        rp.push(acc);
    }
    let (mut ci, mut src) = (vec![0u32; acc], vec![0u32; acc]);
    let chunks = ptap_sparse::par::uniform_row_chunks(a.nrows());
    let mut parts = Vec::with_capacity(chunks.len());
    let (mut crest, mut srest) = (&mut ci[..], &mut src[..]);
    for rows in &chunks {
        let n = rp[rows.end] - rp[rows.start];
        let (ch, ct) = crest.split_at_mut(n);
        let (sh, st) = srest.split_at_mut(n);
        parts.push((rows.clone(), ch, sh));
        (crest, srest) = (ct, st);
    }
    parts.into_par_iter().for_each(|(rows, cs, ss)| {
        let mut q = 0;
        for i in rows {
            for k in a.row_range(i).take(lens[i]) {
                let j = a.col_idx()[k];
                cs[q] = j;
                ss[q] = k as u32 | if j as usize == i { DIAGONAL_FLAG } else { 0 };
                q += 1;
            }
        }
    });
    let l = BlockPattern::new(a.nrows(), a.ncols(), rp, ci).expect("rows of A, truncated, stay sorted");
    (l, src)
}

impl TensorPairSymSchedule {
    /// Refuses a structurally non-symmetric `A` (its values cannot then be
    /// symmetric, and `X + X^T` would be wrong).
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Result<Self, SymmetryError> {
        let (a, p) = (&base.a, &base.p);
        if a.nnzb() >= DIAGONAL_FLAG as usize {
            return Err(SymmetryError::TooLarge(a.nnzb()));
        }
        // A's symmetry check and A_c's mirror map run beside `W'` and its runs
        // (which need neither); an error of either is reported as before.
        let ((symmetric, transpose), (l, src, wh, ap)) = rayon::join(
            || {
                let t = rayon::join(|| a.mirror_slots(None), || transposed_slots(&base.c));
                crate::laps::lap("sym.mirrors");
                t
            },
            || {
                let (l, src) = lower_half(a);
                crate::laps::lap("sym.lower");
                let (wh, ap) = symbolic_slot_runs(&l, p, &|kx| src[kx]);
                crate::laps::lap("sym.wh_ap_runs");
                (l, src, wh, ap)
            },
        );
        if !symmetric {
            return Err(first_unmirrored(a));
        }
        let transpose = transpose?;
        drop((l, src));
        let wh = Arc::new(wh);
        let window = COLUMN_SPLIT_WINDOW;
        let r_src = &base.r_source;
        // The A P units and the P^T W' runs and units are independent.
        let ((ap_order, ap_pairs), (rw, rw_fold)) = rayon::join(
            || {
                let t = rayon::join(
                    || windowed_run_length_order(&ap, window),
                    || PairedRuns::paired(&ap, &wh),
                );
                crate::laps::lap("sym.ap_order_pairs");
                t
            },
            || {
                let rw = slot_runs(&base.r, &wh, &base.c, &|kx| r_src[kx]);
                crate::laps::lap("sym.rw_runs");
                let fold = FoldedRuns::fold(&rw, &base.c, &transpose);
                crate::laps::lap("sym.rw_fold");
                (rw, fold)
            },
        );
        Ok(Self {
            base,
            wh,
            ap,
            rw,
            window,
            ap_order,
            ap_pairs,
            rw_fold,
            transpose: transpose.into(),
        })
    }

    /// Block contributions of the two stages (against V0's `A P` and `P^T W`).
    pub fn contributions(&self) -> (usize, usize) {
        (self.ap.contributions(), self.rw.contributions())
    }
}

/// V3: one record per block multiply, `(x, y, slot)`, in V0's traversal order,
/// cut into tiles of whole output rows. The executor sweeps records and
/// accumulates into the slot each names. Since the order per slot is V0's,
/// **bitwise identical to V0.**
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlatRecords {
    pub x: SharedArray<u32>,
    pub y: SharedArray<u32>,
    pub slot: SharedArray<u32>,
    /// Output-row boundaries of the tiles and the record range of each.
    pub tile_rows: SharedArray<u32>,
    pub tile_records: SharedArray<u64>,
}

impl FlatRecords {
    /// Concatenates per-tile record lists; tile `t` covers rows `chunks[t]`.
    fn from_tiles(chunks: &[Range<usize>], parts: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)>) -> Self {
        let n: usize = parts.iter().map(|p| p.0.len()).sum();
        let (mut x, mut y, mut slot) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut tile_rows, mut tile_records) = (vec![0u32], vec![0u64]);
        for (rows, (xs, ys, ss)) in chunks.iter().zip(parts) {
            x.extend_from_slice(&xs);
            y.extend_from_slice(&ys);
            slot.extend_from_slice(&ss);
            tile_rows.push(rows.end as u32);
            tile_records.push(x.len() as u64);
        }
        FlatRecords {
            x: x.into(),
            y: y.into(),
            slot: slot.into(),
            tile_rows: tile_rows.into(),
            tile_records: tile_records.into(),
        }
    }

    pub fn records(&self) -> usize {
        self.x.len()
    }
    pub fn tiles(&self) -> usize {
        self.tile_rows.len().saturating_sub(1)
    }
}

fn flat_records(
    x: &BlockPattern,
    y: &BlockPattern,
    c: &BlockPattern,
    x_block: &(dyn Fn(usize) -> u32 + Sync),
) -> FlatRecords {
    let work = row_work(x, y);
    let chunks = balanced_row_chunks(&work, (x.nrows() / 16).clamp(1, 1 << 16));
    let parts: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = chunks
        .par_iter()
        .map(|rows| {
            let mut map = vec![u32::MAX; c.ncols()];
            let n: usize = work[rows.clone()].iter().sum();
            let (mut xs, mut ys, mut ss) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
            for i in rows.clone() {
                fill_slot_map(c, i, &mut map);
                for kx in x.row_range(i) {
                    let l = x.col_idx()[kx] as usize;
                    for ky in y.row_range(l) {
                        xs.push(x_block(kx));
                        ys.push(ky as u32);
                        ss.push(map[y.col_idx()[ky] as usize]);
                    }
                }
            }
            (xs, ys, ss)
        })
        .collect();
    FlatRecords::from_tiles(&chunks, parts)
}

/// V3 schedule: the two stages as flat record streams.
#[derive(Clone, Debug)]
pub struct FlatStreamSchedule {
    pub base: Arc<TwoPassSchedule>,
    pub ap: FlatRecords,
    /// `x` = block of `P` (applied transposed), `y` = block of `W`.
    pub rw: FlatRecords,
}

impl FlatStreamSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Self {
        let ap = flat_records(&base.a, &base.p, &base.w, &|kx| kx as u32);
        let src = &base.r_source;
        let rw = flat_records(&base.r, &base.w, &base.c, &|kx| src[kx]);
        Self { base, ap, rw }
    }
    /// Bytes of the record streams (three `u32` per record).
    pub fn record_bytes(&self) -> usize {
        12 * (self.ap.records() + self.rw.records())
    }
}

/// V1 / V2a: the fused row-wise product. Coarse rows are visited in
/// `row_order` (natural for V1; reverse Cuthill-McKee of `A_c`'s graph for
/// V2a), cut into `chunks` of that order. Accumulates `(R A) P`, so it
/// agrees with V0 to round-off, not bitwise.
#[derive(Clone, Debug)]
pub struct FusedSchedule {
    pub base: Arc<TwoPassSchedule>,
    pub row_order: SharedArray<u32>,
    pub chunks: Vec<Range<usize>>,
    /// Block multiplies per numeric call (`R A` and `(R A) P` products).
    pub block_multiplies: usize,
}

impl FusedSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>, reorder: bool) -> Self {
        let m_c = base.c.nrows();
        let row_order: Vec<u32> = if reorder {
            reverse_cuthill_mckee(&base.c)
        } else {
            (0..m_c as u32).collect()
        };
        let work_of = |i: usize| -> usize {
            base.r
                .row(i)
                .iter()
                .map(|&j| {
                    base.a
                        .row(j as usize)
                        .iter()
                        .map(|&l| 1 + base.p.row(l as usize).len())
                        .sum::<usize>()
                })
                .sum()
        };
        let work: Vec<usize> = row_order.par_iter().map(|&i| work_of(i as usize)).collect();
        let block_multiplies = work.iter().sum();
        let chunks = balanced_row_chunks(&work, default_chunk_count(m_c));
        Self {
            base,
            row_order: row_order.into(),
            chunks,
            block_multiplies,
        }
    }
}

/// Reverse Cuthill-McKee ordering of a structurally symmetric pattern: BFS
/// from a minimum-degree node of each component (ties to the smaller index),
/// neighbours by increasing degree, then reversed.
pub fn reverse_cuthill_mckee(p: &BlockPattern) -> Vec<u32> {
    let n = p.nrows();
    let degree = |i: usize| p.row(i).len();
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.sort_by_key(|&i| (degree(i as usize), i));
    let mut nbrs: Vec<u32> = Vec::new();
    for &start in &by_degree {
        if visited[start as usize] {
            continue;
        }
        visited[start as usize] = true;
        let mut head = order.len();
        order.push(start);
        while head < order.len() {
            let i = order[head] as usize;
            head += 1;
            nbrs.clear();
            nbrs.extend(p.row(i).iter().copied().filter(|&j| !visited[j as usize]));
            nbrs.sort_by_key(|&j| (degree(j as usize), j));
            for &j in &nbrs {
                visited[j as usize] = true;
                order.push(j);
            }
        }
    }
    order.reverse();
    order
}

/// V2c: tiles of consecutive coarse rows that compute (stage) the `W` rows
/// they need in a tile-local panel, then `A_c`'s rows from it. Each `W` row is
/// computed in V0's order and each `A_c` slot sums in V0's order, so
/// **bitwise identical to V0**; the price is recomputing `W` rows shared by
/// neighbouring tiles, measured by the halo factor `h`.
#[derive(Clone, Debug)]
pub struct PanelTiledSchedule {
    pub base: Arc<TwoPassSchedule>,
    /// Coarse-row boundaries of the tiles.
    pub tile_rows: SharedArray<u32>,
    /// Fine rows each tile stages (`halo_ptr[t]..halo_ptr[t+1]` of `halo`), sorted.
    pub halo_ptr: SharedArray<u64>,
    pub halo: SharedArray<u32>,
    /// Panel block offset of each staged row (same indexing as `halo`, plus an end).
    pub panel_offset: SharedArray<u64>,
    /// For each block of `R` (tile-local), the staged row's index within its tile's halo.
    pub r_panel_row: SharedArray<u32>,
    /// Largest panel of any tile, in blocks (sizes each worker's scratch).
    pub max_panel_blocks: usize,
    /// `h`: average number of tiles touching a fine row, minus one.
    pub halo_factor: f64,
    /// Groups of consecutive tiles processed by one worker with one scratch panel.
    pub groups: Vec<Range<usize>>,
}

impl PanelTiledSchedule {
    /// `panel_budget_blocks` bounds a tile's staged `W` panel (choose about L2
    /// size divided by the bytes of a `W` block).
    pub fn inspect(base: Arc<TwoPassSchedule>, panel_budget_blocks: usize) -> Self {
        let (w, r) = (&base.w, &base.r);
        let m_c = r.nrows();
        let mut tile_rows = vec![0u32];
        let mut halo_ptr = vec![0u64];
        let mut halo: Vec<u32> = Vec::new();
        let mut panel_offset: Vec<u64> = Vec::new();
        let mut r_panel_row = vec![0u32; r.nnzb()];
        let mut max_panel_blocks = 0usize;
        let mut mark = vec![u32::MAX; w.nrows()];
        let mut start = 0usize;
        while start < m_c {
            // Grow the tile while its panel stays within budget (at least one row).
            let mut end = start;
            let mut rows_in: Vec<u32> = Vec::new();
            let mut blocks = 0usize;
            while end < m_c {
                let mut add: Vec<u32> = Vec::new();
                let mut add_blocks = 0usize;
                for &j in r.row(end) {
                    if mark[j as usize] != start as u32 && !add.contains(&j) {
                        add.push(j);
                        add_blocks += w.row(j as usize).len();
                    }
                }
                if end > start && blocks + add_blocks > panel_budget_blocks {
                    break;
                }
                for &j in &add {
                    mark[j as usize] = start as u32;
                }
                rows_in.extend_from_slice(&add);
                blocks += add_blocks;
                end += 1;
            }
            rows_in.sort_unstable();
            let mut off = 0u64;
            for &j in &rows_in {
                halo.push(j);
                panel_offset.push(off);
                off += w.row(j as usize).len() as u64;
            }
            panel_offset.push(off); // end marker of this tile
            max_panel_blocks = max_panel_blocks.max(off as usize);
            for i in start..end {
                for k in r.row_range(i) {
                    let j = r.col_idx()[k];
                    let pos = rows_in.binary_search(&j).expect("R's column is staged");
                    r_panel_row[k] = pos as u32;
                }
            }
            halo_ptr.push(halo.len() as u64);
            tile_rows.push(end as u32);
            start = end;
        }
        let halo_factor = if w.nrows() > 0 {
            halo.len() as f64 / w.nrows() as f64 - 1.0
        } else {
            0.0
        };
        let ntiles = tile_rows.len() - 1;
        let work: Vec<usize> = (0..ntiles).map(|t| (halo_ptr[t + 1] - halo_ptr[t]) as usize).collect();
        let groups = balanced_row_chunks(&work, default_chunk_count(ntiles));
        Self {
            base,
            tile_rows: tile_rows.into(),
            halo_ptr: halo_ptr.into(),
            halo: halo.into(),
            panel_offset: panel_offset.into(),
            r_panel_row: r_panel_row.into(),
            max_panel_blocks,
            halo_factor,
            groups,
        }
    }

    pub fn tiles(&self) -> usize {
        self.tile_rows.len() - 1
    }
    /// Panel offsets of tile `t` (one per staged row, plus the end).
    pub fn tile_offsets(&self, t: usize) -> &[u64] {
        let s = self.halo_ptr[t] as usize + t;
        let e = self.halo_ptr[t + 1] as usize + t + 1;
        &self.panel_offset[s..e]
    }
}

/// V4, transpose-free outer-product scatter: pass 1 forms `W = A P` as a sum of
/// outer products over fine rows `j` of `P` (`W[i,k] += A[i,j] P[j,k]` for every
/// `A[i,j]` in column `j`), pass 2 forms `A_c = P^T W` over fine rows `j`
/// (`A_c[I,K] += P[j,I]^T W[j,K]`); `R` is never formed and both passes are
/// parallel over fine rows, scattering into their outputs by atomic
/// accumulation. The paper reads `A`'s row `j` and transposes its blocks, which
/// needs a symmetric `A`; walking column `j` through the inspector's transpose
/// map is exact for any `A` and visits the same blocks when `A` is symmetric.
/// Records give every slot, so nothing is searched. Not deterministic.
#[derive(Clone, Debug)]
pub struct OuterProductSchedule {
    pub base: Arc<TwoPassSchedule>,
    /// Pass 1, grouped by fine row `j`: `x` = block `A[i,j]`, `y` = block `P[j,k]`, `slot` in `W`.
    pub pass1: FlatRecords,
    /// Pass 2, grouped by fine row `j`: `x` = block `P[j,I]` (transposed), `y` = block `W[j,K]`, `slot` in `A_c`.
    pub pass2: FlatRecords,
}

impl OuterProductSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Self {
        let (at, at_source) = base.a.transpose();
        let pass1 = scatter_records(&at, Some(&at_source), &base.p, &base.w);
        let pass2 = scatter_records(&base.p, None, &base.w, &base.c);
        Self { base, pass1, pass2 }
    }
}

/// Records of `out[i,k] += X[j,i]' Y[j,k]` grouped by `j` (the rows of `x` and
/// `y`), where `x`'s block index is mapped through `x_source` when given.
fn scatter_records(x: &BlockPattern, x_source: Option<&[u32]>, y: &BlockPattern, out: &BlockPattern) -> FlatRecords {
    let work: Vec<usize> = (0..x.nrows()).map(|j| x.row(j).len() * y.row(j).len()).collect();
    let chunks = balanced_row_chunks(&work, (x.nrows() / 16).clamp(1, 1 << 16));
    let parts: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = chunks
        .par_iter()
        .map(|rows| {
            let (mut xs, mut ys, mut ss) = (Vec::new(), Vec::new(), Vec::new());
            for j in rows.clone() {
                for kx in x.row_range(j) {
                    let i = x.col_idx()[kx] as usize;
                    for ky in y.row_range(j) {
                        let k = y.col_idx()[ky] as usize;
                        let s = out.find(i, k).expect("the output pattern holds every contribution");
                        xs.push(x_source.map_or(kx as u32, |src| src[kx]));
                        ys.push(ky as u32);
                        ss.push(s as u32);
                    }
                }
            }
            (xs, ys, ss)
        })
        .collect();
    FlatRecords::from_tiles(&chunks, parts)
}

/// The schedule of any variant, as the inspector produces it.
#[derive(Clone, Debug)]
pub enum VariantSchedule {
    TwoPass(Arc<TwoPassSchedule>),
    Fused {
        schedule: Arc<FusedSchedule>,
        reordered: bool,
    },
    SlotTiled(Arc<SlotTiledSchedule>),
    PanelTiled(Arc<PanelTiledSchedule>),
    FlatStream(Arc<FlatStreamSchedule>),
    OuterProduct(Arc<OuterProductSchedule>),
    ColumnSplit(Arc<ColumnSplitSchedule>),
    RowGustavson(Arc<RowGustavsonSchedule>),
    /// Column split's schedule, executed lane-tiled on the device.
    LaneTiled(Arc<ColumnSplitSchedule>),
    /// Column split's schedule, executed k-split on the device.
    KSplit(Arc<ColumnSplitSchedule>),
    /// Column split's schedule, executed with tensor-core MMA on the device.
    TensorCore(Arc<ColumnSplitSchedule>),
    TensorPair(Arc<TensorPairSchedule>),
    TensorPairSym(Arc<TensorPairSymSchedule>),
}

/// Staged `W` panel budget of V2c, in bytes (about one core's L2).
pub const PANEL_BUDGET_BYTES: usize = 1 << 20;

impl VariantSchedule {
    /// Runs `variant`'s inspector on top of the two-pass patterns, refusing
    /// the symmetric tensor pair for a structurally non-symmetric `A`.
    /// `w_block_len` (scalars of a `W` block, `b_f b_c`) sizes V2c's tiles.
    pub fn try_inspect(
        variant: crate::Variant,
        base: Arc<TwoPassSchedule>,
        w_block_len: usize,
    ) -> Result<Self, SymmetryError> {
        match variant {
            crate::Variant::TensorPairSym => Ok(Self::TensorPairSym(Arc::new(TensorPairSymSchedule::inspect(base)?))),
            v => Ok(Self::inspect(v, base, w_block_len)),
        }
    }

    /// [`Self::try_inspect`] for callers that hold a symmetric `A`, or none of
    /// its variant: where the symmetric tensor pair refuses `A`'s pattern,
    /// this gives the tensor pair (never a wrong product); the front door
    /// (`inspect_with_base`) refuses instead.
    pub fn inspect(variant: crate::Variant, base: Arc<TwoPassSchedule>, w_block_len: usize) -> Self {
        use crate::Variant as V;
        match variant {
            V::TensorPairSym => match TensorPairSymSchedule::inspect(base.clone()) {
                Ok(s) => Self::TensorPairSym(Arc::new(s)),
                Err(_) => Self::TensorPair(Arc::new(TensorPairSchedule::inspect(base))),
            },
            V::TwoPass => Self::TwoPass(base),
            V::FusedRowWise => Self::Fused {
                schedule: Arc::new(FusedSchedule::inspect(base, false)),
                reordered: false,
            },
            V::FusedReordered => Self::Fused {
                schedule: Arc::new(FusedSchedule::inspect(base, true)),
                reordered: true,
            },
            V::SlotTiled => Self::SlotTiled(Arc::new(SlotTiledSchedule::inspect(base))),
            V::PanelTiled => {
                let blocks = PANEL_BUDGET_BYTES / (8 * w_block_len.max(1));
                Self::PanelTiled(Arc::new(PanelTiledSchedule::inspect(base, blocks)))
            }
            V::FlatStream => Self::FlatStream(Arc::new(FlatStreamSchedule::inspect(base))),
            V::OuterProductScatter => Self::OuterProduct(Arc::new(OuterProductSchedule::inspect(base))),
            V::ColumnSplit => Self::ColumnSplit(Arc::new(ColumnSplitSchedule::inspect(base, COLUMN_SPLIT_WINDOW))),
            V::RowGustavson => Self::RowGustavson(Arc::new(RowGustavsonSchedule::inspect(base))),
            V::LaneTiled => Self::LaneTiled(Arc::new(ColumnSplitSchedule::inspect(base, COLUMN_SPLIT_WINDOW))),
            V::KSplit => Self::KSplit(Arc::new(ColumnSplitSchedule::inspect(base, COLUMN_SPLIT_WINDOW))),
            V::TensorCore => Self::TensorCore(Arc::new(ColumnSplitSchedule::inspect(base, COLUMN_SPLIT_WINDOW))),
            V::TensorPair => Self::TensorPair(Arc::new(TensorPairSchedule::inspect(base))),
        }
    }

    pub fn variant(&self) -> crate::Variant {
        use crate::Variant as V;
        match self {
            Self::TwoPass(_) => V::TwoPass,
            Self::Fused { reordered: false, .. } => V::FusedRowWise,
            Self::Fused { reordered: true, .. } => V::FusedReordered,
            Self::SlotTiled(_) => V::SlotTiled,
            Self::PanelTiled(_) => V::PanelTiled,
            Self::FlatStream(_) => V::FlatStream,
            Self::OuterProduct(_) => V::OuterProductScatter,
            Self::ColumnSplit(_) => V::ColumnSplit,
            Self::RowGustavson(_) => V::RowGustavson,
            Self::LaneTiled(_) => V::LaneTiled,
            Self::KSplit(_) => V::KSplit,
            Self::TensorCore(_) => V::TensorCore,
            Self::TensorPair(_) => V::TensorPair,
            Self::TensorPairSym(_) => V::TensorPairSym,
        }
    }

    /// The patterns every variant shares.
    pub fn base(&self) -> &Arc<TwoPassSchedule> {
        match self {
            Self::TwoPass(b) => b,
            Self::Fused { schedule, .. } => &schedule.base,
            Self::SlotTiled(s) => &s.base,
            Self::PanelTiled(s) => &s.base,
            Self::FlatStream(s) => &s.base,
            Self::OuterProduct(s) => &s.base,
            Self::ColumnSplit(s) | Self::LaneTiled(s) | Self::KSplit(s) | Self::TensorCore(s) => &s.tiled.base,
            Self::TensorPair(s) => &s.split.tiled.base,
            Self::TensorPairSym(s) => &s.base,
            Self::RowGustavson(s) => &s.base,
        }
    }
}

/// Output positions per chunk of the row-Gustavson executor: each output row's
/// slots are cut into chunks of at most this many, so a chunk's accumulator
/// (`chunk x` output block) sits in one warp's shared memory and a position fits a byte.
pub const ROW_GUSTAVSON_CHUNK: usize = 32;

/// Segments of `C = X Y` row by row (Gustavson), for the row-Gustavson
/// executor: each output row is cut into chunks of at most
/// [`ROW_GUSTAVSON_CHUNK`] consecutive slots; a chunk's *segments* are, in
/// `X`'s row order, the `X` blocks `x` whose `Y` row has blocks in the chunk:
/// `n` consecutive `Y` blocks from `y`, landing at the chunk positions `pos`
/// (one byte each, packed four to a `u32`, little-endian). Every output element
/// therefore sums its contributions in V0's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowSegments {
    /// Per chunk, its first output slot; the last entry is the slot count.
    pub chunk_slot: SharedArray<u64>,
    /// Per chunk, its first segment and first position (prefix sums, one more entry than chunks).
    pub chunk_seg: SharedArray<u64>,
    pub chunk_pos: SharedArray<u64>,
    /// Per segment: the `X` block, the first `Y` block.
    pub seg_x: SharedArray<u32>,
    pub seg_y: SharedArray<u32>,
    /// Per segment its `Y` block count, one byte each, packed four to a `u32`.
    pub seg_n: SharedArray<u32>,
    /// Per contribution its position in the chunk, packed four to a `u32`.
    pub pos: SharedArray<u32>,
    pub segments: usize,
    pub contributions: usize,
}

fn pack_bytes(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u32, |acc, (i, &v)| acc | (v as u32) << (8 * i))
        })
        .collect()
}

impl RowSegments {
    pub fn chunks(&self) -> usize {
        self.chunk_slot.len().saturating_sub(1)
    }
    /// Count of segment `g`.
    #[inline]
    pub fn seg_count(&self, g: usize) -> usize {
        ((self.seg_n[g / 4] >> (8 * (g % 4))) & 0xff) as usize
    }
    /// Position of contribution `q` in its chunk.
    #[inline]
    pub fn position(&self, q: usize) -> usize {
        ((self.pos[q / 4] >> (8 * (q % 4))) & 0xff) as usize
    }

    /// Segments of `C = X Y` over `C`'s pattern; `x_block` as for slot runs.
    pub fn inspect(
        x: &BlockPattern,
        y: &BlockPattern,
        c: &BlockPattern,
        x_block: &(dyn Fn(usize) -> u32 + Sync),
    ) -> Self {
        let chunk = ROW_GUSTAVSON_CHUNK;
        let rows = balanced_row_chunks(&row_work(x, y), default_chunk_count(x.nrows()));
        type Part = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u32>, Vec<u32>, Vec<u8>, Vec<u8>);
        let parts: Vec<Part> = rows
            .par_iter()
            .map(|rows| {
                let mut map = vec![u32::MAX; c.ncols()];
                let mut p: Part = Default::default();
                for i in rows.clone() {
                    let cr = c.row_range(i);
                    for k in cr.clone() {
                        map[c.col_idx()[k] as usize] = (k - cr.start) as u32;
                    }
                    for lo in (0..cr.len()).step_by(chunk) {
                        let hi = (lo + chunk).min(cr.len());
                        let (s0, q0) = (p.3.len(), p.6.len());
                        p.0.push((cr.start + lo) as u64);
                        for kx in x.row_range(i) {
                            let (mut first, mut n) = (0usize, 0usize);
                            for ky in y.row_range(x.col_idx()[kx] as usize) {
                                let at = map[y.col_idx()[ky] as usize] as usize;
                                if (lo..hi).contains(&at) {
                                    if n == 0 {
                                        first = ky;
                                    }
                                    n += 1;
                                    p.6.push((at - lo) as u8);
                                }
                            }
                            if n > 0 {
                                p.3.push(x_block(kx));
                                p.4.push(first as u32);
                                p.5.push(n as u8);
                            }
                        }
                        p.1.push((p.3.len() - s0) as u64);
                        p.2.push((p.6.len() - q0) as u64);
                    }
                }
                p
            })
            .collect();
        let (mut chunk_slot, mut chunk_seg, mut chunk_pos) = (Vec::new(), vec![0u64], vec![0u64]);
        let (mut sx, mut sy, mut sn, mut pos) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (cs, cg, cp, x, y, n, q) in parts {
            chunk_slot.extend_from_slice(&cs);
            for g in cg {
                chunk_seg.push(chunk_seg.last().unwrap() + g);
            }
            for g in cp {
                chunk_pos.push(chunk_pos.last().unwrap() + g);
            }
            sx.extend_from_slice(&x);
            sy.extend_from_slice(&y);
            sn.extend_from_slice(&n);
            pos.extend_from_slice(&q);
        }
        chunk_slot.push(c.nnzb() as u64);
        let (segments, contributions) = (sx.len(), pos.len());
        RowSegments {
            chunk_slot: chunk_slot.into(),
            chunk_seg: chunk_seg.into(),
            chunk_pos: chunk_pos.into(),
            seg_x: sx.into(),
            seg_y: sy.into(),
            seg_n: pack_bytes(&sn).into(),
            pos: pack_bytes(&pos).into(),
            segments,
            contributions,
        }
    }
}

/// The row-Gustavson schedule: both stages as [`RowSegments`] (`A P` over `W`'s
/// rows, `P^T W` over `A_c`'s rows, recording `P`'s block for `R`'s). The
/// executor keeps each output chunk on chip and sweeps its segments in order,
/// so **bitwise identical to V0**; each `X` block is read once per segment, not
/// once per contribution, and a contribution costs one position byte of
/// schedule instead of two block indices.
#[derive(Clone, Debug)]
pub struct RowGustavsonSchedule {
    pub base: Arc<TwoPassSchedule>,
    pub ap: RowSegments,
    pub rw: RowSegments,
}

impl RowGustavsonSchedule {
    pub fn inspect(base: Arc<TwoPassSchedule>) -> Self {
        let ap = RowSegments::inspect(&base.a, &base.p, &base.w, &|kx| kx as u32);
        let src = &base.r_source;
        let rw = RowSegments::inspect(&base.r, &base.w, &base.c, &|kx| src[kx]);
        Self { base, ap, rw }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_tails_counts_and_places_each_runs_last_block_as_the_merge_does() {
        // Two runs of random, unsorted and repeating `y` blocks (a forged file's), and empty ones.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m) as u32
        };
        for _ in 0..2000 {
            let (la, lb) = (next(6) as usize, next(6) as usize);
            let y: Vec<u32> = (0..la + lb).map(|_| next(8)).collect();
            let runs = SlotRuns {
                ptr: vec![0, la as u64, (la + lb) as u64].into(),
                x: (0..(la + lb) as u32).collect::<Vec<_>>().into(),
                y: y.into(),
            };
            for s1 in [1, NO_BLOCK] {
                let (mut n, mut last) = (0usize, [usize::MAX; 2]);
                merge_runs(&runs, 0, (s1 != NO_BLOCK).then_some(1), |e| {
                    if la > 0 && e[0] == la as u32 - 1 {
                        last[0] = n;
                    }
                    if s1 != NO_BLOCK && lb > 0 && e[2] == (la + lb) as u32 - 1 {
                        last[1] = n;
                    }
                    n += 1;
                });
                assert_eq!(merged_tails(&runs, 0, s1), (n, last[0], last[1]), "{:?} {s1}", runs.y);
            }
        }
    }

    /// A 1-D chain coupled to its neighbours, aggregated in threes, with every
    /// fourth row also in the next aggregate.
    fn base() -> Arc<TwoPassSchedule> {
        let n = 40usize;
        let a: Vec<Vec<u32>> = (0..n)
            .map(|i| (i.saturating_sub(2)..(i + 3).min(n)).map(|c| c as u32).collect())
            .collect();
        let m = n.div_ceil(3);
        let p: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                let c = (i / 3) as u32;
                if i % 4 == 0 && (c as usize) + 1 < m {
                    vec![c, c + 1]
                } else {
                    vec![c]
                }
            })
            .collect();
        let a = Arc::new(BlockPattern::from_rows(n, &a).unwrap());
        let p = Arc::new(BlockPattern::from_rows(m, &p).unwrap());
        Arc::new(TwoPassSchedule::inspect(a, p).unwrap())
    }

    #[test]
    fn paired_units_merge_each_slots_run_in_order() {
        let s = TensorPairSchedule::inspect(base());
        let (runs, w) = (&s.split.tiled.ap, &s.split.tiled.base.w);
        // The inspector builds no entries; the host rebuilds them from the units and runs.
        assert!(s.ap.ent.is_empty() && s.rw.ent.is_empty());
        let u = &PairedRuns::rebuild(2, s.ap.ptr.clone(), s.ap.slots.clone(), runs).unwrap();
        assert_eq!(u.width, 2);
        let mut seen = vec![0u32; runs.slots()];
        let mut merged = 0;
        for k in 0..u.units() {
            let e = &u.ent[4 * u.ptr[k] as usize..4 * u.ptr[k + 1] as usize];
            for side in 0..2 {
                let slot = u.slots[2 * k + side];
                let got: Vec<(u32, u32)> = e
                    .chunks(4)
                    .map(|q| (q[2 * side], q[2 * side + 1]))
                    .filter(|q| q.0 != NO_BLOCK)
                    .collect();
                if slot == NO_BLOCK {
                    assert!(got.is_empty());
                    continue;
                }
                seen[slot as usize] += 1;
                let want: Vec<(u32, u32)> = runs.run(slot as usize).map(|q| (runs.x[q], runs.y[q])).collect();
                assert_eq!(got, want, "unit {k} side {side}");
            }
            merged += e.chunks(4).filter(|q| q[0] != NO_BLOCK && q[2] != NO_BLOCK).count();
            assert!(e.chunks(4).all(|q| q[1] == q[3]));
            if u.slots[2 * k + 1] != NO_BLOCK {
                let (s0, s1) = (u.slots[2 * k] as usize, u.slots[2 * k + 1] as usize);
                assert_eq!(w.col_idx()[s0], w.col_idx()[s1]);
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        // Neighbouring rows share most P blocks: 1.2-2 contributions per entry.
        assert_eq!(u.entries() + merged, runs.contributions());
        assert!(
            merged * 3 > runs.contributions(),
            "{merged} of {}",
            runs.contributions()
        );
        // The P^T W stage: one slot per unit, its run interleaved.
        let rw = &s.split.tiled.rw;
        let r = &PairedRuns::rebuild(1, s.rw.ptr.clone(), s.rw.slots.clone(), rw).unwrap();
        assert_eq!((r.width, r.units(), r.entries()), (1, rw.slots(), rw.contributions()));
        assert!((0..rw.contributions()).all(|q| r.ent[2 * q] == rw.x[q] && r.ent[2 * q + 1] == rw.y[q]));
    }
}
