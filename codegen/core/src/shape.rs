//! Declared block shapes.

/// A block-shape set: fine operator `bf x bf`, prolongator `bf x bc`, coarse
/// operator `bc x bc` (the restriction is `bc x bf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeSet {
    pub bf: usize,
    pub bc: usize,
}
