//! `lax.fft`: the Fourier transform primitive over trailing dimensions.

use oxla_core::primitive::fft;
use oxla_core::promotion::default_float;
use oxla_core::{DType, FftType, Primitive};

use crate::array::Array;
use crate::config::x64_enabled;
use crate::ops::bind;

/// `lax.fft(x, fft_type, fft_lengths)`: the transform over the last
/// `fft_lengths.len()` (1 to 3) dimensions of `x`. `Fft`/`Ifft` take and
/// give complex arrays (`Ifft` scaled by 1/n); `Rfft` takes f32 or f64 and
/// gives the `n/2 + 1` non-negative frequencies of the last dimension;
/// `Irfft` takes those and gives the real signal of lengths
/// `fft_lengths`.
///
/// As JAX's, the operand is first converted: to a float type for `Rfft`
/// (a complex operand is an error), to a complex type for the others; no
/// lengths is the identity.
#[track_caller]
pub fn fft(x: &Array, fft_type: FftType, fft_lengths: &[i64]) -> Array {
    let dtype = x.dtype_or_bool();
    let inexact = if dtype.is_inexact() {
        dtype
    } else {
        default_float(x64_enabled())
    };
    let x = match fft_type {
        FftType::Rfft if dtype.is_complex() => {
            let location = crate::ops::current_location(std::panic::Location::caller());
            return Array::error(crate::Error::InvalidArgument(format!(
                "{location}: lax.fft: RFFT takes real operands, got {dtype}"
            )));
        }
        FftType::Rfft => crate::lax::convert_element_type(x, inexact),
        FftType::Fft | FftType::Ifft | FftType::Irfft => {
            crate::lax::convert_element_type(x, inexact.complex_of().unwrap_or(DType::C64))
        }
    };
    if fft_lengths.is_empty() {
        return x;
    }
    bind(
        Primitive::Fft(fft::Op::Fft {
            fft_type,
            fft_lengths: fft_lengths.to_vec(),
        }),
        &[&x],
    )
}
