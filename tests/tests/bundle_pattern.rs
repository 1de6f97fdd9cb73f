//! A schedule bundle loaded against the fine operator's pattern alone, the
//! values handed over after (what the time loop does so that it never copies
//! the operator): the same mesh setup as `MeshSetup::from_bundle`, and an
//! operator of another pattern or with a NaN is refused in one sentence.
use ptap_fem::BeamProblem;
use ptap_runtime::bundle::hierarchy_bundle;
use ptap_runtime::{Hierarchy, HierarchyOptions, MeshSetup, RuntimeError};
use ptap_schedules::file::{write_bundle, MappedBundle};
use std::sync::Arc;

#[test]
fn a_bundle_loaded_against_the_pattern_then_given_the_values_is_from_bundle() {
    let problem = BeamProblem::build(2).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let path = std::env::temp_dir().join(format!("ptap-bundle-pattern-{}.ptaps", std::process::id()));
    write_bundle(&path, &hierarchy_bundle(&h, "beam k = 2")).unwrap();
    let bundle = Arc::new(MappedBundle::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap(); // the mapping stays valid

    let whole = MeshSetup::from_bundle(problem.a.clone(), 6, &bundle, &opts, &mut |_| {}).unwrap();
    let pattern = problem.a.pattern_arc();
    let staged = MeshSetup::from_bundle_pattern(pattern, 3, 6, &bundle, &opts, &mut |_| {}).unwrap();
    assert!(!staged.levels[0].has_values);
    assert!(staged.levels[1..].iter().all(|l| !l.has_values));
    let staged = staged.with_fine_operator(problem.a.clone()).unwrap();
    assert_eq!(staged.levels.len(), whole.levels.len());
    for (s, w) in staged.levels.iter().zip(&whole.levels) {
        assert_eq!(s.has_values, w.has_values);
        assert_eq!(s.a, w.a);
        let (st, wt) = (s.transfer.as_ref(), w.transfer.as_ref());
        assert_eq!(st.map(|t| &t.p), wt.map(|t| &t.p));
        assert_eq!(st.map(|t| t.omega.to_bits()), wt.map(|t| t.omega.to_bits()));
    }
    // The solve from the staged setup is the built hierarchy's, bit for bit.
    let (mut hb, mut hs) = (
        h,
        Hierarchy::new(ptap_runtime::Cpu::new(opts.kernels.clone()), staged, &mut |_| {}).unwrap(),
    );
    let n = problem.rhs.len();
    let cg = ptap_runtime::CgOptions::default();
    let (mut xb, mut xs) = (vec![0.0; n], vec![0.0; n]);
    let rb = hb
        .solve(
            &problem.rhs,
            &mut xb,
            &cg,
            &mut ptap_runtime::solver::CgWorkspace::new(n, 500),
        )
        .unwrap();
    let rs = hs
        .solve(
            &problem.rhs,
            &mut xs,
            &cg,
            &mut ptap_runtime::solver::CgWorkspace::new(n, 500),
        )
        .unwrap();
    assert_eq!(rb.iterations, rs.iterations);
    assert!(xb.iter().zip(&xs).all(|(a, b)| a.to_bits() == b.to_bits()));

    // Another pattern (the beam at k = 1): refused, naming the fine operator.
    let other = BeamProblem::build(1).unwrap();
    let load = || MeshSetup::from_bundle_pattern(pattern, 3, 6, &bundle, &opts, &mut |_| {}).unwrap();
    let e = load().with_fine_operator(other.a.clone()).unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::PatternMismatch {
                what: "fine operator",
                ..
            }
        ),
        "{e}"
    );
    // A NaN in the values: refused, naming its block row.
    let mut bad = problem.a.clone();
    let k = bad.pattern().row_ptr()[7] * 9 + 4;
    bad.values_mut()[k] = f64::NAN;
    let e = load().with_fine_operator(bad).unwrap_err();
    assert!(e.to_string().contains("block row 7"), "{e}");
}
