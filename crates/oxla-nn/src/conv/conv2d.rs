//! [`Conv2d`]: the 2-D convolution with fixed-size fields, run by
//! [`Conv`]'s code.

use oxla::lax::Padding;
use oxla::random::IntoKey;
use oxla::{Array, DType};

use super::general::{HyperParameters, Weights, convolve};
use super::{Conv, ConvInit, ConvPadding};
use crate::initializers::{self, Initializer};

/// A 2-D convolution of `[batch, height, width, in_channels]` images with a
/// `[kh, kw, in_channels, out_channels]` kernel (HWIO) plus a bias, as
/// Flax's `nn.Conv` (LeCun normal kernel, zero bias, SAME padding, stride 1
/// by default): [`Conv`] with two spatial axes, one group and no dilation
/// (`Conv::from(conv2d)` gives that layer).
///
/// ```
/// use oxla::lax::Padding;
/// use oxla_nn::Conv2d;
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let conv = Conv2d::new(Key::new(0), 3, 8, [3, 3]);
/// assert_eq!(conv.kernel.shape(), &[3, 3, 3, 8]);
/// let images = jnp::zeros(&[2, 16, 16, 3], DType::F32);   // NHWC
/// assert_eq!(conv.apply(&images).shape(), &[2, 16, 16, 8]);   // SAME padding
/// let conv = conv.with_strides([2, 2]);
/// assert_eq!(conv.apply(&images).shape(), &[2, 8, 8, 8]);
/// let conv = conv.with_strides([1, 1]).with_padding(Padding::Valid);
/// let y = conv.apply(&images);
/// assert_eq!(y.shape(), &[2, 14, 14, 8]);
/// assert!(y.to_vec::<f32>()?.iter().all(|&v| v == 0.0));     // zero images, zero bias
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Conv2d {
    /// `[kh, kw, in_channels, out_channels]`.
    pub kernel: Array,
    /// `[out_channels]`, or `None` without bias.
    pub bias: Option<Array>,
    /// Stride along height and width.
    #[pytree(static)]
    pub strides: [i64; 2],
    /// `Same`, `Valid` or explicit `(low, high)` pairs.
    #[pytree(static)]
    pub padding: Padding,
}

impl Conv2d {
    /// A convolution with a `kernel_size` window, stride 1, SAME padding and
    /// Flax's default initializers, f32.
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        in_channels: i64,
        out_channels: i64,
        kernel_size: [i64; 2],
    ) -> Conv2d {
        Conv2d::with_init(
            key,
            in_channels,
            out_channels,
            kernel_size,
            initializers::lecun_normal(),
            Some(initializers::zeros()),
            DType::F32,
        )
    }

    /// A convolution with the given initializers (`None`: no bias) and dtype.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_channels: i64,
        out_channels: i64,
        kernel_size: [i64; 2],
        kernel_init: Initializer,
        bias_init: Option<Initializer>,
        dtype: DType,
    ) -> Conv2d {
        let init = ConvInit {
            kernel_init,
            bias_init,
            dtype,
        };
        let conv = Conv::with_init(key, in_channels, out_channels, &kernel_size, 1, &init);
        Conv2d {
            kernel: conv.kernel,
            bias: conv.bias,
            strides: [1, 1],
            padding: Padding::Same,
        }
    }

    /// The same layer with other strides.
    pub fn with_strides(mut self, strides: [i64; 2]) -> Conv2d {
        self.strides = strides;
        self
    }

    /// The same layer with other padding.
    pub fn with_padding(mut self, padding: Padding) -> Conv2d {
        self.padding = padding;
        self
    }

    /// The convolution of `x` `[batch, height, width, in_channels]` (or
    /// unbatched, or with several batch axes, as [`Conv`]).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = crate::own_error(self) {
            return e;
        }
        let padding = ConvPadding::from(self.padding.clone());
        let hyper = HyperParameters {
            strides: &self.strides,
            padding: &padding,
            input_dilation: &[],
            kernel_dilation: &[],
            weights: Weights::Shared {
                feature_group_count: 1,
            },
            mask: None,
            precision: None,
        };
        convolve("Conv2d", x, &self.kernel, self.bias.as_ref(), &hyper)
    }
}

impl From<Conv2d> for Conv {
    fn from(conv: Conv2d) -> Conv {
        Conv {
            kernel: conv.kernel,
            bias: conv.bias,
            strides: conv.strides.to_vec(),
            padding: conv.padding.into(),
            input_dilation: Vec::new(),
            kernel_dilation: Vec::new(),
            feature_group_count: 1,
            mask: None,
            precision: None,
        }
    }
}
