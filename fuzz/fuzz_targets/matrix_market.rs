//! Fuzzes the Matrix Market readers: arbitrary bytes must give `Ok` or a clear
//! error, never a panic, a hang or an allocation beyond what the bytes pay for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptap_io::{read_matrix_header, read_matrix_market, read_mm_dense, BlockSpec};

fuzz_target!(|data: &[u8]| {
    // The readers take paths: one file per fuzzing process, rewritten per input.
    let path = std::env::temp_dir().join(format!("ptap-fuzz-mm-{}.mtx", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let header = read_matrix_header(&path);
    for spec in [BlockSpec::Infer, BlockSpec::Given(1, 1), BlockSpec::Given(3, 3)] {
        match read_matrix_market(&path, spec) {
            Ok(a) => {
                // A matrix that reads had a header that passed, with its sizes.
                let h = header.as_ref().expect("a readable matrix has a readable header");
                assert_eq!((a.scalar_rows(), a.scalar_cols()), (h.rows, h.cols));
            }
            Err(e) => drop(e.to_string()),
        }
    }
    if let Err(e) = read_mm_dense(&path) {
        drop(e.to_string());
    }
});
