//! Writing values into copies of arrays and picking among arrays, as
//! JAX's functional forms of NumPy's in-place functions (JAX requires
//! `inplace=False`; oxla's arrays are immutable, so there is no flag):
//! `put`, `place`, `put_along_axis`, `choose`, `delete`, `insert`.

use oxla_core::DType;

use super::{IndexMode, usage};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::index::IndexItem;
use crate::lax;

fn int() -> DType {
    oxla_core::promotion::default_int(x64_enabled())
}

/// The 1-d `x` repeated and cut to `size` elements (JAX's `_tile_to_size`).
fn tile_to_size(x: &Array, size: i64) -> Array {
    let n = x.size_or_one().max(1);
    let tiled = if n < size {
        super::tile(x, &[(size + n - 1) / n])
    } else {
        x.clone()
    };
    lax::slice_in_dim(&tiled, 0, Some(size), 1, 0)
}

/// `jnp.put(a, ind, v, mode, inplace=False)`: `a` with the elements at the
/// flat positions `ind` replaced by `v` (repeated to `ind`'s length).
/// Without a mode, positions are clipped to `[-size, size)` and negative
/// ones count from the end, as JAX's `unravel_index` does; `Clip` clamps
/// them to `[0, size)`, `Wrap` takes them modulo the size.
#[track_caller]
pub fn put(a: &Array, ind: &Array, v: &Array, mode: Option<IndexMode>) -> Array {
    let (ind, v) = (super::ravel(ind), super::ravel(v));
    let size = a.size_or_one();
    if size == 0 || ind.size_or_one() == 0 || v.size_or_one() == 0 {
        return a.clone();
    }
    let v = tile_to_size(&v, ind.size_or_one());
    let bound =
        |value: i64| lax::convert_element_type(&Array::weak_scalar(value), ind.dtype_or_bool());
    let ind = match mode {
        // JAX's unravel_index: clipped to [-size, size), negatives from the end.
        None => {
            let clipped = lax::clamp(&bound(-size), &ind, &bound(size - 1));
            let wrapped = lax::add(&clipped, &bound(size));
            lax::select(&lax::lt(&clipped, &bound(0)), &wrapped, &clipped)
        }
        Some(IndexMode::Clip) => lax::clamp(&bound(0), &ind, &bound(size - 1)),
        Some(IndexMode::Wrap) => super::remainder(&ind, &bound(size)),
        Some(IndexMode::Raise) => {
            return usage(
                "put",
                "mode Raise is not supported (as in JAX): use None, Clip or Wrap".into(),
            );
        }
    };
    let flat = super::ravel(a).at(&[IndexItem::Array(ind)]).set(&v);
    lax::reshape(&flat, a.shape_or_empty())
}

/// `jnp.place(arr, mask, vals, inplace=False)`: `arr` with its elements
/// where `mask` is true replaced, in order, by `vals` (repeated as
/// needed).
#[track_caller]
pub fn place(arr: &Array, mask: &Array, vals: &Array) -> Array {
    let vals = super::ravel(vals);
    if arr.size_or_one() != mask.size_or_one() {
        return usage("place", "arr and mask must be the same size".into());
    }
    if vals.size_or_one() == 0 {
        return usage("place", "cannot place values from an empty array".into());
    }
    let n = mask.size_or_one();
    if arr.size_or_one() == 0 {
        return arr.clone();
    }
    let mask = lax::ne(&super::ravel(mask), &super::zeros_like(&super::ravel(mask)));
    let indices = super::nonzero(&mask, n, Some(n)).remove(0);
    let vals = tile_to_size(&vals, n);
    let flat = super::ravel(arr)
        .at(&[IndexItem::Array(indices)])
        .set(&lax::convert_element_type(&vals, arr.dtype_or_bool()));
    lax::reshape(&flat, arr.shape_or_empty())
}

/// The index arrays that address `indices` along `axis` of an array of
/// `shape` (the other dims by broadcast iotas), as JAX's
/// `_make_along_axis_idx`.
fn along_axis_index(shape: &[i64], indices: &Array, axis: usize) -> Vec<IndexItem> {
    let rank = shape.len();
    (0..rank)
        .map(|d| {
            if d == axis {
                return IndexItem::Array(indices.clone());
            }
            let mut dims = vec![1; rank];
            dims[d] = shape[d];
            IndexItem::Array(lax::broadcasted_iota(int(), &dims, d))
        })
        .collect()
}

/// `jnp.put_along_axis(arr, indices, values, axis, inplace=False)`: `arr`
/// with `values` (broadcast to `indices`' shape) written at `indices`
/// along `axis` (of the flattened `arr` when `None`).
#[track_caller]
pub fn put_along_axis(arr: &Array, indices: &Array, values: &Array, axis: Option<i64>) -> Array {
    let (a, axis) = match axis_of("put_along_axis", arr, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if indices.ndim_or_zero() != a.ndim_or_zero() {
        return usage(
            "put_along_axis",
            format!(
                "arr and indices must have the same rank, got {} and {}",
                a.ndim_or_zero(),
                indices.ndim_or_zero()
            ),
        );
    }
    let target = indices.shape_or_empty();
    if super::broadcast_shapes(values.shape_or_empty(), target).as_deref() != Some(target) {
        return usage(
            "put_along_axis",
            format!(
                "values of shape {:?} do not broadcast to the indices' {target:?}",
                values.shape_or_empty()
            ),
        );
    }
    let values = super::broadcast_to(
        &lax::convert_element_type(values, a.dtype_or_bool()),
        target,
    );
    let index = along_axis_index(a.shape_or_empty(), indices, axis);
    let out = a.at(&index).set(&values);
    lax::reshape(&out, arr.shape_or_empty())
}

/// `jnp.choose(a, choices, mode)`: for each element of the integer `a`, the
/// element of `choices[a]` at that position (all broadcast together).
/// `Wrap` takes `a` modulo the number of choices, `Clip` clamps it;
/// `Raise` needs a concrete `a` and refuses entries out of range.
#[track_caller]
pub fn choose(a: &Array, choices: &[&Array], mode: IndexMode) -> Array {
    if !a.dtype_or_bool().is_int() {
        return usage("choose", "`a` array must be integer typed".into());
    }
    let n = choices.len() as i64;
    if n == 0 {
        return usage("choose", "needs at least one choice".into());
    }
    let bound =
        |value: i64| lax::convert_element_type(&Array::weak_scalar(value), a.dtype_or_bool());
    let which = match mode {
        IndexMode::Wrap => super::remainder(a, &bound(n)),
        IndexMode::Clip => lax::clamp(&bound(0), a, &bound(n - 1)),
        IndexMode::Raise => {
            let out_of_range = lax::or(&lax::lt(a, &bound(0)), &lax::ge(a, &bound(n)));
            match super::any(&out_of_range, None, false).item::<bool>() {
                Ok(false) => a.clone(),
                Ok(true) => return usage("choose", "invalid entry in choice array".into()),
                Err(_) => {
                    return usage(
                        "choose",
                        "mode Raise needs a concrete `a` (under jit use Wrap or Clip)".into(),
                    );
                }
            }
        }
    };
    let mut all: Vec<&Array> = vec![&which];
    all.extend_from_slice(choices);
    let broadcast = super::broadcast_arrays(&all);
    let stacked = super::stack(&broadcast[1..].iter().collect::<Vec<_>>(), 0);
    let picked = super::take_along_axis(&stacked, &super::expand_dims(&broadcast[0], 0), 0);
    lax::reshape(&picked, broadcast[0].shape_or_empty())
}

/// What `delete` and `insert` address along an axis.
#[derive(Debug, Clone)]
pub enum Positions {
    /// One position (negative from the end).
    One(i64),
    /// Several positions.
    Many(Vec<i64>),
    /// A boolean mask over the axis (`delete` only).
    Mask(Vec<bool>),
}

/// The axis `axis` of `a` (flattened when `None`), canonical.
#[track_caller]
fn axis_of(function: &str, a: &Array, axis: Option<i64>) -> Result<(Array, usize), Array> {
    let (a, axis) = match axis {
        None => (super::ravel(a), 0),
        Some(axis) => (a.clone(), axis),
    };
    let rank = a.ndim_or_zero() as i64;
    if !(-rank..rank).contains(&axis) {
        return Err(usage(
            function,
            format!("axis {axis} is out of bounds for rank {rank}"),
        ));
    }
    Ok((a, axis.rem_euclid(rank) as usize))
}

/// `jnp.delete(arr, obj, axis)`: `arr` without the positions `obj` along
/// `axis` (of the flattened `arr` when `None`).
#[track_caller]
pub fn delete(arr: &Array, obj: &Positions, axis: Option<i64>) -> Array {
    let (a, axis) = match axis_of("delete", arr, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let n = a.shape_or_empty()[axis];
    let mut keep = vec![true; n as usize];
    match obj {
        Positions::One(i) => {
            if !(-n..n).contains(i) {
                return usage(
                    "delete",
                    format!("index {i} is out of bounds for axis {axis} with size {n}"),
                );
            }
            keep[i.rem_euclid(n) as usize] = false;
        }
        Positions::Many(list) => {
            for &i in list {
                if !(-n..n).contains(&i) {
                    return usage(
                        "delete",
                        format!("index {i} is out of bounds for axis {axis} with size {n}"),
                    );
                }
                keep[i.rem_euclid(n) as usize] = false;
            }
        }
        Positions::Mask(mask) => {
            if mask.len() as i64 != n {
                return usage(
                    "delete",
                    format!(
                        "a boolean mask must have the axis's length {n}, got {}",
                        mask.len()
                    ),
                );
            }
            for (k, &m) in keep.iter_mut().zip(mask) {
                *k = !m;
            }
        }
    }
    let kept: Vec<i64> = (0..n).filter(|&i| keep[i as usize]).collect();
    super::take(&a, &positions_array(&kept), Some(axis as i64), false)
}

/// Static positions as an index array.
fn positions_array(positions: &[i64]) -> Array {
    let narrow: Vec<i32> = positions.iter().map(|&i| i as i32).collect();
    Array::from_slice(&narrow, &[narrow.len() as i64])
        .map(|i| lax::convert_element_type(&i, int()))
        .unwrap_or_else(Array::error)
}

/// `jnp.insert(arr, obj, values, axis)`: `arr` with `values` inserted
/// before the positions `obj` along `axis` (of the flattened `arr` when
/// `None`); one position takes all of `values`, several take one slice
/// each (positions past the end append).
#[track_caller]
pub fn insert(arr: &Array, obj: &Positions, values: &Array, axis: Option<i64>) -> Array {
    let (a, axis) = match axis_of("insert", arr, axis) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let shape = a.shape_or_empty().to_vec();
    let rank = shape.len();
    let n_input = shape[axis];
    let mut values = lax::convert_element_type(values, a.dtype_or_bool());
    while values.ndim_or_zero() < rank {
        values = super::expand_dims(&values, 0);
    }
    let mut indices = match obj {
        Positions::One(i) => {
            values = super::moveaxis(&values, 0, axis as i64);
            vec![*i; values.shape_or_empty()[axis] as usize]
        }
        Positions::Many(list) if list.len() == 1 => {
            vec![list[0]; values.shape_or_empty()[axis] as usize]
        }
        Positions::Many(list) => list.clone(),
        Positions::Mask(_) => {
            return usage("insert", "takes positions, not a boolean mask".into());
        }
    };
    let n_values = values.shape_or_empty()[axis];
    let n_insert = match (indices.len() as i64, n_values) {
        (a, b) if a == b || b == 1 => a,
        (1, b) => b,
        (a, b) => {
            return usage(
                "insert",
                format!("{a} positions and {b} values along the axis do not broadcast"),
            );
        }
    };
    for i in &mut indices {
        *i = (if *i < 0 { *i + n_input } else { *i }).clamp(0, n_input);
    }
    let mut order: Vec<usize> = (0..indices.len()).collect();
    order.sort_by_key(|&k| indices[k]);
    let mut values_ind = indices.clone();
    for (j, &k) in order.iter().enumerate() {
        values_ind[k] += j as i64;
    }
    let total = n_input + n_insert;
    let arr_ind: Vec<i64> = (0..total).filter(|p| !values_ind.contains(p)).collect();
    let mut out_shape = shape.clone();
    out_shape[axis] = total;
    let out = super::zeros(&out_shape, a.dtype_or_bool());
    let mut slice_shape = shape;
    slice_shape[axis] = n_insert;
    let lead = || -> Vec<IndexItem> {
        (0..axis)
            .map(|_| crate::index::slice(None, None, 1))
            .collect()
    };
    let mut at_values = lead();
    at_values.push(IndexItem::Array(positions_array(&values_ind)));
    let out = out
        .at(&at_values)
        .set(&super::broadcast_to(&values, &slice_shape));
    let mut at_arr = lead();
    at_arr.push(IndexItem::Array(positions_array(&arr_ind)));
    out.at(&at_arr).set(&a)
}
