//! The declared `4x4 / 4x10 / 10x10` set through the whole AMG: a four-field
//! operator with ten near-null modes, coarsened to 4x10 prolongators and 10x10
//! coarse blocks, every product and smoother on the declared kernels.
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions, KernelRegistry};
use ptap_user_shape::{four_field_operator, near_null, registry, MODES};

fn solve(kernels: KernelRegistry) -> (usize, Vec<f64>, Vec<(usize, usize)>) {
    let a = four_field_operator();
    let n = a.scalar_rows();
    let mut opts = HierarchyOptions {
        kernels,
        ..HierarchyOptions::default()
    };
    opts.amg.coarse_eq_limit = 300;
    let mut h = Hierarchy::build(a, &near_null(), MODES, &opts, &mut |_| {}).unwrap();
    let shapes = h.levels().iter().map(|l| l.a.block_shape()).collect();
    let b: Vec<f64> = (0..n).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
    let mut x = vec![0.0; n];
    let mut ws = CgWorkspace::new(n, 200);
    let rep = h
        .solve(
            &b,
            &mut x,
            &CgOptions {
                rtol: 1e-10,
                max_iterations: 200,
            },
            &mut ws,
        )
        .unwrap();
    assert!(rep.converged, "CG did not converge: {rep:?}");
    (rep.iterations, x, shapes)
}

#[test]
fn amg_on_the_declared_shapes_converges_and_matches_the_generic_loops() {
    // Act: the declared kernels, then the shipped registry (size-generic
    // SpGEMM and smoother loops for these shapes).
    let (its, x, shapes) = solve(registry());
    let (its_generic, x_generic, _) = solve(KernelRegistry::shipped().clone());
    // Assert: a real hierarchy on the declared shapes, fast convergence, and
    // the same answer as the generic loops.
    assert!(shapes.len() >= 2, "at least one coarse level: {shapes:?}");
    assert_eq!(shapes[0], (4, 4));
    assert!(shapes[1..].iter().all(|&s| s == (10, 10)), "{shapes:?}");
    eprintln!("declared shapes: levels {shapes:?}, {its} CG iterations");
    assert!(its <= 30, "{its} iterations");
    assert_eq!(its, its_generic);
    let scale = x_generic.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = x.iter().zip(&x_generic).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= 1e-10 * scale, "declared vs generic: {diff:e}");
}
