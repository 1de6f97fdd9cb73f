//! Writing to stdout and stderr without panicking.
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
