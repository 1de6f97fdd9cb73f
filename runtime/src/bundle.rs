//! Whole-hierarchy schedule bundles: one file record per level product.
//!
//! A level's record is its product schedule ([`VariantSchedule::to_record`])
//! plus the level's prolongator (pattern and values: `P` is frozen once built,
//! the hierarchy reuses it on every refresh) and the aggregation figures the
//! summary reports. With the bundle, a hierarchy over a fine operator of the
//! same pattern is rebuilt without aggregating, smoothing or inspecting
//! ([`crate::Hierarchy::from_bundle`]); only the numeric work remains.
//!
//! Level 0's record also carries a hash of the options that shaped the
//! hierarchy (AMG options and near-null modes): a bundle written under other
//! options is refused, not silently reused.
use crate::backend::Backend;
use crate::cpu::Cpu;
use crate::hierarchy::{
    Hierarchy, HierarchyOptions, MeshLevel, MeshLevelTimings, MeshSetup, SetupTimings, TransferSetup,
};
use crate::RuntimeError;
use ptap_schedules::file::{MappedBundle, NamedArray, RecordView, ScheduleBundle, ScheduleFileError, ScheduleRecord};
use ptap_schedules::VariantSchedule;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// What a level's record holds besides its schedule.
#[derive(Clone, Debug)]
pub struct StoredLevel {
    pub p: BlockCsr,
    pub schedule: VariantSchedule,
    pub aggregates: usize,
    pub merged_aggregates: usize,
    pub unaggregated_nodes: usize,
    pub omega: f64,
}

/// The options hash recorded in level 0 (first 8 bytes of blake3, LE).
pub fn options_hash(options: &HierarchyOptions, modes: usize) -> u64 {
    let text = format!("{:?}|modes={modes}", options.amg);
    let h = blake3::hash(text.as_bytes());
    u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// The record of one level: `schedule` with `p` and the aggregation figures.
pub fn level_record(level: u32, stored: &StoredLevel) -> ScheduleRecord {
    let p = &stored.p;
    let (bf, bc) = p.block_shape();
    let mut rec = stored.schedule.to_record(level, bf, bc);
    let pat = p.pattern();
    rec.arrays.push(NamedArray::u64(
        "p.row_ptr",
        pat.row_ptr().iter().map(|&x| x as u64).collect(),
    ));
    rec.arrays.push(NamedArray::u32("p.col_idx", pat.col_idx().to_vec()));
    rec.arrays.push(NamedArray::f64("p.values", p.values().to_vec()));
    rec.sizes.extend([
        ("p.nrows".to_string(), pat.nrows() as u64),
        ("p.ncols".to_string(), pat.ncols() as u64),
        ("aggregates".to_string(), stored.aggregates as u64),
        ("merged_aggregates".to_string(), stored.merged_aggregates as u64),
        ("unaggregated_nodes".to_string(), stored.unaggregated_nodes as u64),
        ("omega_bits".to_string(), stored.omega.to_bits()),
    ]);
    rec
}

/// The bundle of a built hierarchy (`problem` is free text for humans).
pub fn hierarchy_bundle<B: Backend>(h: &Hierarchy<B>, problem: &str) -> ScheduleBundle {
    let modes = h.levels().get(1).map_or(0, |l| l.block);
    let mut records: Vec<ScheduleRecord> = h
        .levels()
        .iter()
        .enumerate()
        .filter_map(|(l, lev)| {
            let t = lev.transfer.as_ref()?;
            let stored = StoredLevel {
                p: h.host_prolongator(l).expect("a transfer keeps P on the host").clone(),
                schedule: t.variant_schedule.clone(),
                aggregates: t.aggregates,
                merged_aggregates: t.merged_aggregates,
                unaggregated_nodes: t.unaggregated_nodes,
                omega: t.omega,
            };
            Some(level_record(l as u32, &stored))
        })
        .collect();
    if let Some(r0) = records.first_mut() {
        r0.sizes
            .push(("options_hash".to_string(), options_hash(h.options(), modes)));
    }
    ScheduleBundle {
        created_by: format!("ptap {}", env!("CARGO_PKG_VERSION")),
        problem: problem.to_string(),
        records,
    }
}

fn size(rec: &RecordView<'_>, name: &str) -> Result<u64, ScheduleFileError> {
    rec.size(name).ok_or_else(|| ScheduleFileError::Invalid {
        path: rec.path().to_path_buf(),
        why: format!("level {}: size `{name}` is missing", rec.level()),
    })
}

/// The prolongator stored in `rec` (pattern checked, values finite).
pub fn stored_prolongator(rec: &RecordView<'_>) -> Result<BlockCsr, ScheduleFileError> {
    let pattern = Arc::new(stored_prolongator_pattern(rec)?);
    stored_prolongator_values(rec, pattern)
}

fn invalid_in(rec: &RecordView<'_>, why: String) -> ScheduleFileError {
    ScheduleFileError::Invalid {
        path: rec.path().to_path_buf(),
        why: format!("level {}: {why}", rec.level()),
    }
}

/// The pattern of the prolongator stored in `rec`, checked.
fn stored_prolongator_pattern(rec: &RecordView<'_>) -> Result<BlockPattern, ScheduleFileError> {
    let (nrows, ncols) = (size(rec, "p.nrows")? as usize, size(rec, "p.ncols")? as usize);
    let row_ptr: Vec<usize> = rec.array_u64("p.row_ptr")?.par_iter().map(|&x| x as usize).collect();
    if row_ptr.len() != nrows + 1 {
        return Err(invalid_in(
            rec,
            "the stored P has a row-pointer array of the wrong length".into(),
        ));
    }
    BlockPattern::new(nrows, ncols, row_ptr, rec.array_u32("p.col_idx")?.to_vec())
        .map_err(|e| invalid_in(rec, format!("the stored P is not a valid block pattern ({e})")))
}

/// The stored prolongator's values over `pattern` (checked finite).
fn stored_prolongator_values(rec: &RecordView<'_>, pattern: Arc<BlockPattern>) -> Result<BlockCsr, ScheduleFileError> {
    let (bf, bc) = (rec.fine_block() as usize, rec.coarse_block() as usize);
    let values: Vec<f64> = rec
        .array_f64("p.values")?
        .par_iter()
        .with_min_len(1 << 14)
        .copied()
        .collect();
    if values.par_chunks(1 << 16).any(|c| c.iter().any(|v| !v.is_finite())) {
        return Err(invalid_in(rec, "the stored P holds NaN or infinity".into()));
    }
    BlockCsr::new(pattern, bf, bc, values)
        .map_err(|e| invalid_in(rec, format!("the stored P's values do not fit its pattern ({e})")))
}

/// Level `level` of `bundle` for a fine operator of pattern `a`: the stored
/// `P`, then the schedule (refused unless built for `a` and that `P`). `P`'s
/// values are copied out of the file beside the schedule's load and checks
/// (which need only its pattern); a bad `P` is still the error reported first.
pub fn load_level(bundle: &Arc<MappedBundle>, level: u32, a: &Arc<BlockPattern>) -> Result<StoredLevel, RuntimeError> {
    let rec = bundle.level(level)?;
    let pattern = Arc::new(stored_prolongator_pattern(&rec)?);
    let (p, schedule) = rayon::join(
        || stored_prolongator_values(&rec, pattern.clone()),
        || VariantSchedule::from_record(bundle, level, a.clone(), pattern.clone()),
    );
    let p = p?;
    let schedule = schedule?;
    Ok(StoredLevel {
        p,
        schedule,
        aggregates: size(&rec, "aggregates")? as usize,
        merged_aggregates: size(&rec, "merged_aggregates")? as usize,
        unaggregated_nodes: size(&rec, "unaggregated_nodes")? as usize,
        omega: f64::from_bits(size(&rec, "omega_bits")?),
    })
}

impl MeshSetup {
    /// Mesh setup loaded from a schedule bundle written for a fine operator of
    /// `a0`'s pattern under the same options ([`crate::bundle`]): every level's
    /// `P` and product schedule are loaded, nothing is aggregated, smoothed,
    /// inspected or multiplied. Each level keeps the variant stored in the bundle.
    pub fn from_bundle(
        a0: BlockCsr,
        modes: usize,
        bundle: &Arc<MappedBundle>,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        a0.check_finite("the fine operator")
            .map_err(|e| RuntimeError::NotFinite { what: e.to_string() })?;
        let block = a0.block_shape().0;
        let mut setup = Self::from_bundle_pattern(a0.pattern_arc(), block, modes, bundle, options, progress)?;
        setup.levels[0].a = a0;
        setup.levels[0].has_values = true;
        Ok(setup)
    }

    /// [`MeshSetup::from_bundle`] before the fine operator's values are
    /// given: level 0 holds `pattern` (blocks `block x block`) without values
    /// until [`MeshSetup::with_fine_operator`] hands them over. A caller that
    /// owns the operator keeps it until the bundle has loaded, and never
    /// needs a copy of it for the load.
    pub fn from_bundle_pattern(
        pattern: &Arc<BlockPattern>,
        block: usize,
        modes: usize,
        bundle: &Arc<MappedBundle>,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        let first = bundle.level(0)?;
        let want = options_hash(options, modes);
        if first.size("options_hash") != Some(want) {
            return Err(RuntimeError::StaleBundle {
                path: bundle.path().display().to_string(),
            });
        }
        let mut timings = SetupTimings::default();
        // No values yet: a zeroed allocation the operator replaces, never written.
        let mut levels = vec![MeshLevel {
            a: BlockCsr::zeros(pattern.clone(), block, block),
            has_values: false,
            transfer: None,
        }];
        for l in 0..bundle.len() {
            progress(&format!("level {l}: loading P and the product schedule"));
            let t_mesh = Instant::now();
            let a = &levels[l].a;
            let stored = load_level(bundle, l as u32, a.pattern_arc())?;
            let (bf, bc) = stored.p.block_shape();
            if a.block_shape() != (bf, bf) {
                return Err(RuntimeError::BundleShape {
                    path: bundle.path().display().to_string(),
                    level: l,
                    stored: bf,
                    given: a.block_shape().0,
                });
            }
            let schedule = stored.schedule.base().clone();
            let ac = BlockCsr::zeros(schedule.c.clone(), bc, bc);
            levels[l].transfer = Some(TransferSetup {
                p: stored.p,
                schedule,
                variant_schedule: stored.schedule,
                aggregates: stored.aggregates,
                merged_aggregates: stored.merged_aggregates,
                unaggregated_nodes: stored.unaggregated_nodes,
                omega: stored.omega,
                warm: Default::default(),
            });
            levels.push(MeshLevel {
                a: ac,
                has_values: false,
                transfer: None,
            });
            let load_s = t_mesh.elapsed().as_secs_f64();
            timings.mesh_setup_s += load_s;
            timings.mesh_levels.push(MeshLevelTimings {
                level: l,
                load_s,
                ..MeshLevelTimings::default()
            });
        }
        Ok(Self {
            levels,
            options: options.clone(),
            modes,
            timings,
        })
    }
}

impl MeshSetup {
    /// The fine operator's values for a setup from
    /// [`MeshSetup::from_bundle_pattern`]: refused unless its pattern and
    /// blocks are level 0's and its values are finite.
    pub fn with_fine_operator(mut self, a0: BlockCsr) -> Result<Self, RuntimeError> {
        let l0 = &self.levels[0].a;
        let same = a0.block_shape() == l0.block_shape()
            && (Arc::ptr_eq(a0.pattern_arc(), l0.pattern_arc()) || a0.pattern() == l0.pattern());
        if !same {
            return Err(RuntimeError::PatternMismatch {
                what: "fine operator",
                detail: format!(
                    "the loaded setup has {}x{} blocks of {:?} with {} stored, the operator {}x{} of {:?} with {}",
                    l0.pattern().nrows(),
                    l0.pattern().ncols(),
                    l0.block_shape(),
                    l0.pattern().nnzb(),
                    a0.pattern().nrows(),
                    a0.pattern().ncols(),
                    a0.block_shape(),
                    a0.pattern().nnzb()
                ),
            });
        }
        a0.check_finite("the fine operator")
            .map_err(|e| RuntimeError::NotFinite { what: e.to_string() })?;
        self.levels[0].a = a0;
        self.levels[0].has_values = true;
        Ok(self)
    }
}

impl Hierarchy<Cpu> {
    /// Setup on the CPU from a schedule bundle: [`MeshSetup::from_bundle`],
    /// then [`Hierarchy::new`].
    pub fn from_bundle(
        a0: BlockCsr,
        modes: usize,
        bundle: &Arc<MappedBundle>,
        options: &HierarchyOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self, RuntimeError> {
        let setup = MeshSetup::from_bundle(a0, modes, bundle, options, progress)?;
        Self::new(Cpu::new(options.kernels.clone()), setup, progress)
    }
}
