//! Every CUDA source the device backend launches compiles with NVRTC for
//! sm_90, with and without FMA contraction, through the backend's own compile
//! path — on a machine without a GPU too: NVRTC needs no driver. CI installs
//! NVRTC from its Python wheel (`.ci/run`); without it the test prints
//! `skipping: ...` and passes.
use ptap_codegen_core::{gpu, CudaModule, ShapeSet};
use ptap_cuda::KernelCache;
use ptap_runtime::KernelRegistry;

fn nvrtc_or_skip() -> bool {
    // SAFETY: only tries to dlopen the library.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipping: no NVRTC library found (install the nvidia-cuda-nvrtc wheel and put its lib/ on LD_LIBRARY_PATH, as .ci/run does)"
        );
    }
    present
}

fn compile_all(modules: &[CudaModule]) {
    let cache = KernelCache::new(None);
    for m in modules {
        for fmad in [true, false] {
            let cubin = cache
                .cubin(&m.name, &m.source, "sm_90", fmad)
                .unwrap_or_else(|e| panic!("{} (fmad {fmad}): {e}", m.name));
            assert!(cubin.len() > 1000, "{}: a CUBIN of {} bytes", m.name, cubin.len());
        }
    }
    assert_eq!(cache.stats().compiled, 2 * modules.len());
}

#[test]
fn shipped_sets_and_the_common_module_compile_for_sm90() {
    if !nvrtc_or_skip() {
        return;
    }
    let mut modules: Vec<CudaModule> = KernelRegistry::shipped()
        .cuda_sets()
        .iter()
        .map(|s| CudaModule {
            name: s.module.to_string(),
            source: s.source.to_string(),
            entries: gpu::set_entries(ShapeSet { bf: s.bf, bc: s.bc }),
        })
        .collect();
    assert_eq!(modules.len(), 3, "1x1, 2D and 3D elasticity");
    modules.push(gpu::common_module());
    modules.push(ptap_cuda::upload_module());
    compile_all(&modules);
}

#[test]
fn declared_sets_up_to_the_largest_block_compile_for_sm90() {
    // What `kernels!(4x4 / 4x10 / 10x10)` (the user-shape test crate) and a
    // 16x16 set emit: the largest blocks the shape sets allow.
    if !nvrtc_or_skip() {
        return;
    }
    // 10x10 / 10x6 / 6x6: its P^T W fits the FP64 MMA with three inner steps (K = 10), the
    // predicated kernels' later-step pointer offsets at 4 M and 8 M.
    let sets = [
        ShapeSet { bf: 4, bc: 10 },
        ShapeSet { bf: 16, bc: 16 },
        ShapeSet { bf: 10, bc: 6 },
    ];
    let modules = sets.map(gpu::set_module);
    assert!(modules[2].source.contains("const double* xl2 = xl0 + 48;"));
    compile_all(&modules);
}
