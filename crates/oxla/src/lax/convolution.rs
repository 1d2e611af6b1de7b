//! `jax.lax`'s convolutions built on `conv_general_dilated`
//! (`conv_transpose`, `conv_general_dilated_patches`,
//! `conv_general_dilated_local`) and its shape arithmetic
//! (`conv_general_permutations`, `conv_shape_tuple`,
//! `conv_general_shape_tuple`, `conv_transpose_shape_tuple`), as JAX's
//! `lax/convolution.py` and `lax/other.py` compute them.

use super::{ConvLayout, ConvOptions, Padding, conv_dimension_numbers, conv_general_dilated};
use crate::array::Array;
use oxla_core::Precision;

use super::usage_error as usage;

/// JAX's default layout of a rank-`rank` convolution: `NC` + spatial,
/// `OI` + spatial, `NC` + spatial (`NCHW`, `OIHW`, `NCHW` in 2-D).
fn default_layout(rank: usize) -> (String, String) {
    let letters = &"HWDEFGJKL"[..rank.saturating_sub(2).min(9)];
    (format!("NC{letters}"), format!("OI{letters}"))
}

/// `lax.conv_general_permutations(dimension_numbers)`: where each layout
/// keeps its batch (or output feature), feature (or input feature) and
/// spatial dimensions, the spatial ones in the kernel's order.
pub fn conv_general_permutations(layout: ConvLayout<'_>) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let numbers = conv_dimension_numbers(layout);
    (
        numbers.lhs_spec.to_vec(),
        numbers.rhs_spec.to_vec(),
        numbers.out_spec.to_vec(),
    )
}

/// `lax.conv_shape_tuple(lhs_shape, rhs_shape, strides, pads,
/// batch_group_count)`: the output shape of an `NC...`/`OI...`
/// convolution.
#[track_caller]
pub fn conv_shape_tuple(
    lhs_shape: &[i64],
    rhs_shape: &[i64],
    strides: &[i64],
    padding: &Padding,
    batch_group_count: i64,
) -> crate::error::Result<Vec<i64>> {
    let spatial = lhs_shape.len().saturating_sub(2);
    if lhs_shape.len() < 2 || rhs_shape.len() != lhs_shape.len() || strides.len() != spatial {
        return Err(usage(
            "conv_shape_tuple",
            format!(
                "needs shapes of one rank (at least 2) and a stride per spatial dimension, got \
                 {lhs_shape:?}, {rhs_shape:?} and {strides:?}"
            ),
        ));
    }
    let pads = padding.pairs(&lhs_shape[2..], &rhs_shape[2..], strides);
    if pads.len() != spatial {
        return Err(usage(
            "conv_shape_tuple",
            format!("needs {spatial} padding pairs, got {}", pads.len()),
        ));
    }
    let mut out = Vec::with_capacity(lhs_shape.len());
    if batch_group_count > 1 && lhs_shape[0] % batch_group_count != 0 {
        return Err(usage(
            "conv_shape_tuple",
            format!(
                "the batch {} is not a multiple of batch_group_count {batch_group_count}",
                lhs_shape[0]
            ),
        ));
    }
    out.push(lhs_shape[0] / batch_group_count.max(1));
    out.push(rhs_shape[0]);
    for i in 0..spatial {
        let padded = lhs_shape[2 + i] + pads[i].0 + pads[i].1;
        if padded < 0 {
            return Err(usage(
                "conv_shape_tuple",
                format!("negative padded size {padded} in spatial dimension {i}"),
            ));
        }
        let size = (padded - rhs_shape[2 + i]).div_euclid(strides[i]) + 1;
        out.push(size.max(0));
    }
    Ok(out)
}

/// `shape` permuted to `perm`'s order (`np.take(shape, perm)`).
fn take(shape: &[i64], perm: &[i64]) -> Vec<i64> {
    perm.iter().map(|&p| shape[p as usize]).collect()
}

/// `shape` (in `perm`'s order) put back (`np.take(shape, np.argsort(perm))`).
fn untake(shape: &[i64], perm: &[i64]) -> Vec<i64> {
    let mut out = vec![0; shape.len()];
    for (i, &p) in perm.iter().enumerate() {
        out[p as usize] = shape[i];
    }
    out
}

/// An error unless `layout`'s strings are of the shapes' rank.
#[track_caller]
fn check_layout(
    function: &str,
    lhs_shape: &[i64],
    rhs_shape: &[i64],
    layout: ConvLayout<'_>,
) -> crate::error::Result<()> {
    let (l, r, o) = layout;
    if l.len() != lhs_shape.len() || r.len() != rhs_shape.len() || o.len() != lhs_shape.len() {
        return Err(usage(
            function,
            format!("the layout {layout:?} does not fit shapes {lhs_shape:?} and {rhs_shape:?}"),
        ));
    }
    Ok(())
}

/// `lax.conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides,
/// padding, dimension_numbers)`: the output shape of a convolution in
/// `layout`.
#[track_caller]
pub fn conv_general_shape_tuple(
    lhs_shape: &[i64],
    rhs_shape: &[i64],
    window_strides: &[i64],
    padding: &Padding,
    layout: ConvLayout<'_>,
) -> crate::error::Result<Vec<i64>> {
    check_layout("conv_general_shape_tuple", lhs_shape, rhs_shape, layout)?;
    let (lhs_perm, rhs_perm, out_perm) = conv_general_permutations(layout);
    let out = conv_shape_tuple(
        &take(lhs_shape, &lhs_perm),
        &take(rhs_shape, &rhs_perm),
        window_strides,
        padding,
        1,
    )?;
    Ok(untake(&out, &out_perm))
}

/// The (before, after) padding of one dimension of a transposed
/// convolution for a kernel of (dilated) size `k` and stride `s`: JAX's
/// `_conv_transpose_padding` of `SAME`, `VALID` or the forward
/// convolution's pair.
fn conv_transpose_padding(k: i64, s: i64, padding: &TransposePadding) -> (i64, i64) {
    let (pad_a, pad_len) = match padding {
        TransposePadding::Same => {
            let pad_len = k + s - 2;
            let pad_a = if s > k - 1 { k - 1 } else { (pad_len + 1) / 2 };
            (pad_a, pad_len)
        }
        TransposePadding::Valid => (k - 1, k + s - 2 + (k - s).max(0)),
    };
    (pad_a, pad_len - pad_a)
}

/// How [`conv_transpose`] pads: as the forward convolution with `SAME` or
/// `VALID` padding would, or explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TransposePadding {
    Same,
    Valid,
}

/// The explicit padding of a transposed convolution: `SAME`/`VALID` as
/// JAX's `_conv_transpose_padding` of each (dilated) kernel size and
/// stride, explicit pairs as given.
fn transpose_pads(padding: &Padding, kernel: &[i64], strides: &[i64]) -> Vec<(i64, i64)> {
    match padding {
        Padding::Explicit(pairs) => pairs.clone(),
        Padding::Same | Padding::Valid => {
            let mode = if *padding == Padding::Same {
                TransposePadding::Same
            } else {
                TransposePadding::Valid
            };
            kernel
                .iter()
                .zip(strides)
                .map(|(&k, &s)| conv_transpose_padding(k, s, &mode))
                .collect()
        }
    }
}

/// `lax.conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides,
/// padding, dimension_numbers)`: the output shape of [`conv_transpose`].
#[track_caller]
pub fn conv_transpose_shape_tuple(
    lhs_shape: &[i64],
    rhs_shape: &[i64],
    window_strides: &[i64],
    padding: &Padding,
    layout: ConvLayout<'_>,
) -> crate::error::Result<Vec<i64>> {
    check_layout("conv_transpose_shape_tuple", lhs_shape, rhs_shape, layout)?;
    let (lhs_perm, rhs_perm, out_perm) = conv_general_permutations(layout);
    let (lhs, rhs) = (take(lhs_shape, &lhs_perm), take(rhs_shape, &rhs_perm));
    let spatial = lhs.len() - 2;
    if window_strides.len() != spatial {
        return Err(usage(
            "conv_transpose_shape_tuple",
            format!("needs {spatial} strides, got {}", window_strides.len()),
        ));
    }
    let pads = transpose_pads(padding, &rhs[2..], window_strides);
    let mut out = vec![lhs[0], rhs[0]];
    for i in 0..spatial {
        let unpadded = (lhs[2 + i] - 1) * window_strides[i] - rhs[2 + i] + 2;
        out.push(unpadded + pads[i].0 + pads[i].1);
    }
    Ok(untake(&out, &out_perm))
}

/// `lax.conv_transpose(lhs, rhs, strides, padding, rhs_dilation,
/// dimension_numbers, transpose_kernel)`: the transposed ("fractionally
/// strided") convolution, as the gradient of a strided convolution: the
/// input dilated by `strides`, padded as JAX's `_conv_transpose_padding`
/// for `SAME`/`VALID` (explicit pairs as given). The layout defaults to
/// `NC`+spatial / `IO`... as JAX's (`NHWC`, `HWIO`, `NHWC` in 2-D);
/// `transpose_kernel` flips the kernel's spatial axes and swaps its
/// feature axes; `precision` is the convolution's (see [`ConvOptions`]).
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose(
    lhs: &Array,
    rhs: &Array,
    strides: &[i64],
    padding: &Padding,
    rhs_dilation: Option<&[i64]>,
    layout: Option<ConvLayout<'_>>,
    transpose_kernel: bool,
    precision: Option<Precision>,
) -> Array {
    let rank = lhs.ndim_or_zero();
    if rank < 2 || rank != rhs.ndim_or_zero() || rank > 5 && layout.is_none() {
        return Array::error(usage(
            "conv_transpose",
            format!(
                "needs operands of one rank, 2 to 5 without a layout, got shapes {:?} and {:?}",
                lhs.shape_or_empty(),
                rhs.shape_or_empty()
            ),
        ));
    }
    let defaults = [
        ("NC", "IO", "NC"),
        ("NHC", "HIO", "NHC"),
        ("NHWC", "HWIO", "NHWC"),
        ("NHWDC", "HWDIO", "NHWDC"),
    ];
    let layout = layout.unwrap_or(defaults[rank.clamp(2, 5) - 2]);
    let numbers = conv_dimension_numbers(layout);
    let rhs_shape = rhs.shape_or_empty();
    let kernel: Vec<i64> = numbers.rhs_spec[2..]
        .iter()
        .map(|&d| rhs_shape.get(d.max(0) as usize).copied().unwrap_or(0))
        .collect();
    let ones = vec![1; kernel.len()];
    let rhs_dilation = rhs_dilation.map_or(ones.clone(), <[i64]>::to_vec);
    let dilated: Vec<i64> = kernel
        .iter()
        .zip(&rhs_dilation)
        .map(|(&k, &r)| if k == 0 { 0 } else { (k - 1) * r + 1 })
        .collect();
    let pads = transpose_pads(padding, &dilated, strides);
    let rhs = if transpose_kernel {
        let spatial: Vec<i64> = numbers.rhs_spec[2..].to_vec();
        let flipped = super::rev(rhs, &spatial);
        crate::numpy::swapaxes(&flipped, numbers.rhs_spec[0], numbers.rhs_spec[1])
    } else {
        rhs.clone()
    };
    conv_general_dilated(
        lhs,
        &rhs,
        &ones,
        &Padding::Explicit(pads),
        layout,
        &ConvOptions {
            lhs_dilation: strides.to_vec(),
            rhs_dilation,
            precision,
            ..ConvOptions::default()
        },
    )
}

/// `lax.conv_general_dilated_patches(lhs, filter_shape, window_strides,
/// padding, lhs_dilation, rhs_dilation, dimension_numbers)`: each
/// output position's receptive field of `filter_shape` as features, a
/// grouped convolution with one-hot kernels as JAX's (the output feature
/// dimension holds `C · prod(filter_shape)` values, channel-major). The
/// layout defaults to `NC`+spatial; the kernel's layout only says where
/// the spatial dimensions go. `precision` is the convolution's (see
/// [`ConvOptions`]).
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated_patches(
    lhs: &Array,
    filter_shape: &[i64],
    window_strides: &[i64],
    padding: &Padding,
    lhs_dilation: Option<&[i64]>,
    rhs_dilation: Option<&[i64]>,
    layout: Option<ConvLayout<'_>>,
    precision: Option<Precision>,
) -> Array {
    let rank = lhs.ndim_or_zero();
    if rank < 2 || filter_shape.len() + 2 != rank {
        return Array::error(usage(
            "conv_general_dilated_patches",
            format!(
                "needs a filter shape for each of the {} spatial dimensions of {:?}, got {filter_shape:?}",
                rank.saturating_sub(2),
                lhs.shape_or_empty()
            ),
        ));
    }
    let (lhs_default, rhs_default) = default_layout(rank);
    let layout = layout.unwrap_or((&lhs_default, &rhs_default, &lhs_default));
    let numbers = conv_dimension_numbers(layout);
    let spatial_size: i64 = filter_shape.iter().product();
    let channels = lhs.shape_or_empty()[numbers.lhs_spec[1].max(0) as usize];
    let dtype = lhs.dtype_or_bool();
    let eye = crate::numpy::eye(spatial_size, dtype);
    let kernel = super::broadcast_in_dim(&eye, &[channels, spatial_size, spatial_size], &[1, 2]);
    let mut shape = vec![channels * spatial_size, 1];
    shape.extend_from_slice(filter_shape);
    let kernel = super::reshape(&kernel, &shape);
    // The kernel's (O, I) axes moved where the layout keeps them.
    let kernel = move_axes(
        &kernel,
        &[0, 1],
        &[numbers.rhs_spec[0], numbers.rhs_spec[1]],
    );
    let or_ones = |d: Option<&[i64]>| d.map_or_else(Vec::new, <[i64]>::to_vec);
    conv_general_dilated(
        lhs,
        &kernel,
        window_strides,
        padding,
        layout,
        &ConvOptions {
            lhs_dilation: or_ones(lhs_dilation),
            rhs_dilation: or_ones(rhs_dilation),
            feature_group_count: channels,
            precision,
            ..ConvOptions::default()
        },
    )
}

/// `lax.conv_general_dilated_local(lhs, rhs, window_strides, padding,
/// filter_shape, lhs_dilation, rhs_dilation, dimension_numbers)`: an
/// unshared ("locally connected") convolution, a different kernel at each
/// output position: `rhs` holds, per output position (its spatial
/// dimensions), `C · prod(filter_shape)` input features by the output
/// features, as JAX's. `precision` is the patches' convolution's and the
/// product's (see [`ConvOptions`]).
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated_local(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: &Padding,
    filter_shape: &[i64],
    lhs_dilation: Option<&[i64]>,
    rhs_dilation: Option<&[i64]>,
    layout: Option<ConvLayout<'_>>,
    precision: Option<Precision>,
) -> Array {
    let rank = lhs.ndim_or_zero();
    let (lhs_default, rhs_default) = default_layout(rank);
    let layout = layout.unwrap_or((&lhs_default, &rhs_default, &lhs_default));
    let patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        Some(layout),
        precision,
    );
    let numbers = conv_dimension_numbers(layout);
    let (out_spec, rhs_spec) = (&numbers.out_spec, &numbers.rhs_spec);
    let lhs_batch: Vec<i64> = out_spec[2..].to_vec();
    let mut order: Vec<usize> = (0..lhs_batch.len()).collect();
    order.sort_by_key(|&k| lhs_batch[k]);
    let rhs_batch: Vec<i64> = order.iter().map(|&k| rhs_spec[2 + k]).collect();
    let mut lhs_batch_sorted = lhs_batch.clone();
    lhs_batch_sorted.sort_unstable();
    let out = super::dot_general_with_precision(
        &patches,
        rhs,
        (
            (&[out_spec[1]], &[rhs_spec[1]]),
            (&lhs_batch_sorted, &rhs_batch),
        ),
        None,
        precision,
    );
    let rank = out.ndim_or_zero() as i64;
    move_axes(&out, &[rank - 2, rank - 1], &[out_spec[0], out_spec[1]])
}

/// `x` with its axes `source` moved to `destination` (numpy's
/// `moveaxis` of several axes; all non-negative and distinct).
fn move_axes(x: &Array, source: &[i64], destination: &[i64]) -> Array {
    let rank = x.ndim_or_zero() as i64;
    let mut order: Vec<i64> = (0..rank).filter(|d| !source.contains(d)).collect();
    let mut moves: Vec<(i64, i64)> = destination
        .iter()
        .copied()
        .zip(source.iter().copied())
        .collect();
    moves.sort_unstable();
    for (dst, src) in moves {
        order.insert((dst as usize).min(order.len()), src);
    }
    super::transpose(x, &order)
}
