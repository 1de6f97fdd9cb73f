//! Aggregation (amg.md step 2): greedy maximal independent sets in natural order.
use crate::strength::StrengthGraph;
use ptap_sparse::dense::thin_qr;

/// Marks a node that belongs to no aggregate (its row of `P` is zero).
pub const UNAGGREGATED: u32 = u32::MAX;

/// A partition of (some of) the nodes into aggregates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregates {
    /// Aggregate of each node, or [`UNAGGREGATED`].
    pub of_node: Vec<u32>,
    /// Number of aggregates (`0..count` are all non-empty).
    pub count: usize,
}

impl Aggregates {
    /// Nodes of each aggregate, in increasing node order.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut m = vec![Vec::new(); self.count];
        for (i, &a) in self.of_node.iter().enumerate() {
            if a != UNAGGREGATED {
                m[a as usize].push(i as u32);
            }
        }
        m
    }
    /// Number of nodes left out of every aggregate.
    pub fn unaggregated(&self) -> usize {
        self.of_node.iter().filter(|&&a| a == UNAGGREGATED).count()
    }
}

/// Aggressive coarsening: a greedy MIS on the distance-2 graph. Visiting nodes in
/// natural order, an untaken node with strong neighbours becomes a root and takes
/// every untaken node within distance 2. Then every non-root node adjacent to a
/// root joins an adjacent root (its own if adjacent, else the most strongly
/// connected, ties to the earlier root), which keeps aggregates compact.
pub fn aggregate_mis2(g: &StrengthGraph) -> Aggregates {
    let n = g.nodes();
    let mut of = vec![UNAGGREGATED; n];
    let mut root_of_agg: Vec<u32> = Vec::new();
    let mut is_root = vec![false; n];
    for i in 0..n {
        if of[i] != UNAGGREGATED || !g.has_neighbours(i) {
            continue;
        }
        let a = root_of_agg.len() as u32;
        root_of_agg.push(i as u32);
        is_root[i] = true;
        of[i] = a;
        for (j, _) in g.neighbours(i) {
            if of[j] == UNAGGREGATED {
                of[j] = a;
            }
        }
        for (j, _) in g.neighbours(i) {
            for (l, _) in g.neighbours(j) {
                if of[l] == UNAGGREGATED {
                    of[l] = a;
                }
            }
        }
    }
    // Distance-1 neighbours of roots go to an adjacent root.
    for j in 0..n {
        if is_root[j] || of[j] == UNAGGREGATED {
            continue;
        }
        let own_root = root_of_agg[of[j] as usize] as usize;
        let mut best: Option<(f64, usize)> = None;
        let mut own_adjacent = false;
        for (r, w) in g.neighbours(j) {
            if !is_root[r] {
                continue;
            }
            if r == own_root {
                own_adjacent = true;
                break;
            }
            if best.is_none_or(|(bw, br)| w > bw || (w == bw && r < br)) {
                best = Some((w, r));
            }
        }
        if !own_adjacent {
            if let Some((_, r)) = best {
                of[j] = of[r];
            }
        }
    }
    Aggregates {
        of_node: of,
        count: root_of_agg.len(),
    }
}

/// Standard coarsening: a greedy MIS on the strength graph in natural order;
/// each root takes its untaken strong neighbours.
pub fn aggregate_mis1(g: &StrengthGraph) -> Aggregates {
    let n = g.nodes();
    let mut of = vec![UNAGGREGATED; n];
    let mut count = 0u32;
    for i in 0..n {
        if of[i] != UNAGGREGATED || !g.has_neighbours(i) {
            continue;
        }
        of[i] = count;
        for (j, _) in g.neighbours(i) {
            if of[j] == UNAGGREGATED {
                of[j] = count;
            }
        }
        count += 1;
    }
    Aggregates {
        of_node: of,
        count: count as usize,
    }
}

/// Whether the stacked near-null rows of `nodes` (block size `b`, `nm` modes,
/// `near_null` row-major `n*b x nm`) have full column rank `nm`.
pub fn carries_all_modes(nodes: &[u32], b: usize, nm: usize, near_null: &[f64], tol: f64) -> bool {
    if nodes.len() * b < nm {
        return false;
    }
    let mut stack = Vec::with_capacity(nodes.len() * b * nm);
    for &i in nodes {
        let i = i as usize;
        stack.extend_from_slice(&near_null[i * b * nm..(i + 1) * b * nm]);
    }
    thin_qr(nodes.len() * b, nm, &stack, tol).2 == nm
}

/// Merges every aggregate too small to carry all `nm` near-null modes (rank
/// deficient stacked block) into the neighbouring aggregate it is most strongly
/// connected to (ties to the smaller index), until none is left; one with no
/// aggregated neighbour is dissolved (its nodes become unaggregated). Aggregates
/// are then renumbered in order of first appearance among the old numbers.
/// Returns the number of merges performed.
pub fn merge_rank_deficient(
    aggs: &mut Aggregates,
    g: &StrengthGraph,
    b: usize,
    nm: usize,
    near_null: &[f64],
    tol: f64,
) -> usize {
    let mut members = aggs.members();
    let mut merges = 0;
    loop {
        let mut changed = false;
        for a in 0..members.len() {
            if members[a].is_empty() || carries_all_modes(&members[a], b, nm, near_null, tol) {
                continue;
            }
            // Sum strengths from this aggregate to each neighbouring aggregate.
            let mut best: Option<(f64, u32)> = None;
            let mut acc: Vec<(u32, f64)> = Vec::new();
            for &i in &members[a] {
                for (j, w) in g.neighbours(i as usize) {
                    let t = aggs.of_node[j];
                    if t != UNAGGREGATED && t as usize != a {
                        match acc.iter_mut().find(|(x, _)| *x == t) {
                            Some(e) => e.1 += w,
                            None => acc.push((t, w)),
                        }
                    }
                }
            }
            for &(t, w) in &acc {
                if best.is_none_or(|(bw, bt)| w > bw || (w == bw && t < bt)) {
                    best = Some((w, t));
                }
            }
            let moved = std::mem::take(&mut members[a]);
            let target = best.map(|(_, t)| t);
            for &i in &moved {
                aggs.of_node[i as usize] = target.unwrap_or(UNAGGREGATED);
            }
            if let Some(t) = target {
                let t = t as usize;
                members[t].extend_from_slice(&moved);
                members[t].sort_unstable();
                merges += 1;
            }
            changed = true;
        }
        if !changed {
            break;
        }
    }
    // Renumber densely, keeping the old order.
    let mut new_id = vec![UNAGGREGATED; members.len()];
    let mut count = 0u32;
    for (a, m) in members.iter().enumerate() {
        if !m.is_empty() {
            new_id[a] = count;
            count += 1;
        }
    }
    for x in aggs.of_node.iter_mut() {
        if *x != UNAGGREGATED {
            *x = new_id[*x as usize];
        }
    }
    aggs.count = count as usize;
    merges
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptap_sparse::BlockPattern;

    /// A path graph 0-1-2-...-(n-1) with unit weights.
    fn path(n: usize) -> StrengthGraph {
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                let mut r = vec![i as u32];
                if i > 0 {
                    r.push(i as u32 - 1);
                }
                if i + 1 < n {
                    r.push(i as u32 + 1);
                }
                r
            })
            .collect();
        let pattern = BlockPattern::from_rows(n, &rows).unwrap();
        let weights = vec![1.0; pattern.nnzb()];
        StrengthGraph { pattern, weights }
    }

    #[test]
    fn mis1_on_a_path_pairs_nodes() {
        // Root 0 takes 1; 2 is untaken so it is a root and takes 3; and so on.
        let a = aggregate_mis1(&path(7));
        assert_eq!(a.of_node, vec![0, 0, 1, 1, 2, 2, 3]);
        assert_eq!(a.count, 4);
    }

    #[test]
    fn mis2_on_a_path_is_distance_two_independent_and_compact() {
        let a = aggregate_mis2(&path(11));
        // Roots 0, 3, 6, 9 (pairwise distance 3). Root 0 takes 1 and 2, but 2 is
        // adjacent to root 3 and not to 0, so the distance-1 pass moves it there.
        assert_eq!(a.of_node, vec![0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
        assert_eq!(a.count, 4);
    }

    #[test]
    fn isolated_nodes_stay_unaggregated() {
        let pattern = BlockPattern::from_rows(3, &[vec![0], vec![1, 2], vec![1, 2]]).unwrap();
        let g = StrengthGraph {
            weights: vec![1.0; pattern.nnzb()],
            pattern,
        };
        let a = aggregate_mis1(&g);
        assert_eq!(a.of_node, vec![UNAGGREGATED, 0, 0]);
        assert_eq!(a.unaggregated(), 1);
    }

    #[test]
    fn deficient_aggregates_merge_into_neighbours() {
        // 1 dof per node, 2 modes (constant and linear): one node carries rank 1.
        let g = path(5);
        let nn: Vec<f64> = (0..5).flat_map(|i| [1.0, i as f64]).collect();
        let mut a = Aggregates {
            of_node: vec![0, 0, 1, 2, 2],
            count: 3,
        };
        let merges = merge_rank_deficient(&mut a, &g, 1, 2, &nn, 1e-8);
        assert_eq!(merges, 1);
        assert_eq!(a.count, 2);
        // Node 2 touches aggregate 0 (node 1) and 2 (node 3) equally: the smaller wins.
        assert_eq!(a.of_node, vec![0, 0, 0, 1, 1]);
    }
}
