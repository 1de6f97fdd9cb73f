//! The contract between the CUDA generators and the typed launchers: every
//! emitted `extern "C"` entry point is described once, here, by its name and
//! its parameter list, so the launcher's signature cannot drift from the kernel.

/// The C type of one kernel parameter, with its Rust counterpart in the launcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamTy {
    /// `const double*`
    PtrF64,
    /// `double*`
    PtrMutF64,
    /// `const float*`
    PtrF32,
    /// `float*`
    PtrMutF32,
    /// `const unsigned int*`
    PtrU32,
    /// `unsigned int*`
    PtrMutU32,
    /// `const unsigned long long*`
    PtrU64,
    /// `unsigned long long*`
    PtrMutU64,
    /// `unsigned int`
    U32,
    /// `unsigned long long`
    U64,
    /// `double`
    F64,
}

impl ParamTy {
    /// The C spelling used in the emitted signature.
    pub fn c_type(self) -> &'static str {
        match self {
            ParamTy::PtrF64 => "const double* __restrict__",
            ParamTy::PtrMutF64 => "double* __restrict__",
            ParamTy::PtrF32 => "const float* __restrict__",
            ParamTy::PtrMutF32 => "float* __restrict__",
            ParamTy::PtrU32 => "const unsigned int* __restrict__",
            ParamTy::PtrMutU32 => "unsigned int* __restrict__",
            ParamTy::PtrU64 => "const unsigned long long* __restrict__",
            ParamTy::PtrMutU64 => "unsigned long long* __restrict__",
            ParamTy::U32 => "unsigned int",
            ParamTy::U64 => "unsigned long long",
            ParamTy::F64 => "double",
        }
    }
}

/// One parameter of an entry point.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: String,
    pub ty: ParamTy,
}

impl Param {
    pub fn new(name: &str, ty: ParamTy) -> Self {
        Param {
            name: name.to_string(),
            ty,
        }
    }
}

/// One `extern "C" __global__` entry point: deterministic name and parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelEntry {
    /// The symbol, e.g. `ptap_spmv_merge_3x3`.
    pub name: String,
    pub params: Vec<Param>,
    /// One line for the launcher's doc comment.
    pub doc: String,
}

/// Shorthand for [`Param::new`] in the generators' parameter lists.
pub fn param(name: &str, ty: ParamTy) -> Param {
    Param::new(name, ty)
}

/// The first statements of every generated kernel: programmatic dependent
/// launch (sm_90 on). `launch_dependents` lets the stream's next kernel be
/// scheduled while this one's last blocks run, and `wait` holds this kernel
/// until the grid before it has completed and its writes are visible, so a
/// kernel launched with the programmatic stream serialization attribute
/// overlaps only its launch with its predecessor, never a memory access.
/// Without the attribute (or below sm_90) both are no-ops. The launcher sets
/// the attribute only on chained launches (the products' stages) of kernels
/// whose body opens with exactly this text
/// ([`CudaModule::waits_on_grid_dependency`]).
pub const GRID_DEPENDENCY: &str = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");
  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");
#endif
";

impl KernelEntry {
    /// Writes `// doc` and `extern "C" __global__ void name(type name, ...)`,
    /// then `open` (the opening brace with its spacing) and
    /// [`GRID_DEPENDENCY`], so every generator declares its entries from the
    /// same parameter list the launcher uses and every kernel waits for its
    /// predecessor before touching memory.
    pub fn write_signature(&self, out: &mut String, open: &str) {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|q| format!("{} {}", q.ty.c_type(), q.name))
            .collect();
        out.push_str(&format!(
            "// {}\nextern \"C\" __global__ void {}({}){open}\n{GRID_DEPENDENCY}",
            self.doc,
            self.name,
            params.join(", ")
        ));
    }

    /// [`KernelEntry::write_signature`] with `__launch_bounds__(threads,
    /// blocks)` where `bounds` is given: the compiler then keeps the
    /// registers within what `blocks` blocks of `threads` threads per SM allow.
    pub fn write_bounded_signature(&self, out: &mut String, open: &str, bounds: Option<(usize, usize)>) {
        match bounds {
            Some((threads, blocks)) => {
                let mut sig = String::new();
                self.write_signature(&mut sig, open);
                let with = format!("__global__ __launch_bounds__({threads}, {blocks}) void ");
                out.push_str(&sig.replacen("__global__ void ", &with, 1));
            }
            None => self.write_signature(out, open),
        }
    }
}

/// A translation unit: the CUDA C source and the entry points it defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaModule {
    /// File stem, e.g. `ptap_3x3_3x6_6x6`.
    pub name: String,
    pub source: String,
    pub entries: Vec<KernelEntry>,
}

impl CudaModule {
    /// Whether the one definition of the kernel `entry` in [`CudaModule::source`]
    /// opens its body with [`GRID_DEPENDENCY`] (as [`KernelEntry::write_signature`]
    /// writes it): only such a kernel may be launched with programmatic stream
    /// serialization. `false` for a kernel written by hand without it, one
    /// defined twice, or one not found.
    pub fn waits_on_grid_dependency(&self, entry: &str) -> bool {
        let sig = format!(" void {entry}(");
        let src = self.source.as_str();
        let mut found = None;
        let mut from = 0;
        while let Some(i) = src[from..].find(&sig) {
            let at = from + i + sig.len();
            from = at;
            // The parameter list, then the body's brace (a prototype ends in `;`).
            let Some(close) = src[at..].find(')') else { return false };
            let after = src[at + close + 1..].trim_start();
            if let Some(body) = after.strip_prefix('{') {
                if found.is_some() {
                    return false;
                }
                found = Some(body.trim_start_matches([' ', '\n']).starts_with(GRID_DEPENDENCY));
            }
        }
        found.unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> KernelEntry {
        KernelEntry {
            name: name.into(),
            params: vec![param("x", ParamTy::PtrMutF64), param("n", ParamTy::U32)],
            doc: "test".into(),
        }
    }

    fn module(source: String, names: &[&str]) -> CudaModule {
        CudaModule {
            name: "m".into(),
            source,
            entries: names.iter().map(|n| entry(n)).collect(),
        }
    }

    #[test]
    fn written_signatures_open_with_the_grid_dependency() {
        let mut src = String::new();
        entry("k_a").write_signature(&mut src, " {");
        src.push_str("  x[0] = 1.0;\n}\n");
        entry("k_ab").write_bounded_signature(&mut src, " {", Some((128, 4)));
        src.push_str("  x[1] = 2.0;\n}\n");
        assert_eq!(src.matches(GRID_DEPENDENCY).count(), 2);
        assert!(src.contains("__launch_bounds__(128, 4) void k_ab("));
        let m = module(src, &["k_a", "k_ab"]);
        assert!(m.waits_on_grid_dependency("k_a"));
        assert!(m.waits_on_grid_dependency("k_ab"));
        assert!(!m.waits_on_grid_dependency("k_b"));
    }

    #[test]
    fn hand_written_prototypes_and_duplicates_do_not_wait() {
        let mut waits = String::new();
        entry("k_w").write_signature(&mut waits, " {");
        waits.push_str("}\n");
        // A kernel without the preamble, declared first, then one that has it.
        let src = format!(
            "extern \"C\" __global__ void k_plain(double* x, unsigned int n);\n\
             extern \"C\" __global__ void k_plain(double* x, unsigned int n) {{\n  x[0] = 0.0;\n}}\n{waits}"
        );
        let m = module(src.clone(), &["k_plain", "k_w"]);
        assert!(!m.waits_on_grid_dependency("k_plain"));
        assert!(m.waits_on_grid_dependency("k_w"));
        // Defined twice: refused even though both open with it.
        let m = module(format!("{waits}{waits}"), &["k_w"]);
        assert!(!m.waits_on_grid_dependency("k_w"));
        // The preamble somewhere other than the body's start does not count.
        let late = waits.replacen("{\n#if", "{\n  double y = 0.0;\n#if", 1);
        assert!(!module(late, &["k_w"]).waits_on_grid_dependency("k_w"));
    }
}
