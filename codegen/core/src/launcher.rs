//! Typed Rust launchers for the entry points of a [`CudaModule`].
//!
//! A kernel launch is untyped: an `i32` pushed where the kernel takes
//! `unsigned long long` corrupts silently. The launcher of each entry point is
//! a method whose parameters mirror its [`ParamTy`] list (`&CudaSlice<f64>` for
//! `const double*`, `&mut CudaSlice<f64>` for `double*`, `u32` for `unsigned int`,
//! ...), so the compiler checks argument order and widths. The emitted text
//! names cudarc 0.19 through `::ptap_kernels::cudarc`.
use crate::entry::{CudaModule, KernelEntry, ParamTy};
use std::fmt::Write;

impl ParamTy {
    /// The launcher's Rust type for this parameter.
    pub fn rust_type(self) -> &'static str {
        match self {
            ParamTy::PtrF64 => "&CudaSlice<f64>",
            ParamTy::PtrMutF64 => "&mut CudaSlice<f64>",
            ParamTy::PtrF32 => "&CudaSlice<f32>",
            ParamTy::PtrMutF32 => "&mut CudaSlice<f32>",
            ParamTy::PtrU32 => "&CudaSlice<u32>",
            ParamTy::PtrMutU32 => "&mut CudaSlice<u32>",
            ParamTy::PtrU64 => "&CudaSlice<u64>",
            ParamTy::PtrMutU64 => "&mut CudaSlice<u64>",
            ParamTy::U32 => "u32",
            ParamTy::U64 => "u64",
            ParamTy::F64 => "f64",
        }
    }
    /// Scalars are pushed by reference to a local, buffers as they are.
    fn is_scalar(self) -> bool {
        matches!(self, ParamTy::U32 | ParamTy::U64 | ParamTy::F64)
    }
}

fn launcher(out: &mut String, e: &KernelEntry) {
    writeln!(out, "        /// Launches `{}`: {}.", e.name, e.doc).unwrap();
    writeln!(
        out,
        "        ///\n        /// # Safety\n        /// `cfg` must cover the threads the kernel indexes and every buffer must hold\n        \
         /// what the kernel reads or writes for the given sizes; the kernel does not check."
    )
    .unwrap();
    writeln!(out, "        #[allow(clippy::too_many_arguments)]").unwrap();
    let params: Vec<String> = e
        .params
        .iter()
        .map(|q| format!("{}: {}", q.name, q.ty.rust_type()))
        .collect();
    writeln!(
        out,
        "        pub unsafe fn {}(&self, stream: &CudaStream, cfg: LaunchConfig, {}) -> Result<(), DriverError> {{",
        e.name,
        params.join(", ")
    )
    .unwrap();
    // `lb`, not `b`: a kernel may have a parameter `b` (axpby's).
    writeln!(out, "            let mut lb = stream.launch_builder(&self.{});", e.name).unwrap();
    for q in &e.params {
        if q.ty.is_scalar() {
            writeln!(out, "            lb.arg(&{});", q.name).unwrap();
        } else {
            writeln!(out, "            lb.arg({});", q.name).unwrap();
        }
    }
    writeln!(
        out,
        "            // SAFETY: the argument list mirrors the kernel's signature (generated from one\n            \
         // KernelEntry); sizes are the caller's contract above.\n            \
         unsafe {{ lb.launch(cfg) }}?;\n            Ok(())\n        }}"
    )
    .unwrap();
}

/// `pub mod launch { pub struct Functions {..} }`: one field per entry point,
/// loaded by name from a compiled module, and one typed launcher method each.
pub fn launchers(m: &CudaModule) -> String {
    let mut out = String::new();
    writeln!(out, "/// Typed launchers for the entry points of `{}.cu`.", m.name).unwrap();
    writeln!(out, "pub mod launch {{").unwrap();
    writeln!(
        out,
        "    use ::ptap_kernels::cudarc::driver::{{CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg}};"
    )
    .unwrap();
    writeln!(out, "    use ::std::sync::Arc;\n").unwrap();
    writeln!(out, "    /// The module's entry points, loaded once.").unwrap();
    writeln!(out, "    #[derive(Debug)]\n    pub struct Functions {{").unwrap();
    for e in &m.entries {
        writeln!(out, "        pub {}: CudaFunction,", e.name).unwrap();
    }
    writeln!(out, "    }}\n").unwrap();
    writeln!(out, "    impl Functions {{").unwrap();
    writeln!(
        out,
        "        /// Looks every entry point up in `module` (compiled from the set's `CUDA_SOURCE`).\n        \
         pub fn load(module: &Arc<CudaModule>) -> Result<Self, DriverError> {{\n            Ok(Self {{"
    )
    .unwrap();
    for e in &m.entries {
        writeln!(out, "                {0}: module.load_function({0:?})?,", e.name).unwrap();
    }
    writeln!(out, "            }})\n        }}\n").unwrap();
    for e in &m.entries {
        launcher(&mut out, e);
        out.push('\n');
    }
    writeln!(out, "    }}\n}}").unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::ShapeSet;

    #[test]
    fn launcher_parameters_mirror_the_kernel_signature() {
        let m = crate::gpu::set_module(ShapeSet { bf: 3, bc: 6 });
        let text = launchers(&m);
        assert!(text.contains(
            "pub unsafe fn ptap_spmv_merge_3x6(&self, stream: &CudaStream, cfg: LaunchConfig, av: &CudaSlice<f64>, \
             ci: &CudaSlice<u32>, brow: &CudaSlice<u32>, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>, \
             carry: &mut CudaSlice<f64>, ticket: &mut CudaSlice<u32>, nblocks: u32, per_warp: u32)"
        ));
        assert_eq!(text.matches("pub unsafe fn ").count(), m.entries.len());
        assert!(text.contains("ptap_jacobi_update_6: module.load_function(\"ptap_jacobi_update_6\")?,"));
        let common = launchers(&crate::gpu::common_module());
        assert!(common.contains("lb.arg(&b);"), "scalars by reference");
        assert!(common.contains("lb.arg(y);"));
    }
}
