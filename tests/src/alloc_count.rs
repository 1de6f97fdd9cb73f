//! A global allocator that counts the allocations of marked threads, for the
//! tests that check a numeric refresh and a solve allocate nothing.
//!
//! A test binary installs it once:
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: ptap_tests::alloc_count::Counting = ptap_tests::alloc_count::Counting;
//! ```
//! then counts a closure on its own thread ([`allocations_in`]) or on the
//! workers of a pool whose threads are marked as they start
//! ([`CountingPool`]). Each measurement has its own counter, so tests of one
//! binary that run side by side do not count each other's allocations.
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the allocations of marked threads.
pub struct Counting;

thread_local! {
    /// The counter of the measurement this thread belongs to, if any.
    static COUNTER: Cell<Option<&'static AtomicUsize>> = const { Cell::new(None) };
}

// SAFETY: every call is forwarded to `System` unchanged; the count is a
// relaxed atomic and the mark a thread-local `Cell` read without allocating
// (`try_with` declines during thread teardown instead of panicking).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if let Ok(Some(c)) = COUNTER.try_with(Cell::get) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

/// A counter that lives as long as the test binary (a few bytes per measurement).
fn new_counter() -> &'static AtomicUsize {
    Box::leak(Box::new(AtomicUsize::new(0)))
}

/// Allocations `f` makes on the calling thread (with [`Counting`] installed).
pub fn allocations_in(f: impl FnOnce()) -> usize {
    let counter = new_counter();
    let outer = COUNTER.with(|c| c.replace(Some(counter)));
    f();
    COUNTER.with(|c| c.set(outer));
    counter.load(Ordering::Relaxed)
}

/// A rayon pool whose workers count their allocations on one counter.
/// Parallel loops measured inside it ([`CountingPool::install`]) are counted
/// on every worker; loops started from outside a pool queue their jobs in
/// rayon's injector, which allocates a block every 63 jobs, so the measured
/// code runs within.
pub struct CountingPool {
    pool: rayon::ThreadPool,
    counter: &'static AtomicUsize,
}

impl CountingPool {
    /// A pool of `threads` workers.
    pub fn new(threads: usize) -> Self {
        let counter = new_counter();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .start_handler(move |_| COUNTER.with(|c| c.set(Some(counter))))
            .build()
            .expect("a rayon pool");
        Self { pool, counter }
    }

    /// Runs `f` on a worker (see [`rayon::ThreadPool::install`]).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Allocations by the workers so far (differences are what count).
    pub fn allocations(&self) -> usize {
        self.counter.load(Ordering::Relaxed)
    }
}
