//! `jax.numpy`'s functions of complex numbers: the parts, the conjugate,
//! the angle and the predicates, each as JAX computes it (a real operand
//! is its own real part, with imaginary part zero).

use oxla_core::promotion::default_float;

use super::{full_like, rad2deg, scalar_like};
use crate::array::Array;
use crate::config::x64_enabled;
use crate::lax;

/// Whether `x` has a complex dtype (`jnp.iscomplexobj`).
pub fn iscomplexobj(x: &Array) -> bool {
    x.dtype_or_bool().is_complex()
}

/// Whether `x` has a real (not complex) dtype (`jnp.isrealobj`).
pub fn isrealobj(x: &Array) -> bool {
    !iscomplexobj(x)
}

/// `jnp.real`: the real part of a complex array; a real array itself.
#[track_caller]
pub fn real(x: &Array) -> Array {
    if iscomplexobj(x) {
        lax::real(x)
    } else {
        x.clone()
    }
}

/// `jnp.imag`: the imaginary part of a complex array; zeros of a real
/// array's type.
#[track_caller]
pub fn imag(x: &Array) -> Array {
    if iscomplexobj(x) {
        lax::imag(x)
    } else {
        full_like(x, 0.0)
    }
}

/// `jnp.conjugate`: the complex conjugate; a real array itself.
#[track_caller]
pub fn conjugate(x: &Array) -> Array {
    if iscomplexobj(x) {
        lax::conj(x)
    } else {
        x.clone()
    }
}

/// `jnp.conj`: [`conjugate`].
#[track_caller]
pub fn conj(x: &Array) -> Array {
    conjugate(x)
}

/// `jnp.angle(z, deg)`: the argument `atan2(imag, real)`, in radians or
/// degrees; integer (and 0-d float) operands in the default float type,
/// as JAX computes it.
#[track_caller]
pub fn angle(z: &Array, deg: bool) -> Array {
    let (mut re, mut im) = (real(z), imag(z));
    let dtype = re.dtype_or_bool();
    let scalar_float = z.dtype_or_bool().is_float() && z.ndim_or_zero() == 0;
    if !dtype.is_inexact() || scalar_float {
        let float = default_float(x64_enabled());
        re = lax::convert_element_type(&re, float);
        im = lax::convert_element_type(&im, float);
    }
    let radians = lax::atan2(&im, &re);
    if deg { rad2deg(&radians) } else { radians }
}

/// `jnp.iscomplex`: whether each element's imaginary part is nonzero.
#[track_caller]
pub fn iscomplex(x: &Array) -> Array {
    let i = imag(x);
    lax::ne(&i, &scalar_like(&i, 0.0))
}

/// `jnp.isreal`: whether each element's imaginary part is zero.
#[track_caller]
pub fn isreal(x: &Array) -> Array {
    let i = imag(x);
    lax::eq(&i, &scalar_like(&i, 0.0))
}
