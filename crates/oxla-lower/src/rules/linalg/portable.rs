//! The decompositions StableHLO has no op for, lowered without LAPACK or
//! a vendor solver: for GPUs and TPUs, and for programs exported for
//! several platforms. They are XLA's own expansions and StableHLO loops,
//! as JAX's lowering for TPUs and its platform-independent rules:
//! - QR: the `Qr` and `ProductOfElementaryHouseholderReflectors` custom
//!   calls (XLA's `QrExpander`: blocked Householder reflections);
//! - eigh: the `Eigh` custom call (XLA's `EighExpander`: cyclic Jacobi),
//!   JAX's `eigh_jacobi` lowering;
//! - LU: JAX's `_lu_unblocked` (partial pivoting on the largest
//!   magnitude, `|re| + |im|` for complex) as one `stablehlo.while`;
//! - SVD: the eigendecomposition of the Hermitian dilation
//!   `[[0, A], [Aᴴ, 0]]`, whose eigenvalues are `±σ` and whose
//!   eigenvectors are `[u; ±v] / √2`; the singular vectors are then made
//!   exactly orthonormal by a QR of each half, signs kept.
//!
//! Every XLA compiler (CPU, GPU, TPU) runs both expanders, so these run
//! on every plugin, the CPU's included.

use melior::ir::{Location, Value};
use oxla_core::{Aval, DType, Scalar};

use super::ops::{broadcast, compare, elementwise, iota, slice};
use super::{batch_shape, layout, leading_block, one_of, pad_columns, zero_of};
use crate::attrs;
use crate::emit::{Emitter, LowerError};

/// `x` (of `aval`) reduced over `dimensions` with the binary op `combine`
/// from `identity`.
fn reduce<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    dimensions: &[usize],
    (identity, combine): (Scalar, &str),
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let kept: Vec<i64> = (0..aval.shape.len())
        .filter(|d| !dimensions.contains(d))
        .map(|d| aval.shape[d])
        .collect();
    let scalar = Aval::new(aval.dtype, &[]);
    let init = e.constant(&scalar, identity, loc)?;
    let body = e.binary_region(combine, &scalar, loc)?;
    let dims: Vec<i64> = dimensions.iter().map(|&d| d as i64).collect();
    Ok(e.op_with_regions(
        "stablehlo.reduce",
        &[x, init],
        &[&aval.with_shape(&kept)],
        &[("dimensions", attrs::i64_array(&dims))],
        vec![body],
        loc,
    )?[0])
}

/// The sum of `x` over `dimensions` where `mask` holds (zero elsewhere):
/// how a row, a column or an element at a traced index is read without a
/// gather, the same way for every batch element.
fn masked_sum<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    mask: Value<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    dimensions: &[usize],
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let zero = e.constant(aval, zero_of(aval.dtype), loc)?;
    let picked = elementwise(e, "stablehlo.select", &[mask, x, zero], aval, loc)?;
    let add = (zero_of(aval.dtype), "stablehlo.add");
    reduce(e, picked, aval, dimensions, add, loc)
}

/// The conjugate transpose of the matrices of `x` (of `aval`) and its type.
fn adjoint<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Aval), LowerError> {
    let rank = aval.shape.len();
    let mut permutation: Vec<i64> = (0..rank as i64).collect();
    permutation.swap(rank - 2, rank - 1);
    let mut shape = aval.shape.to_vec();
    shape.swap(rank - 2, rank - 1);
    let out = aval.with_shape(&shape);
    let transposed = e.op(
        "stablehlo.transpose",
        &[x],
        &[&out],
        &[("permutation", attrs::i64_array(&permutation))],
        loc,
    )?[0];
    let value = if aval.dtype.is_complex() {
        super::super::elementwise::conj(e, transposed, &out, loc)?
    } else {
        transposed
    };
    Ok((value, out))
}

/// `x` (of `aval`) sliced to `[start, limit)` along `dimension`.
fn slice_along<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    dimension: usize,
    (start, limit): (i64, i64),
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Aval), LowerError> {
    let mut starts = vec![0; aval.shape.len()];
    let mut limits = aval.shape.to_vec();
    starts[dimension] = start;
    limits[dimension] = limit;
    slice(e, x, aval, &starts, &limits, loc)
}

/// `x` (of `aval`) reversed along its last dimension.
fn reverse_last<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let last = aval.shape.len() as i64 - 1;
    Ok(e.op(
        "stablehlo.reverse",
        &[x],
        &[aval],
        &[("dimensions", attrs::i64_array(&[last]))],
        loc,
    )?[0])
}

/// `stablehlo.concatenate` of `parts` along `dimension` into `out`.
fn concatenate<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    parts: &[Value<'c, 'a>],
    out: &Aval,
    dimension: usize,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(e.op(
        "stablehlo.concatenate",
        parts,
        &[out],
        &[("dimension", attrs::i64_attr(dimension as i64))],
        loc,
    )?[0])
}

/// A custom call XLA expands itself (`Qr`, `Eigh`, ...): the original API,
/// a string `backend_config`, row-major layouts.
fn expanded_call<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    target: &str,
    (operands, operand_avals): (&[Value<'c, 'a>], &[&Aval]),
    results: &[&Aval],
    backend_config: &str,
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    e.op(
        "stablehlo.custom_call",
        operands,
        results,
        &[
            ("call_target_name", format!("\"{target}\"")),
            ("api_version", "1 : i32".into()),
            ("backend_config", format!("\"{backend_config}\"")),
            ("operand_layouts", layouts(operand_avals)),
            ("result_layouts", layouts(results)),
        ],
        loc,
    )
}

/// Row-major layouts of `avals`, as a custom call's attribute.
fn layouts(avals: &[&Aval]) -> String {
    let each: Vec<String> = avals.iter().map(|a| layout(a, false)).collect();
    format!("[{}]", each.join(", "))
}

/// Householder QR of `x` (of `aval`, `[..., m, n]`): the reflectors below
/// the diagonal with R on and above it, and the `min(m, n)` scales, as
/// LAPACK's `geqrf`.
pub(super) fn geqrf<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    taus: &Aval,
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    expanded_call(e, "Qr", (&[x], &[aval]), &[aval, taus], "", loc)
}

/// The product of the Householder reflectors in `reflectors` (of `aval`,
/// `[..., m, k]`, `m ≥ k`) with their scales, as LAPACK's `orgqr`: Q's
/// first `out`'s columns.
pub(super) fn householder_product<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    (reflectors, taus): (Value<'c, 'a>, Value<'c, 'a>),
    taus_aval: &Aval,
    out: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    Ok(expanded_call(
        e,
        "ProductOfElementaryHouseholderReflectors",
        (&[reflectors, taus], &[out, taus_aval]),
        &[out],
        "",
        loc,
    )?[0])
}

/// The Jacobi method's stopping tolerance: JAX's for 32-bit types (its
/// TPU lowering's), tighter for 64-bit ones, whose eigenvectors would
/// otherwise keep errors near 1e-6.
fn jacobi_tolerance(dtype: DType) -> &'static str {
    match dtype {
        DType::F64 | DType::C128 => "1e-13",
        DType::Bool
        | DType::I8
        | DType::I16
        | DType::I32
        | DType::I64
        | DType::U8
        | DType::U16
        | DType::U32
        | DType::U64
        | DType::F16
        | DType::BF16
        | DType::F32
        | DType::C64 => "1e-6",
    }
}

/// The eigendecomposition of the Hermitian matrices `x` (of `aval`),
/// reading the `lower` triangle or the upper: (eigenvectors as columns,
/// real eigenvalues), ascending when `sort`.
pub(super) fn eigh<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    lower: bool,
    sort: bool,
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Value<'c, 'a>), LowerError> {
    let n = aval.shape[aval.shape.len() - 1];
    let w_aval = Aval::new(aval.dtype.real_part(), &batch_shape(aval, 2, &[n]));
    let config = format!(
        "{},{},100,{}",
        u8::from(lower),
        u8::from(sort),
        jacobi_tolerance(aval.dtype)
    );
    let outs = expanded_call(e, "Eigh", (&[x], &[aval]), &[aval, &w_aval], &config, loc)?;
    Ok((outs[0], outs[1]))
}

/// LU with partial pivoting of `x` (of `aval`, `[..., m, n]`) as JAX's
/// `_lu_unblocked`: for each of the `min(m, n)` columns, the row of the
/// largest magnitude at or below the diagonal (the first of equals, a NaN
/// first) is swapped up, the column below the pivot divided by it (unless
/// it is zero) and the trailing block updated. Returns the packed factors
/// and the 0-based pivots (`pivots`' type).
pub(super) fn lu<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    pivots: &Aval,
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let rank = aval.shape.len();
    let (m, n) = (aval.shape[rank - 2], aval.shape[rank - 1]);
    let steps = m.min(n);
    let counter = Aval::new(DType::I32, &[]);
    let start = e.constant(&counter, Scalar::Int(0), loc)?;
    let no_pivots = e.constant(pivots, Scalar::Int(0), loc)?;
    let carry = [&counter, aval, pivots];
    let cond = e.region(&carry, loc, |inner, args| {
        let limit = inner.constant(&counter, Scalar::Int(steps), loc)?;
        Ok(vec![compare(inner, args[0], limit, &counter, "LT", loc)?])
    })?;
    let body = e.region(&carry, loc, |inner, args| {
        let (a, p) = lu_step(inner, args[0], args[1], args[2], aval, pivots, loc)?;
        let one = inner.constant(&counter, Scalar::Int(1), loc)?;
        let next = elementwise(inner, "stablehlo.add", &[args[0], one], &counter, loc)?;
        Ok(vec![next, a, p])
    })?;
    let outs = e.op_with_regions(
        "stablehlo.while",
        &[start, x, no_pivots],
        &carry,
        &[],
        vec![cond, body],
        loc,
    )?;
    Ok(vec![outs[1], outs[2]])
}

/// One column `k` of [`lu`]: pivot, swap, scale, update.
fn lu_step<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    k: Value<'c, 'a>,
    a: Value<'c, 'a>,
    pivots: Value<'c, 'a>,
    aval: &Aval,
    pivots_aval: &Aval,
    loc: Location<'c>,
) -> Result<(Value<'c, 'a>, Value<'c, 'a>), LowerError> {
    let rank = aval.shape.len();
    let batch: Vec<i64> = (0..rank as i64 - 2).collect();
    let m = aval.shape[rank - 2];
    let index = aval.with_dtype(DType::I32);
    let (rows, cols) = (
        iota(e, &aval.shape, rank - 2, loc)?,
        iota(e, &aval.shape, rank - 1, loc)?,
    );
    let k_matrix = broadcast(e, k, &index, &[], loc)?;
    let in_column_k = compare(e, cols, k_matrix, &index, "EQ", loc)?;
    let in_row_k = compare(e, rows, k_matrix, &index, "EQ", loc)?;

    // The pivot: the largest magnitude in column k at or below row k.
    let column = Aval::new(aval.dtype, &batch_shape(aval, 2, &[m]));
    let column_index = column.with_dtype(DType::I32);
    let column_k = masked_sum(e, in_column_k, a, aval, &[rank - 1], loc)?;
    let magnitude = magnitude(e, column_k, &column, loc)?;
    let real_column = column.with_dtype(aval.dtype.real_part());
    let row_of_column = iota(e, &column.shape, rank - 2, loc)?;
    let k_column = broadcast(e, k, &column_index, &[], loc)?;
    let candidate = compare(e, row_of_column, k_column, &column_index, "GE", loc)?;
    let minus_inf = e.constant(&real_column, Scalar::Float(f64::NEG_INFINITY), loc)?;
    let masked = elementwise(
        e,
        "stablehlo.select",
        &[candidate, magnitude, minus_inf],
        &real_column,
        loc,
    )?;
    let largest = reduce(
        e,
        masked,
        &real_column,
        &[rank - 2],
        (Scalar::Float(f64::NEG_INFINITY), "stablehlo.maximum"),
        loc,
    )?;
    let largest = broadcast(e, largest, &real_column, &batch, loc)?;
    let at_largest = compare(e, masked, largest, &real_column, "EQ", loc)?;
    let is_nan = compare(e, masked, masked, &real_column, "NE", loc)?;
    let at_largest = elementwise(
        e,
        "stablehlo.or",
        &[at_largest, is_nan],
        &column.with_dtype(DType::Bool),
        loc,
    )?;
    let past_end = e.constant(&column_index, Scalar::Int(m), loc)?;
    let rows_at_largest = elementwise(
        e,
        "stablehlo.select",
        &[at_largest, row_of_column, past_end],
        &column_index,
        loc,
    )?;
    let pivot = reduce(
        e,
        rows_at_largest,
        &column_index,
        &[rank - 2],
        (Scalar::Int(i64::from(i32::MAX)), "stablehlo.minimum"),
        loc,
    )?;

    // pivots[..., k] = pivot.
    let pivot_slot = iota(e, &pivots_aval.shape, rank - 2, loc)?;
    let k_pivots = broadcast(e, k, pivots_aval, &[], loc)?;
    let at_k = compare(e, pivot_slot, k_pivots, pivots_aval, "EQ", loc)?;
    let pivot_everywhere = broadcast(e, pivot, pivots_aval, &batch, loc)?;
    let pivots = elementwise(
        e,
        "stablehlo.select",
        &[at_k, pivot_everywhere, pivots],
        pivots_aval,
        loc,
    )?;

    // Swap rows k and pivot.
    let pivot_matrix = broadcast(e, pivot, &index, &batch, loc)?;
    let in_pivot_row = compare(e, rows, pivot_matrix, &index, "EQ", loc)?;
    let row_dims: Vec<i64> = batch.iter().copied().chain([rank as i64 - 1]).collect();
    let row = |e: &mut Emitter<'c, 'a>, mask: Value<'c, 'a>, a: Value<'c, 'a>| {
        let r = masked_sum(e, mask, a, aval, &[rank - 2], loc)?;
        broadcast(e, r, aval, &row_dims, loc)
    };
    let row_k = row(e, in_row_k, a)?;
    let row_pivot = row(e, in_pivot_row, a)?;
    let a = elementwise(e, "stablehlo.select", &[in_pivot_row, row_k, a], aval, loc)?;
    let a = elementwise(e, "stablehlo.select", &[in_row_k, row_pivot, a], aval, loc)?;

    // Column k below the diagonal divided by the pivot, unless it is zero.
    let column_k = masked_sum(e, in_column_k, a, aval, &[rank - 1], loc)?;
    let diagonal = elementwise(
        e,
        "stablehlo.and",
        &[in_row_k, in_column_k],
        &aval.with_dtype(DType::Bool),
        loc,
    )?;
    let pivot_value = masked_sum(e, diagonal, a, aval, &[rank - 2, rank - 1], loc)?;
    let pivot_value = broadcast(e, pivot_value, &column, &batch, loc)?;
    let zero_column = e.constant(&column, zero_of(aval.dtype), loc)?;
    let nonzero = compare(e, pivot_value, zero_column, &column, "NE", loc)?;
    let below = compare(e, row_of_column, k_column, &column_index, "GT", loc)?;
    let scale = elementwise(
        e,
        "stablehlo.and",
        &[below, nonzero],
        &column.with_dtype(DType::Bool),
        loc,
    )?;
    let divided = elementwise(
        e,
        "stablehlo.divide",
        &[column_k, pivot_value],
        &column,
        loc,
    )?;
    let multipliers = elementwise(
        e,
        "stablehlo.select",
        &[scale, divided, column_k],
        &column,
        loc,
    )?;
    let column_dims: Vec<i64> = batch.iter().copied().chain([rank as i64 - 2]).collect();
    let multipliers = broadcast(e, multipliers, aval, &column_dims, loc)?;
    let a = elementwise(
        e,
        "stablehlo.select",
        &[in_column_k, multipliers, a],
        aval,
        loc,
    )?;

    // The trailing block minus the outer product of the multipliers and row k.
    let row_k = row(e, in_row_k, a)?;
    let outer = elementwise(e, "stablehlo.multiply", &[multipliers, row_k], aval, loc)?;
    let below_k = compare(e, rows, k_matrix, &index, "GT", loc)?;
    let right_of_k = compare(e, cols, k_matrix, &index, "GT", loc)?;
    let trailing = elementwise(
        e,
        "stablehlo.and",
        &[below_k, right_of_k],
        &aval.with_dtype(DType::Bool),
        loc,
    )?;
    let zero = e.constant(aval, zero_of(aval.dtype), loc)?;
    let update = elementwise(e, "stablehlo.select", &[trailing, outer, zero], aval, loc)?;
    let a = elementwise(e, "stablehlo.subtract", &[a, update], aval, loc)?;
    Ok((a, pivots))
}

/// The pivoting magnitude of `x` (of `aval`): `|x|`, or `|re| + |im|`
/// for complex values, as JAX's `_lu_unblocked`.
fn magnitude<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let real = aval.with_dtype(aval.dtype.real_part());
    if !aval.dtype.is_complex() {
        return elementwise(e, "stablehlo.abs", &[x], &real, loc);
    }
    let re = elementwise(e, "stablehlo.real", &[x], &real, loc)?;
    let im = elementwise(e, "stablehlo.imag", &[x], &real, loc)?;
    let re = elementwise(e, "stablehlo.abs", &[re], &real, loc)?;
    let im = elementwise(e, "stablehlo.abs", &[im], &real, loc)?;
    elementwise(e, "stablehlo.add", &[re, im], &real, loc)
}

/// The SVD of `x` (of `aval`, `[..., m, n]`) from the eigendecomposition
/// of its Hermitian dilation (see the module's comment): the singular
/// values descending, then, with `compute_uv`, U and Vᴴ (complete when
/// `full_matrices`).
pub(super) fn svd<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    full_matrices: bool,
    compute_uv: bool,
    loc: Location<'c>,
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let rank = aval.shape.len();
    let (m, n) = (aval.shape[rank - 2], aval.shape[rank - 1]);
    // A tall matrix T (p × q, p ≥ q): x itself, or xᴴ for a wide x.
    let wide = m < n;
    let (t, t_aval) = if wide {
        adjoint(e, x, aval, loc)?
    } else {
        (x, aval.clone())
    };
    let (p, q) = (m.max(n), m.min(n));
    let (t_h, _) = adjoint(e, t, &t_aval, loc)?;
    let square = |size: i64| aval.with_shape(&batch_shape(aval, 2, &[size, size]));
    let zeros_p = e.constant(&square(p), zero_of(aval.dtype), loc)?;
    let zeros_q = e.constant(&square(q), zero_of(aval.dtype), loc)?;
    let top = aval.with_shape(&batch_shape(aval, 2, &[p, p + q]));
    let top_value = concatenate(e, &[zeros_p, t], &top, rank - 1, loc)?;
    let bottom = aval.with_shape(&batch_shape(aval, 2, &[q, p + q]));
    let bottom_value = concatenate(e, &[t_h, zeros_q], &bottom, rank - 1, loc)?;
    let dilation = square(p + q);
    let h = concatenate(e, &[top_value, bottom_value], &dilation, rank - 2, loc)?;
    let (vectors, values) = eigh(e, h, &dilation, true, true, loc)?;

    // Ascending eigenvalues: -σ₁ … -σ_q, p - q zeros, σ_q … σ₁.
    let values_aval = Aval::new(aval.dtype.real_part(), &batch_shape(aval, 2, &[p + q]));
    let (top_values, s_aval) = slice_along(e, values, &values_aval, rank - 2, (p, p + q), loc)?;
    let s = reverse_last(e, top_values, &s_aval, loc)?;
    let zero = e.constant(&s_aval, Scalar::Float(0.0), loc)?;
    let s = elementwise(e, "stablehlo.maximum", &[s, zero], &s_aval, loc)?;
    if !compute_uv {
        return Ok(vec![s]);
    }
    let (columns, columns_aval) = slice_along(e, vectors, &dilation, rank - 1, (p, p + q), loc)?;
    let columns = reverse_last(e, columns, &columns_aval, loc)?;
    let (u_half, u_half_aval) = slice_along(e, columns, &columns_aval, rank - 2, (0, p), loc)?;
    let (v_half, v_half_aval) = slice_along(e, columns, &columns_aval, rank - 2, (p, p + q), loc)?;
    let u_columns = if full_matrices { p } else { q };
    let u = orthonormal_columns(e, u_half, &u_half_aval, u_columns, loc)?;
    let v = orthonormal_columns(e, v_half, &v_half_aval, q, loc)?;
    let u_aval = aval.with_shape(&batch_shape(aval, 2, &[p, u_columns]));
    let v_aval = square(q);
    // T = U Σ Vᴴ; for a wide x = Tᴴ = V Σ Uᴴ.
    let (u, vh) = if wide {
        (v, adjoint(e, u, &u_aval, loc)?.0)
    } else {
        (u, adjoint(e, v, &v_aval, loc)?.0)
    };
    Ok(vec![s, u, vh])
}

/// Orthonormal columns spanning `x`'s (of `aval`, `[..., p, q]`, `p ≥ q`)
/// in order, each with the direction (phase) of `x`'s column: Q of a
/// Householder QR times the signs of R's diagonal; `columns > q` also
/// returns Q's completion to a basis.
fn orthonormal_columns<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    columns: i64,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let rank = aval.shape.len();
    let q = aval.shape[rank - 1];
    let taus_aval = aval.with_shape(&batch_shape(aval, 2, &[q]));
    let factors = geqrf(e, x, aval, &taus_aval, loc)?;
    let (packed, taus) = (factors[0], factors[1]);
    let (reflectors, reflectors_aval) = if columns > q {
        pad_columns(e, packed, aval, columns, loc)?
    } else {
        (packed, aval.clone())
    };
    let q_matrix = householder_product(e, (reflectors, taus), &taus_aval, &reflectors_aval, loc)?;

    // R's diagonal, as the phase of each column (1 where it is zero).
    let (square, _) = leading_block(e, packed, aval, q, q, loc)?;
    let square_aval = aval.with_shape(&batch_shape(aval, 2, &[q, q]));
    let rows = iota(e, &square_aval.shape, rank - 2, loc)?;
    let cols = iota(e, &square_aval.shape, rank - 1, loc)?;
    let index = square_aval.with_dtype(DType::I32);
    let on_diagonal = compare(e, rows, cols, &index, "EQ", loc)?;
    let diagonal = masked_sum(e, on_diagonal, square, &square_aval, &[rank - 2], loc)?;
    let diagonal_aval = taus_aval.clone();
    let phase = phase(e, diagonal, &diagonal_aval, loc)?;
    let phase = if columns > q {
        let ones_aval = aval.with_shape(&batch_shape(aval, 2, &[columns - q]));
        let ones = e.constant(&ones_aval, one_of(aval.dtype), loc)?;
        let all = aval.with_shape(&batch_shape(aval, 2, &[columns]));
        concatenate(e, &[phase, ones], &all, rank - 2, loc)?
    } else {
        phase
    };
    let dims: Vec<i64> = (0..rank as i64 - 2).chain([rank as i64 - 1]).collect();
    let phase = broadcast(e, phase, &reflectors_aval, &dims, loc)?;
    elementwise(
        e,
        "stablehlo.multiply",
        &[q_matrix, phase],
        &reflectors_aval,
        loc,
    )
}

/// `x / |x|` (of `aval`), 1 where `x` is zero.
fn phase<'c, 'a>(
    e: &mut Emitter<'c, 'a>,
    x: Value<'c, 'a>,
    aval: &Aval,
    loc: Location<'c>,
) -> Result<Value<'c, 'a>, LowerError> {
    let real = aval.with_dtype(aval.dtype.real_part());
    let size = elementwise(e, "stablehlo.abs", &[x], &real, loc)?;
    let zero = e.constant(&real, Scalar::Float(0.0), loc)?;
    let is_zero = compare(e, size, zero, &real, "EQ", loc)?;
    let one_real = e.constant(&real, Scalar::Float(1.0), loc)?;
    let divisor = elementwise(
        e,
        "stablehlo.select",
        &[is_zero, one_real, size],
        &real,
        loc,
    )?;
    let divisor = if aval.dtype.is_complex() {
        elementwise(e, "stablehlo.complex", &[divisor, zero], aval, loc)?
    } else {
        divisor
    };
    let unit = elementwise(e, "stablehlo.divide", &[x, divisor], aval, loc)?;
    let one = e.constant(aval, one_of(aval.dtype), loc)?;
    elementwise(e, "stablehlo.select", &[is_zero, one, unit], aval, loc)
}
