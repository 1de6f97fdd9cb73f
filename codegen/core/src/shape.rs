//! Declared block shapes and their validation.
use std::fmt;

/// Largest block dimension a declaration may use. The GPU kernels keep one
/// output column of a block per thread in registers (`max(bf, bc)` doubles per
/// stage, plus the loaded block row), and the CPU block inverse pivots over at
/// most this many rows: 16 keeps both inside the register file of one lane.
pub const MAX_BLOCK_DIM: usize = 16;

/// A block-shape set: fine operator `bf x bf`, prolongator `bf x bc`, coarse
/// operator `bc x bc` (the restriction is `bc x bf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeSet {
    pub bf: usize,
    pub bc: usize,
}

/// Why a declaration is rejected; each message names the block and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// Not `fine / prolongator / coarse`, each `RxC`.
    Syntax { found: String },
    /// A dimension is zero.
    ZeroDimension { block: String },
    /// A dimension exceeds [`MAX_BLOCK_DIM`].
    TooLarge { block: String, dim: usize },
    /// The fine block is not square.
    FineNotSquare { block: String },
    /// The prolongator's row count differs from the fine block size.
    ProlongatorRows { block: String, bf: usize },
    /// The coarse block is not `bc x bc`.
    CoarseShape { block: String, bc: usize },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Syntax { found } => write!(
                f,
                "expected three block shapes `fine / prolongator / coarse` such as `3x3 / 3x6 / 6x6`, found `{found}`"
            ),
            ShapeError::ZeroDimension { block } => write!(
                f,
                "block `{block}` has a zero dimension; every block dimension must be between 1 and {MAX_BLOCK_DIM}"
            ),
            ShapeError::TooLarge { block, dim } => write!(
                f,
                "block `{block}`: dimension {dim} exceeds {MAX_BLOCK_DIM}, the most the GPU kernels' register \
                 accumulator holds (one thread keeps one output column of a block in registers)"
            ),
            ShapeError::FineNotSquare { block } => {
                write!(f, "the fine block `{block}` must be square (`bf x bf`)")
            }
            ShapeError::ProlongatorRows { block, bf } => write!(
                f,
                "the prolongator block `{block}` must have as many rows as the fine block ({bf}): write `{bf}xN`"
            ),
            ShapeError::CoarseShape { block, bc } => write!(
                f,
                "the coarse block `{block}` must be `{bc}x{bc}` (the prolongator has {bc} columns)"
            ),
        }
    }
}

impl std::error::Error for ShapeError {}

fn block_name(b: (usize, usize)) -> String {
    format!("{}x{}", b.0, b.1)
}

/// Parses one `RxC` block (spaces allowed around `x`).
fn parse_block(s: &str) -> Option<(usize, usize)> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let (r, c) = s.split_once(['x', 'X'])?;
    Some((r.parse().ok()?, c.parse().ok()?))
}

impl ShapeSet {
    /// A validated set for `bf x bf` fine and `bc x bc` coarse blocks.
    pub fn new(bf: usize, bc: usize) -> Result<Self, ShapeError> {
        Self::from_blocks((bf, bf), (bf, bc), (bc, bc))
    }

    /// Validates the three declared blocks: dimensions in `1..=MAX_BLOCK_DIM`,
    /// fine square, prolongator `bf x bc`, coarse `bc x bc`.
    pub fn from_blocks(
        fine: (usize, usize),
        prolongator: (usize, usize),
        coarse: (usize, usize),
    ) -> Result<Self, ShapeError> {
        for b in [fine, prolongator, coarse] {
            if b.0 == 0 || b.1 == 0 {
                return Err(ShapeError::ZeroDimension { block: block_name(b) });
            }
            let dim = b.0.max(b.1);
            if dim > MAX_BLOCK_DIM {
                return Err(ShapeError::TooLarge {
                    block: block_name(b),
                    dim,
                });
            }
        }
        if fine.0 != fine.1 {
            return Err(ShapeError::FineNotSquare {
                block: block_name(fine),
            });
        }
        let (bf, bc) = (fine.0, prolongator.1);
        if prolongator.0 != bf {
            return Err(ShapeError::ProlongatorRows {
                block: block_name(prolongator),
                bf,
            });
        }
        if coarse != (bc, bc) {
            return Err(ShapeError::CoarseShape {
                block: block_name(coarse),
                bc,
            });
        }
        Ok(ShapeSet { bf, bc })
    }

    /// Parses and validates a declaration such as `"3x3 / 3x6 / 6x6"`.
    pub fn parse(decl: &str) -> Result<Self, ShapeError> {
        let syntax = || ShapeError::Syntax {
            found: decl.trim().to_string(),
        };
        let blocks: Vec<&str> = decl.split('/').collect();
        if blocks.len() != 3 {
            return Err(syntax());
        }
        let b: Vec<(usize, usize)> = blocks
            .iter()
            .map(|s| parse_block(s).ok_or_else(syntax))
            .collect::<Result<_, _>>()?;
        Self::from_blocks(b[0], b[1], b[2])
    }

    /// The declaration, `"3x3 / 3x6 / 6x6"`.
    pub fn declaration(&self) -> String {
        let (f, c) = (self.bf, self.bc);
        format!("{f}x{f} / {f}x{c} / {c}x{c}")
    }

    /// A file and module stem, `"3x3_3x6_6x6"`.
    pub fn stem(&self) -> String {
        let (f, c) = (self.bf, self.bc);
        format!("{f}x{f}_{f}x{c}_{c}x{c}")
    }

    /// The Galerkin products `(bf, bc)` the set serves: the fine level's, and
    /// `(bc, bc)` on every coarser level of a smoothed-aggregation hierarchy.
    pub fn products(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.bf, self.bc), (self.bc, self.bc)];
        v.dedup();
        v
    }

    /// Distinct block shapes `r x c` of the set's matrices: `A`, `P`, `R = P^T`, `A_c`.
    pub fn block_shapes(&self) -> Vec<(usize, usize)> {
        let (f, c) = (self.bf, self.bc);
        let mut v = vec![(f, f), (f, c), (c, f), (c, c)];
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Distinct square block sizes (the point-block Jacobi blocks): `bf` and `bc`.
    pub fn square_blocks(&self) -> Vec<usize> {
        let mut v = vec![self.bf, self.bc];
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_declarations() {
        assert_eq!(ShapeSet::parse("3x3 / 3x6 / 6x6"), Ok(ShapeSet { bf: 3, bc: 6 }));
        assert_eq!(ShapeSet::parse("1x1/1x1/1x1"), Ok(ShapeSet { bf: 1, bc: 1 }));
        assert_eq!(
            ShapeSet::parse(" 4 x 4 / 4x10 / 10x10 "),
            Ok(ShapeSet { bf: 4, bc: 10 })
        );
        assert_eq!(ShapeSet { bf: 2, bc: 3 }.declaration(), "2x2 / 2x3 / 3x3");
        assert_eq!(ShapeSet { bf: 2, bc: 3 }.stem(), "2x2_2x3_3x3");
    }

    #[test]
    fn rejects_invalid_declarations_with_the_reason() {
        let e = ShapeSet::parse("0x0 / 0x6 / 6x6").unwrap_err();
        assert_eq!(e, ShapeError::ZeroDimension { block: "0x0".into() });
        let e = ShapeSet::parse("17x17 / 17x6 / 6x6").unwrap_err();
        assert_eq!(
            e,
            ShapeError::TooLarge {
                block: "17x17".into(),
                dim: 17
            }
        );
        assert!(e.to_string().contains("exceeds 16"), "{e}");
        assert!(matches!(
            ShapeSet::parse("3x4 / 3x6 / 6x6"),
            Err(ShapeError::FineNotSquare { .. })
        ));
        assert_eq!(
            ShapeSet::parse("3x3 / 4x6 / 6x6"),
            Err(ShapeError::ProlongatorRows {
                block: "4x6".into(),
                bf: 3
            })
        );
        assert_eq!(
            ShapeSet::parse("3x3 / 3x6 / 6x5"),
            Err(ShapeError::CoarseShape {
                block: "6x5".into(),
                bc: 6
            })
        );
        assert!(matches!(ShapeSet::parse("3x3 / 3x6"), Err(ShapeError::Syntax { .. })));
        assert!(matches!(
            ShapeSet::parse("3y3 / 3x6 / 6x6"),
            Err(ShapeError::Syntax { .. })
        ));
    }

    #[test]
    fn products_and_blocks_of_a_set() {
        let s = ShapeSet { bf: 3, bc: 6 };
        assert_eq!(s.products(), vec![(3, 6), (6, 6)]);
        assert_eq!(s.block_shapes(), vec![(3, 3), (3, 6), (6, 3), (6, 6)]);
        assert_eq!(s.square_blocks(), vec![3, 6]);
        let one = ShapeSet { bf: 1, bc: 1 };
        assert_eq!(one.products(), vec![(1, 1)]);
        assert_eq!(one.block_shapes(), vec![(1, 1)]);
    }
}
