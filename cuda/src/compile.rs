//! NVRTC compilation to CUBIN for the device's own architecture, with an
//! on-disk cache keyed by blake3 of (source, options, NVRTC version), so a
//! second process start compiles nothing.
use crate::CudaError;
use cudarc::nvrtc::{result, sys};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Modules compiled by NVRTC and modules read from the cache in this process.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct CompileStats {
    pub compiled: usize,
    pub cached: usize,
    pub compile_s: f64,
}

/// The CUBIN cache (`$PTAP_CACHE_DIR`, else `$HOME/.cache/ptap/kernels`; none
/// if neither is set or the folder cannot be created: then every start compiles).
pub struct KernelCache {
    dir: Option<PathBuf>,
    compiled: AtomicUsize,
    cached: AtomicUsize,
    compile_us: AtomicUsize,
}

impl KernelCache {
    /// A cache in `dir` (`None`: compile every time, keep nothing).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir: dir.filter(|d| std::fs::create_dir_all(d).is_ok()),
            compiled: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            compile_us: AtomicUsize::new(0),
        }
    }

    pub fn from_env() -> Self {
        let dir = std::env::var_os("PTAP_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ptap/kernels")))
            .filter(|d| std::fs::create_dir_all(d).is_ok());
        Self {
            dir,
            compiled: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            compile_us: AtomicUsize::new(0),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    pub fn stats(&self) -> CompileStats {
        CompileStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
            compile_s: self.compile_us.load(Ordering::Relaxed) as f64 * 1e-6,
        }
    }

    /// The CUBIN of `source` for `arch`, from the cache or freshly compiled.
    pub fn cubin(&self, module: &str, source: &str, arch: &str, fmad: bool) -> Result<Vec<u8>, CudaError> {
        let options = options(arch, fmad);
        let version = nvrtc_version();
        let mut h = blake3::Hasher::new();
        h.update(source.as_bytes());
        for o in &options {
            h.update(b"\0");
            h.update(o.as_bytes());
        }
        h.update(format!("\0nvrtc {}.{}", version.0, version.1).as_bytes());
        let key = h.finalize().to_hex();
        let path = self
            .dir
            .as_ref()
            .map(|d| d.join(format!("{module}-{}.cubin", &key[..32])));
        if let Some(p) = &path {
            if let Ok(bytes) = std::fs::read(p) {
                if !bytes.is_empty() {
                    self.cached.fetch_add(1, Ordering::Relaxed);
                    return Ok(bytes);
                }
            }
        }
        let t = Instant::now();
        let cubin = compile(module, source, &options, arch)?;
        self.compile_us
            .fetch_add(t.elapsed().as_micros() as usize, Ordering::Relaxed);
        self.compiled.fetch_add(1, Ordering::Relaxed);
        if let Some(p) = &path {
            // Write then rename, so a concurrent reader never sees half a file.
            let tmp = p.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, &cubin).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
        Ok(cubin)
    }
}

fn options(arch: &str, fmad: bool) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        format!("--fmad={fmad}"),
        "--std=c++17".into(),
    ]
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters; the library's presence was checked by Device::open.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

fn compile(module: &str, source: &str, options: &[String], arch: &str) -> Result<Vec<u8>, CudaError> {
    let err = |log: String| CudaError::Compile {
        module: module.to_string(),
        arch: arch.to_string(),
        log,
    };
    let src = CString::new(source).map_err(|_| err("the source contains a NUL byte".into()))?;
    let name = CString::new(format!("{module}.cu")).unwrap();
    let prog = result::create_program(&src, Some(&name)).map_err(|e| err(format!("{e:?}")))?;
    // SAFETY: `prog` is a live program until destroy_program below.
    let out = unsafe {
        let compiled = result::compile_program(prog, options);
        let out = match compiled {
            Ok(()) => {
                let mut size = 0usize;
                let r = sys::nvrtcGetCUBINSize(prog, &mut size);
                if r != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
                    Err(err(format!("nvrtcGetCUBINSize returned {r:?} (size {size})")))
                } else {
                    let mut buf = vec![0u8; size];
                    let r = sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _);
                    if r != sys::nvrtcResult::NVRTC_SUCCESS {
                        Err(err(format!("nvrtcGetCUBIN returned {r:?}")))
                    } else {
                        Ok(buf)
                    }
                }
            }
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let bytes: Vec<u8> = l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                        String::from_utf8_lossy(&bytes).into_owned()
                    })
                    .unwrap_or_default();
                Err(err(format!("{e:?}: {log}")))
            }
        };
        let _ = result::destroy_program(prog);
        out
    };
    out
}
