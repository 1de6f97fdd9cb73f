//! Contiguous block-row ranges, one per rank.
use crate::DistError;
use std::ops::Range;

/// Rank `r` owns block rows `starts[r]..starts[r + 1]` (and the same block
/// columns of a square operator: the vector is split like the rows).
///
/// Contiguous ranges keep the global numbering's locality: the beam numbers
/// its nodes with x slowest (`ptap_fem::mesh`), and the free nodes keep that
/// order, so a rank's rows are a slab of x-layers (a layer may be cut at a
/// slab's ends) and its ghosts are the layers of its one or two neighbours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    starts: Vec<usize>,
}

impl Partition {
    /// Checks `starts`: at least two entries, from 0, non-decreasing.
    pub fn new(starts: Vec<usize>) -> Result<Self, DistError> {
        if starts.len() < 2 || starts[0] != 0 || starts.windows(2).any(|w| w[1] < w[0]) {
            return Err(DistError::Partition {
                why: format!("row starts {starts:?} must begin at 0, not decrease and name at least one rank"),
            });
        }
        Ok(Self { starts })
    }

    /// `nrows` rows in `ranks` ranges whose lengths differ by at most one
    /// (the first `nrows % ranks` ranks take one more).
    pub fn uniform(nrows: usize, ranks: usize) -> Result<Self, DistError> {
        if ranks == 0 {
            return Err(DistError::Partition {
                why: "a partition needs at least one rank".into(),
            });
        }
        let (q, rem) = (nrows / ranks, nrows % ranks);
        let mut starts = Vec::with_capacity(ranks + 1);
        starts.push(0);
        for r in 0..ranks {
            starts.push(starts[r] + q + usize::from(r < rem));
        }
        Self::new(starts)
    }

    /// The row starts, `ranks() + 1` of them.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }
    /// Global block rows.
    pub fn nrows(&self) -> usize {
        self.starts[self.ranks()]
    }
    /// The rows rank `r` owns.
    pub fn range(&self, r: usize) -> Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }
    /// The rank that owns global row (or column) `g` (`g < nrows()`).
    pub fn owner(&self, g: usize) -> usize {
        debug_assert!(g < self.nrows());
        // The last start <= g; empty ranges share a start, so take the last.
        self.starts.partition_point(|&s| s <= g) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_ranges_cover_the_rows_and_owners_agree() {
        let p = Partition::uniform(10, 3).unwrap();
        assert_eq!(p.starts(), &[0, 4, 7, 10]);
        let owners: Vec<usize> = (0..10).map(|g| p.owner(g)).collect();
        assert_eq!(owners, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // More ranks than rows: some ranks own nothing.
        let p = Partition::uniform(2, 4).unwrap();
        assert_eq!(p.starts(), &[0, 1, 2, 2, 2]);
        assert_eq!((p.owner(0), p.owner(1)), (0, 1));
        let p = Partition::new(vec![0, 0, 3, 3, 5]).unwrap();
        assert_eq!((p.owner(0), p.owner(2), p.owner(3)), (1, 1, 3));
    }

    #[test]
    fn malformed_starts_are_refused() {
        for s in [vec![], vec![0], vec![1, 3], vec![0, 3, 2]] {
            assert!(Partition::new(s).is_err());
        }
        assert!(Partition::uniform(5, 0).is_err());
    }
}
