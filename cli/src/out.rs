//! Writing to stdout and stderr without panicking, and progress on stderr.
//!
//! `println!` panics when stdout is a full disk or a closed pipe. Here a
//! closed pipe ends the program the conventional way (SIGPIPE, restored to its
//! default at start: exit status 141 in a shell, nothing printed), and any
//! other output error (a full disk) ends it with one line on stderr, if stderr
//! can take it, and exit status 74 (EX_IOERR).
use std::io::Write;

/// Lets a write to a closed pipe end the process as `cat` or `head` would;
/// Rust ignores SIGPIPE by default and then every `println!` panics.
pub fn restore_sigpipe() {
    // SAFETY: resetting a signal disposition to its default at startup, before
    // any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The status for an output error that is not a closed pipe (sysexits EX_IOERR).
pub const EXIT_IO: i32 = 74;

/// Ends the program for an output error (see the module doc).
pub fn fail(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    let _ = writeln!(std::io::stderr(), "error: cannot write the output: {e}");
    std::process::exit(EXIT_IO);
}

/// `print!` that never panics.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        fail(e);
    }
}

/// `eprint!` that never panics (a failing stderr is ignored: there is nowhere left to say it).
pub fn stderr(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Flushes stdout at the end of a command, with the same handling.
pub fn flush() {
    if let Err(e) = std::io::stdout().lock().flush() {
        fail(e);
    }
}

/// `println!` that never panics.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($t)*))) };
}

/// `print!` that never panics.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::out::stdout(format_args!($($t)*)) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($t)*))) };
}

/// Progress on stderr for a command's long phases: the one helper every
/// command uses.
///
/// On a terminal it is an `indicatif` spinner ([`Progress::spinner`]) or bar
/// ([`Progress::bar`]) showing the elapsed time and the phase under way.
/// When stderr is not a terminal nothing is drawn; a command that has always
/// printed its phases as plain `PHASE ...` lines there asks for them with
/// [`Progress::plain_lines`]. With `--quiet` there is nothing at all. The bar
/// is cleared when the `Progress` is dropped, so a report or an `error:` line
/// printed after it stands alone.
pub struct Progress {
    bar: indicatif::ProgressBar,
    quiet: bool,
    lines: bool,
}

impl Progress {
    /// Whether to draw: stderr is a terminal and the user did not ask for quiet.
    fn drawn(quiet: bool) -> bool {
        use std::io::IsTerminal;
        !quiet && std::io::stderr().is_terminal()
    }

    fn new(quiet: bool, make: impl FnOnce() -> indicatif::ProgressBar, template: &str) -> Self {
        let bar = if Self::drawn(quiet) {
            let bar = make();
            bar.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        Self {
            bar,
            quiet,
            lines: false,
        }
    }

    /// A spinner with the elapsed time and the current phase.
    pub fn spinner(quiet: bool) -> Self {
        Self::new(
            quiet,
            indicatif::ProgressBar::new_spinner,
            "{spinner} [{elapsed_precise}] {wide_msg}",
        )
    }

    /// A bar over `len` items named `unit` (steps, thresholds), with the
    /// elapsed time and the current phase.
    pub fn bar(quiet: bool, len: usize, unit: &str) -> Self {
        let p = Self::new(
            quiet,
            || indicatif::ProgressBar::new(len as u64),
            "{spinner} [{elapsed_precise}] {bar:20} {prefix} {pos}/{len} {wide_msg}",
        );
        p.bar.set_prefix(unit.to_string());
        p
    }

    /// Also print every phase as a plain `PHASE ...` line on stderr when it
    /// is not a terminal (and not `--quiet`).
    pub fn plain_lines(mut self) -> Self {
        use std::io::IsTerminal;
        self.lines = !self.quiet && !std::io::stderr().is_terminal();
        self
    }

    /// A phase starts.
    pub fn phase(&self, msg: &str) {
        self.bar.set_message(msg.to_string());
        if self.lines {
            errln!("{msg} ...");
        }
    }

    /// One more item of a bar is done.
    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// Runs `f` (which prints) with the bar taken off the terminal meanwhile.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Clears the bar (as dropping it does).
    pub fn finish(self) {}
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
