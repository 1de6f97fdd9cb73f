//! Every variant's schedule through a schedule file: written, mapped, checked
//! and replayed, it gives the bytes of the schedule the inspector built in
//! memory; a file whose indices were forged behind a valid checksum is
//! refused, never followed.
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle, ScheduleBundle, ScheduleRecord};
use ptap_schedules::{ScheduleFileError, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use std::path::PathBuf;
use std::sync::Arc;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ptap-records-{}-{name}.ptaps", std::process::id()))
}

fn run(schedule: &VariantSchedule, a: &BlockCsr, p: &BlockCsr) -> BlockCsr {
    let (bf, bc) = p.block_shape();
    let mut exec = executor_for(schedule, bf, bc).unwrap();
    let mut c = BlockCsr::zeros(schedule.base().c.clone(), bc, bc);
    c.values_mut().fill(f64::NAN);
    exec.numeric(a, p, &mut c).unwrap();
    c
}

fn save(record: ScheduleRecord, name: &str) -> Arc<MappedBundle> {
    let path = temp(name);
    let bundle = ScheduleBundle {
        created_by: "test".into(),
        problem: name.into(),
        records: vec![record],
    };
    write_bundle(&path, &bundle).unwrap();
    let m = Arc::new(MappedBundle::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap(); // the mapping stays valid
    m
}

/// In-memory schedule versus the same schedule after a file round trip.
fn assert_round_trip(a: &BlockCsr, p: &BlockCsr, what: &str) {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    for v in Variant::ALL {
        // Arrange
        let Ok(inspected) = VariantSchedule::try_inspect(v, base.clone(), bf * bc) else {
            // The symmetric pair refuses a non-symmetric pattern (the beam's below runs it).
            assert_eq!(v, Variant::TensorPairSym, "{what}");
            continue;
        };
        let file = save(inspected.to_record(0, bf, bc), &format!("{what}-{}", v.name()));
        // Act
        let loaded = VariantSchedule::from_record(&file, 0, a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap();
        let (want, got) = (run(&inspected, a, p), run(&loaded, a, p));
        // Assert: same variant, same pattern, same bytes (V4's atomic order
        // varies between calls, so it is held to round-off).
        assert_eq!(loaded.variant(), v);
        assert_eq!(got.pattern(), want.pattern(), "{what} {v}");
        if v == Variant::OuterProductScatter {
            let scale = want.values().iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let diff = got
                .values()
                .iter()
                .zip(want.values())
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(diff <= 1e-13 * scale, "{what} {v}: {diff:e}");
        } else {
            let same = got
                .values()
                .iter()
                .zip(want.values())
                .all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "{what} {v}: the loaded schedule changed the bytes");
        }
    }
}

#[test]
fn every_variant_survives_a_file_round_trip_on_random_blocks() {
    let mut rng = Rng::new(11);
    for (bf, bc) in [(3, 6), (6, 6), (1, 1), (2, 3)] {
        let a = random_block_csr(&mut rng, 30, 30, bf, bf, 0.2, true);
        let p = random_block_csr(&mut rng, 30, 8, bf, bc, 0.25, false);
        assert_round_trip(&a, &p, &format!("random {bf}x{bc}"));
    }
}

#[test]
fn every_variant_survives_a_file_round_trip_on_the_beam() {
    let problem = BeamProblem::build(2).unwrap();
    let h = Hierarchy::build(
        problem.a,
        &problem.near_null,
        6,
        &HierarchyOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let lev = &h.levels()[0];
    assert_round_trip(&lev.a, &lev.transfer.as_ref().unwrap().p, "beam k=2");
}

/// A record with one array replaced, saved behind a valid checksum.
fn forged(base: &VariantSchedule, bf: usize, bc: usize, name: &str, f: impl Fn(&mut Vec<u32>)) -> Arc<MappedBundle> {
    let mut rec = base.to_record(0, bf, bc);
    let arr = rec.arrays.iter_mut().find(|x| x.name == name).expect("array exists");
    match &mut arr.data {
        ptap_schedules::file::ArrayData::U32(v) => f(v),
        _ => panic!("{name} is a u32 array"),
    }
    save(rec, &format!("forged-{name}"))
}

/// Overwrites entries of one stored `u32` array.
type Forgery = Box<dyn Fn(&mut Vec<u32>)>;

#[test]
fn forged_indices_behind_a_valid_checksum_are_refused() {
    // Arrange
    let mut rng = Rng::new(5);
    // 80 fine rows: the W stage of V3 has several record tiles (16 rows each).
    let a = random_block_csr(&mut rng, 80, 80, 3, 3, 0.06, true);
    let p = random_block_csr(&mut rng, 80, 6, 3, 6, 0.3, false);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let cases: Vec<(Variant, &str, Forgery, &str)> = vec![
        (
            Variant::FlatStream,
            "ap.x",
            Box::new(|v| v[0] = u32::MAX),
            "out of range",
        ),
        (
            Variant::FlatStream,
            "ap.slot",
            Box::new(|v| v[0] = *v.last().unwrap()),
            "outside the rows of its tile",
        ),
        (
            Variant::SlotTiled,
            "rw.y",
            Box::new(|v| *v.last_mut().unwrap() = 1 << 30),
            "out of range",
        ),
        (
            Variant::ColumnSplit,
            "ap.order",
            Box::new(|v| v[1] = v[0]),
            "not a permutation",
        ),
        (
            Variant::FusedRowWise,
            "row_order",
            Box::new(|v| v[0] = v[1]),
            "not a permutation",
        ),
        (
            Variant::OuterProductScatter,
            "pass2.slot",
            Box::new(|v| v[0] = u32::MAX),
            "out of range",
        ),
        (
            Variant::TwoPass,
            "r.source",
            Box::new(|v| v[0] = u32::MAX),
            "out of range",
        ),
        (
            Variant::TwoPass,
            "w.col_idx",
            Box::new(|v| v[0] = u32::MAX),
            "not a valid block pattern",
        ),
        (
            Variant::PanelTiled,
            "r_panel_row",
            Box::new(|v| v[0] = u32::MAX),
            "do not stage",
        ),
    ];
    for (variant, name, f, needle) in cases {
        let schedule = VariantSchedule::inspect(variant, base.clone(), 18);
        let file = forged(&schedule, 3, 6, name, f);
        // Act
        let err = VariantSchedule::from_record(&file, 0, a.pattern_arc().clone(), p.pattern_arc().clone())
            .expect_err("a forged index must be refused");
        // Assert
        assert!(
            matches!(err, ScheduleFileError::Invalid { .. }),
            "{variant} {name}: {err}"
        );
        let msg = err.to_string();
        assert!(msg.contains(needle), "{variant} {name}: {msg}");
        assert!(msg.contains("re-run `ptap inspect`"), "{msg}");
    }
}

#[test]
fn a_schedule_for_other_operands_is_refused_by_fingerprint() {
    let mut rng = Rng::new(9);
    let a = random_block_csr(&mut rng, 20, 20, 3, 3, 0.2, true);
    let p = random_block_csr(&mut rng, 20, 5, 3, 6, 0.3, false);
    let other_p = random_block_csr(&mut rng, 20, 5, 3, 6, 0.3, false);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let file = save(
        VariantSchedule::inspect(Variant::FlatStream, base, 18).to_record(0, 3, 6),
        "other",
    );
    let err = VariantSchedule::from_record(&file, 0, a.pattern_arc().clone(), other_p.pattern_arc().clone())
        .expect_err("another P");
    assert!(
        matches!(err, ScheduleFileError::PatternMismatch { which: "P", .. }),
        "{err}"
    );
}
