//! `jax.numpy.fft`: discrete Fourier transforms over any axes, with
//! NumPy's lengths (`n`, `s`: zero-padded or truncated), normalisations
//! (`backward`, `ortho`, `forward`) and helpers, each computed as JAX's
//! `jax/_src/numpy/fft.py` computes it: the axes are moved last, the
//! transform is `lax::fft` (at most three dimensions at a time; more are
//! done in turns), and the axes are moved back.

use oxla_core::DType;
use oxla_core::FftType;
use oxla_core::promotion::default_float;

use super::{arange, roll, scalar_like, usage};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// NumPy's `norm`: which direction is scaled, and by what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Norm {
    /// No scaling forward, 1/n backward (NumPy's default, `norm=None`).
    #[default]
    Backward,
    /// 1/√n both ways.
    Ortho,
    /// 1/n forward, none backward.
    Forward,
}

/// The transform JAX's `_fft_core` computes: `function` names it in
/// errors (a name starting with `i` is an inverse, for the scaling).
#[track_caller]
fn fft_core(
    function: &str,
    fft_type: FftType,
    a: &Array,
    s: Option<&[i64]>,
    axes: Option<&[i64]>,
    norm: Norm,
) -> Array {
    let rank = a.ndim_or_zero() as i64;
    if let Some(s) = s {
        if s.iter().any(|&n| n <= 0) {
            return usage(function, format!("the lengths s {s:?} must be positive"));
        }
        if let Some(axes) = axes
            && axes.len() != s.len()
        {
            return usage(
                function,
                format!("s {s:?} and axes {axes:?} have different lengths"),
            );
        }
    }
    let axes: Vec<i64> = match (axes, s) {
        (Some(axes), _) => {
            let mut normalized = Vec::with_capacity(axes.len());
            for &axis in axes {
                if axis < -rank || axis >= rank {
                    return usage(
                        function,
                        format!("axis {axis} is out of range for an array of rank {rank}"),
                    );
                }
                normalized.push(axis.rem_euclid(rank.max(1)));
            }
            normalized
        }
        (None, None) => (0..rank).collect(),
        (None, Some(s)) => (rank - s.len() as i64..rank).collect(),
    };
    let mut unique = axes.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() != axes.len() {
        return usage(
            function,
            format!("repeated axes {axes:?} are not supported"),
        );
    }
    if axes.len() as i64 > rank {
        return usage(
            function,
            format!("{} lengths for an array of rank {rank}", axes.len()),
        );
    }
    // The transformed axes moved last, in their order.
    let count = axes.len();
    let last: Vec<i64> = (rank - count as i64..rank).collect();
    let moved = axes != last;
    let mut perm: Vec<i64> = (0..rank).filter(|d| !axes.contains(d)).collect();
    perm.extend(&axes);
    let mut arr = if moved {
        lax::transpose(a, &perm)
    } else {
        a.clone()
    };
    let shape = arr.shape_or_empty().to_vec();
    let lead = shape.len() - count;
    let lengths: Vec<i64> = match s {
        Some(s) => {
            let mut wanted = shape.clone();
            wanted[lead..].copy_from_slice(s);
            if fft_type == FftType::Irfft
                && let Some(l) = wanted.last_mut()
            {
                *l = *l / 2 + 1;
            }
            arr = fit_to(&arr, &wanted);
            s.to_vec()
        }
        None if fft_type == FftType::Irfft => {
            let mut lengths = shape[lead..].to_vec();
            if let Some(l) = lengths.last_mut() {
                *l = (2 * (*l - 1)).max(0);
            }
            lengths
        }
        None => shape[lead..].to_vec(),
    };
    let mut out = fft_core_nd(&arr, fft_type, &lengths);
    if norm != Norm::Backward {
        let size: f64 = lengths.iter().map(|&n| n as f64).product();
        let inverse = function.starts_with('i');
        let scale = match (norm, inverse) {
            (Norm::Ortho, true) => size.sqrt(),
            (Norm::Ortho, false) => 1.0 / size.sqrt(),
            (Norm::Forward, true) => size,
            (Norm::Forward, false) => 1.0 / size,
            (Norm::Backward, _) => 1.0,
        };
        out = lax::mul(&out, &scalar_like(&out, scale));
    }
    if moved {
        let mut inverse = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p as usize] = i as i64;
        }
        out = lax::transpose(&out, &inverse);
    }
    out
}

/// `x` truncated or zero-padded at the end of each dimension to `shape`.
fn fit_to(x: &Array, shape: &[i64]) -> Array {
    let have = x.shape_or_empty().to_vec();
    let limits: Vec<i64> = have.iter().zip(shape).map(|(&h, &w)| h.min(w)).collect();
    let cut = if limits != have {
        lax::slice(x, &vec![0; have.len()], &limits, None)
    } else {
        x.clone()
    };
    if limits.as_slice() == shape {
        return cut;
    }
    let config: Vec<(i64, i64, i64)> = limits
        .iter()
        .zip(shape)
        .map(|(&l, &w)| (0, w - l, 0))
        .collect();
    lax::pad(&cut, &scalar_like(&cut, 0.0), &config)
}

/// `lax::fft` over the trailing `lengths.len()` dimensions, in turns of at
/// most three (JAX's `_fft_core_nd`).
fn fft_core_nd(arr: &Array, fft_type: FftType, lengths: &[i64]) -> Array {
    if lengths.len() <= 3 {
        return lax::fft(arr, fft_type, lengths);
    }
    let rank = arr.ndim_or_zero();
    let n = if lengths.len() == 4 { 2 } else { 3 };
    let first = rank - lengths.len();
    // Rotate the leading transformed dims behind the last `n`, and back.
    let rotate = |x: &Array, forward: bool| -> Array {
        let mut perm: Vec<i64> = (0..first as i64).collect();
        let (a, b) = (lengths.len() - n, n);
        let block: Vec<i64> = if forward {
            (first + a..first + a + b)
                .chain(first..first + a)
                .map(|d| d as i64)
                .collect()
        } else {
            (first + b..first + b + a)
                .chain(first..first + b)
                .map(|d| d as i64)
                .collect()
        };
        perm.extend(block);
        lax::transpose(x, &perm)
    };
    let (inner, outer) = lengths.split_at(lengths.len() - n);
    match fft_type {
        FftType::Rfft | FftType::Fft => {
            let x = lax::fft(arr, fft_type, outer);
            let x = rotate(&x, true);
            let x = fft_core_nd(&x, FftType::Fft, inner);
            rotate(&x, false)
        }
        FftType::Ifft | FftType::Irfft => {
            let x = rotate(arr, true);
            let x = fft_core_nd(&x, FftType::Ifft, inner);
            let x = rotate(&x, false);
            lax::fft(&x, fft_type, outer)
        }
    }
}

macro_rules! one_dimensional {
    ($($name:ident => $fft_type:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(a: &Array, n: Option<i64>, axis: i64, norm: Norm) -> Array {
            let s = n.map(|n| [n]);
            fft_core(stringify!($name), FftType::$fft_type, a, s.as_ref().map(|s| &s[..]), Some(&[axis]), norm)
        }
    )*};
}

one_dimensional! {
    fft => Fft: "`jnp.fft.fft(a, n, axis, norm)`: the discrete Fourier transform along `axis`, of length `n` (the input truncated or zero-padded; default its length).";
    ifft => Ifft: "`jnp.fft.ifft(a, n, axis, norm)`: the inverse discrete Fourier transform along `axis`.";
    rfft => Rfft: "`jnp.fft.rfft(a, n, axis, norm)`: the transform of a real signal, its `n/2 + 1` non-negative frequencies.";
    irfft => Irfft: "`jnp.fft.irfft(a, n, axis, norm)`: the real signal of length `n` (default `2 (m - 1)`) of a half-spectrum of `m` frequencies.";
}

macro_rules! n_dimensional {
    ($($name:ident => $fft_type:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(a: &Array, s: Option<&[i64]>, axes: Option<&[i64]>, norm: Norm) -> Array {
            fft_core(stringify!($name), FftType::$fft_type, a, s, axes, norm)
        }
    )*};
}

n_dimensional! {
    fftn => Fft: "`jnp.fft.fftn(a, s, axes, norm)`: the transform over `axes` (default all, or the last `s.len()`), of lengths `s`.";
    ifftn => Ifft: "`jnp.fft.ifftn(a, s, axes, norm)`: the inverse transform over `axes`.";
    rfftn => Rfft: "`jnp.fft.rfftn(a, s, axes, norm)`: the transform of a real array, the last axis halved to `n/2 + 1` frequencies.";
    irfftn => Irfft: "`jnp.fft.irfftn(a, s, axes, norm)`: the real array of lengths `s` of a half-spectrum.";
}

macro_rules! two_dimensional {
    ($($name:ident => $fft_type:ident: $doc:literal;)*) => {$(
        #[doc = $doc]
        #[track_caller]
        pub fn $name(a: &Array, s: Option<&[i64]>, axes: &[i64], norm: Norm) -> Array {
            if axes.len() != 2 {
                return usage(stringify!($name), format!("takes 2 axes, got {axes:?}"));
            }
            fft_core(stringify!($name), FftType::$fft_type, a, s, Some(axes), norm)
        }
    )*};
}

two_dimensional! {
    fft2 => Fft: "`jnp.fft.fft2(a, s, axes, norm)`: [`fftn`] over two axes (NumPy's default `[-2, -1]`).";
    ifft2 => Ifft: "`jnp.fft.ifft2(a, s, axes, norm)`: [`ifftn`] over two axes.";
    rfft2 => Rfft: "`jnp.fft.rfft2(a, s, axes, norm)`: [`rfftn`] over two axes.";
    irfft2 => Irfft: "`jnp.fft.irfft2(a, s, axes, norm)`: [`irfftn`] over two axes.";
}

/// The length of `axis` of `a`, if in range.
fn axis_len(a: &Array, axis: i64) -> Option<i64> {
    let shape = a.shape_or_empty();
    let rank = shape.len() as i64;
    (-rank..rank)
        .contains(&axis)
        .then(|| shape[axis.rem_euclid(rank) as usize])
}

/// `jnp.fft.hfft(a, n, axis, norm)`: the real spectrum of a Hermitian
/// signal given by its first half: `irfft(conj(a)) · n`.
#[track_caller]
pub fn hfft(a: &Array, n: Option<i64>, axis: i64, norm: Norm) -> Array {
    // As JAX: conjugated as it is (a real array is its own conjugate);
    // `lax::fft` converts it to a complex type.
    let conj = super::conjugate(a);
    let Some(m) = axis_len(&conj, axis) else {
        return usage("hfft", format!("axis {axis} is out of range"));
    };
    let nn = n.unwrap_or((m - 1) * 2);
    let out = irfft(&conj, n, axis, norm);
    lax::mul(&out, &scalar_like(&out, nn as f64))
}

/// `jnp.fft.ihfft(a, n, axis, norm)`: the half spectrum of a real signal
/// as a Hermitian signal: `conj(rfft(a)) / n`.
#[track_caller]
pub fn ihfft(a: &Array, n: Option<i64>, axis: i64, norm: Norm) -> Array {
    let Some(m) = axis_len(a, axis) else {
        return usage("ihfft", format!("axis {axis} is out of range"));
    };
    let nn = n.unwrap_or(m);
    let out = super::conjugate(&rfft(a, n, axis, norm));
    lax::mul(&out, &scalar_like(&out, 1.0 / nn as f64))
}

/// `jnp.fft.fftfreq(n, d, dtype)`: the sample frequencies of an `n`-point
/// transform with spacing `d`: `[0, 1, .., n/2 - 1, -n/2, .., -1] / (d n)`.
#[track_caller]
pub fn fftfreq(n: i64, d: f64, dtype: Option<DType>) -> Array {
    let out_dtype = dtype.unwrap_or(default_float(x64_enabled()));
    let dtype = if out_dtype.is_inexact() {
        out_dtype.real_part()
    } else {
        default_float(x64_enabled())
    };
    let i = arange(0.0, n as f64, 1.0, dtype);
    let half = scalar_like(&i, (n / 2) as f64);
    let size = scalar_like(&i, n as f64);
    let k = lax::sub(&super::remainder(&lax::add(&i, &half), &size), &half);
    let result = lax::div(&k, &scalar_like(&k, d * n as f64));
    lax::convert_element_type(&result, out_dtype)
}

/// `jnp.fft.rfftfreq(n, d, dtype)`: the non-negative sample frequencies
/// `[0, 1, .., n/2] / (d n)`.
#[track_caller]
pub fn rfftfreq(n: i64, d: f64, dtype: Option<DType>) -> Array {
    let dtype = dtype.unwrap_or(default_float(x64_enabled()));
    let count = if n % 2 == 0 {
        n / 2 + 1
    } else {
        (n - 1) / 2 + 1
    };
    let k = arange(0.0, count as f64, 1.0, dtype);
    lax::div(&k, &scalar_like(&k, d * n as f64))
}

/// Rolls each of `axes` (default all) by `shift(len)`.
fn shift_axes(x: &Array, axes: Option<&[i64]>, shift: impl Fn(i64) -> i64) -> Array {
    let shape = x.shape_or_empty().to_vec();
    let all: Vec<i64> = (0..shape.len() as i64).collect();
    let rank = shape.len() as i64;
    axes.unwrap_or(&all).iter().fold(x.clone(), |acc, &axis| {
        let len = if (-rank..rank).contains(&axis) {
            shape[axis.rem_euclid(rank) as usize]
        } else {
            0
        };
        roll(&acc, shift(len), Some(axis))
    })
}

/// `jnp.fft.fftshift(x, axes)`: the zero frequency moved to the centre of
/// each of `axes` (default all).
#[track_caller]
pub fn fftshift(x: &Array, axes: Option<&[i64]>) -> Array {
    shift_axes(x, axes, |len| len / 2)
}

/// `jnp.fft.ifftshift(x, axes)`: the inverse of [`fftshift`].
#[track_caller]
pub fn ifftshift(x: &Array, axes: Option<&[i64]>) -> Array {
    shift_axes(x, axes, |len| -(len / 2))
}
