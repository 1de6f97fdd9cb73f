//! The device assembly's CUDA source (Q2 reference stiffness and the
//! row-owner gather, 2D and 3D) compiles with NVRTC for sm_90, with and
//! without FMA contraction — without a GPU (NVRTC needs no driver); skips with
//! a visible line where NVRTC is not installed.
#![cfg(feature = "cuda")]
use ptap_cuda::KernelCache;
use ptap_fem::device::kernels::fem_module;

#[test]
fn fem_kernels_compile_for_sm90() {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "skipping: no NVRTC library found");
        return;
    }
    let cache = KernelCache::new(None);
    for dim in [2, 3] {
        let m = fem_module(dim);
        for fmad in [true, false] {
            let cubin = cache.cubin(&m.name, &m.source, "sm_90", fmad).unwrap();
            assert!(cubin.len() > 1000, "{}: {} bytes", m.name, cubin.len());
        }
    }
    assert_eq!(cache.stats().compiled, 4);
}
