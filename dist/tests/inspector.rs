//! The partition, the local views and the halo plan, checked without MPI: a
//! single rank against `ptap_sparse`, and three "ranks" built in one process
//! from the global matrix (the inspector on a global pattern) against lists
//! worked out by hand.
use ptap_dist::{
    jacobi_pcg, reference, BlockJacobi, CgOptions, CgWorkspace, DistMatrix, HaloPlan, Link, LocalMatrix, Partition,
    SingleRank,
};
use ptap_fem::BeamProblem;
use ptap_sparse::spmv::spmv;
use ptap_sparse::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// 9 block rows of 2x2 blocks: tridiagonal plus the couplings (0, 8) and
/// (2, 5) both ways; values arbitrary (not symmetric).
fn nine() -> BlockCsr {
    let mut rows: Vec<Vec<u32>> = (0..9u32)
        .map(|i| (i.saturating_sub(1)..=(i + 1).min(8)).collect())
        .collect();
    rows[0].push(8);
    rows[8].push(0);
    rows[2].push(5);
    rows[5].push(2);
    let p = BlockPattern::from_rows(9, &rows).unwrap();
    let values = (0..p.nnzb() * 4).map(|v| (v as f64 * 0.37).sin() + 0.1).collect();
    BlockCsr::new(Arc::new(p), 2, 2, values).unwrap()
}

fn link(rank: usize, start_block: usize, blocks: usize) -> Link {
    Link {
        rank,
        start: 2 * start_block,
        len: 2 * blocks,
    }
}

#[test]
fn three_ranks_of_a_small_matrix_match_the_hand_worked_plan() {
    let a = nine();
    // rank 0: rows 0..4, rank 1: rows 4..6, rank 2: rows 6..9.
    let part = Partition::new(vec![0, 4, 6, 9]).unwrap();
    let locals: Vec<LocalMatrix> = (0..3)
        .map(|r| LocalMatrix::from_global(&a, &part, &part, r).unwrap())
        .collect();

    // Ghosts, sorted by global index (so grouped by owner), and the local
    // columns of each row in the global entry order.
    let ghosts: Vec<&[u64]> = locals.iter().map(|l| l.ghosts()).collect();
    assert_eq!(ghosts, [&[4u64, 5, 8][..], &[2, 3, 6], &[0, 5]]);
    let rows_of = |l: &LocalMatrix| -> Vec<Vec<u32>> {
        (0..l.n_rows())
            .map(|i| l.col_idx()[l.row_ptr()[i]..l.row_ptr()[i + 1]].to_vec())
            .collect()
    };
    // rank 0 (owned 0..4 -> 0..4, ghosts 4 5 8 -> 4 5 6):
    // row 0: 0 1 8; row 1: 0 1 2; row 2: 1 2 3 5; row 3: 2 3 4.
    assert_eq!(
        rows_of(&locals[0]),
        [vec![0, 1, 6], vec![0, 1, 2], vec![1, 2, 3, 5], vec![2, 3, 4]]
    );
    // rank 1 (owned 4 5 -> 0 1, ghosts 2 3 6 -> 2 3 4): row 4: 3 4 5; row 5: 2 4 5 6.
    assert_eq!(rows_of(&locals[1]), [vec![3, 0, 1], vec![2, 0, 1, 4]]);
    // rank 2 (owned 6 7 8 -> 0 1 2, ghosts 0 5 -> 3 4): row 6: 5 6 7; row 7: 6 7 8;
    // row 8: 0 7 8 (the lower-rank ghost first: global order, local 3 before 1).
    assert_eq!(rows_of(&locals[2]), [vec![4, 0, 1], vec![0, 1, 2], vec![3, 1, 2]]);
    // Interior rows: rank 0's row 1 and rank 2's row 7; the rest read ghosts.
    let boundary: Vec<Vec<bool>> = locals
        .iter()
        .map(|l| (0..l.n_rows()).map(|i| l.is_boundary(i)).collect())
        .collect();
    assert_eq!(
        boundary,
        [vec![true, false, true, true], vec![true, true], vec![true, false, true]]
    );
    // Each rank's values are its rows' contiguous slice of the global values.
    for l in &locals {
        let r = l.rows();
        let k = a.pattern().row_ptr()[r.start] * 4..a.pattern().row_ptr()[r.end] * 4;
        assert_eq!(l.values(), &a.values()[k]);
    }

    // The plans, from the global pattern: receives are ranges of the ghost
    // tail per owner; sends list the owned columns each neighbour reads.
    let plans: Vec<HaloPlan> = locals
        .iter()
        .map(|l| HaloPlan::from_global(a.pattern(), &part, &part, l).unwrap())
        .collect();
    assert_eq!(plans[0].recvs(), [link(1, 0, 2), link(2, 2, 1)]);
    assert_eq!(plans[1].recvs(), [link(0, 0, 2), link(2, 2, 1)]);
    assert_eq!(plans[2].recvs(), [link(0, 0, 1), link(1, 1, 1)]);
    assert_eq!(plans[0].sends(), [link(1, 0, 2), link(2, 2, 1)]);
    assert_eq!(
        (plans[0].send_columns(0), plans[0].send_columns(1)),
        (&[2u32, 3][..], &[0u32][..])
    );
    assert_eq!(plans[1].sends(), [link(0, 0, 2), link(2, 2, 1)]);
    assert_eq!(
        (plans[1].send_columns(0), plans[1].send_columns(1)),
        (&[0u32, 1][..], &[1u32][..])
    );
    assert_eq!(plans[2].sends(), [link(0, 0, 1), link(1, 1, 1)]);
    assert_eq!(
        (plans[2].send_columns(0), plans[2].send_columns(1)),
        (&[2u32][..], &[0u32][..])
    );
    assert_eq!(plans[1].neighbours(), [0, 2]);

    // The distributed inspector's two halves give the same plans: each
    // rank's requests, delivered to their owners, become the send lists.
    let requests: Vec<Vec<Vec<u64>>> = locals.iter().map(|l| HaloPlan::requests(l, &part)).collect();
    for (r, l) in locals.iter().enumerate() {
        let wanted: Vec<Vec<u64>> = (0..3).map(|q| requests[q][r].clone()).collect();
        assert_eq!(HaloPlan::from_requests(l, &part, wanted).unwrap(), plans[r]);
    }

    // The exchange lists move the right values: pack each rank's sends from
    // its owned part of x, deliver them into the receivers' ghost tails, and
    // the three local products reproduce the global product bitwise.
    let x: Vec<f64> = (0..18).map(|i| (i as f64 * 0.71).cos() * 3.0 - 0.5).collect();
    let mut want = vec![0.0; 18];
    spmv(&a, &x, &mut want);
    let mut xs: Vec<Vec<f64>> = locals
        .iter()
        .map(|l| {
            let mut v = x[2 * l.rows().start..2 * l.rows().end].to_vec();
            v.resize(2 * l.n_local_cols(), f64::NAN);
            v
        })
        .collect();
    for s in 0..3 {
        for (k, l) in plans[s].sends().iter().enumerate() {
            let packed: Vec<f64> = plans[s]
                .send_columns(k)
                .iter()
                .flat_map(|&c| xs[s][2 * c as usize..2 * c as usize + 2].to_vec())
                .collect();
            assert_eq!(packed.len(), l.len);
            let into = plans[l.rank].recvs().iter().find(|m| m.rank == s).unwrap();
            let n_owned = 2 * locals[l.rank].n_owned_cols();
            xs[l.rank][n_owned + into.start..n_owned + into.start + into.len].copy_from_slice(&packed);
        }
    }
    for (l, xl) in locals.iter().zip(&xs) {
        for c in 0..l.n_local_cols() {
            let g = l.global_col(c);
            assert_eq!(
                &xl[2 * c..2 * c + 2],
                &x[2 * g..2 * g + 2],
                "rank {} column {c}",
                l.rank()
            );
        }
        let mut y = vec![f64::NAN; 2 * l.n_rows()];
        // Interior rows from the owned prefix only, as while the halo is in flight.
        l.product_rows(&xl[..2 * l.n_owned_cols()], &mut y, false);
        l.product_rows(xl, &mut y, true);
        let r = l.rows();
        assert_eq!(
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want[2 * r.start..2 * r.end]
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            "rank {}",
            l.rank()
        );
    }
}

#[test]
fn the_single_rank_path_is_the_global_spmv_and_the_reference_cg_bit_for_bit() {
    let beam = BeamProblem::build(1).unwrap();
    let a = &beam.a;
    let part = Partition::uniform(a.nrows(), 1).unwrap();
    let mut d = DistMatrix::from_global(a, &part, &SingleRank).unwrap();
    assert_eq!((d.local.n_ghosts(), d.local.n_boundary()), (0, 0));
    assert!(d.plan.sends().is_empty() && d.plan.recvs().is_empty());
    let mut x: Vec<f64> = (0..a.scalar_cols()).map(|i| (i as f64 * 0.013).sin()).collect();
    let mut want = vec![0.0; a.scalar_rows()];
    spmv(a, &x, &mut want);
    let mut y = vec![0.0; d.output_len()];
    d.spmv(&SingleRank, &mut x, &mut y);
    assert!(y.iter().zip(&want).all(|(p, q)| p.to_bits() == q.to_bits()));

    let opts = CgOptions::default();
    let mut x_ref = vec![0.0; a.scalar_rows()];
    let ref_report = reference::jacobi_pcg(a, &beam.rhs, &mut x_ref, &opts).unwrap();
    assert!(ref_report.converged && ref_report.iterations > 10, "{ref_report:?}");
    let jacobi = BlockJacobi::local(&d.local).unwrap();
    assert_eq!(jacobi, BlockJacobi::global(a).unwrap());
    let mut ws = CgWorkspace::new(&d);
    let mut x = vec![0.0; a.scalar_rows()];
    let report = jacobi_pcg(&SingleRank, &mut d, &jacobi, &beam.rhs, &mut x, &opts, &mut ws).unwrap();
    assert_eq!(report, ref_report);
    assert!(x.iter().zip(&x_ref).all(|(p, q)| p.to_bits() == q.to_bits()));
}

#[test]
fn beam_slabs_talk_only_to_the_next_slab() {
    // Free nodes are numbered x slowest, so contiguous rows are slabs along x
    // and a rank's ghosts belong to its neighbours along the beam.
    let beam = BeamProblem::build(1).unwrap();
    let part = Partition::uniform(beam.a.nrows(), 4).unwrap();
    for r in 0..4 {
        let l = LocalMatrix::from_global(&beam.a, &part, &part, r).unwrap();
        let plan = HaloPlan::from_global(beam.a.pattern(), &part, &part, &l).unwrap();
        let want: Vec<usize> = [r.wrapping_sub(1), r + 1].into_iter().filter(|&q| q < 4).collect();
        assert_eq!(plan.neighbours(), want, "rank {r}");
        assert!(l.n_boundary() < l.n_rows(), "rank {r} has interior rows");
    }
}

#[test]
fn bad_inputs_are_refused_in_one_sentence() {
    let a = nine();
    let part = Partition::uniform(9, 3).unwrap();
    let other = Partition::uniform(8, 3).unwrap();
    let e = LocalMatrix::from_global(&a, &other, &other, 0).unwrap_err().to_string();
    assert!(e.contains("partitions of 8 rows"), "{e}");
    let l = LocalMatrix::from_global(&a, &part, &part, 1).unwrap();
    // Asking rank 1 for a column it does not own.
    let e = HaloPlan::from_requests(&l, &part, vec![vec![0], vec![], vec![]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not own"), "{e}");
    // A plan for three ranks cannot be built on a single-rank communicator.
    assert!(HaloPlan::build(&l, &part, &SingleRank).is_err());
}
