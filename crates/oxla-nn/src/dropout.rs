//! [`Dropout`] with an explicit key, as Flax's `nn.Dropout`.

use oxla::Array;
use oxla::random::{self, Key};

/// Inverted dropout at `rate`: with a key (training) each element is kept
/// with probability `1 - rate` and scaled by `1 / (1 - rate)`; without one
/// (evaluation, Flax's `deterministic=True`) the input passes unchanged.
/// The rate is a static field; the key is explicit, so a training step
/// takes a fresh one (`random::fold_in(key, step)`) each time.
///
/// ```
/// use oxla_nn::Dropout;
/// use oxla::random::Key;
/// use oxla::{DType, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let dropout = Dropout::new(0.5);
/// let x = jnp::ones(&[1000], DType::F32);
/// let train = dropout.apply(&x, Some(Key::new(0))).to_vec::<f32>()?;
/// assert!(train.iter().all(|&v| v == 0.0 || v == 2.0));      // dropped, or kept and scaled
/// let kept = train.iter().filter(|&&v| v == 2.0).count();
/// assert!((400..600).contains(&kept));
/// assert_eq!(dropout.apply(&x, None).to_vec::<f32>()?, vec![1.0; 1000]);   // evaluation
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
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
