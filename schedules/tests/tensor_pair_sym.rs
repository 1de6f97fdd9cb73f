//! The symmetric tensor pair's schedule (`A_c = X + X^T`, `X = P^T (L + D/2) P`):
//! replayed on the host from its runs and its folded `P^T W'` units (one per
//! slot of `A_c`'s upper triangle, as the device runs them), it gives V0's
//! product to rounding and an exactly symmetric one; it refuses a
//! non-symmetric pattern; it survives a schedule file, whose folded units are
//! refused unless they are the inspector's.
use ptap_schedules::file::{write_bundle_with_key, MappedBundle, ScheduleBundle};
use ptap_schedules::key::TagKey;
use ptap_schedules::variants::{
    reference, FoldError, FoldedRuns, PairedRuns, SymmetryError, TensorPairSymSchedule, DIAGONAL_FLAG, NO_BLOCK,
};
use ptap_schedules::{ScheduleError, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockPattern;
use std::sync::Arc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn value(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A random structurally symmetric `n x n` pattern with its diagonal and a
/// random `n x m` `P` with at least one block per row.
fn patterns(rng: &mut Rng, n: usize, m: usize) -> (Arc<BlockPattern>, Arc<BlockPattern>) {
    let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32]).collect();
    for i in 0..n {
        for _ in 0..3 {
            let j = (rng.next() % n as u64) as usize;
            rows[i].push(j as u32);
            rows[j].push(i as u32);
        }
    }
    for r in &mut rows {
        r.sort_unstable();
        r.dedup();
    }
    let p_rows: Vec<Vec<u32>> = (0..n)
        .map(|_| {
            let mut r: Vec<u32> = (0..1 + rng.next() % 3)
                .map(|_| (rng.next() % m as u64) as u32)
                .collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    (
        Arc::new(BlockPattern::from_rows(n, &rows).unwrap()),
        Arc::new(BlockPattern::from_rows(m, &p_rows).unwrap()),
    )
}

/// Symmetric values of `a` (`bf x bf` blocks): block `(j, i)` is block `(i, j)` transposed.
fn symmetric_values(rng: &mut Rng, a: &BlockPattern, bf: usize) -> Vec<f64> {
    let bb = bf * bf;
    let mut v = vec![0.0; a.nnzb() * bb];
    for i in 0..a.nrows() {
        for k in a.row_range(i) {
            let j = a.col_idx()[k] as usize;
            if j < i {
                continue;
            }
            let t = a.find(j, i).unwrap();
            for r in 0..bf {
                for c in 0..bf {
                    let x = rng.value();
                    v[k * bb + r * bf + c] = x;
                    v[t * bb + c * bf + r] = x;
                }
            }
        }
    }
    v
}

/// `out (m x n) += x (m x k) y (k x n)`, `x` read transposed (stored `k x m`) when `xt`.
fn gemm(x: &[f64], y: &[f64], out: &mut [f64], (m, k, n): (usize, usize, usize), xt: bool, scale: f64) {
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for l in 0..k {
                let xv = if xt { x[l * m + i] } else { x[i * k + l] };
                s += xv * y[l * n + j];
            }
            out[i * n + j] += scale * s;
        }
    }
}

/// V0's `P^T A P` (dense per block, row by row).
fn v0(base: &TwoPassSchedule, av: &[f64], pv: &[f64], bf: usize, bc: usize) -> Vec<f64> {
    let (a, p, w, c) = (&base.a, &base.p, &base.w, &base.c);
    let mut wv = vec![0.0; w.nnzb() * bf * bc];
    for i in 0..a.nrows() {
        for ka in a.row_range(i) {
            let l = a.col_idx()[ka] as usize;
            for kp in p.row_range(l) {
                let s = w.find(i, p.col_idx()[kp] as usize).unwrap();
                let (x, y) = (&av[ka * bf * bf..][..bf * bf], &pv[kp * bf * bc..][..bf * bc]);
                gemm(x, y, &mut wv[s * bf * bc..][..bf * bc], (bf, bf, bc), false, 1.0);
            }
        }
    }
    let mut cv = vec![0.0; c.nnzb() * bc * bc];
    for j in 0..p.nrows() {
        for kp in p.row_range(j) {
            let i = p.col_idx()[kp] as usize;
            for kw in w.row_range(j) {
                let s = c.find(i, w.col_idx()[kw] as usize).unwrap();
                let (x, y) = (&pv[kp * bf * bc..][..bf * bc], &wv[kw * bf * bc..][..bf * bc]);
                gemm(x, y, &mut cv[s * bc * bc..][..bc * bc], (bc, bf, bc), true, 1.0);
            }
        }
    }
    cv
}

/// `W' = (L + D/2) P` from the schedule's `A P` runs.
fn w_half(s: &TensorPairSymSchedule, av: &[f64], pv: &[f64], bf: usize, bc: usize) -> Vec<f64> {
    let mut wv = vec![0.0; s.wh.nnzb() * bf * bc];
    for slot in 0..s.ap.slots() {
        for q in s.ap.run(slot) {
            let x = s.ap.x[q];
            let ka = (x & !DIAGONAL_FLAG) as usize;
            let scale = if x & DIAGONAL_FLAG != 0 { 0.5 } else { 1.0 };
            let kp = s.ap.y[q] as usize;
            let (x, y) = (&av[ka * bf * bf..][..bf * bf], &pv[kp * bf * bc..][..bf * bc]);
            gemm(x, y, &mut wv[slot * bf * bc..][..bf * bc], (bf, bf, bc), false, scale);
        }
    }
    wv
}

/// The symmetric schedule replayed from its runs the way the symmetrize pass
/// did: `W'`, `X` per slot, then `X + X^T`.
fn replay_two_pass(s: &TensorPairSymSchedule, av: &[f64], pv: &[f64], bf: usize, bc: usize) -> Vec<f64> {
    let wv = w_half(s, av, pv, bf, bc);
    let mut xv = vec![0.0; s.base.c.nnzb() * bc * bc];
    for slot in 0..s.rw.slots() {
        for q in s.rw.run(slot) {
            let (kp, kw) = (s.rw.x[q] as usize, s.rw.y[q] as usize);
            let (x, y) = (&pv[kp * bf * bc..][..bf * bc], &wv[kw * bf * bc..][..bf * bc]);
            gemm(x, y, &mut xv[slot * bc * bc..][..bc * bc], (bc, bf, bc), true, 1.0);
        }
    }
    let bb = bc * bc;
    let mut cv = vec![0.0; xv.len()];
    for slot in 0..s.rw.slots() {
        let t = s.transpose[slot] as usize;
        for r in 0..bc {
            for c in 0..bc {
                cv[slot * bb + r * bc + c] = xv[slot * bb + r * bc + c] + xv[t * bb + c * bc + r];
            }
        }
    }
    cv
}

/// The folded units replayed as the device runs them: per unit one
/// accumulator over half 0's entries `(P_iI, W'_iJ)` as `P^T W'`, then half
/// 1's `(P_iJ, W'_iI)` as `W'^T P`; the sum to the first slot and its
/// transpose to the second, or `D + D^T` to a diagonal slot.
fn replay(s: &TensorPairSymSchedule, av: &[f64], pv: &[f64], bf: usize, bc: usize) -> Vec<f64> {
    let wv = w_half(s, av, pv, bf, bc);
    let f = &s.rw_fold;
    let ent = f.entries_of(&s.rw);
    assert_eq!(ent.len(), 2 * f.entries());
    let (fb, bb) = (bf * bc, bc * bc);
    let mut cv = vec![f64::NAN; s.base.c.nnzb() * bb];
    for u in 0..f.units() {
        let mut d = vec![0.0; bb];
        for h in 0..2 {
            for q in f.ptr[2 * u + h] as usize..f.ptr[2 * u + h + 1] as usize {
                let (kp, kw) = (ent[2 * q] as usize, ent[2 * q + 1] as usize);
                let (pb, wb) = (&pv[kp * fb..][..fb], &wv[kw * fb..][..fb]);
                let (x, y) = if h == 0 { (pb, wb) } else { (wb, pb) };
                gemm(x, y, &mut d, (bc, bf, bc), true, 1.0);
            }
        }
        let (s0, s1) = (f.slots[2 * u] as usize, f.slots[2 * u + 1]);
        for r in 0..bc {
            for c in 0..bc {
                let v = d[r * bc + c];
                if s1 == NO_BLOCK {
                    cv[s0 * bb + r * bc + c] = v + d[c * bc + r];
                } else {
                    cv[s0 * bb + r * bc + c] = v;
                    cv[s1 as usize * bb + c * bc + r] = v;
                }
            }
        }
    }
    cv
}

/// `X`'s runs split into chunks of at most `len` (`SlotRuns::split`) and
/// replayed as the device runs them: one partial sum per chunk, then per
/// slot element its chunks in order (from the first one's value) plus its
/// mirror's.
fn replay_split(s: &TensorPairSymSchedule, av: &[f64], pv: &[f64], bf: usize, bc: usize, len: usize) -> Vec<f64> {
    let wv = w_half(s, av, pv, bf, bc);
    let sp = s.rw.split(len).unwrap();
    let (fb, bb) = (bf * bc, bc * bc);
    let mut xs = vec![0.0; sp.chunks() * bb];
    for c in 0..sp.chunks() {
        for q in sp.runs.run(c) {
            let (kp, kw) = (sp.runs.x[q] as usize, sp.runs.y[q] as usize);
            gemm(
                &pv[kp * fb..][..fb],
                &wv[kw * fb..][..fb],
                &mut xs[c * bb..][..bb],
                (bc, bf, bc),
                true,
                1.0,
            );
        }
    }
    let sum = |slot: usize, e: usize| {
        let ch = sp.first[slot] as usize..sp.first[slot + 1] as usize;
        ch.clone()
            .skip(1)
            .fold(xs[ch.start * bb + e], |acc, c| acc + xs[c * bb + e])
    };
    let mut cv = vec![f64::NAN; s.rw.slots() * bb];
    for slot in 0..s.rw.slots() {
        let t = s.transpose[slot] as usize;
        for r in 0..bc {
            for c in 0..bc {
                cv[slot * bb + r * bc + c] = sum(slot, r * bc + c) + sum(t, c * bc + r);
            }
        }
    }
    cv
}

fn rel_frobenius(got: &[f64], want: &[f64]) -> f64 {
    let d: f64 = got.iter().zip(want).map(|(a, b)| (a - b) * (a - b)).sum();
    let n: f64 = want.iter().map(|b| b * b).sum();
    (d / n.max(f64::MIN_POSITIVE)).sqrt()
}

#[test]
fn the_replayed_schedule_is_v0_to_rounding_exactly_symmetric_and_does_less_work() {
    // 3x3 / 3x6 (the fine level), 6x6 / 6x6 (the coarse ones), 4x4 / 4x10 (the user shape).
    for (t, &(bf, bc, n, m)) in [(3, 6, 300, 40), (6, 6, 120, 30), (4, 10, 90, 12), (1, 1, 1, 1)]
        .iter()
        .enumerate()
    {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 + t as u64);
        let (a, p) = patterns(&mut rng, n, m);
        let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
        let s = TensorPairSymSchedule::inspect(base.clone()).unwrap();
        let av = symmetric_values(&mut rng, &a, bf);
        let pv: Vec<f64> = (0..p.nnzb() * bf * bc).map(|_| rng.value()).collect();
        let want = v0(&base, &av, &pv, bf, bc);
        let got = replay(&s, &av, &pv, bf, bc);
        let err = rel_frobenius(&got, &want);
        assert!(err <= 1e-13, "{bf}x{bc}: {err:e}");
        // The same sums to rounding as X, then X + X^T.
        let two = replay_two_pass(&s, &av, &pv, bf, bc);
        assert!(rel_frobenius(&got, &two) <= 1e-14, "{bf}x{bc}");
        // One unit per slot of the upper triangle (every slot written), each run in one half.
        let c = &base.c;
        let upper = (0..c.nrows())
            .map(|i| c.row(i).iter().filter(|&&j| j as usize >= i).count())
            .sum::<usize>();
        assert_eq!(s.rw_fold.units(), upper);
        assert_eq!(s.rw_fold.entries(), s.rw.contributions());
        assert!(2 * s.rw_fold.units() <= c.nnzb() + c.nrows());
        assert!(got.iter().all(|v| v.is_finite()));
        // Exactly symmetric: block (J, I) is block (I, J) transposed, bit for bit.
        for i in 0..c.nrows() {
            for k in c.row_range(i) {
                let t = c.find(c.col_idx()[k] as usize, i).unwrap();
                assert_eq!(s.transpose[k] as usize, t);
                for r in 0..bc {
                    for q in 0..bc {
                        assert_eq!(
                            got[k * bc * bc + r * bc + q].to_bits(),
                            got[t * bc * bc + q * bc + r].to_bits()
                        );
                    }
                }
            }
        }
        // Fewer contributions in both stages (about half in A P), W' within W.
        let full_ap: usize = (0..a.nrows())
            .map(|i| a.row(i).iter().map(|&l| p.row(l as usize).len()).sum::<usize>())
            .sum();
        let (ap, rw) = s.contributions();
        assert!(ap < full_ap || n == 1, "{bf}x{bc}: {ap} of {full_ap}");
        assert!(rw <= base.stats.block_multiplies - full_ap, "{bf}x{bc}");
        assert!(s.wh.nnzb() <= base.w.nnzb());
        assert!(s.ap.x.iter().filter(|&&x| x & DIAGONAL_FLAG != 0).count() >= a.nrows().min(1));
        // A run's diagonal block, where it has one, is its last (the device's halving kernel's
        // order).
        for t in 0..s.ap.slots() {
            let run = &s.ap.x[s.ap.ptr[t] as usize..s.ap.ptr[t + 1] as usize];
            let flagged: Vec<usize> = (0..run.len()).filter(|&q| run[q] & DIAGONAL_FLAG != 0).collect();
            assert!(
                flagged.is_empty() || flagged == [run.len() - 1],
                "{bf}x{bc}: slot {t}: {flagged:?}"
            );
        }
        // A pair of slots (rows 2r and 2r + 1) merged by `y`: both diagonals among its last two
        // entries (the device's pair kernel's tail step).
        let u = PairedRuns::rebuild(2, s.ap_pairs.ptr.clone(), s.ap_pairs.slots.clone(), &s.ap).unwrap();
        for k in 0..u.units() {
            let (lo, hi) = (u.ptr[k] as usize, u.ptr[k + 1] as usize);
            for q in lo..hi {
                let e = &u.ent[4 * q..4 * q + 4];
                let flagged = [e[0], e[2]].iter().any(|&x| x != NO_BLOCK && x & DIAGONAL_FLAG != 0);
                assert!(
                    !flagged || q + 2 >= hi,
                    "{bf}x{bc}: unit {k}: entry {} of {}",
                    q - lo,
                    hi - lo
                );
            }
        }
        // X's runs split into chunks: the chunks tile each run in order, at most `len` long and
        // near-equal; V0 to rounding and exactly symmetric; whole-run chunks give the pass's bytes.
        let longest = (0..s.rw.slots()).map(|q| s.rw.run(q).len()).max().unwrap();
        for len in [1, 3, 8, longest] {
            let sp = s.rw.split(len).unwrap();
            assert_eq!(sp.first.len(), s.rw.slots() + 1);
            assert_eq!((sp.runs.x.clone(), sp.runs.y.clone()), (s.rw.x.clone(), s.rw.y.clone()));
            for q in 0..s.rw.slots() {
                let ch: Vec<_> = (sp.first[q]..sp.first[q + 1])
                    .map(|c| sp.runs.run(c as usize))
                    .collect();
                let n = s.rw.run(q).len();
                assert_eq!(ch.len(), n.div_ceil(len).max(1), "{bf}x{bc} len {len} slot {q}");
                assert_eq!(
                    (ch[0].start, ch.last().unwrap().end),
                    (s.rw.run(q).start, s.rw.run(q).end)
                );
                assert!(ch.windows(2).all(|w| w[0].end == w[1].start));
                let (lo, hi) = (
                    ch.iter().map(|r| r.len()).min().unwrap(),
                    ch.iter().map(|r| r.len()).max().unwrap(),
                );
                assert!(
                    hi <= len.max(1) && hi - lo <= 1,
                    "{bf}x{bc} len {len} slot {q}: {lo}..{hi}"
                );
            }
            let split = replay_split(&s, &av, &pv, bf, bc, len);
            assert!(rel_frobenius(&split, &want) <= 1e-13, "{bf}x{bc} len {len}");
            for k in 0..c.nnzb() {
                let t = s.transpose[k] as usize;
                for r in 0..bc * bc {
                    let (a, b) = (r / bc, r % bc);
                    assert_eq!(
                        split[k * bc * bc + r].to_bits(),
                        split[t * bc * bc + b * bc + a].to_bits()
                    );
                }
            }
            if len == longest {
                assert!(
                    split.iter().zip(&two).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{bf}x{bc}"
                );
            }
        }
        // Inspected twice, the same schedule.
        let again = TensorPairSymSchedule::inspect(base.clone()).unwrap();
        assert_eq!((again.ap.clone(), again.rw.clone()), (s.ap.clone(), s.rw.clone()));
        assert_eq!(again.ap_pairs, s.ap_pairs);
        assert_eq!(again.rw_fold, s.rw_fold);
    }
}

#[test]
fn folded_units_other_than_the_inspectors_are_refused_with_the_first_difference() {
    let mut rng = Rng(5);
    let (a, p) = patterns(&mut rng, 80, 12);
    let base = Arc::new(TwoPassSchedule::inspect(a, p).unwrap());
    let s = TensorPairSymSchedule::inspect(base.clone()).unwrap();
    let (c, f, rw, tr) = (&base.c, &s.rw_fold, &s.rw, &s.transpose[..]);
    let check = |ptr: &[u64], slots: &[u32]| FoldedRuns::check(ptr, slots, rw, c, tr);
    assert_eq!(check(&f.ptr, &f.slots), Ok(()));
    let (ptr, slots) = (f.ptr.to_vec(), f.slots.to_vec());
    let off = (0..f.units()).find(|&u| slots[2 * u + 1] != NO_BLOCK).unwrap();
    let diag = (0..f.units()).find(|&u| slots[2 * u + 1] == NO_BLOCK).unwrap();
    // A unit dropped: the counts no longer fit the upper triangle.
    let e = check(&ptr[..ptr.len() - 2], &slots[..slots.len() - 2]).unwrap_err();
    assert!(matches!(e, FoldError::Shape { .. }), "{e}");
    // An off-diagonal unit turned to its mirror: a slot of the lower triangle first.
    let mut sl = slots.clone();
    sl.swap(2 * off, 2 * off + 1);
    let e = check(&ptr, &sl).unwrap_err();
    assert_eq!(
        e,
        FoldError::NotUpper {
            unit: off,
            slot: slots[2 * off + 1]
        }
    );
    assert!(e.to_string().contains("not slot"), "{e}");
    // The absent-mirror mark forged: on an off-diagonal unit (its mirror never
    // written) and on a diagonal one (its run added twice, no transpose).
    for (u, v) in [(off, NO_BLOCK), (diag, slots[2 * diag])] {
        let mut sl = slots.clone();
        sl[2 * u + 1] = v;
        assert_eq!(check(&ptr, &sl), Err(FoldError::Mirror { unit: u, slot: v }));
    }
    // A half one entry longer, its successor one shorter.
    let k = (0..2 * f.units())
        .find(|&k| ptr[k + 1] > ptr[k] && k + 2 < ptr.len())
        .unwrap();
    let mut pt = ptr.clone();
    pt[k + 1] += 1;
    assert_eq!(check(&pt, &slots), Err(FoldError::Length { unit: k / 2 }));
    pt[k + 1] = u64::MAX;
    assert_eq!(check(&pt, &slots), Err(FoldError::Length { unit: k / 2 }));
}

#[test]
fn a_non_symmetric_pattern_is_refused_in_one_sentence() {
    let a = Arc::new(BlockPattern::from_rows(3, &[vec![0, 2], vec![1], vec![2]]).unwrap());
    let p = Arc::new(BlockPattern::from_rows(1, &[vec![0], vec![0], vec![0]]).unwrap());
    let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
    let e = TensorPairSymSchedule::inspect(base.clone()).unwrap_err();
    assert_eq!(e, SymmetryError::NotSymmetric { row: 0, col: 2 });
    let msg = e.to_string();
    assert!(
        msg.contains("block (0, 2) has no mirror (2, 0); use the tensor pair"),
        "{msg}"
    );
    // The front door refuses it with the same sentence; the infallible inspector gives the tensor pair.
    let e = VariantSchedule::try_inspect(Variant::TensorPairSym, base.clone(), 1).unwrap_err();
    assert_eq!(e.to_string(), msg);
    let policy = ptap_schedules::ProductPolicy::Fixed(Variant::TensorPairSym);
    let e = ptap_schedules::inspect::inspect(a, p, ptap_schedules::BlockShape::new(1, 1), &policy).unwrap_err();
    assert!(matches!(e, ScheduleError::Symmetry(_)), "{e}");
    assert_eq!(
        VariantSchedule::inspect(Variant::TensorPairSym, base, 1).variant(),
        Variant::TensorPair
    );
}

#[test]
fn the_schedule_round_trips_through_a_file() {
    let mut rng = Rng(77);
    let (a, p) = patterns(&mut rng, 200, 30);
    let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
    let s = VariantSchedule::try_inspect(Variant::TensorPairSym, base, 18).unwrap();
    let key = TagKey::from_bytes([3; 32]);
    let bundle = ScheduleBundle {
        created_by: "test".into(),
        problem: "sym".into(),
        records: vec![s.to_record(0, 3, 6)],
    };
    let path = std::env::temp_dir().join(format!("ptap-sym-{}.ptaps", std::process::id()));
    write_bundle_with_key(&path, &bundle, &key).unwrap();
    let m = Arc::new(MappedBundle::open_with_key(&path, &key).unwrap());
    let loaded = VariantSchedule::from_record(&m, 0, a, p).unwrap();
    std::fs::remove_file(&path).unwrap();
    let (VariantSchedule::TensorPairSym(w), VariantSchedule::TensorPairSym(l)) = (&s, &loaded) else {
        panic!("not symmetric tensor-pair schedules")
    };
    assert_eq!(*w.wh, *l.wh);
    assert_eq!((&w.ap, &w.rw), (&l.ap, &l.rw));
    assert_eq!(
        (&w.ap_order, &w.transpose, w.window),
        (&l.ap_order, &l.transpose, l.window)
    );
    let (a, b) = (&w.ap_pairs, &l.ap_pairs);
    assert_eq!(a, b);
    assert!(
        a.ent.is_empty() && b.ent.is_empty(),
        "entries are rebuilt, neither inspected nor stored"
    );
    let r = PairedRuns::rebuild(2, b.ptr.clone(), b.slots.clone(), &l.ap).unwrap();
    assert_eq!(r.ent[..], reference::pair_entries(a, &w.ap)[..]);
    assert_eq!(w.rw_fold, l.rw_fold);
    assert_eq!(loaded.to_record(0, 3, 6), s.to_record(0, 3, 6));
}
