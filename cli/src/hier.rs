//! `ptap hier`: the beam hierarchy's shape beside the paper's `tab:hier`
//! (arguments and printing; the mesh setup and the table are
//! `ptap_drivers::hier`).
use anyhow::{bail, Result};
use clap::Args;
use ptap_amg::Aggregation;
use ptap_drivers::hier::{HierOptions, HierReport, PaperRow};
use ptap_schedules::ProductStats;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct HierArgs {
    /// Beam refinement (10k x k x k Q2 hexahedra); the paper's table is k = 16.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    aggregation: Aggregation,
    /// Prolongator filter threshold (the paper's table: 0.03; 0 = off).
    #[arg(long, default_value_t = ptap_amg::PAPER_PF, value_name = "PF")]
    pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pf_scale: f64,
    /// Level-0 strength threshold, halved on each coarser level (the paper: 0.05).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Stop coarsening at this many scalar rows, 1 to 8000 (the paper: 2000).
    #[arg(long, default_value_t = 2000, value_parser = crate::common::count_in::<1, 8000>)]
    coarse_eq_limit: usize,
    /// Write the report as JSON to PATH (keys: levels, products[].stats,
    /// products[].paper, operator_complexity, paper_operator_complexity, ...).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Do not print progress or the table.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: &HierArgs) -> Result<()> {
    let k = crate::common::validate_k(args.k)?;
    if !(args.threshold >= 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be in [0, 1), got {}", args.threshold);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    let options = HierOptions {
        k,
        aggregation: args.aggregation,
        threshold: args.threshold,
        pf: args.pf,
        pf_scale: args.pf_scale,
        coarse_eq_limit: args.coarse_eq_limit,
    };
    let quiet = args.quiet;
    let report = ptap_drivers::hier::run(&options, &mut |m: &str| {
        if !quiet {
            errln!("{m}");
        }
    })?;
    if !quiet {
        print_report(&report);
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &report)?;
    }
    Ok(())
}

/// `1234567` as `1.23M`, `45678` as `45.7K`, small counts as they are.
fn short(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}K", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn ours(s: &ProductStats) -> [f64; 10] {
    [
        s.m_f as f64,
        s.z_a as f64,
        s.n_a,
        s.z_p as f64,
        s.n_p,
        s.z_w as f64,
        s.w,
        s.m_c as f64,
        s.z_c as f64,
        s.n_c,
    ]
}

fn paper(r: &PaperRow) -> [f64; 10] {
    [r.m_f, r.z_a, r.n_a, r.z_p, r.n_p, r.z_w, r.w, r.m_c, r.z_c, r.n_c]
}

/// Counts print short, ratios (`n_*`, `w`) with two decimals.
const IS_RATIO: [bool; 10] = [false, false, true, false, true, false, true, false, false, true];

fn row(label: &str, product: &str, blocks: &str, v: &[f64; 10], ratio_line: bool) {
    let cells: Vec<String> = v
        .iter()
        .zip(IS_RATIO)
        .map(|(&x, is_ratio)| {
            if ratio_line || is_ratio {
                format!("{x:.2}")
            } else {
                short(x)
            }
        })
        .collect();
    outln!(
        "{:<4} {:<6} {:>9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>6}",
        product,
        label,
        blocks,
        cells[0],
        cells[1],
        cells[2],
        cells[3],
        cells[4],
        cells[5],
        cells[6],
        cells[7],
        cells[8],
        cells[9]
    );
}

fn print_report(r: &HierReport) {
    outln!(
        "beam k = {}: {} dofs; aggregation {}, threshold {}, pf {} (x{} per level), coarse limit {}",
        r.k,
        r.dofs,
        r.aggregation,
        r.threshold,
        r.pf,
        r.pf_scale,
        r.coarse_eq_limit
    );
    outln!(
        "{:<4} {:<6} {:>9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>6}",
        "prod",
        "",
        "A/P",
        "m_F",
        "Z_A",
        "n_A",
        "Z_P",
        "n_P",
        "Z_W",
        "w",
        "m_C",
        "Z_C",
        "n_C"
    );
    for p in &r.products {
        let o = ours(&p.stats);
        row("ours", &p.product, &p.blocks, &o, false);
        if let Some(pr) = &p.paper {
            let q = paper(pr);
            row("paper", "", "", &q, false);
            let ratio: Vec<f64> = o.iter().zip(q).map(|(a, b)| a / b).collect();
            row("ratio", "", "", &ratio.try_into().expect("ten columns"), true);
        }
    }
    outln!();
    for p in &r.products {
        outln!(
            "{}: {} aggregates ({} merged for rank, {} nodes unaggregated)",
            p.product,
            p.aggregates,
            p.merged_aggregates,
            p.unaggregated_nodes
        );
    }
    let sizes: Vec<String> = r.levels.iter().map(|l| l.block_rows.to_string()).collect();
    outln!("block rows per level: {}", sizes.join(" / "));
    match r.paper_operator_complexity {
        Some(p) => outln!(
            "operator complexity {:.3} (the paper's, from its tab:hier: {:.3})",
            r.operator_complexity,
            p
        ),
        None => outln!(
            "operator complexity {:.3} (the paper's table is at k = {})",
            r.operator_complexity,
            ptap_drivers::hier::PAPER_K
        ),
    }
    outln!("assembly {:.2} s, mesh setup {:.2} s", r.assembly_s, r.mesh_setup_s);
}
