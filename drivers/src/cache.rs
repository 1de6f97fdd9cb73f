//! The schedule cache: one file per hierarchy in a directory, named by a key
//! of what shaped it (the caller's: the beam's size and options, or a user
//! operator's pattern, near-null space and options). A hit loads the mesh
//! setup (every level's `P` and product schedule) instead of building it; a
//! stale or damaged entry is reported and rebuilt; a cache that cannot be
//! created or written costs one warning, never the run.
use anyhow::Result;
use ptap_schedules::file::{write_bundle, LoadTimings, MappedBundle, ScheduleBundle};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// A line on stderr for the user; a stderr that fails (a full disk) is
/// ignored, never a panic: there is nowhere left to say it.
macro_rules! note {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
pub(crate) use note;

#[derive(Clone, Debug, Serialize)]
pub struct CacheReport {
    pub path: String,
    /// "loaded", "written", "rebuilt" (with `reason`), "unwritable" (with
    /// `reason`: the run went on without the cache) or "skipped" (with
    /// `reason`: nothing to cache).
    pub status: &'static str,
    pub reason: Option<String>,
    pub load_s: Option<f64>,
    /// Of `load_s`: opening the file (`open_s`: the key, mapping, checksum
    /// and tag, metadata checks; `open` splits it) and loading the setup from
    /// it (`setup_s`).
    pub open_s: Option<f64>,
    pub open: Option<LoadTimings>,
    pub setup_s: Option<f64>,
    pub write_s: Option<f64>,
}

/// What the cache answered for one hierarchy.
pub enum Lookup<T> {
    /// No cache (none asked for, or its directory cannot be made).
    Off,
    /// The entry was loaded: `load` gave this.
    Loaded(T, CacheReport),
    /// Build it, then [`store`] the bundle at `path`; `reason` says why an
    /// existing entry was not used.
    Miss { path: PathBuf, reason: Option<String> },
}

/// Looks up entry `name` in the cache directory `dir` (created if absent) and
/// loads it with `load` when present. `verbose` reports events on stderr.
pub fn lookup<T>(
    dir: Option<&Path>,
    name: &str,
    verbose: bool,
    load: impl FnOnce(&Arc<MappedBundle>) -> Result<T>,
) -> Lookup<T> {
    let Some(dir) = dir else {
        return Lookup::Off;
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        note!(
            "warning: cannot create the schedule cache directory {} ({e}); running without the cache",
            dir.display()
        );
        return Lookup::Off;
    }
    // Temporary files of writers killed before their rename.
    let stale = ptap_io::fsio::clean_stale_temps(dir, ".ptaps");
    if stale > 0 && verbose {
        note!("schedule cache: removed {stale} temporary files of dead writers");
    }
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_err() {
        return Lookup::Miss { path, reason: None };
    }
    let t = Instant::now();
    let (mut open, mut open_s, mut setup_s) = (None, None, None);
    let attempt = MappedBundle::open(&path).map_err(anyhow::Error::from).and_then(|b| {
        open = Some(b.timings());
        open_s = Some(t.elapsed().as_secs_f64());
        let t_setup = Instant::now();
        let loaded = load(&Arc::new(b));
        setup_s = Some(t_setup.elapsed().as_secs_f64());
        loaded
    });
    match attempt {
        Ok(value) => {
            if verbose {
                note!("schedule cache: loaded {} (mesh setup skipped)", path.display());
            }
            let report = CacheReport {
                path: path.display().to_string(),
                status: "loaded",
                reason: None,
                load_s: Some(t.elapsed().as_secs_f64()),
                open_s,
                open,
                setup_s,
                write_s: None,
            };
            Lookup::Loaded(value, report)
        }
        Err(e) => {
            let msg = format!("{e:#}");
            if verbose {
                note!("schedule cache: {} is unusable ({msg}); rebuilding it", path.display());
            }
            Lookup::Miss {
                path,
                reason: Some(msg),
            }
        }
    }
}

/// Writes `bundle` to the cache entry `path` ([`Lookup::Miss`]'s); `reason`
/// is why an older entry was rebuilt. A failure is a warning and an
/// "unwritable" report: the run has done its work.
pub fn store(path: &Path, reason: Option<String>, bundle: &ScheduleBundle, verbose: bool) -> CacheReport {
    let t = Instant::now();
    match write_bundle(path, bundle) {
        Ok(_) => {
            let write_s = t.elapsed().as_secs_f64();
            if verbose {
                note!("schedule cache: wrote {}", path.display());
            }
            CacheReport {
                path: path.display().to_string(),
                status: if reason.is_some() { "rebuilt" } else { "written" },
                reason,
                load_s: None,
                open_s: None,
                open: None,
                setup_s: None,
                write_s: Some(write_s),
            }
        }
        Err(e) => {
            note!("warning: the schedule cache was not written ({e}); the run continues without it");
            CacheReport {
                path: path.display().to_string(),
                status: "unwritable",
                reason: Some(e.to_string()),
                load_s: None,
                open_s: None,
                open: None,
                setup_s: None,
                write_s: None,
            }
        }
    }
}
