//! The jvp, transpose and batching rules of the Fourier-transform family
//! (`oxla_core::primitive::fft`), as JAX's `jax/_src/lax/fft.py`.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::array::Array;
use crate::error::Result;
use crate::lax;
use crate::transform::batch_rules::{BatchArgs, done};
use crate::transform::jvp_rules::{JvpArgs, finish, linear_jvp};
use crate::transform::support::{self, Tangent, batch_at};
use crate::transform::transpose_rules::{TransposeArgs, for_linear};
use oxla_core::FftType;
use oxla_core::primitive::fft::Op;

/// Primal outputs and output tangents: the transform is linear, its
/// tangent the transform of the operand's.
pub(crate) fn jvp(op: &Op, input: &JvpArgs<'_>) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let JvpArgs {
        primitive,
        primals,
        tangents,
        ..
    } = *input;
    let result = match op {
        Op::Fft { .. } => linear_jvp(primitive, primitive.clone(), primals, tangents, |_| true)?,
    };
    finish(primitive, result)
}

/// The cotangent of the operand (JAX's `_fft_transpose_rule`): FFT and
/// IFFT are their own transposes (the DFT matrix is symmetric); RFFT's is
/// the real part of the FFT of the cotangent zero-padded to the full
/// length; IRFFT's the conjugated RFFT of the cotangent, scaled by 1/n
/// and doubled on the frequencies the half-spectrum holds once for two.
pub(crate) fn transpose(op: &Op, input: &TransposeArgs<'_>) -> Result<Vec<Tangent>> {
    let TransposeArgs { operands, ct, .. } = *input;
    let Op::Fft {
        fft_type,
        fft_lengths,
    } = op;
    for_linear(operands, |_, _| {
        Ok(Some(match fft_type {
            FftType::Fft | FftType::Ifft => lax::fft(ct, *fft_type, fft_lengths),
            FftType::Rfft => rfft_transpose(ct, fft_lengths)?,
            FftType::Irfft => irfft_transpose(ct, fft_lengths)?,
        }))
    })
}

/// The transpose of RFFT (JAX transposes its naive form, an FFT of the
/// real signal sliced to `n/2 + 1` frequencies): the slice's transpose
/// pads with zeros, the FFT's is an FFT, the real-to-complex conversion's
/// takes the real part.
fn rfft_transpose(ct: &Array, fft_lengths: &[i64]) -> Result<Array> {
    let shape = ct.aval()?.shape.to_vec();
    let last = *fft_lengths.last().unwrap_or(&0);
    let kept = shape.last().copied().unwrap_or(0);
    let mut config = vec![(0, 0, 0); shape.len()];
    if let Some(c) = config.last_mut() {
        *c = (0, last - kept, 0);
    }
    let zero = support::full(&ct.aval()?.with_shape(&[]), 0.0);
    let padded = lax::pad(ct, &zero, &config);
    Ok(lax::real(&lax::fft(&padded, FftType::Fft, fft_lengths)))
}

/// The transpose of IRFFT, as JAX's `_irfft_transpose`.
fn irfft_transpose(ct: &Array, fft_lengths: &[i64]) -> Result<Array> {
    let x = lax::fft(ct, FftType::Rfft, fft_lengths);
    let x_aval = x.aval()?.clone();
    let n = *x_aval.shape.last().unwrap_or(&0);
    let odd = fft_lengths.last().copied().unwrap_or(0) % 2;
    // 1 for the zero frequency (and, for even lengths, the Nyquist one), 2
    // for the frequencies that stand for a conjugate pair.
    let mask = Array::from_slice(
        &(0..n)
            .map(|k| {
                if k == 0 || (odd == 0 && k == n - 1) {
                    1.0f32
                } else {
                    2.0
                }
            })
            .collect::<Vec<f32>>(),
        &[n],
    )?;
    let mask = lax::convert_element_type(&mask, x_aval.dtype);
    let rank = x_aval.shape.len();
    let mask = lax::broadcast_in_dim(&mask, &x_aval.shape, &[rank as i64 - 1]);
    let scale = 1.0 / fft_lengths.iter().product::<i64>() as f64;
    let scaled = lax::mul(&lax::mul(&support::full(&x_aval, scale), &mask), &x);
    Ok(lax::conj(&scaled))
}

/// Batched outputs: the batch dimension moved first, where the transform
/// over trailing dimensions leaves it.
pub(crate) fn batch(op: &Op, input: &BatchArgs<'_>) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
    let BatchArgs {
        primitive,
        args,
        bdims,
        axis_size: size,
    } = *input;
    match op {
        Op::Fft { .. } => {
            let x = batch_at(&args[0], bdims[0], size, 0);
            done(vec![support::bind_one(primitive, &[&x])?], vec![Some(0)])
        }
    }
}
