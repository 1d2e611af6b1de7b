//! [`Dropout`] with an explicit key, as Flax's `nn.Dropout`.

use crate::array::Array;
use crate::random::{self, Key};

/// Inverted dropout at `rate`: with a key (training) each element is kept
/// with probability `1 - rate` and scaled by `1 / (1 - rate)`; without one
/// (evaluation, Flax's `deterministic=True`) the input passes unchanged.
#[derive(crate::Pytree, Clone, Debug)]
pub struct Dropout {
    /// The probability of dropping an element.
    #[pytree(static)]
    pub rate: f64,
}

impl Dropout {
    /// Dropout at `rate` (in `[0, 1]`).
    pub fn new(rate: f64) -> Dropout {
        Dropout { rate }
    }

    /// `x` with dropout drawn from `key`, or `x` itself when `key` is `None`.
    #[track_caller]
    pub fn apply(&self, x: &Array, key: Option<Key>) -> Array {
        match key {
            Some(k) => random::dropout(k, self.rate, x),
            None => x.clone(),
        }
    }
}
