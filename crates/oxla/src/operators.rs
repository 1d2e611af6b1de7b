//! `+ - * / %` and unary `-` on arrays and Rust scalars, with jax.numpy's
//! promotion and broadcasting (`%` is `jnp.remainder`, with the divisor's
//! sign, as JAX's and Python's; `lax::rem` is the truncated one). Rust scalars are weakly typed, as Python
//! scalars are in JAX: `x_f16 * 2.0` stays `f16`, and so does
//! `x_f16 * 2.0f32`. On the right of an operator every Rust number works
//! ([`WeakScalar`]: all integer and float types, `half`'s `f16` and `bf16`),
//! and an unsuffixed literal is `f64` or `i32`. On the left, `f64`, `i32`,
//! `f16` and `bf16`: a second float or integer type there would leave
//! `2.0 * x` ambiguous to Rust's inference, so write `x * 2.0f32` instead.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use crate::array::Array;
use crate::element::Element;
use crate::numpy;

macro_rules! array_op {
    ($trait:ident, $method:ident, $f:path) => {
        impl $trait<&Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                $f(self, rhs)
            }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                $f(&self, &rhs)
            }
        }
        impl $trait<&Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                $f(&self, rhs)
            }
        }
        impl $trait<Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                $f(self, &rhs)
            }
        }
        impl<S: WeakScalar> $trait<S> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: S) -> Array {
                $f(self, &Array::weak_scalar(rhs))
            }
        }
        impl<S: WeakScalar> $trait<S> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: S) -> Array {
                $f(&self, &Array::weak_scalar(rhs))
            }
        }
        array_op!(@left_scalars $trait, $method, $f, f64, i32, half::f16, half::bf16);
    };
    (@left_scalars $trait:ident, $method:ident, $f:path, $($s:ty),*) => {$(
        impl $trait<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                $f(&Array::weak_scalar(self), rhs)
            }
        }
        impl $trait<Array> for $s {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                $f(&Array::weak_scalar(self), &rhs)
            }
        }
    )*};
}

/// A Rust number usable as a weakly typed scalar operand (`x * 0.5f32`,
/// `x + 1u8`): every integer and float type, and `half`'s `f16` and `bf16`.
/// Sealed: implemented here for exactly those types.
pub trait WeakScalar: Element + sealed::Sealed {}

mod sealed {
    /// Keeps [`super::WeakScalar`] to the types listed here.
    pub trait Sealed {}
}

macro_rules! weak_scalar {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl WeakScalar for $t {}
    )*};
}

weak_scalar!(
    f64,
    f32,
    half::f16,
    half::bf16,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64
);

array_op!(Add, add, numpy::add);
array_op!(Sub, sub, numpy::subtract);
array_op!(Mul, mul, numpy::multiply);
array_op!(Div, div, numpy::divide);
array_op!(Rem, rem, numpy::remainder);

impl Neg for &Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        numpy::negative(self)
    }
}

impl Neg for Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        numpy::negative(&self)
    }
}
