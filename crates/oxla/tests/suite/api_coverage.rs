//! How much of JAX's API oxla has: JAX 0.10.2's public function names per
//! namespace (reference/api_names.py, at test time) against the names
//! oxla has for them, listed below. Each list is checked by the compiler
//! (every name is imported from where it lives), each name must be one of
//! JAX's, and names JAX has that mean nothing in Rust are excluded with
//! their reason. The test fails when a namespace falls below its floor
//! (raise a floor when names land; issue 29 asks for 90%), and prints the
//! coverage table and the missing names either way.

use std::collections::BTreeSet;

/// The JAX names of the items listed (imported, so each must exist);
/// `name as "jax_name"` where oxla's name differs (a Rust keyword, or
/// `not` for `bitwise_not`).
macro_rules! have {
    ($($module:ident)::+ : $($name:ident $(as $jax:literal)?),* $(,)?) => {{
        #[allow(unused_imports)]
        use $($module)::+::{$($name),*};
        vec![$(have!(@jax $name $(, $jax)?)),*]
    }};
    (@jax $name:ident) => { stringify!($name) };
    (@jax $name:ident, $jax:literal) => { $jax };
}

/// One namespace: JAX's name for it, the names oxla has, the names left
/// out with why, and the fewest covered names the test accepts.
struct Namespace {
    jax: &'static str,
    have: Vec<&'static str>,
    excluded: &'static [(&'static str, &'static str)],
    floor: usize,
}

/// jax.numpy names that have no meaning in Rust.
const NUMPY_EXCLUDED: &[(&str, &str)] = &[
    (
        "array_repr",
        "Python's repr; oxla arrays implement Display and Debug",
    ),
    ("array_str", "Python's str; oxla arrays implement Display"),
    (
        "printoptions",
        "NumPy's global print options (a Python context manager)",
    ),
    ("set_printoptions", "NumPy's global print options"),
    ("get_printoptions", "NumPy's global print options"),
    ("from_dlpack", "DLPack is Python's tensor exchange protocol"),
    (
        "fromfile",
        "reads Python file objects; oxla_npy reads .npy files",
    ),
    (
        "fromiter",
        "consumes a Python iterator; Array::from_slice takes a slice",
    ),
    ("frompyfunc", "wraps a Python function as a NumPy ufunc"),
    (
        "fromstring",
        "parses a Python str; Array::from_slice takes values",
    ),
    (
        "frombuffer",
        "reads a Python buffer object; Array::from_slice takes values",
    ),
    ("iterable", "asks whether a Python object is iterable"),
    (
        "isscalar",
        "asks whether a Python object is a scalar; every oxla value is an Array",
    ),
];

/// jax.nn names that have no meaning on the platforms oxla runs them on.
const NN_EXCLUDED: &[(&str, &str)] = &[
    (
        "scaled_matmul",
        "cuDNN's block-scaled fp8/fp4 matmul: JAX has no CPU lowering, and oxla has no float8 or \
         float4 dtypes yet",
    ),
    (
        "scaled_dot_general",
        "quantizes to fp8/fp4 for cuDNN's block-scaled matmul (see scaled_matmul)",
    ),
    (
        "get_scaled_dot_general_config",
        "the fp8/fp4 block-scale configuration of scaled_dot_general",
    ),
];

fn namespaces() -> Vec<Namespace> {
    let numpy = have!(oxla::numpy: argpartition, can_cast, compress, extract, fill_diagonal,
        apply_along_axis, apply_over_axes, block, fromfunction, mask_indices, piecewise, polydiv,
        polyfit, roots,
        trim_zeros, choose, delete, insert, place, put, put_along_axis, histogram, histogram2d,
        histogram_bin_edges, histogramdd, intersect1d, setdiff1d,
        setxor1d, union1d, unique, unique_all, unique_counts,
        unique_inverse, unique_values,
        ix_, lexsort, load, packbits, savez, vectorize, partition, poly, ravel_multi_index, save, sort_complex,
        unpackbits, abs, add, arange, arccos, arccosh, arcsin, arcsinh, arctan,
        arctan2, arctanh, argmax, argmin, argsort, broadcast_shapes, broadcast_to, cbrt, ceil,
        clip, concatenate, cos, cosh, cumprod, cumsum, divide, divmod, dot, einsum, einsum_path, equal, exp,
        exp2, expand_dims, expm1, eye, floor, floor_divide, fmod, full, full_like, greater,
        greater_equal, isfinite, less, less_equal, linspace, log, log1p, logaddexp, logical_not,
        matmul, max, maximum, mean, min, minimum, moveaxis, multiply, negative, not_equal, ones,
        ones_like, outer, power, prod, remainder, reshape, sign, sin, sinh, sort, split, sqrt,
        square, squeeze, stack, std, subtract, sum, swapaxes, take, take_along_axis, tan, tanh,
        tile, transpose, tril, triu, var, zeros, zeros_like, where_ as "where", absolute, acos,
        acosh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_count, bitwise_invert,
        bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, copysign,
        deg2rad, degrees, fabs, float_power, fmax, fmin, frexp, heaviside, hypot, i0, invert,
        isinf, isnan, isneginf, isposinf, ldexp, left_shift, log2, log10, logaddexp2, logical_and,
        logical_or, logical_xor, nan_to_num, nextafter, positive, pow, r#mod as "mod", rad2deg,
        radians, reciprocal, right_shift, rint, round, signbit, sinc, true_divide, trunc, append,
        array_split, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, column_stack, concat,
        diag, diag_indices, diagflat, diagonal, diff, dsplit, dstack, ediff1d, empty, empty_like,
        flip, fliplr, flipud, hsplit, hstack, identity, indices, matrix_transpose, meshgrid, ndim,
        permute_dims, ravel, repeat, roll, rot90, shape, size, trace, tri, tril_indices,
        tril_indices_from, triu_indices, triu_indices_from, unstack, vander, vsplit, vstack,
        allclose, array_equal, array_equiv, digitize, inner, interp, isclose, kron, matvec,
        polyval, searchsorted, select, tensordot, trapezoid, vdot, vecdot, vecmat, all, amax, amin,
        any, average, count_nonzero, cumulative_prod, cumulative_sum, median, nanargmax,
        nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar,
        percentile, ptp, quantile, cross, bartlett, blackman, hamming, hanning, kaiser, gcd, lcm,
        modf, bincount, isin, unravel_index, array, asarray, astype, copy, diag_indices_from,
        geomspace, logspace, promote_types, result_type, rollaxis, convolve, correlate, polyadd,
        polyder, polyint, polymul, polysub, argwhere, corrcoef, cov, flatnonzero, gradient,
        nonzero, unwrap, pad, resize, spacing, isdtype, issubdtype, nanmedian, nanpercentile, nanquantile, angle, conj, conjugate, imag, iscomplex, iscomplexobj, isreal, isrealobj,
        real);
    let mut lax = have!(oxla::lax: abs, acos, acosh, add, argmax, argmin, asin, asinh,
        associative_scan, atan, atan2, atanh, bessel_i0e, bessel_i1e, bitcast_convert_type,
        broadcast, broadcast_in_dim, cbrt, ceil, clamp, clz, concatenate, cond,
        conv_dimension_numbers, conv_general_dilated, convert_element_type, cos, cosh,
        cumlogsumexp, cummax, cummin, cumprod, cumsum, digamma, div, dot_general,
        dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_index_in_dim,
        dynamic_update_slice, dynamic_update_slice_in_dim, eq, erf, erf_inv, erfc, exp, exp2,
        expand_dims, expm1, floor, fori_loop, gather, ge, gt, index_in_dim, index_take,
        integer_pow, iota, is_finite, le, lgamma, log, log1p, logistic, lt, map, max, min, mul, ne,
        neg, nextafter, pad, polygamma, population_count, pow, reduce, reduce_and, reduce_max,
        reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_window, rem, reshape, rev, round,
        rsqrt, scan, scatter, select_n, shift_left, shift_right_arithmetic, shift_right_logical,
        sign, sin, sinh, slice, slice_in_dim, sort, split, sqrt, square, squeeze, stop_gradient,
        sub, switch, tan, tanh, top_k, transpose, while_loop, and as "bitwise_and",
        or as "bitwise_or", not as "bitwise_not", xor as "bitwise_xor",
        DotDimensionNumbers, ConvDimensionNumbers as "ConvGeneralDilatedDimensionNumbers",
        Precision as "PrecisionLike", batch_matmul, broadcast_to_rank, broadcasted_iota, collapse,
        conv, conv_with_general_padding, dot, full, full_like, optimization_barrier,
        padtype_to_pads, reciprocal, scatter_add, scatter_max, scatter_min, scatter_mul,
        scatter_sub, select, sort_key_val, stack, tile, unstack, complex, conj, imag, real,
        approx_max_k, approx_min_k, broadcast_like, conv_general_dilated_local,
        conv_general_dilated_patches, conv_general_permutations, conv_general_shape_tuple,
        conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple, dtype, empty, mulhi,
        reduce_window_shape_tuple, reduce_xor, composite, platform_dependent, ragged_dot,
        ragged_dot_general, scaled_dot, scatter_apply,
        shape_as_value, zeta, igamma, igammac, igamma_grad_a, random_gamma_grad, fft, betainc,
        reduce_precision, custom_linear_solve, custom_root, rng_bit_generator, rng_uniform);
    lax.extend(have!(oxla::numpy: broadcast_shapes));
    lax.extend(
        have!(oxla::sharding::collectives: all_gather, all_to_all, axis_index,
        axis_size, pbroadcast, pcast, pmax, pmean, pmin, ppermute, pshuffle, psum, psum_scatter,
        pswapaxes),
    );
    lax.extend(have!(oxla: with_sharding_constraint));
    let nn = have!(oxla_nn: celu, dot_product_attention, elu, gelu, glu, hard_sigmoid,
        hard_silu, hard_swish, hard_tanh, identity, leaky_relu, log1mexp, log_sigmoid,
        log_softmax, logmeanexp, logsumexp, mish, one_hot, relu, relu6, selu, sigmoid, silu,
        soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid, squareplus, standardize, swish,
        tanh);
    let random = have!(oxla::random: bernoulli, bits, categorical, choice, fold_in, gumbel,
        normal, permutation, randint, split, truncated_normal, uniform, cauchy,
        double_sided_maxwell, exponential, geometric, laplace, logistic, lognormal, maxwell, pareto,
        rademacher, rayleigh, triangular, wald, weibull_min, PRNGKey, clone, key, key_data,
        key_dtype, key_impl, wrap_key_data, ball, beta, chisquare, dirichlet, f, gamma,
        generalized_normal, loggamma, multivariate_normal, orthogonal, t, binomial, multinomial,
        poisson);
    let fft = have!(oxla::numpy::fft: fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2,
        ifftn, ifftshift, ihfft, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn);
    let linalg = have!(oxla::numpy::linalg: cholesky, cond, cross, det, diagonal, eig, eigh,
        eigvals, eigvalsh, inv, lstsq, matmul, matrix_norm, matrix_power, matrix_rank,
        matrix_transpose, multi_dot, norm, outer, pinv, qr, slogdet, solve, svd, svdvals,
        tensordot, tensorinv, tensorsolve, trace, vecdot, vector_norm);
    let namespace = |jax, have, excluded, floor| Namespace {
        jax,
        have,
        excluded,
        floor,
    };
    vec![
        namespace("jax.numpy", numpy, NUMPY_EXCLUDED, 331),
        namespace("jax.lax", lax, &[], 197),
        namespace("jax.nn", nn, NN_EXCLUDED, 32),
        namespace("jax.random", random, &[], 47),
        namespace("jax.numpy.linalg", linalg, &[], 31),
        namespace("jax.numpy.fft", fft, &[], 18),
    ]
}

#[test]
fn oxla_covers_jax_api_names_at_least_to_each_floor() {
    let names = crate::reference::script("api_names.py");
    let mut table = vec![
        "| namespace | JAX's names | excluded | in oxla | coverage |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    let mut failures = Vec::new();
    for ns in namespaces() {
        let jax: BTreeSet<&str> = names[ns.jax]
            .as_array()
            .unwrap_or_else(|| panic!("api_names.py lists no {}", ns.jax))
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        let have: BTreeSet<&str> = ns.have.iter().copied().collect();
        for name in have.iter().chain(ns.excluded.iter().map(|(n, _)| n)) {
            if !jax.contains(name) {
                failures.push(format!(
                    "{}.{name} is listed but JAX has no such name",
                    ns.jax
                ));
            }
        }
        let excluded: BTreeSet<&str> = ns.excluded.iter().map(|(n, _)| *n).collect();
        let counted = jax.len() - excluded.len();
        let covered = have.len();
        let missing: Vec<&str> = jax
            .iter()
            .filter(|n| !have.contains(*n) && !excluded.contains(*n))
            .copied()
            .collect();
        table.push(format!(
            "| `{}` | {} | {} | {covered} | {:.0}% |",
            ns.jax,
            jax.len(),
            excluded.len(),
            100.0 * covered as f64 / counted.max(1) as f64
        ));
        println!(
            "{} missing ({}): {}",
            ns.jax,
            missing.len(),
            missing.join(" ")
        );
        if covered < ns.floor {
            failures.push(format!(
                "{} covers {covered} names, below its floor of {}",
                ns.jax, ns.floor
            ));
        }
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
