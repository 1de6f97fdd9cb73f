//! Level-0 aggregate counts of the beam under each hypothesis tried for the
//! gap between our natural-order aggregation (9,991 at k = 16) and the
//! paper's PETSc GAMG hierarchy (7,243): the ledger in `ptap_amg::aggregate`'s
//! documentation. Only the strength graph and the aggregation are built (no
//! prolongator), so k = 16 takes seconds and about 3 GB.
//!
//! ```sh
//! cargo run --release -p ptap-drivers --example aggregation_ledger -- 8
//! cargo run --release -p ptap-drivers --example aggregation_ledger -- 16 library,orders
//! ```
//! Groups (second argument, comma-separated; default all): `library` (the two
//! `Aggregation` options), `orders` (other visiting orders of the same
//! square-graph MIS), `misk` (PETSc's MIS-k with k = 2), `threshold`.
use ptap_amg::aggregate::UNAGGREGATED;
use ptap_amg::{
    aggregate_mis2_in, merge_rank_deficient, petsc_order, strength_graph, Aggregates, Aggregation, AmgOptions,
    StrengthGraph,
};
use ptap_fem::BeamProblem;

/// A uniform random permutation (Fisher-Yates over SplitMix64), for comparison
/// with PETSc's partial shuffle.
fn fisher_yates(n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    perm
}

/// PETSc's partial shuffle with another seed of the same generator: the
/// library's `petsc_order` is seed 0x12345678; this re-implements the loop to
/// vary it.
fn petsc_like_order(n: usize, seed: u64) -> Vec<u32> {
    let mut x = ((seed & 0xFFFF_FFFF) << 16 | 0x330E) & ((1 << 48) - 1);
    let mut perm: Vec<u32> = (0..n as u32).collect();
    let mut drawn = vec![false; n];
    for i in 0..n {
        x = x.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB) & ((1 << 48) - 1);
        let s = ((x as f64 / (1u64 << 48) as f64 * n as f64) as usize).min(n - 1);
        if !drawn[s] && s != i {
            perm.swap(i, s);
            drawn[s] = true;
        }
    }
    perm
}

/// Nodes grouped by Q2 node type (how many of the three grid indices are
/// odd: 0 vertex, 1 edge, 2 face, 3 cell), in `groups` order, natural order
/// within a group: the shape of a DMPlex dof numbering (points by stratum).
fn type_order(k: usize, n: usize, groups: &[usize]) -> Vec<u32> {
    let (ny, nz) = (2 * k + 1, 2 * k + 1);
    let odd = |f: usize| {
        let id = f + ny * nz; // the clamped x = 0 plane is eliminated
        (id / (ny * nz)) % 2 + ((id / nz) % ny) % 2 + (id % nz) % 2
    };
    groups
        .iter()
        .flat_map(|&t| (0..n).filter(move |&f| odd(f) == t).map(|f| f as u32))
        .collect()
}

/// PETSc's MIS-k with k = 2 (`misk.c`): a distance-1 MIS in `order` (each
/// root takes its untaken neighbours), then a distance-1 MIS in natural order
/// on the graph of those aggregates (numbered by root index), composed. An
/// aggregate with no neighbouring aggregate is dropped, as there.
fn misk2(g: &StrengthGraph, order: &[u32]) -> Aggregates {
    let a1 = ptap_amg::aggregate_mis1_in(g, order);
    let members = a1.members();
    let mut top = vec![UNAGGREGATED; a1.count];
    let mut count = 0u32;
    for a in 0..a1.count {
        if top[a] != UNAGGREGATED {
            continue;
        }
        let mut nbrs: Vec<u32> = members[a]
            .iter()
            .flat_map(|&i| g.neighbours(i as usize).map(|(j, _)| a1.of_node[j]))
            .filter(|&b| b != UNAGGREGATED && b as usize != a)
            .collect();
        nbrs.sort_unstable();
        nbrs.dedup();
        if nbrs.is_empty() {
            continue;
        }
        top[a] = count;
        for b in nbrs {
            if top[b as usize] == UNAGGREGATED {
                top[b as usize] = count;
            }
        }
        count += 1;
    }
    Aggregates {
        of_node: a1
            .of_node
            .iter()
            .map(|&a| {
                if a == UNAGGREGATED {
                    UNAGGREGATED
                } else {
                    top[a as usize]
                }
            })
            .collect(),
        count: count as usize,
    }
}

fn report(k: usize, name: &str, aggs: &Aggregates, g: &StrengthGraph, beam: &BeamProblem) {
    let mut merged = aggs.clone();
    let merges = merge_rank_deficient(&mut merged, g, beam.dim, beam.modes, &beam.near_null, 1e-6);
    let sizes: Vec<usize> = merged.members().iter().map(Vec::len).collect();
    println!(
        "k={k:<3} {name:<44} {:>7} roots {:>7} after {merges:>4} merges  unaggregated {:>3}  nodes per aggregate {:>3} / {:>5.1} / {:>3}",
        aggs.count,
        merged.count,
        merged.unaggregated(),
        sizes.iter().min().unwrap_or(&0),
        g.nodes() as f64 / merged.count.max(1) as f64,
        sizes.iter().max().unwrap_or(&0),
    );
}

fn main() {
    let k: usize = std::env::args()
        .nth(1)
        .map_or(8, |s| s.parse().expect("k is a whole number"));
    let groups = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "library,orders,misk,threshold".into());
    let want = |g: &str| groups.split(',').any(|x| x == g);
    let beam = BeamProblem::build(k).expect("the beam builds");
    let theta = AmgOptions::default().threshold_at(0);
    let g = strength_graph(&beam.a, theta);
    let n = g.nodes();
    println!(
        "k={k}: {n} nodes, strength graph at theta {theta}: {:.1} neighbours per node (A: {:.1})",
        g.pattern.nnzb() as f64 / n as f64,
        beam.a.pattern().nnzb() as f64 / n as f64
    );
    if want("library") {
        for a in Aggregation::ALL {
            report(
                k,
                &format!("library {a} (aggressive)"),
                &a.aggregate(&g, true),
                &g,
                &beam,
            );
        }
    }
    if want("orders") {
        for seed in [1u64, 2] {
            let order = petsc_like_order(n, seed);
            report(
                k,
                &format!("square MIS, PETSc shuffle seed {seed}"),
                &aggregate_mis2_in(&g, &order),
                &g,
                &beam,
            );
        }
        for seed in [1u64, 2, 3] {
            let order = fisher_yates(n, seed);
            report(
                k,
                &format!("square MIS, uniform shuffle seed {seed}"),
                &aggregate_mis2_in(&g, &order),
                &g,
                &beam,
            );
        }
        // -pc_gamg_mis_k_minimum_degree_ordering: the shuffled order sorted by degree.
        let mut order = petsc_order(n);
        order.sort_by_key(|&i| g.pattern.row(i as usize).len());
        report(
            k,
            "square MIS, minimum degree first",
            &aggregate_mis2_in(&g, &order),
            &g,
            &beam,
        );
        for (name, groups) in [
            ("vertex,edge,face,cell", [0usize, 1, 2, 3]),
            ("cell,vertex,face,edge", [3, 0, 2, 1]),
            ("cell,face,edge,vertex", [3, 2, 1, 0]),
        ] {
            let order = type_order(k, n, &groups);
            report(
                k,
                &format!("square MIS, by node type {name}"),
                &aggregate_mis2_in(&g, &order),
                &g,
                &beam,
            );
        }
    }
    if want("misk") {
        let natural: Vec<u32> = (0..n as u32).collect();
        report(k, "MIS-k (k = 2), natural order", &misk2(&g, &natural), &g, &beam);
        report(
            k,
            "MIS-k (k = 2), PETSc shuffle",
            &misk2(&g, &petsc_order(n)),
            &g,
            &beam,
        );
    }
    if want("threshold") {
        for t in [0.0, 0.02, 0.08] {
            let gt = strength_graph(&beam.a, t);
            report(
                k,
                &format!("library petsc, theta {t}"),
                &Aggregation::Petsc.aggregate(&gt, true),
                &gt,
                &beam,
            );
        }
    }
}
