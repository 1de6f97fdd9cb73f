//! Run-time block shapes to compile-time kernels.
//!
//! Matrices carry their block shapes as data; kernels want them as constants so
//! the block contractions unroll. These macros map the shapes the project ships
//! (scalar 1x1; 2D elasticity 2x2 / 2x3 / 3x3; 3D elasticity 3x3 / 3x6 / 6x6) to
//! const-generic instantiations and route every other shape to the size-generic
//! fallback expression, so any shape works and the shipped ones are fast.

/// Calls `$f::<M, K, N>(args)` for a shipped product shape `(m x k) * (k x n)`,
/// else evaluates `$fallback`.
#[macro_export]
macro_rules! dispatch_mkn {
    ($m:expr, $k:expr, $n:expr; $f:ident($($arg:expr),* $(,)?); $fallback:expr) => {
        match ($m, $k, $n) {
            (1, 1, 1) => $f::<1, 1, 1>($($arg),*),
            (2, 2, 2) => $f::<2, 2, 2>($($arg),*),
            (2, 2, 3) => $f::<2, 2, 3>($($arg),*),
            (3, 2, 3) => $f::<3, 2, 3>($($arg),*),
            (3, 3, 3) => $f::<3, 3, 3>($($arg),*),
            (3, 3, 6) => $f::<3, 3, 6>($($arg),*),
            (6, 3, 6) => $f::<6, 3, 6>($($arg),*),
            (6, 6, 6) => $f::<6, 6, 6>($($arg),*),
            _ => $fallback,
        }
    };
}

/// Calls `$f::<R, C>(args)` for a shipped block shape `r x c`, else `$fallback`.
#[macro_export]
macro_rules! dispatch_rc {
    ($r:expr, $c:expr; $f:ident($($arg:expr),* $(,)?); $fallback:expr) => {
        match ($r, $c) {
            (1, 1) => $f::<1, 1>($($arg),*),
            (2, 2) => $f::<2, 2>($($arg),*),
            (2, 3) => $f::<2, 3>($($arg),*),
            (3, 2) => $f::<3, 2>($($arg),*),
            (3, 3) => $f::<3, 3>($($arg),*),
            (3, 6) => $f::<3, 6>($($arg),*),
            (6, 3) => $f::<6, 3>($($arg),*),
            (6, 6) => $f::<6, 6>($($arg),*),
            _ => $fallback,
        }
    };
}

/// Calls `$f::<B>(args)` for square blocks `1..=6`, else `$fallback`.
#[macro_export]
macro_rules! dispatch_b {
    ($b:expr; $f:ident($($arg:expr),* $(,)?); $fallback:expr) => {
        match $b {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            _ => $fallback,
        }
    };
}
