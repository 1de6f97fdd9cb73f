//! The schedule file format: round trips, fingerprints, and every way a file can
//! be bad (each must be a clear error, never a panic).
use proptest::prelude::*;
use ptap_schedules::file::{
    check_pattern, fingerprint, reseal_for_testing, seal_for_testing, user_key, validate_bytes, write_bundle,
    ArrayData, ArrayKind, MappedBundle, NamedArray, PatternFingerprint, ScheduleBundle, ScheduleRecord, FORMAT_VERSION,
    HEADER_LEN, MAGIC,
};
use ptap_schedules::ScheduleFileError;
use ptap_sparse::BlockPattern;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A unique file under the temp dir, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        TempFile(std::env::temp_dir().join(format!("ptap-sched-{}-{tag}-{n}.ptaps", std::process::id())))
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A banded `n x m` pattern with `w` blocks per row.
fn banded(n: usize, m: usize, w: usize) -> BlockPattern {
    let rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let start = (i * m / n).min(m.saturating_sub(w));
            (start..(start + w).min(m)).map(|j| j as u32).collect()
        })
        .collect();
    BlockPattern::from_rows(m, &rows).unwrap()
}

fn sample_bundle() -> ScheduleBundle {
    let records = (0..3u32)
        .map(|level| {
            let n = 100 >> level;
            let a = banded(n, n, 3);
            let p = banded(n, n / 2, 2);
            let k = level as usize;
            ScheduleRecord {
                level,
                variant: ["two-pass", "slot-tiled", "column-split"][k].to_string(),
                fine_block: if level == 0 { 3 } else { 6 },
                coarse_block: 6,
                a: fingerprint(&a),
                p: fingerprint(&p),
                sizes: vec![("m_F".into(), n as u64), ("Z_A".into(), a.nnzb() as u64)],
                arrays: vec![
                    NamedArray::u32(
                        "slot",
                        (0..(1000 + 17 * k as u32))
                            .map(|x| x.wrapping_mul(2654435761))
                            .collect(),
                    ),
                    NamedArray::u64("offsets", (0..(33 + k as u64)).map(|x| x << 35 | x).collect()),
                    NamedArray::u32("empty", Vec::new()),
                    NamedArray::u32("odd", vec![7; 3 + k]),
                    NamedArray::f64("values", vec![1.5, -0.0, f64::MIN_POSITIVE / 3.0, 1e300, -7.25]),
                ],
            }
        })
        .collect();
    ScheduleBundle {
        created_by: "ptap test".into(),
        problem: "banded".into(),
        records,
    }
}

fn written_sample(tag: &str) -> (TempFile, Vec<u8>) {
    let f = TempFile::new(tag);
    let n = write_bundle(f.path(), &sample_bundle()).unwrap();
    let bytes = std::fs::read(f.path()).unwrap();
    assert_eq!(n, bytes.len() as u64);
    (f, bytes)
}

/// Writes `bytes` to a fresh file and opens it; the error's message.
fn open_err(tag: &str, bytes: &[u8]) -> (ScheduleFileError, String) {
    let f = TempFile::new(tag);
    std::fs::write(f.path(), bytes).unwrap();
    let e = MappedBundle::open(f.path()).expect_err("must be refused");
    let msg = e.to_string();
    assert!(
        msg.contains(&f.path().display().to_string()),
        "message names the file: {msg}"
    );
    // The in-memory loader agrees.
    let e2 = validate_bytes(bytes).expect_err("must be refused in memory too");
    assert_eq!(std::mem::discriminant(&e), std::mem::discriminant(&e2));
    (e, msg)
}

#[test]
fn round_trip_three_records() {
    let bundle = sample_bundle();
    let (f, bytes) = written_sample("roundtrip");
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), FORMAT_VERSION);
    assert_eq!(
        u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
        bytes.len() as u64 - HEADER_LEN as u64
    );

    let m = MappedBundle::open(f.path()).unwrap();
    assert_eq!(m.path(), f.path());
    assert_eq!(m.file_len(), bytes.len() as u64);
    assert_eq!(m.created_by(), "ptap test");
    assert_eq!(m.problem(), "banded");
    assert_eq!(m.len(), 3);
    for (r, want) in m.records().zip(&bundle.records) {
        assert_eq!(r.level(), want.level);
        assert_eq!(r.variant(), want.variant);
        assert_eq!(r.fine_block(), want.fine_block);
        assert_eq!(r.coarse_block(), want.coarse_block);
        assert_eq!(r.a_fingerprint(), want.a);
        assert_eq!(r.p_fingerprint(), want.p);
        assert_eq!(r.size("m_F"), Some(want.sizes[0].1));
        assert_eq!(r.size("Z_A"), Some(want.sizes[1].1));
        assert_eq!(r.size("nope"), None);
        let names: Vec<_> = r.arrays().map(|(n, k, len)| (n.to_string(), k, len)).collect();
        let want_names: Vec<_> = want
            .arrays
            .iter()
            .map(|a| (a.name.clone(), a.data.kind(), a.data.len() as u64))
            .collect();
        assert_eq!(names, want_names);
        for a in &want.arrays {
            match &a.data {
                ArrayData::U32(v) => {
                    let got = r.array_u32(&a.name).unwrap();
                    assert_eq!(got, &v[..]);
                    assert_eq!(got.as_ptr() as usize % 64, 0, "arrays are 64-byte aligned in place");
                    assert_eq!(got.as_ptr(), r.array_u32(&a.name).unwrap().as_ptr(), "no copy");
                }
                ArrayData::U64(v) => assert_eq!(r.array_u64(&a.name).unwrap(), &v[..]),
                ArrayData::F64(v) => {
                    // Bit patterns survive, negative zero and subnormals included.
                    let bits = |x: &[f64]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(r.array_f64(&a.name).unwrap()), bits(v));
                }
            }
        }
    }
    assert_eq!(m.to_bundle().unwrap(), bundle);
    assert!(walk(&m) > 3000);
    assert_eq!(m.level(2).unwrap().variant(), "column-split");
    let t = m.timings();
    assert!(t.map_s >= 0.0 && t.checksum_s >= 0.0 && t.validate_s >= 0.0);

    // The in-memory loader reads the same thing.
    assert_eq!(validate_bytes(&bytes).unwrap().to_bundle().unwrap(), bundle);
}

#[test]
fn writing_is_deterministic_and_replaces_atomically() {
    let (f, first) = written_sample("replace");
    // Overwrite with a different bundle, then with the original again.
    let mut other = sample_bundle();
    other.records.truncate(1);
    let n = write_bundle(f.path(), &other).unwrap();
    assert!(n < first.len() as u64);
    assert_eq!(MappedBundle::open(f.path()).unwrap().len(), 1);
    write_bundle(f.path(), &sample_bundle()).unwrap();
    assert_eq!(std::fs::read(f.path()).unwrap(), first, "same bundle, same bytes");
    // No temporary file is left next to it.
    let dir = f.path().parent().unwrap();
    let stem = f.path().file_name().unwrap().to_string_lossy().to_string();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&stem) && n != &stem)
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn empty_bundle_round_trips() {
    let f = TempFile::new("emptybundle");
    let n = write_bundle(f.path(), &ScheduleBundle::default()).unwrap();
    assert_eq!(n % 64, 0);
    let m = MappedBundle::open(f.path()).unwrap();
    assert!(m.is_empty());
    assert_eq!(m.records().count(), 0);
}

#[test]
fn duplicate_array_names_are_refused_when_writing() {
    let mut b = sample_bundle();
    b.records[1].arrays.push(NamedArray::u64("slot", vec![1]));
    let f = TempFile::new("dup");
    let e = write_bundle(f.path(), &b).unwrap_err();
    assert!(matches!(e, ScheduleFileError::Encode { .. }), "{e}");
    assert!(e.to_string().contains("level 1 has two arrays named `slot`"), "{e}");
    assert!(!f.path().exists());
}

#[test]
fn fingerprint_tracks_columns_and_dims() {
    let rows = vec![vec![0u32, 2], vec![1], vec![0, 1, 3]];
    let p1 = BlockPattern::from_rows(4, &rows).unwrap();
    let p2 = BlockPattern::from_rows(4, &rows.clone()).unwrap();
    assert_eq!(fingerprint(&p1), fingerprint(&p2), "equal patterns built separately");
    let f1 = fingerprint(&p1);
    assert_eq!((f1.nrows, f1.ncols, f1.nnzb), (3, 4, 6));

    let mut rows_col = rows.clone();
    rows_col[2][2] = 2; // one column index changes
    let f_col = fingerprint(&BlockPattern::from_rows(4, &rows_col).unwrap());
    assert_ne!(f_col.hash, f1.hash);
    assert_eq!(f_col.row_ptr_hash, f1.row_ptr_hash);
    assert_eq!(
        f1.difference(&f_col).unwrap(),
        "same sizes (3x4 blocks, 6 stored) and row lengths but different column indices"
    );

    let f_dims = fingerprint(&BlockPattern::from_rows(5, &rows).unwrap()); // one more column
    assert_ne!(f_dims, f1);
    assert_ne!(f_dims.hash, f1.hash);
    assert_eq!(
        f1.difference(&f_dims).unwrap(),
        "the schedule was built for 3x4 blocks with 6 stored; the matrix has 3x5 with 6"
    );

    // Same sizes, a block moved to another row.
    let f_rows = fingerprint(&BlockPattern::from_rows(4, &[vec![0, 2, 3], vec![], vec![0, 1, 3]]).unwrap());
    assert_ne!(f_rows.row_ptr_hash, f1.row_ptr_hash);
    assert_eq!(
        f1.difference(&f_rows).unwrap(),
        "same sizes (3x4 blocks, 6 stored) but different row lengths"
    );
    assert_eq!(f1.difference(&f1.clone()), None);

    // The documented definition of `hash`.
    let mut h = blake3::Hasher::new();
    for x in [3u64, 4, 6, 0, 2, 3, 6] {
        h.update(&x.to_le_bytes());
    }
    for c in rows.iter().flatten() {
        h.update(&c.to_le_bytes());
    }
    assert_eq!(f1.hash, *h.finalize().as_bytes());
}

#[test]
fn fingerprint_of_a_large_pattern_matches_chunked_definition() {
    // Large enough that the rayon path is used (> 1 MiB of column indices).
    let p = banded(200_000, 200_000, 3);
    let f = fingerprint(&p);
    let mut h = blake3::Hasher::new();
    for x in [p.nrows() as u64, p.ncols() as u64, p.nnzb() as u64] {
        h.update(&x.to_le_bytes());
    }
    for &x in p.row_ptr() {
        h.update(&(x as u64).to_le_bytes());
    }
    for &c in p.col_idx() {
        h.update(&c.to_le_bytes());
    }
    assert_eq!(f.hash, *h.finalize().as_bytes());
}

#[test]
fn missing_file_is_an_io_error() {
    let f = TempFile::new("missing");
    let e = MappedBundle::open(f.path()).unwrap_err();
    assert!(matches!(e, ScheduleFileError::Io { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with("cannot read schedule file "), "{msg}");
    assert!(msg.contains("No such file or directory"), "{msg}");
    assert!(std::error::Error::source(&e).is_none(), "the cause is printed once");
    assert!(msg.contains(&f.path().display().to_string()), "{msg}");
}

#[test]
fn empty_file_is_truncated() {
    let (e, msg) = open_err("empty", &[]);
    assert!(
        matches!(
            e,
            ScheduleFileError::Truncated {
                expected: 128,
                actual: 0,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        msg.contains("is truncated: it has 0 bytes where its header requires 128"),
        "{msg}"
    );
    assert!(msg.contains("re-run `ptap inspect`"), "{msg}");
}

#[test]
fn truncated_files_are_refused() {
    let (_f, bytes) = written_sample("trunc-src");
    let full = bytes.len() as u64;
    // Inside the magic, inside the header before and after the length field, the
    // bare header, inside the metadata, inside the arrays, one byte short.
    for cut in [
        3usize,
        8,
        20,
        24,
        40,
        63,
        64,
        100,
        127,
        128,
        200,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let (e, msg) = open_err("trunc", &bytes[..cut]);
        let ScheduleFileError::Truncated { expected, actual, .. } = e else {
            panic!("cut at {cut}: {e:?}");
        };
        assert_eq!(actual, cut as u64);
        // Once the length field is there, the message gives the full length.
        assert_eq!(
            expected,
            if cut >= 24 { full } else { HEADER_LEN as u64 },
            "cut at {cut}"
        );
        assert!(
            msg.contains(&format!("it has {cut} bytes where its header requires {expected}")),
            "{msg}"
        );
    }
}

#[test]
fn trailing_bytes_are_refused() {
    let (_f, mut bytes) = written_sample("trail-src");
    bytes.extend_from_slice(b"junk");
    let (e, msg) = open_err("trail", &bytes);
    assert!(matches!(e, ScheduleFileError::Invalid { .. }), "{e:?}");
    assert!(msg.contains("4 unexpected trailing bytes"), "{msg}");
}

#[test]
fn flipped_payload_byte_is_corrupt() {
    let (_f, bytes) = written_sample("flip-src");
    // In the metadata, in an array, the last byte, the stored hash, the flags.
    for at in [HEADER_LEN + 5, bytes.len() / 2, bytes.len() - 1, 30, 13] {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        let (e, msg) = open_err("flip", &b);
        assert!(matches!(e, ScheduleFileError::Corrupt { .. }), "flip at {at}: {e:?}");
        assert!(
            msg.ends_with("is corrupt (checksum mismatch); delete it and re-run `ptap inspect`"),
            "{msg}"
        );
    }
}

#[test]
fn flipped_magic_is_not_a_schedule() {
    let (_f, bytes) = written_sample("magic-src");
    let mut b = bytes.clone();
    b[2] ^= 1;
    let (e, msg) = open_err("magic", &b);
    assert!(matches!(e, ScheduleFileError::NotASchedule { .. }), "{e:?}");
    assert!(msg.contains("is not a ptap schedule file"), "{msg}");
    // A short text file is "not a schedule", not "truncated".
    let (e, _) = open_err("text", b"hello\n");
    assert!(matches!(e, ScheduleFileError::NotASchedule { .. }), "{e:?}");
}

#[test]
fn bumped_version_is_refused() {
    let (_f, bytes) = written_sample("version-src");
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let (e, msg) = open_err("version", &b);
    assert!(
        matches!(e, ScheduleFileError::Version { found, supported, .. } if found == FORMAT_VERSION + 1 && supported == FORMAT_VERSION),
        "{e:?}"
    );
    assert!(
        msg.contains(&format!(
            "has format version {} but this build reads version {}",
            FORMAT_VERSION + 1,
            FORMAT_VERSION
        )),
        "{msg}"
    );
    // Also when the file is cut right after the version field.
    let (e, _) = open_err("version-short", &b[..16]);
    assert!(matches!(e, ScheduleFileError::Version { .. }), "{e:?}");
}

#[test]
fn pattern_mismatch_names_the_sizes() {
    let (f, _) = written_sample("mismatch");
    let m = MappedBundle::open(f.path()).unwrap();
    let r = m.level(0).unwrap();
    let a = banded(100, 100, 3);
    let p = banded(100, 50, 2);
    r.check_patterns(&a, &p).unwrap();
    check_pattern(&r, "A", &a).unwrap();

    let other = banded(80, 80, 3);
    let e = check_pattern(&r, "A", &other).unwrap_err();
    assert!(
        matches!(
            e,
            ScheduleFileError::PatternMismatch {
                level: 0,
                which: "A",
                ..
            }
        ),
        "{e:?}"
    );
    let msg = e.to_string();
    assert_eq!(
        msg,
        format!(
            "the schedule in {}, level 0, was built for a different A pattern: the schedule was built for \
             100x100 blocks with 300 stored; the matrix has 80x80 with 240; re-run `ptap inspect` for these matrices",
            f.path().display()
        )
    );
    // P checked against A's pattern.
    let e = r.check_pattern("P", &a).unwrap_err();
    assert!(e.to_string().contains("different P pattern: the schedule was built for 100x50 blocks with 200 stored; the matrix has 100x100 with 300"), "{e}");
}

#[test]
fn pattern_mismatch_same_sizes_different_columns() {
    let (f, _) = written_sample("mismatch-col");
    let m = MappedBundle::open(f.path()).unwrap();
    let r = m.level(1).unwrap();
    let a = banded(50, 50, 3);
    r.check_pattern("A", &a).unwrap();
    // Same row lengths, one column index moved.
    let mut rows: Vec<Vec<u32>> = (0..a.nrows()).map(|i| a.row(i).to_vec()).collect();
    rows[10][2] += 1;
    let a2 = BlockPattern::from_rows(50, &rows).unwrap();
    let e = r.check_pattern("A", &a2).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(
            "level 1, was built for a different A pattern: same sizes (50x50 blocks, 150 stored) and row lengths but different column indices"
        ),
        "{msg}"
    );
}

#[test]
fn missing_and_mistyped_arrays_and_levels() {
    let (f, _) = written_sample("arrays");
    let m = MappedBundle::open(f.path()).unwrap();
    let r = m.level(1).unwrap();
    let e = r.array_u32("nope").unwrap_err();
    assert!(matches!(e, ScheduleFileError::MissingArray { level: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("level 1, has no array named `nope`"), "{e}");
    let e = r.array_u64("slot").unwrap_err();
    assert!(e.to_string().contains("stores array `slot` as u32, not u64"), "{e}");
    let e = r.array_u32("offsets").unwrap_err();
    assert!(
        matches!(
            e,
            ScheduleFileError::WrongArrayType {
                expected: "u32",
                found: "u64",
                ..
            }
        ),
        "{e:?}"
    );
    let e = m.level(7).unwrap_err();
    assert!(e.to_string().contains("has no record for level 7"), "{e}");
    let e = r.check_pattern("R", &banded(3, 3, 1)).unwrap_err();
    assert!(matches!(e, ScheduleFileError::Invalid { .. }), "{e:?}");
    assert_eq!(r.arrays().find(|a| a.0 == "offsets").map(|a| a.1), Some(ArrayKind::U64));
}

#[test]
fn write_to_a_missing_directory_is_an_io_error() {
    let p = std::env::temp_dir()
        .join(format!("ptap-no-such-dir-{}", std::process::id()))
        .join("x.ptaps");
    let e = write_bundle(&p, &sample_bundle()).unwrap_err();
    assert!(e.to_string().starts_with("cannot write schedule file "), "{e}");
}

/// Reads everything a loaded bundle offers (what an executor would touch).
fn walk(m: &MappedBundle) -> usize {
    let mut n = m.created_by().len() + m.problem().len();
    for r in m.records() {
        n += r.variant().len() + r.level() as usize + r.sizes().map(|(s, v)| s.len() + v as usize).sum::<usize>();
        for (name, kind, len) in r.arrays() {
            let got = match kind {
                ArrayKind::U32 => r.array_u32(name).unwrap().len(),
                ArrayKind::U64 => r.array_u64(name).unwrap().len(),
                ArrayKind::F64 => r.array_f64(name).unwrap().len(),
            };
            assert_eq!(got as u64, len);
            n += got;
        }
    }
    n
}

/// Files that pass the checksum but were forged: the validation behind it
/// refuses what is malformed.
#[test]
fn forged_files_behind_the_checksum_are_refused() {
    let (_f, bytes) = written_sample("forge-src");
    let meta_len = u64::from_le_bytes(bytes[56..64].try_into().unwrap()) as usize;

    let key = user_key(Path::new("<key>")).unwrap();
    // Resealing an intact file keeps it valid.
    let mut b = bytes.clone();
    reseal_for_testing(&mut b);
    assert_eq!(b, bytes);
    seal_for_testing(&mut b, &key);
    assert_eq!(b, bytes);

    // An edit resealed with the plain checksum (what anyone can do) fails the tag.
    let mut b = bytes.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    reseal_for_testing(&mut b);
    let e = validate_bytes(&b).unwrap_err();
    assert!(matches!(e, ScheduleFileError::Untrusted { .. }), "{e:?}");
    assert!(e.to_string().contains("was not written by this user's ptap"), "{e}");

    // Metadata length pointing past the payload.
    let mut b = bytes.clone();
    b[56..64].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    seal_for_testing(&mut b, &key);
    let e = validate_bytes(&b).unwrap_err();
    assert!(e.to_string().contains("metadata length"), "{e}");

    // Metadata length cut short: rkyv's validation refuses it.
    let mut b = bytes.clone();
    b[56..64].copy_from_slice(&((meta_len - 8) as u64).to_le_bytes());
    seal_for_testing(&mut b, &key);
    let e = validate_bytes(&b).unwrap_err();
    assert!(matches!(e, ScheduleFileError::Invalid { .. }), "{e:?}");
    assert!(e.to_string().contains("metadata fails validation"), "{e}");

    // Arrays cut off: the data section is shorter than the metadata says.
    let mut b = bytes[..bytes.len() - 64].to_vec();
    seal_for_testing(&mut b, &key);
    let e = validate_bytes(&b).unwrap_err();
    assert!(e.to_string().contains("lies outside the"), "{e}");

    // Unknown flags.
    let mut b = bytes.clone();
    reseal_for_testing(&mut b);
    b[12] = 1;
    b[24..56].fill(0);
    b[64..96].fill(0);
    let mut h = blake3::Hasher::new();
    h.update(&b);
    let hash = *h.finalize().as_bytes();
    b[24..56].copy_from_slice(&hash);
    b[64..96].copy_from_slice(&key.tag(&hash));
    let e = validate_bytes(&b).unwrap_err();
    assert!(e.to_string().contains("unknown flags 0x1"), "{e}");
}

fn valid_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| written_sample("prop-src").1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_truncations_are_errors(cut in 0usize..4096) {
        let bytes = valid_bytes();
        let cut = cut % bytes.len();
        let e = validate_bytes(&bytes[..cut]).expect_err("a truncated file is refused");
        prop_assert!(matches!(e, ScheduleFileError::Truncated { .. }), "{e:?}");
    }

    /// Every byte of the file is covered by the magic, the version or the checksum,
    /// so every flip is refused (never a panic, never a silent Ok).
    #[test]
    fn random_byte_flips_are_errors(at in 0usize..1 << 20, mask in 1u8..=255) {
        let mut bytes = valid_bytes().to_vec();
        let at = at % bytes.len();
        bytes[at] ^= mask;
        prop_assert!(validate_bytes(&bytes).is_err());
    }

    /// Forged metadata that passes the checksum: rkyv's validation and the bounds
    /// checks catch it, or it is well-formed and every accessor works.
    #[test]
    fn forged_metadata_never_panics(flips in proptest::collection::vec((0usize..4096, 1u8..=255), 1..4)) {
        let mut bytes = valid_bytes().to_vec();
        let meta_len = u64::from_le_bytes(bytes[56..64].try_into().unwrap()) as usize;
        for (at, mask) in flips {
            bytes[HEADER_LEN + at % meta_len] ^= mask;
        }
        seal_for_testing(&mut bytes, &user_key(Path::new("<key>")).unwrap());
        if let Ok(m) = validate_bytes(&bytes) {
            walk(&m);
        }
    }

    #[test]
    fn random_bytes_after_a_valid_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..512), len_delta in 0u64..600) {
        // A plausible header (right magic and version) followed by garbage.
        let mut bytes = valid_bytes()[..HEADER_LEN].to_vec();
        bytes[16..24].copy_from_slice(&len_delta.to_le_bytes());
        bytes.extend_from_slice(&tail);
        prop_assert!(validate_bytes(&bytes).is_err());
    }
}

/// Writes a bundle with 200 M `u32` entries (800 MB) and times writing and
/// loading. `cargo test -p ptap-schedules --release --test file_format -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_large_bundle() {
    let n: usize = std::env::var("PTAP_MEASURE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000_000);
    let dir = std::env::var_os("PTAP_MEASURE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let f = TempFile(dir.join(format!("ptap-sched-measure-{}.ptaps", std::process::id())));
    let t = Instant::now();
    let pat = banded(100_000, 100_000, 5);
    let fp: PatternFingerprint = fingerprint(&pat);
    let half = n / 2;
    let bundle = ScheduleBundle {
        created_by: "measure".into(),
        problem: format!("{n} u32 entries"),
        records: vec![ScheduleRecord {
            level: 0,
            variant: "two-pass".into(),
            fine_block: 3,
            coarse_block: 6,
            a: fp.clone(),
            p: fp,
            sizes: vec![("entries".into(), n as u64)],
            arrays: vec![
                NamedArray::u32("x", (0..half as u32).collect()),
                NamedArray::u32("y", (0..(n - half) as u32).rev().collect()),
            ],
        }],
    };
    println!(
        "threads {}, build arrays {:.3} s",
        rayon::current_num_threads(),
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let bytes = write_bundle(f.path(), &bundle).unwrap();
    let write_s = t.elapsed().as_secs_f64();
    drop(bundle);
    println!(
        "write: {bytes} bytes ({:.1} MB) in {write_s:.3} s ({:.2} GB/s)",
        bytes as f64 / 1e6,
        bytes as f64 / 1e9 / write_s
    );

    for run in 0..3 {
        let t = Instant::now();
        let m = MappedBundle::open(f.path()).unwrap();
        let open_s = t.elapsed().as_secs_f64();
        let tm = m.timings();
        let t = Instant::now();
        let r = m.level(0).unwrap();
        let (x, y) = (r.array_u32("x").unwrap(), r.array_u32("y").unwrap());
        let access_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let s: u64 = x.iter().chain(y).map(|&v| v as u64).sum();
        let touch_s = t.elapsed().as_secs_f64();
        println!(
            "open #{run}: {open_s:.4} s total (map {:.6} s, checksum {:.4} s = {:.2} GB/s, validate {:.6} s); \
             array access {access_s:.6} s; summing all entries {touch_s:.3} s (sum {s})",
            tm.map_s,
            tm.checksum_s,
            bytes as f64 / 1e9 / tm.checksum_s,
            tm.validate_s
        );
    }

    // For reference: rkyv's own validation of an archived Vec<u32>.
    let m = (n / 4).max(1);
    let v: Vec<u32> = (0..m as u32).collect();
    let archived = rkyv::to_bytes::<rkyv::rancor::Error>(&v).unwrap();
    let t = Instant::now();
    let got = rkyv::access::<rkyv::Archived<Vec<u32>>, rkyv::rancor::Error>(&archived).unwrap();
    let access_s = t.elapsed().as_secs_f64();
    assert_eq!(got.len(), m);
    println!(
        "rkyv::access of an archived Vec<u32> of {m} entries ({:.0} MB): {access_s:.6} s",
        m as f64 * 4e-6
    );
}

/// Writes small valid schedule files as the fuzz target's seed corpus
/// (`fuzz/corpus/schedule_loader/`). `cargo test -p ptap-schedules --test file_format -- --ignored fuzz_seeds`
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/schedule_loader");
    std::fs::create_dir_all(&dir).unwrap();
    let mut small = sample_bundle();
    for r in &mut small.records {
        for a in &mut r.arrays {
            a.data = match &a.data {
                ArrayData::U32(v) => ArrayData::U32(v.iter().take(5).copied().collect()),
                ArrayData::U64(v) => ArrayData::U64(v.iter().take(3).copied().collect()),
                ArrayData::F64(v) => ArrayData::F64(v.iter().take(3).copied().collect()),
            };
        }
    }
    // Tagged with the fuzz target's fixed key, so the seeds load as given.
    let key = ptap_schedules::key::TagKey::from_bytes([0x5a; 32]);
    let write = ptap_schedules::file::write_bundle_with_key;
    write(&dir.join("three-levels.ptaps"), &small, &key).unwrap();
    small.records.truncate(1);
    write(&dir.join("one-level.ptaps"), &small, &key).unwrap();
    write(&dir.join("empty.ptaps"), &ScheduleBundle::default(), &key).unwrap();
}
