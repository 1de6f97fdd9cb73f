//! The declared `4x4 / 4x10 / 10x10` set through the whole AMG: a four-field
//! operator with ten near-null modes, coarsened to 4x10 prolongators and 10x10
//! coarse blocks, every product and smoother on the declared kernels.
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions, KernelRegistry};
use ptap_sparse::{BlockCsr, BlockPattern};
use ptap_user_shape::registry;
use std::sync::Arc;

const N: usize = 9; // grid points per direction
const MODES: usize = 10;

/// `A = L (x) K`: the 7-point Dirichlet Laplacian on an `N^3` grid coupling
/// four fields through the SPD `K` (4x4 blocks `L_ij K`).
fn four_field_operator() -> BlockCsr {
    let k = [
        4.0, 1.0, 0.0, 0.0, 1.0, 4.0, 1.0, 0.0, 0.0, 1.0, 4.0, 1.0, 0.0, 0.0, 1.0, 4.0,
    ];
    let id = |x: usize, y: usize, z: usize| ((x * N + y) * N + z) as u32;
    let mut rows = Vec::new();
    for x in 0..N {
        for y in 0..N {
            for z in 0..N {
                let mut r = vec![id(x, y, z)];
                if x > 0 {
                    r.push(id(x - 1, y, z));
                }
                if x + 1 < N {
                    r.push(id(x + 1, y, z));
                }
                if y > 0 {
                    r.push(id(x, y - 1, z));
                }
                if y + 1 < N {
                    r.push(id(x, y + 1, z));
                }
                if z > 0 {
                    r.push(id(x, y, z - 1));
                }
                if z + 1 < N {
                    r.push(id(x, y, z + 1));
                }
                rows.push(r);
            }
        }
    }
    let pattern = Arc::new(BlockPattern::from_rows(N * N * N, &rows).unwrap());
    let mut values = Vec::with_capacity(pattern.nnzb() * 16);
    for i in 0..pattern.nrows() {
        for &j in pattern.row(i) {
            let l = if j as usize == i { 6.0 } else { -1.0 };
            values.extend(k.iter().map(|v| l * v));
        }
    }
    BlockCsr::new(pattern, 4, 4, values).unwrap()
}

/// Ten modes per node: a constant for each field, and x, y, z for fields 0 and 1.
fn near_null() -> Vec<f64> {
    let mut b = vec![0.0; N * N * N * 4 * MODES];
    for x in 0..N {
        for y in 0..N {
            for z in 0..N {
                let node = (x * N + y) * N + z;
                let c = [x as f64, y as f64, z as f64].map(|v| v / (N - 1) as f64 - 0.5);
                for f in 0..4 {
                    b[(node * 4 + f) * MODES + f] = 1.0;
                }
                for f in 0..2 {
                    for d in 0..3 {
                        b[(node * 4 + f) * MODES + 4 + 3 * f + d] = c[d];
                    }
                }
            }
        }
    }
    b
}

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
