//! The per-user key that tags schedule files.
//!
//! A schedule file's checksum proves it is intact, not that this user's ptap
//! wrote it: anyone can edit an index and recompute a plain blake3 sum. The
//! loader checks every index against the invariants the executors rely on,
//! but some edits stay in range and consistent with themselves (a different,
//! still sorted column in the pattern of `W` or `A_c`), and showing that those
//! patterns are the products of `A` and `P` would cost a symbolic product. So
//! every file ptap writes carries a tag, blake3 keyed with a secret only this
//! user can read, over the file's checksum; the loader refuses a file whose
//! tag does not verify.
//!
//! The key is 32 random bytes in `$PTAP_KEY_FILE` if set, else
//! `$XDG_CONFIG_HOME/ptap/schedule.key`, else `~/.config/ptap/schedule.key`,
//! created on first use with mode 0600 in a directory created with mode 0700.
//! It lives outside any schedule cache, so a cache directory shared with, or
//! writable by, others never holds it.
use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Length of the key in bytes.
pub const KEY_LEN: usize = 32;

/// Why the key could not be had. Each message is one sentence naming the key
/// file and what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KeyError {
    #[error("cannot find a place for the schedule key: set PTAP_KEY_FILE, XDG_CONFIG_HOME or HOME")]
    NoHome,
    #[error("cannot {action} the schedule key {}: {err}; check the path and its permissions, or set PTAP_KEY_FILE", .path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        err: io::Error,
    },
    #[error("the schedule key {} is {len} bytes, not {KEY_LEN}; delete it (ptap makes a new one, and rebuilds the schedules it tagged)", .path.display())]
    BadLength { path: PathBuf, len: u64 },
    #[error("the schedule key {} can be read by other users (mode {mode:o}); run `chmod 600` on it, or delete it to make a new one", .path.display())]
    TooOpen { path: PathBuf, mode: u32 },
}

/// A secret key for schedule-file tags.
#[derive(Clone, PartialEq, Eq)]
pub struct TagKey([u8; KEY_LEN]);

impl std::fmt::Debug for TagKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TagKey(..)")
    }
}

impl TagKey {
    /// A key from its bytes (tests, fuzzing).
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// The tag of a file whose checksum is `checksum`.
    pub fn tag(&self, checksum: &[u8; 32]) -> [u8; 32] {
        *blake3::keyed_hash(&self.0, checksum).as_bytes()
    }

    /// This user's key ([`key_path`]), created on first use.
    pub fn user() -> Result<Self, KeyError> {
        Self::load_or_create(&key_path()?)
    }

    /// The key in `path`, created (mode 0600, its directory 0700) when absent.
    pub fn load_or_create(path: &Path) -> Result<Self, KeyError> {
        match Self::load(path) {
            Err(KeyError::Io { err, .. }) if err.kind() == io::ErrorKind::NotFound => Self::create(path),
            other => other,
        }
    }

    fn load(path: &Path) -> Result<Self, KeyError> {
        let io_err = |action: &'static str| {
            let path = path.to_path_buf();
            move |err| KeyError::Io { path, action, err }
        };
        let mut f = ptap_io::fsio::open_regular(path).map_err(io_err("read"))?;
        let meta = f.metadata().map_err(io_err("read"))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(KeyError::TooOpen {
                    path: path.to_path_buf(),
                    mode,
                });
            }
        }
        if meta.len() != KEY_LEN as u64 {
            return Err(KeyError::BadLength {
                path: path.to_path_buf(),
                len: meta.len(),
            });
        }
        let mut key = [0u8; KEY_LEN];
        f.read_exact(&mut key).map_err(io_err("read"))?;
        Ok(Self(key))
    }

    /// Writes a new random key to a private temporary file and links it into
    /// place; when another process got there first, its key is used.
    fn create(path: &Path) -> Result<Self, KeyError> {
        let io_err = |action: &'static str| {
            let path = path.to_path_buf();
            move |err| KeyError::Io { path, action, err }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut b = DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            b.create(dir).map_err(io_err("create the directory of"))?;
        }
        let mut key = [0u8; KEY_LEN];
        random_bytes(&mut key).map_err(io_err("draw random bytes for"))?;
        // A name no other thread or process uses (threads of one process race here too).
        static ATTEMPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = ATTEMPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(format!(".{}.{n}.tmp", std::process::id()));
        let tmp = path.with_file_name(name);
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let written = opts
            .open(&tmp)
            .and_then(|mut f| f.write_all(&key).and_then(|()| f.sync_all()));
        let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(Self(key)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Self::load(path),
            Err(e) => Err(io_err("create")(e)),
        }
    }
}

/// Where this user's key lives: `$PTAP_KEY_FILE`, else
/// `$XDG_CONFIG_HOME/ptap/schedule.key`, else `$HOME/.config/ptap/schedule.key`.
pub fn key_path() -> Result<PathBuf, KeyError> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var("PTAP_KEY_FILE") {
        return Ok(p);
    }
    let config = var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .ok_or(KeyError::NoHome)?;
    Ok(config.join("ptap").join("schedule.key"))
}

fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open("/dev/urandom")?.read_exact(buf)
    }
    #[cfg(not(unix))]
    {
        // No OS source wired up here: a key from the clock and the process is
        // unique but guessable; set PTAP_KEY_FILE to a key made elsewhere.
        let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
        buf.copy_from_slice(&blake3::hash(seed.as_bytes()).as_bytes()[..buf.len()]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_created_private_once_and_then_reused() {
        let d = std::env::temp_dir().join(format!("ptap-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let path = d.join("cfg").join("schedule.key");
        let k1 = TagKey::load_or_create(&path).unwrap();
        let k2 = TagKey::load_or_create(&path).unwrap();
        assert_eq!(k1, k2);
        assert_ne!(k1, TagKey::from_bytes([0; KEY_LEN]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = TagKey::load_or_create(&path).unwrap_err();
            assert!(e.to_string().contains("can be read by other users (mode 644)"), "{e}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::write(&path, b"short").unwrap();
        let e = TagKey::load_or_create(&path).unwrap_err();
        assert!(e.to_string().contains("is 5 bytes, not 32"), "{e}");
        // Tags depend on the key and the checksum.
        let (a, b) = (TagKey::from_bytes([1; KEY_LEN]), TagKey::from_bytes([2; KEY_LEN]));
        assert_ne!(a.tag(&[0; 32]), b.tag(&[0; 32]));
        assert_ne!(a.tag(&[0; 32]), a.tag(&[1; 32]));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
