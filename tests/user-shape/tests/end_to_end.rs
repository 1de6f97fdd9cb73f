//! The declared `4x4 / 4x10 / 10x10` set through the CPU path: inspect and
//! replay every variant, SpMV, and the Chebyshev / point-block Jacobi smoother,
//! against dense references, V0 and the size-generic loops.
use ptap_runtime::cycle::{chebyshev_smooth, estimate_lambda_max, EigenError, EIG_SEED};
use ptap_runtime::{executor_for, KernelRegistry, TwoPassExecutor};
use ptap_runtime::{Backend, Cpu};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::dense::Dense;
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use ptap_user_shape::registry;
use std::sync::Arc;

const BF: usize = 4;
const BC: usize = 10;

/// `A` (`nf x nf` blocks, SPD: `B^T B + n I`) and `P` (`nf x nc` blocks).
fn case(seed: u64, nf: usize, nc: usize) -> (BlockCsr, BlockCsr) {
    let mut rng = Rng::new(seed);
    let b = random_block_csr(&mut rng, nf, nf, BF, BF, 0.1, true).to_dense();
    let mut spd = b.transpose().matmul(&b);
    for i in 0..spd.rows {
        *spd.at_mut(i, i) += spd.rows as f64;
    }
    let a = BlockCsr::from_dense(&spd, BF, BF, true).unwrap();
    let p = random_block_csr(&mut rng, nf, nc, BF, BC, 0.3, false);
    (a, p)
}

fn galerkin_dense(a: &BlockCsr, p: &BlockCsr) -> Dense {
    let pd = p.to_dense();
    pd.transpose().matmul(&a.to_dense()).matmul(&pd)
}

#[test]
fn shipped_kernels_refuse_the_shape_and_name_the_macro_line() {
    let (a, p) = case(1, 12, 3);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let s = VariantSchedule::inspect(Variant::SlotTiled, base, BF * BC);
    let err = executor_for(&s, BF, BC).err().expect("4x10 is not shipped").to_string();
    assert!(err.contains("ptap_kernels::kernels!(4x4 / 4x10 / 10x10);"), "{err}");
    assert!(registry().executor_for(&s, BF, BC).is_ok());
}

#[test]
fn every_variant_on_the_declared_shape_matches_v0_and_the_dense_product() {
    let (a, p) = case(7, 40, 8);
    let want = galerkin_dense(&a, &p);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    // V0 by the size-generic SpGEMM (no kernels for 4x10 in the shipped registry).
    let mut generic = TwoPassExecutor::new(base.clone(), BF, BC);
    let mut c_generic = BlockCsr::zeros(base.c.clone(), BC, BC);
    generic.numeric(&a, &p, &mut c_generic).unwrap();
    let kernels = registry();
    let mut v0 = None;
    for v in Variant::ALL {
        let schedule = VariantSchedule::inspect(v, base.clone(), BF * BC);
        let mut exec = kernels.executor_for(&schedule, BF, BC).unwrap();
        let mut c = BlockCsr::zeros(base.c.clone(), BC, BC);
        exec.numeric(&a, &p, &mut c).unwrap();
        let got = c.values().to_vec();
        let d = relative_frobenius(&c.to_dense().data, &want.data);
        assert!(d < 1e-13, "{v}: {d:e} from the dense P^T A P");
        let v0: &Vec<f64> = v0.get_or_insert(got.clone());
        if v.bitwise_v0() {
            assert_eq!(&got, v0, "{v} is bitwise V0");
        } else {
            assert!(relative_frobenius(&got, v0) < 1e-13, "{v}");
        }
    }
    // The generated V0 adds in the generic loops' order: the same bits.
    assert_eq!(v0.unwrap(), c_generic.values());
}

#[test]
fn the_coarse_level_product_10x10_runs_on_the_declared_kernels() {
    let (a, p) = case(3, 30, 6);
    let kernels = registry();
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut e = kernels
        .executor_for(&VariantSchedule::TwoPass(base.clone()), BF, BC)
        .unwrap();
    let mut ac = BlockCsr::zeros(base.c.clone(), BC, BC);
    e.numeric(&a, &p, &mut ac).unwrap();
    let mut rng = Rng::new(11);
    let p2 = random_block_csr(&mut rng, ac.nrows(), 2, BC, BC, 0.6, false);
    let want = galerkin_dense(&ac, &p2);
    let base2 = Arc::new(TwoPassSchedule::inspect(ac.pattern_arc().clone(), p2.pattern_arc().clone()).unwrap());
    for v in [
        Variant::TwoPass,
        Variant::SlotTiled,
        Variant::ColumnSplit,
        Variant::FusedRowWise,
    ] {
        let s = VariantSchedule::inspect(v, base2.clone(), BC * BC);
        let mut exec = kernels.executor_for(&s, BC, BC).unwrap();
        let mut c = BlockCsr::zeros(base2.c.clone(), BC, BC);
        exec.numeric(&ac, &p2, &mut c).unwrap();
        let d = relative_frobenius(&c.to_dense().data, &want.data);
        assert!(d < 1e-13, "{v}: {d:e}");
    }
}

#[test]
fn spmv_of_every_block_shape_matches_dense_and_the_generic_loops() {
    let (a, p) = case(5, 25, 6);
    let r = p.transpose();
    let kernels = registry();
    let ac = {
        let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
        let mut c = BlockCsr::zeros(base.c.clone(), BC, BC);
        TwoPassExecutor::new(base, BF, BC).numeric(&a, &p, &mut c).unwrap();
        c
    };
    for m in [&a, &p, &r, &ac] {
        assert!(kernels.block(m.block_shape().0, m.block_shape().1).is_some());
        let x: Vec<f64> = (0..m.scalar_cols()).map(|i| (i as f64 * 0.3).sin()).collect();
        let want = m.to_dense().matvec(&x);
        let mut y = vec![3.0; m.scalar_rows()];
        kernels.spmv(m, &x, &mut y);
        assert!(relative_frobenius(&y, &want) < 1e-13, "{:?}", m.block_shape());
        let mut y_generic = vec![0.0; m.scalar_rows()];
        KernelRegistry::new().spmv(m, &x, &mut y_generic);
        assert_eq!(y, y_generic, "{:?}", m.block_shape());
        let b: Vec<f64> = (0..m.scalar_rows()).map(|i| i as f64).collect();
        let mut res = vec![0.0; m.scalar_rows()];
        kernels.residual(m, &x, &b, &mut res);
        for i in 0..res.len() {
            assert!((res[i] - (b[i] - want[i])).abs() <= 1e-13 * want[i].abs().max(1.0));
        }
    }
}

#[test]
fn smoother_on_10x10_blocks_reduces_the_residual_and_equals_the_generic_loops() {
    let (a, p) = case(9, 40, 8);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut ac = BlockCsr::zeros(base.c.clone(), BC, BC);
    TwoPassExecutor::new(base, BF, BC).numeric(&a, &p, &mut ac).unwrap();
    let n = ac.scalar_rows();
    let rhs: Vec<f64> = (0..n).map(|i| ((i * 7 % 13) as f64 - 6.0) / 6.0).collect();
    let run = |reg: &KernelRegistry| {
        let cpu = Cpu::new(reg.clone());
        let mut jacobi = cpu.jacobi(&ac).unwrap();
        cpu.jacobi_invert(&ac, &mut jacobi, 1).unwrap();
        let start = ptap_amg::eig::pseudo_random_vector(n, EIG_SEED);
        let (mut x, mut r, mut t, mut p) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let lambda = match estimate_lambda_max(&cpu, &ac, &jacobi, &start, 10, &mut r, &mut x, &mut p, &mut t) {
            Ok(l) => l,
            Err(EigenError::Ops(e)) => panic!("{e}"),
            Err(EigenError::Breakdown(why)) => panic!("{why}"),
        };
        x.fill(0.0);
        for sweep in 0..4 {
            chebyshev_smooth(
                &cpu,
                &ac,
                &jacobi,
                (0.1, 1.1),
                lambda,
                &rhs,
                &mut x,
                sweep == 0,
                &mut r,
                &mut t,
            )
            .unwrap();
        }
        (x, lambda)
    };
    let (x, lambda) = run(&registry());
    let (x_generic, lambda_generic) = run(&KernelRegistry::new());
    assert_eq!(lambda, lambda_generic);
    assert_eq!(x, x_generic, "generated and size-generic smoothers agree bitwise");
    let mut r = vec![0.0; n];
    ptap_sparse::spmv::residual(&ac, &x, &rhs, &mut r);
    let (rn, bn) = (ptap_sparse::par::norm2(&r), ptap_sparse::par::norm2(&rhs));
    assert!(rn < 0.5 * bn, "four Chebyshev(2) sweeps: |r| = {rn:e}, |b| = {bn:e}");
}

#[test]
fn declared_set_carries_the_cuda_source_the_device_launches() {
    use ptap_user_shape::four_field;
    // Every entry the device looks up for this set (codegen-core's declarations,
    // the launch checks' parameter lists), in the set's source and entry list.
    let want = ptap_codegen_core::gpu::set_entries(ptap_codegen_core::ShapeSet { bf: BF, bc: BC });
    let names: Vec<&str> = want.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(four_field::CUDA_ENTRIES, names.as_slice());
    for e in &want {
        assert!(
            four_field::CUDA_SOURCE.contains(&format!("void {}(", e.name)),
            "{}",
            e.name
        );
    }
    for want in [
        "ptap_gather_r_4x10",
        "ptap_row_owner_4x4x10",
        "ptap_row_owner_10x4x10",
        "ptap_slot_tiled_10x10x10t",
        "ptap_column_split_10x4x10t",
        "ptap_lane_tiled_4x4x10",
        "ptap_k_split_10x10x10t",
        "ptap_flat_stream_4x4x10",
        "ptap_scatter_10x10x10t",
        "ptap_spmv_merge_4x4",
        "ptap_spmv_merge_4x10",
        "ptap_spmv_merge_10x4",
        "ptap_spmv_merge_10x10",
        "ptap_jacobi_invert_4",
        "ptap_jacobi_update_10",
        "ptap_densify_10",
        "ptap_residual_merge_10x10",
        "ptap_spmv_merge_f32_4x4",
        "ptap_residual_merge_f32_10x10",
        "ptap_jacobi_update_at_4",
        "ptap_jacobi_step_10",
        "ptap_lanczos_step_4",
        "ptap_spmv_mirror_10x10",
        "ptap_residual_mirror_4x4",
    ] {
        assert!(names.contains(&want), "{want}");
    }
    // Products (4, 10) and (10, 10): 17 + 16 kernels, 4 SpMV, 2 residuals,
    // 2 f32 SpMV and 2 f32 residuals, 2 mirrored SpMV and 2 mirrored
    // residuals (the square shapes), 2 x 6 Jacobi.
    assert_eq!(names.len(), 59);
    // The registry hands the device this set for the user shapes, and the shipped one none.
    let kernels = registry();
    let set = kernels
        .cuda_for_product(BF, BC)
        .expect("the declared set serves (4, 10)");
    assert_eq!(set.source, four_field::CUDA_SOURCE);
    assert_eq!(kernels.cuda_for_product(BC, BC), Some(set));
    assert_eq!(kernels.cuda_for_block(BC, BF), Some(set));
    assert_eq!(kernels.cuda_for_square(BF), Some(set));
    assert!(KernelRegistry::shipped().cuda_for_product(BF, BC).is_none());
    // The typed launcher mirrors the kernel's parameter list (checked by the compiler).
    use ptap_kernels::cudarc::driver::{CudaSlice, CudaStream, DriverError, LaunchConfig};
    type GatherR = unsafe fn(
        &four_field::launch::Functions,
        &CudaStream,
        LaunchConfig,
        &CudaSlice<f64>,
        &CudaSlice<u32>,
        &mut CudaSlice<f64>,
        u32,
    ) -> Result<(), DriverError>;
    let _: GatherR = four_field::launch::Functions::ptap_gather_r_4x10;
    // Left beside the test binaries for the NVRTC check on the GPU machine.
    // (Created when missing: a test binary copied to the GPU machine runs
    // where the build's target directory does not exist.)
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("ptap_4x4_4x10_10x10.cu"), four_field::CUDA_SOURCE).unwrap();
}
