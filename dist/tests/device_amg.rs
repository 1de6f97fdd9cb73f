//! The AMG on device-resident ranks, one rank in process (feature `nccl`;
//! a GPU, the CUDA driver and NCCL): against the CPU ranks' backend on the
//! same hierarchy: every level's operator and Jacobi inverses to 1e-12
//! relative, the same iteration count and the tip to 1e-10 relative, cold and
//! after a refresh with scaled values; a refresh and a solve allocate no
//! device memory and move only scalars (no copy above 64 bytes) between host
//! and device; a refresh with a NaN is one error, not a panic. Without a
//! driver, NCCL or a GPU it prints `skipping: ...` and passes. Two ranks:
//! `ptap-mpi-cuda --solver amg --check` under mpirun (tests/nccl.rs).
use ptap_cuda::{Device, DeviceOptions};
use ptap_dist::device_amg::{build_device_hierarchy, product_seconds, DeviceDistBackend};
use ptap_dist::nccl::NcclComm;
use ptap_dist::{build_hierarchy, DistBackend, DistOptions, DistProblem, LocalMatrix, Partition, SingleRank};
use ptap_fem::BeamProblem;
use ptap_runtime::{Backend, CgOptions, HierarchyOptions};
use ptap_schedules::Variant;
use std::sync::Arc;

fn one_rank(beam: &BeamProblem) -> DistProblem {
    let part = Partition::uniform(beam.a.nrows(), 1).unwrap();
    DistProblem {
        a: LocalMatrix::from_global(&beam.a, &part, &part, 0).unwrap(),
        part,
        near_null: beam.near_null.clone(),
        modes: beam.modes,
    }
}

fn device() -> Result<Arc<Device>, String> {
    ptap_cuda::libraries_present().map_err(|e| e.to_string())?;
    ptap_dist::nccl::nccl_present().map_err(|e| e.to_string())?;
    Device::open_on(0, DeviceOptions::default()).map_err(|e| e.to_string())
}

/// `max |x - y| / max |y|`.
fn rel(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    let d = x.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    d / y.iter().fold(0.0f64, |m, b| m.max(b.abs()))
}

fn tip(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

fn free_device_bytes() -> usize {
    cudarc::driver::result::mem_get_info().unwrap().0
}

#[test]
fn one_rank_device_amg_matches_the_cpu_ranks() {
    let dev = match device() {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let nccl = NcclComm::solo(dev.context()).unwrap();
    let beam = BeamProblem::build(3).unwrap();
    let mut options = HierarchyOptions::default();
    // Three levels at least: a distributed coarse level (the product to the
    // owners) and the whole coarsest one.
    options.amg.coarse_eq_limit = 60;
    // A variant the device executes (the CPU model may pick one it does not).
    options.variant = Some(Variant::ColumnSplit);
    let dist = DistOptions::default();
    let comm = SingleRank;
    let (mut cpu, _) = build_hierarchy(&comm, one_rank(&beam), &options, &dist, &mut |_| {}).unwrap();
    let (mut gpu, report) =
        build_device_hierarchy(&comm, &nccl, &dev, one_rank(&beam), &options, &dist, &mut |_| {}).unwrap();
    assert!(gpu.num_levels() >= 3, "{} levels", gpu.num_levels());
    assert_eq!(gpu.num_levels(), cpu.num_levels());
    assert_eq!(report.setup.levels.len(), gpu.num_levels());

    type CpuH<'a> = ptap_runtime::Hierarchy<DistBackend<'a, SingleRank>>;
    type GpuH<'a> = ptap_runtime::Hierarchy<DeviceDistBackend<'a, SingleRank>>;
    let compare_levels = |cpu: &CpuH, gpu: &GpuH, when: &str| {
        for (l, (c, g)) in cpu.levels().iter().zip(gpu.levels()).enumerate() {
            let (vc, vg) = (cpu.backend().values(&c.a).unwrap(), gpu.backend().values(&g.a).unwrap());
            let d = rel(&vg, &vc);
            assert!(d <= 1e-12, "{when}: level {l}'s operator is {d:e} from the CPU's");
            if let (Some(sc), Some(sg)) = (&c.smoother, &g.smoother) {
                let (jc, jg) = (
                    cpu.backend().jacobi_values(&sc.jacobi).unwrap(),
                    gpu.backend().jacobi_values(&sg.jacobi).unwrap(),
                );
                let d = rel(&jg, &jc);
                assert!(
                    d <= 1e-10,
                    "{when}: level {l}'s Jacobi inverses are {d:e} from the CPU's"
                );
            }
        }
    };
    compare_levels(&cpu, &gpu, "cold");

    let opts = CgOptions {
        rtol: 1e-8,
        max_iterations: 200,
    };
    let n = beam.rhs.len();
    let (mut wc, mut wg) = (cpu.workspace(200).unwrap(), gpu.workspace(200).unwrap());
    let (mut xc, mut xg) = (vec![0.0; n], vec![0.0; n]);
    let rc = cpu.solve(&beam.rhs, &mut xc, &opts, &mut wc).unwrap();
    let rg = gpu.solve(&beam.rhs, &mut xg, &opts, &mut wg).unwrap();
    assert!(rc.converged && rg.converged);
    assert_eq!(rg.iterations, rc.iterations);
    let d = (tip(&xg) - tip(&xc)).abs() / tip(&xc);
    assert!(d <= 1e-10, "tip {} against the CPU's {}: {d:e}", tip(&xg), tip(&xc));
    let times = product_seconds(&gpu).unwrap();
    assert_eq!(times.len(), gpu.num_levels() - 1);
    assert!(times.iter().all(|t| *t > 0.0));

    // A refresh with the values times 3 and a solve: as the CPU's, no device
    // memory allocated, only scalars across the bus.
    let scaled: Vec<f64> = beam.a.values().iter().map(|v| 3.0 * v).collect();
    cpu.refresh(&scaled).unwrap();
    xc.fill(0.0);
    let rc = cpu.solve(&beam.rhs, &mut xc, &opts, &mut wc).unwrap();
    gpu.backend().synchronize().unwrap();
    let free = free_device_bytes();
    dev.reset_counters();
    gpu.refresh(&scaled).unwrap();
    xg.fill(0.0);
    let rg = gpu.solve(&beam.rhs, &mut xg, &opts, &mut wg).unwrap();
    gpu.backend().synchronize().unwrap();
    assert_eq!(
        free_device_bytes(),
        free,
        "a refresh and a solve allocated device memory"
    );
    for phase in ["matrix setup", "solve"] {
        let t = dev.counters().get(phase);
        let copies = (t.h2d_copies + t.d2h_copies) as usize;
        let bytes = (t.h2d_bytes + t.d2h_bytes) as usize;
        assert!(
            copies > 0 && bytes <= 64 * copies,
            "{phase}: {bytes} bytes in {copies} copies"
        );
    }
    compare_levels(&cpu, &gpu, "refreshed");
    assert_eq!(rg.iterations, rc.iterations);
    let d = (tip(&xg) - tip(&xc)).abs() / tip(&xc);
    assert!(
        d <= 1e-10,
        "refreshed: tip {} against the CPU's {}: {d:e}",
        tip(&xg),
        tip(&xc)
    );

    // Bad input: one error sentence.
    let mut bad = scaled.clone();
    bad[7] = f64::NAN;
    let e = gpu.refresh(&bad).unwrap_err().to_string();
    assert!(
        e.contains("not finite") || e.contains("NaN") || e.contains("finite"),
        "{e}"
    );
}
