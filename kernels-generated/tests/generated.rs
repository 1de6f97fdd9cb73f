//! The checked-in CUDA sources are what the generator emits today, and the
//! generated CPU kernels compute what the plain loops compute.
use ptap_codegen_core::{rust, ShapeSet};
use ptap_kernels::{elasticity_3d, BlockKernels, KernelSet, ProductKernels, SquareBlockKernels, SHIPPED_CUDA};
use std::path::PathBuf;

fn cuda_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cuda")
}

/// Fails when a `.cu` file under `kernels-generated/cuda/` is stale; with
/// `PTAP_BLESS=1` rewrites them instead.
#[test]
fn checked_in_cuda_sources_are_current() {
    let bless = std::env::var_os("PTAP_BLESS").is_some_and(|v| v == "1");
    for (name, source) in SHIPPED_CUDA {
        let path = cuda_dir().join(format!("{name}.cu"));
        if bless {
            std::fs::write(&path, source).unwrap();
            continue;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == source,
            "{} is stale; regenerate with `PTAP_BLESS=1 cargo test -p ptap-kernels --test generated`",
            path.display()
        );
    }
}

#[test]
fn generator_output_for_2d_elasticity_matches_snapshot() {
    insta::assert_snapshot!(rust::module_body(&ShapeSet { bf: 2, bc: 3 }));
}

fn values(n: usize, seed: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64 + 1.0) * seed).sin()).collect()
}

/// `c (m x n) += x (m x k) y (k x n)`, `x` read transposed (stored `k x m`) when `xt`.
fn triple_loop(m: usize, k: usize, n: usize, xt: bool, x: &[f64], y: &[f64], c: &mut [f64]) {
    for i in 0..m {
        for q in 0..k {
            let xiq = if xt { x[q * m + i] } else { x[i * k + q] };
            for j in 0..n {
                c[i * n + j] += xiq * y[q * n + j];
            }
        }
    }
}

/// A block contraction `c += x y`.
type Contraction = fn(&[f64], &[f64], &mut [f64]);

#[test]
fn product_kernels_equal_the_triple_loop_bitwise() {
    type K = elasticity_3d::Product3x6;
    let (bf, bc) = (K::BF, K::BC);
    let cases: [(&str, usize, usize, usize, bool, Contraction); 4] = [
        ("ap", bf, bf, bc, false, K::ap_acc),
        ("rw", bc, bf, bc, false, K::rw_acc),
        ("ptw", bc, bf, bc, true, K::ptw_acc),
        ("pta", bc, bf, bf, true, K::pta_acc),
    ];
    for (name, m, k, n, xt, f) in cases {
        let (x, y) = (values(m * k, 0.37), values(k * n, 0.11));
        let mut want = values(m * n, 0.05);
        let mut got = want.clone();
        triple_loop(m, k, n, xt, &x, &y, &mut want);
        f(&x, &y, &mut got);
        assert_eq!(got, want, "{name}");
        // The column kernels give the same column.
        if name == "ap" || name == "ptw" {
            for j in 0..n {
                let mut col = vec![0.0; m];
                let mut full = vec![0.0; m * n];
                triple_loop(m, k, n, xt, &x, &y, &mut full);
                if name == "ap" {
                    K::ap_col_acc(&x, &y, j, &mut col);
                } else {
                    K::ptw_col_acc(&x, &y, j, &mut col);
                }
                for i in 0..m {
                    assert_eq!(col[i], full[i * n + j], "{name} column {j}");
                }
            }
        }
    }
    let p = values(bf * bc, 0.2);
    let mut r = vec![0.0; bf * bc];
    K::p_transpose(&p, &mut r);
    assert_eq!(r[5 * bf + 2], p[2 * bc + 5]);
}

#[test]
fn block_kernels_gemv_invert_and_update() {
    type B = elasticity_3d::Block6x6;
    let mut a = values(36, 0.3);
    for i in 0..6 {
        a[i * 6 + i] += 4.0;
    }
    let x = values(6, 0.7);
    let mut y = vec![1.0; 6];
    B::gemv_acc(&a, &x, &mut y);
    for i in 0..6 {
        let s: f64 = (0..6).map(|j| a[i * 6 + j] * x[j]).fold(0.0, |s, t| s + t);
        assert_eq!(y[i], 1.0 + s);
    }
    let mut inv = a.clone();
    B::invert(&mut inv).unwrap();
    for i in 0..6 {
        for j in 0..6 {
            let s: f64 = (0..6).map(|q| a[i * 6 + q] * inv[q * 6 + j]).sum();
            assert!((s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14, "({i}, {j}) {s}");
        }
    }
    let mut sing = vec![1.0, 2.0, 2.0, 4.0];
    let e = elasticity_2d_block2_invert(&mut sing).unwrap_err();
    assert!(e.to_string().contains("pivot"), "{e}");
    // x += 0.5 D^-1 r - 2 t.
    let (r, t) = (values(6, 0.9), values(6, 1.3));
    let mut got = vec![0.25; 6];
    B::chebyshev_update(&inv, 0.5, &r, -2.0, &t, &mut got);
    for i in 0..6 {
        let dr: f64 = (0..6).map(|j| inv[i * 6 + j] * r[j]).sum();
        assert!((got[i] - (0.25 + 0.5 * dr - 2.0 * t[i])).abs() < 1e-14);
    }
    assert_eq!(<elasticity_3d::Set as KernelSet>::DECLARATION, "3x3 / 3x6 / 6x6");
}

fn elasticity_2d_block2_invert(a: &mut [f64]) -> Result<(), ptap_kernels::SingularBlock> {
    <ptap_kernels::elasticity_2d::Block2x2 as SquareBlockKernels>::invert(a)
}

#[test]
fn every_entry_point_of_the_cuda_source_is_listed() {
    for (set_entries, source) in [
        (ptap_kernels::scalar::CUDA_ENTRIES, ptap_kernels::scalar::CUDA_SOURCE),
        (
            ptap_kernels::elasticity_2d::CUDA_ENTRIES,
            ptap_kernels::elasticity_2d::CUDA_SOURCE,
        ),
        (elasticity_3d::CUDA_ENTRIES, elasticity_3d::CUDA_SOURCE),
        (ptap_kernels::COMMON_CUDA_ENTRIES, ptap_kernels::COMMON_CUDA_SOURCE),
    ] {
        assert_eq!(source.matches("extern \"C\" __global__").count(), set_entries.len());
        for e in set_entries {
            assert!(source.contains(&format!("void {e}(")));
        }
    }
    // The set's module is the family the device launches: every variant's stages, SpMV, Jacobi.
    let want = ptap_codegen_core::gpu::set_entries(ShapeSet { bf: 3, bc: 6 });
    let names: Vec<&str> = want.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(elasticity_3d::CUDA_ENTRIES, names.as_slice());
    for e in [
        "ptap_spmv_merge_6x3",
        "ptap_column_split_6x3x6t",
        "ptap_jacobi_invert_6",
    ] {
        assert!(elasticity_3d::CUDA_ENTRIES.contains(&e), "{e}");
    }
    assert_eq!(ptap_kernels::COMMON_CUDA_ENTRIES.len(), 17);
    assert_eq!(
        ptap_kernels::COMMON_CUDA_SOURCE,
        ptap_codegen_core::gpu::common_module().source
    );
}
