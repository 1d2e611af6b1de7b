//! `jnp.pad`: an array widened along each axis by constant values, its
//! edge values, or its own values wrapped or reflected (NumPy's modes, as
//! JAX computes them: the padded positions read positions of the input,
//! any width, however many times the input is repeated).

use super::{take, usage};
use crate::array::Array;
use crate::lax;

/// How `jnp.pad` fills the new positions (NumPy's `mode`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    /// A constant (`constant_values`).
    Constant(f64),
    /// The nearest edge value.
    Edge,
    /// The input wrapped around: the end continues with the start.
    Wrap,
    /// Mirrored about the edge values, which are not repeated
    /// (`reflect`, `reflect_type="even"`).
    Reflect,
    /// Mirrored about the edges, which are repeated (`symmetric`).
    Symmetric,
}

/// The input position that padded position `i` of an axis of `n`
/// elements (with `before` added in front) reads.
fn source(mode: PadMode, i: i64, n: i64, before: i64) -> i64 {
    let j = i - before;
    match mode {
        PadMode::Constant(_) | PadMode::Edge => j.clamp(0, n - 1),
        PadMode::Wrap => j.rem_euclid(n),
        PadMode::Reflect if n == 1 => 0,
        PadMode::Reflect => {
            let k = j.rem_euclid(2 * (n - 1));
            if k < n { k } else { 2 * (n - 1) - k }
        }
        PadMode::Symmetric => {
            let k = j.rem_euclid(2 * n);
            if k < n { k } else { 2 * n - 1 - k }
        }
    }
}

/// `jnp.pad(x, pad_width, mode)`: `pad_width` holds one `(before, after)`
/// pair per axis, or one pair for every axis.
#[track_caller]
pub fn pad(x: &Array, pad_width: &[(i64, i64)], mode: PadMode) -> Array {
    let shape = x.shape_or_empty().to_vec();
    let widths: Vec<(i64, i64)> = match pad_width.len() {
        1 => vec![pad_width[0]; shape.len()],
        n if n == shape.len() => pad_width.to_vec(),
        n => {
            return usage(
                "pad",
                format!(
                    "takes one (before, after) pair or one per axis ({}), got {n}",
                    shape.len()
                ),
            );
        }
    };
    if let Some(w) = widths.iter().find(|(b, a)| *b < 0 || *a < 0) {
        return usage("pad", format!("widths must be non-negative, got {w:?}"));
    }
    if let PadMode::Constant(value) = mode {
        let config: Vec<(i64, i64, i64)> = widths.iter().map(|&(b, a)| (b, a, 0)).collect();
        return lax::pad(x, &super::scalar_like(x, value), &config);
    }
    let mut out = x.clone();
    for (axis, (&n, &(before, after))) in shape.iter().zip(&widths).enumerate() {
        if before == 0 && after == 0 {
            continue;
        }
        if n == 0 {
            return usage(
                "pad",
                format!("mode {mode:?} cannot pad the empty axis {axis}"),
            );
        }
        let positions: Vec<i32> = (0..n + before + after)
            .map(|i| source(mode, i, n, before) as i32)
            .collect();
        let indices = match Array::from_slice(&positions, &[positions.len() as i64]) {
            Ok(indices) => indices,
            Err(e) => return Array::error(e),
        };
        out = take(&out, &indices, Some(axis as i64), true);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_positions_read_numpys_sources() {
        let read = |mode, n, before, after| -> Vec<i64> {
            (0..n + before + after)
                .map(|i| source(mode, i, n, before))
                .collect()
        };
        // np.pad(np.arange(3), (4, 4), mode) indices.
        assert_eq!(read(PadMode::Edge, 3, 2, 2), [0, 0, 0, 1, 2, 2, 2]);
        assert_eq!(
            read(PadMode::Wrap, 3, 4, 4),
            [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
        );
        assert_eq!(
            read(PadMode::Reflect, 3, 4, 4),
            [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]
        );
        assert_eq!(
            read(PadMode::Symmetric, 3, 4, 4),
            [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]
        );
        assert_eq!(read(PadMode::Reflect, 1, 2, 1), [0, 0, 0, 0]);
    }
}
