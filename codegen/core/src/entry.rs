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

impl KernelEntry {
    /// Writes `// doc` and `extern "C" __global__ void name(type name, ...)`,
    /// then `open` (the opening brace with its spacing), so every generator
    /// declares its entries from the same parameter list the launcher uses.
    pub fn write_signature(&self, out: &mut String, open: &str) {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|q| format!("{} {}", q.ty.c_type(), q.name))
            .collect();
        out.push_str(&format!(
            "// {}\nextern \"C\" __global__ void {}({}){open}\n",
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
