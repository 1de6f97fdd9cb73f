//! Corrupted files (truncated, bytes replaced) make the readers return `Ok` or
//! `Err`, never panic, abort or allocate without bound.
mod common;

use common::{random_block, Tmp};
use proptest::prelude::*;
use ptap_io::*;

const SHAPES: [(usize, usize); 4] = [(3, 3), (3, 6), (6, 6), (1, 1)];

fn corrupt(mut b: Vec<u8>, cut: Option<usize>, edits: &[(usize, u8)]) -> Vec<u8> {
    if let Some(c) = cut {
        b.truncate(c % (b.len() + 1));
    }
    if !b.is_empty() {
        for &(pos, v) in edits {
            let l = b.len();
            b[pos % l] = v;
        }
    }
    b
}

fn read_everything(path: &std::path::Path, br: usize, bc: usize) {
    let _ = detect_format(path);
    let _ = read_matrix(path, BlockSpec::Infer);
    let _ = read_matrix(path, BlockSpec::Given(br, bc));
    let _ = read_near_null(path);
    let _ = read_mm_dense(path);
    let _ = read_mm_vector(path);
    let _ = read_petsc_vec(path);
    let _ = read_petsc_vecs(path);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_petsc_files_never_panic(
        shape in 0usize..4,
        seed in any::<u64>(),
        cut in proptest::option::of(any::<usize>()),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
    ) {
        let (br, bc) = SHAPES[shape];
        let a = random_block(4, 3, br, bc, 0.4, seed);
        let f = Tmp::new("fuzz.petsc");
        write_petsc_mat(&f, &a).unwrap();
        let bytes = corrupt(std::fs::read(&f).unwrap(), cut, &edits);
        f.write_bytes(&bytes);
        read_everything(&f, br, bc);
        // The Vec reader on corrupted Vec files, including several Vecs.
        write_petsc_vecs(&f, &[a.values(), &a.values()[..a.values().len() / 2]]).unwrap();
        let bytes = corrupt(std::fs::read(&f).unwrap(), cut, &edits);
        f.write_bytes(&bytes);
        read_everything(&f, br, bc);
    }

    #[test]
    fn corrupted_matrix_market_files_never_panic(
        shape in 0usize..4,
        seed in any::<u64>(),
        symmetric in any::<bool>(),
        cut in proptest::option::of(any::<usize>()),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
    ) {
        let (br, bc) = SHAPES[shape];
        let f = Tmp::new("fuzz.mtx");
        if symmetric {
            let a = random_block(4, 4, br, br, 0.0, seed); // block diagonal
            let d = a.to_dense();
            let s = ptap_sparse::dense::Dense {
                rows: d.rows,
                cols: d.cols,
                data: (0..d.rows * d.cols).map(|k| d.at(k / d.cols, k % d.cols) + d.at(k % d.cols, k / d.cols)).collect(),
            };
            let s = BlockCsr::from_dense(&s, br, br, false).unwrap();
            write_matrix_market(&f, &s, true).unwrap();
        } else {
            write_matrix_market(&f, &random_block(4, 3, br, bc, 0.4, seed), false).unwrap();
        }
        let bytes = corrupt(std::fs::read(&f).unwrap(), cut, &edits);
        f.write_bytes(&bytes);
        read_everything(&f, br, bc);
        // Dense arrays too.
        let a = random_block(2, 2, br, bc, 0.5, seed).to_dense();
        write_mm_dense(&f, a.rows, a.cols, &a.data).unwrap();
        let bytes = corrupt(std::fs::read(&f).unwrap(), cut, &edits);
        f.write_bytes(&bytes);
        read_everything(&f, br, bc);
    }
}
