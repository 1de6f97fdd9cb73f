//! Every variant's schedule to and from a schedule-file record.
//!
//! A record stores what the inspector discovered beyond the operands' own
//! patterns: the patterns of `W = A P`, `R = P^T` (with its gather map) and
//! `A_c`, the product statistics, and the variant's own arrays. `A` and `P`
//! are not stored; the caller hands them in and [`VariantSchedule::from_record`]
//! refuses them unless their fingerprints match the record's.
//!
//! Loading copies the three patterns out of the mapping (they become
//! [`BlockPattern`]s); the variant's arrays stay in the mapping
//! ([`SharedArray`]). It checks every index the executors will follow: pointer arrays start at
//! zero, never decrease and end at their array's length; block indices are in
//! range of the matrix they index; slots lie in the rows of the tile that
//! writes them; orders are permutations; `R` and its gather map `r.source` are
//! exactly the transpose of `P` (one pass over `P`). A file that passes its
//! checksum but was written by a buggy or hostile writer is thereby refused
//! with [`ScheduleFileError::Invalid`] instead of panicking or racing in an
//! executor.
//!
//! What these checks cannot see cheaply is whether the patterns of `W` and
//! `A_c` are the symbolic products `A P` and `R W` (that takes a symbolic
//! product): an in-range, sorted but wrong column in `w.col_idx` or
//! `c.col_idx` would make an executor's slot lookup miss. Such a file cannot
//! come from ptap, and one edited after writing fails its keyed integrity tag
//! ([`crate::key`]), which the file layer checks before any of this.
//!
//! Array names, per stage `ap` (`W = A P`) and `rw` (`A_c = R W`):
//!
//! | variant | arrays |
//! |---|---|
//! | all | `w.row_ptr` `w.col_idx` `r.row_ptr` `r.col_idx` `r.source` `c.row_ptr` `c.col_idx` |
//! | fused, fused-rcm | `row_order` `chunks` |
//! | slot-tiled | `{ap,rw}.ptr` `{ap,rw}.x` `{ap,rw}.y` `{ap,rw}.tiles` |
//! | column-split, k-split, lane-tiled, tensor-core | slot-tiled's and `{ap,rw}.order` |
//! | tensor-pair | column split's and `{ap,rw}.pair.{ptr,slots}` (sizes `{ap,rw}.pair.width`) |
//! | tensor-pair-sym | `wh.{row_ptr,col_idx}` (`W'`), `{ap,rw}.{ptr,x,y}`, `ap.order` (size `window`), `ap.pair.{ptr,slots}`, `rw.fold.{ptr,slots}`, `c.transpose` |
//! | flat-stream | `{ap,rw}.{x,y,slot,tile_rows,tile_records}` |
//! | outer-product | `{pass1,pass2}.{x,y,slot,tile_rows,tile_records}` |
//! | panel-tiled | `tile_rows` `halo_ptr` `halo` `panel_offset` `r_panel_row` `groups` |
//!
//! The tensor pair's entries (`PairedRuns::ent`, about as large as column
//! split's runs) are not stored (format version 5): they are the merge of each
//! unit's slot runs, so the device builds them from the runs it uploads (their
//! bytes never cross the bus), and a loaded schedule's `ent` is empty. The
//! stored units are checked against the ones the inspector derives from `W`'s
//! pattern and the validated runs.
//!
//! The symmetric tensor pair (format version 6) stores `W'`'s pattern and its
//! own runs: its `A P` runs' `x` blocks are checked to lie in the slot's row
//! of `A` at or left of the diagonal, flagged exactly on the diagonal, and
//! `c.transpose` to map every slot of `A_c` onto its mirror. Format 7 stores
//! its `P^T W'` units folded onto `A_c`'s upper triangle (`rw.fold`, see
//! `FoldedRuns`) instead of one per slot (those are the runs themselves, which
//! the device takes where it does not fold): they are checked to be exactly
//! the inspector's, each slot of the upper triangle in order with its mirror
//! (absent on the diagonal) and each half as long as its slot's run.
use crate::file::{fingerprint, MappedBundle, NamedArray, RecordView, ScheduleFileError, ScheduleRecord};
use crate::two_pass::{ProductStats, TwoPassSchedule};
use crate::variants::{
    ColumnSplitSchedule, FlatRecords, FlatStreamSchedule, FoldedRuns, FusedSchedule, OuterProductSchedule, PairedRuns,
    PanelTiledSchedule, RowGustavsonSchedule, SlotRuns, SlotTiledSchedule, TensorPairSchedule, TensorPairSymSchedule,
    UnitsMismatch, VariantSchedule, DIAGONAL_FLAG,
};
use crate::SharedArray;
use crate::Variant;
use ptap_sparse::BlockPattern;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

type Result<T, E = ScheduleFileError> = std::result::Result<T, E>;

const STAT_NAMES: [&str; 7] = ["m_f", "z_a", "z_p", "z_w", "m_c", "z_c", "block_multiplies"];

fn u64s(v: &[usize]) -> Vec<u64> {
    v.iter().map(|&x| x as u64).collect()
}

fn push_pattern(arrays: &mut Vec<NamedArray>, name: &str, p: &BlockPattern) {
    arrays.push(NamedArray::u64(format!("{name}.row_ptr"), u64s(p.row_ptr())));
    arrays.push(NamedArray::u32(format!("{name}.col_idx"), p.col_idx().to_vec()));
}

fn push_runs(arrays: &mut Vec<NamedArray>, stage: &str, r: &SlotRuns, tiles: &[u64]) {
    arrays.push(NamedArray::u64(format!("{stage}.ptr"), r.ptr.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.x"), r.x.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.y"), r.y.to_vec()));
    arrays.push(NamedArray::u64(format!("{stage}.tiles"), tiles.to_vec()));
}

fn push_flat(arrays: &mut Vec<NamedArray>, stage: &str, f: &FlatRecords) {
    arrays.push(NamedArray::u32(format!("{stage}.x"), f.x.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.y"), f.y.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.slot"), f.slot.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.tile_rows"), f.tile_rows.to_vec()));
    arrays.push(NamedArray::u64(
        format!("{stage}.tile_records"),
        f.tile_records.to_vec(),
    ));
}

fn push_split(arrays: &mut Vec<NamedArray>, sizes: &mut Vec<(String, u64)>, s: &ColumnSplitSchedule) {
    push_runs(arrays, "ap", &s.tiled.ap, &s.tiled.ap_tiles);
    push_runs(arrays, "rw", &s.tiled.rw, &s.tiled.rw_tiles);
    arrays.push(NamedArray::u32("ap.order", s.ap_order.to_vec()));
    arrays.push(NamedArray::u32("rw.order", s.rw_order.to_vec()));
    sizes.push(("window".into(), s.window as u64));
}

/// The units only: their entries follow from the units and the runs (see the module docs).
fn push_pairs(arrays: &mut Vec<NamedArray>, sizes: &mut Vec<(String, u64)>, stage: &str, r: &PairedRuns) {
    arrays.push(NamedArray::u64(format!("{stage}.pair.ptr"), r.ptr.to_vec()));
    arrays.push(NamedArray::u32(format!("{stage}.pair.slots"), r.slots.to_vec()));
    sizes.push((format!("{stage}.pair.width"), r.width as u64));
}

fn ranges_to_bounds(r: &[Range<usize>]) -> Vec<u64> {
    let mut b = vec![r.first().map_or(0, |x| x.start as u64)];
    b.extend(r.iter().map(|x| x.end as u64));
    b
}

impl VariantSchedule {
    /// This schedule as the file record of level `level` (`A` is `bf x bf`, `P`
    /// is `bf x bc`). Callers may append arrays of their own (names not listed
    /// in the module docs); [`VariantSchedule::from_record`] ignores them.
    pub fn to_record(&self, level: u32, bf: usize, bc: usize) -> ScheduleRecord {
        let base = self.base();
        let mut arrays = Vec::new();
        push_pattern(&mut arrays, "w", &base.w);
        push_pattern(&mut arrays, "r", &base.r);
        arrays.push(NamedArray::u32("r.source", base.r_source.to_vec()));
        push_pattern(&mut arrays, "c", &base.c);
        let st = &base.stats;
        let mut sizes: Vec<(String, u64)> = STAT_NAMES
            .iter()
            .zip([st.m_f, st.z_a, st.z_p, st.z_w, st.m_c, st.z_c, st.block_multiplies])
            .map(|(n, v)| (n.to_string(), v as u64))
            .collect();
        match self {
            Self::TwoPass(_) => {}
            Self::Fused { schedule, .. } => {
                arrays.push(NamedArray::u32("row_order", schedule.row_order.to_vec()));
                arrays.push(NamedArray::u64("chunks", ranges_to_bounds(&schedule.chunks)));
                sizes.push(("fused_block_multiplies".into(), schedule.block_multiplies as u64));
            }
            Self::SlotTiled(s) => {
                push_runs(&mut arrays, "ap", &s.ap, &s.ap_tiles);
                push_runs(&mut arrays, "rw", &s.rw, &s.rw_tiles);
            }
            Self::ColumnSplit(s) | Self::LaneTiled(s) | Self::KSplit(s) | Self::TensorCore(s) => {
                push_split(&mut arrays, &mut sizes, s)
            }
            Self::TensorPair(s) => {
                push_split(&mut arrays, &mut sizes, &s.split);
                push_pairs(&mut arrays, &mut sizes, "ap", &s.ap);
                push_pairs(&mut arrays, &mut sizes, "rw", &s.rw);
            }
            Self::TensorPairSym(s) => {
                push_pattern(&mut arrays, "wh", &s.wh);
                for (stage, r) in [("ap", &s.ap), ("rw", &s.rw)] {
                    arrays.push(NamedArray::u64(format!("{stage}.ptr"), r.ptr.to_vec()));
                    arrays.push(NamedArray::u32(format!("{stage}.x"), r.x.to_vec()));
                    arrays.push(NamedArray::u32(format!("{stage}.y"), r.y.to_vec()));
                }
                arrays.push(NamedArray::u32("ap.order", s.ap_order.to_vec()));
                sizes.push(("window".into(), s.window as u64));
                push_pairs(&mut arrays, &mut sizes, "ap", &s.ap_pairs);
                arrays.push(NamedArray::u64("rw.fold.ptr", s.rw_fold.ptr.to_vec()));
                arrays.push(NamedArray::u32("rw.fold.slots", s.rw_fold.slots.to_vec()));
                arrays.push(NamedArray::u32("c.transpose", s.transpose.to_vec()));
            }
            // Rebuilt from the stored patterns at load (see `from_record`): no arrays of its own.
            Self::RowGustavson(_) => {}
            Self::FlatStream(s) => {
                push_flat(&mut arrays, "ap", &s.ap);
                push_flat(&mut arrays, "rw", &s.rw);
            }
            Self::OuterProduct(s) => {
                push_flat(&mut arrays, "pass1", &s.pass1);
                push_flat(&mut arrays, "pass2", &s.pass2);
            }
            Self::PanelTiled(s) => {
                arrays.push(NamedArray::u32("tile_rows", s.tile_rows.to_vec()));
                arrays.push(NamedArray::u64("halo_ptr", s.halo_ptr.to_vec()));
                arrays.push(NamedArray::u32("halo", s.halo.to_vec()));
                arrays.push(NamedArray::u64("panel_offset", s.panel_offset.to_vec()));
                arrays.push(NamedArray::u32("r_panel_row", s.r_panel_row.to_vec()));
                arrays.push(NamedArray::u64("groups", ranges_to_bounds(&s.groups)));
                sizes.push(("max_panel_blocks".into(), s.max_panel_blocks as u64));
                sizes.push(("halo_factor_bits".into(), s.halo_factor.to_bits()));
            }
        }
        ScheduleRecord {
            level,
            variant: self.variant().name().to_string(),
            fine_block: bf as u32,
            coarse_block: bc as u32,
            a: fingerprint(&base.a),
            p: fingerprint(&base.p),
            sizes,
            arrays,
        }
    }

    /// Rebuilds the schedule of level `level` of `bundle` for the operands `a`
    /// and `p`, refusing them unless the record was built for their patterns,
    /// and checking every stored index (see the module docs). No inspection
    /// runs, and the variant's arrays are not copied: they stay in the file's
    /// mapping, which the schedule keeps alive.
    pub fn from_record(
        bundle: &Arc<MappedBundle>,
        level: u32,
        a: Arc<BlockPattern>,
        p: Arc<BlockPattern>,
    ) -> Result<Self> {
        let rec = &bundle.level(level)?;
        rec.check_patterns(&a, &p)?;
        let variant: Variant = rec
            .variant()
            .parse()
            .map_err(|_| rec.invalid(format!("unknown variant `{}`", rec.variant())))?;
        let base = Arc::new(load_base(bundle, rec, a, p)?);
        let l = Loader {
            rec,
            bundle,
            base: &base,
        };
        Ok(match variant {
            Variant::TwoPass => Self::TwoPass(base),
            Variant::FusedRowWise | Variant::FusedReordered => {
                let m_c = base.c.nrows();
                let row_order = l.u32("row_order")?;
                l.permutation("row_order", &row_order, m_c, m_c.max(1))?;
                let chunks = l.bounds("chunks", m_c)?;
                let block_multiplies = l.size("fused_block_multiplies")? as usize;
                Self::Fused {
                    schedule: Arc::new(FusedSchedule {
                        base: base.clone(),
                        row_order,
                        chunks,
                        block_multiplies,
                    }),
                    reordered: variant == Variant::FusedReordered,
                }
            }
            Variant::SlotTiled => Self::SlotTiled(Arc::new(l.slot_tiled()?)),
            // Segments are re-inspected from the validated patterns (one pass, no stored arrays to forge).
            Variant::RowGustavson => Self::RowGustavson(Arc::new(RowGustavsonSchedule::inspect(base))),
            Variant::TensorPair => {
                let split = Arc::new(l.column_split()?);
                let ap = l.pairs("ap", &split.tiled.ap, &base.w, 2, false)?;
                let rw = l.pairs("rw", &split.tiled.rw, &base.c, 1, false)?;
                Self::TensorPair(Arc::new(TensorPairSchedule { split, ap, rw }))
            }
            Variant::TensorPairSym => Self::TensorPairSym(Arc::new(l.tensor_pair_sym()?)),
            Variant::ColumnSplit | Variant::LaneTiled | Variant::KSplit | Variant::TensorCore => {
                let s = Arc::new(l.column_split()?);
                match variant {
                    Variant::LaneTiled => Self::LaneTiled(s),
                    Variant::KSplit => Self::KSplit(s),
                    Variant::TensorCore => Self::TensorCore(s),
                    _ => Self::ColumnSplit(s),
                }
            }
            Variant::FlatStream => {
                let ap = l.flat("ap", base.a.nnzb(), base.p.nnzb(), &base.w, base.w.nrows(), true)?;
                let rw = l.flat("rw", base.p.nnzb(), base.w.nnzb(), &base.c, base.c.nrows(), true)?;
                Self::FlatStream(Arc::new(FlatStreamSchedule {
                    base: base.clone(),
                    ap,
                    rw,
                }))
            }
            Variant::OuterProductScatter => {
                let pass1 = l.flat("pass1", base.a.nnzb(), base.p.nnzb(), &base.w, base.a.nrows(), false)?;
                let pass2 = l.flat("pass2", base.p.nnzb(), base.w.nnzb(), &base.c, base.p.nrows(), false)?;
                Self::OuterProduct(Arc::new(OuterProductSchedule {
                    base: base.clone(),
                    pass1,
                    pass2,
                }))
            }
            Variant::PanelTiled => Self::PanelTiled(Arc::new(l.panel_tiled()?)),
        })
    }
}

impl RecordView<'_> {
    fn invalid(&self, why: String) -> ScheduleFileError {
        ScheduleFileError::Invalid {
            path: self.path().to_path_buf(),
            why: format!("level {}: {why}", self.level()),
        }
    }
}

fn load_pattern(rec: &RecordView<'_>, name: &str, nrows: usize, ncols: usize) -> Result<BlockPattern> {
    let row_ptr = rec.array_u64(&format!("{name}.row_ptr"))?;
    let col_idx = rec.array_u32(&format!("{name}.col_idx"))?;
    if row_ptr.len() != nrows + 1 {
        return Err(rec.invalid(format!(
            "pattern `{name}` has {} row pointers for {nrows} rows",
            row_ptr.len()
        )));
    }
    let row_ptr: Vec<usize> = row_ptr.par_iter().with_min_len(1 << 14).map(|&x| x as usize).collect();
    let col_idx: Vec<u32> = col_idx.par_iter().with_min_len(1 << 14).copied().collect();
    BlockPattern::new(nrows, ncols, row_ptr, col_idx)
        .map_err(|e| rec.invalid(format!("pattern `{name}` is not a valid block pattern ({e})")))
}

fn load_base(
    bundle: &Arc<MappedBundle>,
    rec: &RecordView<'_>,
    a: Arc<BlockPattern>,
    p: Arc<BlockPattern>,
) -> Result<TwoPassSchedule> {
    let (m_f, m_c) = (p.nrows(), p.ncols());
    let w = load_pattern(rec, "w", m_f, m_c)?;
    let r = load_pattern(rec, "r", m_c, m_f)?;
    let c = load_pattern(rec, "c", m_c, m_c)?;
    let r_source = SharedArray::mapped(bundle, rec.array_u32("r.source")?);
    if r_source.len() != r.nnzb() {
        return Err(rec.invalid(format!(
            "`r.source` has {} entries for {} blocks of R",
            r_source.len(),
            r.nnzb()
        )));
    }
    check_below(rec, "r.source", &r_source, p.nnzb())?;
    check_transpose(rec, &r, &r_source, &p)?;
    let mut s = [0usize; 7];
    for (v, name) in s.iter_mut().zip(STAT_NAMES) {
        *v = rec
            .size(name)
            .ok_or_else(|| rec.invalid(format!("size `{name}` is missing")))? as usize;
    }
    let stats = ProductStats::from_counts(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
    let consistent = stats.m_f == a.nrows()
        && stats.z_a == a.nnzb()
        && stats.z_p == p.nnzb()
        && stats.z_w == w.nnzb()
        && stats.m_c == c.nrows()
        && stats.z_c == c.nnzb();
    if !consistent {
        return Err(rec.invalid("the stored sizes disagree with the stored patterns".into()));
    }
    Ok(TwoPassSchedule {
        a,
        p,
        w: Arc::new(w),
        r: Arc::new(r),
        r_source,
        c: Arc::new(c),
        stats,
    })
}

/// `R` is `P^T` and `r_source` its gather map: as many blocks, and block `k`
/// of `R` at `(I, j)` names a block of `P`'s row `j` in column `I`. Rows of
/// both patterns are strictly increasing, so distinct blocks of `R` name
/// distinct blocks of `P` and the map is a bijection: `R` is exactly `P^T`.
/// One pass over `P`'s blocks.
fn check_transpose(rec: &RecordView<'_>, r: &BlockPattern, r_source: &[u32], p: &BlockPattern) -> Result<()> {
    let ok = r.nnzb() == p.nnzb()
        && (0..r.nrows()).into_par_iter().all(|i| {
            r.row_range(i).all(|k| {
                let (j, s) = (r.col_idx()[k] as usize, r_source[k] as usize);
                p.row_range(j).contains(&s) && p.col_idx()[s] as usize == i
            })
        });
    if ok {
        Ok(())
    } else {
        Err(rec.invalid("`r.col_idx` and `r.source` do not describe the transpose of the stored P".into()))
    }
}

/// Every element of `v` is below `bound`.
fn check_below(rec: &RecordView<'_>, name: &str, v: &[u32], bound: usize) -> Result<()> {
    match v.par_iter().max() {
        Some(&m) if m as usize >= bound => Err(rec.invalid(format!(
            "array `{name}` holds index {m}, out of range for {bound} entries"
        ))),
        _ => Ok(()),
    }
}

/// `ptr` has `n + 1` entries, starts at zero, never decreases and ends at `end`.
fn check_ptr(rec: &RecordView<'_>, name: &str, ptr: &[u64], n: usize, end: usize) -> Result<()> {
    // In chunks (overlapping by one entry): a per-element parallel search costs more than the check.
    const CHUNK: usize = 1 << 16;
    let monotone = || {
        (0..ptr.len().div_ceil(CHUNK)).into_par_iter().all(|c| {
            ptr[c * CHUNK..ptr.len().min((c + 1) * CHUNK + 1)]
                .windows(2)
                .all(|w| w[0] <= w[1])
        })
    };
    let ok = ptr.len() == n + 1 && ptr[0] == 0 && ptr[n] == end as u64 && monotone();
    if ok {
        Ok(())
    } else {
        Err(rec.invalid(format!(
            "array `{name}` is not a pointer array of {n} ranges over {end} entries"
        )))
    }
}

struct Loader<'r, 'a> {
    rec: &'r RecordView<'a>,
    bundle: &'r Arc<MappedBundle>,
    base: &'r Arc<TwoPassSchedule>,
}

impl Loader<'_, '_> {
    fn u32(&self, name: &str) -> Result<SharedArray<u32>> {
        Ok(SharedArray::mapped(self.bundle, self.rec.array_u32(name)?))
    }
    fn u64(&self, name: &str) -> Result<SharedArray<u64>> {
        Ok(SharedArray::mapped(self.bundle, self.rec.array_u64(name)?))
    }
    fn size(&self, name: &str) -> Result<u64> {
        self.rec
            .size(name)
            .ok_or_else(|| self.rec.invalid(format!("size `{name}` is missing")))
    }

    /// `order` is a permutation of `0..n` that maps each window of `window`
    /// consecutive positions onto itself.
    fn permutation(&self, name: &str, order: &[u32], n: usize, window: usize) -> Result<()> {
        let window = window.max(1);
        let ok = order.len() == n
            && order.par_chunks(window).enumerate().all(|(w, chunk)| {
                let start = w * window;
                let mut seen = vec![false; chunk.len()];
                chunk.iter().all(|&s| {
                    let k = (s as usize).wrapping_sub(start);
                    k < chunk.len() && !std::mem::replace(&mut seen[k], true)
                })
            });
        if ok {
            Ok(())
        } else {
            Err(self.rec.invalid(format!(
                "array `{name}` is not a permutation of 0..{n} within windows of {window}"
            )))
        }
    }

    /// Boundaries `b` (non-decreasing, `0..=end`) as ranges `b[i]..b[i+1]`.
    fn bounds(&self, name: &str, end: usize) -> Result<Vec<Range<usize>>> {
        let b = self.u64(name)?;
        if b.is_empty() {
            return Err(self.rec.invalid(format!("array `{name}` is empty")));
        }
        check_ptr(self.rec, name, &b, b.len() - 1, end)?;
        Ok(b.windows(2).map(|w| w[0] as usize..w[1] as usize).collect())
    }

    fn runs(&self, stage: &str, x_len: usize, y_len: usize, slots: usize) -> Result<(SlotRuns, SharedArray<u64>)> {
        let runs = self.plain_runs(stage, x_len, y_len, slots)?;
        let tn = format!("{stage}.tiles");
        let tiles = self.u64(&tn)?;
        if tiles.is_empty() {
            return Err(self.rec.invalid(format!("array `{tn}` is empty")));
        }
        check_ptr(self.rec, &tn, &tiles, tiles.len() - 1, slots)?;
        Ok((runs, tiles))
    }

    /// The slot runs of `stage` (`{stage}.{ptr,x,y}`) over `slots` slots, every
    /// `x` below `x_len` and `y` below `y_len`.
    fn plain_runs(&self, stage: &str, x_len: usize, y_len: usize, slots: usize) -> Result<SlotRuns> {
        let (pn, xn, yn) = (format!("{stage}.ptr"), format!("{stage}.x"), format!("{stage}.y"));
        let runs = SlotRuns {
            ptr: self.u64(&pn)?,
            x: self.u32(&xn)?,
            y: self.u32(&yn)?,
        };
        if runs.x.len() != runs.y.len() {
            return Err(self.rec.invalid(format!("arrays `{xn}` and `{yn}` differ in length")));
        }
        check_ptr(self.rec, &pn, &runs.ptr, slots, runs.x.len())?;
        let bad = runs
            .x
            .par_chunks(1 << 16)
            .zip(runs.y.par_chunks(1 << 16))
            .any(|(xs, ys)| {
                xs.iter().zip(ys).fold(false, |bad, (&x, &y)| {
                    bad | (x as usize >= x_len) | (y as usize >= y_len)
                })
            });
        if bad {
            return Err(self
                .rec
                .invalid(format!("array `{xn}` or `{yn}` indexes a block out of range")));
        }
        Ok(runs)
    }

    /// The symmetric tensor pair (see the module docs): `W'`'s pattern, the
    /// runs of both stages (the `A P` runs' `x` blocks in the slot's row of
    /// `A`, at or left of the diagonal, flagged exactly there), the window
    /// order, the transposed-slot map (every slot onto its mirror) and the
    /// units (exactly the inspector's: the `A P` pairs and the folded `P^T W'`).
    fn tensor_pair_sym(&self) -> Result<TensorPairSymSchedule> {
        let b = self.base;
        let (a, p, c) = (&b.a, &b.p, &b.c);
        let wh = load_pattern(self.rec, "wh", p.nrows(), p.ncols())?;
        let ap = self.plain_runs("ap", usize::MAX, p.nnzb(), wh.nnzb())?;
        let rw = self.plain_runs("rw", p.nnzb(), wh.nnzb(), c.nnzb())?;
        // Each slot's run: blocks of its row of `A` at or left of the diagonal, the diagonal
        // one flagged and last (the device's halving kernel takes it after the others).
        let lower = (0..wh.nrows()).into_par_iter().all(|i| {
            let row = a.row_range(i);
            (wh.row_ptr()[i]..wh.row_ptr()[i + 1]).all(|s| {
                let run = &ap.x[ap.ptr[s] as usize..ap.ptr[s + 1] as usize];
                run.iter().enumerate().all(|(q, &x)| {
                    let k = (x & !DIAGONAL_FLAG) as usize;
                    row.contains(&k) && {
                        let j = a.col_idx()[k] as usize;
                        let dg = j == i;
                        j <= i && ((x & DIAGONAL_FLAG) != 0) == dg && (!dg || q + 1 == run.len())
                    }
                })
            })
        });
        if !lower {
            return Err(self.rec.invalid(
                "an `ap.x` block is not in its slot's row of A at or left of the diagonal, its diagonal flag is wrong, \
                 or a diagonal block is not its run's last"
                    .into(),
            ));
        }
        let window = self.size("window")? as usize;
        if window == 0 {
            return Err(self.rec.invalid("the column-split window is 0".into()));
        }
        let ap_order = self.u32("ap.order")?;
        self.permutation("ap.order", &ap_order, ap.slots(), window)?;
        let ap_pairs = self.pairs("ap", &ap, &wh, 2, true)?;
        let transpose = self.u32("c.transpose")?;
        let rp = c.row_ptr();
        let mirrored = transpose.len() == c.nnzb()
            && (0..c.nrows()).into_par_iter().all(|i| {
                c.row_range(i).all(|k| {
                    let j = c.col_idx()[k] as usize;
                    let t = transpose[k] as usize;
                    (rp[j]..rp[j + 1]).contains(&t) && c.col_idx()[t] as usize == i
                })
            });
        if !mirrored {
            return Err(self
                .rec
                .invalid("`c.transpose` does not map every slot of A_c onto its transposed slot".into()));
        }
        let (ptr, slots) = (self.u64("rw.fold.ptr")?, self.u32("rw.fold.slots")?);
        FoldedRuns::check(&ptr, &slots, &rw, c, &transpose).map_err(|e| {
            self.rec
                .invalid(format!("the `rw.fold` units are not the inspector's: {e}"))
        })?;
        let rw_fold = FoldedRuns { ptr, slots };
        Ok(TensorPairSymSchedule {
            base: b.clone(),
            wh: Arc::new(wh),
            ap,
            rw,
            window,
            ap_order,
            ap_pairs,
            rw_fold,
            transpose,
        })
    }

    fn column_split(&self) -> Result<ColumnSplitSchedule> {
        let tiled = self.slot_tiled()?;
        let window = self.size("window")? as usize;
        if window == 0 {
            return Err(self.rec.invalid("the column-split window is 0".into()));
        }
        let ap_order = self.u32("ap.order")?;
        self.permutation("ap.order", &ap_order, tiled.ap.slots(), window)?;
        let rw_order = self.u32("rw.order")?;
        self.permutation("rw.order", &rw_order, tiled.rw.slots(), window)?;
        Ok(ColumnSplitSchedule {
            tiled,
            window,
            ap_order,
            rw_order,
        })
    }

    /// The tensor-pair units of `stage` over the validated `runs` (which fill
    /// `out`'s slots), refused unless they are exactly the inspector's: `width`
    /// slots per unit (2 pairs rows `2r`, `2r + 1`), every slot once, and each
    /// unit's pointer range as long as the merge of its runs
    /// ([`PairedRuns::matches`]). Their entries are not stored: the device
    /// builds them from the runs ([`PairedRuns::rebuild`] on the host), so the
    /// loaded `ent` is empty.
    /// With `tails`, also each flagged diagonal block among its unit's last two
    /// entries ([`PairedRuns::check`]; the symmetric pair's `A P`).
    fn pairs(&self, stage: &str, runs: &SlotRuns, out: &BlockPattern, width: usize, tails: bool) -> Result<PairedRuns> {
        let name = |s: &str| format!("{stage}.pair.{s}");
        let stored = self.size(&name("width"))? as usize;
        if stored != width {
            return Err(self.rec.invalid(format!(
                "`{}` is {stored}, but this build pairs {width} slot(s) per unit there",
                name("width")
            )));
        }
        let (ptr, slots) = (self.u64(&name("ptr"))?, self.u32(&name("slots"))?);
        match PairedRuns::check(width, &ptr, &slots, runs, out, tails) {
            Ok(()) => {}
            Err(UnitsMismatch::Units) => {
                return Err(self.rec.invalid(format!(
                    "the `{stage}.pair` units do not merge each slot's run exactly once"
                )))
            }
            Err(UnitsMismatch::DiagonalOutsideTail) => {
                return Err(self.rec.invalid(format!(
                    "a diagonal block of `{stage}` is not among the last two entries of its pair unit (the runs of \
                     rows 2r and 2r + 1 merged by `y`)"
                )))
            }
        }
        Ok(PairedRuns {
            width,
            ptr,
            slots,
            ent: SharedArray::default(),
        })
    }

    fn slot_tiled(&self) -> Result<SlotTiledSchedule> {
        let b = self.base;
        let (ap, ap_tiles) = self.runs("ap", b.a.nnzb(), b.p.nnzb(), b.w.nnzb())?;
        let (rw, rw_tiles) = self.runs("rw", b.p.nnzb(), b.w.nnzb(), b.c.nnzb())?;
        Ok(SlotTiledSchedule {
            base: b.clone(),
            ap,
            rw,
            ap_tiles,
            rw_tiles,
        })
    }

    /// Records cut into tiles over `rows` output rows; with `owned` rows, every
    /// record of tile `t` must write a slot in rows `tile_rows[t]..tile_rows[t+1]`
    /// of `out` (the executor hands each tile only those rows); otherwise any
    /// slot of `out`. One fused pass checks every record.
    fn flat(
        &self,
        stage: &str,
        x_len: usize,
        y_len: usize,
        out: &BlockPattern,
        rows: usize,
        owned: bool,
    ) -> Result<FlatRecords> {
        let name = |s: &str| format!("{stage}.{s}");
        let f = FlatRecords {
            x: self.u32(&name("x"))?,
            y: self.u32(&name("y"))?,
            slot: self.u32(&name("slot"))?,
            tile_rows: self.u32(&name("tile_rows"))?,
            tile_records: self.u64(&name("tile_records"))?,
        };
        let n = f.x.len();
        if f.y.len() != n || f.slot.len() != n {
            return Err(self
                .rec
                .invalid(format!("the `{stage}` record arrays differ in length")));
        }
        if f.tile_rows.is_empty() || f.tile_records.len() != f.tile_rows.len() {
            return Err(self.rec.invalid(format!("the `{stage}` tile arrays are inconsistent")));
        }
        let tiles = f.tile_rows.len() - 1;
        let tile_rows: Vec<u64> = f.tile_rows.iter().map(|&r| r as u64).collect();
        check_ptr(self.rec, &name("tile_rows"), &tile_rows, tiles, rows)?;
        check_ptr(self.rec, &name("tile_records"), &f.tile_records, tiles, n)?;
        let rp = out.row_ptr();
        let ok = (0..tiles).into_par_iter().all(|t| {
            let (lo, hi) = if owned {
                (rp[f.tile_rows[t] as usize], rp[f.tile_rows[t + 1] as usize])
            } else {
                (0, out.nnzb())
            };
            let recs = f.tile_records[t] as usize..f.tile_records[t + 1] as usize;
            let (xs, ys, ss) = (&f.x[recs.clone()], &f.y[recs.clone()], &f.slot[recs]);
            // Branch-free accumulation of the three range tests vectorizes.
            let bad = xs.iter().zip(ys).zip(ss).fold(false, |bad, ((&x, &y), &s)| {
                bad | (x as usize >= x_len) | (y as usize >= y_len) | ((s as usize).wrapping_sub(lo) >= hi - lo)
            });
            !bad
        });
        if ok {
            Ok(f)
        } else {
            Err(self.rec.invalid(format!(
                "a `{stage}` record indexes a block out of range or writes outside the rows of its tile"
            )))
        }
    }

    fn panel_tiled(&self) -> Result<PanelTiledSchedule> {
        let b = self.base;
        let (m_c, m_f) = (b.c.nrows(), b.w.nrows());
        let tile_rows = self.u32("tile_rows")?;
        if tile_rows.is_empty() {
            return Err(self.rec.invalid("array `tile_rows` is empty".into()));
        }
        let tiles = tile_rows.len() - 1;
        let tr64: Vec<u64> = tile_rows.iter().map(|&r| r as u64).collect();
        check_ptr(self.rec, "tile_rows", &tr64, tiles, m_c)?;
        let halo = self.u32("halo")?;
        check_below(self.rec, "halo", &halo, m_f)?;
        let halo_ptr = self.u64("halo_ptr")?;
        check_ptr(self.rec, "halo_ptr", &halo_ptr, tiles, halo.len())?;
        let panel_offset = self.u64("panel_offset")?;
        let max_panel_blocks = self.size("max_panel_blocks")? as usize;
        let r_panel_row = self.u32("r_panel_row")?;
        if panel_offset.len() != halo.len() + tiles || r_panel_row.len() != b.r.nnzb() {
            return Err(self.rec.invalid("the panel arrays have inconsistent lengths".into()));
        }
        // Per tile: staged rows sorted, offsets follow W's row lengths within the
        // scratch panel, and every R block of the tile's rows names a staged row
        // holding R's column. The largest panel must be `max_panel_blocks`
        // exactly: executors allocate that much scratch per thread.
        if tiles == 0 && max_panel_blocks != 0 {
            return Err(self.rec.invalid("`max_panel_blocks` is not the largest panel".into()));
        }
        let largest = (0..tiles)
            .into_par_iter()
            .map(|t| panel_offset[halo_ptr[t + 1] as usize + t])
            .max()
            .unwrap_or(0);
        if largest != max_panel_blocks as u64 {
            return Err(self.rec.invalid(format!(
                "`max_panel_blocks` is {max_panel_blocks} but the largest panel holds {largest} blocks"
            )));
        }
        let ok = (0..tiles).into_par_iter().all(|t| {
            let rows = &halo[halo_ptr[t] as usize..halo_ptr[t + 1] as usize];
            let offs = &panel_offset[halo_ptr[t] as usize + t..halo_ptr[t + 1] as usize + t + 1];
            let sorted = rows.windows(2).all(|w| w[0] < w[1]);
            let offsets = offs[0] == 0
                && rows
                    .iter()
                    .enumerate()
                    .all(|(q, &j)| offs[q + 1] == offs[q] + b.w.row(j as usize).len() as u64)
                && offs[rows.len()] as usize <= max_panel_blocks;
            let staged = (tile_rows[t] as usize..tile_rows[t + 1] as usize).all(|i| {
                b.r.row_range(i).all(|k| {
                    rows.get(r_panel_row[k] as usize)
                        .is_some_and(|&j| j == b.r.col_idx()[k])
                })
            });
            sorted && offsets && staged
        });
        if !ok {
            return Err(self
                .rec
                .invalid("the panel tiles do not stage the W rows their R blocks need".into()));
        }
        let groups = self.bounds("groups", tiles)?;
        let halo_factor = f64::from_bits(self.size("halo_factor_bits")?);
        Ok(PanelTiledSchedule {
            base: b.clone(),
            tile_rows,
            halo_ptr,
            halo,
            panel_offset,
            r_panel_row,
            max_panel_blocks,
            halo_factor,
            groups,
        })
    }
}
