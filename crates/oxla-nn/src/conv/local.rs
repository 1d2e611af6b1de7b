//! [`ConvLocal`]: a locally connected ("unshared") convolution, a kernel
//! of its own at every output position, as Flax's `nn.ConvLocal`.

use oxla::lax::Precision;
use oxla::random::{IntoKey, Key};
use oxla::{Array, numpy as jnp};

use super::ConvInit;
use super::general::{HyperParameters, Weights, convolve, output_spatial};
use super::geometry::per_axis_values;
use super::mask::{KernelMask, set_mask};
use super::padding::ConvPadding;
use crate::norm_stats::constructor_error;

/// The geometry a [`ConvLocal`] is built for (its kernel's shape depends
/// on it): strides, padding, input and kernel dilation per spatial axis
/// (one value for all, or empty for 1), as Flax's `ConvLocal` takes
/// them. The default is Flax's: stride 1, SAME, no dilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvLocalGeometry {
    /// The stride along each spatial axis.
    pub strides: Vec<i64>,
    /// Flax's padding modes.
    pub padding: ConvPadding,
    /// The input's dilation along each spatial axis.
    pub input_dilation: Vec<i64>,
    /// The kernel's dilation along each spatial axis.
    pub kernel_dilation: Vec<i64>,
}

impl Default for ConvLocalGeometry {
    fn default() -> Self {
        ConvLocalGeometry {
            strides: Vec::new(),
            padding: ConvPadding::Same,
            input_dilation: Vec::new(),
            kernel_dilation: Vec::new(),
        }
    }
}

/// A locally connected convolution of `[batch..., *spatial, in_features]`
/// inputs, as Flax's `nn.ConvLocal` over `lax::conv_general_dilated_local`:
/// each output position has its own kernel, so the kernel is
/// `[*out_spatial, prod(window) · in_features, features]` and the bias
/// `[*out_spatial, features]`. The output positions follow from the input's
/// spatial shape and the geometry, so both are given to the constructor
/// (Flax reads them off the first input). LeCun normal kernel and zero
/// bias by default, as Flax's.
///
/// ```
/// use oxla_nn::{ConvLocal, ConvLocalGeometry, ConvPadding};
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // Sequences of 8 steps of 3 features, a window of 3, VALID: 6 positions.
/// let geometry = ConvLocalGeometry { padding: ConvPadding::Valid, ..Default::default() };
/// let local = ConvLocal::with_geometry(Key::new(0), &[8], 3, 4, &[3], &geometry, &Default::default());
/// assert_eq!(local.kernel.shape(), &[6, 9, 4]);
/// assert_eq!(local.bias.as_ref().unwrap().shape(), &[6, 4]);
/// let y = local.apply(&jnp::ones(&[2, 8, 3], DType::F32));
/// assert_eq!(y.shape(), &[2, 6, 4]);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct ConvLocal {
    /// `[*out_spatial, prod(window) · in_features, features]`.
    pub kernel: Array,
    /// `[*out_spatial, features]`, or `None` without bias.
    pub bias: Option<Array>,
    /// The window's size along each spatial axis.
    #[pytree(static)]
    pub kernel_size: Vec<i64>,
    /// The stride along each spatial axis.
    #[pytree(static)]
    pub strides: Vec<i64>,
    /// Flax's padding modes.
    #[pytree(static)]
    pub padding: ConvPadding,
    /// The input's dilation along each spatial axis.
    #[pytree(static)]
    pub input_dilation: Vec<i64>,
    /// The kernel's dilation along each spatial axis.
    #[pytree(static)]
    pub kernel_dilation: Vec<i64>,
    /// A fixed mask multiplied into the kernel (Flax's `mask`), or none.
    #[pytree(static)]
    pub mask: Option<KernelMask>,
    /// The precision on accelerators (Flax's `precision`).
    #[pytree(static)]
    pub precision: Option<Precision>,
}

impl ConvLocal {
    /// A locally connected convolution of inputs with spatial shape
    /// `input_spatial` and `in_features` into `features`, with a
    /// `kernel_size` window, stride 1 and SAME padding (Flax's defaults).
    #[track_caller]
    pub fn new(
        key: impl IntoKey,
        input_spatial: &[i64],
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
    ) -> ConvLocal {
        ConvLocal::with_geometry(
            key,
            input_spatial,
            in_features,
            features,
            kernel_size,
            &ConvLocalGeometry::default(),
            &ConvInit::default(),
        )
    }

    /// A locally connected convolution with `geometry`, its parameters
    /// drawn as `init` says; a layer carrying the constructor's error
    /// (reported by `apply`) when the window, the input's spatial shape and
    /// the geometry do not fit.
    #[track_caller]
    pub fn with_geometry(
        key: impl IntoKey,
        input_spatial: &[i64],
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        geometry: &ConvLocalGeometry,
        init: &ConvInit,
    ) -> ConvLocal {
        let key: Key = key.into_key();
        let (kernel, bias) =
            match Self::shapes(input_spatial, in_features, features, kernel_size, geometry) {
                Ok((kernel_shape, bias_shape)) => init.draw_shaped(key, &kernel_shape, &bias_shape),
                Err(message) => {
                    let e = constructor_error("ConvLocal", &message);
                    (e.clone(), init.bias_init.map(|_| e))
                }
            };
        ConvLocal {
            kernel,
            bias,
            kernel_size: kernel_size.to_vec(),
            strides: geometry.strides.clone(),
            padding: geometry.padding.clone(),
            input_dilation: geometry.input_dilation.clone(),
            kernel_dilation: geometry.kernel_dilation.clone(),
            mask: None,
            precision: None,
        }
    }

    /// The kernel's and the bias's shapes for inputs of `input_spatial`, or
    /// what does not fit.
    fn shapes(
        input_spatial: &[i64],
        in_features: i64,
        features: i64,
        kernel_size: &[i64],
        geometry: &ConvLocalGeometry,
    ) -> Result<(Vec<i64>, Vec<i64>), String> {
        let spatial = kernel_size.len();
        if spatial == 0 || input_spatial.len() != spatial {
            return Err(format!(
                "the window {kernel_size:?} needs one size per spatial axis of the input's \
                 {input_spatial:?}, and at least one"
            ));
        }
        let strides = per_axis_values("strides", &geometry.strides, spatial)?;
        let input_dilation = per_axis_values("input dilations", &geometry.input_dilation, spatial)?;
        let kernel_dilation =
            per_axis_values("kernel dilations", &geometry.kernel_dilation, spatial)?;
        let dilated: Vec<i64> = kernel_size
            .iter()
            .zip(&kernel_dilation)
            .map(|(&k, &d)| (k - 1) * d + 1)
            .collect();
        // One example, to find the output positions as `apply` pads.
        let mut example_shape = vec![1];
        example_shape.extend_from_slice(input_spatial);
        example_shape.push(in_features);
        let example = jnp::zeros(&example_shape, oxla::DType::F32);
        let (padded, padding) = geometry
            .padding
            .for_conv(&example, &dilated, &input_dilation)?;
        let window_sizes = (kernel_size, &kernel_dilation[..], &dilated[..]);
        let out = output_spatial(&padded, window_sizes, &strides, &padding, &input_dilation);
        let patch: i64 = kernel_size.iter().product();
        let mut kernel_shape = out.clone();
        kernel_shape.extend([patch * in_features, features]);
        let mut bias_shape = out;
        bias_shape.push(features);
        Ok((kernel_shape, bias_shape))
    }

    /// The same layer with its kernel masked by `mask` (Flax's `mask`, of
    /// the kernel's shape) at every `apply`; a mask that is not concrete
    /// leaves a layer carrying the error.
    #[track_caller]
    pub fn with_mask(mut self, mask: &Array) -> ConvLocal {
        set_mask(&mut self.kernel, &mut self.mask, mask);
        self
    }

    /// The same layer with another precision (Flax's `precision`).
    pub fn with_precision(mut self, precision: Option<Precision>) -> ConvLocal {
        self.precision = precision;
        self
    }

    /// The locally connected convolution of `x` `[batch..., *spatial,
    /// in_features]`: `[batch..., *out_spatial, features]`, or an error
    /// naming the layer, `x`'s type and the caller's line when `x` does not
    /// fit the kernel (another spatial shape than the layer was built for,
    /// say).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        if let Some(e) = crate::own_error(self) {
            return e;
        }
        let hyper = HyperParameters {
            strides: &self.strides,
            padding: &self.padding,
            input_dilation: &self.input_dilation,
            kernel_dilation: &self.kernel_dilation,
            weights: Weights::Local {
                window: &self.kernel_size,
            },
            mask: self.mask.as_ref(),
            precision: self.precision,
        };
        convolve("ConvLocal", x, &self.kernel, self.bias.as_ref(), &hyper)
    }
}
