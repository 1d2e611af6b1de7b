//! `associative_scan` (JAX's `lax.associative_scan`): all prefix combinations
//! of an associative function in O(log n) depth, by combining adjacent pairs,
//! scanning the halved sequence recursively and filling in the rest; and
//! `cumlogsumexp` built on it.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::lax;
use crate::pytree::{Pytree, TreeDef};

/// Every prefix combination of `elems` along `axis` under the associative
/// `f`, as `jax.lax.associative_scan(f, elems, reverse, axis)`: element `i`
/// of the result is `f(...f(f(e0, e1), e2)..., ei)` (from the end when
/// `reverse`). `elems` is a pytree whose leaves share the length along
/// `axis`; `f` combines two such pytrees elementwise (it may be called on
/// slices of any length). Its results are JAX's, combination for
/// combination.
///
/// ```
/// use oxla::{Array, lax};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0], &[5])?;
/// let sums = lax::associative_scan(|a: Array, b: Array| &a + &b, x, false, 0)?;
/// assert_eq!(sums.to_vec::<f32>()?, vec![1.0, 3.0, 6.0, 10.0, 15.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn associative_scan<T: Pytree, R: Pytree<Value = T>>(
    f: impl Fn(T, T) -> R,
    elems: T,
    reverse: bool,
    axis: i64,
) -> Result<T> {
    let location = oxla_core::Location::from_caller(std::panic::Location::caller());
    let (leaves, tree) = elems.flatten();
    let Some(first) = leaves.first() else {
        return T::unflatten_from(&tree, &mut leaves.into_iter());
    };
    let axis = lax::canonical_axis("associative_scan", first, axis)?;
    let length = first.shape_or_empty()[axis];
    for leaf in &leaves {
        let n = leaf.shape_or_empty().get(axis).copied();
        if leaf.ndim_or_zero() != first.ndim_or_zero() || n != Some(length) {
            return Err(Error::Usage {
                function: "associative_scan",
                message: format!(
                    "every leaf needs the length {length} of the first along axis {axis}; got {}",
                    leaf.aval()?
                ),
                location,
            });
        }
    }
    let flip = |xs: Vec<Array>| -> Vec<Array> {
        if reverse {
            xs.iter().map(|x| lax::rev(x, &[axis as i64])).collect()
        } else {
            xs
        }
    };
    let combine = |a: Vec<Array>, b: Vec<Array>| -> Result<Vec<Array>> {
        let a = T::unflatten_from(&tree, &mut a.into_iter())?;
        let b = T::unflatten_from(&tree, &mut b.into_iter())?;
        let (out, out_tree) = f(a, b).into_value()?.flatten();
        check_structure(&tree, &out_tree, location)?;
        Ok(out)
    };
    let scanned = scan(&combine, flip(leaves), axis)?;
    T::unflatten_from(&tree, &mut flip(scanned).into_iter())
}

fn check_structure(want: &TreeDef, got: &TreeDef, location: oxla_core::Location) -> Result<()> {
    if want == got {
        return Ok(());
    }
    Err(Error::Usage {
        function: "associative_scan",
        message: format!("the combining function returned {got}, not the elements' {want}"),
        location,
    })
}

fn scan(
    combine: &dyn Fn(Vec<Array>, Vec<Array>) -> Result<Vec<Array>>,
    elems: Vec<Array>,
    axis: usize,
) -> Result<Vec<Array>> {
    let n = elems[0].shape_or_empty()[axis];
    if n < 2 {
        return Ok(elems);
    }
    // Combine adjacent pairs, scan the halved sequence: the odd positions.
    let evens_but_last: Vec<Array> = elems
        .iter()
        .map(|e| lax::slice_in_dim(e, 0, Some(-1), 2, axis as i64))
        .collect();
    let odds: Vec<Array> = elems
        .iter()
        .map(|e| lax::slice_in_dim(e, 1, None, 2, axis as i64))
        .collect();
    let odd_results = scan(combine, combine(evens_but_last, odds)?, axis)?;
    // The even positions after the first: the previous odd result with the
    // element itself.
    let later_evens: Vec<Array> = elems
        .iter()
        .map(|e| lax::slice_in_dim(e, 2, None, 2, axis as i64))
        .collect();
    let preceding: Vec<Array> = if n % 2 == 0 {
        odd_results
            .iter()
            .map(|e| lax::slice_in_dim(e, 0, Some(-1), 1, axis as i64))
            .collect()
    } else {
        odd_results.clone()
    };
    let even_results = combine(preceding, later_evens)?;
    let even_results: Vec<Array> = elems
        .iter()
        .zip(&even_results)
        .map(|(e, r)| {
            lax::concatenate(
                &[&lax::slice_in_dim(e, 0, Some(1), 1, axis as i64), r],
                axis,
            )
        })
        .collect();
    Ok(even_results
        .iter()
        .zip(&odd_results)
        .map(|(a, b)| interleave(a, b, axis))
        .collect())
}

/// `a[0], b[0], a[1], b[1], ...` along `axis` (`a` as long as `b` or one
/// longer), by padding each with zeros between its elements and adding.
fn interleave(a: &Array, b: &Array, axis: usize) -> Array {
    let rank = a.ndim_or_zero();
    let same = a.shape_or_empty()[axis] == b.shape_or_empty()[axis];
    let mut a_pad = vec![(0, 0, 0); rank];
    let mut b_pad = vec![(0, 0, 0); rank];
    a_pad[axis] = (0, i64::from(same), 1);
    b_pad[axis] = (1, i64::from(!same), 1);
    let zero = Array::weak_scalar(0i32);
    let (a, b) = (lax::pad(a, &zero, &a_pad), lax::pad(b, &zero, &b_pad));
    if a.dtype_or_bool() == oxla_core::DType::Bool {
        lax::or(&a, &b)
    } else {
        lax::add(&a, &b)
    }
}

/// `log(cumsum(exp(x)))` along `axis` without overflow, as
/// `jax.lax.cumlogsumexp`: an [`associative_scan`] of
/// [`crate::numpy::logaddexp`].
#[track_caller]
pub fn cumlogsumexp(x: &Array, axis: i64, reverse: bool) -> Array {
    associative_scan(
        |a: Array, b: Array| crate::numpy::logaddexp(&a, &b),
        x.clone(),
        reverse,
        axis,
    )
    .unwrap_or_else(Array::error)
}
