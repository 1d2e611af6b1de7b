//! Convolution layers in Flax linen's conventions: [`Conv`] (Flax's
//! `nn.Conv`, any number of spatial axes), [`ConvTranspose`] (Flax's
//! `nn.ConvTranspose`), [`ConvLocal`] (Flax's `nn.ConvLocal`, unshared
//! weights) and [`Conv2d`], the 2-D convolution with fixed-size fields,
//! which runs [`Conv`]'s code; [`KernelMask`] is Flax's `mask` of each. Inputs are channels last,
//! `[batch..., *spatial, features]` (no batch axis, or several, as Flax
//! allows); kernels are `[*window, in, out]`; [`ConvPadding`] holds Flax's
//! padding modes.

mod conv2d;
mod general;
mod geometry;
mod local;
mod mask;
mod padding;
mod transpose;

pub use conv2d::Conv2d;
pub use general::Conv;
pub use local::{ConvLocal, ConvLocalGeometry};
pub use mask::KernelMask;
pub use padding::ConvPadding;
pub use transpose::ConvTranspose;

use oxla::DType;

use super::initializers::{self, Initializer};

/// How a convolution's constructor draws its parameters: Flax's
/// `kernel_init`, `bias_init` (`None`: no bias, Flax's `use_bias=False`)
/// and `param_dtype`. The default is Flax's: LeCun normal kernel (fan-in
/// over the window times the input features of a group), zero bias, f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConvInit {
    /// Draws the kernel.
    pub kernel_init: Initializer,
    /// Draws the bias, or `None` for a layer without bias.
    pub bias_init: Option<Initializer>,
    /// The parameters' dtype.
    pub dtype: DType,
}

impl Default for ConvInit {
    fn default() -> Self {
        ConvInit {
            kernel_init: initializers::lecun_normal(),
            bias_init: Some(initializers::zeros()),
            dtype: DType::F32,
        }
    }
}

impl ConvInit {
    /// The kernel of `shape` and the bias of `[features]` drawn from `key`
    /// (split in two, as the other layers split theirs).
    fn draw(
        &self,
        key: oxla::random::Key,
        shape: &[i64],
        features: i64,
    ) -> (oxla::Array, Option<oxla::Array>) {
        self.draw_shaped(key, shape, &[features])
    }

    /// The kernel of `shape` and the bias of `bias_shape` drawn from `key`.
    fn draw_shaped(
        &self,
        key: oxla::random::Key,
        shape: &[i64],
        bias_shape: &[i64],
    ) -> (oxla::Array, Option<oxla::Array>) {
        let (kernel_key, bias_key) = oxla::random::split2(key);
        (
            self.kernel_init.init(kernel_key, shape, self.dtype),
            self.bias_init
                .map(|init| init.init(bias_key, bias_shape, self.dtype)),
        )
    }
}
