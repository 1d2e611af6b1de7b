//! Multi-head dot-product attention, as Flax's
//! `nn.MultiHeadDotProductAttention` and `nn.dot_product_attention`.

use oxla::DType;

use super::activations::softmax;
use super::initializers::{self, Initializer};
use super::{expect_features, layer_input_error};
use oxla::Array;
use oxla::numpy as jnp;
use oxla::random::{IntoKey, Key, split};

/// Attention of `query` `[..., q, heads, depth]` over `key` and `value`
/// `[..., k, heads, depth]`, as Flax's `nn.dot_product_attention` (any
/// number of batch dimensions; JAX's `jax.nn.dot_product_attention`, with
/// grouped heads, bias, causal and window masks, is
/// [`crate::dot_product_attention`]): the query is
/// divided by `sqrt(depth)`, the logits `[..., heads, q, k]` are set to the
/// dtype's least finite value where `mask` (bool, broadcast to them) is
/// false, softmax over `k`; the result is `[..., q, heads, depth]`.
#[track_caller]
pub fn flax_dot_product_attention(
    query: &Array,
    key: &Array,
    value: &Array,
    mask: Option<&Array>,
) -> Array {
    let depth = query.shape_or_empty().last().copied().unwrap_or(1);
    let scale = oxla::lax::convert_element_type(
        &jnp::sqrt(&Array::weak_scalar(depth as f32)),
        query.dtype_or_bool(),
    );
    let q = jnp::swapaxes(&(query / &scale), -3, -2);
    let k = jnp::swapaxes(key, -3, -2);
    let v = jnp::swapaxes(value, -3, -2);
    let mut logits = jnp::matmul(&q, &jnp::swapaxes(&k, -1, -2));
    if let Some(mask) = mask {
        let least = oxla::lax::convert_element_type(
            &Array::weak_scalar(logits.dtype_or_bool().float_info().min()),
            logits.dtype_or_bool(),
        );
        logits = jnp::where_(mask, &logits, &least);
    }
    let weights = softmax(&logits, None);
    jnp::swapaxes(&jnp::matmul(&weights, &v), -3, -2)
}

/// The causal mask of a sequence of `length`: bool `[1, 1, length, length]`,
/// true where the key position is at or before the query position (Flax's
/// `make_causal_mask`, with broadcast batch and head dims).
#[track_caller]
pub fn make_causal_mask(length: i64) -> Array {
    let positions = jnp::arange(0.0, length as f64, 1.0, DType::I32);
    let query = jnp::reshape(&positions, &[1, 1, length, 1]);
    let key = jnp::reshape(&positions, &[1, 1, 1, length]);
    jnp::greater_equal(&query, &key)
}

/// A projection of Flax's `DenseGeneral`: `kernel` maps the input features
/// to `[heads, head_dim]` (or the reverse for the output projection).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct Projection {
    /// `[in, heads, head_dim]` for the query, key and value projections;
    /// `[heads, head_dim, out]` for the output.
    pub kernel: Array,
    /// `[heads, head_dim]` or `[out]`.
    pub bias: Array,
}

/// Multi-head self- or cross-attention with learned query, key, value and
/// output projections, named and shaped as Flax's
/// `MultiHeadDotProductAttention` (`query`, `key`, `value`, `out`).
///
/// ```
/// use oxla::{DType, numpy as jnp};
/// use oxla_nn::{MultiHeadAttention, make_causal_mask};
/// use oxla::random::Key;
/// # fn main() -> oxla::Result<()> {
/// let attention = MultiHeadAttention::new(Key::new(0), 8, 2); // 2 heads of 4 features
/// assert_eq!(attention.query.kernel.shape(), &[8, 2, 4]);
/// let x = jnp::ones(&[3, 5, 8], DType::F32); // [batch, length, features]
/// let mask = make_causal_mask(5);
/// let y = attention.apply(&x, Some(&mask));
/// assert_eq!(y.to_vec::<f32>()?.len(), 3 * 5 * 8);
/// // A constructor given features that do not split into the heads
/// // reports that when the layer is used.
/// let bad = MultiHeadAttention::new(Key::new(0), 10, 3);
/// let e = bad.apply(&jnp::ones(&[1, 2, 10], DType::F32), None).check().map(|_| ()).unwrap_err();
/// assert!(e.to_string().contains("10 features do not split into 3 heads"));
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct MultiHeadAttention {
    /// Query projection.
    pub query: Projection,
    /// Key projection.
    pub key: Projection,
    /// Value projection.
    pub value: Projection,
    /// Output projection.
    pub out: Projection,
    /// Number of heads.
    #[pytree(static)]
    pub num_heads: i64,
}

impl MultiHeadAttention {
    /// Attention over inputs of `features` with `num_heads` heads of
    /// `features / num_heads` each, projecting back to `features`; kernels
    /// drawn as Flax draws them (LeCun normal of the flattened
    /// `[in, heads * head_dim]` kernel), biases zero, f32.
    #[track_caller]
    pub fn new(key: impl IntoKey, features: i64, num_heads: i64) -> MultiHeadAttention {
        let key: Key = key.into_key();
        if num_heads <= 0 || features % num_heads != 0 {
            let location = oxla::Location::from_caller(std::panic::Location::caller());
            let e = Array::error(oxla::Error::InvalidArgument(format!(
                "{location}: MultiHeadAttention::new: {features} features do not split into \
                 {num_heads} heads"
            )));
            let bad = Projection {
                kernel: e.clone(),
                bias: e,
            };
            return MultiHeadAttention {
                query: bad.clone(),
                key: bad.clone(),
                value: bad.clone(),
                out: bad,
                num_heads,
            };
        }
        let head_dim = features / num_heads;
        let init = initializers::lecun_normal();
        let mut keys = split(key, 4).into_iter();
        let input = |k| project(k, init, features, &[num_heads, head_dim], false);
        let (query, key, value) = (input(keys.next()), input(keys.next()), input(keys.next()));
        let out = project(keys.next(), init, features, &[num_heads, head_dim], true);
        MultiHeadAttention {
            query,
            key,
            value,
            out,
            num_heads,
        }
    }

    /// Self-attention of `x` `[..., length, features]`; `mask` (bool,
    /// broadcast to `[..., heads, length, length]`) keeps where true, e.g.
    /// [`make_causal_mask`].
    #[track_caller]
    pub fn apply(&self, x: &Array, mask: Option<&Array>) -> Array {
        self.apply_cross(x, x, mask)
    }

    /// Attention of queries from `inputs_q` over keys and values from
    /// `inputs_kv` (both `[..., length, features]`).
    #[track_caller]
    pub fn apply_cross(&self, inputs_q: &Array, inputs_kv: &Array, mask: Option<&Array>) -> Array {
        if let Some(e) = super::own_error(self) {
            return e;
        }
        let features = self
            .query
            .kernel
            .shape_or_empty()
            .first()
            .copied()
            .unwrap_or(0);
        for x in [inputs_q, inputs_kv] {
            if let Err(e) = expect_features("MultiHeadAttention", x, features) {
                return e;
            }
            if x.ndim_or_zero() < 2 {
                return layer_input_error(
                    "MultiHeadAttention",
                    x,
                    "the inputs need a sequence axis: [..., length, features]",
                );
            }
        }
        let into_heads = |p: &Projection, x: &Array| {
            let s = p.kernel.shape_or_empty();
            let flat = jnp::reshape(&p.kernel, &[s[0], s[1] * s[2]]);
            let mut shape = x.shape_or_empty()[..x.ndim_or_zero() - 1].to_vec();
            shape.extend([s[1], s[2]]);
            jnp::reshape(&jnp::matmul(x, &flat), &shape) + &p.bias
        };
        let q = into_heads(&self.query, inputs_q);
        let k = into_heads(&self.key, inputs_kv);
        let v = into_heads(&self.value, inputs_kv);
        let attended = flax_dot_product_attention(&q, &k, &v, mask);
        let s = self.out.kernel.shape_or_empty();
        let flat_kernel = jnp::reshape(&self.out.kernel, &[s[0] * s[1], s[2]]);
        let mut flat_shape = attended.shape_or_empty()[..attended.ndim_or_zero() - 2].to_vec();
        flat_shape.push(s[0] * s[1]);
        jnp::matmul(&jnp::reshape(&attended, &flat_shape), &flat_kernel) + &self.out.bias
    }
}

/// A projection between `features` and `heads` (`[heads, head_dim]`),
/// its kernel drawn flat as Flax's `DenseGeneral` draws it; `output`
/// projects from the heads back to `features`.
fn project(
    key: Option<Key>,
    init: Initializer,
    features: i64,
    heads: &[i64],
    output: bool,
) -> Projection {
    let key = key.expect("four keys were split");
    let width: i64 = heads.iter().product();
    let (flat, shape, bias): (Vec<i64>, Vec<i64>, Vec<i64>) = if output {
        (
            vec![width, features],
            [heads, &[features]].concat(),
            vec![features],
        )
    } else {
        (
            vec![features, width],
            [&[features], heads].concat(),
            heads.to_vec(),
        )
    };
    Projection {
        kernel: jnp::reshape(&init.init(key, &flat, DType::F32), &shape),
        bias: jnp::zeros(&bias, DType::F32),
    }
}
