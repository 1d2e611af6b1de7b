//! [`ConvTranspose`]: the transposed ("fractionally strided") convolution
//! over any number of spatial axes, as Flax's `nn.ConvTranspose`.

use oxla::Array;
use oxla::lax::{self, Precision};
use oxla::random::{IntoKey, Key};

use super::ConvInit;
use super::geometry::{Batched, Layout, add_bias, per_axis, spatial_rank};
use super::mask::{KernelMask, masked, set_mask};
use super::padding::{ConvPadding, wrap_periodically};
use crate::layer_input_error;

/// A transposed convolution of `[batch..., *spatial, in_features]` inputs
/// with a `[*window, in_features, features]` kernel (`[*window, features,
/// in_features]` with `transpose_kernel`) plus a bias, as Flax's
/// `nn.ConvTranspose` over `lax::conv_transpose`: the input dilated by the
/// strides, then convolved. LeCun normal kernel, zero bias, SAME padding,
/// strides and dilation 1 by default; padding SAME, VALID, CIRCULAR (the
/// output wrapped around a period of input size times stride) or pairs.
///
/// ```
/// use oxla_nn::{ConvPadding, ConvTranspose};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let up = ConvTranspose::new(Key::new(0), 3, 4, &[3, 3]).with_strides(&[2, 2]);
/// assert_eq!(up.kernel.shape(), &[3, 3, 3, 4]);
/// let x = jnp::ones(&[2, 5, 5, 3], DType::F32);
/// assert_eq!(up.apply(&x).shape(), &[2, 10, 10, 4]);            // SAME: size × stride
/// let up = up.with_padding(ConvPadding::Valid);
/// assert_eq!(up.apply(&x).shape(), &[2, 11, 11, 4]);            // (size - 1) × stride + window
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct ConvTranspose {
    /// `[*window, in_features, features]`, or `[*window, features,
    /// in_features]` with `transpose_kernel`.
    pub kernel: Array,
    /// `[features]`, or `None` without bias.
    pub bias: Option<Array>,
    /// The stride along each spatial axis (one for all, or empty for 1).
    #[pytree(static)]
    pub strides: Vec<i64>,
    /// SAME, VALID, CIRCULAR or pairs.
    #[pytree(static)]
    pub padding: ConvPadding,
    /// The kernel's dilation along each spatial axis (one for all, or
    /// empty for 1).
    #[pytree(static)]
    pub kernel_dilation: Vec<i64>,
    /// Flip the kernel's window and swap its feature axes (the gradient of
    /// a [`Conv`](super::Conv) with this kernel), as Flax's
    /// `transpose_kernel`.
    #[pytree(static)]
    pub transpose_kernel: bool,
    /// A fixed mask multiplied into the kernel (Flax's `mask`), or none.
    #[pytree(static)]
    pub mask: Option<KernelMask>,
    /// The precision on accelerators (Flax's `precision`).
    #[pytree(static)]
    pub precision: Option<Precision>,
}

impl ConvTranspose {
    /// A transposed convolution of `in_features` into `features` with a
    /// `kernel_size` window (its length the number of spatial axes),
    /// Flax's defaults.
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
    ) -> ConvTranspose {
        ConvTranspose::with_init(
            key,
            in_features,
            features,
            kernel_size,
            false,
            &ConvInit::default(),
        )
    }

    /// A transposed convolution with parameters drawn as `init` says, its
    /// kernel `[*window, features, in_features]` when `transpose_kernel`.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        transpose_kernel: bool,
        init: &ConvInit,
    ) -> ConvTranspose {
        let key: Key = key.into_key();
        let (kernel, bias) = if kernel_size.is_empty() {
            let e = crate::norm_stats::constructor_error(
                "ConvTranspose",
                "the window needs at least one spatial axis",
            );
            (e.clone(), Some(e))
        } else {
            let mut shape = kernel_size.to_vec();
            if transpose_kernel {
                shape.extend([features, in_features]);
            } else {
                shape.extend([in_features, features]);
            }
            init.draw(key, &shape, features)
        };
        ConvTranspose {
            kernel,
            bias,
            strides: Vec::new(),
            padding: ConvPadding::Same,
            kernel_dilation: Vec::new(),
            transpose_kernel,
            mask: None,
            precision: None,
        }
    }

    /// The same layer with other strides.
    pub fn with_strides(mut self, strides: &[i64]) -> ConvTranspose {
        self.strides = strides.to_vec();
        self
    }

    /// The same layer with other padding (a [`ConvPadding`] or a
    /// `lax::Padding`).
    pub fn with_padding(mut self, padding: impl Into<ConvPadding>) -> ConvTranspose {
        self.padding = padding.into();
        self
    }

    /// The same layer with another kernel dilation.
    pub fn with_kernel_dilation(mut self, kernel_dilation: &[i64]) -> ConvTranspose {
        self.kernel_dilation = kernel_dilation.to_vec();
        self
    }

    /// The same layer with its kernel masked by `mask` (Flax's `mask`, of
    /// the kernel's shape) at every `apply`; a mask that is not concrete
    /// leaves a layer carrying the error.
    #[track_caller]
    pub fn with_mask(mut self, mask: &Array) -> ConvTranspose {
        set_mask(&mut self.kernel, &mut self.mask, mask);
        self
    }

    /// The same layer with another precision (Flax's `precision`).
    pub fn with_precision(mut self, precision: Option<Precision>) -> ConvTranspose {
        self.precision = precision;
        self
    }

    /// The transposed convolution of `x` `[batch..., *spatial,
    /// in_features]`, or an error naming the layer, `x`'s type and the
    /// caller's line when `x` does not fit the kernel.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = crate::own_error(self) {
            return e;
        }
        match self.try_apply(x) {
            Ok(y) | Err(y) => y,
        }
    }

    #[track_caller]
    fn try_apply(&self, x: &Array) -> Result<Array, Array> {
        const LAYER: &str = "ConvTranspose";
        let spatial = spatial_rank(LAYER, &self.kernel, x)?;
        let kernel_shape = self.kernel.shape_or_empty();
        let in_features = kernel_shape[spatial + usize::from(self.transpose_kernel)];
        let batched = Batched::of(LAYER, x, spatial, in_features)?;
        let strides = per_axis(LAYER, x, "strides", &self.strides, spatial)?;
        let kernel_dilation =
            per_axis(LAYER, x, "kernel dilations", &self.kernel_dilation, spatial)?;
        let padding = self
            .padding
            .for_transpose(spatial)
            .map_err(|message| layer_input_error(LAYER, x, &message))?;
        let layout = Layout::channels_last(spatial);
        let kernel = masked(LAYER, x, &self.kernel, self.mask.as_ref())?;
        let mut y = lax::conv_transpose(
            &batched.x,
            &kernel,
            &strides,
            &padding,
            Some(&kernel_dilation),
            Some(layout.strings()),
            self.transpose_kernel,
            self.precision,
        );
        if self.padding == ConvPadding::Circular {
            let periods: Vec<i64> = batched
                .spatial_sizes()
                .iter()
                .zip(&strides)
                .map(|(n, s)| n * s)
                .collect();
            y = wrap_periodically(&y, &periods, self.transpose_kernel)
                .map_err(|message| layer_input_error(LAYER, x, &message))?;
        }
        Ok(batched.restore(add_bias(y, self.bias.as_ref())))
    }
}
