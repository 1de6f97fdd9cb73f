//! The beam hierarchy's shape next to the paper's `tab:hier` (`ptap hier`).
//!
//! Builds the 3D beam at `k` and runs the mesh setup only (strength graphs,
//! aggregation, `P`, the inspector's symbolic products; no matrix setup, no
//! solve), then reports per Galerkin product the inspector's statistics
//! ([`ProductStats`]: `m_F, Z_A, n_A, Z_P, n_P, Z_W, w, m_C, Z_C, n_C`), the
//! operator complexity, and, at the paper's base case `k = 16`, the paper's row
//! beside each of ours.
use anyhow::{Context, Result};
use ptap_amg::Aggregation;
use ptap_fem::BeamProblem;
use ptap_runtime::{HierarchyOptions, LevelSummary, MeshSetup};
use ptap_schedules::{ProductStats, Variant};
use serde::Serialize;

/// What hierarchy to build.
#[derive(Clone, Debug)]
pub struct HierOptions {
    /// Beam refinement (10k x k x k Q2 hexahedra).
    pub k: usize,
    pub aggregation: Aggregation,
    /// Level-0 strength threshold, halved on each coarser level.
    pub threshold: f64,
    /// Prolongator filter threshold and per-level factor.
    pub pf: f64,
    pub pf_scale: f64,
    /// Stop coarsening at this many scalar rows.
    pub coarse_eq_limit: usize,
}

impl HierOptions {
    /// The beam at `k` with the paper's options (Appendix A: threshold 0.05,
    /// coarse limit 2000, pf 0.03 scaled by 0.5 per level) and `aggregation`.
    pub fn paper(k: usize, aggregation: Aggregation) -> Self {
        HierOptions {
            k,
            aggregation,
            threshold: 0.05,
            pf: ptap_amg::PAPER_PF,
            pf_scale: 0.5,
            coarse_eq_limit: 2000,
        }
    }
}

/// One row of the paper's `tab:hier`, as printed there (so `Z_A = 21.23M` is
/// 21,230,000: the table's rounding, not a count).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PaperRow {
    pub m_f: f64,
    pub z_a: f64,
    pub n_a: f64,
    pub z_p: f64,
    pub n_p: f64,
    pub z_w: f64,
    pub w: f64,
    pub m_c: f64,
    pub z_c: f64,
    pub n_c: f64,
}

/// The paper's `tab:hier`: the 1.05M-dof base case (k = 16), PETSc GAMG with
/// the options of its Appendix A, `P` filtered at pf = 0.03.
pub const PAPER_TAB_HIER: [PaperRow; 3] = [
    PaperRow {
        m_f: 348_480.0,
        z_a: 21.23e6,
        n_a: 60.9,
        z_p: 1.66e6,
        n_p: 4.76,
        z_w: 7.27e6,
        w: 4.38,
        m_c: 7_243.0,
        z_c: 627e3,
        n_c: 86.6,
    },
    PaperRow {
        m_f: 7_243.0,
        z_a: 627e3,
        n_a: 86.6,
        z_p: 51.6e3,
        n_p: 7.12,
        z_w: 376e3,
        w: 7.29,
        m_c: 1_125.0,
        z_c: 127e3,
        n_c: 112.9,
    },
    PaperRow {
        m_f: 1_125.0,
        z_a: 127e3,
        n_a: 112.9,
        z_p: 8_970.0,
        n_p: 7.97,
        z_w: 29.4e3,
        w: 3.27,
        m_c: 98.0,
        z_c: 3_770.0,
        n_c: 38.5,
    },
];

/// The `k` at which the paper's table was measured.
pub const PAPER_K: usize = 16;

/// Operator complexity of the paper's hierarchy, from its table's `Z_A` of
/// level 0 (3x3 blocks) and every product's `Z_C` (6x6 blocks).
pub fn paper_operator_complexity() -> f64 {
    let fine = PAPER_TAB_HIER[0].z_a * 9.0;
    let coarse: f64 = PAPER_TAB_HIER.iter().map(|r| r.z_c * 36.0).sum();
    (fine + coarse) / fine
}

/// One Galerkin product of our hierarchy, with the paper's where it has one.
#[derive(Clone, Debug, Serialize)]
pub struct HierProduct {
    /// `l0`, `l1`, ...
    pub product: String,
    /// Block shapes of `A` and `P`, e.g. `3x3/3x6`.
    pub blocks: String,
    pub stats: ProductStats,
    pub aggregates: usize,
    /// Aggregates too small to carry every near-null mode, merged into a neighbour.
    pub merged_aggregates: usize,
    pub unaggregated_nodes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper: Option<PaperRow>,
}

/// `ptap hier`'s report (`--json` writes it).
#[derive(Clone, Debug, Serialize)]
pub struct HierReport {
    pub problem: &'static str,
    pub k: usize,
    pub dofs: usize,
    pub aggregation: &'static str,
    pub threshold: f64,
    pub pf: f64,
    pub pf_scale: f64,
    pub coarse_eq_limit: usize,
    pub levels: Vec<LevelSummary>,
    pub products: Vec<HierProduct>,
    pub operator_complexity: f64,
    /// The paper's operator complexity (from its `tab:hier`), at `k = 16` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_operator_complexity: Option<f64>,
    pub assembly_s: f64,
    pub mesh_setup_s: f64,
}

/// Builds the beam of `options` and its mesh setup (two-pass schedules, which
/// every variant's statistics share); `progress` gets a line per step.
pub fn run(options: &HierOptions, progress: &mut dyn FnMut(&str)) -> Result<HierReport> {
    let k = options.k;
    progress(&format!("assembling the 3D beam at k = {k}"));
    let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let dofs = problem.a.scalar_rows();
    let assembly_s = problem.timings.setup_s + problem.timings.assembly_s;
    let mut opts = HierarchyOptions {
        variant: Some(Variant::TwoPass),
        ..HierarchyOptions::default()
    };
    opts.amg.aggregation = options.aggregation;
    opts.amg.threshold = options.threshold;
    (opts.amg.pf, opts.amg.pf_scale) = (options.pf, options.pf_scale);
    opts.amg.coarse_eq_limit = options.coarse_eq_limit;
    let setup = MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, progress)
        .context("the mesh setup of the AMG hierarchy")?;
    let levels = setup.summary();
    let at_paper = k == PAPER_K;
    let products = setup
        .levels
        .iter()
        .enumerate()
        .filter_map(|(l, lev)| {
            let t = lev.transfer.as_ref()?;
            let (bf, bc) = t.p.block_shape();
            Some(HierProduct {
                product: format!("l{l}"),
                blocks: format!("{bf}x{bf}/{bf}x{bc}"),
                stats: t.schedule.stats,
                aggregates: t.aggregates,
                merged_aggregates: t.merged_aggregates,
                unaggregated_nodes: t.unaggregated_nodes,
                paper: at_paper.then(|| PAPER_TAB_HIER.get(l).copied()).flatten(),
            })
        })
        .collect();
    Ok(HierReport {
        problem: "beam3d",
        k,
        dofs,
        aggregation: options.aggregation.name(),
        threshold: options.threshold,
        pf: options.pf,
        pf_scale: options.pf_scale,
        coarse_eq_limit: options.coarse_eq_limit,
        levels,
        products,
        operator_complexity: setup.operator_complexity(),
        paper_operator_complexity: at_paper.then(paper_operator_complexity),
        assembly_s,
        mesh_setup_s: setup.timings.mesh_setup_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_table_is_consistent_with_itself() {
        for r in &PAPER_TAB_HIER {
            assert!((r.z_a / r.m_f - r.n_a).abs() / r.n_a < 0.01);
            assert!((r.z_p / r.m_f - r.n_p).abs() / r.n_p < 0.01);
            assert!((r.z_w / r.z_p - r.w).abs() / r.w < 0.01);
            assert!((r.z_c / r.m_c - r.n_c).abs() / r.n_c < 0.01);
        }
        for pair in PAPER_TAB_HIER.windows(2) {
            assert_eq!(pair[0].m_c, pair[1].m_f);
            assert_eq!(pair[0].z_c, pair[1].z_a);
        }
        let oc = paper_operator_complexity();
        assert!((oc - 1.143).abs() < 1e-3, "{oc}");
    }

    #[test]
    fn k2_hierarchy_reports_every_product_and_no_paper_rows() {
        let r = run(&HierOptions::paper(2, Aggregation::Petsc), &mut |_| {}).unwrap();
        assert_eq!(r.dofs, 3 * 40 * 25);
        assert_eq!(r.products.len() + 1, r.levels.len());
        assert_eq!(r.products[0].stats.m_f, 1000);
        assert_eq!(r.products[0].stats.m_c, r.products[0].aggregates);
        assert!(r.products.iter().all(|p| p.paper.is_none()));
        assert!(r.paper_operator_complexity.is_none());
        assert!(r.operator_complexity > 1.0);
    }
}
