//! Fuzzes the PETSc binary readers: arbitrary bytes must give `Ok` or a clear
//! error, never a panic, a hang or an allocation beyond what the bytes pay for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptap_io::{read_matrix_header, read_near_null, read_petsc_mat, read_petsc_vecs, BlockSpec};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("ptap-fuzz-petsc-{}.petsc", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let header = read_matrix_header(&path);
    for spec in [BlockSpec::Infer, BlockSpec::Given(1, 1), BlockSpec::Given(2, 2)] {
        match read_petsc_mat(&path, spec) {
            Ok(a) => {
                let h = header.as_ref().expect("a readable matrix has a readable header");
                assert_eq!((a.scalar_rows(), a.scalar_cols()), (h.rows, h.cols));
            }
            Err(e) => drop(e.to_string()),
        }
    }
    if let Err(e) = read_petsc_vecs(&path) {
        drop(e.to_string());
    }
    if let Err(e) = read_near_null(&path) {
        drop(e.to_string());
    }
});
