//! The CUDA backend ([`Cuda`], an implementation of `ptap_runtime::Backend`):
//! one device context and stream, NVRTC compilation of the generated kernels
//! to CUBIN with an on-disk cache, checked launches, device-resident block
//! matrices, the numeric Galerkin products replaying the inspector's
//! schedules, the merge-path block SpMV, and transfer counters per phase. The
//! solver itself (V-cycle, Chebyshev, CG) is `ptap-runtime`'s, written once.
//!
//! The driver and NVRTC are loaded at run time (cudarc's `dynamic-loading`), so
//! a build without CUDA links; [`Device::open`] checks both libraries and a
//! device before touching anything and otherwise answers one sentence.
mod backend;
mod compile;
mod matrix;
mod product;
mod spmv;

pub use backend::{Cuda, CudaCoarse, CudaJacobi, CudaMatrix};
pub use compile::{CompileStats, KernelCache};
pub use matrix::DeviceBlockCsr;
pub use product::{DeviceProduct, DEVICE_VARIANTS};
pub use spmv::DeviceSpmv;

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig};
use ptap_codegen_core::{CudaModule, KernelEntry, ParamTy};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// Errors of the CUDA backend, each one sentence a user can act on.
#[derive(Debug, Error)]
pub enum CudaError {
    #[error("no CUDA driver found (libcuda could not be loaded); run on a machine with an NVIDIA GPU and driver, or use --device cpu")]
    NoDriver,
    #[error("the NVRTC runtime compiler (libnvrtc) could not be loaded; install the CUDA toolkit's NVRTC or use --device cpu")]
    NoNvrtc,
    #[error("the CUDA driver reports no usable GPU ({0}); use --device cpu")]
    NoDevice(String),
    #[error("CUDA driver call failed: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    #[error("NVRTC could not compile kernel module {module} for {arch}: {log}")]
    Compile { module: String, arch: String, log: String },
    #[error("kernel {name} was launched with arguments that do not match its declared parameters ({detail})")]
    Signature { name: String, detail: String },
    #[error("{what} has {n} entries, more than the 32-bit indices of the device kernels address")]
    TooLarge { what: String, n: usize },
    #[error("the device has no {variant} executor; use two-pass, slot-tiled, column-split, flat-stream or outer-product-scatter")]
    UnsupportedVariant { variant: &'static str },
    #[error(transparent)]
    Runtime(#[from] ptap_runtime::RuntimeError),
}

/// Whether a CUDA driver and NVRTC can be loaded here (never panics).
pub fn libraries_present() -> Result<(), CudaError> {
    // SAFETY: these only try to dlopen the library; they do not call into it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(CudaError::NoDriver);
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(CudaError::NoNvrtc);
    }
    Ok(())
}

/// Compilation choices that change the kernels' numerics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Let NVRTC contract `a * b + c` into FMA (`--fmad=true`, fastest). With
    /// `false` the order-preserving products match the CPU two-pass bitwise.
    pub fmad: bool,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        Self { fmad: true }
    }
}

/// Bytes moved between host and device, per phase.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PhaseTransfers {
    pub h2d_bytes: u64,
    pub d2h_bytes: u64,
    pub h2d_copies: u64,
    pub d2h_copies: u64,
}

/// Transfer counters keyed by phase name, in first-use order.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TransferCounters {
    pub phases: Vec<(String, PhaseTransfers)>,
}

impl TransferCounters {
    fn entry(&mut self, phase: &str) -> &mut PhaseTransfers {
        if let Some(i) = self.phases.iter().position(|(p, _)| p == phase) {
            return &mut self.phases[i].1;
        }
        self.phases.push((phase.to_string(), PhaseTransfers::default()));
        &mut self.phases.last_mut().unwrap().1
    }
    pub fn get(&self, phase: &str) -> PhaseTransfers {
        self.phases
            .iter()
            .find(|(p, _)| p == phase)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }
}

/// A loaded kernel and the declaration its launches are checked against.
pub struct Kernel {
    func: CudaFunction,
    entry: KernelEntry,
}

/// The kernels of one loaded module, by entry name.
pub type Kernels = Arc<HashMap<String, Arc<Kernel>>>;

/// One argument of a checked launch.
pub enum Arg<'a> {
    F64(&'a CudaSlice<f64>),
    F64Mut(&'a CudaSlice<f64>),
    U32s(&'a CudaSlice<u32>),
    U32sMut(&'a CudaSlice<u32>),
    U32(u32),
    U64(u64),
    Scalar(f64),
}

impl Arg<'_> {
    fn ty(&self) -> ParamTy {
        match self {
            Arg::F64(_) => ParamTy::PtrF64,
            Arg::F64Mut(_) => ParamTy::PtrMutF64,
            Arg::U32s(_) => ParamTy::PtrU32,
            Arg::U32sMut(_) => ParamTy::PtrMutU32,
            Arg::U32(_) => ParamTy::U32,
            Arg::U64(_) => ParamTy::U64,
            Arg::Scalar(_) => ParamTy::F64,
        }
    }
}

/// The device: context, one stream, the kernel cache and the counters.
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: String,
    name: String,
    options: DeviceOptions,
    cache: KernelCache,
    modules: Mutex<HashMap<String, Kernels>>,
    counters: Mutex<TransferCounters>,
    phase: Mutex<String>,
    sm_count: u32,
    l2_bytes: u64,
    clock_hz: f64,
    machine: std::sync::OnceLock<ptap_schedules::model::MachineParams>,
}

impl Device {
    /// Opens GPU 0. Fails with one sentence when there is no driver, no NVRTC
    /// or no device.
    pub fn open(options: DeviceOptions) -> Result<Arc<Self>, CudaError> {
        libraries_present()?;
        let count = CudaContext::device_count().map_err(|e| CudaError::NoDevice(e.to_string()))?;
        if count < 1 {
            return Err(CudaError::NoDevice("0 devices".into()));
        }
        let ctx = CudaContext::new(0)?;
        // One stream, in order: the cross-stream event tracking is not needed.
        // SAFETY: every buffer of this backend is used on `stream` only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let (major, minor) = ctx.compute_capability()?;
        let sm_count = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let name = ctx.name()?;
        let l2_bytes = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64;
        let clock_hz = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64 * 1e3;
        Ok(Arc::new(Self {
            ctx,
            stream,
            arch: format!("sm_{major}{minor}"),
            name,
            options,
            cache: KernelCache::from_env(),
            modules: Mutex::new(HashMap::new()),
            counters: Mutex::new(TransferCounters::default()),
            phase: Mutex::new("setup".into()),
            sm_count,
            l2_bytes,
            clock_hz,
            machine: std::sync::OnceLock::new(),
        }))
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn arch(&self) -> &str {
        &self.arch
    }
    pub fn options(&self) -> DeviceOptions {
        self.options
    }
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }
    /// L2 cache size the driver reports.
    pub fn l2_bytes(&self) -> u64 {
        self.l2_bytes
    }

    /// Best of 3 device-to-device copies of 256 MiB, read plus write bytes
    /// per second (the denominator of every "fraction of the memory roof").
    pub fn measure_copy_bandwidth(&self) -> Result<f64, CudaError> {
        let n = 1usize << 25;
        let src = self.zeros::<f64>(n)?;
        let mut dst = self.zeros::<f64>(n)?;
        let t = self.time(3, || {
            self.stream.memcpy_dtod(&src, &mut dst)?;
            Ok(())
        })?;
        Ok(2.0 * (n * 8) as f64 / t)
    }

    /// This device as the traffic model sees it, measured once per process:
    /// the copy bandwidth measured ([`Self::measure_copy_bandwidth`]), the L2
    /// size, SM count and SM clock the driver reports
    /// ([`ptap_schedules::model::MachineParams::gpu`]).
    pub fn machine_params(&self) -> Result<ptap_schedules::model::MachineParams, CudaError> {
        if let Some(m) = self.machine.get() {
            return Ok(m.clone());
        }
        let bw = self.measure_copy_bandwidth()?;
        let name = format!("{} (measured)", self.name);
        let m =
            ptap_schedules::model::MachineParams::gpu(&name, bw, self.l2_bytes as f64, self.sm_count, self.clock_hz);
        Ok(self.machine.get_or_init(|| m).clone())
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
    pub fn compile_stats(&self) -> CompileStats {
        self.cache.stats()
    }
    pub fn cache_dir(&self) -> Option<std::path::PathBuf> {
        self.cache.dir().map(|p| p.to_path_buf())
    }

    /// Names the phase that later transfers are counted under.
    pub fn set_phase(&self, phase: &str) {
        *self.phase.lock().unwrap() = phase.to_string();
        // Listed even when nothing crosses the bus in it: a zero is the point.
        self.counters.lock().unwrap().entry(phase);
    }
    pub fn counters(&self) -> TransferCounters {
        self.counters.lock().unwrap().clone()
    }
    pub fn reset_counters(&self) {
        *self.counters.lock().unwrap() = TransferCounters::default();
    }
    fn count(&self, h2d: u64, d2h: u64) {
        let phase = self.phase.lock().unwrap().clone();
        let mut c = self.counters.lock().unwrap();
        let e = c.entry(&phase);
        e.h2d_bytes += h2d;
        e.d2h_bytes += d2h;
        e.h2d_copies += (h2d > 0) as u64;
        e.d2h_copies += (d2h > 0) as u64;
    }

    /// Host to device, counted.
    pub fn upload<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        host: &[T],
    ) -> Result<CudaSlice<T>, CudaError> {
        self.count(std::mem::size_of_val(host) as u64, 0);
        if host.is_empty() {
            // A one-element placeholder: kernels never read it (their counts are zero).
            return Ok(self.stream.alloc_zeros::<T>(1)?);
        }
        Ok(self.stream.clone_htod(host)?)
    }
    /// Host to an existing device buffer, counted.
    pub fn upload_into<T: DeviceRepr>(&self, host: &[T], dev: &mut CudaSlice<T>) -> Result<(), CudaError> {
        self.count(std::mem::size_of_val(host) as u64, 0);
        Ok(self.stream.memcpy_htod(host, dev)?)
    }
    /// Device to host, counted (synchronizes the stream).
    pub fn download<T: DeviceRepr>(&self, dev: &CudaSlice<T>) -> Result<Vec<T>, CudaError> {
        self.count(0, dev.num_bytes() as u64);
        Ok(self.stream.clone_dtoh(dev)?)
    }
    /// Device to an existing host slice, counted.
    pub fn download_into<T: DeviceRepr>(&self, dev: &CudaSlice<T>, host: &mut [T]) -> Result<(), CudaError> {
        self.count(0, dev.num_bytes() as u64);
        Ok(self.stream.memcpy_dtoh(dev, host)?)
    }
    /// Zeroed device buffer (no transfer).
    pub fn zeros<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, n: usize) -> Result<CudaSlice<T>, CudaError> {
        Ok(self.stream.alloc_zeros(n.max(1))?)
    }
    pub fn memset_zero(&self, dev: &mut CudaSlice<f64>) -> Result<(), CudaError> {
        Ok(self.stream.memset_zeros(dev)?)
    }
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream.synchronize()?;
        self.ctx.check_err()?;
        Ok(())
    }

    /// A timing event (timing enabled).
    pub fn event(&self) -> Result<CudaEvent, CudaError> {
        Ok(self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
    }
    /// Runs `f` `repeat` times after one warm-up and returns the best time in
    /// seconds, measured with events on the stream.
    pub fn time<F: FnMut() -> Result<(), CudaError>>(&self, repeat: usize, mut f: F) -> Result<f64, CudaError> {
        f()?;
        let (start, end) = (self.event()?, self.event()?);
        let mut best = f64::INFINITY;
        for _ in 0..repeat.max(1) {
            start.record(&self.stream)?;
            f()?;
            end.record(&self.stream)?;
            end.synchronize()?;
            best = best.min(start.elapsed_ms(&end)? as f64 * 1e-3);
        }
        Ok(best)
    }

    /// The kernels of `module`, compiled (or loaded from the cache) once per process.
    pub fn module(&self, module: &CudaModule) -> Result<Kernels, CudaError> {
        let mut mods = self.modules.lock().unwrap();
        if let Some(m) = mods.get(&module.name) {
            return Ok(m.clone());
        }
        let cubin = self
            .cache
            .cubin(&module.name, &module.source, &self.arch, self.options.fmad)?;
        let m = self.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin))?;
        let mut kernels = HashMap::new();
        for e in &module.entries {
            let func = m.load_function(&e.name)?;
            kernels.insert(e.name.clone(), Arc::new(Kernel { func, entry: e.clone() }));
        }
        let kernels = Arc::new(kernels);
        mods.insert(module.name.clone(), kernels.clone());
        Ok(kernels)
    }

    /// Launches `k` after checking every argument against its declaration.
    pub fn launch(&self, k: &Kernel, cfg: LaunchConfig, args: &[Arg<'_>]) -> Result<(), CudaError> {
        let e = &k.entry;
        if e.params.len() != args.len() || e.params.iter().zip(args).any(|(p, a)| p.ty != a.ty()) {
            return Err(CudaError::Signature {
                name: e.name.clone(),
                detail: format!(
                    "declared {:?}, got {:?}",
                    e.params.iter().map(|p| p.ty).collect::<Vec<_>>(),
                    args.iter().map(|a| a.ty()).collect::<Vec<_>>()
                ),
            });
        }
        if cfg.grid_dim.0 == 0 {
            return Ok(());
        }
        use cudarc::driver::PushKernelArg;
        let mut lb = self.stream.launch_builder(&k.func);
        for a in args {
            match a {
                Arg::F64(s) | Arg::F64Mut(s) => lb.arg(*s),
                Arg::U32s(s) | Arg::U32sMut(s) => lb.arg(*s),
                Arg::U32(v) => lb.arg(v),
                Arg::U64(v) => lb.arg(v),
                Arg::Scalar(v) => lb.arg(v),
            };
        }
        // SAFETY: the argument list matches the kernel's declared parameters
        // (checked above) and every buffer outlives the stream-ordered launch.
        unsafe { lb.launch(cfg) }?;
        Ok(())
    }
}

/// `n` threads in blocks of `threads`.
pub fn grid_for(n: u64, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(threads as u64) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Converts an index array to the kernels' `u32`, refusing what does not fit.
pub fn to_u32<T: Copy + TryInto<u32>>(what: &str, v: &[T]) -> Result<Vec<u32>, CudaError> {
    v.iter()
        .map(|&x| x.try_into().map_err(|_| ()))
        .collect::<Result<Vec<u32>, ()>>()
        .map_err(|_| CudaError::TooLarge {
            what: what.to_string(),
            n: v.len(),
        })
}
