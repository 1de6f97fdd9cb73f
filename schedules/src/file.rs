//! The schedule file: one versioned, checksummed, memory-mapped file holding the
//! schedules of a whole hierarchy (one record per level product `P^T A P`).
//!
//! This module is a generic container. A record carries the facts every variant
//! shares (level, variant name, block shapes, fingerprints of the `A` and `P`
//! patterns, named sizes) and a list of named `u32` / `u64` / `f64` arrays; each variant's
//! own code converts its schedule to and from those arrays.
//!
//! # Layout (format version 5)
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | [`MAGIC`] `b"PTAPSCHD"` |
//! | 8 | 4 | format version, u32 LE ([`FORMAT_VERSION`]) |
//! | 12 | 4 | flags, u32 LE (0; no flag is defined yet) |
//! | 16 | 8 | payload length in bytes, u64 LE (= file length - 128) |
//! | 24 | 32 | checksum: blake3 of the header (with the checksum and the tag zeroed) followed by the payload |
//! | 56 | 8 | metadata length in bytes, u64 LE |
//! | 64 | 32 | tag: blake3 keyed with this user's key ([`crate::key`]) over the checksum |
//! | 96 | 32 | reserved, zero |
//! | 128 | meta | the metadata: an rkyv archive of the records (everything but the arrays) |
//! | `align64(128 + meta)` | ... | the data section: each array's elements, little-endian, 64-byte aligned |
//!
//! Version 3 added the tag (and grew the header from 64 to 128 bytes); version
//! 4 the tensor-pair variant's units and merged entries (`{ap,rw}.pair.*`);
//! version 5 stores the units only (the entries follow from them and the slot
//! runs, and are rebuilt at load); version 6 adds the symmetric tensor pair
//! (`wh.*`, `c.transpose`, flagged `ap.x`). Files of version 5 and older are refused
//! with [`ScheduleFileError::Version`], which says to re-run `ptap inspect` (a
//! schedule-cache entry is rebuilt).
//!
//! The arrays live outside the rkyv archive, in a raw data section that the
//! metadata points into with `u64` offsets. rkyv 0.8's default format (which
//! this workspace uses) has 32-bit relative pointers, so one archive cannot
//! exceed 2 GiB (`rkyv::to_bytes` of a 2.4 GB `Vec<u32>` fails: "out of range
//! integral type conversion"), while the schedules of the largest problems reach
//! a few GB. A raw data section has no such limit, lets [`write_bundle`] stream
//! the arrays straight from the caller's vectors without first copying them into
//! an in-memory archive, and needs no per-element validation (every bit pattern
//! is a valid `u32` / `u64`; only bounds and alignment are checked, once per
//! array).
//!
//! # Loading cost
//!
//! [`MappedBundle::open`] maps the file and does, besides O(number of arrays)
//! bookkeeping, two passes: the blake3 checksum over the whole file
//! (`Hasher::update_rayon`, several GB/s) and rkyv's validation of the
//! metadata, which is a few kilobytes whatever the problem size. There is no
//! decode pass and no array is copied: [`RecordView::array_u32`] and
//! [`RecordView::array_u64`] return slices of the mapping. Measured (file in the
//! page cache, 16 cores): an 800 MB bundle writes in 0.24 s and opens in 12 ms
//! (checksum 55-68 GB/s, validation 4 us); a 3.2 GB bundle opens in 45 ms.
//!
//! For reference, rkyv's validation of an archived `Vec<u32>` is a loop over
//! the elements whose per-element check is empty (`bytecheck`'s impl for
//! `[T]`), so it is O(n) as written; with optimizations on, the compiler removes
//! the empty loop and it measures as O(1) (see the `#[ignore]`d measurement test
//! in `tests/file_format.rs`). The data-section layout does not depend on that.
//!
//! # Robustness
//!
//! Loading never panics: a missing file, a path that is not a regular file (a
//! FIFO is refused before it is opened), a file shorter than its header says, a
//! wrong magic, a wrong format version, any flipped byte (the checksum covers
//! every byte of the file but the checksum and the tag, whose corruption also
//! mismatches), a tag that does not verify with this user's key (a file edited
//! and resealed, or written by someone else) and a structurally invalid file
//! each return a [`ScheduleFileError`] whose message names the file and what to
//! do. A schedule built for other matrices is refused by [`check_pattern`],
//! which says what differs. Files are replaced atomically ([`write_bundle`]
//! writes a temporary file and renames it, and never replaces a FIFO, device,
//! directory or symbolic link), so a reader's mapping is never changed under it
//! by ptap itself.
//!
//! # Endianness
//!
//! The file is little-endian. On a big-endian machine the metadata loads (rkyv
//! converts) but [`RecordView::array_u32`] / [`RecordView::array_u64`] return
//! [`ScheduleFileError::ForeignEndian`]: a zero-copy view is impossible there,
//! and re-inspecting is the supported path.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::key::{KeyError, TagKey};
use ptap_io::fsio;

use ptap_sparse::BlockPattern;
use rkyv::rancor;
use rkyv::util::AlignedVec;
use rkyv::{Archive, Deserialize, Serialize};
use thiserror::Error;

/// The first eight bytes of every schedule file.
pub const MAGIC: [u8; 8] = *b"PTAPSCHD";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 6;
/// Length of the fixed header; the metadata starts here.
pub const HEADER_LEN: usize = 128;
/// Alignment of the data section and of every array in it, relative to the
/// file start (and so in memory: mappings are page-aligned).
pub const ARRAY_ALIGN: usize = 64;

const OFF_VERSION: usize = 8;
const OFF_FLAGS: usize = 12;
const OFF_PAYLOAD_LEN: usize = 16;
const OFF_HASH: usize = 24;
const OFF_META_LEN: usize = 56;
const OFF_TAG: usize = 64;
/// Flags this build understands (none yet).
const KNOWN_FLAGS: u32 = 0;
/// Inputs at least this long are hashed with rayon.
const RAYON_HASH_MIN: usize = 1 << 20;

// The metadata starts at offset 64 of a page-aligned mapping (or of a 64-aligned
// buffer); rkyv's archived types here need at most 8-byte alignment.
const _: () = assert!(HEADER_LEN % 16 == 0 && ARRAY_ALIGN % 16 == 0);
const _: () = assert!(std::mem::align_of::<ArchivedBundleMeta>() <= 16);
const _: () = assert!(std::mem::align_of::<u64>() <= ARRAY_ALIGN);

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Everything that can go wrong writing, loading or using a schedule file. Each
/// message is one sentence naming the file and what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScheduleFileError {
    /// The operating system refused to open, map, create, write or rename a file.
    /// (The cause is in the message, not in `source()`, so that `{:#}` chains do
    /// not print it twice.)
    #[error("cannot {action} schedule file {}: {err}; check the path and its permissions", .path.display())]
    Io {
        path: PathBuf,
        /// "read", "map", "create", "write" or "rename".
        action: &'static str,
        err: io::Error,
    },
    #[error("{} is not a ptap schedule file (it does not start with PTAPSCHD); pass a file written by `ptap inspect`", .path.display())]
    NotASchedule { path: PathBuf },
    #[error("schedule file {} has format version {found} but this build reads version {supported}; re-run `ptap inspect` to rebuild it", .path.display())]
    Version { path: PathBuf, found: u32, supported: u32 },
    #[error("schedule file {} is truncated: it has {actual} bytes where its header requires {expected}; delete it and re-run `ptap inspect`", .path.display())]
    Truncated { path: PathBuf, expected: u64, actual: u64 },
    #[error("schedule file {} is corrupt (checksum mismatch); delete it and re-run `ptap inspect`", .path.display())]
    Corrupt { path: PathBuf },
    #[error("schedule file {} was not written by this user's ptap (its integrity tag does not verify with this user's key): it was edited, or written by another user or machine; re-run `ptap inspect` to rebuild it", .path.display())]
    Untrusted { path: PathBuf },
    /// The key that tags schedule files could not be read or made.
    #[error("{err}")]
    Key { path: PathBuf, err: KeyError },
    #[error("schedule file {} is malformed ({why}); delete it and re-run `ptap inspect`", .path.display())]
    Invalid { path: PathBuf, why: String },
    #[error("the schedule in {}, level {level}, was built for a different {which} pattern: {detail}; re-run `ptap inspect` for these matrices", .path.display())]
    PatternMismatch {
        path: PathBuf,
        level: u32,
        which: &'static str,
        detail: String,
    },
    #[error("schedule file {} has no record for level {level}; re-run `ptap inspect` for this hierarchy", .path.display())]
    MissingRecord { path: PathBuf, level: u32 },
    #[error("the schedule in {}, level {level}, has no array named `{name}`; it was written for another variant or by another version, re-run `ptap inspect`", .path.display())]
    MissingArray { path: PathBuf, level: u32, name: String },
    #[error("the schedule in {}, level {level}, stores array `{name}` as {found}, not {expected}; it was written by another version, re-run `ptap inspect`", .path.display())]
    WrongArrayType {
        path: PathBuf,
        level: u32,
        name: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("schedule file {} stores little-endian arrays and this machine is big-endian, so they cannot be used in place; re-run the inspector instead of loading", .path.display())]
    ForeignEndian { path: PathBuf },
    #[error("cannot encode the schedule for {}: {why}", .path.display())]
    Encode { path: PathBuf, why: String },
}

impl ScheduleFileError {
    /// The schedule file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ScheduleFileError::Io { path, .. }
            | ScheduleFileError::NotASchedule { path }
            | ScheduleFileError::Version { path, .. }
            | ScheduleFileError::Truncated { path, .. }
            | ScheduleFileError::Corrupt { path }
            | ScheduleFileError::Untrusted { path }
            | ScheduleFileError::Key { path, .. }
            | ScheduleFileError::Invalid { path, .. }
            | ScheduleFileError::PatternMismatch { path, .. }
            | ScheduleFileError::MissingRecord { path, .. }
            | ScheduleFileError::MissingArray { path, .. }
            | ScheduleFileError::WrongArrayType { path, .. }
            | ScheduleFileError::ForeignEndian { path }
            | ScheduleFileError::Encode { path, .. } => path,
        }
    }
}

type Result<T, E = ScheduleFileError> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------
// Pattern fingerprints
// ---------------------------------------------------------------------------

/// The identity of a block sparsity pattern.
///
/// `hash` is blake3 over (`nrows` u64 LE, `ncols` u64 LE, `nnzb` u64 LE,
/// `row_ptr` as u64 LE, `col_idx` as u32 LE); `row_ptr_hash` is blake3 over
/// `row_ptr` as u64 LE alone, so a mismatch can say whether the row lengths or
/// only the column indices differ.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PatternFingerprint {
    pub nrows: u64,
    pub ncols: u64,
    pub nnzb: u64,
    pub hash: [u8; 32],
    pub row_ptr_hash: [u8; 32],
}

/// Fingerprints a pattern: hashes its arrays in large chunks (in parallel above
/// 1 MiB), a few milliseconds for tens of millions of blocks.
pub fn fingerprint(p: &BlockPattern) -> PatternFingerprint {
    let mut h = blake3::Hasher::new();
    let mut rh = blake3::Hasher::new();
    h.update(&(p.nrows() as u64).to_le_bytes());
    h.update(&(p.ncols() as u64).to_le_bytes());
    h.update(&(p.nnzb() as u64).to_le_bytes());
    for_le_bytes_usize(p.row_ptr(), |b| {
        hash_bytes(&mut h, b);
        hash_bytes(&mut rh, b);
    });
    for_le_bytes_u32(p.col_idx(), |b| hash_bytes(&mut h, b));
    PatternFingerprint {
        nrows: p.nrows() as u64,
        ncols: p.ncols() as u64,
        nnzb: p.nnzb() as u64,
        hash: *h.finalize().as_bytes(),
        row_ptr_hash: *rh.finalize().as_bytes(),
    }
}

impl PatternFingerprint {
    /// `None` when equal, else a phrase saying what differs (`self` is what the
    /// schedule was built for, `other` the matrix at hand).
    pub fn difference(&self, other: &PatternFingerprint) -> Option<String> {
        if self == other {
            return None;
        }
        if (self.nrows, self.ncols, self.nnzb) != (other.nrows, other.ncols, other.nnzb) {
            return Some(format!(
                "the schedule was built for {}x{} blocks with {} stored; the matrix has {}x{} with {}",
                self.nrows, self.ncols, self.nnzb, other.nrows, other.ncols, other.nnzb
            ));
        }
        let sizes = format!("{}x{} blocks, {} stored", self.nrows, self.ncols, self.nnzb);
        Some(if self.row_ptr_hash != other.row_ptr_hash {
            format!("same sizes ({sizes}) but different row lengths")
        } else {
            format!("same sizes ({sizes}) and row lengths but different column indices")
        })
    }
}

fn hash_bytes(h: &mut blake3::Hasher, b: &[u8]) {
    if b.len() >= RAYON_HASH_MIN {
        h.update_rayon(b);
    } else {
        h.update(b);
    }
}

/// The little-endian bytes of `v` (`le` converts one element to its `N` bytes),
/// handed to `f` in one piece where the memory already is that (little-endian
/// target, `size_of::<T>() == N`), else in converted chunks.
fn for_le_bytes<T: Copy, const N: usize>(v: &[T], le: impl Fn(T) -> [u8; N], mut f: impl FnMut(&[u8])) {
    if cfg!(target_endian = "little") && std::mem::size_of::<T>() == N {
        // SAFETY: the callers' `T` are plain integers or floats (every byte
        // initialized, no padding); `[u8]` has alignment 1; same extent.
        f(unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) });
    } else {
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in v.chunks((1 << 16) / N) {
            buf.clear();
            buf.extend(chunk.iter().flat_map(|&x| le(x)));
            f(&buf);
        }
    }
}

fn for_le_bytes_u32(v: &[u32], f: impl FnMut(&[u8])) {
    for_le_bytes(v, u32::to_le_bytes, f)
}

fn for_le_bytes_u64(v: &[u64], f: impl FnMut(&[u8])) {
    for_le_bytes(v, u64::to_le_bytes, f)
}

/// Bit patterns preserved, NaNs included.
fn for_le_bytes_f64(v: &[f64], f: impl FnMut(&[u8])) {
    for_le_bytes(v, |x: f64| x.to_bits().to_le_bytes(), f)
}

/// `usize` values as u64 LE bytes.
fn for_le_bytes_usize(v: &[usize], f: impl FnMut(&[u8])) {
    for_le_bytes(v, |x: usize| (x as u64).to_le_bytes(), f)
}

// ---------------------------------------------------------------------------
// The in-memory bundle (what the inspector writes)
// ---------------------------------------------------------------------------

/// The element type of a stored array.
#[derive(Archive, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    U32,
    U64,
    /// IEEE 754 binary64 (format version 2; e.g. a cached prolongator's values).
    F64,
}

impl ArrayKind {
    pub fn name(self) -> &'static str {
        match self {
            ArrayKind::U32 => "u32",
            ArrayKind::U64 => "u64",
            ArrayKind::F64 => "f64",
        }
    }
    pub fn elem_bytes(self) -> u64 {
        match self {
            ArrayKind::U32 => 4,
            ArrayKind::U64 | ArrayKind::F64 => 8,
        }
    }
}

/// The elements of a stored array.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayData {
    U32(Vec<u32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
}

impl ArrayData {
    pub fn kind(&self) -> ArrayKind {
        match self {
            ArrayData::U32(_) => ArrayKind::U32,
            ArrayData::U64(_) => ArrayKind::U64,
            ArrayData::F64(_) => ArrayKind::F64,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            ArrayData::U32(v) => v.len(),
            ArrayData::U64(v) => v.len(),
            ArrayData::F64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn byte_len(&self) -> u64 {
        self.len() as u64 * self.kind().elem_bytes()
    }
    fn for_le_bytes(&self, f: impl FnMut(&[u8])) {
        match self {
            ArrayData::U32(v) => for_le_bytes_u32(v, f),
            ArrayData::U64(v) => for_le_bytes_u64(v, f),
            ArrayData::F64(v) => for_le_bytes_f64(v, f),
        }
    }
}

/// A named array of a record (names are unique within a record).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedArray {
    pub name: String,
    pub data: ArrayData,
}

impl NamedArray {
    pub fn u32(name: impl Into<String>, v: Vec<u32>) -> Self {
        NamedArray {
            name: name.into(),
            data: ArrayData::U32(v),
        }
    }
    pub fn u64(name: impl Into<String>, v: Vec<u64>) -> Self {
        NamedArray {
            name: name.into(),
            data: ArrayData::U64(v),
        }
    }
    pub fn f64(name: impl Into<String>, v: Vec<f64>) -> Self {
        NamedArray {
            name: name.into(),
            data: ArrayData::F64(v),
        }
    }
}

/// One Galerkin product (one level) of a hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRecord {
    pub level: u32,
    /// The variant's file name (`Variant::name`, e.g. "two-pass"); the caller parses it.
    pub variant: String,
    /// `b_f`: `A` is `b_f x b_f`, `P` is `b_f x b_c`.
    pub fine_block: u32,
    /// `b_c`.
    pub coarse_block: u32,
    pub a: PatternFingerprint,
    pub p: PatternFingerprint,
    /// Named sizes, for humans and checks (`m_F`, `Z_A`, ...).
    pub sizes: Vec<(String, u64)>,
    pub arrays: Vec<NamedArray>,
}

/// The schedules of a whole hierarchy, one record per level product.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScheduleBundle {
    /// Free text, e.g. "ptap 0.1.0".
    pub created_by: String,
    /// Free text describing the problem, e.g. "beam k=16".
    pub problem: String,
    pub records: Vec<ScheduleRecord>,
}

// ---------------------------------------------------------------------------
// The on-disk metadata (rkyv)
// ---------------------------------------------------------------------------

#[derive(Archive, Serialize, Deserialize)]
struct BundleMeta {
    created_by: String,
    problem: String,
    records: Vec<RecordMeta>,
}

#[derive(Archive, Serialize, Deserialize)]
struct RecordMeta {
    level: u32,
    variant: String,
    fine_block: u32,
    coarse_block: u32,
    a: PatternFingerprint,
    p: PatternFingerprint,
    sizes: Vec<SizeMeta>,
    arrays: Vec<ArrayMeta>,
}

#[derive(Archive, Serialize, Deserialize)]
struct SizeMeta {
    name: String,
    value: u64,
}

#[derive(Archive, Serialize, Deserialize)]
struct ArrayMeta {
    name: String,
    kind: ArrayKind,
    /// Byte offset from the start of the data section; a multiple of `ARRAY_ALIGN`.
    offset: u64,
    /// Number of elements.
    len: u64,
}

fn align_up(x: u64, a: u64) -> Option<u64> {
    x.checked_add(a - 1).map(|y| y / a * a)
}

fn invalid(path: &Path, why: String) -> ScheduleFileError {
    ScheduleFileError::Invalid {
        path: path.to_path_buf(),
        why,
    }
}

fn fp_from_archived(a: &ArchivedPatternFingerprint) -> PatternFingerprint {
    PatternFingerprint {
        nrows: a.nrows.to_native(),
        ncols: a.ncols.to_native(),
        nnzb: a.nnzb.to_native(),
        hash: a.hash,
        row_ptr_hash: a.row_ptr_hash,
    }
}

fn kind_from_archived(k: &ArchivedArrayKind) -> ArrayKind {
    match k {
        ArchivedArrayKind::U32 => ArrayKind::U32,
        ArchivedArrayKind::U64 => ArrayKind::U64,
        ArchivedArrayKind::F64 => ArrayKind::F64,
    }
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// This user's tag key ([`TagKey::user`]), its error naming the schedule file `path`.
pub fn user_key(path: &Path) -> Result<TagKey> {
    TagKey::user().map_err(|err| ScheduleFileError::Key {
        path: path.to_path_buf(),
        err,
    })
}

/// Writes `bundle` to `path`, tagged with this user's key ([`crate::key`]),
/// replacing any regular file there atomically ([`fsio::write_atomic`]: a
/// temporary file next to it is written, then renamed; no fsync; a FIFO,
/// device, directory or symbolic link at `path` is refused). Returns the file's
/// length in bytes. The arrays are streamed from `bundle`, not copied.
pub fn write_bundle(path: &Path, bundle: &ScheduleBundle) -> Result<u64> {
    write_bundle_with_key(path, bundle, &user_key(path)?)
}

/// [`write_bundle`] with the tag made by `key`.
pub fn write_bundle_with_key(path: &Path, bundle: &ScheduleBundle, key: &TagKey) -> Result<u64> {
    let encode = |why: String| ScheduleFileError::Encode {
        path: path.to_path_buf(),
        why,
    };

    // Layout of the data section.
    let mut cursor = 0u64;
    let mut records = Vec::with_capacity(bundle.records.len());
    for r in &bundle.records {
        let mut arrays = Vec::with_capacity(r.arrays.len());
        for (i, a) in r.arrays.iter().enumerate() {
            if r.arrays[..i].iter().any(|b| b.name == a.name) {
                return Err(encode(format!("level {} has two arrays named `{}`", r.level, a.name)));
            }
            let offset = align_up(cursor, ARRAY_ALIGN as u64).ok_or_else(|| encode("too large".into()))?;
            cursor = offset
                .checked_add(a.data.byte_len())
                .ok_or_else(|| encode("too large".into()))?;
            arrays.push(ArrayMeta {
                name: a.name.clone(),
                kind: a.data.kind(),
                offset,
                len: a.data.len() as u64,
            });
        }
        records.push(RecordMeta {
            level: r.level,
            variant: r.variant.clone(),
            fine_block: r.fine_block,
            coarse_block: r.coarse_block,
            a: r.a.clone(),
            p: r.p.clone(),
            sizes: r
                .sizes
                .iter()
                .map(|(name, value)| SizeMeta {
                    name: name.clone(),
                    value: *value,
                })
                .collect(),
            arrays,
        });
    }
    let data_len = cursor;
    let meta = BundleMeta {
        created_by: bundle.created_by.clone(),
        problem: bundle.problem.clone(),
        records,
    };
    let meta_bytes = rkyv::to_bytes::<rancor::Error>(&meta).map_err(|e| encode(e.to_string()))?;
    let meta_len = meta_bytes.len() as u64;
    let data_start = align_up(HEADER_LEN as u64 + meta_len, ARRAY_ALIGN as u64).expect("metadata is small");
    let meta_pad = (data_start - HEADER_LEN as u64 - meta_len) as usize;
    let payload_len = (data_start - HEADER_LEN as u64)
        .checked_add(data_len)
        .ok_or_else(|| encode("too large".into()))?;

    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&MAGIC);
    header[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[OFF_FLAGS..OFF_FLAGS + 4].copy_from_slice(&KNOWN_FLAGS.to_le_bytes());
    header[OFF_PAYLOAD_LEN..OFF_PAYLOAD_LEN + 8].copy_from_slice(&payload_len.to_le_bytes());
    header[OFF_META_LEN..OFF_META_LEN + 8].copy_from_slice(&meta_len.to_le_bytes());

    // The same byte stream is fed to the hasher, then to the file.
    let zeros = [0u8; ARRAY_ALIGN];
    let emit_payload = |sink: &mut dyn FnMut(&[u8]) -> io::Result<()>| -> io::Result<()> {
        sink(&meta_bytes)?;
        sink(&zeros[..meta_pad])?;
        let mut pos = 0u64;
        for r in &bundle.records {
            for a in &r.arrays {
                let start = align_up(pos, ARRAY_ALIGN as u64).expect("checked above");
                sink(&zeros[..(start - pos) as usize])?;
                let mut res = Ok(());
                a.data.for_le_bytes(|b| {
                    if res.is_ok() {
                        res = sink(b);
                    }
                });
                res?;
                pos = start + a.data.byte_len();
            }
        }
        Ok(())
    };

    let mut hasher = blake3::Hasher::new();
    hasher.update(&header);
    emit_payload(&mut |b| {
        hash_bytes(&mut hasher, b);
        Ok(())
    })
    .expect("hashing does not fail");
    let checksum: [u8; 32] = *hasher.finalize().as_bytes();
    header[OFF_HASH..OFF_HASH + 32].copy_from_slice(&checksum);
    header[OFF_TAG..OFF_TAG + 32].copy_from_slice(&key.tag(&checksum));

    fsio::write_atomic(path, |w| {
        w.write_all(&header)?;
        emit_payload(&mut |b| w.write_all(b))
    })
    .map_err(|err| ScheduleFileError::Io {
        path: path.to_path_buf(),
        action: "write",
        err,
    })?;
    Ok(HEADER_LEN as u64 + payload_len)
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

enum Backing {
    Map(memmap2::Mmap),
    Heap(AlignedVec<ARRAY_ALIGN>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map(m) => &m[..],
            Backing::Heap(v) => v.as_slice(),
        }
    }
}

/// Wall-clock seconds spent in the phases of [`MappedBundle::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct LoadTimings {
    /// Opening and mapping the file.
    pub map_s: f64,
    /// The blake3 checksum over the whole file.
    pub checksum_s: f64,
    /// rkyv's validation of the metadata and the array bounds checks.
    pub validate_s: f64,
}

/// A validated schedule file, memory-mapped (or, from [`MappedBundle::from_bytes`],
/// in an aligned heap buffer). Arrays are borrowed from the mapping.
///
/// The mapping assumes nothing rewrites the file in place while it is open;
/// [`write_bundle`] never does (it replaces files by rename, so an open mapping
/// keeps the old file). As with any memory map, another program truncating the
/// file under an open bundle makes later array reads fault (SIGBUS).
pub struct MappedBundle {
    backing: Backing,
    path: PathBuf,
    meta_len: usize,
    data_start: usize,
    timings: LoadTimings,
}

impl std::fmt::Debug for MappedBundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedBundle")
            .field("path", &self.path)
            .field("bytes", &self.file_len())
            .field("records", &self.len())
            .finish()
    }
}

impl MappedBundle {
    /// Maps and validates a schedule file. Checks, in order: the file is a
    /// readable regular file; it holds a whole header; the magic; the format
    /// version; the payload length; the checksum; the tag, with this user's key
    /// ([`crate::key`]); the metadata (rkyv) and every array's bounds and
    /// alignment.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_key(path, &user_key(path)?)
    }

    /// [`MappedBundle::open`] with the tag checked against `key`.
    pub fn open_with_key(path: &Path, key: &TagKey) -> Result<Self> {
        let t0 = Instant::now();
        let read_err = |action: &'static str| {
            let p = path.to_path_buf();
            move |err| ScheduleFileError::Io { path: p, action, err }
        };
        let mut file = fsio::open_regular(path).map_err(read_err("read"))?;
        let len = file.metadata().map_err(read_err("read"))?.len();
        let backing = if len < HEADER_LEN as u64 {
            // Too short to be valid: read it for the diagnosis; do not map.
            let mut buf = Vec::with_capacity(HEADER_LEN);
            Read::take(&mut file, HEADER_LEN as u64)
                .read_to_end(&mut buf)
                .map_err(read_err("read"))?;
            let mut v = AlignedVec::<ARRAY_ALIGN>::with_capacity(buf.len());
            v.extend_from_slice(&buf);
            Backing::Heap(v)
        } else {
            // SAFETY: the mapping is read-only; ptap replaces schedule files by
            // rename and never rewrites one in place (see the type's docs).
            Backing::Map(unsafe { memmap2::Mmap::map(&file) }.map_err(read_err("map"))?)
        };
        let map_s = t0.elapsed().as_secs_f64();
        Self::validate(backing, path.to_path_buf(), map_s, key)
    }

    /// Validates a schedule held in memory (copied into an aligned buffer), as
    /// [`MappedBundle::open_with_key`] does for a file; `name` is used in messages.
    pub fn from_bytes(bytes: &[u8], name: &Path, key: &TagKey) -> Result<Self> {
        let mut v = AlignedVec::<ARRAY_ALIGN>::with_capacity(bytes.len());
        v.extend_from_slice(bytes);
        Self::validate(Backing::Heap(v), name.to_path_buf(), 0.0, key)
    }

    fn validate(backing: Backing, path: PathBuf, map_s: f64, key: &TagKey) -> Result<Self> {
        let bytes = backing.bytes();
        let len = bytes.len() as u64;
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));

        if len < HEADER_LEN as u64 {
            let n = bytes.len().min(MAGIC.len());
            if bytes[..n] != MAGIC[..n] {
                return Err(ScheduleFileError::NotASchedule { path });
            }
            if bytes.len() >= OFF_VERSION + 4 && u32_at(OFF_VERSION) != FORMAT_VERSION {
                return Err(ScheduleFileError::Version {
                    path,
                    found: u32_at(OFF_VERSION),
                    supported: FORMAT_VERSION,
                });
            }
            let expected = if bytes.len() >= OFF_PAYLOAD_LEN + 8 {
                u64_at(OFF_PAYLOAD_LEN).saturating_add(HEADER_LEN as u64)
            } else {
                HEADER_LEN as u64
            };
            return Err(ScheduleFileError::Truncated {
                path,
                expected,
                actual: len,
            });
        }
        if bytes[..8] != MAGIC {
            return Err(ScheduleFileError::NotASchedule { path });
        }
        let version = u32_at(OFF_VERSION);
        if version != FORMAT_VERSION {
            return Err(ScheduleFileError::Version {
                path,
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let payload_len = u64_at(OFF_PAYLOAD_LEN);
        let expected = payload_len.saturating_add(HEADER_LEN as u64);
        if expected > len {
            return Err(ScheduleFileError::Truncated {
                path,
                expected,
                actual: len,
            });
        }
        if expected < len {
            return Err(invalid(
                &path,
                format!(
                    "it has {len} bytes but its header says {expected}: {} unexpected trailing bytes",
                    len - expected
                ),
            ));
        }

        let t1 = Instant::now();
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&bytes[..HEADER_LEN]);
        header[OFF_HASH..OFF_HASH + 32].fill(0);
        header[OFF_TAG..OFF_TAG + 32].fill(0);
        let mut hasher = blake3::Hasher::new();
        hasher.update(&header);
        hash_bytes(&mut hasher, &bytes[HEADER_LEN..]);
        let checksum: [u8; 32] = *hasher.finalize().as_bytes();
        if checksum[..] != bytes[OFF_HASH..OFF_HASH + 32] {
            return Err(ScheduleFileError::Corrupt { path });
        }
        // Constant-time comparison (blake3::Hash's `==`).
        let tag: [u8; 32] = bytes[OFF_TAG..OFF_TAG + 32].try_into().expect("32 bytes");
        if blake3::Hash::from(key.tag(&checksum)) != blake3::Hash::from(tag) {
            return Err(ScheduleFileError::Untrusted { path });
        }
        let checksum_s = t1.elapsed().as_secs_f64();

        // Past the checksum, a failure means a writer bug or a forged file.
        let t2 = Instant::now();
        let flags = u32_at(OFF_FLAGS);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(invalid(&path, format!("unknown flags {flags:#x}")));
        }
        let meta_len = u64_at(OFF_META_LEN);
        if meta_len > payload_len {
            return Err(invalid(
                &path,
                format!("metadata length {meta_len} exceeds payload length {payload_len}"),
            ));
        }
        // meta_len <= payload_len <= len, which is addressable.
        let meta_len = meta_len as usize;
        let data_start = align_up(HEADER_LEN as u64 + meta_len as u64, ARRAY_ALIGN as u64).unwrap_or(u64::MAX);
        if data_start > len {
            return Err(invalid(&path, "metadata runs into the end of the file".into()));
        }
        let data_start = data_start as usize;
        let data_len = len - data_start as u64;
        debug_assert_eq!(bytes.as_ptr() as usize % ARRAY_ALIGN, 0, "mappings are page-aligned");
        let meta = rkyv::access::<ArchivedBundleMeta, rancor::Error>(&bytes[HEADER_LEN..HEADER_LEN + meta_len])
            .map_err(|e| invalid(&path, format!("metadata fails validation: {e}")))?;
        for r in meta.records.iter() {
            let level = r.level.to_native();
            for (i, a) in r.arrays.iter().enumerate() {
                let kind = kind_from_archived(&a.kind);
                let (offset, n) = (a.offset.to_native(), a.len.to_native());
                let end = n.checked_mul(kind.elem_bytes()).and_then(|b| b.checked_add(offset));
                if offset % ARRAY_ALIGN as u64 != 0 || end.is_none_or(|e| e > data_len) {
                    return Err(invalid(&path, format!(
                        "level {level}, array `{}` ({n} x {}) at offset {offset} lies outside the {data_len}-byte data section or is misaligned",
                        a.name.as_str(),
                        kind.name()
                    )));
                }
                if r.arrays.iter().take(i).any(|b| b.name == a.name) {
                    return Err(invalid(
                        &path,
                        format!("level {level} has two arrays named `{}`", a.name.as_str()),
                    ));
                }
            }
        }
        let validate_s = t2.elapsed().as_secs_f64();

        Ok(MappedBundle {
            path,
            meta_len,
            data_start,
            timings: LoadTimings {
                map_s,
                checksum_s,
                validate_s,
            },
            backing,
        })
    }

    fn meta(&self) -> &ArchivedBundleMeta {
        let bytes = &self.backing.bytes()[HEADER_LEN..HEADER_LEN + self.meta_len];
        // SAFETY: these exact bytes passed `rkyv::access` in `validate`, and the
        // backing is immutable and owned by `self`.
        unsafe { rkyv::access_unchecked::<ArchivedBundleMeta>(bytes) }
    }

    fn data(&self) -> &[u8] {
        &self.backing.bytes()[self.data_start..]
    }

    /// The file this bundle was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `bytes` bytes at `ptr` lie inside this bundle's memory.
    pub fn contains(&self, ptr: *const u8, bytes: usize) -> bool {
        let mem = self.backing.bytes();
        let (lo, p) = (mem.as_ptr() as usize, ptr as usize);
        p >= lo && p.checked_add(bytes).is_some_and(|end| end <= lo + mem.len())
    }
    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.backing.bytes().len() as u64
    }
    /// Time spent in each phase of loading.
    pub fn timings(&self) -> LoadTimings {
        self.timings
    }
    pub fn created_by(&self) -> &str {
        self.meta().created_by.as_str()
    }
    pub fn problem(&self) -> &str {
        self.meta().problem.as_str()
    }
    /// Number of records.
    pub fn len(&self) -> usize {
        self.meta().records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The records, in file order.
    pub fn records(&self) -> impl ExactSizeIterator<Item = RecordView<'_>> + '_ {
        let data = self.data();
        let data_start = self.data_start as u64;
        self.meta().records.iter().map(move |meta| RecordView {
            meta,
            data,
            data_start,
            path: &self.path,
        })
    }
    /// The `i`-th record in file order.
    pub fn record(&self, i: usize) -> Option<RecordView<'_>> {
        self.records().nth(i)
    }
    /// The (first) record of `level`.
    pub fn level(&self, level: u32) -> Result<RecordView<'_>> {
        self.records()
            .find(|r| r.level() == level)
            .ok_or_else(|| ScheduleFileError::MissingRecord {
                path: self.path.clone(),
                level,
            })
    }
    /// Copies everything into an owned bundle (for tests and tools; executors
    /// use the views).
    pub fn to_bundle(&self) -> Result<ScheduleBundle> {
        Ok(ScheduleBundle {
            created_by: self.created_by().to_owned(),
            problem: self.problem().to_owned(),
            records: self.records().map(|r| r.to_record()).collect::<Result<_>>()?,
        })
    }
}

/// Validates a schedule file's bytes exactly as [`MappedBundle::open`] does
/// (tag checked with this user's key), without touching the disk.
pub fn validate_bytes(bytes: &[u8]) -> Result<MappedBundle> {
    let name = Path::new("<memory>");
    MappedBundle::from_bytes(bytes, name, &user_key(name)?)
}

/// [`validate_bytes`] with the tag checked against `key` (the fuzz target's entry point).
pub fn validate_bytes_with_key(bytes: &[u8], key: &TagKey) -> Result<MappedBundle> {
    MappedBundle::from_bytes(bytes, Path::new("<memory>"), key)
}

/// Makes `bytes` pass the header and checksum checks whatever they hold: sets
/// the magic, version, flags and payload length and recomputes the (unkeyed)
/// checksum (the metadata length and the tag are kept). This is what anyone
/// can do to a file, so the tag then fails unless the bytes are unchanged; see
/// [`seal_for_testing`]. `bytes` shorter than the header are left alone.
#[doc(hidden)]
pub fn reseal_for_testing(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let payload_len = (bytes.len() - HEADER_LEN) as u64;
    bytes[..8].copy_from_slice(&MAGIC);
    bytes[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes[OFF_FLAGS..OFF_FLAGS + 4].copy_from_slice(&KNOWN_FLAGS.to_le_bytes());
    bytes[OFF_PAYLOAD_LEN..OFF_PAYLOAD_LEN + 8].copy_from_slice(&payload_len.to_le_bytes());
    let tag: [u8; 32] = bytes[OFF_TAG..OFF_TAG + 32].try_into().expect("32 bytes");
    bytes[OFF_HASH..OFF_HASH + 32].fill(0);
    bytes[OFF_TAG..OFF_TAG + 32].fill(0);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes[..HEADER_LEN]);
    hash_bytes(&mut hasher, &bytes[HEADER_LEN..]);
    bytes[OFF_HASH..OFF_HASH + 32].copy_from_slice(hasher.finalize().as_bytes());
    bytes[OFF_TAG..OFF_TAG + 32].copy_from_slice(&tag);
}

/// [`reseal_for_testing`], then tags the bytes with `key`: forged files pass
/// every check up to the validation of the metadata and arrays (for the fuzz
/// target and tests of that validation).
#[doc(hidden)]
pub fn seal_for_testing(bytes: &mut [u8], key: &TagKey) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    reseal_for_testing(bytes);
    let checksum: [u8; 32] = bytes[OFF_HASH..OFF_HASH + 32].try_into().expect("32 bytes");
    bytes[OFF_TAG..OFF_TAG + 32].copy_from_slice(&key.tag(&checksum));
}

/// One record (one level product) of a [`MappedBundle`].
#[derive(Clone, Copy)]
pub struct RecordView<'a> {
    meta: &'a ArchivedRecordMeta,
    data: &'a [u8],
    /// Offset of `data` in the file.
    data_start: u64,
    path: &'a Path,
}

impl std::fmt::Debug for RecordView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordView")
            .field("level", &self.level())
            .field("variant", &self.variant())
            .field("fine_block", &self.fine_block())
            .field("coarse_block", &self.coarse_block())
            .finish_non_exhaustive()
    }
}

impl<'a> RecordView<'a> {
    /// The file this record was read from.
    pub fn path(&self) -> &'a Path {
        self.path
    }
    pub fn level(&self) -> u32 {
        self.meta.level.to_native()
    }
    pub fn variant(&self) -> &'a str {
        self.meta.variant.as_str()
    }
    pub fn fine_block(&self) -> u32 {
        self.meta.fine_block.to_native()
    }
    pub fn coarse_block(&self) -> u32 {
        self.meta.coarse_block.to_native()
    }
    /// The fingerprint of the `A` pattern this schedule was built for.
    pub fn a_fingerprint(&self) -> PatternFingerprint {
        fp_from_archived(&self.meta.a)
    }
    /// The fingerprint of the `P` pattern this schedule was built for.
    pub fn p_fingerprint(&self) -> PatternFingerprint {
        fp_from_archived(&self.meta.p)
    }
    /// The named sizes, in file order.
    pub fn sizes(&self) -> impl ExactSizeIterator<Item = (&'a str, u64)> + 'a {
        self.meta.sizes.iter().map(|s| (s.name.as_str(), s.value.to_native()))
    }
    pub fn size(&self, name: &str) -> Option<u64> {
        self.sizes().find(|&(n, _)| n == name).map(|(_, v)| v)
    }
    /// Name, element type and length of each array, in file order.
    pub fn arrays(&self) -> impl ExactSizeIterator<Item = (&'a str, ArrayKind, u64)> + 'a {
        self.meta
            .arrays
            .iter()
            .map(|a| (a.name.as_str(), kind_from_archived(&a.kind), a.len.to_native()))
    }

    /// Where array `name` lies in the file: its byte offset, element type and
    /// length (for tests and tools that edit files; loaders use the views).
    #[doc(hidden)]
    pub fn array_file_offset(&self, name: &str) -> Option<(u64, ArrayKind, u64)> {
        let a = self.meta.arrays.iter().find(|a| a.name.as_str() == name)?;
        Some((
            self.data_start + a.offset.to_native(),
            kind_from_archived(&a.kind),
            a.len.to_native(),
        ))
    }

    fn find_array(&self, name: &str, kind: ArrayKind) -> Result<&'a [u8]> {
        let a = self
            .meta
            .arrays
            .iter()
            .find(|a| a.name.as_str() == name)
            .ok_or_else(|| ScheduleFileError::MissingArray {
                path: self.path.to_path_buf(),
                level: self.level(),
                name: name.to_owned(),
            })?;
        let found = kind_from_archived(&a.kind);
        if found != kind {
            return Err(ScheduleFileError::WrongArrayType {
                path: self.path.to_path_buf(),
                level: self.level(),
                name: name.to_owned(),
                expected: kind.name(),
                found: found.name(),
            });
        }
        if cfg!(target_endian = "big") {
            return Err(ScheduleFileError::ForeignEndian {
                path: self.path.to_path_buf(),
            });
        }
        // Bounds were checked (with overflow checks) when the file was opened.
        let start = a.offset.to_native() as usize;
        let bytes = a.len.to_native() as usize * kind.elem_bytes() as usize;
        Ok(&self.data[start..start + bytes])
    }

    /// The `u32` array `name`, borrowed from the mapping (zero-copy).
    pub fn array_u32(&self, name: &str) -> Result<&'a [u32]> {
        let b = self.find_array(name, ArrayKind::U32)?;
        assert!(b.as_ptr() as usize % std::mem::align_of::<u32>() == 0 && b.len() % 4 == 0);
        // SAFETY: aligned (checked above: the data section is 64-aligned in a
        // 64-aligned buffer and the offset is a multiple of 64), in bounds (checked
        // at open), every bit pattern is a valid `u32`, and the target is
        // little-endian like the file (`find_array`). Lives as long as the backing.
        Ok(unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u32>(), b.len() / 4) })
    }

    /// The `u64` array `name`, borrowed from the mapping (zero-copy).
    pub fn array_u64(&self, name: &str) -> Result<&'a [u64]> {
        let b = self.find_array(name, ArrayKind::U64)?;
        assert!(b.as_ptr() as usize % std::mem::align_of::<u64>() == 0 && b.len() % 8 == 0);
        // SAFETY: as in `array_u32`.
        Ok(unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u64>(), b.len() / 8) })
    }

    /// The `f64` array `name`, borrowed from the mapping (zero-copy).
    pub fn array_f64(&self, name: &str) -> Result<&'a [f64]> {
        let b = self.find_array(name, ArrayKind::F64)?;
        assert!(b.as_ptr() as usize % std::mem::align_of::<f64>() == 0 && b.len() % 8 == 0);
        // SAFETY: as in `array_u32`; every bit pattern is a valid `f64`.
        Ok(unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<f64>(), b.len() / 8) })
    }

    /// Refuses this schedule unless it was built for `pattern` as its `which`
    /// operand ("A" or "P").
    pub fn check_pattern(&self, which: &'static str, pattern: &BlockPattern) -> Result<()> {
        check_pattern(self, which, pattern)
    }

    /// [`RecordView::check_pattern`] for both operands.
    pub fn check_patterns(&self, a: &BlockPattern, p: &BlockPattern) -> Result<()> {
        check_pattern(self, "A", a)?;
        check_pattern(self, "P", p)
    }

    /// Copies the record into an owned one.
    pub fn to_record(&self) -> Result<ScheduleRecord> {
        let arrays = self
            .arrays()
            .map(|(name, kind, _)| {
                Ok(NamedArray {
                    name: name.to_owned(),
                    data: match kind {
                        ArrayKind::U32 => ArrayData::U32(self.array_u32(name)?.to_vec()),
                        ArrayKind::U64 => ArrayData::U64(self.array_u64(name)?.to_vec()),
                        ArrayKind::F64 => ArrayData::F64(self.array_f64(name)?.to_vec()),
                    },
                })
            })
            .collect::<Result<_>>()?;
        Ok(ScheduleRecord {
            level: self.level(),
            variant: self.variant().to_owned(),
            fine_block: self.fine_block(),
            coarse_block: self.coarse_block(),
            a: self.a_fingerprint(),
            p: self.p_fingerprint(),
            sizes: self.sizes().map(|(n, v)| (n.to_owned(), v)).collect(),
            arrays,
        })
    }
}

/// Refuses `record` unless it was built for `pattern` as its `which` operand
/// ("A" or "P"); the error says what differs. Costs one [`fingerprint`].
pub fn check_pattern(record: &RecordView<'_>, which: &'static str, pattern: &BlockPattern) -> Result<()> {
    let stored = match which {
        "A" => &record.meta.a,
        "P" => &record.meta.p,
        _ => {
            return Err(ScheduleFileError::Invalid {
                path: record.path.to_path_buf(),
                why: format!("check_pattern was asked about operand `{which}`; only \"A\" and \"P\" exist"),
            })
        }
    };
    match fp_from_archived(stored).difference(&fingerprint(pattern)) {
        None => Ok(()),
        Some(detail) => Err(ScheduleFileError::PatternMismatch {
            path: record.path.to_path_buf(),
            level: record.level(),
            which,
            detail,
        }),
    }
}
