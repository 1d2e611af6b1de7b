"""Reference values for oxla's ops, computed by JAX (CPU) when the tests run;
with --x64, the 64-bit variants of the cases (x64 enabled).

Prints JSON: {"cases": {name: {"inputs": [...], "output": {...}}}} where each
array is {"dtype", "shape", "data": base64 of little-endian bytes}. oxla's
test maps each case name to the same function in oxla and compares.
"""

import base64
import json
import operator
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(1234)


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def uniform(lo, hi, *shape, dtype=np.float32):
    return rng.uniform(lo, hi, shape).astype(dtype)


def ints(lo, hi, *shape, dtype=np.int32):
    return rng.integers(lo, hi, shape).astype(dtype)


x = normal(3, 4)
WINDOWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0, 1))
# Both sides of each series' switch at |x| = 8, tiny, zero and large.
BESSEL_POINTS = np.array([-20.0, -8.5, -8.0, -3.0, -0.5, -1e-8, 0.0, 1e-8, 0.7, 4.0, 8.0, 9.5, 30.0],
                         np.float32)
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
ROW_MASK = np.array([True, False, True])
y = normal(3, 4)
pos = uniform(0.1, 3.0, 3, 4)
unit = uniform(-0.9, 0.9, 3, 4)
big = uniform(1.1, 4.0, 3, 4)
i = ints(-20, 20, 3, 4)
j = ints(1, 7, 3, 4)
u = ints(0, 200, 3, 4, dtype=np.uint8)
b = rng.integers(0, 2, (3, 4)).astype(bool)
b2 = rng.integers(0, 2, (3, 4)).astype(bool)
h = normal(3, 4, dtype=np.float16)
k = ints(-5, 6, 3, 4)
x3 = normal(2, 3, 4)
x3b = normal(2, 3, 4)
x31 = normal(2, 3, 1, 4)
u2 = ints(0, 9, 3, 4, dtype=np.uint8)
y0 = np.where(np.abs(y) < 0.4, np.float32(0.0), y).astype(np.float32)
y0[0, 0] = -0.0

SCATTER_POINTS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                             scatter_dims_to_operand_dims=(0,))
SCATTER_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
RAGGED_FREE_BATCHED = lax.RaggedDotDimensionNumbers((((2,), (2,)), ((0,), (1,))), [1], [0])
RAGGED_FREE_INNER = lax.RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), [1], [1])
RAGGED_CONTRACTING = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), [2], [])
RAGGED_BATCH = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), [0], [])

CASES = {
    # unary
    "neg": (lax.neg, [x]), "sign": (lax.sign, [x]), "abs": (lax.abs, [x]), "abs_int": (lax.abs, [i]),
    "floor": (lax.floor, [x * 3]), "ceil": (lax.ceil, [x * 3]), "round": (lax.round, [x * 3]),
    "exp": (lax.exp, [x]), "exp2": (lax.exp2, [x]), "expm1": (lax.expm1, [x]), "log": (lax.log, [pos]),
    "log1p": (lax.log1p, [pos]), "sqrt": (lax.sqrt, [pos]), "rsqrt": (lax.rsqrt, [pos]), "cbrt": (lax.cbrt, [x]),
    "tanh": (lax.tanh, [x]), "logistic": (lax.logistic, [x]), "sin": (lax.sin, [x]), "cos": (lax.cos, [x]),
    "tan": (lax.tan, [unit]), "asin": (lax.asin, [unit]), "acos": (lax.acos, [unit]), "atan": (lax.atan, [x]),
    "sinh": (lax.sinh, [x]), "cosh": (lax.cosh, [x]), "asinh": (lax.asinh, [x]), "acosh": (lax.acosh, [big]),
    "atanh": (lax.atanh, [unit]), "erf": (lax.erf, [x]), "erfc": (lax.erfc, [x]), "erf_inv": (lax.erf_inv, [unit]),
    "lgamma": (lax.lgamma, [pos]), "polygamma": (lambda a: lax.polygamma(jnp.full_like(a, 2.0), a), [pos]), "digamma": (lax.digamma, [pos]), "square": (lax.square, [x]),
    "is_finite": (lax.is_finite, [np.array([1.0, np.inf, -np.inf, np.nan], np.float32)]),
    "not_bool": (lax.bitwise_not, [b]), "not_int": (lax.bitwise_not, [i]),
    "population_count": (lax.population_count, [i]),
    "clz": (lax.clz, [i]), "clz_u8": (lax.clz, [u]),
    "exp_f16": (lax.exp, [h]),  "max_bool": (lax.max, [b, b2]), "reduce_max_bool": (lambda a: lax.reduce_max_p.bind(a, axes=(1,)), [b]), "sign_u8": (lax.sign, [u]), "sign_int": (lax.sign, [i]),
    "reduce_and_u8": (lambda a: lax.reduce_and_p.bind(a, axes=(1,)), [u]),
    "reduce_and_int": (lambda a: lax.reduce_and_p.bind(a, axes=(0,)), [i]),
    "reduce_or_u8": (lambda a: lax.reduce_or_p.bind(a, axes=(1,)), [u]),
    # binary
    "add": (lax.add, [x, y]), "sub": (lax.sub, [x, y]), "mul": (lax.mul, [x, y]), "div": (lax.div, [x, y]),
    "div_int": (lax.div, [i, j]), "rem": (lax.rem, [x, y]), "rem_int": (lax.rem, [i, j]),
    "pow": (lax.pow, [pos, y]), "max": (lax.max, [x, y]), "min": (lax.min, [x, y]),
    "atan2": (lax.atan2, [x, y]), "nextafter": (lax.nextafter, [x, y]),
    "and": (lax.bitwise_and, [b, b2]), "or": (lax.bitwise_or, [i, j]), "xor": (lax.bitwise_xor, [b, b2]),
    "shift_left": (lax.shift_left, [i, j]), "shift_right_logical": (lax.shift_right_logical, [i, j]),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, [i, j]),
    "eq": (lax.eq, [i, j]), "ne": (lax.ne, [x, y]), "lt": (lax.lt, [x, y]), "le": (lax.le, [u, u[::-1]]),
    "gt": (lax.gt, [x, y]), "ge": (lax.ge, [i, j]),
    "integer_pow": (lambda a: lax.integer_pow(a, 3), [x]), "integer_pow_neg": (lambda a: lax.integer_pow(a, -2), [pos]),
    "select_n": (lambda p, a, c: lax.select_n(p, a, c), [b, x, y]),
    "select_n_3": (lambda w, a, c, d: lax.select_n(w, a, c, d), [ints(0, 3, 3, 4), x, y, pos]),
    "clamp": (lambda a: lax.clamp(-0.5, a, 0.5), [x]),
    "convert_f32_i32": (lambda a: lax.convert_element_type(a, jnp.int32), [x * 10]),
    "convert_i32_f16": (lambda a: lax.convert_element_type(a, jnp.float16), [i]),
    "convert_f32_bool": (lambda a: lax.convert_element_type(a, jnp.bool_), [i.astype(np.float32)]),
    "iota": (lambda: lax.iota(jnp.int32, 5), []),
    "iota_2d": (lambda: lax.broadcasted_iota(jnp.float32, (2, 3), 1), []),
    "broadcast_in_dim": (lambda a: lax.broadcast_in_dim(a, (2, 3, 4), (1, 2)), [x]),
    "reshape": (lambda a: lax.reshape(a, (2, 6)), [x]),
    "transpose": (lambda a: lax.transpose(a, (1, 0)), [x]),
    "squeeze": (lambda a: lax.squeeze(a, (0,)), [x[None]]),
    "expand_dims": (lambda a: lax.expand_dims(a, (1,)), [x]),
    "rev": (lambda a: lax.rev(a, (0, 1)), [x]),
    "concatenate": (lambda a, c: lax.concatenate([a, c], 1), [x, y]),
    # split has several outputs: combined nonlinearly (every piece has a
    # cotangent), or one piece alone (the others' cotangents are zeros).
    "lax_split": (lambda a: (lambda p: p[0] * p[2] + p[1][:, :1])(lax.split(a, (1, 2, 1), axis=1)), [x]),
    "lax_split_one": (lambda a: lax.split(a, (2, 1), axis=0)[1], [x]),
    "pad": (lambda a: lax.pad(a, 0.5, [(1, 2, 1), (-1, 0, 0)]), [x]),
    "slice": (lambda a: lax.slice(a, (1, 0), (3, 4), (1, 2)), [x]),
    "reduce_sum": (lambda a: lax.reduce_sum_p.bind(a, axes=(1,), out_sharding=None), [x]),
    "reduce_max": (lambda a: lax.reduce_max_p.bind(a, axes=(0, 1)), [x]),
    "reduce_min": (lambda a: lax.reduce_min_p.bind(a, axes=(0,)), [i]),
    "reduce_prod": (lambda a: lax.reduce_prod_p.bind(a, axes=(1,)), [unit]),
    "reduce_and": (lambda a: lax.reduce_and_p.bind(a, axes=(1,)), [b]),
    "reduce_or": (lambda a: lax.reduce_or_p.bind(a, axes=(0,)), [b]),
    "dot_general": (lambda a, c: lax.dot_general(a, c, (((1,), (0,)), ((), ()))), [x, normal(4, 5)]),
    "dot_general_highest": (lambda a, c: lax.dot_general(a, c, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST),
                            [x, normal(4, 5)]),
    "dot_general_batch": (lambda a, c: lax.dot_general(a, c, (((2,), (1,)), ((0,), (0,)))), [normal(2, 3, 4), normal(2, 4, 5)]),
    # indexing, windows, sorting, convolution
    "dynamic_slice": (lambda a, r, c: lax.dynamic_slice(a, (r, c), (2, 3)), [x, np.int32(1), np.int32(5)]),
    "dynamic_update_slice": (lambda a, u, r, c: lax.dynamic_update_slice(a, u, (r, c)),
                             [x, normal(2, 2), np.int32(-1), np.int32(1)]),
    "bitcast_f32_i32": (lambda a: lax.bitcast_convert_type(a, jnp.int32), [x]),
    "bitcast_f32_u8": (lambda a: lax.bitcast_convert_type(a, jnp.uint8), [x]),
    "bitcast_i16_f32": (lambda a: lax.bitcast_convert_type(a, jnp.float32), [ints(0, 9999, 3, 2, dtype=np.int16)]),
    "cumsum": (lambda a: lax.cumsum(a, 1), [x]), "cumsum_reverse": (lambda a: lax.cumsum(a, 0, reverse=True), [x]),
    "cumprod": (lambda a: lax.cumprod(a, 1), [unit]), "cummax": (lambda a: lax.cummax(a, 1), [x]),
    "cummin": (lambda a: lax.cummin(a, 0), [i]),
    "reduce_window_sum": (lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1))), [x]),
    "reduce_window_max": (lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
                          [normal(2, 4, 6, 3)]),
    "select_and_scatter_add": (lambda s, o: __import__("jax._src.lax.windowed_reductions", fromlist=["x"])
                               ._select_and_scatter_add(s, o, lax.ge_p, (2, 2), (2, 2), ((0, 0), (0, 0))),
                               [normal(2, 3), normal(4, 6)]),
    "argmax": (lambda a: lax.argmax(a, 1, jnp.int32), [np.array([[1, 3, 3, 0], [np.nan, 2, np.nan, 5]], np.float32)]),
    "argmin": (lambda a: lax.argmin(a, 0, jnp.int32), [i]),
    "sort_nan": (lambda a: lax.sort(a, dimension=1), [np.array([[3, np.nan, -1, 2], [0, -np.inf, np.inf, 1]], np.float32)]),
    "sort_two_keys": (lambda a, c: lax.sort((a, c), dimension=0, num_keys=2)[1],
                      [ints(0, 3, 8, dtype=np.int32), normal(8)]),
    "sort_by_key": (lambda a, c: lax.sort((a, c), dimension=0, num_keys=1)[1], [ints(0, 3, 8, dtype=np.int32), normal(8)]),
    "top_k_values": (lambda a: lax.top_k(a, 2)[0], [x]), "top_k_indices": (lambda a: lax.top_k(a, 2)[1], [x]),
    "conv_nhwc_same": (lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
                       [normal(2, 5, 5, 3), normal(3, 3, 3, 4)]),
    "conv_nchw_strided_dilated": (lambda a, k: lax.conv_general_dilated(a, k, (2, 1), [(1, 1), (0, 2)], lhs_dilation=(1, 2),
                                  rhs_dilation=(2, 1), dimension_numbers=("NCHW", "OIHW", "NCHW")),
                                  [normal(1, 2, 6, 5), normal(3, 2, 2, 3)]),
    "conv_feature_groups": (lambda a, k: lax.conv_general_dilated(a, k, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"),
                            feature_group_count=2), [normal(2, 7, 4), normal(3, 2, 6)]),
    "conv_batch_groups": (lambda a, k: lax.conv_general_dilated(a, k, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"),
                          batch_group_count=2), [normal(4, 7, 3), normal(3, 3, 6)]),
    "jnp_argmax": (lambda a: jnp.argmax(a), [x]), "jnp_argmin_axis": (lambda a: jnp.argmin(a, axis=1), [x]),
    "jnp_cumsum": (lambda a: jnp.cumsum(a), [x]), "jnp_sort": (lambda a: jnp.sort(a, axis=0), [x]),
    "jnp_argsort": (lambda a: jnp.argsort(a, axis=1), [ints(0, 4, 3, 6)]),
    # indexing and functional updates
    "index_array": (lambda a, k: a[k], [x, np.array([0, 5, -1, -7], np.int32)]),
    "index_array_axis1": (lambda a, k: a[:, k], [x, np.array([[3, -1], [9, 0]], np.int32)]),
    "index_basic": (lambda a: a[1, ::2], [x]), "index_reversed": (lambda a: a[::-1, 1:3], [x]),
    "index_newaxis": (lambda a: a[None, 1:, 2], [x]), "index_negative_step": (lambda a: a[:, 3:0:-2], [x]),
    "take_fill": (lambda a, k: jnp.take(a, k, axis=1), [x, np.array([0, 4, -1, -9], np.int32)]),
    "take_clip": (lambda a, k: jnp.take(a, k, axis=0, mode="clip"), [x, np.array([0, 4, -1], np.int32)]),
    "take_flat": (lambda a, k: jnp.take(a, k), [x, np.array([[0, 11], [5, 13]], np.int32)]),
    "take_int_fill": (lambda a, k: jnp.take(a, k), [i, np.array([1, 99], np.int32)]),
    "take_u8_fill": (lambda a, k: jnp.take(a, k), [u, np.array([1, -99, 99], np.int32)]),
    "take_bool_fill": (lambda a, k: jnp.take(a, k), [b, np.array([1, 99], np.int32)]),
    "take_along_axis": (lambda a, k: jnp.take_along_axis(a, k, axis=1), [x, ints(0, 4, 3, 2)]),
    "at_set_array": (lambda a, k, v: a.at[k].set(v), [x, np.array([2, -1, 7], np.int32), normal(3, 4)]),
    "at_add_repeated": (lambda a, k: a.at[k].add(1.0), [x, np.array([1, 1, -1], np.int32)]),
    "at_mul_box": (lambda a: a.at[1:, ::2].mul(2.0), [x]), "at_min_row": (lambda a: a.at[0].min(0.0), [x]),
    "at_max_element": (lambda a: a.at[2, 3].max(5.0), [x]),
    "at_set_column_vector": (lambda a, v: a.at[:, 1].set(v), [x, normal(3)]),
    # Static indices past the end: reads clamp, updates drop. Concrete
    # boolean masks select where they are true.
    "index_static_clamped": (lambda a: a[10], [x]),
    "index_static_clamped_negative": (lambda a: a[-9, 7], [x]),
    "at_static_dropped": (lambda a: a.at[10].set(5.0), [x]),
    "at_static_dropped_column": (lambda a: a.at[1, -9].add(1.0), [x]),
    "index_mask": (lambda a: a[MASK], [x]),
    "index_mask_rows": (lambda a: a[ROW_MASK], [x]),
    "index_mask_columns": (lambda a: a[:, ROW_MASK.tolist() + [True]], [x]),
    "at_mask_set": (lambda a: a.at[MASK].set(0.0), [x]),
    "split": (lambda a: jnp.split(a, 2, axis=1)[1], [x]),
    "einsum_matmul": (lambda a, c: jnp.einsum("ij,jk->ik", a, c), [x, normal(4, 2)]),
    "einsum_batched": (lambda a, c: jnp.einsum("bij,bjk->bik", a, c), [normal(2, 3, 4), normal(2, 4, 5)]),
    "einsum_dot": (lambda a, c: jnp.einsum("i,i->", a, c), [normal(5), normal(5)]),
    "einsum_outer_t": (lambda a, c: jnp.einsum("i,j->ji", a, c), [normal(3), normal(2)]),
    "einsum_transpose": (lambda a: jnp.einsum("ij->ji", a), [x]),
    "einsum_sum_axis": (lambda a: jnp.einsum("ij->i", a), [x]),
    "einsum_implicit": (lambda a, c: jnp.einsum("ij,jk", a, c), [x, normal(4, 2)]),
    "einsum_attention": (lambda q, k: jnp.einsum("bqhd,bkhd->bhqk", q, k), [normal(2, 3, 2, 4), normal(2, 5, 2, 4)]),
    "moveaxis": (lambda a: jnp.moveaxis(a, 0, -1), [normal(2, 3, 4)]),
    # jax.numpy with promotion and broadcasting
    "jnp_add_broadcast": (jnp.add, [x, normal(4)]),
    "jnp_mul_weak": (lambda a: a * 2.5, [h]),
    "jnp_int_plus_float": (lambda a: a + 1.5, [i]),
    "jnp_true_divide_int": (lambda a, c: a / c, [i, j]),
    "jnp_u8_plus_i8": (lambda a, c: a + c, [u, ints(-5, 5, 3, 4, dtype=np.int8)]),
    "jnp_sum": (lambda a: jnp.sum(a, axis=0), [x]), "jnp_sum_keepdims": (lambda a: jnp.sum(a, axis=1, keepdims=True), [x]),
    "jnp_sum_f16": (lambda a: jnp.sum(a, axis=1), [h]), "jnp_sum_bool": (lambda a: jnp.sum(a), [b]),
    "jnp_mean": (lambda a: jnp.mean(a, axis=1), [x]), "jnp_var": (lambda a: jnp.var(a, axis=0), [x]),
    "jnp_std": (lambda a: jnp.std(a), [x]), "jnp_max": (lambda a: jnp.max(a, axis=1), [x]),
    "jnp_min": (lambda a: jnp.min(a), [i]), "jnp_prod": (lambda a: jnp.prod(a, axis=0), [unit]),
    "jnp_matmul": (jnp.matmul, [x, normal(4, 2)]), "jnp_matvec": (jnp.matmul, [x, normal(4)]),
    "jnp_batched_matmul": (jnp.matmul, [normal(2, 3, 4), normal(2, 4, 5)]),
    "jnp_matmul_3d_2d": (jnp.matmul, [normal(2, 3, 4), normal(4, 5)]),
    "jnp_matmul_vec_3d": (jnp.matmul, [normal(4), normal(2, 4, 5)]),
    "jnp_matmul_3d_vec": (jnp.matmul, [normal(2, 3, 4), normal(4)]),
    "jnp_matmul_2d_3d": (jnp.matmul, [normal(3, 4), normal(2, 4, 5)]),
    "jnp_matmul_broadcast_batch": (jnp.matmul, [normal(2, 1, 3, 4), normal(5, 4, 2)]),
    "jnp_matmul_unit_batches": (jnp.matmul, [normal(1, 2, 3, 4), normal(1, 1, 4, 5)]),
    "jnp_matmul_left_batches": (jnp.matmul, [normal(3, 1, 2, 4), normal(2, 4, 3)]),
    "jnp_outer": (jnp.outer, [normal(3), normal(2)]),
    "jnp_where": (jnp.where, [b, x, y]), "jnp_clip": (lambda a: jnp.clip(a, -0.5, 0.5), [x]),
    "jnp_power": (jnp.power, [pos, y]), "jnp_swapaxes": (lambda a: jnp.swapaxes(a, 0, 1), [x]),
    "jnp_stack": (lambda a, c: jnp.stack([a, c], axis=1), [x, y]),
    "jnp_concatenate": (lambda a, c: jnp.concatenate([a, c], axis=-1), [x, y]),
    "jnp_reshape": (lambda a: jnp.reshape(a, (-1, 2)), [x]),
    "jnp_transpose": (lambda a: jnp.transpose(a), [normal(2, 3, 4)]),
    "jnp_tril": (lambda a: jnp.tril(a), [x]), "jnp_triu": (lambda a: jnp.triu(a, 1), [x]),
    "jnp_eye": (lambda: jnp.eye(3), []), "jnp_arange": (lambda: jnp.arange(0.0, 3.0, 0.5), []),
    "jnp_linspace": (lambda: jnp.linspace(0.0, 1.0, 5), []),
    "jnp_one_hot": (lambda a: jax.nn.one_hot(a, 5), [ints(0, 5, 6)]),
    "jnp_maximum": (jnp.maximum, [x, y]), "jnp_minimum": (jnp.minimum, [x, y]),
    # Python's division: `%` is jnp.remainder (the divisor's sign), fmod the
    # dividend's; integer divisors include 0, float ones 0 and -0.
    "op_mod": (operator.mod, [x * 3, y]), "op_mod_int": (operator.mod, [i, k]),
    "op_mod_scalar": (lambda a: a % -2.0, [x * 3]),
    "jnp_remainder": (jnp.remainder, [x * 3, y0]), "jnp_remainder_int": (jnp.remainder, [i, k]),
    "jnp_remainder_u8": (jnp.remainder, [u, u2]), "jnp_remainder_bool": (jnp.remainder, [b, b2]),
    "jnp_fmod": (jnp.fmod, [x * 3, y0]), "jnp_fmod_int": (jnp.fmod, [i, k]),
    "jnp_floor_divide": (jnp.floor_divide, [x * 3, y0]),
    "jnp_floor_divide_int": (jnp.floor_divide, [i, k]),
    "jnp_floor_divide_u8": (jnp.floor_divide, [u, u2]),
    "jnp_divmod_quotient": (lambda a, c: jnp.divmod(a, c)[0], [x * 3, y0]),
    "jnp_divmod_remainder": (lambda a, c: jnp.divmod(a, c)[1], [x * 3, y0]),
    "jnp_divmod_int_quotient": (lambda a, c: jnp.divmod(a, c)[0], [i, k]),
    "jnp_divmod_int_remainder": (lambda a, c: jnp.divmod(a, c)[1], [i, k]),
    # Negative axes and dimensions, wherever JAX takes them.
    "axis_sum": (lambda a: jnp.sum(a, axis=(-3, -1)), [x3]),
    "axis_prod_keep": (lambda a: jnp.prod(a, axis=-2, keepdims=True), [x3]),
    "axis_max": (lambda a: jnp.max(a, axis=-1), [x3]), "axis_min": (lambda a: jnp.min(a, axis=-3), [x3]),
    "axis_mean": (lambda a: jnp.mean(a, axis=(-2,)), [x3]), "axis_var": (lambda a: jnp.var(a, axis=-1), [x3]),
    "axis_std": (lambda a: jnp.std(a, axis=-2, keepdims=True), [x3]),
    "axis_transpose": (lambda a: jnp.transpose(a, (-1, 0, -2)), [x3]),
    "axis_concatenate": (lambda a, c: jnp.concatenate([a, c], axis=-2), [x3, x3b]),
    "axis_stack": (lambda a, c: jnp.stack([a, c], axis=-1), [x3, x3b]),
    "axis_expand_dims": (lambda a: jnp.expand_dims(a, -2), [x3]),
    "axis_squeeze": (lambda a: jnp.squeeze(a, axis=-2), [x31]),
    "axis_argmax": (lambda a: jnp.argmax(a, axis=-2), [x3]), "axis_argmin": (lambda a: jnp.argmin(a, axis=-1), [x3]),
    "axis_cumsum": (lambda a: jnp.cumsum(a, axis=-1), [x3]), "axis_cumprod": (lambda a: jnp.cumprod(a, axis=-2), [x3]),
    "axis_sort": (lambda a: jnp.sort(a, axis=-2), [x3]), "axis_argsort": (lambda a: jnp.argsort(a, axis=-1), [x3]),
    "axis_take": (lambda a, t: jnp.take(a, t, axis=-1), [x3, ints(0, 4, 5)]),
    "axis_take_along_axis": (lambda a, t: jnp.take_along_axis(a, t, axis=-2), [x3, ints(0, 3, 2, 2, 4)]),
    "axis_split": (lambda a: jnp.split(a, 2, axis=-1)[1], [x3]),
    "axis_logsumexp": (lambda a: jax.nn.logsumexp(a, axis=-2), [x3]),
    "axis_softmax": (lambda a: jax.nn.softmax(a, axis=-2), [x3]),
    "axis_log_softmax": (lambda a: jax.nn.log_softmax(a, axis=(-3, -1)), [x3]),
    "axis_lax_squeeze": (lambda a: lax.squeeze(a, (-2,)), [x31]),
    "axis_lax_expand_dims": (lambda a: lax.expand_dims(a, (-1, 0)), [x3]),
    "axis_lax_split": (lambda a: lax.split(a, (1, 3), axis=-1)[1], [x3]),
    "axis_lax_sort": (lambda a: lax.sort(a, dimension=-2), [x3]),
    # jax.nn
    "relu": (jax.nn.relu, [x]), "sigmoid": (jax.nn.sigmoid, [x]), "silu": (jax.nn.silu, [x]),
    "gelu": (jax.nn.gelu, [x]), "softmax": (jax.nn.softmax, [x]), "log_softmax": (jax.nn.log_softmax, [x]),
    "logsumexp": (lambda a: jax.nn.logsumexp(a, axis=1), [x]),
    "mlp_loss": (lambda w1, b1, w2, b2, xs, ys: jnp.mean(
        -jnp.sum(jax.nn.log_softmax(jax.nn.relu(xs @ w1 + b1) @ w2 + b2) * ys, axis=-1)),
        [normal(8, 16) * 0.3, normal(16) * 0.1, normal(16, 4) * 0.3, normal(4) * 0.1, normal(5, 8),
         np.eye(4, dtype=np.float32)[ints(0, 4, 5)]]),
    # lax functions built on other primitives (inputs drawn last, so the
    # cases above keep their data).
    "associative_scan_add": (lambda a: lax.associative_scan(jnp.add, a), [normal(7, 3)]),
    "associative_scan_max_reverse": (
        lambda a: lax.associative_scan(jnp.maximum, a, reverse=True, axis=1), [normal(2, 6)]),
    "associative_scan_pair": (lambda a, c: lax.associative_scan(
        lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (a, c), axis=-1)[1],
        [uniform(0.5, 1.5, 3, 5), normal(3, 5)]),
    "cumlogsumexp": (lambda a: lax.cumlogsumexp(a, axis=1), [normal(3, 6)]),
    "cumlogsumexp_reverse": (lambda a: lax.cumlogsumexp(a, axis=0, reverse=True), [normal(5, 2)]),
    "logaddexp": (jnp.logaddexp, [normal(3, 4), normal(4)]),
    "logaddexp_infinities": (jnp.logaddexp, [np.array([-np.inf, np.inf, -np.inf, 1.0, np.nan], np.float32),
                                             np.array([-np.inf, np.inf, 2.0, -np.inf, 0.0], np.float32)]),
    "tile": (lambda a: jnp.tile(a, (2, 1, 3)), [normal(2, 3)]),
    "lax_broadcast": (lambda a: lax.broadcast(a, (2, 1)), [normal(3)]),
    "slice_in_dim": (lambda a: lax.slice_in_dim(a, 1, -1, stride=2, axis=1), [normal(2, 7)]),
    "index_in_dim": (lambda a: lax.index_in_dim(a, -1, axis=0, keepdims=False), [normal(3, 2)]),
    "dynamic_slice_in_dim": (lambda a, i: lax.dynamic_slice_in_dim(a, i, 3, axis=1),
                             [normal(2, 5), np.int32(4)]),
    "dynamic_index_in_dim": (lambda a, i: lax.dynamic_index_in_dim(a, i, axis=0, keepdims=False),
                             [normal(4, 2), np.int32(-1)]),
    "dynamic_update_slice_in_dim": (lambda a, u, i: lax.dynamic_update_slice_in_dim(a, u, i, axis=0),
                                    [normal(5, 2), normal(2, 2), np.int32(1)]),
    "dynamic_update_index_in_dim": (lambda a, u, i: lax.dynamic_update_index_in_dim(a, u, i, axis=1),
                                    [normal(2, 4), normal(2), np.int32(2)]),
    "reshape_with_dimensions": (lambda a: lax.reshape(a, (4, 3), dimensions=(1, 0)), [normal(3, 4)]),
    # .at with JAX's modes.
    "at_get_fill": (lambda a, k: a.at[k].get(mode="fill"), [x, np.array([5, -1, -9, 1], np.int32)]),
    "at_get_fill_value": (lambda a, k: a.at[:, k].get(mode="fill", fill_value=7.0),
                          [x, np.array([4, -5, 0], np.int32)]),
    "at_get_fill_static": (lambda a: a.at[7].get(mode="fill"), [x]),
    "at_get_clip": (lambda a, k: a.at[k].get(mode="clip"), [x, np.array([5, -1, -9], np.int32)]),
    "at_set_clip": (lambda a, k: a.at[k].set(10.0, mode="clip"), [x, np.array([5, -9], np.int32)]),
    "at_add_clip_static": (lambda a: a.at[1, 9].add(1.0, mode="clip"), [x]),
    "at_mul_drop": (lambda a, k: a.at[k].mul(3.0, mode="drop"), [x, np.array([5, 0, -9], np.int32)]),
    "top_k_axis0_values": (lambda a: lax.top_k(a, 2, axis=0)[0], [normal(4, 3)]),
    "top_k_axis0_indices": (lambda a: lax.top_k(a, 3, axis=-2)[1], [normal(2, 5, 3)]),
    "index_take": (lambda a, i, j: lax.index_take(a, (i, j), (0, 2)),
                   [normal(3, 4, 5), np.array([0, 2, -1, 5], np.int32), np.array([4, 0, 7, -2], np.int32)]),
    # numpy's advanced indexing with several arrays, and .at[...].apply.
    "index_two_arrays": (lambda a, r, c: a[r, c],
                         [x, np.array([0, 2, 1, -1], np.int32), np.array([3, 0, -2, 1], np.int32)]),
    "index_two_arrays_broadcast": (lambda a, r, c: a[r, c],
                                   [x, np.array([[0], [2]], np.int32), np.array([3, 0, -1], np.int32)]),
    "index_array_and_slice": (lambda a, k: a[k, 1:3], [x, np.array([2, 0, -1], np.int32)]),
    "index_int_and_array": (lambda a, k: a[1, k], [x, np.array([3, 0, -1], np.int32)]),
    "index_arrays_apart": (lambda b, i, j: b[i, :, j],
                           [np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0,
                            np.array([1, 0], np.int32), np.array([3, -1], np.int32)]),
    "at_set_two_arrays": (lambda a, r, c, v: a.at[r, c].set(v),
                          [x, np.array([0, 2, 1], np.int32), np.array([3, 0, -2], np.int32),
                           np.array([1.5, -2.0, 0.25], np.float32)]),
    "at_add_two_arrays_repeated": (lambda a, r, c: a.at[r, c].add(1.0),
                                   [x, np.array([1, 1, 2], np.int32), np.array([0, 0, 3], np.int32)]),
    "at_mul_array_and_slice": (lambda a, k: a.at[k, 1:].mul(2.0), [x, np.array([0, 2], np.int32)]),
    "at_apply_repeated": (lambda a, k: a.at[k].apply(jnp.sin), [x, np.array([2, 0, 2], np.int32)]),
    "at_apply_box": (lambda a: a.at[1:, ::2].apply(jnp.exp), [x]),
    "bessel_i0e": (lax.bessel_i0e, [BESSEL_POINTS]),
    "bessel_i1e": (lax.bessel_i1e, [BESSEL_POINTS]),
    # lax.scatter_* with JAX's modes: windows of 2 columns at (row, column).
    "scatter_add_clip": (lambda a, i, u: lax.scatter_add(a, i, u, WINDOWS, mode="clip"),
                         [x, np.array([[2, 3], [0, -5], [1, 1]], np.int32), np.arange(6, dtype=np.float32).reshape(3, 2)]),
    "scatter_mul_drop": (lambda a, i, u: lax.scatter_mul(a, i, u, WINDOWS, mode="drop"),
                         [x, np.array([[2, 3], [0, 0], [3, 1]], np.int32), np.arange(6, dtype=np.float32).reshape(3, 2)]),
}


# jax.nn's activations and normalizations (inputs drawn after every case
# above, so those keep their data): values spread over the piecewise
# functions' pieces (-1, 0, 1, 6 and the like), kinks avoided.
ACT = normal(3, 4) * 4.0
ACT_POS = uniform(0.05, 3.0, 3, 4)
CASES.update({
    "nn_identity": (jax.nn.identity, [ACT]), "nn_tanh": (jax.nn.tanh, [ACT]),
    "nn_swish": (jax.nn.swish, [ACT]), "nn_squareplus": (lambda a: jax.nn.squareplus(a, 3.0), [ACT]),
    "nn_softplus": (jax.nn.softplus, [ACT]), "nn_sparse_plus": (jax.nn.sparse_plus, [ACT]),
    "nn_soft_sign": (jax.nn.soft_sign, [ACT]), "nn_sparse_sigmoid": (jax.nn.sparse_sigmoid, [ACT]),
    "nn_mish": (jax.nn.mish, [ACT]), "nn_log_sigmoid": (jax.nn.log_sigmoid, [ACT]),
    "nn_elu": (lambda a: jax.nn.elu(a, 0.7), [ACT]),
    "nn_leaky_relu": (lambda a: jax.nn.leaky_relu(a, 0.05), [ACT]),
    "nn_hard_tanh": (jax.nn.hard_tanh, [ACT]), "nn_celu": (lambda a: jax.nn.celu(a, 1.5), [ACT]),
    "nn_selu": (jax.nn.selu, [ACT]), "nn_gelu_exact": (lambda a: jax.nn.gelu(a, approximate=False), [ACT]),
    "nn_glu": (lambda a: jax.nn.glu(a, axis=-1), [ACT]), "nn_glu_axis0": (lambda a: jax.nn.glu(a, axis=0), [normal(4, 3)]),
    "nn_logmeanexp": (lambda a: jax.nn.logmeanexp(a, axis=1), [ACT]),
    "nn_logmeanexp_all": (jax.nn.logmeanexp, [ACT]),
    "nn_standardize": (jax.nn.standardize, [ACT]),
    "nn_standardize_axis0": (lambda a: jax.nn.standardize(a, axis=0, epsilon=1e-3), [ACT]),
    "nn_relu6": (jax.nn.relu6, [ACT * 2.0]), "nn_hard_sigmoid": (jax.nn.hard_sigmoid, [ACT]),
    "nn_hard_silu": (jax.nn.hard_silu, [ACT]), "nn_hard_swish": (jax.nn.hard_swish, [ACT]),
    "nn_log1mexp": (jax.nn.log1mexp, [ACT_POS]),
})
ATT_Q, ATT_K, ATT_V = normal(2, 5, 4, 8), normal(2, 6, 2, 8), normal(2, 6, 2, 8)
CASES.update({
    "nn_attention": (jax.nn.dot_product_attention, [ATT_Q, ATT_K, ATT_V]),
    "nn_attention_bias_causal": (
        lambda q, k, v, bias: jax.nn.dot_product_attention(q, k, v, bias=bias, is_causal=True, scale=0.3),
        [ATT_Q, ATT_K, ATT_V, normal(1, 4, 5, 6)]),
    "nn_attention_masks": (
        lambda q, k, v, m, ql, kl: jax.nn.dot_product_attention(
            q, k, v, mask=m, query_seq_lengths=ql, key_value_seq_lengths=kl, local_window_size=(1, 2)),
        [ATT_Q, ATT_K, ATT_V, rng.integers(0, 4, (2, 1, 5, 6)) > 0, np.array([5, 3], np.int32),
         np.array([4, 6], np.int32)]),
    "nn_attention_unbatched": (jax.nn.dot_product_attention, [ATT_Q[0], ATT_K[0], ATT_V[0]]),
})
# More of jax.numpy's elementwise functions.
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, 2.5, 0.5, np.inf, -np.inf, np.nan, 1e-40, -7.25, 3.0], np.float32).reshape(3, 4)
NP_A, NP_B = normal(3, 4) * 3.0, normal(3, 4) * 3.0
NP_I, NP_J = ints(-50, 50, 3, 4), ints(0, 5, 3, 4)
NP_U = ints(0, 200, 3, 4, dtype=np.uint8)
CASES.update({
    "np_absolute": (jnp.absolute, [NP_A]), "np_fabs": (jnp.fabs, [NP_I]),
    "np_acos": (jnp.acos, [unit]), "np_asinh": (jnp.asinh, [NP_A]), "np_atan2": (jnp.atan2, [NP_A, NP_B]),
    "np_pow": (jnp.pow, [pos, NP_B]), "np_true_divide": (jnp.true_divide, [NP_A, NP_B]),
    "np_mod": (jnp.mod, [NP_A, NP_B]), "np_positive": (jnp.positive, [NP_A]),
    "np_deg2rad": (jnp.deg2rad, [NP_A]), "np_radians": (jnp.radians, [NP_I]),
    "np_rad2deg": (jnp.rad2deg, [NP_A]), "np_degrees": (jnp.degrees, [NP_A]),
    "np_log10": (jnp.log10, [pos]), "np_log2": (jnp.log2, [pos]),
    "np_rint": (jnp.rint, [SPECIAL]), "np_round": (jnp.round, [SPECIAL]),
    "np_round_decimals": (lambda a: jnp.round(a, 2), [NP_A]), "np_round_int": (lambda a: jnp.round(a, 1), [NP_I]),
    "np_around": (jnp.around, [NP_A]), "np_trunc": (jnp.trunc, [SPECIAL]),
    "np_reciprocal": (jnp.reciprocal, [NP_A]), "np_float_power": (jnp.float_power, [pos, NP_B]),
    "np_isnan": (jnp.isnan, [SPECIAL]), "np_isinf": (jnp.isinf, [SPECIAL]),
    "np_isposinf": (jnp.isposinf, [SPECIAL]), "np_isneginf": (jnp.isneginf, [SPECIAL]),
    "np_nan_to_num": (jnp.nan_to_num, [SPECIAL]),
    "np_nan_to_num_values": (lambda a: jnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), [SPECIAL]),
    "np_signbit": (jnp.signbit, [SPECIAL]), "np_signbit_int": (jnp.signbit, [NP_I]),
    "np_copysign": (jnp.copysign, [NP_A, SPECIAL]), "np_nextafter": (jnp.nextafter, [NP_A, NP_B]),
    "np_hypot": (jnp.hypot, [NP_A, NP_B]), "np_hypot_special": (jnp.hypot, [SPECIAL, NP_B]),
    "np_heaviside": (jnp.heaviside, [SPECIAL, NP_B]), "np_fmax": (jnp.fmax, [SPECIAL, NP_B]),
    "np_fmin": (jnp.fmin, [NP_B, SPECIAL]), "np_sinc": (jnp.sinc, [NP_A]),
    "np_sinc_zero": (jnp.sinc, [SPECIAL[:, :2]]), "np_i0": (jnp.i0, [NP_A]),
    "np_logaddexp2": (jnp.logaddexp2, [NP_A, NP_B]),
    "np_frexp_mantissa": (lambda a: jnp.frexp(a)[0], [SPECIAL]), "np_frexp_exponent": (lambda a: jnp.frexp(a)[1], [SPECIAL]),
    "np_frexp_mantissa_normal": (lambda a: jnp.frexp(a)[0], [NP_A]),
    "np_ldexp": (jnp.ldexp, [NP_A, NP_I // 5]),
    "np_logical_and": (jnp.logical_and, [NP_A > 0, NP_B]), "np_logical_or": (jnp.logical_or, [NP_A > 0, NP_B > 1]),
    "np_logical_xor": (jnp.logical_xor, [NP_I, NP_J]),
    "np_bitwise_and": (jnp.bitwise_and, [NP_I, NP_J]), "np_bitwise_or": (jnp.bitwise_or, [NP_I, NP_J]),
    "np_bitwise_xor": (jnp.bitwise_xor, [NP_U, NP_U[::-1]]), "np_bitwise_not": (jnp.bitwise_not, [NP_I]),
    "np_invert": (jnp.invert, [NP_U]), "np_bitwise_invert": (jnp.bitwise_invert, [NP_A > 0]),
    "np_left_shift": (jnp.left_shift, [NP_I, NP_J]), "np_right_shift": (jnp.right_shift, [NP_I, NP_J]),
    "np_right_shift_unsigned": (jnp.right_shift, [NP_U, NP_J.astype(np.uint8)]),
    "np_bitwise_left_shift": (jnp.bitwise_left_shift, [NP_I, NP_J]),
    "np_bitwise_right_shift": (jnp.bitwise_right_shift, [NP_I, NP_J]),
    "np_bitwise_count": (jnp.bitwise_count, [NP_I]),
})
# jax.numpy's reductions, array manipulation, products and comparisons.
R_A, R_B = normal(3, 4) * 2.0, normal(3, 4) * 2.0
R_NAN = np.where(rng.uniform(size=(3, 4)) < 0.3, np.nan, normal(3, 4)).astype(np.float32)
R_NAN[1] = np.nan
R_3 = normal(2, 3, 4)
R_V, R_W = normal(5), normal(5)
R_SORTED = np.sort(normal(6) * 3.0).astype(np.float32)
CASES.update({
    "np_all": (lambda a: jnp.all(a > -1.0, axis=1), [R_A]), "np_any": (lambda a: jnp.any(a > 2.0), [R_A]),
    "np_all_keep": (lambda a: jnp.all(a, axis=0, keepdims=True), [NP_J]),
    "np_amax": (lambda a: jnp.amax(a, axis=0), [R_A]), "np_amin": (lambda a: jnp.amin(a, axis=1), [R_A]),
    "np_ptp": (lambda a: jnp.ptp(a, axis=1), [R_A]), "np_count_nonzero": (lambda a: jnp.count_nonzero(a, axis=0), [NP_J]),
    "np_average": (lambda a: jnp.average(a, axis=1), [R_A]),
    "np_average_weights": (lambda a, w: jnp.average(a, axis=0, weights=w), [R_A, uniform(0.5, 2.0, 3, 4)]),
    "np_nansum": (lambda a: jnp.nansum(a, axis=1), [R_NAN]), "np_nanprod": (lambda a: jnp.nanprod(a, axis=0), [R_NAN]),
    "np_nanmax": (lambda a: jnp.nanmax(a, axis=1), [R_NAN]), "np_nanmin": (lambda a: jnp.nanmin(a, axis=1), [R_NAN]),
    "np_nanmean": (lambda a: jnp.nanmean(a, axis=0), [R_NAN]), "np_nanvar": (lambda a: jnp.nanvar(a, axis=0), [R_NAN]),
    "np_nanstd": (lambda a: jnp.nanstd(a, axis=0), [R_NAN]),
    "np_nanargmax": (lambda a: jnp.nanargmax(a, axis=1), [R_NAN]), "np_nanargmin": (lambda a: jnp.nanargmin(a, axis=0), [R_NAN]),
    "np_nancumsum": (lambda a: jnp.nancumsum(a, axis=1), [R_NAN]), "np_nancumprod": (lambda a: jnp.nancumprod(a, axis=0), [R_NAN]),
    "np_cumulative_sum": (lambda a: jnp.cumulative_sum(a, axis=1, include_initial=True), [R_A]),
    "np_cumulative_prod": (lambda a: jnp.cumulative_prod(a, axis=0), [R_A]),
    "np_median": (lambda a: jnp.median(a, axis=1), [R_A]), "np_median_all": (jnp.median, [R_A]),
    "np_quantile": (lambda a, q: jnp.quantile(a, q, axis=0), [R_A, np.array([0.1, 0.5, 0.93], np.float32)]),
    "np_quantile_keep": (lambda a: jnp.quantile(a, 0.3, axis=1, keepdims=True), [R_A]),
    "np_percentile": (lambda a: jnp.percentile(a, 75.0), [R_A]),
    "np_ravel": (jnp.ravel, [R_3]), "np_flip": (jnp.flip, [R_3]), "np_flip_axis": (lambda a: jnp.flip(a, axis=1), [R_3]),
    "np_fliplr": (jnp.fliplr, [R_A]), "np_flipud": (jnp.flipud, [R_A]),
    "np_roll": (lambda a: jnp.roll(a, 2, axis=1), [R_3]), "np_roll_negative": (lambda a: jnp.roll(a, -5, axis=-1), [R_A]),
    "np_roll_flat": (lambda a: jnp.roll(a, 3), [R_A]),
    "np_rot90": (jnp.rot90, [R_A]), "np_rot90_k3": (lambda a: jnp.rot90(a, 3, axes=(2, 0)), [R_3]),
    "np_rot90_k2": (lambda a: jnp.rot90(a, 2), [R_A]),
    "np_repeat": (lambda a: jnp.repeat(a, 3, axis=1), [R_A]), "np_repeat_flat": (lambda a: jnp.repeat(a, 2), [R_A]),
    "np_atleast_2d": (jnp.atleast_2d, [R_V]), "np_atleast_3d": (jnp.atleast_3d, [R_A]),
    "np_atleast_1d": (jnp.atleast_1d, [np.float32(2.5)]),
    "np_concat": (lambda a, b: jnp.concat([a, b], axis=1), [R_A, R_B]),
    "np_vstack": (lambda a, b: jnp.vstack([a, b]), [R_V, R_W]), "np_hstack": (lambda a, b: jnp.hstack([a, b]), [R_A, R_B]),
    "np_dstack": (lambda a, b: jnp.dstack([a, b]), [R_A, R_B]),
    "np_column_stack": (lambda a, b: jnp.column_stack([a, b]), [R_V, R_W]),
    "np_unstack": (lambda a: jnp.unstack(a, axis=1)[2], [R_3]),
    "np_array_split": (lambda a: jnp.array_split(a, 3, axis=1)[0], [R_A]),
    "np_array_split_last": (lambda a: jnp.array_split(a, 3, axis=1)[2], [R_A]),
    "np_hsplit": (lambda a: jnp.hsplit(a, 2)[1], [R_A]), "np_vsplit": (lambda a: jnp.vsplit(a, 3)[1], [R_A]),
    "np_diagonal": (lambda a: jnp.diagonal(a, 1), [R_A]), "np_diagonal_axes": (lambda a: jnp.diagonal(a, -1, 2, 1), [R_3]),
    "np_diag_vector": (lambda v: jnp.diag(v, 1), [R_V]), "np_diag_matrix": (lambda a: jnp.diag(a, -1), [R_A]),
    "np_diagflat": (jnp.diagflat, [R_A[:2, :2]]), "np_trace": (lambda a: jnp.trace(a, 1), [R_A]),
    "np_trace_axes": (lambda a: jnp.trace(a, 0, 0, 2), [R_3]),
    "np_meshgrid": (lambda a, b: jnp.meshgrid(a, b)[0], [R_V, R_W[:3]]),
    "np_meshgrid_ij": (lambda a, b: jnp.meshgrid(a, b, indexing="ij")[1], [R_V, R_W[:3]]),
    "np_broadcast_arrays": (lambda a, b: jnp.broadcast_arrays(a, b)[0], [R_V, normal(3, 1)]),
    "np_diff": (lambda a: jnp.diff(a, 2, axis=1), [R_A]), "np_diff_bool": (lambda a: jnp.diff(a > 0), [R_A]),
    "np_ediff1d": (jnp.ediff1d, [R_A]), "np_append": (lambda a, b: jnp.append(a, b), [R_A, R_V]),
    "np_append_axis": (lambda a, b: jnp.append(a, b, axis=0), [R_A, R_B]),
    "np_vander": (jnp.vander, [R_V]), "np_vander_increasing": (lambda v: jnp.vander(v, 3, increasing=True), [R_V]),
    "np_matrix_transpose": (jnp.matrix_transpose, [R_3]), "np_permute_dims": (lambda a: jnp.permute_dims(a, (2, 0, 1)), [R_3]),
    "np_tensordot": (lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), [R_3, normal(3, 4, 2)]),
    "np_tensordot_n": (lambda a, b: jnp.tensordot(a, b, 1), [R_3, normal(4, 5)]),
    "np_inner": (jnp.inner, [R_A, normal(5, 4)]), "np_vdot": (jnp.vdot, [R_A, R_B]),
    "np_vecdot": (lambda a, b: jnp.vecdot(a, b, axis=0), [R_A, R_B]),
    "np_matvec": (jnp.matvec, [R_3, normal(4)]), "np_vecmat": (jnp.vecmat, [normal(3), R_3]),
    "np_kron": (jnp.kron, [R_A[:2, :3], normal(2, 2)]), "np_kron_ranks": (jnp.kron, [R_V, normal(2, 3)]),
    "np_polyval": (jnp.polyval, [normal(4), R_A]),
    "np_trapezoid": (lambda a: jnp.trapezoid(a, dx=0.5), [R_A]),
    "np_trapezoid_x": (lambda a, t: jnp.trapezoid(a, t, axis=0), [R_A, np.array([0.0, 0.5, 2.0], np.float32)]),
    "np_isclose": (lambda a, b: jnp.isclose(a, b, rtol=0.1, atol=0.5), [R_A, R_B]),
    "np_isclose_nan": (lambda a, b: jnp.isclose(a, b, equal_nan=True), [SPECIAL, SPECIAL]),
    "np_allclose": (lambda a, b: jnp.allclose(a, b + 1e-7), [R_A, R_A]),
    "np_array_equal": (jnp.array_equal, [R_A, R_A]), "np_array_equiv": (jnp.array_equiv, [R_A, R_A[1:2]]),
    "np_select": (lambda a: jnp.select([a < -1.0, a > 1.0], [a * 2.0, a * 3.0], -7.0), [R_A]),
    "np_searchsorted": (lambda s, v: jnp.searchsorted(s, v), [R_SORTED, R_A]),
    "np_searchsorted_right": (lambda s, v: jnp.searchsorted(s, v, side="right"), [R_SORTED, np.round(R_A)]),
    "np_digitize": (jnp.digitize, [R_A, R_SORTED]),
    "np_digitize_right_decreasing": (lambda a, b: jnp.digitize(a, b, right=True), [R_A, R_SORTED[::-1].copy()]),
    "np_interp": (jnp.interp, [R_A, R_SORTED, normal(6)]),
    "np_interp_left_right": (lambda a, b, c: jnp.interp(a, b, c, left=-9.0, right=9.0), [R_A, R_SORTED, normal(6)]),
})
# jax.lax's conveniences.
L_A, L_B = normal(3, 4), normal(4, 5)
L_IMG, L_KER = normal(2, 3, 7, 6), normal(4, 3, 3, 2)
CASES.update({
    "lax_full": (lambda: lax.full((2, 3), 1.5, jnp.float32), []),
    "lax_full_like": (lambda a: lax.full_like(a, 2.0, jnp.int32), [L_A]),
    "lax_broadcasted_iota": (lambda: lax.broadcasted_iota(jnp.int32, (3, 4), 1), []),
    "lax_collapse": (lambda a: lax.collapse(a, 1, 3), [normal(2, 3, 4, 5)]),
    "lax_broadcast_to_rank": (lambda a: lax.broadcast_to_rank(a, 4), [L_A]),
    "lax_reciprocal": (lax.reciprocal, [L_A]),
    "lax_dot": (lax.dot, [L_A, L_B]), "lax_dot_vector": (lax.dot, [L_A, normal(4)]),
    "lax_batch_matmul": (lax.batch_matmul, [normal(2, 3, 4), normal(2, 4, 5)]),
    "lax_select": (lambda p, a, b: lax.select(p, a, b), [L_A > 0, L_A, normal(3, 4)]),
    "lax_scatter_add": (lambda a, i, u: lax.scatter_add(a, i, u, WINDOWS), [x, np.array([[2, 1], [0, 0], [1, 2]], np.int32), np.arange(6, dtype=np.float32).reshape(3, 2)]),
    "lax_scatter_sub": (lambda a, i, u: lax.scatter_sub(a, i, u, WINDOWS), [x, np.array([[2, 1], [0, 0], [1, 2]], np.int32), np.arange(6, dtype=np.float32).reshape(3, 2)]),
    "lax_scatter_max": (lambda a, i, u: lax.scatter_max(a, i, u, WINDOWS), [x, np.array([[2, 1], [0, 0], [1, 2]], np.int32), normal(3, 2)]),
    "lax_scatter_min": (lambda a, i, u: lax.scatter_min(a, i, u, WINDOWS), [x, np.array([[2, 1], [0, 0], [1, 2]], np.int32), normal(3, 2)]),
    "lax_sort_key_val": (lambda k, v: lax.sort_key_val(k, v, dimension=1)[1], [L_A, normal(3, 4)]),
    "lax_stack": (lambda a, b: lax.stack([a, b], axis=1), [L_A, normal(3, 4)]),
    "lax_unstack": (lambda a: lax.unstack(a, axis=1)[3], [L_A]),
    "lax_tile": (lambda a: lax.tile(a, (2, 1)), [L_A]),
    "lax_optimization_barrier": (lambda a, b: lax.optimization_barrier((a, b))[1], [L_A, normal(3, 4)]),
    "lax_conv": (lambda a, k: lax.conv(a, k, (1, 2), "SAME"), [L_IMG, L_KER]),
    "lax_conv_with_general_padding": (lambda a, k: lax.conv_with_general_padding(
        a, k, (2, 1), ((1, 0), (0, 2)), (1, 2), (2, 1)), [L_IMG, L_KER]),
})
# jax.numpy.linalg's functions built from products and reductions.
LA_M, LA_V = normal(2, 3, 3), normal(4, 3)
CASES.update({
    "la_vector_norm": (jnp.linalg.vector_norm, [LA_V]),
    "la_vector_norm_axis": (lambda a: jnp.linalg.vector_norm(a, axis=1, keepdims=True), [LA_V]),
    "la_vector_norm_1": (lambda a: jnp.linalg.vector_norm(a, axis=0, ord=1), [LA_V]),
    "la_vector_norm_inf": (lambda a: jnp.linalg.vector_norm(a, axis=1, ord=jnp.inf), [LA_V]),
    "la_vector_norm_neg_inf": (lambda a: jnp.linalg.vector_norm(a, axis=1, ord=-jnp.inf), [LA_V]),
    "la_vector_norm_0": (lambda a: jnp.linalg.vector_norm(a, axis=1, ord=0), [np.round(LA_V)]),
    "la_vector_norm_3": (lambda a: jnp.linalg.vector_norm(a, axis=1, ord=3), [LA_V]),
    "la_matrix_norm": (jnp.linalg.matrix_norm, [LA_M]),
    "la_matrix_norm_1": (lambda a: jnp.linalg.matrix_norm(a, ord=1), [LA_M]),
    "la_matrix_norm_neg_1": (lambda a: jnp.linalg.matrix_norm(a, ord=-1, keepdims=True), [LA_M]),
    "la_matrix_norm_inf": (lambda a: jnp.linalg.matrix_norm(a, ord=jnp.inf), [LA_M]),
    "la_norm": (jnp.linalg.norm, [LA_M]),
    "la_norm_axis": (lambda a: jnp.linalg.norm(a, axis=1), [LA_V]),
    "la_norm_axes": (lambda a: jnp.linalg.norm(a, ord=1, axis=(2, 0), keepdims=True), [LA_M]),
    "la_norm_matrix_inf": (lambda a: jnp.linalg.norm(a, ord=jnp.inf), [LA_V]),
    "la_matrix_power": (lambda a: jnp.linalg.matrix_power(a, 5), [LA_M * 0.5]),
    "la_matrix_power_0": (lambda a: jnp.linalg.matrix_power(a, 0), [LA_M]),
    "la_multi_dot": (lambda a, b, c: jnp.linalg.multi_dot([a, b, c]), [normal(3), normal(3, 4), normal(4, 2)]),
    "la_multi_dot_four": (lambda a, b, c, d: jnp.linalg.multi_dot([a, b, c, d]),
                          [normal(2, 3), normal(3, 10), normal(10, 2), normal(2, 4)]),
    "la_multi_dot_vector_last": (lambda a, b: jnp.linalg.multi_dot([a, b]), [normal(2, 3), normal(3)]),
    "la_cross": (jnp.linalg.cross, [LA_V, normal(4, 3)]),
    "np_cross_2d": (jnp.cross, [normal(5, 2), normal(5, 2)]),
    "la_outer": (jnp.linalg.outer, [normal(3), normal(4)]),
    "la_tensordot": (lambda a, b: jnp.linalg.tensordot(a, b, axes=1), [LA_M, normal(3, 2)]),
    "la_trace": (lambda a: jnp.linalg.trace(a, offset=1), [LA_M]),
    "la_diagonal": (jnp.linalg.diagonal, [LA_M]),
    "la_vecdot": (jnp.linalg.vecdot, [LA_V, normal(4, 3)]),
    "la_matmul": (jnp.linalg.matmul, [LA_M, normal(3, 2)]),
    "la_matrix_transpose": (jnp.linalg.matrix_transpose, [LA_M]),
})
# Windows, integer and index utilities.
I_A, I_B = ints(-60, 60, 3, 4), ints(-40, 40, 3, 4)
I_A[0, 0], I_B[0, 1] = 0, 0
CASES.update({
    "np_hamming": (lambda: jnp.hamming(9), []), "np_hanning": (lambda: jnp.hanning(8), []),
    "np_blackman": (lambda: jnp.blackman(7), []), "np_bartlett": (lambda: jnp.bartlett(6), []),
    "np_kaiser": (lambda: jnp.kaiser(9, 3.5), []), "np_hamming_one": (lambda: jnp.hamming(1), []),
    "np_gcd": (jnp.gcd, [I_A, I_B]), "np_lcm": (jnp.lcm, [I_A, I_B]),
    "np_modf_fraction": (lambda a: jnp.modf(a)[0], [NP_A]), "np_modf_whole": (lambda a: jnp.modf(a)[1], [NP_A]),
    "np_bincount": (lambda a: jnp.bincount(a, length=6), [ints(-1, 8, 20)]),
    "np_bincount_weights": (lambda a, w: jnp.bincount(a, w, length=5), [ints(0, 5, 12), normal(12)]),
    "np_isin": (lambda a, t: jnp.isin(a, t), [ints(0, 10, 3, 4), np.array([1, 3, 7, 9], np.int32)]),
    "np_isin_invert": (lambda a, t: jnp.isin(a, t, invert=True), [ints(0, 10, 3, 4), np.array([[2, 3], [4, 5]], np.int32)]),
    "np_unravel_index": (lambda i: jnp.stack(jnp.unravel_index(i, (3, 4, 5))), [ints(-3, 64, 10)]),
})
# Convolutions, polynomials, conversions and spaced ranges.
S_X, S_Y = normal(9), normal(4)
CASES.update({
    "np_convolve": (jnp.convolve, [S_X, S_Y]), "np_convolve_same": (lambda a, b: jnp.convolve(a, b, "same"), [S_X, S_Y]),
    "np_convolve_valid_swapped": (lambda a, b: jnp.convolve(a, b, "valid"), [S_Y, S_X]),
    "np_correlate": (jnp.correlate, [S_X, S_Y]), "np_correlate_full": (lambda a, b: jnp.correlate(a, b, "full"), [S_X, S_Y]),
    "np_correlate_swapped": (lambda a, b: jnp.correlate(a, b, "same"), [S_Y, S_X]),
    "np_polyadd": (jnp.polyadd, [normal(3), normal(5)]), "np_polysub": (jnp.polysub, [normal(5), normal(2)]),
    "np_polymul": (jnp.polymul, [normal(3), normal(4)]),
    "np_polyder": (lambda p: jnp.polyder(p, 2), [normal(5)]), "np_polyint": (lambda p: jnp.polyint(p, 2, k=1.5), [normal(4)]),
    "np_array": (jnp.array, [NP_A]), "np_asarray": (jnp.asarray, [NP_I]), "np_copy": (jnp.copy, [NP_A]),
    "np_astype": (lambda a: jnp.astype(a, jnp.int32), [NP_A]),
    "np_logspace": (lambda: jnp.logspace(-1.0, 2.0, 7), []), "np_logspace_base": (lambda: jnp.logspace(0.0, 3.0, 4, base=2.0), []),
    "np_geomspace": (lambda: jnp.geomspace(2.0, 300.0, 6), []), "np_geomspace_negative": (lambda: jnp.geomspace(-1.0, -1000.0, 4), []),
    "np_rollaxis": (lambda a: jnp.rollaxis(a, 2), [R_3]), "np_rollaxis_start": (lambda a: jnp.rollaxis(a, 0, 3), [R_3]),
})
# Statistics, gradients, phase unwrapping and static-size index searches.
NZ = np.where(rng.uniform(size=(3, 4)) < 0.5, 0, ints(1, 9, 3, 4)).astype(np.int32)
CASES.update({
    "np_cov": (jnp.cov, [normal(3, 6)]), "np_cov_columns_bias": (lambda a: jnp.cov(a, rowvar=False, bias=True), [normal(6, 3)]),
    "np_cov_vector": (jnp.cov, [normal(7)]),
    "np_corrcoef": (jnp.corrcoef, [normal(3, 6)]), "np_corrcoef_columns": (lambda a: jnp.corrcoef(a, rowvar=False), [normal(6, 2)]),
    "np_gradient": (lambda a: jnp.gradient(a, axis=1), [R_A]),
    "np_gradient_all": (lambda a: jnp.stack(jnp.gradient(a)), [R_A]),
    "np_unwrap": (jnp.unwrap, [np.cumsum(normal(3, 8) * 2.5, axis=1).astype(np.float32)]),
    "np_unwrap_axis": (lambda a: jnp.unwrap(a, axis=0, period=4.0), [np.cumsum(normal(6, 2) * 2.0, axis=0).astype(np.float32)]),
    "np_nonzero": (lambda a: jnp.stack(jnp.nonzero(a, size=8)), [NZ]),
    "np_nonzero_fill": (lambda a: jnp.stack(jnp.nonzero(a, size=10, fill_value=-1)), [NZ]),
    "np_argwhere": (lambda a: jnp.argwhere(a, size=5), [NZ]),
    "np_flatnonzero": (lambda a: jnp.flatnonzero(a, size=9, fill_value=99), [NZ]),
})

# Complex numbers: primitives, promotion and jax.numpy's complex functions.
def cnormal(*shape):
    return (normal(*shape) + 1j * normal(*shape)).astype(np.complex64)


CZ, CW = cnormal(3, 4), cnormal(3, 4)
CSPECIAL = np.array([0.0, 1 + 0j, -2.5 + 0j, 1j, -0.5j, 3 - 4j, np.inf + 0j, np.nan + 1j], np.complex64)
CASES.update({
    "c_neg": (lax.neg, [CZ]), "c_add": (lax.add, [CZ, CW]), "c_sub": (lax.sub, [CZ, CW]),
    "c_mul": (lax.mul, [CZ, CW]), "c_div": (lax.div, [CZ, CW]), "c_pow": (lax.pow, [CZ, CW]),
    "c_real": (lax.real, [CZ]), "c_imag": (lax.imag, [CZ]), "c_conj": (lax.conj, [CZ]),
    "c_complex": (lax.complex, [NP_A, NP_B]), "c_abs": (lax.abs, [CZ]), "c_sign": (lax.sign, [CZ]),
    "c_exp": (lax.exp, [CZ]), "c_exp2": (lax.exp2, [CZ]), "c_expm1": (lax.expm1, [CZ]),
    "c_log": (lax.log, [CZ]), "c_log1p": (lax.log1p, [CZ]), "c_sqrt": (lax.sqrt, [CZ]),
    "c_rsqrt": (lax.rsqrt, [CZ]), "c_square": (lax.square, [CZ]), "c_tanh": (lax.tanh, [CZ]),
    "c_sin": (lax.sin, [CZ]), "c_cos": (lax.cos, [CZ]), "c_tan": (lax.tan, [CZ]),
    "c_sinh": (lax.sinh, [CZ]), "c_cosh": (lax.cosh, [CZ]), "c_asinh": (lax.asinh, [CZ]),
    "c_atan": (lax.atan, [CZ]), "c_integer_pow": (lambda z: lax.integer_pow(z, 3), [CZ]),
    "c_eq": (lax.eq, [CZ, CZ * (np.arange(12).reshape(3, 4) % 2)]), "c_ne": (lax.ne, [CZ, CW]),
    "c_select_n": (lambda p, a, b: lax.select_n(p, a, b), [NP_A > 0, CZ, CW]),
    "c_reduce_sum": (lambda z: jnp.sum(z, axis=1), [CZ]), "c_reduce_prod": (lambda z: jnp.prod(z, axis=0), [CZ]),
    "c_dot_general": (lambda a, b: jnp.matmul(a, b.T), [CZ, CW]),
    "c_einsum": (lambda a, b: jnp.einsum("ij,kj->ik", a, b), [CZ, CW]),
    "c_transpose": (lambda z: z.T, [CZ]), "c_cumsum": (lambda z: jnp.cumsum(z, axis=1), [CZ]),
    "c_convert_from_f32": (lambda x: lax.convert_element_type(x, np.complex64), [NP_A]),
    "c_convert_to_f32": (lambda z: lax.real(z) + lax.convert_element_type(lax.imag(z), np.float32), [CZ]),
    "c_promote_f32": (jnp.add, [CZ, NP_A]), "c_weak_float": (lambda z: z * 2.5, [CZ]),
    "c_promote_int": (jnp.multiply, [CZ, NP_I]),
    "np_real": (jnp.real, [CZ]), "np_imag": (jnp.imag, [CZ]), "np_imag_real": (jnp.imag, [NP_A]),
    "np_conjugate": (jnp.conjugate, [CZ]), "np_angle": (jnp.angle, [CZ]),
    "np_angle_deg": (lambda z: jnp.angle(z, deg=True), [CSPECIAL]), "np_angle_int": (jnp.angle, [NP_I]),
    "np_iscomplex": (jnp.iscomplex, [CSPECIAL]), "np_isreal": (jnp.isreal, [CSPECIAL]),
    "np_isnan_c": (jnp.isnan, [CSPECIAL]), "np_isinf_c": (jnp.isinf, [CSPECIAL]),
    "np_isfinite_c": (jnp.isfinite, [CSPECIAL]), "np_abs_c": (jnp.abs, [CSPECIAL]),
    "np_vdot_c": (jnp.vdot, [CZ, CW]), "np_vecdot_c": (lambda a, b: jnp.vecdot(a, b, axis=-1), [CZ, CW]),
    "np_sqrt_c": (jnp.sqrt, [CSPECIAL]), "np_exp_c": (jnp.exp, [CSPECIAL]),
    "np_sin_c": (jnp.sin, [CSPECIAL * 30]), "np_cos_c": (jnp.cos, [CSPECIAL * 30]),
})

# NaN-ignoring quantiles: a row of NaNs, scattered NaNs, none.
NANS = NP_A.copy()
NANS[0, 1], NANS[1, :], NANS[2, 3] = np.nan, np.nan, np.nan
Q3 = np.array([0.1, 0.5, 0.9], np.float32)
CASES.update({
    "np_nanquantile": (lambda a: jnp.nanquantile(a, 0.3, axis=1), [NANS]),
    "np_nanquantile_q": (lambda a, q: jnp.nanquantile(a, q, axis=0, keepdims=True), [NANS, Q3]),
    "np_nanpercentile_all": (lambda a: jnp.nanpercentile(a, 40.0), [NANS]),
    "np_nanpercentile_keep": (lambda a, q: jnp.nanpercentile(a, q, keepdims=True), [NANS, Q3 * 100]),
    "np_nanmedian": (lambda a: jnp.nanmedian(a, axis=1), [NANS]),
    "np_nanmedian_no_nans": (lambda a: jnp.nanmedian(a, axis=0, keepdims=True), [NP_A]),
})

# jnp.spacing (signed, at zero, infinities, NaN) and jnp.resize.
CASES.update({
    "np_spacing": (jnp.spacing, [SPECIAL]), "np_spacing_normal": (jnp.spacing, [NP_A]),
    "np_spacing_f16": (jnp.spacing, [NP_A.astype(np.float16)]), "np_spacing_int": (jnp.spacing, [NP_I]),
    "np_resize_grow": (lambda a: jnp.resize(a, (5, 7)), [NP_A]),
    "np_resize_shrink": (lambda a: jnp.resize(a, (2,)), [NP_I]),
    "np_resize_empty": (lambda a: jnp.resize(a, (0, 3)), [NP_A]),
})

# jnp.pad's modes, widths beyond the axis included.
CASES.update({
    "np_pad_constant": (lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=1.5), [NP_A]),
    "np_pad_int": (lambda x: jnp.pad(x, 2), [NP_I]),
    "np_pad_one_pair": (lambda x: jnp.pad(x, (1, 2)), [NP_A]),
    "np_pad_edge": (lambda x: jnp.pad(x, ((2, 1), (1, 1)), mode="edge"), [NP_A]),
    "np_pad_wrap": (lambda x: jnp.pad(x, ((4, 5), (1, 0)), mode="wrap"), [NP_A]),
    "np_pad_reflect": (lambda x: jnp.pad(x, ((2, 2), (5, 1)), mode="reflect"), [NP_A]),
    "np_pad_symmetric": (lambda x: jnp.pad(x, ((3, 4), (2, 2)), mode="symmetric"), [NP_A]),
    "np_pad_complex": (lambda z: jnp.pad(z, ((0, 1), (2, 0)), mode="reflect"), [CZ]),
})

# Linear algebra: Cholesky factors and triangular solves.
def spd(*batch, n=3, dtype=np.float32):
    m = normal(*batch, n, n) if dtype == np.float32 else cnormal(*batch, n, n)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + 3 * np.eye(n)).astype(dtype)


SPD3, SPDB, HPD3 = spd(), spd(2), spd(dtype=np.complex64)


def canonical_signs(v, axis):
    """`v` with each vector along `axis` (columns: -2, rows: -1) times the
    sign of its largest entry: eigen- and singular vectors are defined up
    to a sign, which LAPACK, a GPU's solvers and XLA's expansions choose
    differently (ops_vs_jax.rs applies the same)."""
    largest = jnp.expand_dims(jnp.argmax(jnp.abs(v), axis=axis), axis)
    return v * jnp.sign(jnp.take_along_axis(v, largest, axis=axis))
LOW3 = (np.tril(normal(3, 3)) + 3 * np.eye(3)).astype(np.float32)
LOWB = (np.tril(normal(2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
CLOW3 = (np.tril(cnormal(3, 3)) + 3 * np.eye(3)).astype(np.complex64)
RHS34, RHS43, RHSB = normal(3, 4), normal(4, 3), normal(2, 3, 2)
TS = jax.lax.linalg.triangular_solve
CASES.update({
    "lax_cholesky": (jax.lax.linalg.cholesky, [SPD3]), "lax_cholesky_batch": (jax.lax.linalg.cholesky, [SPDB]),
    "la_cholesky": (jnp.linalg.cholesky, [SPD3]), "la_cholesky_upper": (lambda a: jnp.linalg.cholesky(a, upper=True), [SPDB]),
    "la_cholesky_complex": (jnp.linalg.cholesky, [HPD3]),
    "lax_ts_left_lower": (lambda a, b: TS(a, b, left_side=True, lower=True), [LOW3, RHS34]),
    "lax_ts_right_upper_t": (lambda a, b: TS(a, b, left_side=False, lower=False, transpose_a=True), [LOW3.T.copy(), RHS43]),
    "lax_ts_left_unit": (lambda a, b: TS(a, b, left_side=True, lower=True, unit_diagonal=True), [LOW3, RHS34]),
    "lax_ts_vector": (lambda a, b: TS(a, b, left_side=True, lower=True), [LOW3, NP_A[0, :3]]),
    "lax_ts_batch": (lambda a, b: TS(a, b, left_side=True, lower=True, transpose_a=True), [LOWB, RHSB]),
    "lax_ts_complex_adjoint": (lambda a, b: TS(a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True),
                               [CLOW3, CZ[:, :3].T.copy()]),
    "lax_ts_complex_conj": (lambda a, b: TS(a, b, left_side=False, lower=True, conjugate_a=True), [CLOW3, CZ[:, :3].copy()]),
})

# Linear algebra through LAPACK: LU, QR, eigh, SVD, eig, and what
# jax.numpy.linalg builds on them. Inputs are well conditioned, with
# distinct eigenvalues and singular values, so that derivatives exist.
def general(*shape, dtype=np.float32):
    m = normal(*shape) if dtype == np.float32 else cnormal(*shape)
    n = min(shape[-2:])
    return (m + 2 * np.eye(shape[-2], shape[-1])).astype(dtype) if shape[-1] == shape[-2] else m.astype(dtype)


GA4, GA5, GAB, GAC = general(4, 4), general(5, 5), general(2, 4, 4), general(4, 4, dtype=np.complex64)
TALL, WIDE, TALLC = normal(5, 3), normal(3, 5), cnormal(5, 3)
SYM4 = spd(n=4) + np.diag(np.arange(4, dtype=np.float32))
LU4, _, PERM4 = [np.asarray(t) for t in jax.lax.linalg.lu(GA4)]
LA = jax.lax.linalg
LU_SOLVE = jax._src.lax.linalg.lu_solve  # public in jax.scipy.linalg's form only
CASES.update({
    "lax_lu": (lambda a: LA.lu(a)[0], [GA4]), "lax_lu_pivots": (lambda a: LA.lu(a)[1], [GA4]),
    "lax_lu_permutation": (lambda a: LA.lu(a)[2], [GA4]),
    "lax_lu_wide": (lambda a: LA.lu(a)[0], [WIDE]), "lax_lu_tall": (lambda a: LA.lu(a)[0], [TALL]),
    "lax_lu_batch": (lambda a: LA.lu(a)[0], [GAB]), "lax_lu_complex": (lambda a: LA.lu(a)[0], [GAC]),
    "lax_lu_pivots_to_permutation": (lambda p: LA.lu_pivots_to_permutation(p, 5),
                                     [np.array([[2, 2, 4], [1, 3, 3]], np.int32)]),
    "lax_lu_solve": (lambda lu, p, b: LU_SOLVE(lu, p, b), [LU4, PERM4, normal(4, 2)]),
    "lax_lu_solve_t": (lambda lu, p, b: LU_SOLVE(lu, p, b, trans=1), [LU4, PERM4, normal(4)]),
    "la_solve": (jnp.linalg.solve, [GA4, normal(4, 2)]), "la_solve_vector": (jnp.linalg.solve, [GA4, normal(4)]),
    "la_solve_batch": (jnp.linalg.solve, [GAB, normal(2, 4, 3)]),
    "la_solve_complex": (jnp.linalg.solve, [GAC, cnormal(4, 2)]),
    "la_inv": (jnp.linalg.inv, [GA4]), "la_inv_batch": (jnp.linalg.inv, [GAB]),
    "la_det": (jnp.linalg.det, [GA5]), "la_det_2": (jnp.linalg.det, [GA4[:2, :2].copy()]),
    "la_det_3": (jnp.linalg.det, [GA4[:3, :3].copy()]), "la_det_batch": (jnp.linalg.det, [GAB]),
    "la_det_complex": (jnp.linalg.det, [GAC]),
    # Rank n - 1 and lower: JAX's cofactor rule gives the adjugate, or 0.
    "la_det_rank3": (jnp.linalg.det, [(normal(4, 3) @ normal(3, 4)).astype(np.float32)]),
    "la_det_rank1": (jnp.linalg.det, [np.ones((4, 4), np.float32)]),
    "la_slogdet_sign": (lambda a: jnp.linalg.slogdet(a)[0], [GA5]),
    "la_slogdet_logdet": (lambda a: jnp.linalg.slogdet(a)[1], [GA5]),
    "la_slogdet_complex": (lambda a: jnp.linalg.slogdet(a)[1], [GAC]),
    "la_slogdet_complex_sign": (lambda a: jnp.linalg.slogdet(a)[0], [GAC]),
    "la_qr_q": (lambda a: jnp.linalg.qr(a)[0], [TALL]), "la_qr_r": (lambda a: jnp.linalg.qr(a)[1], [TALL]),
    "la_qr_complete_q": (lambda a: jnp.linalg.qr(a, mode="complete")[0], [TALL]),
    "la_qr_complete_r": (lambda a: jnp.linalg.qr(a, mode="complete")[1], [TALL]),
    "la_qr_wide_q": (lambda a: jnp.linalg.qr(a)[0], [WIDE]), "la_qr_wide_r": (lambda a: jnp.linalg.qr(a)[1], [WIDE]),
    "la_qr_complex_r": (lambda a: jnp.linalg.qr(a)[1], [TALLC]), "la_qr_mode_r": (lambda a: jnp.linalg.qr(a, mode="r"), [GA4]),
    "la_eigh_w": (lambda a: jnp.linalg.eigh(a)[0], [SYM4]), "la_eigh_v": (lambda a: canonical_signs(jnp.linalg.eigh(a)[1], -2), [SYM4]),
    "la_eigh_upper_v": (lambda a: canonical_signs(jnp.linalg.eigh(a, UPLO="U")[1], -2), [SYM4]),
    "la_eigvalsh_batch": (jnp.linalg.eigvalsh, [SPDB]),
    "la_eigh_complex_w": (lambda a: jnp.linalg.eigh(a)[0], [HPD3]),
    "la_svd_s": (lambda a: jnp.linalg.svd(a, full_matrices=False)[1], [TALL]),
    "la_svd_u": (lambda a: canonical_signs(jnp.linalg.svd(a, full_matrices=False)[0], -2), [TALL]),
    "la_svd_vh": (lambda a: canonical_signs(jnp.linalg.svd(a, full_matrices=False)[2], -1), [TALL]),
    "la_svd_wide_u": (lambda a: canonical_signs(jnp.linalg.svd(a, full_matrices=False)[0], -2), [WIDE]),
    "la_svd_full_u": (lambda a: canonical_signs(jnp.linalg.svd(a)[0], -2), [GA4]),
    "la_svd_complex_s": (lambda a: jnp.linalg.svd(a, compute_uv=False), [TALLC]),
    "la_svdvals_batch": (jnp.linalg.svdvals, [GAB]),
    "la_svd_hermitian_s": (lambda a: jnp.linalg.svd(a, hermitian=True)[1], [SYM4 - 5 * np.eye(4, dtype=np.float32)]),
    "la_eigvals": (jnp.linalg.eigvals, [GA4]), "la_eigvals_complex": (jnp.linalg.eigvals, [GAC]),
    "la_eig_w": (lambda a: jnp.linalg.eig(a)[0], [GA4]), "la_eig_v_abs": (lambda a: jnp.abs(jnp.linalg.eig(a)[1]), [GA4]),
    "la_pinv": (jnp.linalg.pinv, [TALL]), "la_pinv_wide": (jnp.linalg.pinv, [WIDE]),
    "la_lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], [TALL, normal(5, 2)]),
    "la_lstsq_resid": (lambda a, b: jnp.linalg.lstsq(a, b)[1], [TALL, normal(5)]),
    "la_lstsq_rank": (lambda a, b: jnp.linalg.lstsq(a, b)[2], [TALL, normal(5)]),
    "la_matrix_rank": (jnp.linalg.matrix_rank, [np.outer(normal(4), normal(4)).astype(np.float32)]),
    "la_cond": (jnp.linalg.cond, [GA4]), "la_cond_1": (lambda a: jnp.linalg.cond(a, p=1), [GA4]),
    # Singular with an exactly zero singular value (a rank-1 matrix's would
    # be each LAPACK build's rounding noise): cond(p=-2) is 0.
    "la_cond_singular": (lambda a: jnp.linalg.cond(a, p=-2),
                         [np.diag(np.array([1.0, 2.0, 0.0], np.float32))]),
    "la_matrix_norm_2": (lambda a: jnp.linalg.matrix_norm(a, ord=2), [GAB]),
    "la_matrix_norm_nuc": (lambda a: jnp.linalg.matrix_norm(a, ord="nuc"), [TALL]),
    "la_matrix_power_neg": (lambda a: jnp.linalg.matrix_power(a, -2), [GA4]),
    "la_tensorsolve": (jnp.linalg.tensorsolve, [general(6, 6).reshape(2, 3, 6), normal(2, 3)]),
    "la_tensorinv": (lambda a: jnp.linalg.tensorinv(a, ind=2), [general(6, 6).reshape(2, 3, 6)]),
    "la_solve_singular": (jnp.linalg.solve, [np.ones((3, 3), np.float32), normal(3)]),
    "la_eigvalsh_nan": (jnp.linalg.eigvalsh, [np.full((3, 3), np.nan, np.float32)]),
})

# jax.lax's convolutions built on conv_general_dilated, their shape
# arithmetic, and small conveniences.
CX_NHWC, CW_HWIO = normal(1, 5, 5, 2), normal(3, 3, 2, 4)
CX_NCHW = normal(2, 2, 5, 5)
NHWC = ("NHWC", "HWIO", "NHWC")
# Both sides of the diagonal x = a (series below, continued fraction above).
IG_A = np.array([[0.3, 1.0, 2.5, 6.0], [0.8, 3.0, 0.5, 9.0], [1.5, 4.0, 7.0, 0.2]], np.float32)
IG_X = np.array([[0.1, 2.0, 1.5, 9.0], [3.0, 0.5, 0.05, 12.0], [1.5, 6.0, 2.0, 4.0]], np.float32)
MH_A = np.array([-7, 2**30, -2**31, 123456789, -1, 0], np.int32)
MH_B = np.array([3, 2**30, -1, -987654321, -1, 5], np.int32)
CASES.update({
    "lax_conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"), [CX_NHWC, CW_HWIO]),
    "lax_conv_transpose_valid_tk": (lambda x, w: lax.conv_transpose(x, w, (1, 2), "VALID", transpose_kernel=True, precision=lax.Precision.HIGHEST),
                                    [CX_NHWC, normal(3, 2, 4, 2)]),
    "lax_conv_transpose_explicit": (lambda x, w: lax.conv_transpose(x, w, (2, 1), ((1, 0), (2, 1)), rhs_dilation=(1, 2),
                                                                    dimension_numbers=("NCHW", "OIHW", "NCHW")),
                                    [CX_NCHW, normal(3, 2, 2, 3)]),
    "lax_conv_patches": (lambda x: lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID"), [CX_NCHW]),
    "lax_conv_patches_nhwc": (lambda x: lax.conv_general_dilated_patches(x, (3, 2), (2, 1), "SAME", dimension_numbers=NHWC),
                              [CX_NHWC]),
    "lax_conv_local": (lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3), precision=lax.Precision.HIGHEST),
                       [CX_NCHW, normal(3, 12, 4, 3)]),
    "lax_conv_shape_tuples": (lambda: jnp.array(lax.conv_general_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (2, 1), "SAME", NHWC)
                                                + lax.conv_transpose_shape_tuple((1, 5, 5, 2), (3, 3, 2, 4), (2, 2), "SAME", NHWC)
                                                + lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 2), (2, 1), ((1, 1), (0, 2)))
                                                + sum(lax.conv_general_permutations(NHWC), ())
                                                + lax.reduce_window_shape_tuple((7, 9), (3, 2), (2, 2), ((1, 0), (0, 1)), (1, 2), (2, 1)),
                                                jnp.int32), []),
    "lax_reduce_xor": (lambda a: lax.reduce_xor(a, (1,)), [i]),
    "lax_reduce_xor_bool": (lambda a: lax.reduce_xor(a, (0, 1)), [b]),
    "lax_mulhi": (lax.mulhi, [MH_A, MH_B]),
    "lax_mulhi_u8": (lax.mulhi, [u, u[::-1].copy()]),
    "lax_approx_max_k": (lambda a: lax.approx_max_k(a, 2)[0], [x]),
    "lax_approx_max_k_indices": (lambda a: lax.approx_max_k(a, 3, reduction_dimension=0)[1], [x]),
    "lax_approx_min_k": (lambda a: lax.approx_min_k(a, 2)[0], [x]),
    "lax_approx_min_k_indices": (lambda a: lax.approx_min_k(a, 2, reduction_dimension=0)[1], [x]),
    "lax_empty": (lambda: lax.empty((2, 3), jnp.float32), []),
    "lax_broadcast_like": (lambda a, c: lax.broadcast_like(a, c), [x[0], x]),
    "lax_dtype": (lambda a: jnp.zeros(2, lax.dtype(a)), [i]),
    "einsum_ellipsis": (lambda a, c: jnp.einsum("...ij,...j->...i", a, c), [normal(3, 3), normal(5, 3)]),
    "einsum_ellipsis_broadcast": (lambda a, c: jnp.einsum("...ij,...jk->...ik", a, c), [normal(2, 1, 3, 4), normal(5, 4, 2)]),
    "einsum_ellipsis_implicit": (lambda a: jnp.einsum("...ji", a), [normal(2, 3, 4)]),
    "einsum_three": (lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c), [normal(2, 3), normal(3, 4), normal(4, 5)]),
    "einsum_three_implicit": (lambda a, b, c: jnp.einsum("ij,jk,ki", a, b, c), [normal(2, 3), normal(3, 4), normal(4, 2)]),
    "einsum_four_batched": (lambda a, b, c, d: jnp.einsum("bij,bjk,bkl,l->bi", a, b, c, d),
                            [normal(2, 3, 4), normal(2, 4, 5), normal(2, 5, 3), normal(3)]),
    "einsum_ellipsis_three": (lambda a, b, c: jnp.einsum("...ij,...jk,k->...i", a, b, c),
                              [normal(2, 3, 4), normal(4, 5), normal(5)]),
    "einsum_trace": (lambda a: jnp.einsum("ii->", a), [normal(3, 3)]),
    "einsum_trace_implicit": (lambda a: jnp.einsum("ii", a), [normal(3, 3)]),
    "einsum_diagonal": (lambda a: jnp.einsum("ii->i", a), [normal(3, 3)]),
    "einsum_repeated_kept": (lambda a, b: jnp.einsum("iij,jk->ik", a, b), [normal(3, 3, 4), normal(4, 2)]),
    "einsum_repeated_three_times": (lambda a: jnp.einsum("iji->j", a), [normal(3, 2, 3)]),
    "lax_zeta": (lax.zeta, [big + 0.5, pos]),
    "lax_igamma": (lax.igamma, [IG_A, IG_X]), "lax_igammac": (lax.igammac, [IG_A, IG_X]),
    "lax_igamma_grad_a": (lax.igamma_grad_a, [IG_A, IG_X]),
    "lax_random_gamma_grad": (lax.random_gamma_grad, [IG_A, IG_X]),
    "lax_shape_as_value": (lambda: lax.shape_as_value((3, 4, 5)), []),
    "lax_ragged_dot": (lax.ragged_dot, [normal(6, 3), normal(3, 3, 4), np.array([2, 0, 3], np.int32)]),
    "lax_ragged_dot_general_free_batched": (
        lambda l, r, g: lax.ragged_dot_general(l, r, g, RAGGED_FREE_BATCHED),
        [normal(2, 6, 3), normal(3, 2, 3, 4), np.array([[2, 0, 3], [1, 4, 1]], np.int32)]),
    "lax_ragged_dot_general_free_inner": (
        lambda l, r, g: lax.ragged_dot_general(l, r, g, RAGGED_FREE_INNER),
        [normal(3, 5), normal(3, 2, 4), np.array([3, 1], np.int32)]),
    "lax_ragged_dot_general_contracting": (
        lambda l, r, g: lax.ragged_dot_general(l, r, g, RAGGED_CONTRACTING),
        [normal(2, 4, 6), normal(2, 6, 3), np.array([2, 1, 3], np.int32)]),
    "lax_ragged_dot_general_contracting_per_batch": (
        lambda l, r, g: lax.ragged_dot_general(l, r, g, RAGGED_CONTRACTING),
        [normal(2, 4, 6), normal(2, 6, 3), np.array([[2, 1, 3], [0, 5, 0]], np.int32)]),
    "lax_ragged_dot_general_batch": (
        lambda l, r, g: lax.ragged_dot_general(l, r, g, RAGGED_BATCH),
        [normal(4, 2, 3), normal(4, 3, 2), np.array([1, 3], np.int32)]),
    "np_vectorize_elementwise": (jnp.vectorize(lambda a, c: a * jnp.sin(c) + 1.0), [normal(3, 1), normal(4)]),
    "np_vectorize_dot": (jnp.vectorize(jnp.dot, signature="(n),(n)->()"), [normal(2, 1, 3), normal(4, 3)]),
    "np_vectorize_matvec_kept_ones": (jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)"),
                                      [normal(1, 2, 3, 4), normal(1, 1, 4)]),
    "np_vectorize_second_output": (
        lambda a: jnp.vectorize(lambda v: (jnp.sum(v), v[::-1] * 2.0), signature="(n)->(),(n)")(a)[1],
        [normal(3, 5)]),
    "lax_scatter_apply_repeated": (
        lambda a, at: lax.scatter_apply(a, at, lambda v: v * 1.5 + jnp.sin(v), SCATTER_POINTS, update_shape=(4,)),
        [normal(5), np.array([[1], [3], [1], [1]], np.int32)]),
    "lax_scatter_apply_rows_clip": (
        lambda a, at: lax.scatter_apply(a, at, jnp.tanh, SCATTER_ROWS, update_shape=(2, 4), mode="clip"),
        [normal(3, 4), np.array([[0], [7]], np.int32)]),
    "lax_scatter_apply_dropped": (
        lambda a, at: lax.scatter_apply(a, at, jnp.exp, SCATTER_POINTS, update_shape=(3,)),
        [normal(5), np.array([[4], [-1], [9]], np.int32)]),
    "lax_scaled_dot": (lambda l, r, ls, rs: lax.scaled_dot(l, r, lhs_scale=ls, rhs_scale=rs),
                       [normal(3, 8), normal(8, 2), uniform(0.5, 2, 3, 2), uniform(0.5, 2, 2, 2)]),
    "lax_scaled_dot_batched_f32": (
        lambda l, r, ls, rs: lax.scaled_dot(l, r, lhs_scale=ls, rhs_scale=rs, preferred_element_type=jnp.float32),
        [normal(2, 3, 8), normal(2, 8, 4), uniform(0.5, 2, 2, 3, 4), uniform(0.5, 2, 2, 2, 4)]),
    "lax_scaled_dot_dims_unscaled_rhs": (
        lambda l, r, ls: lax.scaled_dot(l, r, lhs_scale=ls, dimension_numbers=(((0,), (0,)), ((), ())),
                                        preferred_element_type=jnp.float32),
        [normal(8, 3), normal(8, 2), uniform(0.5, 2, 4, 3)]),
    "lax_platform_dependent": (lambda a: lax.platform_dependent(a, cpu=jnp.sin, default=jnp.cos), [x]),
    "lax_composite": (lambda a: lax.composite(lambda v: jnp.sin(v) * 2, name="my.double_sin")(a), [x]),
    # jax.numpy: orderings, bits, index helpers, selections, poly.
    "np_sort_complex": (jnp.sort_complex, [CZ]), "np_sort_complex_real": (jnp.sort_complex, [NP_A]),
    "np_lexsort": (lambda p, q: jnp.lexsort((p, q)), [np.round(NP_A * 2), np.round(NP_A.T.copy().reshape(NP_A.shape) * 2)]),
    "np_partition": (lambda a: jnp.partition(a, 2, axis=0), [NP_A]),
    "np_partition_u8": (lambda a: jnp.partition(a, 1), [u]),
    "np_argpartition": (lambda a: jnp.argpartition(a, 3), [x]),
    "np_packbits": (lambda a: jnp.packbits(a, axis=1), [b]), "np_packbits_flat_little": (lambda a: jnp.packbits(a, bitorder="little"), [i]),
    "np_unpackbits": (lambda a: jnp.unpackbits(a, axis=0), [u]),
    "np_unpackbits_count": (lambda a: jnp.unpackbits(a, count=13, bitorder="little"), [u]),
    "np_ix": (lambda p, q: jnp.ix_(p, q)[0] * 10 + jnp.ix_(p, q)[1], [np.array([2, 0], np.int32), np.array([1, 3, 0], np.int32)]),
    "np_ravel_multi_index_clip": (lambda p, q: jnp.ravel_multi_index((p, q), (3, 4), mode="clip"), [i, k]),
    "np_ravel_multi_index_wrap_f": (lambda p, q: jnp.ravel_multi_index((p, q), (3, 4), mode="wrap", order="F"), [i, k]),
    "np_fill_diagonal": (lambda a: jnp.fill_diagonal(a, 7.0, inplace=False), [x]),
    "np_fill_diagonal_values": (lambda a, v: jnp.fill_diagonal(a, v, inplace=False), [x.T.copy(), np.array([1.0, 2.0], np.float32)]),
    "np_compress": (lambda c, a: jnp.compress(c, a, axis=1, size=3, fill_value=-1), [np.array([True, False, True, True]), x]),
    "np_extract": (lambda c, a: jnp.extract(c, a, size=5), [b, x]),
    "np_poly": (jnp.poly, [np.array([1.0, -2.0, 0.5], np.float32)]),
    "np_poly_matrix": (jnp.poly, [GA4]),
})

# Unique values and set operations with a static size (literal inputs: no
# random draws, so later cases keep theirs).
UQ = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8], np.int32)
UQ2 = np.array([[7, 5, 0], [3, 11, 5]], np.int32)
UQ_F = np.array([2.5, np.nan, 1.0, 2.5, np.nan, -3.0, 0.5, 7.0], np.float32)
UQ_ROWS = np.array([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4]], np.int32)
CASES.update({
    "np_unique_size": (lambda a: jnp.unique(a, size=10), [UQ]),
    "np_unique_fill": (lambda a: jnp.unique(a, size=10, fill_value=-1), [UQ]),
    "np_unique_truncated": (lambda a: jnp.unique(a, size=4), [UQ]),
    "np_unique_nan": (lambda a: jnp.unique(a, size=6, fill_value=0), [UQ_F]),
    "np_unique_axis": (lambda a: jnp.unique(a, axis=0, size=4, fill_value=-1), [UQ_ROWS]),
    "np_unique_returns": (lambda a: jnp.concatenate(
        [jnp.ravel(r) for r in jnp.unique(a.reshape(3, 4), return_index=True, return_inverse=True,
                                          return_counts=True, size=8, fill_value=0)]), [UQ]),
    "np_unique_all": (lambda a: jnp.concatenate(
        [jnp.ravel(r).astype(jnp.float32) for r in jnp.unique_all(a, size=7, fill_value=-1)]), [UQ_F]),
    "np_unique_counts": (lambda a: jnp.stack(jnp.unique_counts(a, size=9)), [UQ]),
    "np_unique_inverse": (lambda a: jnp.concatenate(
        [jnp.ravel(r) for r in jnp.unique_inverse(a.reshape(4, 3), size=8)]), [UQ]),
    "np_unique_values": (lambda a: jnp.unique_values(a, size=7, fill_value=9), [UQ_F]),
    "np_union1d": (lambda a, b: jnp.union1d(a, b, size=12, fill_value=-5), [UQ, UQ2]),
    "np_union1d_default_fill": (lambda a, b: jnp.union1d(a, b, size=12), [UQ, UQ2]),
    "np_intersect1d": (lambda a, b: jnp.intersect1d(a, b, size=5), [UQ, UQ2]),
    "np_intersect1d_fill": (lambda a, b: jnp.intersect1d(a, b, size=5, fill_value=-1), [UQ, UQ2]),
    "np_intersect1d_unique": (lambda a, b: jnp.intersect1d(a, b, assume_unique=True, size=4),
                              [np.array([4, 1, 9, 7], np.int32), np.array([9, 4, 0], np.int32)]),
    "np_setdiff1d": (lambda a, b: jnp.setdiff1d(a, b, size=6), [UQ, UQ2]),
    "np_setdiff1d_fill": (lambda a, b: jnp.setdiff1d(a, b, size=8, fill_value=-1), [UQ, UQ2]),
    "np_setdiff1d_unique": (lambda a, b: jnp.setdiff1d(a, b, assume_unique=True, size=5),
                            [np.array([4, 1, 9, 7, 2], np.int32), np.array([9, 4, 0], np.int32)]),
    "np_setxor1d": (lambda a, b: jnp.setxor1d(a, b, size=10), [UQ, UQ2]),
    "np_setxor1d_fill": (lambda a, b: jnp.setxor1d(a, b, size=10, fill_value=-1), [UQ, UQ2]),
    "np_setxor1d_floats": (lambda a, b: jnp.setxor1d(a, b, size=6, fill_value=0.0),
                           [np.array([2.5, 1.0, -3.0, 2.5], np.float32), np.array([1.0, 0.5, 7.0], np.float32)]),
})

# The regularized incomplete beta function: both sides of the symmetry,
# tiny and large parameters, the edges (a or b zero, x at 0 or 1) and NaN
# outside the domain; its derivative in x alone (JAX has none in a, b).
BETA_A = np.array([0.5, 1.0, 2.0, 5.0, 0.1, 3.0, 0.0, -1.0, 20.0, 2.0], np.float32)
BETA_B = np.array([0.5, 3.0, 2.0, 1.5, 4.0, 0.2, 2.0, 1.0, 30.0, 0.0], np.float32)
BETA_X = np.array([0.2, 0.5, 0.9, 0.3, 0.999, 0.01, 0.5, 0.5, 0.4, 1.0], np.float32)
BETA_A_POS = np.array([0.5, 1.0, 2.0, 5.0, 0.7, 3.0], np.float32)
BETA_B_POS = np.array([0.5, 3.0, 2.0, 1.5, 4.0, 0.9], np.float32)
# Rounding to narrower float formats: ties, the largest finite values and
# overflow to infinity, subnormals.
RP = np.array([1.0001, 3.14159265, 65519.0, 65520.0, 1e-8, -2.5e-5, 1e6, -np.inf, 0.1, 2049.0], np.float32)
CASES.update({
    "lax_reduce_precision_f16": (lambda a: lax.reduce_precision(a, 5, 10), [RP]),
    "lax_reduce_precision_bf16": (lambda a: lax.reduce_precision(a, 8, 7), [RP]),
    "lax_reduce_precision_e4m3": (lambda a: lax.reduce_precision(a, 4, 3), [normal(3, 4)]),
})
CASES.update({
    "lax_betainc": (lax.betainc, [BETA_A, BETA_B, BETA_X]),
    "lax_betainc_x": (lambda x: lax.betainc(BETA_A_POS, BETA_B_POS, x),
                      [np.array([0.2, 0.5, 0.9, 0.3, 0.8, 0.05], np.float32)]),
})

# Functional forms of NumPy's in-place writes, and choose/delete/insert.
PA = np.arange(12, dtype=np.float32).reshape(3, 4)
PI = np.array([[0, 1, 2, 3], [4, -1, 2, 1], [0, 0, 5, 2]], np.int32)
CASES.update({
    "np_put": (lambda a: jnp.put(a, jnp.array([0, 5, -2, 20]), jnp.array([10.0, 20.0]), inplace=False), [PA]),
    "np_put_clip": (lambda a: jnp.put(a, jnp.array([0, 5, -1, 20]), jnp.array([10.0, 20.0]), mode="clip",
                                      inplace=False), [PA]),
    "np_put_wrap": (lambda a: jnp.put(a, jnp.array([0, 5, -1, 20]), jnp.array([10.0, 20.0, 30.0]), mode="wrap",
                                      inplace=False), [PA]),
    "np_place": (lambda a, m: jnp.place(a, m, jnp.array([7.0, 8.0, 9.0]), inplace=False), [PA, PA % 3 == 0]),
    "np_put_along_axis": (lambda a: jnp.put_along_axis(a, jnp.array([[0], [2], [1]]), 99.0, axis=1, inplace=False),
                          [PA]),
    "np_put_along_axis_flat": (lambda a: jnp.put_along_axis(a, jnp.array([1, 7]), jnp.array([-1.0, -2.0]),
                                                            axis=None, inplace=False), [PA]),
    "np_choose_wrap": (lambda i, a: jnp.choose(i, [a, a * 10, -a], mode="wrap"), [PI, PA]),
    "np_choose_clip": (lambda i, a: jnp.choose(i, [a, a * 10, -a], mode="clip"), [PI, PA]),
    "np_delete_one": (lambda a: jnp.delete(a, 1, axis=1), [PA]),
    "np_delete_many": (lambda a: jnp.delete(a, np.array([0, -1, 5])), [PA]),
    "np_delete_mask": (lambda a: jnp.delete(a, np.array([True, False, True]), axis=0), [PA]),
    "np_insert_one": (lambda a: jnp.insert(a, 1, jnp.array([5.0, 6.0, 7.0]), axis=1), [PA]),
    "np_insert_many": (lambda a: jnp.insert(a, np.array([0, 2, 4]), -1.0, axis=1), [PA]),
    "np_insert_flat": (lambda a: jnp.insert(a, np.array([1, 1, -2]), jnp.array([100.0, 200.0, 300.0])), [PA]),
})

# Functions of functions (per-slice and per-element calls), polynomial
# division and roots.
PA3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5
CASES.update({
    "np_apply_along_axis": (lambda a: jnp.apply_along_axis(lambda r: jnp.sum(r * r) - r[0], 1, a), [PA3]),
    "np_apply_along_axis_vec": (lambda a: jnp.apply_along_axis(lambda r: r[::-1] * 2.0, 0, a), [PA]),
    "np_apply_over_axes": (lambda a: jnp.apply_over_axes(jnp.sum, a, [0, 2]), [PA3]),
    "np_fromfunction": (lambda: jnp.fromfunction(lambda i, j: i * 10 + j * j, (3, 4), dtype=jnp.float32), []),
    "np_piecewise": (lambda a: jnp.piecewise(a, [a < 2, a > 7], [lambda v: -v, lambda v: v * v, 1.0]), [PA]),
    "np_piecewise_default": (lambda a: jnp.piecewise(a, [a < 3, a >= 9], [lambda v: v + 100, 5.0]), [PA]),
    "np_mask_indices": (lambda: jnp.stack(jnp.mask_indices(4, jnp.triu, 1, size=6)), []),
    "np_polydiv": (lambda u, v: jnp.concatenate(jnp.polydiv(u, v)),
                   [np.array([1.0, -3.0, 0.0, 2.0, 5.0], np.float32), np.array([2.0, 1.0, -1.0], np.float32)]),
    "np_roots": (lambda p: jnp.roots(p, strip_zeros=False), [np.array([0.0, 1.0, -6.0, 11.0, -6.0], np.float32)]),
})

# Assembling blocks; least-squares polynomial fits.
FX = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0], np.float32)
FY = np.array([1.0, 1.3, 2.1, 3.2, 4.8, 7.1, 9.9], np.float32)
FW = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 3.0, 1.0], np.float32)
CASES.update({
    "np_block": (lambda a, b, c, d: jnp.block([[a, b], [c, d]]),
                 [PA[:2, :2], PA[:2, :3] + 100, PA[2:, :2] - 50, PA[2:, 1:] * 2]),
    "np_block_1d": (lambda a, b: jnp.block([a, b, a]), [FX, FY[:3]]),
    "np_polyfit": (lambda x, y: jnp.polyfit(x, y, 2), [FX, FY]),
    "np_polyfit_weighted_2d": (lambda x, y, w: jnp.polyfit(x, jnp.stack([y, y * y], 1), 1, w=w), [FX, FY, FW]),
    "np_polyfit_full": (lambda x, y: jnp.concatenate(
        [jnp.ravel(jnp.asarray(r, jnp.float32)) for r in jnp.polyfit(x, y, 3, full=True)[:4]]), [FX, FY]),
})

# Histograms with static bins (literal inputs: values on edges, outside the
# range and repeated).
HV = np.array([0.5, 1.5, 2.25, 3.0, 3.0, -1.0, 7.5, 2.0, 0.0, 4.0], np.float32)
HW = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 0.25, 2.0, 1.0], np.float32)
HS = np.stack([HV, HW * 2.0 - 1.0, np.arange(10, dtype=np.float32) % 4], 1)
CASES.update({
    "np_histogram": (lambda a: jnp.concatenate(jnp.histogram(a, bins=5)), [HV]),
    "np_histogram_range": (lambda a: jnp.concatenate(jnp.histogram(a, bins=4, range=(0.0, 3.0))), [HV]),
    "np_histogram_weights_density": (lambda a, w: jnp.concatenate(jnp.histogram(
        a, bins=jnp.array([-1.0, 0.0, 2.0, 8.0], np.float32), weights=w, density=True)), [HV, HW]),
    "np_histogram_constant": (lambda a: jnp.concatenate(jnp.histogram(a, bins=3)),
                              [np.array([2.0, 2.0, 2.0], np.float32)]),
    "np_histogram_bin_edges": (lambda a: jnp.histogram_bin_edges(a, bins=6), [HV]),
    "np_histogram2d": (lambda x, y: jnp.concatenate(
        [jnp.ravel(r) for r in jnp.histogram2d(x, y, bins=(3, 4))]), [HV, HW]),
    "np_histogramdd": (lambda s: jnp.concatenate([jnp.ravel(r) for r in jax.tree.leaves(jnp.histogramdd(
        s, bins=[2, 3, jnp.array([0.0, 1.0, 2.5, 3.0], np.float32)], range=[(-1.0, 8.0), None, None],
        density=True))]), [HS]),
})

# Fourier transforms: lax.fft and jax.numpy.fft.
C3, R3, C4 = cnormal(2, 3, 4), normal(2, 3, 4), cnormal(2, 2, 3, 2)
FFT = lax.FftType
CASES.update({
    "lax_fft": (lambda z: lax.fft(z, FFT.FFT, (4,)), [CZ]),
    "lax_ifft_2d": (lambda z: lax.fft(z, FFT.IFFT, (3, 4)), [CZ]),
    "lax_rfft": (lambda x: lax.fft(x, FFT.RFFT, (4,)), [NP_A]),
    "lax_irfft": (lambda z: lax.fft(z, FFT.IRFFT, (4,)), [CZ[:, :3]]),
    "lax_rfft_3d": (lambda x: lax.fft(x, FFT.RFFT, (2, 3, 4)), [R3]),
    "fft_fft": (jnp.fft.fft, [CZ]), "fft_fft_n_axis": (lambda z: jnp.fft.fft(z, n=6, axis=0), [CZ]),
    "fft_fft_real": (jnp.fft.fft, [NP_A]), "fft_fft_int": (jnp.fft.fft, [NP_I]),
    "fft_ifft_ortho": (lambda z: jnp.fft.ifft(z, norm="ortho"), [CZ]),
    "fft_ifft_n": (lambda z: jnp.fft.ifft(z, n=2), [CZ]),
    "fft_rfft": (jnp.fft.rfft, [NP_A]),
    "fft_rfft_n_forward": (lambda x: jnp.fft.rfft(x, n=5, axis=0, norm="forward"), [NP_A]),
    "fft_irfft": (jnp.fft.irfft, [CZ]), "fft_irfft_n": (lambda z: jnp.fft.irfft(z, n=7), [CZ]),
    "fft_irfft_ortho": (lambda z: jnp.fft.irfft(z, axis=0, norm="ortho"), [CZ]),
    "fft_fft2": (jnp.fft.fft2, [CZ]), "fft_ifft2_s": (lambda z: jnp.fft.ifft2(z, s=(2, 5)), [CZ]),
    "fft_rfft2": (jnp.fft.rfft2, [NP_A]), "fft_irfft2": (jnp.fft.irfft2, [CZ]),
    "fft_fftn_axes": (lambda z: jnp.fft.fftn(z, axes=(0, 2)), [C3]),
    "fft_ifftn": (jnp.fft.ifftn, [C3]), "fft_rfftn": (jnp.fft.rfftn, [R3]),
    "fft_irfftn_s": (lambda z: jnp.fft.irfftn(z, s=(2, 3, 4)), [C3]),
    "fft_fftn_4d": (jnp.fft.fftn, [C4]), "fft_ifftn_4d_forward": (lambda z: jnp.fft.ifftn(z, norm="forward"), [C4]),
    "fft_rfftn_4d": (jnp.fft.rfftn, [np.real(C4).astype(np.float32)]),
    "fft_hfft": (jnp.fft.hfft, [CZ]), "fft_hfft_n": (lambda z: jnp.fft.hfft(z, n=5, axis=0), [CZ]),
    "fft_ihfft": (jnp.fft.ihfft, [NP_A]),
    "fft_fftfreq": (lambda: jnp.fft.fftfreq(8, 0.1), []), "fft_fftfreq_odd": (lambda: jnp.fft.fftfreq(7), []),
    "fft_rfftfreq": (lambda: jnp.fft.rfftfreq(8, 0.5), []), "fft_rfftfreq_odd": (lambda: jnp.fft.rfftfreq(7), []),
    "fft_fftshift": (jnp.fft.fftshift, [NP_A]), "fft_ifftshift_axis": (lambda x: jnp.fft.ifftshift(x, axes=1), [NP_A]),
    "fft_fftshift_c": (lambda z: jnp.fft.fftshift(z, axes=(0,)), [CZ]),
})

# Every float primitive again in bf16 and f16 (inputs rounded to the
# dtype), named "case@bf16" / "case@f16".
HALF_VARIANTS = [
    "neg", "sign", "abs", "floor", "ceil", "round", "exp", "exp2", "expm1", "log", "log1p", "sqrt",
    "rsqrt", "cbrt", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "erf", "erfc", "erf_inv", "lgamma", "digamma", "square", "is_finite",
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "ne", "lt", "gt",
    "integer_pow", "integer_pow_neg", "select_n", "convert_f32_i32", "convert_f32_bool",
    "reduce_sum", "reduce_max", "reduce_prod", "dot_general", "cumsum", "sort_nan", "argmax",
    "reduce_window_max", "relu", "softmax", "logsumexp", "op_mod", "jnp_remainder", "jnp_floor_divide",
    "bessel_i0e", "bessel_i1e",
]

# With x64: float primitives in f64 ("case@f64") and integer ones in i64
# ("case@i64", with values past 2**53 where the op allows, so that a
# comparison through f64 would miss a wrong low bit).
# With x64, the complex cases in complex128 ("case@c128").
C128_VARIANTS = ["la_cholesky_complex", "lax_lu_complex", "la_solve_complex", "la_det_complex", "la_qr_complex_r",
                 "la_eigh_complex_w", "la_svd_complex_s", "la_eigvals_complex", "lax_ts_complex_adjoint", "fft_fft", "fft_rfft", "fft_irfftn_s", "c_add", "c_mul", "c_div", "c_real", "c_imag", "c_conj", "c_abs", "c_exp", "c_log",
                 "c_sqrt", "c_tanh", "c_reduce_sum", "c_dot_general", "np_angle"]
F64_VARIANTS = HALF_VARIANTS + ["lax_cholesky", "lax_ts_left_lower", "lax_lu", "la_solve", "la_det", "la_slogdet_logdet",
                                "la_qr_r", "la_eigh_v", "la_svd_u", "la_eigvals", "la_pinv", "la_lstsq", "clamp", "polygamma", "dot_general_batch", "jnp_var", "log_softmax", "mlp_loss"]
I64_VARIANTS = ["lax_mulhi", "abs_int", "sign_int", "not_int", "population_count", "clz", "div_int", "rem_int", "or",
                "shift_left", "shift_right_logical", "shift_right_arithmetic", "eq", "ge", "reduce_min",
                "reduce_and_int", "op_mod_int", "jnp_remainder_int", "jnp_floor_divide_int"]
WIDE = [ "abs_int", "sign_int", "not_int", "population_count", "div_int", "rem_int", "or", "eq", "ge",
        "reduce_min", "reduce_and_int"]


def retyped(name, dtype):
    """CASES[name] with its float32 inputs cast to `dtype`."""
    fn, args = CASES[name]
    return fn, [np.asarray(a).astype(dtype) if np.asarray(a).dtype == np.float32 else a for a in args]


def complex128(name):
    """CASES[name] with its complex64 inputs as complex128."""
    fn, args = CASES[name]
    return fn, [np.asarray(a).astype(np.complex128) if np.asarray(a).dtype == np.complex64 else a for a in args]


def widened(name):
    """CASES[name] with its int32 inputs as int64; the first one (every one
    for bitwise ops and compares) shifted past 2**53."""
    fn, args = CASES[name]
    out = []
    for k, a in enumerate(args):
        a = np.asarray(a)
        if a.dtype == np.int32:
            a = a.astype(np.int64)
            if name in WIDE and (k == 0 or name in ("or", "eq", "ge")):
                a = a * (1 << 40) + 12345
        out.append(a)
    return fn, out


def run(cases):
    out = {}
    for name, (fn, args) in cases.items():
        result = jax.jit(fn)(*[jnp.asarray(a) for a in args])
        out[name] = {"inputs": [enc(a) for a in args], "output": enc(result)}
    return out


def main():
    if "--x64" in sys.argv:
        jax.config.update("jax_enable_x64", True)
        cases = {f"{n}@f64": retyped(n, np.float64) for n in F64_VARIANTS}
        cases.update({f"{n}@i64": widened(n) for n in I64_VARIANTS})
        cases.update({f"{n}@c128": complex128(n) for n in C128_VARIANTS})
    else:
        cases = dict(CASES)
        for dtype, suffix in ((jnp.bfloat16, "bf16"), (np.float16, "f16")):
            cases.update({f"{n}@{suffix}": retyped(n, dtype) for n in HALF_VARIANTS})
    json.dump({"cases": run(cases)}, sys.stdout)


if __name__ == "__main__":
    main()
