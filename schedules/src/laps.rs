//! Optional per-step timings of the inspector and the loader, for timing
//! programs: a call run inside [`record`] reports when each of its steps
//! ended. Laps are process-wide (steps on rayon's workers report too), so one
//! recording at a time; outside one, a lap is one relaxed atomic load. Steps
//! that run beside each other each report their own end (see the call sites).
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

static ON: AtomicBool = AtomicBool::new(false);
type Laps = Vec<(&'static str, f64)>;
static LAPS: Mutex<Option<(Instant, Laps)>> = Mutex::new(None);

/// Runs `f` and returns its result with the laps reported while it ran:
/// `(step, seconds since the start of f)` in the order the steps ended.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Laps) {
    *LAPS.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), Vec::new()));
    ON.store(true, Ordering::SeqCst);
    let out = f();
    ON.store(false, Ordering::SeqCst);
    let laps = LAPS.lock().unwrap_or_else(|e| e.into_inner()).take();
    (out, laps.map_or_else(Vec::new, |(_, v)| v))
}

/// Marks the end of `step` (nothing outside [`record`]).
#[inline]
pub fn lap(step: &'static str) {
    if ON.load(Ordering::Relaxed) {
        if let Some((t0, v)) = LAPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            v.push((step, t0.elapsed().as_secs_f64()));
        }
    }
}
