//! The conformance suite (`ptap_tests::conformance`) on every backend: each
//! body written once, run here per backend against the CPU reference.
//!
//! The CPU runs everywhere (CI). The CUDA instantiations print `skipping: ...`
//! and pass without a driver; on the GPU machine `cuda` checks the bitwise
//! promises of kernels compiled without FMA contraction, `cuda_fma` the
//! tolerances of the default build.
use ptap_cuda::DeviceOptions;
use ptap_runtime::Cpu;
use ptap_tests::conformance::cuda_or_skip;

ptap_tests::conformance!(cpu, || Some(Cpu::default()));
ptap_tests::conformance!(cuda, || cuda_or_skip(DeviceOptions {
    fmad: false,
    ..Default::default()
}));
ptap_tests::conformance!(cuda_fma, || cuda_or_skip(DeviceOptions {
    fmad: true,
    ..Default::default()
}));
