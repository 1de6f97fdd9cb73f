//! Schedules that outlive the process (`ptap inspect`, `ptap replay`).
//!
//! [`inspect`] runs the inspector (for the beam: the whole AMG mesh setup) and
//! writes every level's product schedule, with its prolongator, to one bundle
//! file. [`replay`] loads that file in another process, checks that it was
//! built for the operator it is handed, and runs only the numeric products.
use crate::target::beam_hierarchy;
use anyhow::{anyhow, bail, Context, Result};
use ptap_fem::BeamProblem;
use ptap_io::BlockSpec;
use ptap_runtime::bundle::{hierarchy_bundle, level_record, load_level, StoredLevel};
use ptap_runtime::{executor_for, Hierarchy};
use ptap_schedules::file::{write_bundle, MappedBundle, ScheduleBundle};
use ptap_schedules::model::MachineParams;
use ptap_schedules::{inspect as inspect_product, BlockShape, ProductPolicy, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Where the operators come from.
#[derive(Clone, Debug)]
pub enum Operands {
    /// The 3D beam at refinement `k`: its whole AMG hierarchy, one product per level.
    Beam(usize),
    /// A fine operator and a prolongator read from files (Matrix Market or
    /// PETSc binary; block size from the file or inferred): one product.
    Files { a: PathBuf, p: PathBuf },
}

/// What `inspect` runs and writes.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    pub operands: Operands,
    /// Product variant; `None` = per level from the traffic model of this CPU, measured.
    pub variant: Option<Variant>,
    /// The schedule file to write (replaced atomically).
    pub out: PathBuf,
}

/// `ptap inspect --json`.
#[derive(Clone, Debug, Serialize)]
pub struct InspectReport {
    pub schedule: String,
    pub file_bytes: u64,
    pub levels: Vec<InspectLevel>,
    /// Whole AMG mesh setup (beam) or the inspector alone (files).
    pub setup_s: f64,
    /// The inspector alone, all levels, timed again after the setup.
    pub inspect_s: f64,
    pub write_s: f64,
    /// Opening the written file and rebuilding every level's schedule and P.
    pub load_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct InspectLevel {
    pub level: u32,
    pub variant: String,
    pub fine_block: u32,
    pub coarse_block: u32,
    pub arrays_bytes: u64,
}

/// What `replay` loads and runs.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// A schedule file written by [`inspect`].
    pub schedule: PathBuf,
    /// The operators it must have been built for (with files, `P` comes from
    /// the file rather than the bundle, and only level 0 is replayed).
    pub operands: Operands,
    /// Timed numeric products per level (after one untimed call).
    pub repeat: usize,
    /// Write A_c (Matrix Market if the name ends in .mtx, else PETSc binary).
    /// With several levels, level l goes to the name with `.l<l>` before the extension.
    pub out: Option<PathBuf>,
}

/// `ptap replay --json`.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    pub schedule: String,
    pub problem: String,
    pub repeat: usize,
    pub open_s: f64,
    pub levels: Vec<ReplayLevel>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReplayLevel {
    pub level: u32,
    pub variant: &'static str,
    pub coarse_block_rows: usize,
    pub coarse_blocks: usize,
    pub load_s: f64,
    pub numeric_best_s: f64,
    pub numeric_mean_s: f64,
    pub out: Option<String>,
}

/// Inspects `P^T A P` for matrices read from files and wraps it as a one-level bundle.
fn file_bundle(a: &BlockCsr, p: &BlockCsr, variant: Option<Variant>) -> Result<(ScheduleBundle, f64)> {
    let (bf, bc) = p.block_shape();
    if a.block_shape() != (bf, bf) {
        bail!(
            "A has {}x{} blocks but P has {bf}x{bc}: A's blocks must be square with P's row block size",
            a.block_shape().0,
            a.block_shape().1
        );
    }
    // `auto`: the model on this CPU, fed the inspector's exact counts. The
    // machine is measured before the clock starts (once per process).
    let policy = match variant {
        Some(v) => ProductPolicy::Fixed(v),
        None => ProductPolicy::model(MachineParams::measure_cpu(), &Variant::ALL).with_exact_counts(),
    };
    let t = Instant::now();
    let schedule = inspect_product(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
        BlockShape::new(bf, bc),
        &policy,
    )?
    .schedule;
    let inspect_s = t.elapsed().as_secs_f64();
    let stored = StoredLevel {
        p: p.clone(),
        schedule,
        aggregates: p.ncols(),
        merged_aggregates: 0,
        unaggregated_nodes: 0,
        omega: 0.0,
    };
    let bundle = ScheduleBundle {
        created_by: format!("ptap {}", env!("CARGO_PKG_VERSION")),
        problem: "A and P from files".into(),
        records: vec![level_record(0, &stored)],
    };
    Ok((bundle, inspect_s))
}

/// Reads `A` and `P` from files and checks that their values are finite.
pub fn read_operands(a: &Path, p: &Path) -> Result<(BlockCsr, BlockCsr)> {
    // Shapes from the headers first: nothing is built for a mismatched pair.
    ptap_io::check_operand_headers(a, p)?;
    let am = ptap_io::read_matrix(a, BlockSpec::Infer).with_context(|| format!("reading A from {}", a.display()))?;
    let pm = ptap_io::read_matrix(p, BlockSpec::Infer).with_context(|| format!("reading P from {}", p.display()))?;
    am.check_finite("A").map_err(|e| anyhow!("{}: {e}", a.display()))?;
    pm.check_finite("P").map_err(|e| anyhow!("{}: {e}", p.display()))?;
    Ok((am, pm))
}

/// Time to re-run the inspector of every level of `h` (symbolic two-pass plus
/// the level's variant), the work a loaded bundle saves.
pub fn reinspect_seconds(h: &Hierarchy) -> f64 {
    let t = Instant::now();
    for lev in h.levels() {
        if let Some(tr) = &lev.transfer {
            let (bf, bc) = tr.p.block_shape();
            let policy = ProductPolicy::Fixed(tr.variant_schedule.variant());
            std::hint::black_box(
                inspect_product(
                    lev.a.pattern_arc().clone(),
                    tr.p.pattern_arc().clone(),
                    BlockShape::new(bf, bc),
                    &policy,
                )
                .expect("the hierarchy's own operands"),
            );
        }
    }
    t.elapsed().as_secs_f64()
}

/// Time to open `path` and rebuild every level's schedule for the operators of
/// `h` (what `replay` and a schedule cache do instead of inspecting; loading
/// `P` too replaces the rest of the mesh setup and is timed by `replay`).
pub fn load_seconds(path: &Path, h: &Hierarchy) -> Result<f64> {
    let t = Instant::now();
    let bundle = Arc::new(MappedBundle::open(path)?);
    for (l, lev) in h.levels().iter().enumerate() {
        if let Some(tr) = &lev.transfer {
            std::hint::black_box(VariantSchedule::from_record(
                &bundle,
                l as u32,
                lev.a.pattern_arc().clone(),
                tr.p.pattern_arc().clone(),
            )?);
        }
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Runs the inspector on `options.operands`, writes the schedule file and
/// times loading it back. `progress` gets a line per phase.
pub fn inspect(options: &InspectOptions, progress: &mut dyn FnMut(&str)) -> Result<InspectReport> {
    let variant = options.variant;
    let (bundle, setup_s, inspect_s, source) = match &options.operands {
        Operands::Beam(k) => {
            let k = *k;
            progress(&format!("setting up the beam hierarchy at k = {k}"));
            let h = beam_hierarchy(k, variant)?;
            if h.num_levels() < 2 {
                bail!(
                    "the beam at k = {k} has {} scalar rows, few enough to be solved directly: its hierarchy has one level and no Galerkin product to inspect; use k >= 2",
                    h.operator().scalar_rows()
                );
            }
            let setup_s = h.timings.mesh_setup_s;
            progress("inspecting every level again");
            let inspect_s = reinspect_seconds(&h);
            (hierarchy_bundle(&h, &format!("beam k={k}")), setup_s, inspect_s, Ok(h))
        }
        Operands::Files { a, p } => {
            progress("reading A and P");
            let (am, pm) = read_operands(a, p)?;
            progress("inspecting P^T A P");
            let (bundle, inspect_s) = file_bundle(&am, &pm, variant)?;
            (bundle, inspect_s, inspect_s, Err((am, pm)))
        }
    };
    progress("writing the schedule file");
    let t = Instant::now();
    let file_bytes = write_bundle(&options.out, &bundle)?;
    let write_s = t.elapsed().as_secs_f64();
    progress("loading it back");
    let load_s = match &source {
        Ok(h) => load_seconds(&options.out, h)?,
        Err((am, pm)) => {
            let t = Instant::now();
            let b = Arc::new(MappedBundle::open(&options.out)?);
            std::hint::black_box(VariantSchedule::from_record(
                &b,
                0,
                am.pattern_arc().clone(),
                pm.pattern_arc().clone(),
            )?);
            t.elapsed().as_secs_f64()
        }
    };
    Ok(InspectReport {
        schedule: options.out.display().to_string(),
        file_bytes,
        levels: bundle
            .records
            .iter()
            .map(|r| InspectLevel {
                level: r.level,
                variant: r.variant.clone(),
                fine_block: r.fine_block,
                coarse_block: r.coarse_block,
                arrays_bytes: r
                    .arrays
                    .iter()
                    .map(|a| a.data.len() as u64 * a.data.kind().elem_bytes())
                    .sum(),
            })
            .collect(),
        setup_s,
        inspect_s,
        write_s,
        load_s,
    })
}

/// `FILE` for one level, `FILE` with `.l<l>` before its extension for several.
pub fn level_path(out: &Path, level: u32, levels: usize) -> PathBuf {
    if levels <= 1 {
        return out.to_path_buf();
    }
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match out.extension() {
        Some(ext) => format!("{stem}.l{level}.{}", ext.to_string_lossy()),
        None => format!("{stem}.l{level}"),
    };
    out.with_file_name(name)
}

/// Writes `a` as Matrix Market (`.mtx`) or PETSc binary (anything else).
pub fn write_matrix(path: &Path, a: &BlockCsr) -> Result<()> {
    let is_mm = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mtx"));
    if is_mm {
        ptap_io::write_matrix_market(path, a, false)?;
    } else {
        ptap_io::write_petsc_mat(path, a)?;
    }
    Ok(())
}

/// Loads `options.schedule`, checks it against the operands (pattern
/// fingerprints), and runs the numeric products level by level, each level's
/// `A_c` the next one's `A`. `progress` gets a line per level.
pub fn replay(options: &ReplayOptions, progress: &mut dyn FnMut(&str)) -> Result<ReplayReport> {
    let t_open = Instant::now();
    let bundle = Arc::new(MappedBundle::open(&options.schedule)?);
    let open_s = t_open.elapsed().as_secs_f64();
    if bundle.is_empty() {
        bail!(
            "{} holds no level products; re-run `ptap inspect`",
            options.schedule.display()
        );
    }
    // The fine operator, and P when it comes from a file rather than the bundle.
    let (mut a, given_p) = match &options.operands {
        Operands::Beam(k) => {
            let k = *k;
            let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
            (problem.a, None)
        }
        Operands::Files { a, p } => {
            let (am, pm) = read_operands(a, p)?;
            (am, Some(pm))
        }
    };
    let nlev = if given_p.is_some() { 1 } else { bundle.len() };
    let mut levels = Vec::new();
    for l in 0..nlev as u32 {
        progress(&format!("level {l}: loading and replaying"));
        let t_load = Instant::now();
        let (p, schedule) = match &given_p {
            Some(p) => {
                let s = VariantSchedule::from_record(&bundle, l, a.pattern_arc().clone(), p.pattern_arc().clone())?;
                (p.clone(), s)
            }
            None => {
                let stored = load_level(&bundle, l, a.pattern_arc())?;
                (stored.p, stored.schedule)
            }
        };
        let load_s = t_load.elapsed().as_secs_f64();
        let (bf, bc) = p.block_shape();
        if a.block_shape() != (bf, bf) {
            bail!(
                "{}: level {l} was inspected for {bf}x{bf} blocks of A but A has {}x{}; re-run `ptap inspect` for this operator",
                options.schedule.display(),
                a.block_shape().0,
                a.block_shape().1
            );
        }
        let mut product = executor_for(&schedule, bf, bc)?;
        let mut ac = BlockCsr::zeros(schedule.base().c.clone(), bc, bc);
        product.numeric(&a, &p, &mut ac)?;
        let (mut best, mut total) = (f64::INFINITY, 0.0);
        for _ in 0..options.repeat {
            let t = Instant::now();
            product.numeric(&a, &p, &mut ac)?;
            let dt = t.elapsed().as_secs_f64();
            best = best.min(dt);
            total += dt;
        }
        let out = match &options.out {
            Some(path) => {
                let path = level_path(path, l, nlev);
                write_matrix(&path, &ac).with_context(|| format!("writing A_c of level {l}"))?;
                Some(path.display().to_string())
            }
            None => None,
        };
        levels.push(ReplayLevel {
            level: l,
            variant: product.variant().name(),
            coarse_block_rows: ac.nrows(),
            coarse_blocks: ac.nnzb(),
            load_s,
            numeric_best_s: best,
            numeric_mean_s: total / options.repeat as f64,
            out,
        });
        a = ac;
    }
    Ok(ReplayReport {
        schedule: options.schedule.display().to_string(),
        problem: bundle.problem().to_string(),
        repeat: options.repeat,
        open_s,
        levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptap_runtime::TwoPassExecutor;
    use ptap_schedules::TwoPassSchedule;

    /// An inspected k = 2 bundle, replayed from its file, gives every level's
    /// A_c bit for bit as the in-process two-pass product.
    #[test]
    fn replay_of_an_inspected_k2_bundle_is_the_in_process_product() {
        let dir = std::env::temp_dir().join(format!("ptap-drivers-schedules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("k2.ptaps");
        let ins = inspect(
            &InspectOptions {
                operands: Operands::Beam(2),
                variant: Some(Variant::TwoPass),
                out: file.clone(),
            },
            &mut |_| {},
        )
        .unwrap();
        assert!(!ins.levels.is_empty() && ins.levels.iter().all(|l| l.variant == "two-pass"));
        assert_eq!(ins.file_bytes, std::fs::metadata(&file).unwrap().len());

        let out = dir.join("ac.petsc");
        let rep = replay(
            &ReplayOptions {
                schedule: file,
                operands: Operands::Beam(2),
                repeat: 1,
                out: Some(out.clone()),
            },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(rep.levels.len(), ins.levels.len());
        assert_eq!(rep.problem, "beam k=2");

        let h = beam_hierarchy(2, Some(Variant::TwoPass)).unwrap();
        let nlev = rep.levels.len();
        for (l, lev) in h.levels()[..nlev].iter().enumerate() {
            let p = &lev.transfer.as_ref().unwrap().p;
            let (bf, bc) = p.block_shape();
            let base =
                Arc::new(TwoPassSchedule::inspect(lev.a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
            let mut want = BlockCsr::zeros(base.c.clone(), bc, bc);
            TwoPassExecutor::new(base, bf, bc)
                .numeric(&lev.a, p, &mut want)
                .unwrap();
            let path = level_path(&out, l as u32, nlev);
            assert_eq!(rep.levels[l].out.as_deref(), Some(path.display().to_string().as_str()));
            let want_path = dir.join(format!("want.l{l}.petsc"));
            write_matrix(&want_path, &want).unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&want_path).unwrap(),
                "level {l}: A_c differs from the in-process two-pass product"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
