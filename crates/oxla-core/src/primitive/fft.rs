//! The Fourier transform (JAX's `jax/_src/lax/fft.py`): `lax.fft` over the
//! trailing dimensions of its operand, complex to complex (forward or
//! inverse), real to complex (`RFFT`, the non-negative frequencies) or
//! complex to real (`IRFFT`).

use crate::aval::Aval;
use crate::dtype::DType;
use crate::shape_rules::{RuleResult, ShapeError, expect_arity};

/// The kind of transform, as XLA's `FftType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Complex to complex, forward.
    Fft,
    /// Complex to complex, inverse (scaled by 1/n).
    Ifft,
    /// Real to complex: the `n/2 + 1` non-negative frequencies of the last
    /// dimension.
    Rfft,
    /// Complex (Hermitian half-spectrum) to real, inverse.
    Irfft,
}

impl FftType {
    /// The enum value jaxprs print (`fft_type=0` for FFT, as JAX's
    /// `FftType` numbers them).
    pub fn jax_code(self) -> u8 {
        match self {
            FftType::Fft => 0,
            FftType::Ifft => 1,
            FftType::Rfft => 2,
            FftType::Irfft => 3,
        }
    }

    /// StableHLO's name (`#stablehlo<fft_type FFT>`).
    pub fn stablehlo_name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }
}

/// A Fourier-transform primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `lax.fft(x, fft_type, fft_lengths)`: the transform over the last
    /// `fft_lengths.len()` (1 to 3) dimensions.
    Fft {
        /// Which transform.
        fft_type: FftType,
        /// The lengths of the transformed dimensions (for `IRFFT`, the
        /// real output's; the operand's last dimension is `n/2 + 1`).
        fft_lengths: Vec<i64>,
    },
}

impl Op {
    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Fft { .. } => "fft",
        }
    }

    /// The parameters as jaxprs print them.
    pub fn params(
        &self,
        _pad: usize,
        _nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::Fft {
                fft_type,
                fft_lengths,
            } => vec![
                format!("fft_lengths={}", super::print::tuple(fft_lengths)),
                format!("fft_type={}", fft_type.jax_code()),
            ],
        }
    }
}

/// The shape rule: as JAX's `_fft_abstract_eval`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let Op::Fft {
        fft_type,
        fft_lengths,
    } = op;
    expect_arity(inputs, 1)?;
    let x = inputs[0];
    let n = fft_lengths.len();
    if !(1..=3).contains(&n) {
        return Err(ShapeError::Invalid(format!(
            "transforms 1 to 3 dimensions, got fft_lengths {fft_lengths:?}"
        )));
    }
    if x.shape.len() < n {
        return Err(ShapeError::Invalid(format!(
            "fft_lengths {fft_lengths:?} name {n} dimensions of an operand of rank {}",
            x.shape.len()
        )));
    }
    if let Some(bad) = fft_lengths.iter().find(|&&l| l < 0) {
        return Err(ShapeError::Invalid(format!(
            "fft_lengths {fft_lengths:?} holds a negative length {bad}"
        )));
    }
    let lead = x.shape.len() - n;
    let trailing = &x.shape[lead..];
    let (dtype, last) = match fft_type {
        FftType::Fft | FftType::Ifft => {
            if !x.dtype.is_complex() {
                return Err(ShapeError::Invalid(format!(
                    "{} needs a complex operand, got {}",
                    fft_type.stablehlo_name(),
                    x.dtype
                )));
            }
            (x.dtype, fft_lengths[n - 1])
        }
        FftType::Rfft => {
            if !matches!(x.dtype, DType::F32 | DType::F64) {
                return Err(ShapeError::Invalid(format!(
                    "RFFT needs a float32 or float64 operand, got {}",
                    x.dtype
                )));
            }
            let complex = x.dtype.complex_of().unwrap_or(DType::C64);
            (complex, fft_lengths[n - 1] / 2 + 1)
        }
        FftType::Irfft => {
            if !x.dtype.is_complex() {
                return Err(ShapeError::Invalid(format!(
                    "IRFFT needs a complex operand, got {}",
                    x.dtype
                )));
            }
            (x.dtype.real_part(), fft_lengths[n - 1])
        }
    };
    // The operand's transformed dimensions: the lengths, except IRFFT's
    // last, which holds n/2 + 1 frequencies.
    let want: Vec<i64> = match fft_type {
        FftType::Irfft => fft_lengths[..n - 1]
            .iter()
            .copied()
            .chain([fft_lengths[n - 1] / 2 + 1])
            .collect(),
        FftType::Fft | FftType::Ifft | FftType::Rfft => fft_lengths.clone(),
    };
    if trailing != want.as_slice() {
        return Err(ShapeError::Invalid(format!(
            "{} with fft_lengths {fft_lengths:?} needs trailing dimensions {want:?}, got {}",
            fft_type.stablehlo_name(),
            x
        )));
    }
    let mut shape = x.shape.to_vec();
    shape[x.shape.len() - 1] = last;
    Ok(vec![Aval::new(dtype, &shape)])
}

/// The sharding rule (see [`crate::sharding_rules`]): the transformed
/// dimensions mix all their elements, so they must be unsplit; the others
/// keep their split.
pub(crate) fn output_shardings(
    op: &Op,
    inputs: &[&Aval],
) -> RuleResult<Vec<crate::sharding_rules::Spec>> {
    let Op::Fft { fft_lengths, .. } = op;
    let x = inputs[0];
    let rank = x.shape.len();
    for dim in rank.saturating_sub(fft_lengths.len())..rank {
        crate::sharding_rules::require_unsplit(x, dim, "the transform mixes its elements")?;
    }
    Ok(vec![x.dim_axes()])
}
