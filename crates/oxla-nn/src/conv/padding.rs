//! [`ConvPadding`]: Flax's padding modes of the convolution layers, and how
//! each pads: SAME, VALID and pairs through `lax`; CIRCULAR, REFLECT and
//! CAUSAL of a convolution as its input padded (Flax's `jnp.pad`) before a
//! VALID one; CIRCULAR of a transposed convolution as its VALID output
//! wrapped around periodically.

use oxla::Array;
use oxla::lax::Padding;
use oxla::numpy::{self as jnp, PadMode};

/// How a convolution layer pads its input, as Flax's `padding`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConvPadding {
    /// `'SAME'` (Flax's default): output size `ceil(input / stride)`, the
    /// padding split low-first.
    Same,
    /// `'VALID'`: no padding.
    Valid,
    /// `'CIRCULAR'`: periodic boundary conditions, the input wrapped around
    /// (a transposed convolution's output wrapped around its period).
    Circular,
    /// `'REFLECT'`: the input mirrored about its edges ([`Conv`](super::Conv)
    /// only, as Flax's).
    Reflect,
    /// `'CAUSAL'`: a 1-D convolution's input padded on the left only, so
    /// that output `t` sees inputs up to `t` ([`Conv`](super::Conv) only).
    Causal,
    /// `(low, high)` pairs: one per spatial axis, or one for every axis
    /// (Flax's single int).
    Explicit(Vec<(i64, i64)>),
}

impl From<Padding> for ConvPadding {
    fn from(padding: Padding) -> ConvPadding {
        match padding {
            Padding::Same => ConvPadding::Same,
            Padding::Valid => ConvPadding::Valid,
            Padding::Explicit(pairs) => ConvPadding::Explicit(pairs),
        }
    }
}

impl ConvPadding {
    /// Flax's name of the mode.
    fn name(&self) -> &'static str {
        match self {
            ConvPadding::Same => "SAME",
            ConvPadding::Valid => "VALID",
            ConvPadding::Circular => "CIRCULAR",
            ConvPadding::Reflect => "REFLECT",
            ConvPadding::Causal => "CAUSAL",
            ConvPadding::Explicit(_) => "explicit",
        }
    }

    /// Explicit `pairs` as one per spatial axis.
    fn per_axis(pairs: &[(i64, i64)], spatial: usize) -> Result<Vec<(i64, i64)>, String> {
        match pairs.len() {
            1 => Ok(vec![pairs[0]; spatial]),
            n if n == spatial => Ok(pairs.to_vec()),
            n => Err(format!(
                "{n} padding pairs {pairs:?} for {spatial} spatial axes"
            )),
        }
    }

    /// For a convolution of `x` `[batch, *spatial, features]` with windows
    /// of `dilated` sizes (kernel dilation applied) and `input_dilation`:
    /// the input to convolve (padded here for CIRCULAR, REFLECT and CAUSAL)
    /// and the padding `lax` adds. String modes with input dilation are an
    /// error, as in JAX.
    pub(super) fn for_conv(
        &self,
        x: &Array,
        dilated: &[i64],
        input_dilation: &[i64],
    ) -> Result<(Array, Padding), String> {
        let spatial = dilated.len();
        if !matches!(self, ConvPadding::Explicit(_)) && input_dilation.iter().any(|&d| d != 1) {
            return Err(format!(
                "{} padding with input dilation {input_dilation:?}: JAX dilates inputs \
                 with explicit padding pairs only",
                self.name()
            ));
        }
        let padded = |pairs: Vec<(i64, i64)>, mode: PadMode| {
            let mut widths = vec![(0, 0)];
            widths.extend(pairs);
            widths.push((0, 0));
            (jnp::pad(x, &widths, mode), Padding::Valid)
        };
        match self {
            ConvPadding::Same => Ok((x.clone(), Padding::Same)),
            ConvPadding::Valid => Ok((x.clone(), Padding::Valid)),
            ConvPadding::Explicit(pairs) => Ok((
                x.clone(),
                Padding::Explicit(Self::per_axis(pairs, spatial)?),
            )),
            ConvPadding::Circular | ConvPadding::Reflect => {
                let mode = if *self == ConvPadding::Circular {
                    PadMode::Wrap
                } else {
                    PadMode::Reflect
                };
                let pairs = dilated.iter().map(|&k| ((k - 1) / 2, k / 2)).collect();
                Ok(padded(pairs, mode))
            }
            ConvPadding::Causal if spatial == 1 => {
                Ok(padded(vec![(dilated[0] - 1, 0)], PadMode::Constant(0.0)))
            }
            ConvPadding::Causal => Err(format!(
                "CAUSAL padding is for 1-D convolutions only (as Flax's), not {spatial}-D"
            )),
        }
    }

    /// The padding `lax::conv_transpose` adds for a transposed convolution
    /// with `spatial` axes (CIRCULAR: VALID, then [`wrap_periodically`]).
    pub(super) fn for_transpose(&self, spatial: usize) -> Result<Padding, String> {
        match self {
            ConvPadding::Same => Ok(Padding::Same),
            ConvPadding::Valid | ConvPadding::Circular => Ok(Padding::Valid),
            ConvPadding::Explicit(pairs) => Ok(Padding::Explicit(Self::per_axis(pairs, spatial)?)),
            ConvPadding::Reflect | ConvPadding::Causal => Err(format!(
                "{} padding is not a transposed convolution's (SAME, VALID, CIRCULAR or pairs)",
                self.name()
            )),
        }
    }
}

/// A transposed convolution's VALID output `y` `[batch, *spatial,
/// features]` wrapped around `periods` (the input's spatial sizes times
/// the strides), as Flax's `ConvTranspose` with CIRCULAR padding: padded
/// with zeros to whole periods (the odd element on the left, on the right
/// with `transpose_kernel`), then each period's values summed.
pub(super) fn wrap_periodically(
    y: &Array,
    periods: &[i64],
    transpose_kernel: bool,
) -> Result<Array, String> {
    if let Some(p) = periods.iter().find(|&&p| p <= 0) {
        return Err(format!(
            "CIRCULAR padding needs non-empty spatial axes, got a period of {p}"
        ));
    }
    if y.check().is_err() {
        return Ok(y.clone());
    }
    let shape = y.shape_or_empty().to_vec();
    let mut widths = vec![(0, 0)];
    for (&period, &size) in periods.iter().zip(&shape[1..]) {
        let diff = (period - size).rem_euclid(2 * period);
        widths.push(if transpose_kernel {
            (diff / 2, (diff + 1) / 2)
        } else {
            ((diff + 1) / 2, diff / 2)
        });
    }
    widths.push((0, 0));
    let mut y = jnp::pad(y, &widths, PadMode::Constant(0.0));
    for (i, &period) in periods.iter().enumerate() {
        let axis = i + 1;
        let shape = y.shape_or_empty().to_vec();
        if shape.len() != periods.len() + 2 {
            return Ok(y);
        }
        let mut folded = shape[..axis].to_vec();
        folded.extend([shape[axis] / period, period]);
        folded.extend_from_slice(&shape[axis + 1..]);
        y = jnp::sum(&jnp::reshape(&y, &folded), Some(&[axis as i64]), false);
    }
    Ok(y)
}
