//! Pattern sizes, loads, near-null space, determinism and errors.
use ptap_fem::{
    beam_block_count, beam_block_count_in, beam_free_nodes, beam_free_nodes_in, estimate_bytes, estimate_bytes_in,
    modulus_from_fn, rigid_body_modes, traction_rhs, uniform_modulus, Assembler, BeamProblem, BoxMesh, Constraint,
    FemError, N_RIGID_MODES,
};
use ptap_sparse::BlockCsr;

#[test]
fn formula_values_at_paper_size() {
    assert_eq!(beam_block_count(16), 21_233_916);
    assert_eq!(beam_free_nodes(16), 348_480);
    assert_eq!(beam_block_count(1), 76 * 81);
    assert!(estimate_bytes(16) > beam_block_count(16) * 72 * 4);
    assert!(estimate_bytes(32) > 7 * estimate_bytes(16));
    // 2D: 20k (2k+1) nodes, (80k - 4)(8k + 1) blocks.
    assert_eq!(beam_free_nodes_in(2, 16), 10_560);
    assert_eq!(beam_block_count_in(2, 1), 76 * 9);
    assert_eq!(beam_block_count_in(3, 16), beam_block_count(16));
    assert!(estimate_bytes_in(2, 16) > beam_block_count_in(2, 16) * 32 * 4);
    assert!(estimate_bytes_in(2, 16) < estimate_bytes(4));
}

#[test]
fn beam_pattern_matches_block_count_formula() {
    for (dim, k) in (1..=4).flat_map(|k| [(3usize, k), (2, k)]) {
        // Arrange
        let mesh = BoxMesh::beam_in(dim, k).unwrap();
        // Act
        let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
        let p = asm.pattern();
        // Assert
        assert_eq!(asm.n_free() as u64, beam_free_nodes_in(dim, k), "dim {dim}, k = {k}");
        assert_eq!(p.nrows() as u64, beam_free_nodes_in(dim, k));
        assert_eq!(p.nnzb() as u64, beam_block_count_in(dim, k), "dim {dim}, k = {k}");
        assert!(p.is_structurally_symmetric());
        assert!(p.diagonal_positions().iter().all(|&d| d != usize::MAX));
        // Clamped nodes are exactly the first ny*nz, free index = id - ny*nz.
        let plane = (2 * k + 1).pow(dim as u32 - 1);
        for (id, &f) in asm.free_of_node().iter().enumerate() {
            let expect = if id < plane { u32::MAX } else { (id - plane) as u32 };
            assert_eq!(f, expect);
        }
    }
}

#[test]
fn unconstrained_pattern_couples_exactly_nodes_sharing_an_element() {
    // Arrange: brute force over all node pairs of a small mesh.
    let mesh = BoxMesh::new(3, 2, 1, [0.0; 3], [1.0; 3]).unwrap();
    let n = mesh.n_nodes();
    let mut shared = vec![false; n * n];
    for e in 0..mesh.n_elements() {
        let nodes = mesh.element_nodes(e);
        for &a in &nodes {
            for &b in &nodes {
                shared[a as usize * n + b as usize] = true;
            }
        }
    }
    // Act
    let asm = Assembler::new(&mesh, Constraint::None).unwrap();
    let p = asm.pattern();
    // Assert
    assert_eq!(p.nnzb(), shared.iter().filter(|&&s| s).count());
    for i in 0..n {
        for j in 0..n {
            assert_eq!(p.find(i, j).is_some(), shared[i * n + j], "({i}, {j})");
        }
    }
}

#[test]
fn element_colours_partition_elements_and_share_no_node() {
    for mesh in [
        BoxMesh::new(4, 3, 5, [0.0; 3], [1.0; 3]).unwrap(),
        BoxMesh::new_2d(5, 3, [0.0; 2], [1.0; 2]).unwrap(),
    ] {
        assert_colours_partition(&mesh);
    }
}

fn assert_colours_partition(mesh: &BoxMesh) {
    let asm = Assembler::new(mesh, Constraint::ClampXMin).unwrap();
    let mut seen = vec![0u32; mesh.n_elements()];
    for c in 0..8 {
        let mut owner = vec![false; mesh.n_nodes()];
        for &e in asm.colour(c) {
            seen[e as usize] += 1;
            for n in mesh.element_nodes(e as usize) {
                assert!(!owner[n as usize], "colour {c} shares node {n}");
                owner[n as usize] = true;
            }
        }
    }
    assert!(seen.iter().all(|&s| s == 1));
}

#[test]
fn traction_resultant_is_unit_force_and_one_sixth_torque() {
    for k in [1usize, 2] {
        // Arrange
        let mesh = BoxMesh::beam(k).unwrap();
        let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
        // Act
        let f = traction_rhs(&mesh, &asm);
        // Assert
        assert_eq!(f.len(), 3 * asm.n_free());
        let mut sum = [0.0; 3];
        let mut torque = 0.0;
        for (r, &node) in asm.node_of_free().iter().enumerate() {
            let [x, y, z] = mesh.node_coords(node as usize);
            let fr = &f[3 * r..3 * r + 3];
            if x != 10.0 {
                assert!(fr.iter().all(|&v| v == 0.0), "load off the end face");
            }
            for c in 0..3 {
                sum[c] += fr[c];
            }
            torque += y * fr[2] - z * fr[1];
        }
        assert!((sum[0] - 1.0).abs() < 1e-14, "k = {k}: axial force {}", sum[0]);
        assert!(sum[1].abs() < 1e-14 && sum[2].abs() < 1e-14);
        assert!((torque - 1.0 / 6.0).abs() < 1e-14, "k = {k}: torque {torque}");
    }
}

#[test]
fn plane_strain_edge_load_is_unit_force_and_one_twelfth_moment() {
    for k in [1usize, 3] {
        // Arrange
        let mesh = BoxMesh::beam_in(2, k).unwrap();
        let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
        // Act
        let f = traction_rhs(&mesh, &asm);
        // Assert: t = (1 - y, 0) on x = 10.
        assert_eq!(f.len(), 2 * asm.n_free());
        let (mut fx, mut fy, mut moment) = (0.0, 0.0, 0.0);
        for (r, &node) in asm.node_of_free().iter().enumerate() {
            let [x, y, z] = mesh.node_coords(node as usize);
            assert_eq!(z, 0.0);
            let fr = &f[2 * r..2 * r + 2];
            if x != 10.0 {
                assert!(fr.iter().all(|&v| v == 0.0), "load off the end edge");
            }
            fx += fr[0];
            fy += fr[1];
            moment += x * fr[1] - y * fr[0];
        }
        assert!((fx - 1.0).abs() < 1e-14, "k = {k}: axial force {fx}");
        assert_eq!(fy, 0.0);
        assert!((moment - 1.0 / 12.0).abs() < 1e-14, "k = {k}: moment {moment}");
    }
}

#[test]
fn near_null_space_is_orthonormal_with_six_columns_in_3d_and_three_in_2d() {
    for (dim, nm, k) in [(3usize, N_RIGID_MODES, 1usize), (3, 6, 2), (2, 3, 1), (2, 3, 4)] {
        // Arrange
        let mesh = BoxMesh::beam_in(dim, k).unwrap();
        let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
        // Act
        let b = rigid_body_modes(&mesh, &asm);
        // Assert
        assert_eq!(b.len(), asm.n_dofs() * nm);
        for p in 0..nm {
            for q in 0..nm {
                let d: f64 = b.chunks_exact(nm).map(|r| r[p] * r[q]).sum();
                let expect = if p == q { 1.0 } else { 0.0 };
                assert!(
                    (d - expect).abs() < 1e-13,
                    "dim {dim}, k = {k}: (B^T B)[{p}][{q}] = {d}"
                );
            }
        }
        // The first column is the normalized x translation.
        let v = 1.0 / (asm.n_free() as f64).sqrt();
        assert!(b
            .chunks_exact(dim * nm)
            .all(|r| (r[0] - v).abs() < 1e-15 && (1..dim).all(|c| r[c * nm] == 0.0)));
    }
}

fn sequential_reference(mesh: &BoxMesh, asm: &Assembler, modulus: &[f64]) -> BlockCsr {
    let mut a = asm.zero_matrix();
    let p = asm.pattern();
    let k_ref = asm.reference_stiffness();
    for (e, &s) in modulus.iter().enumerate() {
        let nodes = mesh.element_nodes(e);
        for a_loc in 0..nodes.len() {
            for b_loc in 0..nodes.len() {
                let (r, c) = (
                    asm.free_of_node()[nodes[a_loc] as usize],
                    asm.free_of_node()[nodes[b_loc] as usize],
                );
                if r == u32::MAX || c == u32::MAX {
                    continue;
                }
                let blk = p.find(r as usize, c as usize).unwrap();
                for (d, s_k) in a.block_mut(blk).iter_mut().zip(k_ref.block(a_loc, b_loc)) {
                    *d += s * s_k;
                }
            }
        }
    }
    a
}

#[test]
fn parallel_assembly_is_deterministic_and_matches_sequential_reference() {
    for dim in [3, 2] {
        assert_parallel_assembly_matches_reference(&BoxMesh::beam_in(dim, 2).unwrap());
    }
}

fn assert_parallel_assembly_matches_reference(mesh: &BoxMesh) {
    // Arrange: a varying modulus so every element contributes differently.
    let mesh = mesh.clone();
    let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
    let modulus = modulus_from_fn(&mesh, |[x, y, z]| 1.0 + 0.3 * x + y * z + 0.1 * (7.0 * x).sin());
    let run = |threads: usize, coloured: bool| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut a = asm.zero_matrix();
        a.values_mut().fill(f64::NAN); // assembly must overwrite, not accumulate
        pool.install(|| {
            if coloured {
                asm.assemble_coloured(&modulus, &mut a)
            } else {
                asm.assemble(&modulus, &mut a)
            }
        })
        .unwrap();
        a
    };
    // Act
    let a1 = run(4, false);
    let a2 = run(4, false);
    let a3 = run(1, false);
    let c4 = run(4, true);
    let c1 = run(1, true);
    let reference = sequential_reference(&mesh, &asm, &modulus);
    // Assert: bitwise equal across runs, thread counts and the two executors.
    let bits = |a: &BlockCsr| a.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a1), bits(&a2));
    assert_eq!(bits(&a1), bits(&a3));
    assert_eq!(bits(&a1), bits(&c4));
    assert_eq!(bits(&a1), bits(&c1));
    let amax = reference.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = a1
        .values()
        .iter()
        .zip(reference.values())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(diff <= 1e-14 * amax, "parallel vs sequential: {diff:e}");
}

#[test]
fn beam_problem_bundles_consistent_pieces() {
    for (dim, modes) in [(3usize, 6usize), (2, 3)] {
        let p = BeamProblem::build_in(dim, 1).unwrap();
        assert_eq!((p.dim, p.modes), (dim, modes));
        assert_eq!(p.a.block_shape(), (dim, dim));
        assert_eq!(p.a.nrows(), p.assembler.n_free());
        assert_eq!(p.rhs.len(), dim * p.assembler.n_free());
        assert_eq!(p.near_null.len(), dim * modes * p.assembler.n_free());
        assert!(p.timings.setup_s >= 0.0 && p.timings.assembly_s >= 0.0);
        let mut fresh = p.assembler.zero_matrix();
        p.assembler.assemble(&uniform_modulus(&p.mesh), &mut fresh).unwrap();
        assert_eq!(fresh.values(), p.a.values());
    }
}

#[test]
fn invalid_inputs_are_rejected_with_typed_errors() {
    assert_eq!(BoxMesh::beam(0).unwrap_err(), FemError::ZeroBeamSize);
    assert_eq!(BoxMesh::beam_in(4, 1).unwrap_err(), FemError::BadDimension { dim: 4 });
    assert!(matches!(
        BoxMesh::new_2d(1, 0, [0.0; 2], [1.0; 2]),
        Err(FemError::EmptyMesh { .. })
    ));
    assert!(matches!(
        BoxMesh::new_2d(1, 1, [0.0; 2], [1.0, f64::NAN]),
        Err(FemError::BadBox { .. })
    ));
    assert!(matches!(
        BoxMesh::new(0, 1, 1, [0.0; 3], [1.0; 3]),
        Err(FemError::EmptyMesh { .. })
    ));
    assert!(matches!(
        BoxMesh::new(1, 1, 1, [0.0; 3], [1.0, 0.0, 1.0]),
        Err(FemError::BadBox { .. })
    ));
    assert!(matches!(
        BoxMesh::new(1 << 20, 1 << 20, 1, [0.0; 3], [1.0; 3]),
        Err(FemError::TooLarge { .. })
    ));
    let mesh = BoxMesh::beam(1).unwrap();
    assert!(matches!(
        Assembler::with_poisson_ratio(&mesh, Constraint::None, 0.5),
        Err(FemError::BadPoissonRatio { .. })
    ));
    let asm = Assembler::new(&mesh, Constraint::ClampXMin).unwrap();
    let mut a = asm.zero_matrix();
    assert_eq!(
        asm.assemble(&[1.0; 3], &mut a).unwrap_err(),
        FemError::ModulusLength { got: 3, expected: 10 }
    );
    let mut m = uniform_modulus(&mesh);
    m[4] = -1.0;
    assert_eq!(
        asm.assemble(&m, &mut a).unwrap_err(),
        FemError::BadModulus {
            element: 4,
            value: -1.0
        }
    );
    m[4] = f64::NAN;
    assert!(matches!(
        asm.assemble(&m, &mut a),
        Err(FemError::BadModulus { element: 4, .. })
    ));
    let other = Assembler::new(&mesh, Constraint::None).unwrap();
    let mut wrong = other.zero_matrix();
    assert_eq!(
        asm.assemble(&uniform_modulus(&mesh), &mut wrong).unwrap_err(),
        FemError::MatrixMismatch
    );
}

/// `cargo test -p ptap-fem --release -- --ignored --nocapture` (PTAP_FEM_K picks k, default 8).
#[test]
#[ignore]
fn timing_beam_setup_and_assembly() {
    let k: usize = std::env::var("PTAP_FEM_K")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut p = BeamProblem::build(k).unwrap();
    let modulus = uniform_modulus(&p.mesh);
    let t = std::time::Instant::now();
    p.reassemble(&modulus).unwrap();
    let repeat = t.elapsed().as_secs_f64();
    let mut c = p.a.clone();
    let t = std::time::Instant::now();
    p.assembler.assemble_coloured(&modulus, &mut c).unwrap();
    let coloured = t.elapsed().as_secs_f64();
    assert_eq!(c.values(), p.a.values());
    println!(
        "k = {k}: {} block rows, {} blocks (formula {}), threads {}, setup {:.3} s, assembly {:.3} s \
         (repeat {repeat:.3} s, coloured scatter {coloured:.3} s), estimate {:.2} GB",
        p.a.nrows(),
        p.a.nnzb(),
        beam_block_count(k),
        rayon::current_num_threads(),
        p.timings.setup_s,
        p.timings.assembly_s,
        estimate_bytes(k) as f64 / 1e9
    );
    assert_eq!(p.a.nnzb() as u64, beam_block_count(k));
}
