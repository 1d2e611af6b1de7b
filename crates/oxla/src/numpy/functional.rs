//! NumPy's functions of functions, as JAX builds them on `vmap` and
//! `switch`: `apply_along_axis`, `apply_over_axes`, `fromfunction`,
//! `piecewise`; and `mask_indices` and `trim_zeros`.

use oxla_core::DType;

use super::usage;
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// A function of one array, boxed so that vmaps can nest.
type ArrayFn<'f> = Box<dyn Fn(Array) -> Array + 'f>;

/// `f` vmapped over axis `in_axis` of its input, the batch at `out_axis`.
fn vmapped<'f>(f: ArrayFn<'f>, in_axis: i64, out_axis: i64) -> ArrayFn<'f> {
    Box::new(move |x: Array| {
        crate::vmap::vmap(|x: Array| f(x))
            .in_axes(&[Some(in_axis)])
            .out_axes(&[Some(out_axis)])
            .call(x)
            .unwrap_or_else(Array::error)
    })
}

/// `jnp.apply_along_axis(func1d, axis, arr)`: `func1d` on each 1-d slice of
/// `arr` along `axis`; the slices' results take the place of that axis
/// (JAX's nested `vmap`s).
#[track_caller]
pub fn apply_along_axis(func1d: impl Fn(&Array) -> Array, axis: i64, arr: &Array) -> Array {
    let rank = arr.ndim_or_zero() as i64;
    if !(-rank..rank).contains(&axis) {
        return usage(
            "apply_along_axis",
            format!("axis {axis} is out of bounds for rank {rank}"),
        );
    }
    let axis = axis.rem_euclid(rank);
    let mut f: ArrayFn<'_> = Box::new(move |x: Array| func1d(&x));
    for i in 1..rank - axis {
        f = vmapped(f, i, -1);
    }
    for _ in 0..axis {
        f = vmapped(f, 0, 0);
    }
    f(arr.clone())
}

/// `jnp.apply_over_axes(func, a, axes)`: `func(a, axis)` for each axis in
/// turn, a reduced axis put back with size 1.
#[track_caller]
pub fn apply_over_axes(func: impl Fn(&Array, i64) -> Array, a: &Array, axes: &[i64]) -> Array {
    let mut a = a.clone();
    for &axis in axes {
        let b = func(&a, axis);
        a = match b.ndim_or_zero() {
            n if n == a.ndim_or_zero() => b,
            n if n + 1 == a.ndim_or_zero() => super::expand_dims(&b, axis),
            _ => {
                return usage(
                    "apply_over_axes",
                    "function is not returning an array of the correct shape".into(),
                );
            }
        };
    }
    a
}

/// `jnp.fromfunction(function, shape, dtype)`: `function` of the
/// coordinates (each an array of `dtype`) at every position of `shape`,
/// called per element as JAX's nested `vmap`s call it.
#[track_caller]
pub fn fromfunction(function: impl Fn(&[Array]) -> Array, shape: &[i64], dtype: DType) -> Array {
    let rank = shape.len();
    let grids: Vec<Array> = (0..rank)
        .map(|d| super::ravel(&lax::broadcasted_iota(dtype, shape, d)))
        .collect();
    if rank == 0 {
        return function(&[]);
    }
    let out = crate::vmap::vmap(|coordinates: Vec<Array>| function(&coordinates))
        .call(grids)
        .unwrap_or_else(Array::error);
    let mut dims = shape.to_vec();
    dims.extend_from_slice(&out.shape_or_empty()[1..]);
    lax::reshape(&out, &dims)
}

/// One piece of [`piecewise`]: a constant or a function of the input.
pub enum Piece<'f> {
    /// The value where this piece applies.
    Value(f64),
    /// A function of the input's element where this piece applies.
    Function(&'f dyn Fn(&Array) -> Array),
}

/// `jnp.piecewise(x, condlist, funclist)`: at each element, the piece of
/// the last true condition (the default piece, `funclist`'s extra last
/// entry or 0, where none holds), each function called per element as
/// JAX's vectorized `switch` calls it, its result cast to `x`'s dtype.
#[track_caller]
pub fn piecewise(x: &Array, condlist: &[&Array], funclist: &[Piece<'_>]) -> Array {
    let (nc, nf) = (condlist.len(), funclist.len());
    let zero = Piece::Value(0.0);
    let pieces: Vec<&Piece<'_>> = if nf == nc + 1 {
        std::iter::once(&funclist[nf - 1])
            .chain(&funclist[..nf - 1])
            .collect()
    } else if nf == nc {
        std::iter::once(&zero).chain(funclist).collect()
    } else {
        return usage(
            "piecewise",
            format!(
                "with {nc} condition(s), either {nc} or {} functions are expected; got {nf}",
                nc + 1
            ),
        );
    };
    let shape = x.shape_or_empty().to_vec();
    let conditions: Vec<Array> = condlist
        .iter()
        .map(|c| super::broadcast_to(&lax::ne(c, &super::zeros_like(c)), &shape))
        .collect();
    let mut stacked: Vec<Array> = vec![super::full(&shape, 0.0, DType::Bool)];
    stacked.extend(conditions);
    let stacked = lax::convert_element_type(
        &super::stack(&stacked.iter().collect::<Vec<_>>(), 0),
        DType::I32,
    );
    let index = super::argmax(&super::cumsum(&stacked, Some(0)), Some(0));
    let index = lax::convert_element_type(&index, DType::I32);
    let dtype = x.dtype_or_bool();
    let branches: Vec<Box<dyn Fn(Array) -> Array + '_>> = pieces
        .iter()
        .map(|p| -> Box<dyn Fn(Array) -> Array + '_> {
            match p {
                Piece::Value(v) => {
                    let v = *v;
                    Box::new(move |e: Array| super::full_like(&e, v))
                }
                Piece::Function(f) => {
                    Box::new(move |e: Array| lax::convert_element_type(&f(&e), dtype))
                }
            }
        })
        .collect();
    let refs: Vec<&dyn Fn(Array) -> Array> = branches.iter().map(|b| b.as_ref()).collect();
    let out = crate::vmap::vmap(|(i, e): (Array, Array)| {
        crate::control::switch(&i, &refs, e).unwrap_or_else(Array::error)
    })
    .call((super::ravel(&index), super::ravel(x)))
    .unwrap_or_else(Array::error);
    lax::reshape(&out, &shape)
}

/// `jnp.mask_indices(n, mask_func, k, size)`: the row and column indices
/// where `mask_func(ones((n, n)), k)` is nonzero (`jnp.triu`, `jnp.tril`,
/// ...); with `size`, that many (padded with 0), else as many as there are.
#[track_caller]
pub fn mask_indices(
    n: i64,
    mask_func: impl Fn(&Array, i64) -> Array,
    k: i64,
    size: Option<i64>,
) -> (Array, Array) {
    let dtype = oxla_core::promotion::default_float(x64_enabled());
    let mask = mask_func(&super::ones(&[n, n], dtype), k);
    let size = match size {
        Some(s) => s,
        None => {
            let count = super::count_nonzero(&mask, None, false);
            let count = lax::convert_element_type(&count, DType::I32).item::<i32>();
            match count {
                Ok(c) => i64::from(c),
                Err(_) => {
                    let e = usage(
                        "mask_indices",
                        "without a size the mask must be concrete (under jit pass a size)".into(),
                    );
                    return (e.clone(), e);
                }
            }
        }
    };
    let mut rows_cols = super::nonzero(&mask, size, None);
    let cols = rows_cols.pop().unwrap_or_else(|| mask.clone());
    let rows = rows_cols.pop().unwrap_or_else(|| mask.clone());
    (rows, cols)
}

/// `jnp.trim_zeros(filt, trim, axis)`: `filt` without its leading (`'f'`
/// in `trim`) and trailing (`'b'`) slices that are all zero along each
/// axis of `axis` (all axes when `None`). The result's size depends on
/// the data, so `filt` must be concrete (as in JAX).
#[track_caller]
pub fn trim_zeros(filt: &Array, trim: &str, axis: Option<&[i64]>) -> Array {
    let rank = filt.ndim_or_zero() as i64;
    let axes: Vec<usize> = match axis {
        None => (0..rank as usize).collect(),
        Some(list) => {
            let mut out = Vec::new();
            for &a in list {
                if !(-rank..rank).contains(&a) {
                    return usage(
                        "trim_zeros",
                        format!("axis {a} is out of bounds for rank {rank}"),
                    );
                }
                out.push(a.rem_euclid(rank) as usize);
            }
            out
        }
    };
    let trim = trim.to_lowercase();
    let (front, back) = (trim.contains('f'), trim.contains('b'));
    if axes.is_empty() || !(front || back) {
        return filt.clone();
    }
    let nonzero = lax::ne(filt, &super::zeros_like(filt));
    let mut out = filt.clone();
    for d in 0..rank as usize {
        if !axes.contains(&d) {
            continue;
        }
        let others: Vec<i64> = (0..rank).filter(|&i| i != d as i64).collect();
        let along = if others.is_empty() {
            nonzero.clone()
        } else {
            super::any(&nonzero, Some(&others), false)
        };
        let Ok(flags) = along.to_vec::<bool>() else {
            return usage(
                "trim_zeros",
                "the array must be concrete (its result's size depends on its values)".into(),
            );
        };
        let n = flags.len() as i64;
        let (start, stop) = match flags.iter().position(|&b| b) {
            None => (0, 0),
            Some(first) => {
                let last = flags.iter().rposition(|&b| b).map_or(n, |l| l as i64 + 1);
                (
                    if front { first as i64 } else { 0 },
                    if back { last } else { n },
                )
            }
        };
        out = lax::slice_in_dim(&out, start, Some(stop), 1, d as i64);
    }
    out
}
