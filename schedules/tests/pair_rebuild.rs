//! The tensor pair's entries rebuilt from its units and slot runs (neither the
//! inspector nor a schedule file of format 5 holds them) are the plain
//! reference's, built from the runs: same entries, same order, on random
//! patterns and through a written file; and the loader's check accepts exactly
//! the inspector's units.
use proptest::prelude::*;
use ptap_schedules::file::{validate_bytes_with_key, write_bundle_with_key, ScheduleBundle};
use ptap_schedules::key::TagKey;
use ptap_schedules::variants::{reference, PairedRuns, TensorPairSchedule};
use ptap_schedules::{TwoPassSchedule, VariantSchedule};
use ptap_sparse::BlockPattern;
use std::sync::Arc;

/// `A` (`n x n`, each row its diagonal and up to `extra` columns from `cols`)
/// and `P` (`n x m`, each row one to three columns from `pcols`).
fn patterns(n: usize, m: usize, cols: &[u32], pcols: &[u32], extra: usize) -> (Arc<BlockPattern>, Arc<BlockPattern>) {
    let a: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let mut r: Vec<u32> = (0..extra)
                .map(|j| cols[(i * extra + j) % cols.len()] % n as u32)
                .chain([i as u32])
                .collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let p: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let k = 1 + i % 3;
            let mut r: Vec<u32> = (0..k).map(|j| pcols[(i * 3 + j) % pcols.len()] % m as u32).collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    (
        Arc::new(BlockPattern::from_rows(n, &a).unwrap()),
        Arc::new(BlockPattern::from_rows(m, &p).unwrap()),
    )
}

fn assert_rebuilt(s: &TensorPairSchedule) {
    let (w, c) = (&s.split.tiled.base.w, &s.split.tiled.base.c);
    for (units, runs, out) in [(&s.ap, &s.split.tiled.ap, w), (&s.rw, &s.split.tiled.rw, c)] {
        assert!(units.ent.is_empty(), "the inspector builds no entries");
        assert!(PairedRuns::matches(units.width, &units.ptr, &units.slots, runs, out));
        let r = PairedRuns::rebuild(units.width, units.ptr.clone(), units.slots.clone(), runs)
            .expect("the inspector's units rebuild");
        assert!(r.has_entries());
        assert_eq!((r.width, &r.ptr, &r.slots), (units.width, &units.ptr, &units.slots));
        assert_eq!(r.ent[..], reference::pair_entries(units, runs)[..]);
        // A unit pointer moved by one, or a unit's slot changed: no longer the inspector's.
        if let Some(k) = (1..units.units()).find(|&k| units.ptr[k + 1] > units.ptr[k]) {
            let mut ptr = units.ptr.to_vec();
            ptr[k] += 1;
            assert!(!PairedRuns::matches(units.width, &ptr, &units.slots, runs, out));
            assert!(PairedRuns::rebuild(units.width, ptr.into(), units.slots.clone(), runs).is_none());
        }
        if units.units() > 1 {
            let mut slots = units.slots.to_vec();
            slots.swap(0, units.width);
            assert!(!PairedRuns::matches(units.width, &units.ptr, &slots, runs, out));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rebuilt_entries_are_the_inspectors(
        n in 1usize..120,
        m in 1usize..30,
        extra in 0usize..8,
        cols in proptest::collection::vec(any::<u32>(), 1..64),
        pcols in proptest::collection::vec(any::<u32>(), 1..16),
    ) {
        let (a, p) = patterns(n, m, &cols, &pcols, extra);
        let base = Arc::new(TwoPassSchedule::inspect(a, p).unwrap());
        assert_rebuilt(&TensorPairSchedule::inspect(base));
    }
}

#[test]
fn a_written_tensor_pair_loads_the_inspectors_units() {
    let cols: Vec<u32> = (0..97u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
    let pcols: Vec<u32> = (0..31u32).map(|i| i.wrapping_mul(40503) >> 3).collect();
    let (a, p) = patterns(400, 37, &cols, &pcols, 6);
    let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
    let s = TensorPairSchedule::inspect(base.clone());
    let written = VariantSchedule::TensorPair(Arc::new(s.clone()));
    let key = TagKey::from_bytes([3; 32]);
    let path = std::env::temp_dir().join(format!("ptap-pair-rebuild-{}.ptaps", std::process::id()));
    let bundle = ScheduleBundle {
        created_by: "test".into(),
        problem: "pair rebuild".into(),
        records: vec![written.to_record(0, 3, 6)],
    };
    write_bundle_with_key(&path, &bundle, &key).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let m = Arc::new(validate_bytes_with_key(&bytes, &key).unwrap());
    let VariantSchedule::TensorPair(l) = VariantSchedule::from_record(&m, 0, a, p).unwrap() else {
        panic!("not a tensor pair")
    };
    // Loaded: the inspector's units, whose entries rebuild to the reference's.
    for (got, want, runs) in [(&l.ap, &s.ap, &l.split.tiled.ap), (&l.rw, &s.rw, &l.split.tiled.rw)] {
        assert!(!got.has_entries() && got.ent.is_empty());
        assert_eq!(got, want);
        let r = PairedRuns::rebuild(got.width, got.ptr.clone(), got.slots.clone(), runs).unwrap();
        assert_eq!(r.ent[..], reference::pair_entries(want, runs)[..]);
    }
    // Neighbouring rows share P blocks here: the merge is exercised.
    let ap = PairedRuns::rebuild(2, l.ap.ptr.clone(), l.ap.slots.clone(), &l.split.tiled.ap).unwrap();
    let both = ap
        .ent
        .chunks(4)
        .filter(|q| q[0] != u32::MAX && q[2] != u32::MAX)
        .count();
    assert!(both > 50, "{both}");
    assert_eq!(s.ap.entries() + both, s.split.tiled.ap.contributions());
}
