//! Throughput of the readers and writers on a ~50 MB Matrix Market file (and its
//! PETSc twin). Ignored by default: run with
//! `cargo test -p ptap-io --release --test throughput -- --ignored --nocapture`.
mod common;

use common::{assert_bitwise_eq, random_block, Tmp};
use ptap_io::*;
use std::time::Instant;

#[test]
#[ignore = "writes ~80 MB to the temp directory; prints MB/s"]
fn matrix_market_and_petsc_throughput() {
    // 20_000 block rows x ~10 blocks x 9 scalars: about 1.7M entries, ~50 MB of text.
    let a = random_block(20_000, 20_000, 3, 3, 9.5 / 20_000.0, 5);
    let entries = a.values().len();
    let mb = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;

    let f = Tmp::new("big.mtx");
    let t = Instant::now();
    write_matrix_market(&f, &a, false).unwrap();
    let w = t.elapsed().as_secs_f64();
    let size = mb(&f);
    let t = Instant::now();
    let back = read_matrix_market(&f, BlockSpec::Infer).unwrap();
    let r = t.elapsed().as_secs_f64();
    assert_bitwise_eq(&back, &a);
    let t = Instant::now();
    let _ = read_matrix_market(&f, BlockSpec::Given(1, 1)).unwrap();
    let r1 = t.elapsed().as_secs_f64();
    println!(
        "Matrix Market: {entries} entries, {size:.1} MB; write {:.0} MB/s ({w:.2} s), read {:.0} MB/s ({r:.2} s), \
         read as 1x1 {:.0} MB/s",
        size / w,
        size / r,
        size / r1
    );

    // The same file without its block comment: inference has to scan the pattern.
    let text = std::fs::read(&f).unwrap();
    let nl = text.iter().position(|&b| b == b'\n').unwrap();
    let nl2 = nl + 1 + text[nl + 1..].iter().position(|&b| b == b'\n').unwrap();
    std::fs::write(&f, [&text[..=nl], &text[nl2 + 1..]].concat()).unwrap();
    drop(text);
    let t = Instant::now();
    let back = read_matrix_market(&f, BlockSpec::Infer).unwrap();
    let ri = t.elapsed().as_secs_f64();
    assert_eq!(back.block_shape(), (3, 3));
    println!("Matrix Market with inference: read {:.0} MB/s ({ri:.2} s)", size / ri);

    let g = Tmp::new("big.petsc");
    let t = Instant::now();
    write_petsc_mat(&g, &a).unwrap();
    let w = t.elapsed().as_secs_f64();
    let size = mb(&g);
    let t = Instant::now();
    let back = read_petsc_mat(&g, BlockSpec::Infer).unwrap();
    let r = t.elapsed().as_secs_f64();
    assert_bitwise_eq(&back, &a);
    println!(
        "PETSc binary: {size:.1} MB; write {:.0} MB/s ({w:.2} s), read {:.0} MB/s ({r:.2} s)",
        size / w,
        size / r
    );
}
