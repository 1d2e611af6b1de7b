//! [`Conv2d`]: a 2-D convolution over NHWC images, as Flax's `nn.Conv`.

use oxla::DType;

use super::expect_features;
use super::initializers::{self, Initializer};
use oxla::Array;
use oxla::lax::{self, ConvOptions, Padding};
use oxla::random::{IntoKey, Key, split2};

/// A 2-D convolution of `[batch, height, width, in_channels]` images with a
/// `[kh, kw, in_channels, out_channels]` kernel (HWIO) plus a bias, as
/// Flax's `nn.Conv` (LeCun normal kernel, zero bias, SAME padding, stride 1
/// by default).
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
        let key: Key = key.into_key();
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
        let key: Key = key.into_key();
        let (kernel_key, bias_key) = split2(key);
        let shape = [kernel_size[0], kernel_size[1], in_channels, out_channels];
        Conv2d {
            kernel: kernel_init.init(kernel_key, &shape, dtype),
            bias: bias_init.map(|init| init.init(bias_key, &[out_channels], dtype)),
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

    /// The convolution of `x` `[batch, height, width, in_channels]`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        let in_channels = self.kernel.shape_or_empty().get(2).copied().unwrap_or(0);
        if let Err(e) = expect_features("Conv2d", x, in_channels) {
            return e;
        }
        let y = lax::conv_general_dilated(
            x,
            &self.kernel,
            &self.strides,
            &self.padding,
            ("NHWC", "HWIO", "NHWC"),
            &ConvOptions::default(),
        );
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }
}
