//! What the convolution layers' `apply` shares: the layout of a
//! channels-last convolution, per-axis hyper-parameters broadcast from one
//! value as Flax's, and Flax's batch axes (none, or several flattened into
//! one around the convolution).

use oxla::Array;
use oxla::lax::ConvLayout;
use oxla::numpy as jnp;

use crate::{expect_features, layer_input_error};

/// Letters naming spatial axes in layout strings (any but `N`, `C`, `I`,
/// `O`), the usual `D`, `H`, `W` last.
const SPATIAL_LETTERS: &str = "ABEFGJKLMPQRSTUVXYZDHW";

/// The layout strings of a channels-last convolution with `spatial` axes:
/// input and output `N` + spatial + `C`, kernel spatial + `IO` (Flax's
/// `_conv_dimension_numbers`; `NHWC`, `HWIO`, `NHWC` in 2-D).
pub(super) struct Layout {
    lhs: String,
    rhs: String,
}

impl Layout {
    /// The layout of `spatial` spatial axes (at most 22).
    pub(super) fn channels_last(spatial: usize) -> Layout {
        let letters =
            &SPATIAL_LETTERS[SPATIAL_LETTERS.len() - spatial.min(SPATIAL_LETTERS.len())..];
        Layout {
            lhs: format!("N{letters}C"),
            rhs: format!("{letters}IO"),
        }
    }

    /// The strings as `lax` takes them.
    pub(super) fn strings(&self) -> ConvLayout<'_> {
        (&self.lhs, &self.rhs, &self.lhs)
    }
}

/// The spatial rank of a kernel `[*window, in, out]`, or the error of
/// `layer`'s `apply` on `x` when it has no window axis.
#[track_caller]
pub(super) fn spatial_rank(layer: &str, kernel: &Array, x: &Array) -> Result<usize, Array> {
    let rank = kernel.ndim_or_zero();
    if rank < 3 || rank - 2 > SPATIAL_LETTERS.len() {
        return Err(layer_input_error(
            layer,
            x,
            &format!(
                "the kernel {:?} is not [*window, in, out] with 1 to {} window axes",
                kernel.shape_or_empty(),
                SPATIAL_LETTERS.len()
            ),
        ));
    }
    Ok(rank - 2)
}

/// One value per spatial axis: `values` as given, one value for every axis
/// (Flax's single int), or all ones when empty (Flax's `None`); else the
/// error of `layer`'s `apply` on `x` naming the hyper-parameter `what`.
#[track_caller]
pub(super) fn per_axis(
    layer: &str,
    x: &Array,
    what: &str,
    values: &[i64],
    spatial: usize,
) -> Result<Vec<i64>, Array> {
    per_axis_values(what, values, spatial).map_err(|message| layer_input_error(layer, x, &message))
}

/// [`per_axis`]'s values, or what is wrong with them.
pub(super) fn per_axis_values(
    what: &str,
    values: &[i64],
    spatial: usize,
) -> Result<Vec<i64>, String> {
    match values.len() {
        0 => Ok(vec![1; spatial]),
        1 => Ok(vec![values[0]; spatial]),
        n if n == spatial => Ok(values.to_vec()),
        n => Err(format!("{n} {what} {values:?} for {spatial} spatial axes")),
    }
}

/// An input with its batch axes flattened into one, as Flax's `Conv` and
/// `ConvTranspose` flatten them (an unbatched input gets a batch of one).
pub(super) struct Batched {
    /// `[batch, *spatial, features]`.
    pub(super) x: Array,
    /// The input's batch axes, when they were not exactly one.
    batch_axes: Option<Vec<i64>>,
}

impl Batched {
    /// `x` `[batch..., *spatial, features]` flattened to one batch axis,
    /// or the error of `layer`'s `apply` when `x` has fewer than
    /// `spatial + 1` axes or its last is not `features`.
    #[track_caller]
    pub(super) fn of(
        layer: &str,
        x: &Array,
        spatial: usize,
        features: i64,
    ) -> Result<Batched, Array> {
        let shape = match x.aval() {
            Ok(aval) => aval.shape.to_vec(),
            Err(e) => return Err(Array::error(e)),
        };
        if shape.len() < spatial + 1 {
            return Err(layer_input_error(
                layer,
                x,
                &format!(
                    "the layer takes inputs [batch..., {spatial} spatial axes, {features} features] \
                     of rank {} or more",
                    spatial + 1
                ),
            ));
        }
        expect_features(layer, x, features)?;
        let batch_count = shape.len() - spatial - 1;
        if batch_count == 1 {
            return Ok(Batched {
                x: x.clone(),
                batch_axes: None,
            });
        }
        let batch_axes = shape[..batch_count].to_vec();
        let mut flat = vec![batch_axes.iter().product()];
        flat.extend_from_slice(&shape[batch_count..]);
        Ok(Batched {
            x: jnp::reshape(x, &flat),
            batch_axes: Some(batch_axes),
        })
    }

    /// The spatial sizes of the flattened input.
    pub(super) fn spatial_sizes(&self) -> Vec<i64> {
        let shape = self.x.shape_or_empty();
        shape
            .get(1..shape.len().saturating_sub(1))
            .unwrap_or_default()
            .to_vec()
    }

    /// The output `y` `[batch, *spatial, features]` with the input's batch
    /// axes restored.
    pub(super) fn restore(&self, y: Array) -> Array {
        match &self.batch_axes {
            None => y,
            Some(_) if y.check().is_err() => y,
            Some(batch_axes) => {
                let mut shape = batch_axes.clone();
                shape.extend_from_slice(y.shape_or_empty().get(1..).unwrap_or_default());
                jnp::reshape(&y, &shape)
            }
        }
    }
}

/// `y + bias` over the last axis, or `y` without bias.
pub(super) fn add_bias(y: Array, bias: Option<&Array>) -> Array {
    match bias {
        Some(b) => y + b,
        None => y,
    }
}
