//! `jnp.histogram` and its kin (`histogram_bin_edges`, `histogram2d`,
//! `histogramdd`) with static bins, as JAX computes them: equal-width
//! edges by JAX's `linspace` over the range (widened by ½ when it is
//! empty), each value's bin by `searchsorted` (the last edge closing the
//! last bin), counts by a scatter-add of the weights.

use oxla_core::DType;

use super::usage;
use crate::array::Array;
use crate::lax;

/// A histogram's bins along one dimension.
#[derive(Debug, Clone)]
pub enum Bins {
    /// This many bins of equal width over the range.
    Count(i64),
    /// The bins' edges (increasing, one more than the bins).
    Edges(Array),
}

/// `x` in the inexact dtype JAX computes histograms in.
fn inexact(x: &Array) -> Array {
    super::to_inexact(x)
}

/// JAX's `linspace(start, stop, num)` for array endpoints (scalars):
/// `start·(1 − t) + stop·t` with `t = i / (num − 1)`, the last `stop`.
fn linspace_between(start: &Array, stop: &Array, num: i64, dtype: DType) -> Array {
    if num <= 1 {
        return lax::reshape(start, &[num.max(0)]);
    }
    let div = num - 1;
    let t = lax::div(
        &lax::iota(dtype, &[div], 0),
        &lax::convert_element_type(&Array::weak_scalar(div as f64), dtype),
    );
    let one = super::ones_like(&t);
    let out = lax::add(&lax::mul(start, &lax::sub(&one, &t)), &lax::mul(stop, &t));
    super::concatenate(&[&out, &lax::reshape(stop, &[1])], 0)
}

/// `jnp.histogram_bin_edges(a, bins, range)`: the edges of `bins` (given,
/// or a count of equal bins over `range`, default `a`'s minimum and
/// maximum).
#[track_caller]
pub fn histogram_bin_edges(a: &Array, bins: &Bins, range: Option<(f64, f64)>) -> Array {
    let arr = inexact(a);
    let dtype = arr.dtype_or_bool();
    let n = match bins {
        Bins::Edges(edges) => {
            if edges.ndim_or_zero() != 1 {
                return usage(
                    "histogram_bin_edges",
                    format!(
                        "bin edges must be 1-d, got shape {:?}",
                        edges.shape_or_empty()
                    ),
                );
            }
            return lax::convert_element_type(edges, dtype);
        }
        Bins::Count(n) if *n < 1 => {
            return usage(
                "histogram_bin_edges",
                format!("bins must be a positive count, got {n}"),
            );
        }
        Bins::Count(n) => *n,
    };
    let (lo, hi) = match range {
        Some((lo, hi)) => (
            lax::convert_element_type(&Array::weak_scalar(lo), dtype),
            lax::convert_element_type(&Array::weak_scalar(hi), dtype),
        ),
        None => (super::min(&arr, None, false), super::max(&arr, None, false)),
    };
    let empty = lax::eq(&lax::sub(&hi, &lo), &super::zeros_like(&lo));
    let half = super::full_like(&lo, 0.5);
    let lo = lax::select(&empty, &lax::sub(&lo, &half), &lo);
    let hi = lax::select(&empty, &lax::add(&hi, &half), &hi);
    linspace_between(&lo, &hi, n + 1, dtype)
}

/// The weights of a histogram (ones when not given) and the values, both
/// flattened and promoted to a common inexact dtype.
#[track_caller]
fn values_and_weights(
    function: &str,
    a: &Array,
    weights: Option<&Array>,
) -> Result<(Array, Array), Array> {
    match weights {
        None => {
            let a = inexact(&super::ravel(a));
            let w = super::ones_like(&a);
            Ok((a, w))
        }
        Some(w) if w.shape_or_empty() != a.shape_or_empty() => Err(usage(
            function,
            format!(
                "weights should have the same shape as a ({:?}), got {:?}",
                a.shape_or_empty(),
                w.shape_or_empty()
            ),
        )),
        Some(w) => {
            let v = super::promote_args(&[&super::ravel(a), &super::ravel(w)]);
            Ok((inexact(&v[0]), inexact(&v[1])))
        }
    }
}

/// `jnp.histogram(a, bins, range, weights, density)`: the (weighted)
/// counts of `a`'s values in each bin and the bins' edges; with
/// `density`, normalised to integrate to 1.
#[track_caller]
pub fn histogram(
    a: &Array,
    bins: &Bins,
    range: Option<(f64, f64)>,
    weights: Option<&Array>,
    density: bool,
) -> (Array, Array) {
    let (a, weights) = match values_and_weights("histogram", a, weights) {
        Ok(v) => v,
        Err(e) => return (e.clone(), e),
    };
    let edges = histogram_bin_edges(&a, bins, range);
    if edges.aval().is_err() {
        return (edges.clone(), edges);
    }
    let n = edges.size_or_one();
    let index = super::searchsorted(&edges, &a, "right");
    let last_edge = lax::slice_in_dim(&edges, n - 1, Some(n), 1, 0);
    let at_last = lax::eq(&a, &super::broadcast_to(&last_edge, a.shape_or_empty()));
    let index = lax::select(&at_last, &super::full_like(&index, (n - 1) as f64), &index);
    let counts = super::bincount(&index, Some(&weights), n);
    let counts = lax::slice_in_dim(&counts, 1, None, 1, 0);
    let counts = if density {
        let widths = super::arrays::diff(&edges, 1, 0);
        lax::div(
            &lax::div(&counts, &widths),
            &super::sum(&counts, None, false),
        )
    } else {
        counts
    };
    (counts, edges)
}

/// `jnp.histogramdd(sample, bins, range, weights, density)`: the counts of
/// the `[N, D]` sample's points in each cell of a D-dimensional grid and
/// each dimension's edges. `bins` holds one entry per dimension, or one
/// for all; `range` one optional `(low, high)` per dimension.
#[track_caller]
pub fn histogramdd(
    sample: &Array,
    bins: &[Bins],
    range: Option<&[Option<(f64, f64)>]>,
    weights: Option<&Array>,
    density: bool,
) -> (Array, Vec<Array>) {
    let fail = |e: Array| (e.clone(), vec![e]);
    let shape = sample.shape_or_empty().to_vec();
    let [points, dims] = shape[..] else {
        return fail(usage(
            "histogramdd",
            format!("sample must be [N, D], got shape {shape:?}"),
        ));
    };
    let sample = match weights {
        Some(w) if w.shape_or_empty() != [points] => {
            return fail(usage(
                "histogramdd",
                format!(
                    "should have one weight for each sample ({points}), got shape {:?}",
                    w.shape_or_empty()
                ),
            ));
        }
        Some(w) => super::promote_args(&[sample, w]).remove(0),
        None => sample.clone(),
    };
    let sample = inexact(&sample);
    let dtype = sample.dtype_or_bool();
    let d = dims as usize;
    if let Some(r) = range
        && r.len() != d
    {
        return fail(usage(
            "histogramdd",
            format!(
                "range must be a sequence of {d} pairs or Nones, got {}",
                r.len()
            ),
        ));
    }
    let per_dimension: Vec<&Bins> = match bins.len() {
        1 => vec![&bins[0]; d],
        n if n == d => bins.iter().collect(),
        n => {
            return fail(usage(
                "histogramdd",
                format!("should be a bin for each dimension ({d}), got {n}"),
            ));
        }
    };
    let mut indices = Vec::with_capacity(d);
    let mut edges = Vec::with_capacity(d);
    for (i, b) in per_dimension.iter().enumerate() {
        let column = lax::reshape(
            &lax::slice_in_dim(&sample, i as i64, Some(i as i64 + 1), 1, 1),
            &[points],
        );
        let e = histogram_bin_edges(&column, b, range.and_then(|r| r[i]));
        if e.aval().is_err() {
            return fail(e);
        }
        let n = e.size_or_one();
        let index = super::searchsorted(&e, &column, "right");
        let last = lax::slice_in_dim(&e, n - 1, Some(n), 1, 0);
        let at_last = lax::eq(&column, &super::broadcast_to(&last, &[points]));
        let one = super::ones_like(&index);
        indices.push(lax::select(&at_last, &lax::sub(&index, &one), &index));
        edges.push(e);
    }
    let nbins: Vec<i64> = edges.iter().map(|e| e.size_or_one() + 1).collect();
    let flat = super::ravel_multi_index(
        &indices.iter().collect::<Vec<_>>(),
        &nbins,
        super::IndexMode::Clip,
        false,
    );
    let weights = weights.map(|w| lax::convert_element_type(w, dtype));
    let hist = super::bincount(&flat, weights.as_ref(), nbins.iter().product());
    let mut hist = lax::reshape(&hist, &nbins);
    for (axis, &n) in nbins.iter().enumerate() {
        hist = lax::slice_in_dim(&hist, 1, Some(n - 1), 1, axis as i64);
    }
    if density {
        let hist_f = lax::convert_element_type(&hist, dtype);
        let mut normed = lax::div(&hist_f, &super::sum(&hist_f, None, false));
        let widths: Vec<Array> = edges.iter().map(|e| super::arrays::diff(e, 1, 0)).collect();
        for norm in super::ix_(&widths.iter().collect::<Vec<_>>()) {
            normed = lax::div(&normed, &norm);
        }
        hist = normed;
    }
    (hist, edges)
}

/// `jnp.histogram2d(x, y, bins, range, weights, density)`: the counts of
/// the points `(x[i], y[i])` in a 2-d grid, with the x and y edges.
/// `bins` holds one entry for both dimensions or one each.
#[track_caller]
pub fn histogram2d(
    x: &Array,
    y: &Array,
    bins: &[Bins],
    range: Option<&[Option<(f64, f64)>]>,
    weights: Option<&Array>,
    density: bool,
) -> (Array, Array, Array) {
    if x.shape_or_empty() != y.shape_or_empty() || x.ndim_or_zero() != 1 {
        let e = usage(
            "histogram2d",
            format!(
                "x and y must be 1-d of one length, got {:?} and {:?}",
                x.shape_or_empty(),
                y.shape_or_empty()
            ),
        );
        return (e.clone(), e.clone(), e);
    }
    let v = super::promote_args(&[x, y]);
    let sample = super::stack(&[&v[0], &v[1]], 1);
    let (hist, mut edges) = histogramdd(&sample, bins, range, weights, density);
    let y_edges = edges.pop().unwrap_or_else(|| hist.clone());
    let x_edges = edges.pop().unwrap_or_else(|| hist.clone());
    (hist, x_edges, y_edges)
}
