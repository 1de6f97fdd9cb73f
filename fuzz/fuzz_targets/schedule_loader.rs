//! Fuzzes the schedule loader: arbitrary bytes must give `Ok` or a clear error,
//! never a panic, and everything a loaded bundle offers must be readable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptap_schedules::file::{seal_for_testing, validate_bytes_with_key, ArrayKind, MappedBundle};
use ptap_schedules::key::TagKey;
use ptap_sparse::BlockPattern;

/// Touches every accessor, as an executor would.
fn walk(m: &MappedBundle, pattern: &BlockPattern) {
    let _ = (m.created_by().len(), m.problem().len(), m.len(), m.file_len());
    for r in m.records() {
        let _ = (r.level(), r.variant().len(), r.fine_block(), r.coarse_block());
        let _ = (r.a_fingerprint(), r.p_fingerprint(), r.size("m_F"));
        for (name, value) in r.sizes() {
            let _ = (name.len(), value);
        }
        for (name, kind, len) in r.arrays() {
            let got = match kind {
                ArrayKind::U32 => r.array_u32(name).map(|a| a.len()),
                ArrayKind::U64 => r.array_u64(name).map(|a| a.len()),
                ArrayKind::F64 => r.array_f64(name).map(|a| a.len()),
            };
            assert_eq!(got.expect("a listed array loads") as u64, len);
            let _ = r.array_u64(name).err().map(|e| e.to_string());
        }
        let _ = r.array_u32("not-there").err().map(|e| e.to_string());
        let _ = r.check_patterns(pattern, pattern).err().map(|e| e.to_string());
        let _ = r.to_record();
    }
    let _ = m.level(0).err().map(|e| e.to_string());
}

fuzz_target!(|data: &[u8]| {
    let pattern = BlockPattern::from_rows(2, &[vec![0, 1], vec![1]]).expect("a valid pattern");
    let key = TagKey::from_bytes([0x5a; 32]);
    // As given: the header, checksum and tag checks refuse nearly everything.
    match validate_bytes_with_key(data, &key) {
        Ok(m) => walk(&m, &pattern),
        Err(e) => drop(e.to_string()),
    }
    // Sealed (right magic, version, length, checksum and tag), so the input
    // reaches rkyv's validation of the metadata and the array bounds checks.
    let mut sealed = data.to_vec();
    seal_for_testing(&mut sealed, &key);
    match validate_bytes_with_key(&sealed, &key) {
        Ok(m) => walk(&m, &pattern),
        Err(e) => drop(e.to_string()),
    }
});
