//! Helpers shared by the integration tests: self-deleting temporary files and
//! deterministic random block matrices.
#![allow(dead_code)]
use ptap_io::info_path;
use ptap_sparse::{BlockCsr, BlockPattern};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A unique path under the system temp directory; the file and its PETSc
/// `.info` companion are removed on drop.
pub struct Tmp(PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Self {
        let k = COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("ptap-io-test-{}-{k}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_file(info_path(&p));
        Tmp(p)
    }
    /// The file name alone (what error messages must mention).
    pub fn name(&self) -> String {
        self.0.file_name().unwrap().to_string_lossy().into_owned()
    }
    pub fn write(&self, text: &str) -> &Path {
        std::fs::write(&self.0, text).unwrap();
        &self.0
    }
    pub fn write_bytes(&self, b: &[u8]) -> &Path {
        std::fs::write(&self.0, b).unwrap();
        &self.0
    }
}

impl std::ops::Deref for Tmp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Tmp {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(info_path(&self.0));
    }
}

/// xorshift64*: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Values that stress a bitwise round trip: all magnitudes, both zeros,
    /// subnormals, extremes, and non-terminating decimals.
    pub fn nasty(&mut self) -> f64 {
        match self.below(16) {
            0 => 0.0,
            1 => -0.0,
            2 => 4.9e-324 * (1 + self.below(1000)) as f64,
            3 => f64::MAX * (self.unit() - 0.5),
            4 => f64::MIN_POSITIVE,
            5 => 1.0 / 3.0,
            6 => -(self.below(1000) as f64),
            _ => (self.unit() - 0.5) * 10f64.powi(self.below(80) as i32 - 40),
        }
    }
}

/// A random `nbr x nbc` block matrix with `br x bc` blocks, about `density` of
/// the blocks stored (every block row keeps its diagonal block when it exists, a
/// few rows are left empty).
pub fn random_block(nbr: usize, nbc: usize, br: usize, bc: usize, density: f64, seed: u64) -> BlockCsr {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut row_ptr = vec![0];
    let mut cols = Vec::new();
    for i in 0..nbr {
        if i % 7 != 3 {
            for j in 0..nbc {
                if i == j || rng.unit() < density {
                    cols.push(j as u32);
                }
            }
        }
        row_ptr.push(cols.len());
    }
    let values = (0..cols.len() * br * bc).map(|_| rng.nasty()).collect();
    let p = BlockPattern::new(nbr, nbc, row_ptr, cols).unwrap();
    BlockCsr::new(Arc::new(p), br, bc, values).unwrap()
}

/// Same pattern, same block shape, same value bits.
pub fn assert_bitwise_eq(got: &BlockCsr, want: &BlockCsr) {
    assert_eq!(got.block_shape(), want.block_shape());
    assert_eq!(got.pattern(), want.pattern());
    let g: Vec<u64> = got.values().iter().map(|v| v.to_bits()).collect();
    let w: Vec<u64> = want.values().iter().map(|v| v.to_bits()).collect();
    assert_eq!(g, w);
}

pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A block matrix with dense `b x b` blocks on a 2D 5-point node stencil of a
/// `nx x ny` grid (stiffness-like: every stored block completely filled).
pub fn stencil_block(nx: usize, ny: usize, b: usize, seed: u64) -> BlockCsr {
    let mut rng = Rng(seed | 1);
    let mut row_ptr = vec![0];
    let mut cols = Vec::new();
    for x in 0..nx {
        for y in 0..ny {
            let mut nb = vec![x * ny + y];
            if x > 0 {
                nb.push((x - 1) * ny + y);
            }
            if x + 1 < nx {
                nb.push((x + 1) * ny + y);
            }
            if y > 0 {
                nb.push(x * ny + y - 1);
            }
            if y + 1 < ny {
                nb.push(x * ny + y + 1);
            }
            nb.sort_unstable();
            cols.extend(nb.iter().map(|&c| c as u32));
            row_ptr.push(cols.len());
        }
    }
    let values = (0..cols.len() * b * b).map(|_| 1.0 + rng.unit()).collect();
    let n = nx * ny;
    BlockCsr::new(Arc::new(BlockPattern::new(n, n, row_ptr, cols).unwrap()), b, b, values).unwrap()
}
