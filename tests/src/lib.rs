//! Shared helpers for the cross-crate tests: deterministic random block
//! matrices, small comparison utilities, and the conformance suite every
//! backend runs ([`conformance`](mod@conformance)).
pub mod alloc_count;
pub mod conformance;

use ptap_sparse::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// A small deterministic generator (SplitMix64), so failures reproduce from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[-1, 1)`.
    pub fn value(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A random `nrows x ncols`-block matrix with `br x bc` blocks; each block is
/// present with probability `density`, the diagonal always when `diagonal`.
pub fn random_block_csr(
    rng: &mut Rng,
    nrows: usize,
    ncols: usize,
    br: usize,
    bc: usize,
    density: f64,
    diagonal: bool,
) -> BlockCsr {
    let threshold = (density * u64::MAX as f64) as u64;
    let rows: Vec<Vec<u32>> = (0..nrows)
        .map(|i| {
            (0..ncols)
                .filter(|&j| (diagonal && i == j) || rng.next_u64() < threshold)
                .map(|j| j as u32)
                .collect()
        })
        .collect();
    let pattern = Arc::new(BlockPattern::from_rows(ncols, &rows).unwrap());
    let values = (0..pattern.nnzb() * br * bc).map(|_| rng.value()).collect();
    BlockCsr::new(pattern, br, bc, values).unwrap()
}

/// Largest `|A_ij - A_ji^T|` relative to the largest entry.
pub fn asymmetry(a: &BlockCsr) -> f64 {
    let d = a.to_dense();
    let t = d.transpose();
    let scale = d.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    d.data
        .iter()
        .zip(&t.data)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// The CUDA device for a GPU test, or `None` after printing `skipping: <why>`
/// where CI shows it: straight to the process's stderr, past the test
/// harness's capture of `eprintln!`.
pub fn cuda_device_or_skip(options: ptap_cuda::DeviceOptions) -> Option<Arc<ptap_cuda::Device>> {
    match ptap_cuda::Device::open(options) {
        Ok(d) => Some(d),
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipping: {e}");
            None
        }
    }
}

/// The beam at size `k` with the bench's hierarchy (the defaults) and the
/// symmetric pair on every level: what the ledger's k = 16 counts and models
/// read. Yields each transfer level's index, `P` and schedule.
pub fn beam_sym_pair_levels(k: usize) -> Vec<(usize, BlockCsr, Arc<ptap_schedules::variants::TensorPairSymSchedule>)> {
    use ptap_runtime::{Hierarchy, HierarchyOptions};
    use ptap_schedules::{Variant, VariantSchedule};
    let problem = ptap_fem::BeamProblem::build(k).unwrap();
    let opts = HierarchyOptions {
        variant: Some(Variant::TensorPairSym),
        ..Default::default()
    };
    let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let mut out = Vec::new();
    for (l, lev) in h.levels().iter().enumerate() {
        let Some(t) = lev.transfer.as_ref() else { continue };
        let VariantSchedule::TensorPairSym(s) = &t.variant_schedule else {
            panic!("level {l} is not a symmetric tensor pair")
        };
        out.push((l, t.p.clone(), s.clone()));
    }
    out
}
