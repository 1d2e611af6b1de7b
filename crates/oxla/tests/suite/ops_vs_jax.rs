//! Every op against JAX: each case of reference/ops.py runs in oxla eagerly
//! and under jit, and must match JAX's output within the dtype's tolerance.

use crate::reference;

use oxla::lax::FftType;
use oxla::lax::linalg::TriangularSolveOptions as Solve;
use oxla::numpy::PadMode;
use oxla::numpy::fft::{self, Norm};
use oxla::numpy::linalg as la;
use oxla::{Array, DType, NEW_AXIS, jit, lax, numpy as jnp, s};
use oxla_core::WindowOp;
use oxla_nn as nn;
use std::collections::BTreeMap;

use oxla_testing::{BoundedOutput, Tolerance, compare};

/// ops.py's MASK, ROW_MASK and the column mask `ROW_MASK + [True]`.
const MASK: [bool; 12] = [
    true, false, true, false, false, false, true, true, true, true, false, false,
];
const ROW_MASK: [bool; 3] = [true, false, true];
const COLUMN_MASK: [bool; 4] = [true, false, true, true];

/// A concrete boolean mask (a constant even inside a traced case).
/// `v` with each vector along `axis` (columns: -2, rows: -1) times the
/// sign of its largest entry, as reference/ops.py's `canonical_signs`:
/// eigen- and singular vectors are defined up to a sign, which LAPACK, a
/// GPU's solvers and XLA's expansions choose differently.
fn canonical_signs(v: &Array, axis: i64) -> Array {
    let largest = jnp::expand_dims(&jnp::argmax(&jnp::abs(v), Some(axis)), axis);
    v * &jnp::sign(&jnp::take_along_axis(v, &largest, axis))
}

fn mask(values: &[bool], shape: &[i64]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

/// oxla's version of each reference case.
pub(crate) fn apply(name: &str, a: &[Array]) -> Array {
    let x = || &a[0];
    let y = || &a[1];
    // A triangular solve of x and y: left_side, lower, transpose_a,
    // conjugate_a, unit_diagonal.
    let solve = |left_side, lower, transpose_a, conjugate_a, unit_diagonal| {
        lax::linalg::triangular_solve(
            x(),
            y(),
            Solve {
                left_side,
                lower,
                transpose_a,
                conjugate_a,
                unit_diagonal,
            },
        )
    };
    let vectorized = |out: oxla::Result<Array>| out.unwrap_or_else(Array::error);
    // A scatter of single elements of a vector.
    let points = || lax::ScatterDimensionNumbers {
        update_window_dims: [].into_iter().collect(),
        inserted_window_dims: [0].into_iter().collect(),
        scatter_dims_to_operand_dims: [0].into_iter().collect(),
    };
    // lax.ragged_dot_general of the three inputs with these dimension numbers.
    let ragged = |dot: lax::DotDimensionNumbers<'_>, lhs_ragged: &[i64], rhs_group: &[i64]| {
        let dims = lax::RaggedDotDimensionNumbers {
            dot_dimension_numbers: dot,
            lhs_ragged_dimensions: lhs_ragged,
            rhs_group_dimensions: rhs_group,
        };
        lax::ragged_dot_general(&a[0], &a[1], &a[2], dims, None, None)
    };
    // "case@bf16", "case@f64", ...: the case on inputs of another dtype.
    match name.split('@').next().unwrap_or(name) {
        "neg" => lax::neg(x()),
        "sign" | "sign_u8" | "sign_int" => lax::sign(x()),
        "abs" | "abs_int" => lax::abs(x()),
        "floor" => lax::floor(x()),
        "ceil" => lax::ceil(x()),
        "round" => lax::round(x()),
        "exp" | "exp_f16" => lax::exp(x()),
        "exp2" => lax::exp2(x()),
        "expm1" => lax::expm1(x()),
        "log" => lax::log(x()),
        "log1p" => lax::log1p(x()),
        "sqrt" => lax::sqrt(x()),
        "rsqrt" => lax::rsqrt(x()),
        "cbrt" => lax::cbrt(x()),
        "tanh" => lax::tanh(x()),
        "logistic" => lax::logistic(x()),
        "sin" => lax::sin(x()),
        "cos" => lax::cos(x()),
        "tan" => lax::tan(x()),
        "asin" => lax::asin(x()),
        "acos" => lax::acos(x()),
        "atan" => lax::atan(x()),
        "sinh" => lax::sinh(x()),
        "cosh" => lax::cosh(x()),
        "asinh" => lax::asinh(x()),
        "acosh" => lax::acosh(x()),
        "atanh" => lax::atanh(x()),
        "erf" => lax::erf(x()),
        "erfc" => lax::erfc(x()),
        "erf_inv" => lax::erf_inv(x()),
        "lgamma" => lax::lgamma(x()),
        "digamma" => lax::digamma(x()),
        "polygamma" => lax::polygamma(&jnp::full_like(x(), 2.0), x()),
        "square" => lax::square(x()),
        "is_finite" => lax::is_finite(x()),
        "not_bool" | "not_int" => lax::not(x()),
        "population_count" => lax::population_count(x()),
        "clz" | "clz_u8" => lax::clz(x()),
        "scatter_add_clip" | "scatter_mul_drop" => {
            let windows = lax::ScatterDimensionNumbers {
                update_window_dims: [1].into_iter().collect(),
                inserted_window_dims: [0].into_iter().collect(),
                scatter_dims_to_operand_dims: [0, 1].into_iter().collect(),
            };
            let (op, mode) = match name {
                "scatter_add_clip" => (lax::ScatterOp::Add, lax::GatherMode::Clip),
                _ => (lax::ScatterOp::Mul, lax::GatherMode::Fill),
            };
            lax::scatter_with_mode(x(), y(), &a[2], op, windows, mode)
        }
        "bessel_i0e" => lax::bessel_i0e(x()),
        "bessel_i1e" => lax::bessel_i1e(x()),
        "add" => lax::add(x(), y()),
        "sub" => lax::sub(x(), y()),
        "mul" => lax::mul(x(), y()),
        "div" | "div_int" => lax::div(x(), y()),
        "rem" | "rem_int" => lax::rem(x(), y()),
        "axis_sum" => jnp::sum(x(), Some(&[-3, -1]), false),
        "axis_prod_keep" => jnp::prod(x(), Some(&[-2]), true),
        "axis_max" => jnp::max(x(), Some(&[-1]), false),
        "axis_min" => jnp::min(x(), Some(&[-3]), false),
        "axis_mean" => jnp::mean(x(), Some(&[-2]), false),
        "axis_var" => jnp::var(x(), Some(&[-1]), false),
        "axis_std" => jnp::std(x(), Some(&[-2]), true),
        "axis_transpose" => jnp::transpose(x(), Some(&[-1, 0, -2])),
        "axis_concatenate" => jnp::concatenate(&[x(), y()], -2),
        "axis_stack" => jnp::stack(&[x(), y()], -1),
        "axis_expand_dims" => jnp::expand_dims(x(), -2),
        "axis_squeeze" => jnp::squeeze(x(), Some(&[-2])),
        "axis_argmax" => jnp::argmax(x(), Some(-2)),
        "axis_argmin" => jnp::argmin(x(), Some(-1)),
        "axis_cumsum" => jnp::cumsum(x(), Some(-1)),
        "axis_cumprod" => jnp::cumprod(x(), Some(-2)),
        "axis_sort" => jnp::sort(x(), -2),
        "axis_argsort" => jnp::argsort(x(), -1),
        "axis_take" => jnp::take(x(), y(), Some(-1), true),
        "axis_take_along_axis" => jnp::take_along_axis(x(), y(), -2),
        "axis_split" => jnp::split(x(), 2, -1).swap_remove(1),
        "axis_logsumexp" => nn::logsumexp(x(), Some(&[-2]), false),
        "axis_softmax" => nn::softmax(x(), Some(&[-2])),
        "axis_log_softmax" => nn::log_softmax(x(), Some(&[-3, -1])),
        "axis_lax_squeeze" => lax::squeeze(x(), &[-2]),
        "axis_lax_expand_dims" => lax::expand_dims(x(), &[-1, 0]),
        "axis_lax_split" => lax::split(x(), &[1, 3], -1).swap_remove(1),
        "axis_lax_sort" => lax::sort(&[x()], -2, true, 1).swap_remove(0),
        "op_mod" | "op_mod_int" => x() % y(),
        "op_mod_scalar" => x() % -2.0,
        "jnp_remainder" | "jnp_remainder_int" | "jnp_remainder_u8" | "jnp_remainder_bool" => {
            jnp::remainder(x(), y())
        }
        "jnp_fmod" | "jnp_fmod_int" => jnp::fmod(x(), y()),
        "jnp_floor_divide" | "jnp_floor_divide_int" | "jnp_floor_divide_u8" => {
            jnp::floor_divide(x(), y())
        }
        "jnp_divmod_quotient" | "jnp_divmod_int_quotient" => jnp::divmod(x(), y()).0,
        "jnp_divmod_remainder" | "jnp_divmod_int_remainder" => jnp::divmod(x(), y()).1,
        "pow" => lax::pow(x(), y()),
        "max" | "max_bool" => lax::max(x(), y()),
        "min" => lax::min(x(), y()),
        "atan2" => lax::atan2(x(), y()),
        "nextafter" => lax::nextafter(x(), y()),
        "and" => lax::and(x(), y()),
        "or" => lax::or(x(), y()),
        "xor" => lax::xor(x(), y()),
        "shift_left" => lax::shift_left(x(), y()),
        "shift_right_logical" => lax::shift_right_logical(x(), y()),
        "shift_right_arithmetic" => lax::shift_right_arithmetic(x(), y()),
        "eq" => lax::eq(x(), y()),
        "ne" => lax::ne(x(), y()),
        "lt" => lax::lt(x(), y()),
        "le" => lax::le(x(), y()),
        "gt" => lax::gt(x(), y()),
        "ge" => lax::ge(x(), y()),
        "integer_pow" => lax::integer_pow(x(), 3),
        "integer_pow_neg" => lax::integer_pow(x(), -2),
        "select_n" => lax::select_n(x(), &[y(), &a[2]]),
        "select_n_3" => lax::select_n(x(), &[y(), &a[2], &a[3]]),
        "clamp" => lax::clamp(
            &Array::weak_scalar(-0.5f32),
            x(),
            &Array::weak_scalar(0.5f32),
        ),
        "convert_f32_i32" => lax::convert_element_type(x(), DType::I32),
        "convert_i32_f16" => lax::convert_element_type(x(), DType::F16),
        "convert_f32_bool" => lax::convert_element_type(x(), DType::Bool),
        "iota" => lax::iota(DType::I32, &[5], 0),
        "iota_2d" => lax::iota(DType::F32, &[2, 3], 1),
        "broadcast_in_dim" => lax::broadcast_in_dim(x(), &[2, 3, 4], &[1, 2]),
        "reshape" => lax::reshape(x(), &[2, 6]),
        "transpose" => lax::transpose(x(), &[1, 0]),
        "squeeze" => lax::squeeze(x(), &[0]),
        "expand_dims" => lax::expand_dims(x(), &[1]),
        "rev" => lax::rev(x(), &[0, 1]),
        "concatenate" => lax::concatenate(&[x(), y()], 1),
        "lax_split" => {
            let p = lax::split(x(), &[1, 2, 1], 1);
            &p[0] * &p[2] + lax::slice(&p[1], &[0, 0], &[3, 1], None)
        }
        "lax_split_one" => lax::split(x(), &[2, 1], 0)[1].clone(),
        "pad" => lax::pad(x(), &Array::weak_scalar(0.5f32), &[(1, 2, 1), (-1, 0, 0)]),
        "slice" => lax::slice(x(), &[1, 0], &[3, 4], Some(&[1, 2])),
        "reduce_sum" => lax::reduce_sum(x(), &[1]),
        "reduce_max" => lax::reduce_max(x(), &[0, 1]),
        "reduce_max_bool" => lax::reduce_max(x(), &[1]),
        "reduce_min" => lax::reduce_min(x(), &[0]),
        "reduce_prod" => lax::reduce_prod(x(), &[1]),
        "reduce_and" | "reduce_and_u8" => lax::reduce_and(x(), &[1]),
        "reduce_and_int" => lax::reduce_and(x(), &[0]),
        "reduce_or" => lax::reduce_or(x(), &[0]),
        "reduce_or_u8" => lax::reduce_or(x(), &[1]),
        "dot_general" => lax::dot_general(x(), y(), ((&[1], &[0]), (&[], &[])), None),
        "dot_general_highest" => lax::dot_general_with_precision(
            x(),
            y(),
            ((&[1], &[0]), (&[], &[])),
            None,
            Some(oxla_core::Precision::Highest),
        ),
        "dot_general_batch" => lax::dot_general(x(), y(), ((&[2], &[1]), (&[0], &[0])), None),
        "dynamic_slice" => lax::dynamic_slice(x(), &[y(), &a[2]], &[2, 3]),
        "dynamic_update_slice" => lax::dynamic_update_slice(x(), y(), &[&a[2], &a[3]]),
        "bitcast_f32_i32" => lax::bitcast_convert_type(x(), DType::I32),
        "bitcast_f32_u8" => lax::bitcast_convert_type(x(), DType::U8),
        "bitcast_i16_f32" => lax::bitcast_convert_type(x(), DType::F32),
        "cumsum" => lax::cumsum(x(), 1, false),
        "cumsum_reverse" => lax::cumsum(x(), 0, true),
        "cumprod" => lax::cumprod(x(), 1, false),
        "cummax" => lax::cummax(x(), 1, false),
        "cummin" => lax::cummin(x(), 0, false),
        "reduce_window_sum" => {
            lax::reduce_window(x(), WindowOp::Sum, &[2, 2], &[1, 2], &[(1, 0), (0, 1)])
        }
        "reduce_window_max" => lax::reduce_window(
            x(),
            WindowOp::Max,
            &[1, 2, 2, 1],
            &[1, 2, 2, 1],
            &[(0, 0); 4],
        ),
        "select_and_scatter_add" => {
            lax::select_and_scatter_add(x(), y(), &[2, 2], &[2, 2], &[(0, 0), (0, 0)])
        }
        "argmax" => lax::argmax(x(), 1, DType::I32),
        "argmin" => lax::argmin(x(), 0, DType::I32),
        "sort_nan" => lax::sort(&[x()], 1, true, 1).swap_remove(0),
        "sort_two_keys" => lax::sort(&[x(), y()], 0, true, 2).swap_remove(1),
        "sort_by_key" => lax::sort(&[x(), y()], 0, true, 1).swap_remove(1),
        "top_k_values" => lax::top_k(x(), 2).0,
        "top_k_indices" => lax::top_k(x(), 2).1,
        "top_k_axis0_values" => lax::top_k_along(x(), 2, 0).0,
        "top_k_axis0_indices" => lax::top_k_along(x(), 3, -2).1,
        "index_take" => lax::index_take(x(), &[y(), &a[2]], &[0, 2]),
        "conv_nhwc_same" => lax::conv_general_dilated(
            x(),
            y(),
            &[1, 1],
            &lax::Padding::Same,
            ("NHWC", "HWIO", "NHWC"),
            &lax::ConvOptions::default(),
        ),
        "conv_nchw_strided_dilated" => lax::conv_general_dilated(
            x(),
            y(),
            &[2, 1],
            &lax::Padding::Explicit(vec![(1, 1), (0, 2)]),
            ("NCHW", "OIHW", "NCHW"),
            &lax::ConvOptions {
                lhs_dilation: vec![1, 2],
                rhs_dilation: vec![2, 1],
                ..Default::default()
            },
        ),
        "conv_feature_groups" => lax::conv_general_dilated(
            x(),
            y(),
            &[1],
            &lax::Padding::Valid,
            ("NWC", "WIO", "NWC"),
            &lax::ConvOptions {
                feature_group_count: 2,
                ..Default::default()
            },
        ),
        "conv_batch_groups" => lax::conv_general_dilated(
            x(),
            y(),
            &[1],
            &lax::Padding::Valid,
            ("NWC", "WIO", "NWC"),
            &lax::ConvOptions {
                batch_group_count: 2,
                ..Default::default()
            },
        ),
        "jnp_argmax" => jnp::argmax(x(), None),
        "jnp_argmin_axis" => jnp::argmin(x(), Some(1)),
        "jnp_cumsum" => jnp::cumsum(x(), None),
        "jnp_sort" => jnp::sort(x(), 0),
        "jnp_argsort" => jnp::argsort(x(), 1),
        "index_array" => x().index(&s![y()]),
        "index_array_axis1" => x().index(&s![.., y()]),
        "index_basic" => x().index(&s![1, ..;2]),
        "index_reversed" => x().index(&s![..;-1, 1..3]),
        "index_newaxis" => x().index(&s![NEW_AXIS, 1.., 2]),
        "index_negative_step" => x().index(&s![.., oxla::index::slice(Some(3), Some(0), -2)]),
        "take_fill" => jnp::take(x(), y(), Some(1), false),
        "take_clip" => jnp::take(x(), y(), Some(0), true),
        "take_flat" | "take_int_fill" | "take_u8_fill" | "take_bool_fill" => {
            jnp::take(x(), y(), None, false)
        }
        "take_along_axis" => jnp::take_along_axis(x(), y(), 1),
        "at_set_array" => x().at(&s![y()]).set(&a[2]),
        "at_add_repeated" => x().at(&s![y()]).add(&Array::weak_scalar(1.0f32)),
        "at_mul_box" => x().at(&s![1.., ..;2]).mul(&Array::weak_scalar(2.0f32)),
        "at_min_row" => x().at(&s![0]).min(&Array::weak_scalar(0.0f32)),
        "at_max_element" => x().at(&s![2, 3]).max(&Array::weak_scalar(5.0f32)),
        "at_set_column_vector" => x().at(&s![.., 1]).set(y()),
        "associative_scan_add" => {
            lax::associative_scan(|p: Array, q: Array| &p + &q, x().clone(), false, 0)
                .unwrap_or_else(Array::error)
        }
        "associative_scan_max_reverse" => lax::associative_scan(
            |p: Array, q: Array| jnp::maximum(&p, &q),
            x().clone(),
            true,
            1,
        )
        .unwrap_or_else(Array::error),
        "associative_scan_pair" => lax::associative_scan(
            |p: (Array, Array), q: (Array, Array)| (&p.0 * &q.0, &q.0 * &p.1 + &q.1),
            (x().clone(), y().clone()),
            false,
            -1,
        )
        .map(|(_, b)| b)
        .unwrap_or_else(Array::error),
        "cumlogsumexp" => lax::cumlogsumexp(x(), 1, false),
        "cumlogsumexp_reverse" => lax::cumlogsumexp(x(), 0, true),
        "logaddexp" | "logaddexp_infinities" => jnp::logaddexp(x(), y()),
        "tile" => jnp::tile(x(), &[2, 1, 3]),
        "lax_broadcast" => lax::broadcast(x(), &[2, 1]),
        "slice_in_dim" => lax::slice_in_dim(x(), 1, Some(-1), 2, 1),
        "index_in_dim" => lax::index_in_dim(x(), -1, 0, false),
        "dynamic_slice_in_dim" => lax::dynamic_slice_in_dim(x(), y(), 3, 1),
        "dynamic_index_in_dim" => lax::dynamic_index_in_dim(x(), y(), 0, false),
        "dynamic_update_slice_in_dim" => lax::dynamic_update_slice_in_dim(x(), y(), &a[2], 0),
        "dynamic_update_index_in_dim" => lax::dynamic_update_index_in_dim(x(), y(), &a[2], 1),
        "reshape_with_dimensions" => lax::reshape_with_dimensions(x(), &[4, 3], &[1, 0]),
        "at_get_fill" => x().at(&s![y()]).mode(lax::GatherMode::Fill).get(),
        "at_get_fill_value" => x()
            .at(&s![.., y()])
            .mode(lax::GatherMode::Fill)
            .fill_value(7.0)
            .get(),
        "at_get_fill_static" => x().at(&s![7]).mode(lax::GatherMode::Fill).get(),
        "at_get_clip" => x().at(&s![y()]).mode(lax::GatherMode::Clip).get(),
        "at_set_clip" => x()
            .at(&s![y()])
            .mode(lax::GatherMode::Clip)
            .set(&Array::weak_scalar(10.0f32)),
        "at_add_clip_static" => x()
            .at(&s![1, 9])
            .mode(lax::GatherMode::Clip)
            .add(&Array::weak_scalar(1.0f32)),
        "at_mul_drop" => x()
            .at(&s![y()])
            .mode(lax::GatherMode::Fill)
            .mul(&Array::weak_scalar(3.0f32)),
        "index_two_arrays" | "index_two_arrays_broadcast" => x().index(&s![y(), &a[2]]),
        "index_array_and_slice" => x().index(&s![y(), 1..3]),
        "index_int_and_array" => x().index(&s![1, y()]),
        "index_arrays_apart" => x().index(&s![y(), .., &a[2]]),
        "at_set_two_arrays" => x().at(&s![y(), &a[2]]).set(&a[3]),
        "at_add_two_arrays_repeated" => x().at(&s![y(), &a[2]]).add(&Array::weak_scalar(1.0f32)),
        "at_mul_array_and_slice" => x().at(&s![y(), 1..]).mul(&Array::weak_scalar(2.0f32)),
        "at_apply_repeated" => x().at(&s![y()]).apply(lax::sin),
        "at_apply_box" => x().at(&s![1.., ..;2]).apply(lax::exp),
        "index_static_clamped" => x().index(&s![10]),
        "index_static_clamped_negative" => x().index(&s![-9, 7]),
        "at_static_dropped" => x().at(&s![10]).set(&Array::weak_scalar(5.0f32)),
        "at_static_dropped_column" => x().at(&s![1, -9]).add(&Array::weak_scalar(1.0f32)),
        "index_mask" => x().index(&s![mask(&MASK, &[3, 4])]),
        "index_mask_rows" => x().index(&s![mask(&ROW_MASK, &[3])]),
        "index_mask_columns" => x().index(&s![.., mask(&COLUMN_MASK, &[4])]),
        "at_mask_set" => x()
            .at(&s![mask(&MASK, &[3, 4])])
            .set(&Array::weak_scalar(0.0f32)),
        "split" => jnp::split(x(), 2, 1).swap_remove(1),
        "einsum_matmul" => jnp::einsum("ij,jk->ik", &[x(), y()]),
        "einsum_ellipsis" => jnp::einsum("...ij,...j->...i", &[x(), y()]),
        "einsum_ellipsis_broadcast" => jnp::einsum("...ij,...jk->...ik", &[x(), y()]),
        "einsum_ellipsis_implicit" => jnp::einsum("...ji", &[x()]),
        "einsum_three" => jnp::einsum("ij,jk,kl->il", &[x(), y(), &a[2]]),
        "einsum_three_implicit" => jnp::einsum("ij,jk,ki", &[x(), y(), &a[2]]),
        "einsum_four_batched" => jnp::einsum("bij,bjk,bkl,l->bi", &[x(), y(), &a[2], &a[3]]),
        "einsum_ellipsis_three" => jnp::einsum("...ij,...jk,k->...i", &[x(), y(), &a[2]]),
        "einsum_trace" => jnp::einsum("ii->", &[x()]),
        "einsum_trace_implicit" => jnp::einsum("ii", &[x()]),
        "einsum_diagonal" => jnp::einsum("ii->i", &[x()]),
        "einsum_repeated_kept" => jnp::einsum("iij,jk->ik", &[x(), y()]),
        "einsum_repeated_three_times" => jnp::einsum("iji->j", &[x()]),
        "einsum_batched" => jnp::einsum("bij,bjk->bik", &[x(), y()]),
        "einsum_dot" => jnp::einsum("i,i->", &[x(), y()]),
        "einsum_outer_t" => jnp::einsum("i,j->ji", &[x(), y()]),
        "einsum_transpose" => jnp::einsum("ij->ji", &[x()]),
        "einsum_sum_axis" => jnp::einsum("ij->i", &[x()]),
        "einsum_implicit" => jnp::einsum("ij,jk", &[x(), y()]),
        "einsum_attention" => jnp::einsum("bqhd,bkhd->bhqk", &[x(), y()]),
        "moveaxis" => jnp::moveaxis(x(), 0, -1),
        "jnp_add_broadcast" => x() + y(),
        "jnp_mul_weak" => x() * 2.5,
        "jnp_int_plus_float" => x() + 1.5,
        "jnp_true_divide_int" => x() / y(),
        "jnp_u8_plus_i8" => x() + y(),
        "jnp_sum" => jnp::sum(x(), Some(&[0]), false),
        "jnp_sum_keepdims" => jnp::sum(x(), Some(&[1]), true),
        "jnp_sum_f16" => jnp::sum(x(), Some(&[1]), false),
        "jnp_sum_bool" => jnp::sum(x(), None, false),
        "jnp_mean" => jnp::mean(x(), Some(&[1]), false),
        "jnp_var" => jnp::var(x(), Some(&[0]), false),
        "jnp_std" => jnp::std(x(), None, false),
        "jnp_max" => jnp::max(x(), Some(&[1]), false),
        "jnp_min" => jnp::min(x(), None, false),
        "jnp_prod" => jnp::prod(x(), Some(&[0]), false),
        "jnp_matmul"
        | "jnp_matvec"
        | "jnp_batched_matmul"
        | "jnp_matmul_3d_2d"
        | "jnp_matmul_vec_3d"
        | "jnp_matmul_3d_vec"
        | "jnp_matmul_2d_3d"
        | "jnp_matmul_broadcast_batch"
        | "jnp_matmul_unit_batches"
        | "jnp_matmul_left_batches" => jnp::matmul(x(), y()),
        "jnp_outer" => jnp::outer(x(), y()),
        "jnp_where" => jnp::where_(x(), y(), &a[2]),
        "jnp_clip" => jnp::clip(
            x(),
            &Array::weak_scalar(-0.5f32),
            &Array::weak_scalar(0.5f32),
        ),
        "jnp_power" => jnp::power(x(), y()),
        "jnp_swapaxes" => jnp::swapaxes(x(), 0, 1),
        "jnp_stack" => jnp::stack(&[x(), y()], 1),
        "jnp_concatenate" => jnp::concatenate(&[x(), y()], -1),
        "jnp_reshape" => jnp::reshape(x(), &[-1, 2]),
        "jnp_transpose" => jnp::transpose(x(), None),
        "jnp_tril" => jnp::tril(x(), 0),
        "jnp_triu" => jnp::triu(x(), 1),
        "jnp_eye" => jnp::eye(3, DType::F32),
        "jnp_arange" => jnp::arange(0.0, 3.0, 0.5, DType::F32),
        "jnp_linspace" => jnp::linspace(0.0, 1.0, 5, DType::F32),
        "jnp_one_hot" => nn::one_hot(x(), 5),
        "jnp_maximum" => jnp::maximum(x(), y()),
        "jnp_minimum" => jnp::minimum(x(), y()),
        "relu" => nn::relu(x()),
        "sigmoid" => nn::sigmoid(x()),
        "np_absolute" => jnp::absolute(x()),
        "np_fabs" => jnp::fabs(x()),
        "np_acos" => jnp::acos(x()),
        "np_asinh" => jnp::asinh(x()),
        "np_atan2" => jnp::atan2(x(), y()),
        "np_pow" => jnp::pow(x(), y()),
        "np_true_divide" => jnp::true_divide(x(), y()),
        "np_mod" => jnp::r#mod(x(), y()),
        "np_positive" => jnp::positive(x()),
        "np_deg2rad" => jnp::deg2rad(x()),
        "np_radians" => jnp::radians(x()),
        "np_rad2deg" => jnp::rad2deg(x()),
        "np_degrees" => jnp::degrees(x()),
        "np_log10" => jnp::log10(x()),
        "np_log2" => jnp::log2(x()),
        "np_rint" => jnp::rint(x()),
        "np_round" => jnp::round(x(), 0),
        "np_round_decimals" => jnp::round(x(), 2),
        "np_round_int" => jnp::round(x(), 1),
        "np_around" => jnp::around(x()),
        "np_trunc" => jnp::trunc(x()),
        "np_reciprocal" => jnp::reciprocal(x()),
        "np_float_power" => jnp::float_power(x(), y()),
        "np_isnan" => jnp::isnan(x()),
        "np_isinf" => jnp::isinf(x()),
        "np_isposinf" => jnp::isposinf(x()),
        "np_isneginf" => jnp::isneginf(x()),
        "np_nan_to_num" => jnp::nan_to_num(x(), 0.0, None, None),
        "np_nan_to_num_values" => jnp::nan_to_num(x(), -1.0, Some(9.0), Some(-9.0)),
        "np_signbit" | "np_signbit_int" => jnp::signbit(x()),
        "np_copysign" => jnp::copysign(x(), y()),
        "np_nextafter" => jnp::nextafter(x(), y()),
        "np_hypot" | "np_hypot_special" => jnp::hypot(x(), y()),
        "np_heaviside" => jnp::heaviside(x(), y()),
        "np_fmax" => jnp::fmax(x(), y()),
        "np_fmin" => jnp::fmin(x(), y()),
        "np_sinc" | "np_sinc_zero" => jnp::sinc(x()),
        "np_i0" => jnp::i0(x()),
        "np_logaddexp2" => jnp::logaddexp2(x(), y()),
        "np_frexp_mantissa" | "np_frexp_mantissa_normal" => jnp::frexp(x()).0,
        "np_frexp_exponent" => jnp::frexp(x()).1,
        "np_ldexp" => jnp::ldexp(x(), y()),
        "np_logical_and" => jnp::logical_and(x(), y()),
        "np_logical_or" => jnp::logical_or(x(), y()),
        "np_logical_xor" => jnp::logical_xor(x(), y()),
        "np_bitwise_and" => jnp::bitwise_and(x(), y()),
        "np_bitwise_or" => jnp::bitwise_or(x(), y()),
        "np_bitwise_xor" => jnp::bitwise_xor(x(), y()),
        "np_bitwise_not" => jnp::bitwise_not(x()),
        "np_invert" => jnp::invert(x()),
        "np_bitwise_invert" => jnp::bitwise_invert(x()),
        "np_left_shift" => jnp::left_shift(x(), y()),
        "np_right_shift" | "np_right_shift_unsigned" => jnp::right_shift(x(), y()),
        "np_bitwise_left_shift" => jnp::bitwise_left_shift(x(), y()),
        "np_bitwise_right_shift" => jnp::bitwise_right_shift(x(), y()),
        "np_bitwise_count" => jnp::bitwise_count(x()),
        "np_all" => jnp::all(
            &jnp::greater(x(), &Array::weak_scalar(-1.0f32)),
            Some(&[1]),
            false,
        ),
        "np_any" => jnp::any(&jnp::greater(x(), &Array::weak_scalar(2.0f32)), None, false),
        "np_all_keep" => jnp::all(x(), Some(&[0]), true),
        "np_amax" => jnp::amax(x(), Some(&[0]), false),
        "np_amin" => jnp::amin(x(), Some(&[1]), false),
        "np_ptp" => jnp::ptp(x(), Some(&[1]), false),
        "np_count_nonzero" => jnp::count_nonzero(x(), Some(&[0]), false),
        "np_average" => jnp::average(x(), Some(&[1]), None),
        "np_average_weights" => jnp::average(x(), Some(&[0]), Some(y())),
        "np_nansum" => jnp::nansum(x(), Some(&[1]), false),
        "np_nanprod" => jnp::nanprod(x(), Some(&[0]), false),
        "np_nanmax" => jnp::nanmax(x(), Some(&[1]), false),
        "np_nanmin" => jnp::nanmin(x(), Some(&[1]), false),
        "np_nanmean" => jnp::nanmean(x(), Some(&[0]), false),
        "np_nanvar" => jnp::nanvar(x(), Some(&[0]), false),
        "np_nanstd" => jnp::nanstd(x(), Some(&[0]), false),
        "np_nanargmax" => jnp::nanargmax(x(), Some(1)),
        "np_nanargmin" => jnp::nanargmin(x(), Some(0)),
        "np_nancumsum" => jnp::nancumsum(x(), Some(1)),
        "np_nancumprod" => jnp::nancumprod(x(), Some(0)),
        "np_cumulative_sum" => jnp::cumulative_sum(x(), Some(1), true),
        "np_cumulative_prod" => jnp::cumulative_prod(x(), Some(0), false),
        "np_median" => jnp::median(x(), Some(1), false),
        "np_median_all" => jnp::median(x(), None, false),
        "np_quantile" => jnp::quantile(x(), y(), Some(0), false),
        "np_quantile_keep" => jnp::quantile(x(), &Array::weak_scalar(0.3f32), Some(1), true),
        "np_percentile" => jnp::percentile(x(), &Array::weak_scalar(75.0f32), None, false),
        "np_ravel" => jnp::ravel(x()),
        "np_flip" => jnp::flip(x(), None),
        "np_flip_axis" => jnp::flip(x(), Some(&[1])),
        "np_fliplr" => jnp::fliplr(x()),
        "np_flipud" => jnp::flipud(x()),
        "np_roll" => jnp::roll(x(), 2, Some(1)),
        "np_roll_negative" => jnp::roll(x(), -5, Some(-1)),
        "np_roll_flat" => jnp::roll(x(), 3, None),
        "np_rot90" => jnp::rot90(x(), 1, (0, 1)),
        "np_rot90_k3" => jnp::rot90(x(), 3, (2, 0)),
        "np_rot90_k2" => jnp::rot90(x(), 2, (0, 1)),
        "np_repeat" => jnp::repeat(x(), 3, Some(1)),
        "np_repeat_flat" => jnp::repeat(x(), 2, None),
        "np_atleast_2d" => jnp::atleast_2d(x()),
        "np_atleast_3d" => jnp::atleast_3d(x()),
        "np_atleast_1d" => jnp::atleast_1d(x()),
        "np_concat" => jnp::concat(&[x(), y()], 1),
        "np_vstack" => jnp::vstack(&[x(), y()]),
        "np_hstack" => jnp::hstack(&[x(), y()]),
        "np_dstack" => jnp::dstack(&[x(), y()]),
        "np_column_stack" => jnp::column_stack(&[x(), y()]),
        "np_unstack" => jnp::unstack(x(), 1).swap_remove(2),
        "np_array_split" => jnp::array_split(x(), 3, 1).swap_remove(0),
        "np_array_split_last" => jnp::array_split(x(), 3, 1).swap_remove(2),
        "np_hsplit" => jnp::hsplit(x(), 2).swap_remove(1),
        "np_vsplit" => jnp::vsplit(x(), 3).swap_remove(1),
        "np_diagonal" => jnp::diagonal(x(), 1, 0, 1),
        "np_diagonal_axes" => jnp::diagonal(x(), -1, 2, 1),
        "np_diag_vector" => jnp::diag(x(), 1),
        "np_diag_matrix" => jnp::diag(x(), -1),
        "np_diagflat" => jnp::diagflat(x(), 0),
        "np_trace" => jnp::trace(x(), 1, 0, 1),
        "np_trace_axes" => jnp::trace(x(), 0, 0, 2),
        "np_meshgrid" => jnp::meshgrid(&[x(), y()], "xy").swap_remove(0),
        "np_meshgrid_ij" => jnp::meshgrid(&[x(), y()], "ij").swap_remove(1),
        "np_broadcast_arrays" => jnp::broadcast_arrays(&[x(), y()]).swap_remove(0),
        "np_diff" => jnp::diff(x(), 2, 1),
        "np_diff_bool" => jnp::diff(&jnp::greater(x(), &Array::weak_scalar(0.0f32)), 1, -1),
        "np_ediff1d" => jnp::ediff1d(x()),
        "np_append" => jnp::append(x(), y(), None),
        "np_append_axis" => jnp::append(x(), y(), Some(0)),
        "np_vander" => jnp::vander(x(), None, false),
        "np_vander_increasing" => jnp::vander(x(), Some(3), true),
        "np_matrix_transpose" => jnp::matrix_transpose(x()),
        "np_permute_dims" => jnp::permute_dims(x(), &[2, 0, 1]),
        "np_tensordot" => jnp::tensordot(x(), y(), (&[1, 2], &[0, 1])),
        "np_tensordot_n" => jnp::tensordot_n(x(), y(), 1),
        "np_inner" => jnp::inner(x(), y()),
        "np_vdot" => jnp::vdot(x(), y()),
        "np_vecdot" => jnp::vecdot(x(), y(), 0),
        "np_matvec" => jnp::matvec(x(), y()),
        "np_vecmat" => jnp::vecmat(x(), y()),
        "np_kron" | "np_kron_ranks" => jnp::kron(x(), y()),
        "np_polyval" => jnp::polyval(x(), y()),
        "np_trapezoid" => jnp::trapezoid(x(), None, 0.5, -1),
        "np_trapezoid_x" => jnp::trapezoid(x(), Some(y()), 1.0, 0),
        "np_isclose" => jnp::isclose(x(), y(), 0.1, 0.5, false),
        "np_isclose_nan" => jnp::isclose(x(), y(), 1e-5, 1e-8, true),
        "np_allclose" => jnp::allclose(x(), &(y() + 1e-7f64), 1e-5, 1e-8, false),
        "np_array_equal" => jnp::array_equal(x(), y()),
        "np_array_equiv" => jnp::array_equiv(x(), y()),
        "np_select" => jnp::select(
            &[
                &jnp::less(x(), &Array::weak_scalar(-1.0f32)),
                &jnp::greater(x(), &Array::weak_scalar(1.0f32)),
            ],
            &[&(x() * 2.0f64), &(x() * 3.0f64)],
            &Array::weak_scalar(-7.0f32),
        ),
        "np_searchsorted" => jnp::searchsorted(x(), y(), "left"),
        "np_searchsorted_right" => jnp::searchsorted(x(), y(), "right"),
        "np_digitize" => jnp::digitize(x(), y(), false),
        "np_digitize_right_decreasing" => jnp::digitize(x(), y(), true),
        "np_interp" => jnp::interp(x(), y(), &a[2], None, None),
        "np_interp_left_right" => jnp::interp(x(), y(), &a[2], Some(-9.0), Some(9.0)),
        "lax_full" => lax::full(&[2, 3], 1.5, DType::F32),
        "lax_full_like" => lax::full_like(x(), 2.0, Some(DType::I32)),
        "lax_broadcasted_iota" => lax::broadcasted_iota(DType::I32, &[3, 4], 1),
        "lax_collapse" => lax::collapse(x(), 1, 3),
        "lax_broadcast_to_rank" => lax::broadcast_to_rank(x(), 4),
        "lax_reciprocal" => lax::reciprocal(x()),
        "lax_dot" | "lax_dot_vector" => lax::dot(x(), y(), None),
        "lax_batch_matmul" => lax::batch_matmul(x(), y(), None),
        "lax_select" => lax::select(x(), y(), &a[2]),
        "lax_scatter_add" | "lax_scatter_sub" | "lax_scatter_max" | "lax_scatter_min" => {
            let windows = lax::ScatterDimensionNumbers {
                update_window_dims: [1].into_iter().collect(),
                inserted_window_dims: [0].into_iter().collect(),
                scatter_dims_to_operand_dims: [0, 1].into_iter().collect(),
            };
            let by = match name {
                "lax_scatter_add" => lax::scatter_add,
                "lax_scatter_sub" => lax::scatter_sub,
                "lax_scatter_max" => lax::scatter_max,
                _ => lax::scatter_min,
            };
            by(x(), y(), &a[2], windows)
        }
        "lax_sort_key_val" => lax::sort_key_val(x(), y(), 1, true).1,
        "lax_stack" => lax::stack(&[x(), y()], 1),
        "lax_unstack" => lax::unstack(x(), 1).swap_remove(3),
        "lax_tile" => lax::tile(x(), &[2, 1]),
        "lax_optimization_barrier" => lax::optimization_barrier(&[x(), y()]).swap_remove(1),
        "lax_conv" => lax::conv(x(), y(), &[1, 2], &lax::Padding::Same),
        "lax_conv_with_general_padding" => lax::conv_with_general_padding(
            x(),
            y(),
            &[2, 1],
            &lax::Padding::Explicit(vec![(1, 0), (0, 2)]),
            &[1, 2],
            &[2, 1],
        ),
        "la_vector_norm" => la::vector_norm(x(), None, false, la::Ord::P(2.0)),
        "la_vector_norm_axis" => la::vector_norm(x(), Some(&[1]), true, la::Ord::P(2.0)),
        "la_vector_norm_1" => la::vector_norm(x(), Some(&[0]), false, la::Ord::P(1.0)),
        "la_vector_norm_inf" => la::vector_norm(x(), Some(&[1]), false, la::Ord::Inf),
        "la_vector_norm_neg_inf" => la::vector_norm(x(), Some(&[1]), false, la::Ord::NegInf),
        "la_vector_norm_0" => la::vector_norm(x(), Some(&[1]), false, la::Ord::P(0.0)),
        "la_vector_norm_3" => la::vector_norm(x(), Some(&[1]), false, la::Ord::P(3.0)),
        "la_matrix_norm" => la::matrix_norm(x(), false, la::Ord::Fro),
        "la_matrix_norm_1" => la::matrix_norm(x(), false, la::Ord::P(1.0)),
        "la_matrix_norm_neg_1" => la::matrix_norm(x(), true, la::Ord::P(-1.0)),
        "la_matrix_norm_inf" => la::matrix_norm(x(), false, la::Ord::Inf),
        "la_norm" => la::norm(x(), None, None, false),
        "la_norm_axis" => la::norm(x(), None, Some(&[1]), false),
        "la_norm_axes" => la::norm(x(), Some(la::Ord::P(1.0)), Some(&[2, 0]), true),
        "la_norm_matrix_inf" => la::norm(x(), Some(la::Ord::Inf), None, false),
        "la_matrix_power" => la::matrix_power(x(), 5),
        "la_matrix_power_0" => la::matrix_power(x(), 0),
        "la_multi_dot" => la::multi_dot(&[x(), y(), &a[2]]),
        "la_multi_dot_four" => la::multi_dot(&[x(), y(), &a[2], &a[3]]),
        "la_multi_dot_vector_last" => la::multi_dot(&[x(), y()]),
        "la_cross" | "np_cross_2d" => la::cross(x(), y()),
        "la_outer" => la::outer(x(), y()),
        "la_tensordot" => la::tensordot(x(), y(), 1),
        "la_trace" => la::trace(x(), 1),
        "la_diagonal" => la::diagonal(x(), 0),
        "la_vecdot" => la::vecdot(x(), y(), -1),
        "la_matmul" => la::matmul(x(), y()),
        "la_matrix_transpose" => la::matrix_transpose(x()),
        "np_hamming" => jnp::hamming(9),
        "np_hanning" => jnp::hanning(8),
        "np_blackman" => jnp::blackman(7),
        "np_bartlett" => jnp::bartlett(6),
        "np_kaiser" => jnp::kaiser(9, 3.5),
        "np_hamming_one" => jnp::hamming(1),
        "np_gcd" => jnp::gcd(x(), y()),
        "np_lcm" => jnp::lcm(x(), y()),
        "np_modf_fraction" => jnp::modf(x()).0,
        "np_modf_whole" => jnp::modf(x()).1,
        "np_bincount" => jnp::bincount(x(), None, 6),
        "np_bincount_weights" => jnp::bincount(x(), Some(y()), 5),
        "np_isin" => jnp::isin(x(), y(), false),
        "np_isin_invert" => jnp::isin(x(), y(), true),
        "np_unravel_index" => {
            let parts = jnp::unravel_index(x(), &[3, 4, 5]);
            jnp::stack(&parts.iter().collect::<Vec<_>>(), 0)
        }
        "np_convolve" => jnp::convolve(x(), y(), "full"),
        "np_convolve_same" => jnp::convolve(x(), y(), "same"),
        "np_convolve_valid_swapped" => jnp::convolve(x(), y(), "valid"),
        "np_correlate" => jnp::correlate(x(), y(), "valid"),
        "np_correlate_full" => jnp::correlate(x(), y(), "full"),
        "np_correlate_swapped" => jnp::correlate(x(), y(), "same"),
        "np_polyadd" => jnp::polyadd(x(), y()),
        "np_polysub" => jnp::polysub(x(), y()),
        "np_polymul" => jnp::polymul(x(), y()),
        "np_polyder" => jnp::polyder(x(), 2),
        "np_polyint" => jnp::polyint(x(), 2, 1.5),
        "np_array" => jnp::array(x()),
        "np_asarray" => jnp::asarray(x()),
        "np_copy" => jnp::copy(x()),
        "np_astype" => jnp::astype(x(), DType::I32),
        "np_logspace" => jnp::logspace(-1.0, 2.0, 7, 10.0),
        "np_logspace_base" => jnp::logspace(0.0, 3.0, 4, 2.0),
        "np_geomspace" => jnp::geomspace(2.0, 300.0, 6),
        "np_geomspace_negative" => jnp::geomspace(-1.0, -1000.0, 4),
        "np_rollaxis" => jnp::rollaxis(x(), 2, 0),
        "np_rollaxis_start" => jnp::rollaxis(x(), 0, 3),
        "np_cov" | "np_cov_vector" => jnp::cov(x(), true, false),
        "np_cov_columns_bias" => jnp::cov(x(), false, true),
        "np_corrcoef" => jnp::corrcoef(x(), true),
        "np_corrcoef_columns" => jnp::corrcoef(x(), false),
        "np_gradient" => jnp::gradient(x(), Some(1)).swap_remove(0),
        "np_gradient_all" => {
            let parts = jnp::gradient(x(), None);
            jnp::stack(&parts.iter().collect::<Vec<_>>(), 0)
        }
        "np_unwrap" => jnp::unwrap(x(), -1, 2.0 * std::f64::consts::PI),
        "np_unwrap_axis" => jnp::unwrap(x(), 0, 4.0),
        "np_nonzero" | "np_nonzero_fill" => {
            let (size, fill) = match name {
                "np_nonzero" => (8, None),
                _ => (10, Some(-1)),
            };
            let parts = jnp::nonzero(x(), size, fill);
            jnp::stack(&parts.iter().collect::<Vec<_>>(), 0)
        }
        "np_argwhere" => jnp::argwhere(x(), 5, None),
        "np_flatnonzero" => jnp::flatnonzero(x(), 9, Some(99)),
        "c_neg" => lax::neg(x()),
        "c_add" => lax::add(x(), y()),
        "c_sub" => lax::sub(x(), y()),
        "c_mul" => lax::mul(x(), y()),
        "c_div" => lax::div(x(), y()),
        "c_pow" => lax::pow(x(), y()),
        "c_real" => lax::real(x()),
        "c_imag" => lax::imag(x()),
        "c_conj" => lax::conj(x()),
        "c_complex" => lax::complex(x(), y()),
        "c_abs" => lax::abs(x()),
        "c_sign" => lax::sign(x()),
        "c_exp" => lax::exp(x()),
        "c_exp2" => lax::exp2(x()),
        "c_expm1" => lax::expm1(x()),
        "c_log" => lax::log(x()),
        "c_log1p" => lax::log1p(x()),
        "c_sqrt" => lax::sqrt(x()),
        "c_rsqrt" => lax::rsqrt(x()),
        "c_square" => lax::square(x()),
        "c_tanh" => lax::tanh(x()),
        "c_sin" => lax::sin(x()),
        "c_cos" => lax::cos(x()),
        "c_tan" => lax::tan(x()),
        "c_sinh" => lax::sinh(x()),
        "c_cosh" => lax::cosh(x()),
        "c_asinh" => lax::asinh(x()),
        "c_atan" => lax::atan(x()),
        "c_integer_pow" => lax::integer_pow(x(), 3),
        "c_eq" => lax::eq(x(), y()),
        "c_ne" => lax::ne(x(), y()),
        "c_select_n" => lax::select_n(x(), &[y(), &a[2]]),
        "c_reduce_sum" => jnp::sum(x(), Some(&[1]), false),
        "c_reduce_prod" => jnp::prod(x(), Some(&[0]), false),
        "c_dot_general" => jnp::matmul(x(), &y().t()),
        "c_einsum" => jnp::einsum("ij,kj->ik", &[x(), y()]),
        "c_transpose" => x().t(),
        "c_cumsum" => jnp::cumsum(x(), Some(1)),
        "c_convert_from_f32" => lax::convert_element_type(x(), DType::C64),
        "c_convert_to_f32" => lax::add(
            &lax::real(x()),
            &lax::convert_element_type(&lax::imag(x()), DType::F32),
        ),
        "c_promote_f32" => jnp::add(x(), y()),
        "c_weak_float" => x() * 2.5,
        "c_promote_int" => jnp::multiply(x(), y()),
        "np_real" => jnp::real(x()),
        "np_imag" | "np_imag_real" => jnp::imag(x()),
        "np_conjugate" => jnp::conjugate(x()),
        "np_angle" | "np_angle_int" => jnp::angle(x(), false),
        "np_angle_deg" => jnp::angle(x(), true),
        "np_iscomplex" => jnp::iscomplex(x()),
        "np_isreal" => jnp::isreal(x()),
        "np_isnan_c" => jnp::isnan(x()),
        "np_isinf_c" => jnp::isinf(x()),
        "np_isfinite_c" => jnp::isfinite(x()),
        "np_abs_c" => jnp::abs(x()),
        "np_vdot_c" => jnp::vdot(x(), y()),
        "np_vecdot_c" => jnp::vecdot(x(), y(), -1),
        "np_sqrt_c" => jnp::sqrt(x()),
        "np_exp_c" => jnp::exp(x()),
        "np_sin_c" => jnp::sin(x()),
        "np_cos_c" => jnp::cos(x()),
        "lax_fft" => lax::fft(x(), FftType::Fft, &[4]),
        "lax_ifft_2d" => lax::fft(x(), FftType::Ifft, &[3, 4]),
        "lax_rfft" => lax::fft(x(), FftType::Rfft, &[4]),
        "lax_irfft" => lax::fft(x(), FftType::Irfft, &[4]),
        "lax_rfft_3d" => lax::fft(x(), FftType::Rfft, &[2, 3, 4]),
        "fft_fft" | "fft_fft_real" | "fft_fft_int" => fft::fft(x(), None, -1, Norm::Backward),
        "fft_fft_n_axis" => fft::fft(x(), Some(6), 0, Norm::Backward),
        "fft_ifft_ortho" => fft::ifft(x(), None, -1, Norm::Ortho),
        "fft_ifft_n" => fft::ifft(x(), Some(2), -1, Norm::Backward),
        "fft_rfft" => fft::rfft(x(), None, -1, Norm::Backward),
        "fft_rfft_n_forward" => fft::rfft(x(), Some(5), 0, Norm::Forward),
        "fft_irfft" => fft::irfft(x(), None, -1, Norm::Backward),
        "fft_irfft_n" => fft::irfft(x(), Some(7), -1, Norm::Backward),
        "fft_irfft_ortho" => fft::irfft(x(), None, 0, Norm::Ortho),
        "fft_fft2" => fft::fft2(x(), None, &[-2, -1], Norm::Backward),
        "fft_ifft2_s" => fft::ifft2(x(), Some(&[2, 5]), &[-2, -1], Norm::Backward),
        "fft_rfft2" => fft::rfft2(x(), None, &[-2, -1], Norm::Backward),
        "fft_irfft2" => fft::irfft2(x(), None, &[-2, -1], Norm::Backward),
        "fft_fftn_axes" => fft::fftn(x(), None, Some(&[0, 2]), Norm::Backward),
        "fft_ifftn" => fft::ifftn(x(), None, None, Norm::Backward),
        "fft_rfftn" | "fft_rfftn_4d" => fft::rfftn(x(), None, None, Norm::Backward),
        "fft_irfftn_s" => fft::irfftn(x(), Some(&[2, 3, 4]), None, Norm::Backward),
        "fft_fftn_4d" => fft::fftn(x(), None, None, Norm::Backward),
        "fft_ifftn_4d_forward" => fft::ifftn(x(), None, None, Norm::Forward),
        "fft_hfft" => fft::hfft(x(), None, -1, Norm::Backward),
        "fft_hfft_n" => fft::hfft(x(), Some(5), 0, Norm::Backward),
        "fft_ihfft" => fft::ihfft(x(), None, -1, Norm::Backward),
        "fft_fftfreq" => fft::fftfreq(8, 0.1, None),
        "fft_fftfreq_odd" => fft::fftfreq(7, 1.0, None),
        "fft_rfftfreq" => fft::rfftfreq(8, 0.5, None),
        "fft_rfftfreq_odd" => fft::rfftfreq(7, 1.0, None),
        "fft_fftshift" => fft::fftshift(x(), None),
        "fft_ifftshift_axis" => fft::ifftshift(x(), Some(&[1])),
        "fft_fftshift_c" => fft::fftshift(x(), Some(&[0])),
        "lax_cholesky" | "lax_cholesky_batch" => lax::linalg::cholesky(x(), true),
        "la_cholesky" | "la_cholesky_complex" => la::cholesky(x(), false),
        "la_cholesky_upper" => la::cholesky(x(), true),
        "lax_ts_left_lower" | "lax_ts_vector" => solve(true, true, false, false, false),
        "lax_ts_right_upper_t" => solve(false, false, true, false, false),
        "lax_ts_left_unit" => solve(true, true, false, false, true),
        "lax_ts_batch" => solve(true, true, true, false, false),
        "lax_ts_complex_adjoint" => solve(true, true, true, true, false),
        "lax_ts_complex_conj" => solve(false, true, false, true, false),
        "np_pad_constant" => jnp::pad(x(), &[(1, 2), (0, 3)], PadMode::Constant(1.5)),
        "np_pad_int" => jnp::pad(x(), &[(2, 2)], PadMode::Constant(0.0)),
        "np_pad_one_pair" => jnp::pad(x(), &[(1, 2)], PadMode::Constant(0.0)),
        "np_pad_edge" => jnp::pad(x(), &[(2, 1), (1, 1)], PadMode::Edge),
        "np_pad_wrap" => jnp::pad(x(), &[(4, 5), (1, 0)], PadMode::Wrap),
        "np_pad_reflect" => jnp::pad(x(), &[(2, 2), (5, 1)], PadMode::Reflect),
        "np_pad_symmetric" => jnp::pad(x(), &[(3, 4), (2, 2)], PadMode::Symmetric),
        "np_pad_complex" => jnp::pad(x(), &[(0, 1), (2, 0)], PadMode::Reflect),
        "np_nanquantile" => jnp::nanquantile(x(), &Array::weak_scalar(0.3), Some(1), false),
        "np_nanquantile_q" => jnp::nanquantile(x(), y(), Some(0), true),
        "np_nanpercentile_all" => jnp::nanpercentile(x(), &Array::weak_scalar(40.0), None, false),
        "np_nanpercentile_keep" => jnp::nanpercentile(x(), y(), None, true),
        "np_nanmedian" => jnp::nanmedian(x(), Some(1), false),
        "np_nanmedian_no_nans" => jnp::nanmedian(x(), Some(0), true),
        "np_spacing" | "np_spacing_normal" | "np_spacing_f16" | "np_spacing_int" => {
            jnp::spacing(x())
        }
        "np_resize_grow" => jnp::resize(x(), &[5, 7]),
        "np_resize_shrink" => jnp::resize(x(), &[2]),
        "np_resize_empty" => jnp::resize(x(), &[0, 3]),
        "lax_lu" | "lax_lu_wide" | "lax_lu_tall" | "lax_lu_batch" | "lax_lu_complex" => {
            lax::linalg::lu(x()).0
        }
        "lax_lu_pivots" => lax::linalg::lu(x()).1,
        "lax_lu_permutation" => lax::linalg::lu(x()).2,
        "lax_lu_pivots_to_permutation" => lax::linalg::lu_pivots_to_permutation(x(), 5),
        "lax_lu_solve" => lax::linalg::lu_solve(x(), y(), &a[2], 0),
        "lax_lu_solve_t" => lax::linalg::lu_solve(x(), y(), &a[2], 1),
        "la_solve" | "la_solve_vector" | "la_solve_batch" | "la_solve_complex"
        | "la_solve_singular" => la::solve(x(), y()),
        "la_inv" | "la_inv_batch" => la::inv(x()),
        "la_det" | "la_det_2" | "la_det_3" | "la_det_batch" | "la_det_complex" | "la_det_rank3"
        | "la_det_rank1" => la::det(x()),
        "la_slogdet_sign" | "la_slogdet_complex_sign" => la::slogdet(x()).0,
        "la_slogdet_logdet" | "la_slogdet_complex" => la::slogdet(x()).1,
        "la_qr_q" | "la_qr_wide_q" => la::qr(x(), la::QrMode::Reduced).0,
        "la_qr_r" | "la_qr_wide_r" | "la_qr_complex_r" => la::qr(x(), la::QrMode::Reduced).1,
        "la_qr_complete_q" => la::qr(x(), la::QrMode::Complete).0,
        "la_qr_complete_r" => la::qr(x(), la::QrMode::Complete).1,
        "la_qr_mode_r" => la::qr_r(x()),
        "la_eigh_w" | "la_eigh_complex_w" => la::eigh(x(), false, true).0,
        "la_eigh_v" => canonical_signs(&la::eigh(x(), false, true).1, -2),
        "la_eigh_upper_v" => canonical_signs(&la::eigh(x(), true, true).1, -2),
        "la_eigvalsh_batch" | "la_eigvalsh_nan" => la::eigvalsh(x(), false),
        "la_svd_s" => la::svd(x(), false, false).1,
        "la_svd_u" | "la_svd_wide_u" => canonical_signs(&la::svd(x(), false, false).0, -2),
        "la_svd_vh" => canonical_signs(&la::svd(x(), false, false).2, -1),
        "la_svd_full_u" => canonical_signs(&la::svd(x(), true, false).0, -2),
        "la_svd_complex_s" | "la_svdvals_batch" => la::svdvals(x(), false),
        "la_svd_hermitian_s" => la::svd(x(), true, true).1,
        "la_eigvals" | "la_eigvals_complex" => la::eigvals(x()),
        "la_eig_w" => la::eig(x()).0,
        "la_eig_v_abs" => jnp::abs(&la::eig(x()).1),
        "la_pinv" | "la_pinv_wide" => la::pinv(x(), None),
        "la_lstsq" => la::lstsq(x(), y(), None).0,
        "la_lstsq_resid" => la::lstsq(x(), y(), None).1,
        "la_lstsq_rank" => la::lstsq(x(), y(), None).2,
        "la_matrix_rank" => la::matrix_rank(x(), None),
        "la_cond" => la::cond(x(), None),
        "la_cond_1" => la::cond(x(), Some(la::Ord::P(1.0))),
        "la_cond_singular" => la::cond(x(), Some(la::Ord::P(-2.0))),
        "la_matrix_norm_2" => la::matrix_norm(x(), false, la::Ord::P(2.0)),
        "la_matrix_norm_nuc" => la::matrix_norm(x(), false, la::Ord::Nuc),
        "la_matrix_power_neg" => la::matrix_power(x(), -2),
        "la_tensorsolve" => la::tensorsolve(x(), y(), None),
        "la_tensorinv" => la::tensorinv(x(), 2),
        "lax_conv_transpose" => lax::conv_transpose(
            x(),
            y(),
            &[2, 2],
            &lax::Padding::Same,
            None,
            None,
            false,
            None,
        ),
        "lax_conv_transpose_valid_tk" => {
            let highest = Some(lax::Precision::Highest);
            lax::conv_transpose(
                x(),
                y(),
                &[1, 2],
                &lax::Padding::Valid,
                None,
                None,
                true,
                highest,
            )
        }
        "lax_conv_transpose_explicit" => lax::conv_transpose(
            x(),
            y(),
            &[2, 1],
            &lax::Padding::Explicit(vec![(1, 0), (2, 1)]),
            Some(&[1, 2]),
            Some(("NCHW", "OIHW", "NCHW")),
            false,
            None,
        ),
        "lax_conv_patches" => lax::conv_general_dilated_patches(
            x(),
            &[2, 3],
            &[1, 1],
            &lax::Padding::Valid,
            None,
            None,
            None,
            None,
        ),
        "lax_conv_patches_nhwc" => lax::conv_general_dilated_patches(
            x(),
            &[3, 2],
            &[2, 1],
            &lax::Padding::Same,
            None,
            None,
            Some(("NHWC", "HWIO", "NHWC")),
            None,
        ),
        "lax_conv_local" => lax::conv_general_dilated_local(
            x(),
            y(),
            &[1, 1],
            &lax::Padding::Valid,
            &[2, 3],
            None,
            None,
            None,
            Some(lax::Precision::Highest),
        ),
        "lax_conv_shape_tuples" => {
            let nhwc = ("NHWC", "HWIO", "NHWC");
            let mut all = lax::conv_general_shape_tuple(
                &[1, 5, 5, 2],
                &[3, 3, 2, 4],
                &[2, 1],
                &lax::Padding::Same,
                nhwc,
            )
            .unwrap();
            all.extend(
                lax::conv_transpose_shape_tuple(
                    &[1, 5, 5, 2],
                    &[3, 3, 2, 4],
                    &[2, 2],
                    &lax::Padding::Same,
                    nhwc,
                )
                .unwrap(),
            );
            all.extend(
                lax::conv_shape_tuple(
                    &[2, 3, 9, 9],
                    &[4, 3, 3, 2],
                    &[2, 1],
                    &lax::Padding::Explicit(vec![(1, 1), (0, 2)]),
                    1,
                )
                .unwrap(),
            );
            let (l, r, o) = lax::conv_general_permutations(nhwc);
            all.extend(l.into_iter().chain(r).chain(o));
            all.extend(lax::reduce_window_shape_tuple(
                &[7, 9],
                &[3, 2],
                &[2, 2],
                &[(1, 0), (0, 1)],
                Some(&[1, 2]),
                Some(&[2, 1]),
            ));
            let ints: Vec<i32> = all.iter().map(|&v| v as i32).collect();
            Array::from_slice(&ints, &[ints.len() as i64]).unwrap()
        }
        "lax_reduce_xor" => lax::reduce_xor(x(), &[1]),
        "lax_reduce_xor_bool" => lax::reduce_xor(x(), &[0, 1]),
        "lax_mulhi" | "lax_mulhi_u8" => lax::mulhi(x(), y()),
        "lax_approx_max_k" => lax::approx_max_k(x(), 2, -1).0,
        "lax_approx_max_k_indices" => lax::approx_max_k(x(), 3, 0).1,
        "lax_approx_min_k" => lax::approx_min_k(x(), 2, -1).0,
        "lax_approx_min_k_indices" => lax::approx_min_k(x(), 2, 0).1,
        "lax_empty" => lax::empty(&[2, 3], oxla::DType::F32),
        "lax_broadcast_like" => lax::broadcast_like(x(), y()),
        "lax_dtype" => jnp::zeros(&[2], lax::dtype(x())),
        "lax_zeta" => lax::zeta(x(), y()),
        "lax_igamma" => lax::igamma(x(), y()),
        "lax_igammac" => lax::igammac(x(), y()),
        "lax_igamma_grad_a" => lax::igamma_grad_a(x(), y()),
        "lax_random_gamma_grad" => lax::random_gamma_grad(x(), y()),
        "np_sort_complex" | "np_sort_complex_real" => jnp::sort_complex(x()),
        "np_lexsort" => jnp::lexsort(&[x(), y()], -1),
        "np_partition" => jnp::partition(x(), 2, 0),
        "np_partition_u8" => jnp::partition(x(), 1, -1),
        "np_argpartition" => jnp::argpartition(x(), 3, -1),
        "np_packbits" => jnp::packbits(x(), Some(1), jnp::BitOrder::Big),
        "np_packbits_flat_little" => jnp::packbits(x(), None, jnp::BitOrder::Little),
        "np_unpackbits" => jnp::unpackbits(x(), Some(0), None, jnp::BitOrder::Big),
        "np_unpackbits_count" => jnp::unpackbits(x(), None, Some(13), jnp::BitOrder::Little),
        "np_ix" => {
            let mesh = jnp::ix_(&[x(), y()]);
            &(&mesh[0] * 10) + &mesh[1]
        }
        "np_ravel_multi_index_clip" => {
            jnp::ravel_multi_index(&[x(), y()], &[3, 4], jnp::IndexMode::Clip, false)
        }
        "np_ravel_multi_index_wrap_f" => {
            jnp::ravel_multi_index(&[x(), y()], &[3, 4], jnp::IndexMode::Wrap, true)
        }
        "np_fill_diagonal" => jnp::fill_diagonal(x(), &Array::scalar(7.0f32).unwrap()),
        "np_fill_diagonal_values" => jnp::fill_diagonal(x(), y()),
        "np_compress" => jnp::compress(x(), y(), Some(1), Some(3), -1.0),
        "np_extract" => jnp::extract(x(), y(), Some(5), 0.0),
        "np_poly" | "np_poly_matrix" => jnp::poly(x()),
        "lax_shape_as_value" => lax::shape_as_value(&[3, 4, 5]),
        "lax_ragged_dot" => lax::ragged_dot(x(), y(), &a[2], None, None),
        "lax_ragged_dot_general_free_batched" => ragged(((&[2], &[2]), (&[0], &[1])), &[1], &[0]),
        "lax_ragged_dot_general_free_inner" => ragged(((&[0], &[0]), (&[], &[])), &[1], &[1]),
        "lax_ragged_dot_general_contracting" | "lax_ragged_dot_general_contracting_per_batch" => {
            ragged(((&[2], &[1]), (&[0], &[0])), &[2], &[])
        }
        "lax_ragged_dot_general_batch" => ragged(((&[2], &[1]), (&[0], &[0])), &[0], &[]),
        "np_vectorize_elementwise" => vectorized(
            jnp::vectorize(|v: &[Array]| &(&v[0] * &jnp::sin(&v[1])) + 1.0).call(&[x(), y()]),
        ),
        "np_vectorize_dot" => vectorized(
            jnp::vectorize(|v: &[Array]| jnp::dot(&v[0], &v[1]))
                .signature("(n),(n)->()")
                .call(&[x(), y()]),
        ),
        "np_vectorize_matvec_kept_ones" => vectorized(
            jnp::vectorize(|v: &[Array]| jnp::matmul(&v[0], &v[1]))
                .signature("(m,n),(n)->(m)")
                .call(&[x(), y()]),
        ),
        "np_vectorize_second_output" => vectorized(
            jnp::vectorize(|v: &[Array]| {
                let reversed = jnp::flip(&v[0], None);
                (jnp::sum(&v[0], None, false), &reversed * 2.0)
            })
            .signature("(n)->(),(n)")
            .call(&[x()])
            .map(|(_, second)| second),
        ),
        "lax_scatter_apply_repeated" => lax::scatter_apply(
            x(),
            y(),
            |v| &(v * 1.5) + &lax::sin(v),
            points(),
            &[4],
            lax::GatherMode::Fill,
        ),
        "lax_scatter_apply_rows_clip" => {
            let rows = lax::ScatterDimensionNumbers {
                update_window_dims: [1].into_iter().collect(),
                inserted_window_dims: [0].into_iter().collect(),
                scatter_dims_to_operand_dims: [0].into_iter().collect(),
            };
            lax::scatter_apply(x(), y(), lax::tanh, rows, &[2, 4], lax::GatherMode::Clip)
        }
        "lax_scatter_apply_dropped" => {
            lax::scatter_apply(x(), y(), lax::exp, points(), &[3], lax::GatherMode::Fill)
        }
        "lax_scaled_dot" => lax::scaled_dot(x(), y(), Some(&a[2]), Some(&a[3]), None, None),
        "lax_scaled_dot_batched_f32" => {
            lax::scaled_dot(x(), y(), Some(&a[2]), Some(&a[3]), None, Some(DType::F32))
        }
        "lax_scaled_dot_dims_unscaled_rhs" => {
            let dims: lax::DotDimensionNumbers<'_> = ((&[0], &[0]), (&[], &[]));
            lax::scaled_dot(x(), y(), Some(&a[2]), None, Some(dims), Some(DType::F32))
        }
        "lax_platform_dependent" => {
            let on_cpu = || lax::sin(x());
            let otherwise = || lax::cos(x());
            lax::platform_dependent(&[("cpu", &on_cpu)], Some(&otherwise)).unwrap()
        }
        "lax_composite" => lax::composite(|v: Array| &lax::sin(&v) * 2.0, "my.double_sin", 0)
            .call(x().clone())
            .unwrap(),
        "np_unique_size" | "np_unique_fill" | "np_unique_truncated" | "np_unique_nan" => {
            let (size, fill_value) = match name {
                "np_unique_size" => (10, None),
                "np_unique_fill" => (10, Some(-1.0)),
                "np_unique_truncated" => (4, None),
                _ => (6, Some(0.0)),
            };
            let options = jnp::UniqueOptions {
                size: Some(size),
                fill_value,
                ..Default::default()
            };
            jnp::unique(x(), &options)
        }
        "np_unique_axis" => {
            let options = jnp::UniqueOptions {
                axis: Some(0),
                size: Some(4),
                fill_value: Some(-1.0),
                ..Default::default()
            };
            jnp::unique(x(), &options)
        }
        "np_unique_returns" => {
            let options = jnp::UniqueOptions {
                size: Some(8),
                fill_value: Some(0.0),
                ..Default::default()
            };
            match jnp::unique_with(&lax::reshape(x(), &[3, 4]), &options) {
                Ok(u) => {
                    let parts = [u.values, u.indices, u.inverse_indices, u.counts];
                    let flat: Vec<Array> = parts.iter().map(jnp::ravel).collect();
                    jnp::concatenate(&flat.iter().collect::<Vec<_>>(), 0)
                }
                Err(e) => e,
            }
        }
        "np_unique_all" => match jnp::unique_all(x(), Some(7), Some(-1.0)) {
            Ok(u) => {
                let parts = [u.values, u.indices, u.inverse_indices, u.counts];
                let flat: Vec<Array> = parts
                    .iter()
                    .map(|p| lax::convert_element_type(&jnp::ravel(p), DType::F32))
                    .collect();
                jnp::concatenate(&flat.iter().collect::<Vec<_>>(), 0)
            }
            Err(e) => e,
        },
        "np_unique_counts" => {
            let (values, counts) = jnp::unique_counts(x(), Some(9), None);
            jnp::stack(&[&values, &counts], 0)
        }
        "np_unique_inverse" => {
            let (values, inverse) = jnp::unique_inverse(&lax::reshape(x(), &[4, 3]), Some(8), None);
            jnp::concatenate(&[&values, &jnp::ravel(&inverse)], 0)
        }
        "np_unique_values" => jnp::unique_values(x(), Some(7), Some(9.0)),
        "np_union1d" => jnp::union1d(x(), y(), Some(12), Some(-5.0)),
        "np_union1d_default_fill" => jnp::union1d(x(), y(), Some(12), None),
        "np_intersect1d" => jnp::intersect1d(x(), y(), false, Some(5), None),
        "np_intersect1d_fill" => jnp::intersect1d(x(), y(), false, Some(5), Some(-1.0)),
        "np_intersect1d_unique" => jnp::intersect1d(x(), y(), true, Some(4), None),
        "np_setdiff1d" => jnp::setdiff1d(x(), y(), false, Some(6), None),
        "np_setdiff1d_fill" => jnp::setdiff1d(x(), y(), false, Some(8), Some(-1.0)),
        "np_setdiff1d_unique" => jnp::setdiff1d(x(), y(), true, Some(5), None),
        "np_setxor1d" => jnp::setxor1d(x(), y(), false, Some(10), None),
        "np_setxor1d_fill" => jnp::setxor1d(x(), y(), false, Some(10), Some(-1.0)),
        "np_setxor1d_floats" => jnp::setxor1d(x(), y(), false, Some(6), Some(0.0)),
        "np_histogram" | "np_histogram_range" | "np_histogram_constant" => {
            let (bins, range) = match name {
                "np_histogram" => (5, None),
                "np_histogram_range" => (4, Some((0.0, 3.0))),
                _ => (3, None),
            };
            let (counts, edges) = jnp::histogram(x(), &jnp::Bins::Count(bins), range, None, false);
            jnp::concatenate(&[&counts, &edges], 0)
        }
        "np_histogram_weights_density" => {
            let edges = Array::from_slice(&[-1.0f32, 0.0, 2.0, 8.0], &[4]).unwrap();
            let (counts, edges) =
                jnp::histogram(x(), &jnp::Bins::Edges(edges), None, Some(y()), true);
            jnp::concatenate(&[&counts, &edges], 0)
        }
        "np_histogram_bin_edges" => jnp::histogram_bin_edges(x(), &jnp::Bins::Count(6), None),
        "np_histogram2d" => {
            let bins = [jnp::Bins::Count(3), jnp::Bins::Count(4)];
            let (hist, xe, ye) = jnp::histogram2d(x(), y(), &bins, None, None, false);
            jnp::concatenate(&[&jnp::ravel(&hist), &xe, &ye], 0)
        }
        "np_histogramdd" => {
            let edges = Array::from_slice(&[0.0f32, 1.0, 2.5, 3.0], &[4]).unwrap();
            let bins = [
                jnp::Bins::Count(2),
                jnp::Bins::Count(3),
                jnp::Bins::Edges(edges),
            ];
            let range = [Some((-1.0, 8.0)), None, None];
            let (hist, edges) = jnp::histogramdd(x(), &bins, Some(&range), None, true);
            let mut parts = vec![jnp::ravel(&hist)];
            parts.extend(edges);
            jnp::concatenate(&parts.iter().collect::<Vec<_>>(), 0)
        }
        "np_put" | "np_put_clip" | "np_put_wrap" => {
            let positions: &[i32] = if name == "np_put" {
                &[0, 5, -2, 20]
            } else {
                &[0, 5, -1, 20]
            };
            let ind = Array::from_slice(positions, &[4]).unwrap();
            let (values, mode): (&[f32], _) = match name {
                "np_put" => (&[10.0, 20.0], None),
                "np_put_clip" => (&[10.0, 20.0], Some(jnp::IndexMode::Clip)),
                _ => (&[10.0, 20.0, 30.0], Some(jnp::IndexMode::Wrap)),
            };
            let v = Array::from_slice(values, &[values.len() as i64]).unwrap();
            jnp::put(x(), &ind, &v, mode)
        }
        "np_place" => {
            let vals = Array::from_slice(&[7.0f32, 8.0, 9.0], &[3]).unwrap();
            jnp::place(x(), y(), &vals)
        }
        "np_put_along_axis" => {
            let ind = Array::from_slice(&[0i32, 2, 1], &[3, 1]).unwrap();
            jnp::put_along_axis(x(), &ind, &Array::scalar(99.0f32).unwrap(), Some(1))
        }
        "np_put_along_axis_flat" => {
            let ind = Array::from_slice(&[1i32, 7], &[2]).unwrap();
            let v = Array::from_slice(&[-1.0f32, -2.0], &[2]).unwrap();
            jnp::put_along_axis(x(), &ind, &v, None)
        }
        "np_choose_wrap" | "np_choose_clip" => {
            let a = y();
            let (tens, neg) = (
                jnp::multiply(a, &Array::weak_scalar(10.0)),
                jnp::negative(a),
            );
            let mode = if name == "np_choose_wrap" {
                jnp::IndexMode::Wrap
            } else {
                jnp::IndexMode::Clip
            };
            jnp::choose(x(), &[a, &tens, &neg], mode)
        }
        "np_delete_one" => jnp::delete(x(), &jnp::Positions::One(1), Some(1)),
        "np_delete_many" => jnp::delete(x(), &jnp::Positions::Many(vec![0, -1, 5]), None),
        "np_delete_mask" => {
            jnp::delete(x(), &jnp::Positions::Mask(vec![true, false, true]), Some(0))
        }
        "np_insert_one" => {
            let v = Array::from_slice(&[5.0f32, 6.0, 7.0], &[3]).unwrap();
            jnp::insert(x(), &jnp::Positions::One(1), &v, Some(1))
        }
        "np_insert_many" => jnp::insert(
            x(),
            &jnp::Positions::Many(vec![0, 2, 4]),
            &Array::scalar(-1.0f32).unwrap(),
            Some(1),
        ),
        "np_insert_flat" => {
            let v = Array::from_slice(&[100.0f32, 200.0, 300.0], &[3]).unwrap();
            jnp::insert(x(), &jnp::Positions::Many(vec![1, 1, -2]), &v, None)
        }
        "np_apply_along_axis" => jnp::apply_along_axis(
            |r| {
                jnp::subtract(
                    &jnp::sum(&jnp::multiply(r, r), None, false),
                    &r.index(&s![0]),
                )
            },
            1,
            x(),
        ),
        "np_apply_along_axis_vec" => jnp::apply_along_axis(
            |r| jnp::multiply(&jnp::flip(r, None), &Array::weak_scalar(2.0)),
            0,
            x(),
        ),
        "np_apply_over_axes" => {
            jnp::apply_over_axes(|a, axis| jnp::sum(a, Some(&[axis]), false), x(), &[0, 2])
        }
        "np_fromfunction" => jnp::fromfunction(
            |c| {
                jnp::add(
                    &jnp::multiply(&c[0], &Array::weak_scalar(10.0)),
                    &jnp::multiply(&c[1], &c[1]),
                )
            },
            &[3, 4],
            DType::F32,
        ),
        "np_piecewise" => {
            let (low, high) = (
                jnp::less(x(), &Array::weak_scalar(2.0)),
                jnp::greater(x(), &Array::weak_scalar(7.0)),
            );
            let negate = |v: &Array| jnp::negative(v);
            let square = |v: &Array| jnp::multiply(v, v);
            jnp::piecewise(
                x(),
                &[&low, &high],
                &[
                    jnp::Piece::Function(&negate),
                    jnp::Piece::Function(&square),
                    jnp::Piece::Value(1.0),
                ],
            )
        }
        "np_piecewise_default" => {
            let (low, high) = (
                jnp::less(x(), &Array::weak_scalar(3.0)),
                jnp::greater_equal(x(), &Array::weak_scalar(9.0)),
            );
            let shift = |v: &Array| jnp::add(v, &Array::weak_scalar(100.0));
            jnp::piecewise(
                x(),
                &[&low, &high],
                &[jnp::Piece::Function(&shift), jnp::Piece::Value(5.0)],
            )
        }
        "np_mask_indices" => {
            let (rows, cols) = jnp::mask_indices(4, |m, k| jnp::triu(m, k), 1, Some(6));
            jnp::stack(&[&rows, &cols], 0)
        }
        "np_polydiv" => {
            let (q, r) = jnp::polydiv(x(), y());
            jnp::concatenate(&[&q, &r], 0)
        }
        "np_roots" => jnp::roots(x(), false),
        "np_block" => jnp::block(&jnp::Block::List(vec![
            jnp::Block::List(vec![jnp::Block::Array(x()), jnp::Block::Array(y())]),
            jnp::Block::List(vec![jnp::Block::Array(&a[2]), jnp::Block::Array(&a[3])]),
        ])),
        "np_block_1d" => jnp::block(&jnp::Block::List(vec![
            jnp::Block::Array(x()),
            jnp::Block::Array(y()),
            jnp::Block::Array(x()),
        ])),
        "np_polyfit" => jnp::polyfit(x(), y(), 2, None, None),
        "np_polyfit_weighted_2d" => {
            let columns = jnp::stack(&[y(), &jnp::multiply(y(), y())], 1);
            jnp::polyfit(x(), &columns, 1, None, Some(&a[2]))
        }
        "np_polyfit_full" => {
            let (c, resids, rank, s) = jnp::polyfit_full(x(), y(), 3, None, None);
            let parts: Vec<Array> = [c, resids, rank, s]
                .iter()
                .map(|p| jnp::ravel(&lax::convert_element_type(p, DType::F32)))
                .collect();
            jnp::concatenate(&parts.iter().collect::<Vec<_>>(), 0)
        }
        "lax_reduce_precision_f16" => lax::reduce_precision(x(), 5, 10),
        "lax_reduce_precision_bf16" => lax::reduce_precision(x(), 8, 7),
        "lax_reduce_precision_e4m3" => lax::reduce_precision(x(), 4, 3),
        "lax_betainc" => lax::betainc(x(), y(), &a[2]),
        "lax_betainc_x" => {
            let pa = Array::from_slice(&[0.5f32, 1.0, 2.0, 5.0, 0.7, 3.0], &[6]).unwrap();
            let pb = Array::from_slice(&[0.5f32, 3.0, 2.0, 1.5, 4.0, 0.9], &[6]).unwrap();
            lax::betainc(&pa, &pb, x())
        }
        "silu" => nn::silu(x()),
        "nn_identity" => nn::identity(x()),
        "nn_tanh" => nn::tanh(x()),
        "nn_swish" => nn::swish(x()),
        "nn_squareplus" => nn::squareplus(x(), 3.0),
        "nn_softplus" => nn::softplus(x()),
        "nn_sparse_plus" => nn::sparse_plus(x()),
        "nn_soft_sign" => nn::soft_sign(x()),
        "nn_sparse_sigmoid" => nn::sparse_sigmoid(x()),
        "nn_mish" => nn::mish(x()),
        "nn_log_sigmoid" => nn::log_sigmoid(x()),
        "nn_elu" => nn::elu(x(), 0.7),
        "nn_leaky_relu" => nn::leaky_relu(x(), 0.05),
        "nn_hard_tanh" => nn::hard_tanh(x()),
        "nn_celu" => nn::celu(x(), 1.5),
        "nn_selu" => nn::selu(x()),
        "nn_gelu_exact" => nn::gelu_exact(x()),
        "nn_glu" => nn::glu(x(), -1),
        "nn_glu_axis0" => nn::glu(x(), 0),
        "nn_logmeanexp" => nn::logmeanexp(x(), Some(&[1]), false),
        "nn_logmeanexp_all" => nn::logmeanexp(x(), None, false),
        "nn_standardize" => nn::standardize(x(), &[-1], None, None, 1e-5),
        "nn_standardize_axis0" => nn::standardize(x(), &[0], None, None, 1e-3),
        "nn_relu6" => nn::relu6(x()),
        "nn_hard_sigmoid" => nn::hard_sigmoid(x()),
        "nn_hard_silu" => nn::hard_silu(x()),
        "nn_hard_swish" => nn::hard_swish(x()),
        "nn_log1mexp" => nn::log1mexp(x()),
        "nn_attention" | "nn_attention_unbatched" => {
            nn::dot_product_attention(&a[0], &a[1], &a[2], &nn::AttentionOptions::default())
        }
        "nn_attention_bias_causal" => nn::dot_product_attention(
            &a[0],
            &a[1],
            &a[2],
            &nn::AttentionOptions {
                bias: Some(&a[3]),
                is_causal: true,
                scale: Some(0.3),
                ..Default::default()
            },
        ),
        "nn_attention_masks" => nn::dot_product_attention(
            &a[0],
            &a[1],
            &a[2],
            &nn::AttentionOptions {
                mask: Some(&a[3]),
                query_seq_lengths: Some(&a[4]),
                key_value_seq_lengths: Some(&a[5]),
                local_window_size: Some((1, 2)),
                ..Default::default()
            },
        ),
        "gelu" => nn::gelu(x()),
        "softmax" => nn::softmax(x(), None),
        "log_softmax" => nn::log_softmax(x(), None),
        "logsumexp" => nn::logsumexp(x(), Some(&[1]), false),
        "mlp_loss" => {
            let (w1, b1, w2, b2, xs, ys) = (&a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
            let h = nn::relu(&(jnp::matmul(xs, w1) + b1));
            let logits = jnp::matmul(&h, w2) + b2;
            jnp::mean(
                &-jnp::sum(&(nn::log_softmax(&logits, None) * ys), Some(&[-1]), false),
                None,
                false,
            )
        }
        other => panic!("no oxla mapping for reference case {other}"),
    }
}

/// How closely each case must match JAX: one primitive within one ulp
/// ([`Tolerance::SINGLE_OP`]), a chain of ops within the epsilons its
/// reason gives.
pub(crate) fn tolerance_of(name: &str) -> Tolerance {
    chain_tolerance(name).unwrap_or(Tolerance::SINGLE_OP)
}

/// The cases that are chains of ops or sums, with why they may differ
/// from JAX's rounding; every other case is one primitive.
fn chain_tolerance(name: &str) -> Option<Tolerance> {
    let contraction = oxla_testing::contraction_tolerance(Tolerance::chain(
        8.0,
        8.0,
        "a contraction's sum order is the kernel's choice (the plugin's dot emitter, jaxlib's Eigen/YNNPACK)",
    ));
    const LOG_SUMS: Tolerance = Tolerance::chain(
        8.0,
        2.0,
        "cumulative log-sum-exps combine in another order: JAX 0.10.2 lowers them as a \
         reduce_window of logaddexp, oxla as JAX's associative_scan",
    );
    const RECURRENCE: Tolerance = Tolerance::chain(
        8.0,
        2.0,
        "a linear recurrence of multiplies and adds, which XLA may fuse into multiply-adds",
    );
    const MEANS: Tolerance = Tolerance::chain(
        4.0,
        2.0,
        "a sum then a division or a normalization: the sum's order is the reduction kernel's \
         choice, which on GPUs differs between a fused program and a lone reduction (seen on an H200)",
    );
    const MOMENTS: Tolerance = Tolerance::chain(
        8.0,
        4.0,
        "var and std are a mean, a difference and a second mean, each rounded",
    );
    const SERIES: Tolerance = Tolerance::chain(
        8.0,
        0.0,
        "polygamma is a series of ops; eagerly oxla rounds between them, under jit XLA fuses them as JAX's",
    );
    const CANCELLING: Tolerance = Tolerance::chain(
        16.0,
        2.0,
        "gelu's 1 + tanh(..) cancels where tanh is near -1, so XLA's tanh rounding (its vector and \
         scalar paths differ by an ulp, and which one runs depends on the shape, vmap's too) \
         grows several-fold",
    );
    const INTERPOLATION: Tolerance = Tolerance::chain(
        8.0,
        4.0,
        "linear interpolation is a difference, a division and a multiply-add, which XLA may \
         fuse (vmap too) and round differently",
    );
    const ACTIVATION: Tolerance = Tolerance::chain(
        4.0,
        1.0,
        "an activation of a few elementwise ops, which XLA may fuse (or vmap reshape) and \
         round differently",
    );
    const COMPLEX_PRODUCT: Tolerance = Tolerance::chain(
        4.0,
        2.0,
        "a complex product is ac - bd + i(ad + bc): XLA may fuse either sum into a multiply-add \
         (vmap's shapes too), and the difference cancels",
    );
    const FACTORIZATION: Tolerance = Tolerance::chain(
        16.0,
        4.0,
        "a factorization or triangular solve is a chain of dependent sums: oxla lowers them to \
         StableHLO's cholesky and triangular_solve, which XLA expands on the CPU, where JAX calls \
         LAPACK's potrf and trsm",
    );
    const LAPACK: Tolerance = Tolerance::chain(
        256.0,
        64.0,
        "a decomposition's chain of dependent sums, by the system's OpenBLAS in oxla and by the \
         one SciPy bundles in JAX, whose blocking and kernels round differently (eigenvector \
         derivatives divide those differences by eigenvalue gaps)",
    );
    Some(match name.split('@').next().unwrap_or(name) {
        "np_poly_matrix"
        | "np_roots"
        | "np_polyfit"
        | "np_polyfit_weighted_2d"
        | "np_polyfit_full"
        | "lax_betainc"
        | "lax_betainc_x"
        | "lax_igamma"
        | "lax_igammac"
        | "lax_igamma_grad_a"
        | "lax_random_gamma_grad"
        | "la_det_rank3"
        | "la_det_rank1"
        | "lax_lu"
        | "lax_lu_wide"
        | "lax_lu_tall"
        | "lax_lu_batch"
        | "lax_lu_complex"
        | "lax_lu_solve"
        | "lax_lu_solve_t"
        | "la_solve"
        | "la_solve_vector"
        | "la_solve_batch"
        | "la_solve_complex"
        | "la_inv"
        | "la_inv_batch"
        | "la_det"
        | "la_det_2"
        | "la_det_3"
        | "la_det_batch"
        | "la_det_complex"
        | "la_slogdet_sign"
        | "la_slogdet_logdet"
        | "la_slogdet_complex"
        | "la_slogdet_complex_sign"
        | "la_qr_q"
        | "la_qr_r"
        | "la_qr_complete_q"
        | "la_qr_complete_r"
        | "la_qr_wide_q"
        | "la_qr_wide_r"
        | "la_qr_complex_r"
        | "la_qr_mode_r"
        | "la_eigh_w"
        | "la_eigh_v"
        | "la_eigh_upper_v"
        | "la_eigvalsh_batch"
        | "la_eigh_complex_w"
        | "la_svd_s"
        | "la_svd_u"
        | "la_svd_vh"
        | "la_svd_wide_u"
        | "la_svd_full_u"
        | "la_svd_complex_s"
        | "la_svdvals_batch"
        | "la_svd_hermitian_s"
        | "la_eigvals"
        | "la_eigvals_complex"
        | "la_eig_w"
        | "la_eig_v_abs"
        | "la_pinv"
        | "la_pinv_wide"
        | "la_lstsq"
        | "la_lstsq_resid"
        | "la_cond"
        | "la_cond_1"
        | "la_cond_singular"
        | "la_matrix_norm_2"
        | "la_matrix_norm_nuc"
        | "la_matrix_power_neg"
        | "la_tensorsolve"
        | "la_tensorinv"
        | "la_solve_singular"
        | "la_eigvalsh_nan" => LAPACK,
        "lax_cholesky"
        | "lax_cholesky_batch"
        | "la_cholesky"
        | "la_cholesky_upper"
        | "la_cholesky_complex"
        | "lax_ts_left_lower"
        | "lax_ts_right_upper_t"
        | "lax_ts_left_unit"
        | "lax_ts_vector"
        | "lax_ts_batch"
        | "lax_ts_complex_adjoint"
        | "lax_ts_complex_conj" => FACTORIZATION,
        "c_mul" | "c_div" | "c_square" | "c_integer_pow" | "c_promote_int" => COMPLEX_PRODUCT,
        "c_reduce_prod" | "c_cumsum" => RECURRENCE,
        "c_dot_general" | "c_einsum" | "np_vdot_c" | "np_vecdot_c" => contraction,
        "lax_conv_local"
        | "np_apply_along_axis"
        | "lax_ragged_dot"
        | "lax_ragged_dot_general_free_batched"
        | "lax_ragged_dot_general_free_inner"
        | "lax_ragged_dot_general_contracting"
        | "lax_ragged_dot_general_contracting_per_batch"
        | "lax_ragged_dot_general_batch"
        | "lax_scaled_dot"
        | "lax_scaled_dot_batched_f32"
        | "np_vectorize_dot"
        | "np_vectorize_matvec_kept_ones"
        | "lax_scaled_dot_dims_unscaled_rhs"
        | "dot_general"
        | "dot_general_batch"
        | "dot_general_highest"
        | "einsum_attention"
        | "einsum_batched"
        | "einsum_dot"
        | "einsum_implicit"
        | "einsum_matmul"
        | "einsum_ellipsis"
        | "einsum_ellipsis_broadcast"
        | "einsum_three"
        | "einsum_three_implicit"
        | "einsum_four_batched"
        | "einsum_ellipsis_three"
        | "einsum_repeated_kept"
        | "jnp_matmul"
        | "jnp_matmul_2d_3d"
        | "jnp_matmul_3d_2d"
        | "jnp_matmul_3d_vec"
        | "jnp_matmul_broadcast_batch"
        | "jnp_matmul_unit_batches"
        | "jnp_matmul_left_batches"
        | "jnp_matmul_vec_3d"
        | "jnp_matvec"
        | "jnp_batched_matmul"
        | "conv_batch_groups"
        | "conv_feature_groups"
        | "conv_nchw_strided_dilated"
        | "conv_nhwc_same"
        | "mlp_loss"
        | "nn_attention"
        | "nn_attention_bias_causal"
        | "nn_attention_masks"
        | "nn_attention_unbatched"
        | "np_tensordot"
        | "np_tensordot_n"
        | "np_inner"
        | "np_vdot"
        | "np_vecdot"
        | "np_matvec"
        | "np_vecmat"
        | "lax_dot"
        | "lax_dot_vector"
        | "lax_batch_matmul"
        | "lax_conv"
        | "lax_conv_with_general_padding"
        | "la_matrix_power"
        | "la_multi_dot"
        | "la_multi_dot_four"
        | "la_multi_dot_vector_last"
        | "la_tensordot"
        | "la_vecdot"
        | "la_matmul" => contraction,
        "la_vector_norm"
        | "la_vector_norm_axis"
        | "la_vector_norm_1"
        | "la_vector_norm_3"
        | "la_matrix_norm"
        | "la_matrix_norm_1"
        | "la_matrix_norm_neg_1"
        | "la_matrix_norm_inf"
        | "la_norm"
        | "la_norm_axis"
        | "la_norm_axes"
        | "la_norm_matrix_inf"
        | "la_trace"
        | "la_cross"
        | "np_apply_over_axes"
        | "np_cross_2d" => MEANS,
        "np_interp"
        | "np_interp_left_right"
        | "np_nanquantile"
        | "np_nanquantile_q"
        | "np_nanpercentile_all"
        | "np_nanpercentile_keep"
        | "np_nanmedian"
        | "np_nanmedian_no_nans" => INTERPOLATION,
        "np_polyval" | "np_polydiv" => RECURRENCE,
        "np_trapezoid" | "np_trapezoid_x" | "np_average" | "np_average_weights" | "np_nanmean"
        | "np_quantile" | "np_quantile_keep" | "np_percentile" | "np_median" | "np_median_all" => {
            MEANS
        }
        "np_nanvar" | "np_nanstd" => MOMENTS,
        "nn_swish" | "nn_squareplus" | "nn_softplus" | "nn_sparse_plus" | "nn_soft_sign"
        | "nn_sparse_sigmoid" | "nn_mish" | "nn_log_sigmoid" | "nn_elu" | "nn_celu" | "nn_selu"
        | "nn_gelu_exact" | "nn_glu" | "nn_glu_axis0" | "nn_hard_sigmoid" | "nn_hard_silu"
        | "nn_hard_swish" | "nn_log1mexp" | "nn_relu6" | "nn_leaky_relu" | "nn_hard_tanh" => {
            ACTIVATION
        }
        "nn_logmeanexp" | "nn_logmeanexp_all" => MEANS,
        "np_hamming" | "np_hanning" | "np_blackman" | "np_bartlett" | "np_kaiser" => ACTIVATION,
        // Weighted counts divided by their sum and the bins' widths.
        "np_bincount_weights" | "np_histogramdd" | "np_histogram_weights_density" => MEANS,
        // Edges lo + i·(hi − lo)/bins, which XLA contracts into fused
        // multiply-adds in some programs and not in others (vmap of it
        // differed from JAX's by 2 ulps in one edge on this machine's CPU).
        "np_histogram_bin_edges" => MEANS,
        "np_convolve"
        | "np_convolve_same"
        | "np_convolve_valid_swapped"
        | "np_correlate"
        | "np_correlate_full"
        | "np_correlate_swapped"
        | "np_polymul"
        | "np_cov"
        | "np_cov_vector"
        | "np_cov_columns_bias"
        | "np_corrcoef"
        | "np_corrcoef_columns" => contraction,
        "np_unwrap" | "np_unwrap_axis" => RECURRENCE,
        "np_logspace"
        | "np_logspace_base"
        | "np_geomspace"
        | "np_geomspace_negative"
        | "np_polyint"
        | "np_polyder" => ACTIVATION,
        "nn_standardize" | "nn_standardize_axis0" => MOMENTS,
        "jnp_var" | "jnp_std" | "axis_var" | "axis_std" => MOMENTS,
        "cumlogsumexp" | "cumlogsumexp_reverse" => LOG_SUMS,
        "associative_scan_pair" => RECURRENCE,
        "axis_mean" | "jnp_mean" | "axis_softmax" | "softmax" | "axis_log_softmax"
        | "log_softmax" | "axis_logsumexp" | "logsumexp" => MEANS,
        "polygamma" => SERIES,
        "gelu" => CANCELLING,
        _ => return None,
    })
}

/// Every case of `cases` in oxla, eagerly and under jit, against JAX's
/// output within [`tolerance_of`] the case; panics listing every mismatch,
/// else returns how many cases were checked.
fn check_cases(cases: &BTreeMap<String, serde_json::Value>) -> usize {
    let mut checked = 0;
    let mut failures = Vec::new();
    for name in cases.keys() {
        let case = reference::case_of(cases, name);
        let tolerance = tolerance_of(name);
        let eager = apply(name, &case.inputs)
            .to_host()
            .unwrap_or_else(|e| panic!("{name} eager: {e}"));
        if let Err(why) = compare(&eager, &case.output, tolerance) {
            failures.push(format!("{name} (eager): {why}"));
        }
        let n = name.clone();
        let jitted = jit(move |xs: Vec<Array>| apply(&n, &xs));
        let traced = jitted
            .call(case.inputs.clone())
            .unwrap_or_else(|e| panic!("{name} jit: {e}"));
        if let Err(why) = compare(&traced.to_host().unwrap(), &case.output, tolerance) {
            failures.push(format!("{name} (jit): {why}"));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    checked
}

#[test]
fn every_op_matches_jax_eagerly_and_under_jit() {
    let cases = reference::cases();
    let checked = check_cases(cases);
    assert!(checked > 300, "only {checked} cases");
    for dtype in ["bf16", "f16"] {
        let variants = cases
            .keys()
            .filter(|k| k.ends_with(&format!("@{dtype}")))
            .count();
        assert!(variants > 50, "only {variants} {dtype} cases");
    }
}

/// The 64-bit cases ("case@f64", "case@i64"), in a child process with x64
/// enabled (a process-wide switch no other test of this binary may see).
#[test]
fn x64_ops_match_jax_in_a_child_process() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "ops_vs_jax::x64_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("OXLA_ENABLE_X64", "1")
        .output_bounded();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("x64 cases checked"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The child's work.
#[test]
#[ignore = "run with OXLA_ENABLE_X64=1 by x64_ops_match_jax_in_a_child_process"]
fn x64_child() {
    assert!(oxla::x64_enabled(), "x64_child needs OXLA_ENABLE_X64=1");
    let cases = reference::x64_cases();
    let checked = check_cases(cases);
    let wide_ints = cases.keys().filter(|k| k.ends_with("@i64")).count();
    assert!(checked > 70 && wide_ints > 10, "only {checked} x64 cases");
    println!("{checked} x64 cases checked");
}

/// Every case written as a jax.export file (`Jit::export`), whose module
/// is a StableHLO portable artifact from oxla's VHLO writer: the plugin,
/// reading it through StableHLO's deserializer, computes exactly what the
/// jit computes, and Python JAX (reference/run_exports.py) loads and runs
/// it to JAX's own output within the case's tolerance.
#[test]
fn every_op_exports_as_a_portable_artifact_that_the_plugin_and_jax_run() {
    let cases = reference::cases();
    let client = oxla::client().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut written = Vec::new();
    for name in cases.keys() {
        let case = reference::case_of(cases, name);
        let n = name.clone();
        let jitted = jit(move |xs: Vec<Array>| apply(&n, &xs));
        let exported = match jitted.export(&case.inputs, &oxla::ExportOptions::new()) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("{name}: export: {e}"));
                continue;
            }
        };
        if !matches!(
            exported.module_form(),
            oxla_export::ModuleForm::PortableArtifact(_)
        ) {
            failures.push(format!("{name}: the module is {}", exported.module_form()));
            continue;
        }
        let want = jitted.call(case.inputs.clone()).unwrap().to_host().unwrap();
        let inputs: Vec<_> = case.inputs.iter().map(|a| a.to_host().unwrap()).collect();
        let got = oxla_export::LoadedExport::new(client, &exported)
            .and_then(|loaded| loaded.call(&inputs));
        match got {
            Ok(got) => {
                // The same module compiled twice: bit for bit on the CPU; a
                // GPU plugin autotunes each compilation (cuDNN's convolution
                // algorithms), so there the op's own tolerance applies.
                let same_module = match oxla_testing::platform() {
                    oxla_pjrt::Platform::Cpu => Tolerance::Ulps(0),
                    _ => tolerance_of(name),
                };
                if let Err(why) = compare(&got[0], &want, same_module) {
                    failures.push(format!("{name} (plugin): {why}"));
                }
            }
            Err(e) => failures.push(format!("{name} (plugin): {e}")),
        }
        std::fs::write(
            dir.path().join(format!("{name}.jaxexport")),
            exported.to_bytes(),
        )
        .unwrap();
        for (i, input) in case.inputs.iter().enumerate() {
            input
                .to_npy(dir.path().join(format!("{name}.in{i}.npy")))
                .unwrap();
        }
        written.push(name.clone());
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/reference/run_exports.py");
    let mut args: Vec<std::path::PathBuf> = vec![dir.path().to_path_buf()];
    args.extend(written.iter().map(std::path::PathBuf::from));
    let args: Vec<&std::path::Path> = args.iter().map(|p| p.as_path()).collect();
    let verdicts: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &args)).unwrap();
    for name in &written {
        if verdicts[name] != "ok" {
            failures.push(format!("{name} (JAX): {}", verdicts[name]));
            continue;
        }
        let case = reference::case_of(cases, name);
        let got = Array::from_npy(dir.path().join(format!("{name}.out.npy")))
            .and_then(|a| a.to_host())
            .unwrap();
        if let Err(why) = compare(&got, &case.output, tolerance_of(name)) {
            failures.push(format!("{name} (JAX): {why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(written.len() > 300, "only {} cases", written.len());
}
