//! [`Conv`]: a convolution over any number of spatial axes, as Flax's
//! `nn.Conv`, and the code every convolution layer's forward pass shares.

use oxla::Array;
use oxla::lax::{self, ConvOptions};
use oxla::random::{IntoKey, Key};

use oxla::lax::Precision;

use super::ConvInit;
use super::geometry::{Batched, Layout, add_bias, per_axis, spatial_rank};
use super::mask::{KernelMask, masked, set_mask};
use super::padding::ConvPadding;
use crate::layer_input_error;
use crate::norm_stats::constructor_error;

/// A convolution of `[batch..., *spatial, in_features]` inputs (1, 2, 3 or
/// more spatial axes; no batch axis or several, as Flax's) with a
/// `[*window, in_features / feature_group_count, features]` kernel plus a
/// bias, as Flax's `nn.Conv`: LeCun normal kernel, zero bias, SAME padding,
/// strides and dilations 1 by default. Strides and dilations hold one value
/// per spatial axis, or one for all (Flax's int); empty means 1.
///
/// ```
/// use oxla_nn::{Conv, ConvPadding};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // 1-D over [batch, length, features]: 4 features in 2 groups, causal.
/// let conv = Conv::grouped(Key::new(0), 4, 6, &[3], 2)
///     .with_kernel_dilation(&[2])
///     .with_padding(ConvPadding::Causal);
/// assert_eq!(conv.kernel.shape(), &[3, 2, 6]);
/// let x = jnp::ones(&[2, 9, 4], DType::F32);
/// assert_eq!(conv.apply(&x).shape(), &[2, 9, 6]);
/// // 3-D, strided; an unbatched input keeps no batch axis.
/// let conv = Conv::new(Key::new(1), 2, 8, &[3, 3, 3]).with_strides(&[2]);
/// assert_eq!(conv.apply(&jnp::ones(&[4, 6, 6, 2], DType::F32)).shape(), &[2, 3, 3, 8]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Conv {
    /// `[*window, in_features / feature_group_count, features]`.
    pub kernel: Array,
    /// `[features]`, or `None` without bias.
    pub bias: Option<Array>,
    /// The stride along each spatial axis.
    #[pytree(static)]
    pub strides: Vec<i64>,
    /// Flax's padding modes.
    #[pytree(static)]
    pub padding: ConvPadding,
    /// The input's dilation along each spatial axis (a transposed
    /// convolution's stride; JAX takes it with explicit padding only).
    #[pytree(static)]
    pub input_dilation: Vec<i64>,
    /// The kernel's dilation along each spatial axis (atrous convolution).
    #[pytree(static)]
    pub kernel_dilation: Vec<i64>,
    /// The number of groups the input features split into, each convolved
    /// with its own `features / feature_group_count` output features.
    #[pytree(static)]
    pub feature_group_count: i64,
    /// A fixed mask multiplied into the kernel (Flax's `mask`), or none.
    #[pytree(static)]
    pub mask: Option<KernelMask>,
    /// The convolution's precision on accelerators (Flax's `precision`);
    /// `None` takes `oxla::config::default_matmul_precision`.
    #[pytree(static)]
    pub precision: Option<Precision>,
}

impl Conv {
    /// A convolution of `in_features` into `features` with a `kernel_size`
    /// window (its length the number of spatial axes), Flax's defaults.
    #[track_caller]
    pub fn new(key: impl IntoKey, in_features: i64, features: i64, kernel_size: &[i64]) -> Conv {
        Conv::with_init(
            key,
            in_features,
            features,
            kernel_size,
            1,
            &ConvInit::default(),
        )
    }

    /// [`Conv::new`] in `feature_group_count` groups (Flax's
    /// `feature_group_count`); a layer carrying an error (reported by
    /// `apply`) when they do not divide both feature counts.
    #[track_caller]
    pub fn grouped(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        feature_group_count: i64,
    ) -> Conv {
        Conv::with_init(
            key,
            in_features,
            features,
            kernel_size,
            feature_group_count,
            &ConvInit::default(),
        )
    }

    /// A grouped convolution with parameters drawn as `init` says.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        feature_group_count: i64,
        init: &ConvInit,
    ) -> Conv {
        let key: Key = key.into_key();
        let problem = if kernel_size.is_empty() {
            Some("the window needs at least one spatial axis".to_string())
        } else if feature_group_count <= 0
            || in_features % feature_group_count != 0
            || features % feature_group_count != 0
        {
            Some(format!(
                "{feature_group_count} feature groups do not divide {in_features} input \
                 and {features} output features"
            ))
        } else {
            None
        };
        let (kernel, bias) = match problem {
            Some(message) => {
                let e = constructor_error("Conv", &message);
                (e.clone(), Some(e))
            }
            None => {
                let mut shape = kernel_size.to_vec();
                shape.extend([in_features / feature_group_count, features]);
                init.draw(key, &shape, features)
            }
        };
        Conv {
            kernel,
            bias,
            strides: Vec::new(),
            padding: ConvPadding::Same,
            input_dilation: Vec::new(),
            kernel_dilation: Vec::new(),
            feature_group_count,
            mask: None,
            precision: None,
        }
    }

    /// The same layer with other strides.
    pub fn with_strides(mut self, strides: &[i64]) -> Conv {
        self.strides = strides.to_vec();
        self
    }

    /// The same layer with other padding (a [`ConvPadding`] or a
    /// `lax::Padding`).
    pub fn with_padding(mut self, padding: impl Into<ConvPadding>) -> Conv {
        self.padding = padding.into();
        self
    }

    /// The same layer with another input dilation.
    pub fn with_input_dilation(mut self, input_dilation: &[i64]) -> Conv {
        self.input_dilation = input_dilation.to_vec();
        self
    }

    /// The same layer with another kernel dilation.
    pub fn with_kernel_dilation(mut self, kernel_dilation: &[i64]) -> Conv {
        self.kernel_dilation = kernel_dilation.to_vec();
        self
    }

    /// The same layer with its kernel masked by `mask` (Flax's `mask`, of
    /// the kernel's shape) at every `apply`; a mask that is not concrete
    /// leaves a layer carrying the error.
    #[track_caller]
    pub fn with_mask(mut self, mask: &Array) -> Conv {
        set_mask(&mut self.kernel, &mut self.mask, mask);
        self
    }

    /// The same layer with another precision (Flax's `precision`).
    pub fn with_precision(mut self, precision: Option<Precision>) -> Conv {
        self.precision = precision;
        self
    }

    /// The convolution of `x` `[batch..., *spatial, in_features]`: `[batch...,
    /// *out_spatial, features]`, or an error naming the layer, `x`'s type
    /// and the caller's line when `x` does not fit the kernel.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = crate::own_error(self) {
            return e;
        }
        convolve(
            "Conv",
            x,
            &self.kernel,
            self.bias.as_ref(),
            &self.hyper_parameters(),
        )
    }

    fn hyper_parameters(&self) -> HyperParameters<'_> {
        HyperParameters {
            strides: &self.strides,
            padding: &self.padding,
            input_dilation: &self.input_dilation,
            kernel_dilation: &self.kernel_dilation,
            weights: Weights::Shared {
                feature_group_count: self.feature_group_count,
            },
            mask: self.mask.as_ref(),
            precision: self.precision,
        }
    }
}

/// How a convolution's kernel is laid out over the output positions.
#[derive(Clone, Copy)]
pub(super) enum Weights<'a> {
    /// One `[*window, in / groups, out]` kernel for every position
    /// (`lax::conv_general_dilated`).
    Shared {
        /// The number of feature groups.
        feature_group_count: i64,
    },
    /// A kernel per output position, `[*out_spatial, prod(window) · in,
    /// out]` (`lax::conv_general_dilated_local`).
    Local {
        /// The window's size per spatial axis.
        window: &'a [i64],
    },
}

/// A convolution's hyper-parameters, as [`Conv`] holds them.
pub(super) struct HyperParameters<'a> {
    pub(super) strides: &'a [i64],
    pub(super) padding: &'a ConvPadding,
    pub(super) input_dilation: &'a [i64],
    pub(super) kernel_dilation: &'a [i64],
    pub(super) weights: Weights<'a>,
    pub(super) mask: Option<&'a KernelMask>,
    pub(super) precision: Option<Precision>,
}

/// Flax's `_Conv.__call__` with shared weights: `x` `[batch..., *spatial,
/// features]` with its batch axes flattened, padded as `padding` says,
/// convolved with `kernel` `[*window, in / groups, out]` by
/// `lax::conv_general_dilated`, plus `bias`; errors name `layer`'s `apply`.
#[track_caller]
pub(super) fn convolve(
    layer: &str,
    x: &Array,
    kernel: &Array,
    bias: Option<&Array>,
    hyper: &HyperParameters<'_>,
) -> Array {
    match try_convolve(layer, x, kernel, bias, hyper) {
        Ok(y) | Err(y) => y,
    }
}

#[track_caller]
fn try_convolve(
    layer: &str,
    x: &Array,
    kernel: &Array,
    bias: Option<&Array>,
    hyper: &HyperParameters<'_>,
) -> Result<Array, Array> {
    let kernel_shape = kernel.shape_or_empty();
    let (spatial, window, in_features) = match hyper.weights {
        Weights::Shared {
            feature_group_count,
        } => {
            let spatial = spatial_rank(layer, kernel, x)?;
            let window = kernel_shape[..spatial].to_vec();
            (spatial, window, kernel_shape[spatial] * feature_group_count)
        }
        Weights::Local { window } => {
            let spatial = window.len();
            let patch: i64 = window.iter().product();
            if kernel_shape.len() != spatial + 2 || patch == 0 || kernel_shape[spatial] % patch != 0
            {
                return Err(layer_input_error(
                    layer,
                    x,
                    &format!(
                        "the kernel {kernel_shape:?} is not [*out_spatial, {patch}·in, out] for a \
                         window {window:?}"
                    ),
                ));
            }
            (spatial, window.to_vec(), kernel_shape[spatial] / patch)
        }
    };
    let kernel = masked(layer, x, kernel, hyper.mask)?;
    let batched = Batched::of(layer, x, spatial, in_features)?;
    let strides = per_axis(layer, x, "strides", hyper.strides, spatial)?;
    let input_dilation = per_axis(layer, x, "input dilations", hyper.input_dilation, spatial)?;
    let kernel_dilation = per_axis(layer, x, "kernel dilations", hyper.kernel_dilation, spatial)?;
    let dilated: Vec<i64> = window
        .iter()
        .zip(&kernel_dilation)
        .map(|(&k, &d)| (k - 1) * d + 1)
        .collect();
    let (input, padding) = hyper
        .padding
        .for_conv(&batched.x, &dilated, &input_dilation)
        .map_err(|message| layer_input_error(layer, x, &message))?;
    let layout = Layout::channels_last(spatial);
    let y = match hyper.weights {
        Weights::Shared {
            feature_group_count,
        } => lax::conv_general_dilated(
            &input,
            &kernel,
            &strides,
            &padding,
            layout.strings(),
            &ConvOptions {
                lhs_dilation: input_dilation,
                rhs_dilation: kernel_dilation,
                feature_group_count,
                precision: hyper.precision,
                ..ConvOptions::default()
            },
        ),
        Weights::Local { window } => {
            let window_sizes = (window, &kernel_dilation[..], &dilated[..]);
            let out_spatial =
                output_spatial(&input, window_sizes, &strides, &padding, &input_dilation);
            if out_spatial[..] != kernel_shape[..spatial] {
                return Err(layer_input_error(
                    layer,
                    x,
                    &format!(
                        "the kernel {kernel_shape:?} holds weights for output positions {:?}, \
                         but this input has output positions {out_spatial:?}",
                        &kernel_shape[..spatial]
                    ),
                ));
            }
            lax::conv_general_dilated_local(
                &input,
                &kernel,
                &strides,
                &padding,
                window,
                Some(&input_dilation),
                Some(&kernel_dilation),
                Some(layout.strings()),
                hyper.precision,
            )
        }
    };
    Ok(batched.restore(add_bias(y, bias)))
}

/// The output positions (spatial sizes) of a convolution of `input`
/// `[batch, *spatial, in]` by `window` with `kernel_dilation` (whose
/// dilated sizes are `dilated`), as `lax::conv_general_dilated` sizes its
/// output: `lax::reduce_window_shape_tuple`'s arithmetic.
pub(super) fn output_spatial(
    input: &Array,
    (window, kernel_dilation, dilated): (&[i64], &[i64], &[i64]),
    strides: &[i64],
    padding: &lax::Padding,
    input_dilation: &[i64],
) -> Vec<i64> {
    let shape = input.shape_or_empty();
    let spatial = &shape[1..shape.len() - 1];
    let dilated_sizes: Vec<i64> = spatial
        .iter()
        .zip(input_dilation)
        .map(|(&n, &d)| if n == 0 { 0 } else { (n - 1) * d + 1 })
        .collect();
    let pairs = padding.pairs(&dilated_sizes, dilated, strides);
    lax::reduce_window_shape_tuple(
        spatial,
        window,
        strides,
        &pairs,
        Some(input_dilation),
        Some(kernel_dilation),
    )
    .into_iter()
    .map(|n| n.max(0))
    .collect()
}
