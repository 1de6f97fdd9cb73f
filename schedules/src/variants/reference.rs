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
    let counts: Vec<(usize, usize)> = chunks
        .par_iter()
        .map(|rp| {
            let (mut units, mut entries) = (0, 0);
            for r in rp.clone() {
                merge_row_pair(runs, out, r, |_| units += 1, |_| entries += 1);
            }
            (units, entries)
        })
        .collect();
    PairedRuns::fill_pairs(runs, out, &chunks, &counts)
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
