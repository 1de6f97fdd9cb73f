//! The symmetric tensor pair's inspector, its steps made parallel, builds the
//! same arrays as the former serial steps (`variants::reference`), on random
//! structurally symmetric patterns of several sizes and shapes; a pattern
//! without a mirror is refused with the same first block.
use ptap_schedules::variants::{reference, transposed_slots, SymmetryError, TensorPairSymSchedule};
use ptap_schedules::TwoPassSchedule;
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
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A structurally symmetric `n x n` pattern: the diagonal (unless `holes`),
/// `per_row` couplings within `band` of each row (any column where `band` is
/// `n`), mirrored; and a `P` of `n x m` with 1 to `p_max` blocks per row.
fn patterns(
    rng: &mut Rng,
    n: usize,
    m: usize,
    per_row: usize,
    band: usize,
    p_max: usize,
    holes: bool,
) -> (Arc<BlockPattern>, Arc<BlockPattern>) {
    let mut rows: Vec<Vec<u32>> = (0..n)
        .map(|i| if holes && i % 7 == 3 { vec![] } else { vec![i as u32] })
        .collect();
    for i in 0..n {
        for _ in 0..per_row {
            let lo = i.saturating_sub(band);
            let hi = (i + band).min(n - 1);
            let j = lo + rng.below(hi - lo + 1);
            if holes && j == i {
                continue;
            }
            rows[i].push(j as u32);
            rows[j].push(i as u32);
        }
    }
    for r in &mut rows {
        r.sort_unstable();
        r.dedup();
    }
    let p_rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let centre = i * m / n;
            let mut r: Vec<u32> = (0..1 + rng.below(p_max))
                .map(|_| ((centre + rng.below(5)).saturating_sub(2)).min(m - 1) as u32)
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

fn assert_same(got: &TensorPairSymSchedule, want: &TensorPairSymSchedule, what: &str) {
    assert!(Arc::ptr_eq(&got.base, &want.base), "{what}");
    assert_eq!(*got.wh, *want.wh, "{what}: W'");
    assert_eq!(got.ap, want.ap, "{what}: A P runs");
    assert_eq!(got.rw, want.rw, "{what}: P^T W' runs");
    assert_eq!(got.window, want.window, "{what}");
    assert_eq!(got.ap_order, want.ap_order, "{what}: window order");
    assert_eq!(got.ap_pairs, want.ap_pairs, "{what}: A P units");
    assert_eq!(got.rw_fold, want.rw_fold, "{what}: folded units");
    assert_eq!(got.transpose, want.transpose, "{what}: mirrors of A_c");
}

#[test]
fn the_parallel_inspector_builds_the_serial_ones_arrays() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    // (rows, aggregates, couplings per row, band, P blocks per row, holes in the diagonal)
    for &(n, m, per_row, band, p_max, holes) in &[
        (1, 1, 0, 1, 1, false),
        (2, 1, 1, 1, 1, false),
        (37, 5, 3, 37, 3, false),
        (500, 40, 4, 500, 3, true),
        (3_000, 200, 6, 30, 4, false),
        (20_000, 900, 8, 60, 5, true),
        (40_000, 1_500, 12, 200, 6, false),
    ] {
        let (a, p) = patterns(&mut rng, n, m, per_row, band, p_max, holes);
        let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p).unwrap());
        let want = reference::tensor_pair_sym(base.clone()).unwrap();
        let got = TensorPairSymSchedule::inspect(base.clone()).unwrap();
        assert_same(&got, &want, &format!("n = {n}"));
        assert_eq!(
            transposed_slots(&a).unwrap(),
            reference::transposed_slots(&a).unwrap(),
            "n = {n}"
        );
        assert!(got.ap.contributions() > 0 || n == 1 && per_row == 0 || holes);
        checked += 1;
    }
    assert_eq!(checked, 7);
}

/// One block loses its mirror (or gains one without it): both inspectors
/// refuse the pattern naming the same first block, and so does the map.
#[test]
fn a_missing_mirror_is_refused_at_the_same_first_block() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut refused = 0;
    for trial in 0..24 {
        let n = [50, 2_000, 30_000][trial % 3];
        let (a, p) = patterns(&mut rng, n, n / 10 + 1, 6, 40, 3, trial % 2 == 0);
        // Drop one off-diagonal block (its mirror stays), or add a lone one.
        let mut rows: Vec<Vec<u32>> = (0..n).map(|i| a.row(i).to_vec()).collect();
        let i = rng.below(n);
        if trial % 4 < 2 {
            let Some(pos) = rows[i].iter().position(|&j| j as usize != i) else {
                continue;
            };
            rows[i].remove(pos);
        } else {
            let j = rng.below(n);
            if j == i || rows[i].contains(&(j as u32)) {
                continue;
            }
            rows[i].push(j as u32);
        }
        let a = Arc::new(BlockPattern::from_rows(n, &rows).unwrap());
        let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p).unwrap());
        let want = reference::tensor_pair_sym(base.clone()).unwrap_err();
        let got = TensorPairSymSchedule::inspect(base).unwrap_err();
        assert!(matches!(want, SymmetryError::NotSymmetric { .. }));
        assert_eq!(got, want, "trial {trial}");
        assert_eq!(transposed_slots(&a).unwrap_err(), want, "trial {trial}");
        assert!(!a.mirror_slots(None));
        refused += 1;
    }
    assert!(refused >= 16, "{refused}");
}

/// A rectangular pattern has no mirrors; an empty one has all of them.
#[test]
fn shapes_without_mirrors() {
    let rect = BlockPattern::from_rows(3, &[vec![0, 1], vec![2]]).unwrap();
    assert!(!rect.mirror_slots(None));
    assert_eq!(transposed_slots(&rect), reference::transposed_slots(&rect));
    let empty = BlockPattern::from_rows(0, &[]).unwrap();
    assert!(empty.mirror_slots(Some(&mut [])));
    assert_eq!(transposed_slots(&empty).unwrap(), Vec::<u32>::new());
}

/// The tensor pair's units (whose count pass now walks only the merge's
/// length) are the former ones too, and their rebuilt entries the plain
/// reference's.
#[test]
fn the_tensor_pairs_units_are_the_former_ones() {
    use ptap_schedules::variants::{PairedRuns, TensorPairSchedule};
    let mut rng = Rng(77);
    for &(n, m) in &[(40, 6), (5_000, 300), (30_000, 1_000)] {
        let (a, p) = patterns(&mut rng, n, m, 6, 50, 4, false);
        let base = Arc::new(TwoPassSchedule::inspect(a, p).unwrap());
        let s = TensorPairSchedule::inspect(base);
        let want = reference::paired(&s.split.tiled.ap, &s.split.tiled.base.w);
        assert!(want.units() > 0);
        assert_eq!(s.ap, want, "n = {n}");
        assert_eq!(PairedRuns::paired(&s.split.tiled.ap, &s.split.tiled.base.w), want);
        let r = PairedRuns::rebuild(2, want.ptr.clone(), want.slots.clone(), &s.split.tiled.ap).unwrap();
        assert_eq!(
            r.ent[..],
            reference::pair_entries(&want, &s.split.tiled.ap)[..],
            "n = {n}"
        );
    }
}
