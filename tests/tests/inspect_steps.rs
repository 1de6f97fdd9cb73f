//! The symmetric tensor pair's inspection of the beam, step by step: on every
//! level of small beams the inspector builds the former serial inspector's
//! arrays (`variants::reference`); at k = 16 (`#[ignore]`d: run it with
//! `--include-ignored --nocapture` on a many-core host) it prints the time of
//! each step of both, interleaved, and of each check of a level-0 load from a
//! schedule file.
use ptap_fem::BeamProblem;
use ptap_runtime::bundle::{level_record, load_level, StoredLevel};
use ptap_runtime::hierarchy::MeshSetup;
use ptap_runtime::HierarchyOptions;
use ptap_schedules::file::{write_bundle, MappedBundle, ScheduleBundle};
use ptap_schedules::laps::record;
use ptap_schedules::variants::{reference, TensorPairSymSchedule};
use ptap_schedules::{Variant, VariantSchedule};
use std::sync::Arc;
use std::time::Instant;

fn mesh_setup(k: usize, coarse_eq_limit: Option<usize>) -> MeshSetup {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions {
        variant: Some(Variant::TensorPairSym),
        ..Default::default()
    };
    if let Some(c) = coarse_eq_limit {
        opts.amg.coarse_eq_limit = c;
    }
    MeshSetup::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap()
}

fn assert_same(got: &TensorPairSymSchedule, want: &TensorPairSymSchedule, what: &str) {
    assert_eq!(*got.wh, *want.wh, "{what}: W'");
    assert_eq!(got.ap, want.ap, "{what}: A P runs");
    assert_eq!(got.rw, want.rw, "{what}: P^T W' runs");
    assert_eq!(got.ap_order, want.ap_order, "{what}: window order");
    assert_eq!(got.ap_pairs, want.ap_pairs, "{what}: A P units");
    assert_eq!(got.rw_fold, want.rw_fold, "{what}: folded units");
    assert_eq!(got.transpose, want.transpose, "{what}: mirrors of A_c");
}

#[test]
fn the_beams_symmetric_pair_inspection_is_the_serial_ones() {
    let mut levels = 0;
    for k in [2, 3] {
        let setup = mesh_setup(k, Some(100));
        for (l, lev) in setup.levels.iter().enumerate() {
            let Some(t) = lev.transfer.as_ref() else { continue };
            let VariantSchedule::TensorPairSym(built) = &t.variant_schedule else {
                panic!("k = {k} level {l} is not a symmetric tensor pair")
            };
            let want = reference::tensor_pair_sym(t.schedule.clone()).unwrap();
            assert_same(built, &want, &format!("k = {k} level {l}"));
            levels += 1;
        }
    }
    assert!(levels >= 4, "{levels} levels");
}

fn print_laps(what: &str, total: f64, laps: &[(&'static str, f64)]) {
    let steps: Vec<String> = laps.iter().map(|(s, t)| format!("{s} {t:.4}")).collect();
    println!("{what}: {total:.4} s; steps end at: {}", steps.join(", "));
}

#[test]
#[ignore = "k = 16 needs ~6 GB of host memory and many cores; run with --include-ignored --nocapture"]
fn inspection_and_load_steps_at_k16() {
    let t = Instant::now();
    let setup = mesh_setup(16, None);
    println!(
        "mesh setup {:.3} s (here, beside the problem's assembly: not the ledger's figure)",
        t.elapsed().as_secs_f64()
    );
    for m in &setup.timings.mesh_levels {
        println!(
            "level {}: symbolic {:.4} inspection {:.4} (in the hierarchy)",
            m.level, m.symbolic_s, m.inspection_s
        );
    }
    let t0 = setup.levels[0].transfer.as_ref().unwrap();
    let base = t0.schedule.clone();
    let s = &base.stats;
    println!(
        "level 0: A {} x {} blocks {}, P {} blocks, W {}, A_c {} x {} blocks {}",
        s.m_f, s.m_f, s.z_a, s.z_p, s.z_w, s.m_c, s.m_c, s.z_c
    );
    for round in 0..3 {
        let t = Instant::now();
        let (old, laps) = record(|| reference::tensor_pair_sym(base.clone()).unwrap());
        print_laps(
            &format!("round {round} serial steps (before)"),
            t.elapsed().as_secs_f64(),
            &laps,
        );
        let t = Instant::now();
        let (new, laps) = record(|| TensorPairSymSchedule::inspect(base.clone()).unwrap());
        print_laps(
            &format!("round {round} parallel steps (after)"),
            t.elapsed().as_secs_f64(),
            &laps,
        );
        if round == 0 {
            assert_same(&new, &old, "k = 16 level 0");
            println!("k = 16 level 0: the arrays are the serial inspector's");
        }
    }
    // A file of level 0 alone, loaded three times.
    let stored = StoredLevel {
        p: t0.p.clone(),
        schedule: t0.variant_schedule.clone(),
        aggregates: t0.aggregates,
        merged_aggregates: t0.merged_aggregates,
        unaggregated_nodes: t0.unaggregated_nodes,
        omega: t0.omega,
    };
    let bundle = ScheduleBundle {
        created_by: "inspect_steps".into(),
        problem: "beam k = 16, level 0".into(),
        records: vec![level_record(0, &stored)],
    };
    let path = std::env::temp_dir().join(format!("ptap-inspect-steps-{}.ptaps", std::process::id()));
    write_bundle(&path, &bundle).unwrap();
    let a = setup.levels[0].a.pattern_arc().clone();
    for round in 0..3 {
        let t = Instant::now();
        let mapped = Arc::new(MappedBundle::open(&path).unwrap());
        let open_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (loaded, laps) = record(|| load_level(&mapped, 0, &a).unwrap());
        print_laps(
            &format!("round {round} load of level 0 (open {open_s:.4} s before it)"),
            t.elapsed().as_secs_f64(),
            &laps,
        );
        assert_eq!(loaded.schedule.variant(), Variant::TensorPairSym);
    }
    std::fs::remove_file(&path).unwrap();
}
