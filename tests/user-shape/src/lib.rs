//! A four-field system with ten near-null modes: a shape set ptap does not
//! ship, declared here in one line as a user crate would.
ptap_kernels::kernels!(pub mod four_field { 4x4 / 4x10 / 10x10 });

use ptap_sparse::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// The shipped kernels plus [`four_field`].
pub fn registry() -> ptap_runtime::KernelRegistry {
    ptap_runtime::KernelRegistry::shipped()
        .clone()
        .with::<four_field::Set>()
}

/// Grid points per direction of [`four_field_operator`].
pub const N: usize = 9;
/// Near-null modes per node ([`near_null`]), the coarse block size.
pub const MODES: usize = 10;

/// `A = L (x) K`: the 7-point Dirichlet Laplacian on an `N^3` grid coupling
/// four fields through the SPD `K` (4x4 blocks `L_ij K`).
pub fn four_field_operator() -> BlockCsr {
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
pub fn near_null() -> Vec<f64> {
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
