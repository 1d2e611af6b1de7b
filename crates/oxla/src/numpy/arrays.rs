//! More of `jax.numpy`'s array manipulation: flips, rolls and rotations,
//! repeats, the stacking and splitting families, `atleast_*`, diagonals and
//! triangles, `meshgrid`, `diff`, `append`, index grids, and the shape
//! queries, as JAX computes them.

use oxla_core::DType;

use super::{concatenate, reshape, stack, take, usage};
use crate::array::Array;
use crate::lax;

/// A weakly typed i32 scalar (an index offset).
fn int(v: i64) -> Array {
    Array::weak_scalar(v as i32)
}

/// `axis` counted from the front, for an array of rank `rank`.
fn normalized(axis: i64, rank: usize) -> usize {
    axis.rem_euclid(rank.max(1) as i64) as usize
}

/// `jnp.ravel`: the elements in row-major order, as a 1-d array.
#[track_caller]
pub fn ravel(x: &Array) -> Array {
    reshape(x, &[x.size_or_one()])
}

/// `jnp.flip(x, axis)`: reversed along `axis` (every axis for `None`).
#[track_caller]
pub fn flip(x: &Array, axis: Option<&[i64]>) -> Array {
    let rank = x.ndim_or_zero();
    let axes: Vec<i64> = match axis {
        None => (0..rank as i64).collect(),
        Some(a) => a.iter().map(|&d| normalized(d, rank) as i64).collect(),
    };
    lax::rev(x, &axes)
}

/// `jnp.fliplr`: reversed along axis 1.
#[track_caller]
pub fn fliplr(x: &Array) -> Array {
    flip(x, Some(&[1]))
}

/// `jnp.flipud`: reversed along axis 0.
#[track_caller]
pub fn flipud(x: &Array) -> Array {
    flip(x, Some(&[0]))
}

/// `jnp.roll(x, shift, axis)`: elements shifted by `shift` along `axis`,
/// those past the end coming back at the start (the flattened array for
/// `None`).
#[track_caller]
pub fn roll(x: &Array, shift: i64, axis: Option<i64>) -> Array {
    let Some(axis) = axis else {
        return reshape(&roll(&ravel(x), shift, Some(0)), x.shape_or_empty());
    };
    let rank = x.ndim_or_zero();
    let axis = normalized(axis, rank);
    let n = x.shape_or_empty().get(axis).copied().unwrap_or(1);
    if n == 0 {
        return x.clone();
    }
    let shift = shift.rem_euclid(n);
    let doubled = concatenate(&[x, x], axis as i64);
    lax::slice_in_dim(&doubled, n - shift, Some(2 * n - shift), 1, axis as i64)
}

/// `jnp.rot90(x, k, axes)`: rotated by 90° `k` times in the plane of
/// `axes`, from the first toward the second.
#[track_caller]
pub fn rot90(x: &Array, k: i64, axes: (i64, i64)) -> Array {
    let rank = x.ndim_or_zero();
    let (a, b) = (normalized(axes.0, rank), normalized(axes.1, rank));
    if rank < 2 || a == b {
        return usage(
            "rot90",
            format!("needs two distinct axes of an array of rank 2 or more, got {axes:?}"),
        );
    }
    let swap = |y: &Array| {
        let mut perm: Vec<i64> = (0..rank as i64).collect();
        perm.swap(a, b);
        lax::transpose(y, &perm)
    };
    match k.rem_euclid(4) {
        0 => x.clone(),
        1 => swap(&flip(x, Some(&[b as i64]))),
        2 => flip(x, Some(&[a as i64, b as i64])),
        _ => flip(&swap(x), Some(&[b as i64])),
    }
}

/// `jnp.repeat(x, repeats, axis)`: each element `repeats` times in a row
/// along `axis` (of the flattened array for `None`).
#[track_caller]
pub fn repeat(x: &Array, repeats: i64, axis: Option<i64>) -> Array {
    let (x, axis) = match axis {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), normalized(a, x.ndim_or_zero())),
    };
    let shape = x.shape_or_empty().to_vec();
    let mut expanded = shape.clone();
    expanded.insert(axis + 1, repeats);
    let dims: Vec<i64> = (0..shape.len() as i64)
        .map(|d| if d as usize > axis { d + 1 } else { d })
        .collect();
    let widened = lax::broadcast_in_dim(&x, &expanded, &dims);
    let mut out = shape;
    out[axis] *= repeats;
    reshape(&widened, &out)
}

/// `jnp.atleast_1d`: a scalar as a 1-element array.
#[track_caller]
pub fn atleast_1d(x: &Array) -> Array {
    match x.ndim_or_zero() {
        0 => reshape(x, &[1]),
        _ => x.clone(),
    }
}

/// `jnp.atleast_2d`: a scalar as `[1, 1]`, a vector as a row `[1, n]`.
#[track_caller]
pub fn atleast_2d(x: &Array) -> Array {
    match x.ndim_or_zero() {
        0 => reshape(x, &[1, 1]),
        1 => reshape(x, &[1, x.shape_or_empty()[0]]),
        _ => x.clone(),
    }
}

/// `jnp.atleast_3d`: a scalar as `[1, 1, 1]`, a vector as `[1, n, 1]`, a
/// matrix as `[m, n, 1]`.
#[track_caller]
pub fn atleast_3d(x: &Array) -> Array {
    let s = x.shape_or_empty().to_vec();
    match s.len() {
        0 => reshape(x, &[1, 1, 1]),
        1 => reshape(x, &[1, s[0], 1]),
        2 => reshape(x, &[s[0], s[1], 1]),
        _ => x.clone(),
    }
}

/// `jnp.concat`: [`concatenate`].
#[track_caller]
pub fn concat(xs: &[&Array], axis: i64) -> Array {
    concatenate(xs, axis)
}

/// `jnp.vstack`: rows stacked (vectors as rows).
#[track_caller]
pub fn vstack(xs: &[&Array]) -> Array {
    let rows: Vec<Array> = xs.iter().map(|x| atleast_2d(x)).collect();
    concatenate(&rows.iter().collect::<Vec<_>>(), 0)
}

/// `jnp.hstack`: joined along axis 1 (vectors along axis 0).
#[track_caller]
pub fn hstack(xs: &[&Array]) -> Array {
    let parts: Vec<Array> = xs.iter().map(|x| atleast_1d(x)).collect();
    let axis = if parts.first().is_some_and(|p| p.ndim_or_zero() == 1) {
        0
    } else {
        1
    };
    concatenate(&parts.iter().collect::<Vec<_>>(), axis)
}

/// `jnp.dstack`: joined along axis 2 (each made at least 3-d).
#[track_caller]
pub fn dstack(xs: &[&Array]) -> Array {
    let parts: Vec<Array> = xs.iter().map(|x| atleast_3d(x)).collect();
    concatenate(&parts.iter().collect::<Vec<_>>(), 2)
}

/// `jnp.column_stack`: vectors as columns, matrices as they are, joined
/// along axis 1.
#[track_caller]
pub fn column_stack(xs: &[&Array]) -> Array {
    let parts: Vec<Array> = xs
        .iter()
        .map(|x| match x.ndim_or_zero() {
            0 | 1 => reshape(x, &[x.size_or_one(), 1]),
            _ => (*x).clone(),
        })
        .collect();
    concatenate(&parts.iter().collect::<Vec<_>>(), 1)
}

/// `jnp.unstack(x, axis)`: the slices along `axis`.
#[track_caller]
pub fn unstack(x: &Array, axis: i64) -> Vec<Array> {
    let axis = normalized(axis, x.ndim_or_zero());
    let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
    (0..n)
        .map(|i| lax::index_in_dim(x, i, axis as i64, false))
        .collect()
}

/// `jnp.array_split(x, sections, axis)`: `sections` pieces along `axis`,
/// the first `n % sections` one element longer.
#[track_caller]
pub fn array_split(x: &Array, sections: i64, axis: i64) -> Vec<Array> {
    let axis = normalized(axis, x.ndim_or_zero());
    let n = x.shape_or_empty().get(axis).copied().unwrap_or(0);
    if sections <= 0 {
        return vec![usage(
            "array_split",
            format!("needs a positive number of sections, got {sections}"),
        )];
    }
    let (base, extra) = (n / sections, n % sections);
    let mut start = 0;
    (0..sections)
        .map(|i| {
            let len = base + i64::from(i < extra);
            let piece = lax::slice_in_dim(x, start, Some(start + len), 1, axis as i64);
            start += len;
            piece
        })
        .collect()
}

/// `jnp.hsplit`: equal pieces along axis 1 (axis 0 for vectors).
#[track_caller]
pub fn hsplit(x: &Array, sections: i64) -> Vec<Array> {
    let axis = if x.ndim_or_zero() == 1 { 0 } else { 1 };
    super::split(x, sections, axis)
}

/// `jnp.vsplit`: equal pieces along axis 0.
#[track_caller]
pub fn vsplit(x: &Array, sections: i64) -> Vec<Array> {
    super::split(x, sections, 0)
}

/// `jnp.dsplit`: equal pieces along axis 2.
#[track_caller]
pub fn dsplit(x: &Array, sections: i64) -> Vec<Array> {
    super::split(x, sections, 2)
}

/// `jnp.diagonal(x, offset, axis1, axis2)`: the diagonal of the planes of
/// `axis1` and `axis2` (above it for a positive `offset`), as a last axis.
#[track_caller]
pub fn diagonal(x: &Array, offset: i64, axis1: i64, axis2: i64) -> Array {
    let rank = x.ndim_or_zero();
    let (a, b) = (normalized(axis1, rank), normalized(axis2, rank));
    if rank < 2 || a == b {
        return usage(
            "diagonal",
            format!("needs two distinct axes, got {axis1} and {axis2} of rank {rank}"),
        );
    }
    let perm: Vec<i64> = (0..rank)
        .filter(|d| *d != a && *d != b)
        .chain([a, b])
        .map(|d| d as i64)
        .collect();
    let moved = lax::transpose(x, &perm);
    let s = moved.shape_or_empty().to_vec();
    let (rows, cols) = (s[rank - 2], s[rank - 1]);
    let length = if offset >= 0 {
        rows.min(cols - offset).max(0)
    } else {
        (rows + offset).min(cols).max(0)
    };
    let i = super::arange(0.0, length as f64, 1.0, DType::I32);
    let shifted = super::add(&i, &int(offset.abs()));
    let (row, col) = match offset >= 0 {
        true => (i, shifted),
        false => (shifted, i),
    };
    // Flatten the plane and take row * cols + col.
    let mut flat_shape = s[..rank - 2].to_vec();
    flat_shape.push(rows * cols);
    let flat = reshape(&moved, &flat_shape);
    let index = super::add(&super::multiply(&row, &int(cols)), &col);
    take(&flat, &index, Some(rank as i64 - 2), false)
}

/// `jnp.diag(v, k)`: a 1-d `v` on the `k`-th diagonal of a square matrix,
/// or a 2-d `v`'s `k`-th diagonal.
#[track_caller]
pub fn diag(v: &Array, k: i64) -> Array {
    match v.ndim_or_zero() {
        1 => {
            let n = v.shape_or_empty()[0] + k.abs();
            let i = super::arange(0.0, n as f64, 1.0, DType::I32);
            let row = reshape(&i, &[n, 1]);
            let col = reshape(&i, &[1, n]);
            let on = super::equal(&super::subtract(&col, &row), &int(k));
            // The value at (r, c) on the diagonal is v[min(r, c)].
            let source = super::minimum(&row, &col);
            let safe = super::minimum(&source, &int((v.shape_or_empty()[0] - 1).max(0)));
            let values = take(v, &safe, Some(0), false);
            super::where_(&on, &values, &super::zeros_like(&values))
        }
        2 => diagonal(v, k, 0, 1),
        r => usage("diag", format!("takes a 1-d or 2-d array, got rank {r}")),
    }
}

/// `jnp.diagflat(v, k)`: the flattened `v` on the `k`-th diagonal.
#[track_caller]
pub fn diagflat(v: &Array, k: i64) -> Array {
    diag(&ravel(v), k)
}

/// `jnp.trace(x, offset, axis1, axis2)`: the sum of the diagonal.
#[track_caller]
pub fn trace(x: &Array, offset: i64, axis1: i64, axis2: i64) -> Array {
    super::sum(&diagonal(x, offset, axis1, axis2), Some(&[-1]), false)
}

/// `jnp.tri(n, m, k, dtype)`: ones at and below the `k`-th diagonal of an
/// `n × m` matrix.
#[track_caller]
pub fn tri(n: i64, m: Option<i64>, k: i64, dtype: DType) -> Array {
    let m = m.unwrap_or(n);
    let row = reshape(&super::arange(0.0, n as f64, 1.0, DType::I32), &[n, 1]);
    let col = reshape(&super::arange(0.0, m as f64, 1.0, DType::I32), &[1, m]);
    let below = super::less_equal(&col, &super::add(&row, &int(k)));
    lax::convert_element_type(&below, dtype)
}

/// `jnp.identity(n, dtype)`: the `n × n` identity.
#[track_caller]
pub fn identity(n: i64, dtype: DType) -> Array {
    super::eye(n, dtype)
}

/// `jnp.empty(shape, dtype)`: zeros (XLA has no uninitialized memory).
#[track_caller]
pub fn empty(shape: &[i64], dtype: DType) -> Array {
    super::zeros(shape, dtype)
}

/// `jnp.empty_like(x)`: zeros of `x`'s type.
#[track_caller]
pub fn empty_like(x: &Array) -> Array {
    super::zeros_like(x)
}

/// `jnp.meshgrid(xs, indexing)`: coordinate arrays from 1-d `xs`; `"xy"`
/// (the default) swaps the first two output axes, `"ij"` keeps them.
#[track_caller]
pub fn meshgrid(xs: &[&Array], indexing: &str) -> Vec<Array> {
    let mut shape: Vec<i64> = xs.iter().map(|x| x.size_or_one()).collect();
    let cartesian = indexing == "xy" && xs.len() >= 2;
    if cartesian {
        shape.swap(0, 1);
    }
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            let dim = match (cartesian, i) {
                (true, 0) => 1,
                (true, 1) => 0,
                _ => i,
            };
            lax::broadcast_in_dim(&ravel(x), &shape, &[dim as i64])
        })
        .collect()
}

/// `jnp.broadcast_arrays`: each array broadcast to their common shape.
#[track_caller]
pub fn broadcast_arrays(xs: &[&Array]) -> Vec<Array> {
    let shape = xs.iter().try_fold(Vec::new(), |acc: Vec<i64>, x| {
        super::broadcast_shapes(&acc, x.shape_or_empty())
    });
    match shape {
        Some(shape) => xs.iter().map(|x| super::broadcast_to(x, &shape)).collect(),
        None => vec![
            usage(
                "broadcast_arrays",
                "the shapes do not broadcast together".into()
            );
            xs.len()
        ],
    }
}

/// `jnp.ndim`: the number of dimensions.
pub fn ndim(x: &Array) -> usize {
    x.ndim_or_zero()
}

/// `jnp.shape`: the dimensions.
pub fn shape(x: &Array) -> Vec<i64> {
    x.shape_or_empty().to_vec()
}

/// `jnp.size`: the number of elements.
pub fn size(x: &Array) -> i64 {
    x.size_or_one()
}

/// `jnp.diff(x, n, axis)`: the `n`-th discrete difference along `axis`.
#[track_caller]
pub fn diff(x: &Array, n: usize, axis: i64) -> Array {
    let axis = normalized(axis, x.ndim_or_zero());
    let mut out = x.clone();
    for _ in 0..n {
        let len = out.shape_or_empty().get(axis).copied().unwrap_or(0);
        let later = lax::slice_in_dim(&out, 1, Some(len), 1, axis as i64);
        let earlier = lax::slice_in_dim(&out, 0, Some(len - 1), 1, axis as i64);
        out = match out.dtype_or_bool() {
            DType::Bool => lax::ne(&later, &earlier),
            _ => super::subtract(&later, &earlier),
        };
    }
    out
}

/// `jnp.ediff1d(x)`: the differences of the flattened array.
#[track_caller]
pub fn ediff1d(x: &Array) -> Array {
    diff(&ravel(x), 1, 0)
}

/// `jnp.append(x, values, axis)`: `values` after `x` along `axis` (both
/// flattened for `None`).
#[track_caller]
pub fn append(x: &Array, values: &Array, axis: Option<i64>) -> Array {
    match axis {
        None => concatenate(&[&ravel(x), &ravel(values)], 0),
        Some(a) => concatenate(&[x, values], a),
    }
}

/// `jnp.indices(dimensions)`: for each axis, the index along it at every
/// position of the grid, stacked first (i32).
#[track_caller]
pub fn indices(dimensions: &[i64]) -> Array {
    let grids: Vec<Array> = (0..dimensions.len())
        .map(|d| lax::iota(DType::I32, dimensions, d))
        .collect();
    stack(&grids.iter().collect::<Vec<_>>(), 0)
}

/// The row and column indices (i32) of the `k`-th triangle of an `n × m`
/// matrix, row-major.
fn triangle_indices(n: i64, k: i64, m: Option<i64>, lower: bool) -> (Array, Array) {
    let m = m.unwrap_or(n);
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for r in 0..n {
        for c in 0..m {
            let inside = if lower { c - r <= k } else { c - r >= k };
            if inside {
                rows.push(r as i32);
                cols.push(c as i32);
            }
        }
    }
    let array = |v: &[i32]| Array::from_slice(v, &[v.len() as i64]).unwrap_or_else(Array::error);
    (array(&rows), array(&cols))
}

/// `jnp.tril_indices(n, k, m)`: the indices of the lower triangle.
#[track_caller]
pub fn tril_indices(n: i64, k: i64, m: Option<i64>) -> (Array, Array) {
    triangle_indices(n, k, m, true)
}

/// `jnp.triu_indices(n, k, m)`: the indices of the upper triangle.
#[track_caller]
pub fn triu_indices(n: i64, k: i64, m: Option<i64>) -> (Array, Array) {
    triangle_indices(n, k, m, false)
}

/// `jnp.tril_indices_from(x, k)`: [`tril_indices`] of `x`'s last two
/// dimensions.
#[track_caller]
pub fn tril_indices_from(x: &Array, k: i64) -> (Array, Array) {
    let s = x.shape_or_empty();
    let (n, m) = (s[s.len().saturating_sub(2)], s[s.len().saturating_sub(1)]);
    triangle_indices(n, k, Some(m), true)
}

/// `jnp.triu_indices_from(x, k)`: [`triu_indices`] of `x`'s last two
/// dimensions.
#[track_caller]
pub fn triu_indices_from(x: &Array, k: i64) -> (Array, Array) {
    let s = x.shape_or_empty();
    let (n, m) = (s[s.len().saturating_sub(2)], s[s.len().saturating_sub(1)]);
    triangle_indices(n, k, Some(m), false)
}

/// `jnp.diag_indices(n, ndim)`: `ndim` copies of `0..n` (i32).
#[track_caller]
pub fn diag_indices(n: i64, ndim: usize) -> Vec<Array> {
    vec![super::arange(0.0, n as f64, 1.0, DType::I32); ndim]
}

/// `jnp.vander(x, n, increasing)`: the powers of a vector as columns,
/// highest first (lowest first when `increasing`).
#[track_caller]
pub fn vander(x: &Array, n: Option<i64>, increasing: bool) -> Array {
    let len = x.size_or_one();
    let n = n.unwrap_or(len);
    let exponents = super::arange(0.0, n as f64, 1.0, DType::I32);
    let exponents = if increasing {
        exponents
    } else {
        flip(&exponents, None)
    };
    let base = reshape(x, &[len, 1]);
    super::power(
        &base,
        &lax::convert_element_type(&reshape(&exponents, &[1, n]), x.dtype_or_bool()),
    )
}

/// `jnp.resize(a, new_shape)`: the flattened array repeated (or cut) to
/// fill `new_shape`; zeros where either is empty.
#[track_caller]
pub fn resize(a: &Array, new_shape: &[i64]) -> Array {
    if let Some(d) = new_shape.iter().find(|&&d| d < 0) {
        return usage(
            "resize",
            format!("all elements of new_shape must be non-negative, got {d}"),
        );
    }
    let flat = super::ravel(a);
    let size = flat.size_or_one();
    let new_size: i64 = new_shape.iter().product();
    if a.shape_or_empty().contains(&0) || new_size == 0 {
        return super::zeros(new_shape, a.dtype_or_bool());
    }
    let repeats = (new_size + size - 1) / size;
    let tiled = super::tile(&flat, &[repeats]);
    let cut = lax::slice(&tiled, &[0], &[new_size], None);
    super::reshape(&cut, new_shape)
}

/// `jnp.matrix_transpose`: the last two axes swapped.
#[track_caller]
pub fn matrix_transpose(x: &Array) -> Array {
    if x.ndim_or_zero() < 2 {
        return usage(
            "matrix_transpose",
            format!("needs rank 2 or more, got {}", x.ndim_or_zero()),
        );
    }
    super::swapaxes(x, -1, -2)
}

/// `jnp.permute_dims(x, axes)`: [`transpose`](super::transpose).
#[track_caller]
pub fn permute_dims(x: &Array, axes: &[i64]) -> Array {
    super::transpose(x, Some(axes))
}

/// A nested list of arrays for [`block`].
#[derive(Debug, Clone)]
pub enum Block<'a> {
    /// An array (a leaf).
    Array(&'a Array),
    /// A list of blocks, all of one depth.
    List(Vec<Block<'a>>),
}

/// `jnp.block(arrays)`: one array assembled from nested lists of blocks:
/// the innermost lists join along the last axis, each outer level along
/// the axis before (blocks of lower rank get leading dims of size 1).
#[track_caller]
pub fn block(arrays: &Block<'_>) -> Array {
    match assemble(arrays) {
        Ok((out, _)) => out,
        Err(message) => usage("block", message),
    }
}

/// JAX's `_block`: the assembled array and the depth of lists above it.
fn assemble(blocks: &Block<'_>) -> Result<(Array, usize), String> {
    let items = match blocks {
        Block::Array(a) => return Ok(((*a).clone(), 1)),
        Block::List(items) if items.is_empty() => {
            return Err("does not allow empty list arguments".into());
        }
        Block::List(items) => items,
    };
    let parts = items.iter().map(assemble).collect::<Result<Vec<_>, _>>()?;
    let depth = parts[0].1;
    if parts.iter().any(|(_, d)| *d != depth) {
        return Err("mismatched list depths".into());
    }
    let rank = parts
        .iter()
        .map(|(a, _)| a.ndim_or_zero())
        .max()
        .unwrap_or(0)
        .max(depth);
    let lifted: Vec<Array> = parts
        .iter()
        .map(|(a, _)| {
            let mut dims = vec![1; rank - a.ndim_or_zero()];
            dims.extend_from_slice(a.shape_or_empty());
            lax::reshape(a, &dims)
        })
        .collect();
    let joined = concatenate(&lifted.iter().collect::<Vec<_>>(), -(depth as i64));
    Ok((joined, depth + 1))
}
