//! The symmetric tensor pair's inspector as it was before its steps were
//! made parallel or fused (a search per block for the mirrors, the lower
//! triangle built in one serial loop, `W'`'s pattern and its runs in separate
//! walks, the units' count pass walking the full merge, every step after the
//! one before): the reference the tests and the timing program hold today's
//! inspector to, array for array.
use super::*;

/// The former `transposed_slots`: a binary search per block.
pub fn transposed_slots(p: &BlockPattern) -> Result<Vec<u32>, SymmetryError> {
    if p.nrows() != p.ncols() {
        return Err(SymmetryError::NotSymmetric {
            row: p.nrows(),
            col: p.ncols(),
        });
    }
    let mut tr = vec![0u32; p.nnzb()];
    let rp = p.row_ptr();
    let bad = tr
        .par_chunks_mut(1 << 14)
        .enumerate()
        .map(|(c, out)| {
            let first = c << 14;
            let mut i = rp.partition_point(|&x| x <= first) - 1;
            for (q, t) in out.iter_mut().enumerate() {
                let k = first + q;
                while rp[i + 1] <= k {
                    i += 1;
                }
                let j = p.col_idx()[k] as usize;
                match p.find(j, i) {
                    Some(m) => *t = m as u32,
                    None => return Some((i, j)),
                }
            }
            None
        })
        .find_first(|b| b.is_some())
        .flatten();
    match bad {
        Some((row, col)) => Err(SymmetryError::NotSymmetric { row, col }),
        None => Ok(tr),
    }
}

/// The former `PairedRuns::paired` (its count pass walks the full merge; the
/// fill is the present one's).
pub fn paired(runs: &SlotRuns, out: &BlockPattern) -> PairedRuns {
    let chunks = pair_chunks(runs, out);
    let units: Vec<usize> = chunks
        .par_iter()
        .map(|rp| {
            let mut units = 0;
            for r in rp.clone() {
                merge_row_pair(runs, out, r, |_| units += 1, |_| {});
            }
            units
        })
        .collect();
    PairedRuns::fill_pairs(runs, out, &chunks, &units)
}

/// Walks the units of output rows `2r`, `2r + 1` (see [`PairedRuns`]): for
/// each, `unit([s0, s1])` and then `entry([x0, y, x1, y])` per merged entry.
fn merge_row_pair(
    runs: &SlotRuns,
    out: &BlockPattern,
    r: usize,
    mut unit: impl FnMut([u32; 2]),
    mut entry: impl FnMut([u32; 4]),
) {
    pair_units(out, r, |s0, s1| {
        unit([s0 as u32, s1.map_or(NO_BLOCK, |s| s as u32)]);
        merge_runs(runs, s0, s1, &mut entry);
    });
}

/// The entries of `units` over `runs`, plainly: per unit, for each `y` block
/// its slots' runs hold (in ascending order, each run's `y` ascending), the
/// `x` block of each side's run at that `y` ([`NO_BLOCK`] where it has none).
/// The reference [`PairedRuns::rebuild`] and the device's upload are held to.
pub fn pair_entries(units: &PairedRuns, runs: &SlotRuns) -> Vec<u32> {
    let w = units.width;
    let mut ent = Vec::with_capacity(2 * w * units.entries());
    for u in 0..units.units() {
        let mut at = std::collections::BTreeMap::new();
        for (side, &s) in units.slots[w * u..w * u + w].iter().enumerate() {
            if s == NO_BLOCK {
                continue;
            }
            let run = runs.run(s as usize);
            assert!(
                runs.y[run.clone()].windows(2).all(|p| p[0] < p[1]),
                "slot {s}: y must ascend"
            );
            for q in run {
                at.entry(runs.y[q]).or_insert([NO_BLOCK; 2])[side] = runs.x[q];
            }
        }
        for (y, x) in at {
            for &xs in &x[..w] {
                ent.extend_from_slice(&[xs, y]);
            }
        }
    }
    ent
}

/// The former `TensorPairSymSchedule::inspect`, step by step (laps named `ref.*`).
pub fn tensor_pair_sym(base: Arc<TwoPassSchedule>) -> Result<TensorPairSymSchedule, SymmetryError> {
    let lap = crate::laps::lap;
    let (a, p) = (&base.a, &base.p);
    if a.nnzb() >= DIAGONAL_FLAG as usize {
        return Err(SymmetryError::TooLarge(a.nnzb()));
    }
    transposed_slots(a)?;
    lap("ref.mirrors_a");
    let transpose = transposed_slots(&base.c)?;
    lap("ref.mirrors_c");
    let lower: Vec<usize> = (0..a.nrows())
        .into_par_iter()
        .map(|i| a.row(i).partition_point(|&j| j as usize <= i))
        .collect();
    let mut rp = vec![0usize; a.nrows() + 1];
    for i in 0..a.nrows() {
        rp[i + 1] = rp[i] + lower[i];
    }
    let mut ci = vec![0u32; rp[a.nrows()]];
    let mut src = vec![0u32; rp[a.nrows()]];
    for i in 0..a.nrows() {
        for (q, k) in a.row_range(i).take(lower[i]).enumerate() {
            let j = a.col_idx()[k];
            ci[rp[i] + q] = j;
            src[rp[i] + q] = k as u32 | if j as usize == i { DIAGONAL_FLAG } else { 0 };
        }
    }
    let l = BlockPattern::new(a.nrows(), a.ncols(), rp, ci).expect("rows of A, truncated, stay sorted");
    lap("ref.lower");
    let wh = Arc::new(spgemm_symbolic(&l, p).expect("L has A's columns, P's rows"));
    lap("ref.wh_symbolic");
    let ap = slot_runs(&l, p, &wh, &|kx| src[kx]);
    lap("ref.ap_runs");
    let r_src = &base.r_source;
    let rw = slot_runs(&base.r, &wh, &base.c, &|kx| r_src[kx]);
    lap("ref.rw_runs");
    let window = COLUMN_SPLIT_WINDOW;
    let ap_order = windowed_run_length_order(&ap, window);
    lap("ref.ap_order");
    let ap_pairs = paired(&ap, &wh);
    lap("ref.ap_pairs");
    let rw_fold = FoldedRuns::fold(&rw, &base.c, &transpose);
    lap("ref.rw_fold");
    Ok(TensorPairSymSchedule {
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
