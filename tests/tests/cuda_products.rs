//! The device executors against the CPU references: every device product
//! variant against the CPU two-pass product (bitwise for the order-preserving
//! ones when compiled with `--fmad=false`, within 1e-13 relative Frobenius
//! otherwise), and the merge-path SpMV against the CPU SpMV, on random
//! rectangular-block inputs and the beam hierarchy.
//!
//! Without a CUDA driver every test prints `skipping: ...` and passes, so
//! CPU-only CI stays green.
use ptap_cuda::{Device, DeviceBlockCsr, DeviceOptions, DeviceProduct, DeviceSpmv, DEVICE_VARIANTS};
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions, KernelRegistry};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::spmv::spmv;
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use std::sync::Arc;

const TOL: f64 = 1e-13;

fn device(fmad: bool) -> Option<Arc<Device>> {
    ptap_tests::cuda_device_or_skip(DeviceOptions { fmad })
}

fn cpu_v0(a: &BlockCsr, p: &BlockCsr) -> (Arc<TwoPassSchedule>, Vec<f64>) {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut exec = executor_for(&VariantSchedule::TwoPass(base.clone()), bf, bc).unwrap();
    let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
    exec.numeric(a, p, &mut c).unwrap();
    (base, c.values().to_vec())
}

fn device_product(dev: &Arc<Device>, v: Variant, base: &Arc<TwoPassSchedule>, a: &BlockCsr, p: &BlockCsr) -> Vec<f64> {
    let (bf, bc) = p.block_shape();
    let schedule = VariantSchedule::inspect(v, base.clone(), bf * bc);
    let mut prod = DeviceProduct::new(dev, KernelRegistry::shipped(), &schedule, bf, bc).unwrap();
    let da = DeviceBlockCsr::upload(dev, a).unwrap();
    let dp = DeviceBlockCsr::upload(dev, p).unwrap();
    let mut dc = DeviceBlockCsr::upload_pattern(dev, &base.c, bc, bc).unwrap();
    // Poison the output: every slot must be written.
    let nan = vec![f64::NAN; base.c.nnzb() * bc * bc];
    dc.set_values(dev, &nan).unwrap();
    prod.numeric(&da, &dp, &mut dc).unwrap();
    let first = dc.download_values(dev).unwrap();
    if prod.deterministic() {
        prod.numeric(&da, &dp, &mut dc).unwrap();
        let again = dc.download_values(dev).unwrap();
        assert!(
            first.iter().zip(&again).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{v}: two calls differ"
        );
    }
    dev.synchronize().unwrap();
    first
}

/// Checks every device variant against the CPU two-pass product.
fn check_all(dev: &Arc<Device>, a: &BlockCsr, p: &BlockCsr, what: &str) {
    let (base, want) = cpu_v0(a, p);
    for v in DEVICE_VARIANTS {
        let got = device_product(dev, v, &base, a, p);
        assert_eq!(got.len(), want.len());
        let bitwise = !dev.options().fmad && v != Variant::OuterProductScatter;
        if bitwise {
            let same = got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(
                same,
                "{v} {what}: not bitwise identical to the CPU two-pass (rel {:e})",
                relative_frobenius(&got, &want)
            );
        } else {
            let err = relative_frobenius(&got, &want);
            assert!(err <= TOL, "{v} {what}: relative error {err:e}");
        }
    }
}

fn wide_values(m: &mut BlockCsr, rng: &mut Rng) {
    for v in m.values_mut() {
        *v *= 10f64.powi(rng.below(17) as i32 - 8);
    }
}

fn random_case(seed: u64, nf: usize, nc: usize, bf: usize, bc: usize) -> (BlockCsr, BlockCsr) {
    let mut rng = Rng::new(seed);
    let mut a = random_block_csr(&mut rng, nf, nf, bf, bf, 0.08, true);
    let mut p = random_block_csr(&mut rng, nf, nc, bf, bc, 0.1, false);
    wide_values(&mut a, &mut rng);
    wide_values(&mut p, &mut rng);
    (a, p)
}

const SHAPES: [(usize, usize); 5] = [(3, 6), (6, 6), (1, 1), (2, 3), (3, 3)];

#[test]
fn device_products_are_bitwise_equivalent_to_cpu_two_pass_without_fma() {
    let Some(dev) = device(false) else { return };
    for (i, &(bf, bc)) in SHAPES.iter().enumerate() {
        for (j, &(nf, nc)) in [(200, 40), (37, 9), (1, 1)].iter().enumerate() {
            let (a, p) = random_case(1000 + 10 * i as u64 + j as u64, nf, nc, bf, bc);
            check_all(&dev, &a, &p, &format!("random {bf}x{bf}/{bf}x{bc} {nf}x{nc}"));
        }
    }
}

#[test]
fn device_products_are_equivalent_to_cpu_two_pass_with_fma() {
    let Some(dev) = device(true) else { return };
    for (i, &(bf, bc)) in SHAPES.iter().enumerate() {
        let (a, p) = random_case(2000 + i as u64, 150, 30, bf, bc);
        check_all(&dev, &a, &p, &format!("random {bf}x{bf}/{bf}x{bc}"));
    }
}

fn beam(k: usize) -> Hierarchy {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap()
}

#[test]
fn device_products_match_cpu_two_pass_on_the_beam_hierarchy_at_k2_and_k4() {
    let Some(exact) = device(false) else { return };
    let fast = device(true).unwrap();
    for k in [2, 4] {
        let h = beam(k);
        assert!(h.num_levels() >= 3, "k = {k}: both 3x3/3x6 and 6x6/6x6 products occur");
        for l in 0..h.num_levels() - 1 {
            let lev = &h.levels()[l];
            let p = &lev.transfer.as_ref().unwrap().p;
            check_all(&exact, &lev.a, p, &format!("beam k={k} level {l}"));
            check_all(&fast, &lev.a, p, &format!("beam k={k} level {l} (fma)"));
        }
    }
}

fn check_spmv(dev: &Arc<Device>, m: &BlockCsr, what: &str) {
    let x: Vec<f64> = (0..m.scalar_cols())
        .map(|i| ((i * 7 + 3) as f64 * 0.37).sin())
        .collect();
    let mut want = vec![0.0; m.scalar_rows()];
    spmv(m, &x, &mut want);
    let dm = DeviceBlockCsr::upload(dev, m).unwrap();
    let plan = DeviceSpmv::new(dev, KernelRegistry::shipped(), &dm).unwrap();
    let dx = dev.upload(&x).unwrap();
    let mut dy = dev.upload(&vec![f64::NAN; m.scalar_rows()]).unwrap();
    plan.apply(dev, &dm, &dx, &mut dy).unwrap();
    let got = dev.download(&dy).unwrap();
    let err = relative_frobenius(&got[..want.len()], &want);
    assert!(err <= TOL, "spmv {what}: relative error {err:e}");
    plan.apply(dev, &dm, &dx, &mut dy).unwrap();
    let again = dev.download(&dy).unwrap();
    assert!(
        got.iter().zip(&again).all(|(x, y)| x.to_bits() == y.to_bits()),
        "spmv {what}: two applies differ"
    );
}

#[test]
fn merge_path_spmv_is_equivalent_to_cpu_spmv() {
    let Some(dev) = device(true) else { return };
    let mut rng = Rng::new(77);
    // The square blocks of the shipped sets (the user-shape crate runs 4x4 and 10x10).
    for b in [1, 2, 3, 6] {
        // Long rows (up to ~300 blocks) cross several warp ranges; short ones do not.
        for (n, density) in [(3000, 0.002), (600, 0.4), (5, 0.5)] {
            let m = random_block_csr(&mut rng, n, n, b, b, density, true);
            check_spmv(&dev, &m, &format!("{b}x{b} n={n} density={density}"));
        }
    }
    // Empty rows and a rectangular shape.
    let m = random_block_csr(&mut rng, 2000, 300, 3, 6, 0.001, false);
    check_spmv(&dev, &m, "3x6 with empty rows");
    let h = beam(4);
    for l in 0..h.num_levels() {
        let lev = &h.levels()[l];
        check_spmv(&dev, &lev.a, &format!("beam A level {l}"));
        if let Some(t) = &lev.transfer {
            check_spmv(&dev, &t.p, &format!("beam P level {l}"));
            check_spmv(&dev, &t.r, &format!("beam R level {l}"));
        }
    }
    dev.synchronize().unwrap();
}

#[test]
fn no_driver_is_one_sentence_not_a_panic() {
    // Arrange / Act: opening never panics; without a driver the error is one line.
    match Device::open(DeviceOptions::default()) {
        Ok(d) => assert!(d.arch().starts_with("sm_")),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n') && msg.contains("--device cpu"), "{msg}");
        }
    }
}
