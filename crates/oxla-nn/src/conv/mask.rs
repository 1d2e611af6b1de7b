//! [`KernelMask`]: a convolution kernel's fixed mask (Flax's `mask`), a
//! constant of the layer rather than a parameter.

use std::fmt;

use oxla::Array;
use sha2::{Digest, Sha256};

/// A fixed mask that a convolution layer multiplies into its kernel at
/// every `apply`, as Flax's `mask` attribute of `Conv`, `ConvTranspose`
/// and `ConvLocal` (a lower-triangular mask makes a convolution causal
/// across features, say). It has the kernel's shape.
///
/// The mask is part of the layer's static structure, not one of its
/// leaves: gradients and optimizers see only the kernel (the gradient is
/// the masked kernel's, so masked-out weights get zero), and `jit` keys
/// its cache on the mask's contents through a SHA-256 digest of its
/// bytes, so a different mask compiles again instead of reusing a program
/// that baked in another one.
#[derive(Clone)]
pub struct KernelMask {
    values: Array,
    digest: String,
}

impl KernelMask {
    /// The mask `values` (a concrete array: its bytes are read once, for
    /// the digest).
    pub fn new(values: &Array) -> oxla::Result<KernelMask> {
        let host = values.to_host()?;
        let mut hasher = Sha256::new();
        hasher.update(format!("{:?}{:?}", host.npy_type, host.dims).as_bytes());
        hasher.update(&host.bytes);
        let digest = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(KernelMask {
            values: values.clone(),
            digest,
        })
    }

    /// The mask's values.
    pub fn values(&self) -> &Array {
        &self.values
    }

    /// `kernel` times the mask, or the error of `layer`'s `apply` on `x`
    /// when the shapes differ (Flax: "Mask needs to have the same shape
    /// as weights").
    #[track_caller]
    pub(super) fn apply_to(&self, layer: &str, x: &Array, kernel: &Array) -> Result<Array, Array> {
        let (mask_shape, kernel_shape) = (self.values.shape_or_empty(), kernel.shape_or_empty());
        if mask_shape != kernel_shape {
            return Err(crate::layer_input_error(
                layer,
                x,
                &format!("the mask needs the kernel's shape {kernel_shape:?}, got {mask_shape:?}"),
            ));
        }
        Ok(kernel * &self.values)
    }
}

impl fmt::Debug for KernelMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let aval = self
            .values
            .aval()
            .map(|a| a.to_string())
            .unwrap_or_default();
        write!(f, "KernelMask({aval}, sha256 {})", self.digest)
    }
}

/// `kernel` with `mask` applied when there is one.
#[track_caller]
pub(super) fn masked(
    layer: &str,
    x: &Array,
    kernel: &Array,
    mask: Option<&KernelMask>,
) -> Result<Array, Array> {
    match mask {
        Some(mask) => mask.apply_to(layer, x, kernel),
        None => Ok(kernel.clone()),
    }
}

/// A layer's `with_mask`: `mask` into `slot`, or the error of a mask that
/// is not concrete into `kernel` (the layer then carries it to `apply`).
pub(super) fn set_mask(kernel: &mut Array, slot: &mut Option<KernelMask>, mask: &Array) {
    match KernelMask::new(mask) {
        Ok(mask) => *slot = Some(mask),
        Err(e) => *kernel = Array::error(e),
    }
}
