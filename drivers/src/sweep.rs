//! The paper's prolongator-filter sweep (`tab:pfsweep`, `ptap sweep-filter`).
//!
//! For each filter threshold, the beam hierarchy is built with that `pf`
//! (per-level factor `pf_scale`), solved, and its matrix setup refreshed a
//! few times to time the hot numeric Galerkin products. Filtering thins `P`,
//! which thins `W = A P` and `A_c` and makes the hot product cheaper; the
//! kernel-preserving projection keeps the iteration count close.
use crate::target::{product_options, Target};
use anyhow::{Context, Result};
use ptap_amg::Aggregation;
use ptap_cuda::Cuda;
use ptap_fem::BeamProblem;
use ptap_runtime::{Backend, CgOptions, Cpu, Hierarchy, HierarchyOptions, MeshSetup};
use serde::Serialize;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Beam refinement.
    pub k: usize,
    /// Filter thresholds, one row each, in this order.
    pub pf: Vec<f64>,
    /// Per-level factor on pf.
    pub pf_scale: f64,
    /// How aggregates are formed.
    pub aggregation: Aggregation,
    /// Hot refreshes timed per threshold; the fastest numeric product is reported.
    pub repeat: usize,
}

/// One threshold's row (`ptap sweep-filter --json` writes the list of rows).
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    pub pf: f64,
    pub aggregation: &'static str,
    pub iterations: usize,
    pub max_displacement: f64,
    /// Blocks of the fine prolongator P_0 and of all P.
    pub fine_p_blocks: usize,
    pub all_p_blocks: usize,
    pub coarse_block_rows: Vec<usize>,
    /// Fastest hot numeric Galerkin products (all levels).
    pub hot_numeric_s: f64,
    pub hot_matrix_setup_s: f64,
    /// Operators, prolongators, restrictions and `W` of the hierarchy.
    pub hierarchy_bytes: usize,
    pub operator_complexity: f64,
}

/// Runs the sweep on `target` (on a GPU the hot products are the device's,
/// column split; on the CPU two-pass). `progress` is handed each row as it is
/// finished.
pub fn run(options: &SweepOptions, target: &Target, progress: &mut dyn FnMut(&SweepRow)) -> Result<Vec<SweepRow>> {
    let k = options.k;
    let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let n = problem.a.scalar_rows();
    let mut rows = Vec::new();
    for &pf in &options.pf {
        let mut opts = HierarchyOptions::default();
        (opts.amg.pf, opts.amg.pf_scale) = (pf, options.pf_scale);
        opts.amg.aggregation = options.aggregation;
        product_options(&mut opts, target, None)?;
        let setup = MeshSetup::build(problem.a.clone(), &problem.near_null, problem.modes, &opts, &mut |_| {})
            .with_context(|| format!("building the hierarchy at pf = {pf}"))?;
        let transfers = || setup.levels.iter().filter_map(|l| l.transfer.as_ref());
        // Operators, P and R, and the intermediate W every variant keeps.
        let hierarchy_bytes: usize = setup.levels.iter().map(|l| l.a.bytes()).sum::<usize>()
            + transfers()
                .map(|t| {
                    let (bf, bc) = t.p.block_shape();
                    2 * t.p.bytes() + t.schedule.w.nnzb() * bf * bc * 8
                })
                .sum::<usize>();
        let fine_p_blocks = transfers().next().map_or(0, |t| t.p.nnzb());
        let all_p_blocks = transfers().map(|t| t.p.nnzb()).sum();
        let coarse_block_rows = setup.levels.iter().skip(1).map(|l| l.a.nrows()).collect();
        let mut x = vec![0.0; n];
        let hot = match target {
            Target::Cpu => hot_refreshes(
                Cpu::new(opts.kernels.clone()),
                setup,
                &problem.rhs,
                &mut x,
                options.repeat,
            )?,
            Target::Cuda(dev) => hot_refreshes(Cuda::new(dev)?, setup, &problem.rhs, &mut x, options.repeat)?,
        };
        let row = SweepRow {
            pf,
            aggregation: options.aggregation.name(),
            iterations: hot.iterations,
            max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            fine_p_blocks,
            all_p_blocks,
            coarse_block_rows,
            hot_numeric_s: hot.numeric_s,
            hot_matrix_setup_s: hot.matrix_setup_s,
            hierarchy_bytes,
            operator_complexity: hot.operator_complexity,
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

struct Hot {
    iterations: usize,
    operator_complexity: f64,
    numeric_s: f64,
    matrix_setup_s: f64,
}

/// Solves once on `backend`, then times `repeat` hot matrix setups (the fastest counts).
fn hot_refreshes<B: Backend>(backend: B, setup: MeshSetup, rhs: &[f64], x: &mut [f64], repeat: usize) -> Result<Hot> {
    let mut h = Hierarchy::new(backend, setup, &mut |_| {})?;
    let mut ws = h.workspace(500)?;
    let rep = h.solve(rhs, x, &CgOptions::default(), &mut ws)?;
    let (mut numeric, mut matrix) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        matrix = matrix.min(h.matrix_setup()?);
        numeric = numeric.min(h.timings.galerkin_numeric_s);
    }
    Ok(Hot {
        iterations: rep.iterations,
        operator_complexity: h.operator_complexity(),
        numeric_s: numeric,
        matrix_setup_s: matrix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unfiltered, the sweep's row is the plain CPU solve (13 iterations at
    /// k = 2, the same tip); filtering thins P and keeps the count.
    #[test]
    fn sweep_at_k2_on_the_cpu() {
        let options = SweepOptions {
            k: 2,
            pf: vec![0.0, ptap_amg::DEFAULT_PF],
            pf_scale: 0.5,
            aggregation: Aggregation::Natural,
            repeat: 1,
        };
        let mut seen = Vec::new();
        let rows = run(&options, &Target::Cpu, &mut |r| seen.push(r.pf)).unwrap();
        assert_eq!(seen, options.pf);
        assert_eq!(rows.len(), 2);
        let solved = crate::solve::run(&crate::solve::SolveOptions::beam(2), &Target::Cpu, &mut |_| {}).unwrap();
        // The default hierarchy filters at DEFAULT_PF: the sweep's second row is it.
        assert_eq!(rows[1].iterations, solved.iterations);
        assert_eq!(rows[1].max_displacement.to_bits(), solved.max_displacement.to_bits());
        assert!(rows[1].fine_p_blocks < rows[0].fine_p_blocks);
        assert!(rows[1].hierarchy_bytes < rows[0].hierarchy_bytes);
        assert!(rows
            .iter()
            .all(|r| r.hot_numeric_s > 0.0 && r.all_p_blocks >= r.fine_p_blocks));
    }
}
