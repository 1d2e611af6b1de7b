//! `+ - * / %` and unary `-` on arrays and Rust scalars, with jax.numpy's
//! promotion and broadcasting. Rust scalars are weakly typed, as Python
//! scalars are in JAX: `x_f16 * 2.0` stays `f16`. Scalars are `f64` and
//! `i32` only, so that unsuffixed literals (`x + 1.0`, `x * 2`) resolve
//! without annotations.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use crate::array::Array;
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
        array_op!(@scalars $trait, $method, $f, f64, i32);
    };
    (@scalars $trait:ident, $method:ident, $f:path, $($s:ty),*) => {$(
        impl $trait<$s> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: $s) -> Array {
                $f(self, &Array::weak_scalar(rhs))
            }
        }
        impl $trait<$s> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: $s) -> Array {
                $f(&self, &Array::weak_scalar(rhs))
            }
        }
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

array_op!(Add, add, numpy::add);
array_op!(Sub, sub, numpy::subtract);
array_op!(Mul, mul, numpy::multiply);
array_op!(Div, div, numpy::divide);
array_op!(Rem, rem, numpy::remainder_trunc);

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
