//! Files as ptap opens and replaces them: inputs must be regular files (a FIFO
//! or a device is refused before it can block a read), and outputs are written
//! atomically (a temporary file beside the target, then a rename) without ever
//! replacing something that is not a regular file or following a symbolic
//! link to replace its target.
//!
//! Temporary files are named `<target name>.<pid>.tmp`; a writer killed
//! before its rename leaves one behind, and [`clean_stale_temps`] removes those
//! whose process is gone.
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What kind of file `t` is, for messages ("a FIFO", "a directory", ...).
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The error [`open_regular`] and [`check_replaceable`] give for a path that
/// is not a regular file, inside an `io::Error` (find it with
/// [`not_regular_kind`]): `kind` is [`kind_of`]'s word for what it is.
#[derive(Debug)]
pub struct NotRegular {
    pub kind: &'static str,
}

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "it is {}, not a regular file", self.kind)
    }
}

impl std::error::Error for NotRegular {}

fn not_regular(meta: &std::fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegular {
            kind: kind_of(meta.file_type()),
        },
    )
}

/// The kind of file an `io::Error` of this module refused, if that is what it is.
pub fn not_regular_kind(e: &io::Error) -> Option<&'static str> {
    e.get_ref()?.downcast_ref::<NotRegular>().map(|n| n.kind)
}

/// Opens `path` for reading, refusing anything but a regular file (symbolic
/// links to one are followed). The type is checked before opening, so a FIFO
/// is never opened, and again on the open file (opened non-blocking), so a
/// FIFO swapped in between cannot block either.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok(file)
}

/// Refuses to replace `path` unless it is absent or a regular file (not a
/// symbolic link, FIFO, device or directory).
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => Ok(()),
        Ok(meta) => Err(not_regular(&meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The temporary file a writer of `path` uses: `<name>.<pid>.tmp` beside it.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Writes `path` atomically: `write` fills a new temporary file beside it
/// ([`temp_path`], created exclusively, so no link planted there is followed),
/// which is then renamed over `path`. Refuses (before writing anything) to
/// replace a non-regular file or a symbolic link ([`check_replaceable`]). On
/// any failure the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    check_replaceable(path)?;
    let tmp = temp_path(path);
    let create = || OpenOptions::new().write(true).create_new(true).open(&tmp);
    let file = match create() {
        // Left by an earlier process with this pid (this one has not made it).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_file()) {
                std::fs::remove_file(&tmp)?;
            }
            create()?
        }
        other => other?,
    };
    let mut w = io::BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut w).and_then(|()| w.flush());
    drop(w);
    let renamed = written.and_then(|()| {
        // Checked again just before the rename: a FIFO or link put there while
        // we wrote is not replaced either.
        check_replaceable(path)?;
        std::fs::rename(&tmp, path)
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// Whether process `pid` exists (on Unix; elsewhere every process counts as
/// alive, so nothing is removed).
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: signal 0 only checks whether the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// The writer's pid of a temporary file name `<name><suffix>.<pid>.tmp`.
fn temp_pid(name: &str, suffix: &str) -> Option<u32> {
    let rest = name.strip_suffix(".tmp")?;
    let (stem, pid) = rest.rsplit_once('.')?;
    if !stem.ends_with(suffix) || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the regular files `*<suffix>.<pid>.tmp` in `dir` whose writer `pid`
/// is no longer alive (e.g. `suffix = ".ptaps"` for the schedule cache), and
/// returns how many. Errors reading the directory or removing a file are
/// ignored: cleaning is best effort.
pub fn clean_stale_temps(dir: &Path, suffix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| temp_pid(n, suffix)) else {
            continue;
        };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && pid != std::process::id() && !pid_alive(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ptap-fsio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn temp_names_parse() {
        assert_eq!(temp_pid("a.ptaps.123.tmp", ".ptaps"), Some(123));
        assert_eq!(temp_pid("a.ptaps.tmp", ".ptaps"), None);
        assert_eq!(temp_pid("a.json.123.tmp", ".ptaps"), None);
        assert_eq!(temp_pid("a.ptaps.12x.tmp", ".ptaps"), None);
        assert_eq!(temp_pid("a.ptaps.123", ".ptaps"), None);
    }

    #[test]
    fn atomic_writes_replace_regular_files_only() {
        let d = dir("atomic");
        let f = d.join("out.json");
        write_atomic(&f, |w| w.write_all(b"one")).unwrap();
        write_atomic(&f, |w| w.write_all(b"two")).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // A failing writer leaves the old file and no temporary.
        let e = write_atomic(&f, |_| Err(io::Error::other("boom"))).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        assert!(!temp_path(&f).exists());
        // A directory and a symbolic link are not replaced, nor is the link's target.
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = write_atomic(&sub, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        #[cfg(unix)]
        {
            let link = d.join("link");
            std::os::unix::fs::symlink(&f, &link).unwrap();
            let e = write_atomic(&link, |w| w.write_all(b"x")).unwrap_err();
            assert!(e.to_string().contains("a symbolic link"), "{e}");
            assert_eq!(std::fs::read(&f).unwrap(), b"two");
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let d = dir("fifo");
        let fifo = d.join("f.ptaps");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("a FIFO, not a regular file"), "{e}");
        let e = write_atomic(&fifo, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let e = open_regular(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let e = write_atomic(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stale_temps_of_dead_writers_are_removed() {
        let d = dir("stale");
        // pid 0x7fff_fff0 is beyond any pid_max, so not alive.
        let dead = d.join(format!("x.ptaps.{}.tmp", 0x7fff_fff0u32));
        let mine = d.join(format!("y.ptaps.{}.tmp", std::process::id()));
        let other = d.join("z.json.1.tmp");
        for f in [&dead, &mine, &other] {
            std::fs::write(f, b"partial").unwrap();
        }
        assert_eq!(clean_stale_temps(&d, ".ptaps"), 1);
        assert!(!dead.exists() && mine.exists() && other.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
