//! The methods of JAX's `Array` that code reaches for most (`x.sum()`,
//! `x.mean()`, `x.astype(...)`, `x.reshape(...)`, `x.argmax(...)`, `x.T`),
//! each the `jax.numpy` function of the same name over the whole array or
//! one axis. For several axes or `keepdims`, call the function in
//! [`numpy`](crate::numpy).
//!
//! ```
//! use oxla::{Array, DType};
//! # fn main() -> oxla::Result<()> {
//! let x = Array::from_slice(&[1.0f32, 5.0, 3.0, 2.0, 4.0, 6.0], &[2, 3])?;
//! assert_eq!(x.sum().item::<f32>()?, 21.0);
//! assert_eq!(x.mean().item::<f32>()?, 3.5);
//! assert_eq!(x.max().item::<f32>()?, 6.0);
//! assert_eq!(x.argmax(-1).to_vec::<i32>()?, vec![1, 2]);
//! assert_eq!(x.astype(DType::I32).dtype(), DType::I32);
//! assert_eq!(x.reshape(&[3, -1]).shape(), &[3, 2]);
//! assert_eq!(x.t().shape(), &[3, 2]);
//! assert_eq!(x.ravel().shape(), &[6]);
//! # Ok(())
//! # }
//! ```

use crate::array::Array;
use crate::{DType, lax, numpy as jnp};

impl Array {
    /// The sum of every element (`x.sum()`, [`jnp::sum`]).
    #[track_caller]
    pub fn sum(&self) -> Array {
        jnp::sum(self, None, false)
    }

    /// The mean of every element (`x.mean()`, [`jnp::mean`]).
    #[track_caller]
    pub fn mean(&self) -> Array {
        jnp::mean(self, None, false)
    }

    /// The largest element (`x.max()`, [`jnp::max`]).
    #[track_caller]
    pub fn max(&self) -> Array {
        jnp::max(self, None, false)
    }

    /// The smallest element (`x.min()`, [`jnp::min`]).
    #[track_caller]
    pub fn min(&self) -> Array {
        jnp::min(self, None, false)
    }

    /// The index of the largest element along `axis` (negative counts from
    /// the end; `x.argmax(axis)`, [`jnp::argmax`]).
    #[track_caller]
    pub fn argmax(&self, axis: i64) -> Array {
        jnp::argmax(self, Some(axis))
    }

    /// The index of the smallest element along `axis` (`x.argmin(axis)`,
    /// [`jnp::argmin`]).
    #[track_caller]
    pub fn argmin(&self, axis: i64) -> Array {
        jnp::argmin(self, Some(axis))
    }

    /// The array converted to `dtype` (`x.astype(dtype)`,
    /// [`lax::convert_element_type`]).
    #[track_caller]
    pub fn astype(&self, dtype: DType) -> Array {
        lax::convert_element_type(self, dtype)
    }

    /// The array in `shape`, one entry of which may be -1 (`x.reshape(shape)`,
    /// [`jnp::reshape`]).
    #[track_caller]
    pub fn reshape(&self, shape: &[i64]) -> Array {
        jnp::reshape(self, shape)
    }

    /// The array flattened to one axis (`x.ravel()`, `jnp.ravel`).
    #[track_caller]
    pub fn ravel(&self) -> Array {
        jnp::reshape(self, &[-1])
    }

    /// The array with its axes reversed (`x.T`, [`jnp::transpose`]).
    #[track_caller]
    pub fn t(&self) -> Array {
        jnp::transpose(self, None)
    }
}
