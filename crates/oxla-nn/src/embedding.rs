//! [`Embedding`]: a lookup table, as Flax's `nn.Embed`.

use oxla::DType;

use super::initializers::{Distribution, FanMode, Initializer};
use super::layer_input_error;
use oxla::Array;
use oxla::numpy as jnp;
use oxla::random::{IntoKey, Key};

/// Rows of `embedding` looked up by integer ids, as Flax's `nn.Embed`.
///
/// ```
/// use oxla_nn::Embedding;
/// use oxla::random::Key;
/// use oxla::{Array, s};
/// # fn main() -> oxla::Result<()> {
/// let table = Embedding::new(Key::new(0), 10, 4);
/// let ids = Array::from_slice(&[1i32, 3, 3], &[3])?;
/// let rows = table.apply(&ids);
/// assert_eq!(rows.shape(), &[3, 4]);
/// assert_eq!(rows.index(&s![1]).to_vec::<f32>()?, rows.index(&s![2]).to_vec::<f32>()?);
/// assert_eq!(rows.index(&s![0]).to_vec::<f32>()?, table.embedding.index(&s![1]).to_vec::<f32>()?);
/// // Tied output embeddings: logits over the 10 ids.
/// let logits = table.attend(&rows);
/// assert_eq!(logits.shape(), &[3, 10]);
/// assert!(logits.to_vec::<f32>()?.iter().all(|v| v.is_finite()));
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Embedding {
    /// `[num_embeddings, features]`.
    pub embedding: Array,
}

impl Embedding {
    /// A table with Flax's default initializer (variance scaling 1, fan in,
    /// normal, output axis 0: standard deviation `1/sqrt(features)`), in f32.
    #[track_caller]
    pub fn new(key: impl IntoKey, num_embeddings: i64, features: i64) -> Embedding {
        let key: Key = key.into_key();
        let init = Initializer::VarianceScaling {
            scale: 1.0,
            mode: FanMode::FanIn,
            distribution: Distribution::Normal,
            in_axis: -2,
            out_axis: 0,
        };
        Embedding::with_init(key, num_embeddings, features, init, DType::F32)
    }

    /// A table drawn with `init` in `dtype`.
    #[track_caller]
    pub fn with_init(
        key: impl IntoKey,
        num_embeddings: i64,
        features: i64,
        init: Initializer,
        dtype: DType,
    ) -> Embedding {
        let key: Key = key.into_key();
        Embedding {
            embedding: init.init(key, &[num_embeddings, features], dtype),
        }
    }

    /// The rows of `ids` (any integer shape): `[..ids.shape, features]`.
    /// As Flax's `jnp.take` (mode "fill"), negative ids count from the end
    /// and ids out of range give rows of NaN.
    #[track_caller]
    pub fn apply(&self, ids: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        match ids.aval() {
            Err(e) => Array::error(e),
            Ok(a) if !a.dtype.is_int() => {
                layer_input_error("Embedding", ids, "the ids must be integers")
            }
            Ok(_) => jnp::take(&self.embedding, ids, Some(0), false),
        }
    }

    /// `query @ embedding.T`: logits `[..., num_embeddings]` over the
    /// vocabulary from features `query` `[..., features]`, as Flax's
    /// `Embed.attend` (`jnp.dot` after promoting both to one dtype), for
    /// tied input and output embeddings (an LM head sharing the table). A
    /// query of another width is an error naming the shapes and the
    /// caller's line.
    #[track_caller]
    pub fn attend(&self, query: &Array) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        let table = self.embedding.shape_or_empty();
        match query.aval() {
            Err(e) => Array::error(e),
            Ok(a) if table.len() == 2 && a.shape.last() == Some(&table[1]) => {
                jnp::matmul(query, &jnp::transpose(&self.embedding, None))
            }
            Ok(a) => {
                let location = oxla::Location::from_caller(std::panic::Location::caller());
                let embedding = self
                    .embedding
                    .aval()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                Array::error(oxla::Error::InvalidArgument(format!(
                    "{location}: Embedding.attend of {a}: the query's last dimension must be \
                     the features of the table {embedding}"
                )))
            }
        }
    }
}
