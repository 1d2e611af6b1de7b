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
/// dtype's least finite value where `mask` (broadcast to them; a mask of
/// numbers is true where nonzero, as `jnp.where` reads it) is false,
/// softmax over `k`; the result is `[..., q, heads, depth]`.
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
        let mask = match mask.dtype_or_bool() {
            DType::Bool => mask.clone(),
            _ => jnp::astype(mask, DType::Bool),
        };
        let least = oxla::lax::convert_element_type(
            &Array::weak_scalar(logits.dtype_or_bool().float_info().min()),
            logits.dtype_or_bool(),
        );
        logits = jnp::where_(&mask, &logits, &least);
    }
    let weights = softmax(&logits, None);
    jnp::swapaxes(&jnp::matmul(&weights, &v), -3, -2)
}

/// The mask of attention from `query_input` `[batch..., q_len]` to
/// `key_input` `[batch..., kv_len]`, as Flax's `make_attention_mask`:
/// `pairwise_fn(query_input[..., :, None], key_input[..., None, :])` with a
/// heads axis of 1 inserted before the last two, and `extra_batch_dims`
/// axes of 1 in front: bool `[1 × extra_batch_dims, batch..., 1, q_len,
/// kv_len]` (Flax's with `dtype=jnp.bool_`; nonzero is true), one axis more
/// than the inputs of [`MultiHeadAttention`] it masks. A padding mask is
/// `make_attention_mask(&(tokens > 0), &(tokens > 0), jnp::logical_and, 0)`.
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// use oxla_nn::make_attention_mask;
/// # fn main() -> oxla::Result<()> {
/// let tokens = Array::from_slice(&[5i32, 7, 0], &[1, 3])?;       // one sequence, padded
/// let valid = jnp::not_equal(&tokens, &Array::scalar(0i32)?);
/// let mask = make_attention_mask(&valid, &valid, jnp::logical_and, 0);
/// assert_eq!(mask.shape(), &[1, 1, 3, 3]);                        // [batch, heads, q, kv]
/// let rows = mask.to_vec::<bool>()?;
/// assert_eq!(&rows[..3], &[true, true, false]);                   // nothing attends to padding
/// assert_eq!(make_attention_mask(&valid, &valid, jnp::logical_and, 2).shape(), &[1, 1, 1, 1, 3, 3]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn make_attention_mask(
    query_input: &Array,
    key_input: &Array,
    pairwise_fn: impl Fn(&Array, &Array) -> Array,
    extra_batch_dims: usize,
) -> Array {
    let pairs = pairwise_fn(
        &jnp::expand_dims(query_input, -1),
        &jnp::expand_dims(key_input, -2),
    );
    let mut mask = jnp::expand_dims(&pairs, -3);
    for _ in 0..extra_batch_dims {
        mask = jnp::expand_dims(&mask, 0);
    }
    jnp::astype(&mask, DType::Bool)
}

/// The causal mask of self-attention over `x` `[batch..., len]` (only its
/// shape is read: token ids, say): bool `[batch..., 1, len, len]`, true
/// where the key position is at or before the query position, as Flax's
/// `make_causal_mask(x)` (its rank follows `x`, so under
/// [`vmap`](oxla::vmap) a mask made from one example fits that example).
/// An `x` without a sequence axis is an error naming the caller's line.
/// [`make_causal_mask_with`] adds Flax's `extra_batch_dims`.
///
/// ```
/// use oxla::{DType, numpy as jnp};
/// use oxla_nn::make_causal_mask;
/// # fn main() -> oxla::Result<()> {
/// let mask = make_causal_mask(&jnp::zeros(&[2, 3], DType::I32));   // 2 sequences of 3
/// assert_eq!(mask.shape(), &[2, 1, 3, 3]);
/// assert_eq!(&mask.to_vec::<bool>()?[..9], &[true, false, false, true, true, false, true, true, true]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn make_causal_mask(x: &Array) -> Array {
    make_causal_mask_with(x, 0)
}

/// [`make_causal_mask`] with `extra_batch_dims` axes of 1 in front (Flax's
/// `make_causal_mask(x, extra_batch_dims)`): bool `[1 × extra_batch_dims,
/// batch..., 1, len, len]`.
///
/// ```
/// use oxla::{DType, numpy as jnp};
/// use oxla_nn::make_causal_mask_with;
/// let mask = make_causal_mask_with(&jnp::zeros(&[2, 3], DType::I32), 1);
/// assert_eq!(mask.shape(), &[1, 2, 1, 3, 3]);
/// ```
#[track_caller]
pub fn make_causal_mask_with(x: &Array, extra_batch_dims: usize) -> Array {
    let shape = match x.aval() {
        Err(e) => return Array::error(e),
        Ok(a) => a.shape.clone(),
    };
    let Some(&length) = shape.last() else {
        let location = oxla::Location::from_caller(std::panic::Location::caller());
        return Array::error(oxla::Error::InvalidArgument(format!(
            "{location}: make_causal_mask of {}: x needs a sequence axis, [batch..., length]",
            x.aval().map(ToString::to_string).unwrap_or_default()
        )));
    };
    let positions = jnp::broadcast_to(&jnp::arange(0.0, length as f64, 1.0, DType::I32), &shape);
    make_attention_mask(&positions, &positions, jnp::greater_equal, extra_batch_dims)
}

/// `Ok` when `mask` fits the attention weights of `inputs_q` over `inputs_kv`
/// in `heads` heads, `[batch..., heads, q_len, kv_len]`: one axis more than
/// `inputs_q`, each of size 1 or the weights' (Flax's convention, without
/// the silent broadcasts of a mask of another rank, as a batch's mask met
/// by one example under `vmap`); else the error naming `layer`, both
/// shapes and the caller's line.
#[track_caller]
fn check_mask(
    layer: &str,
    mask: &Array,
    inputs_q: &Array,
    inputs_kv: &Array,
    heads: i64,
) -> Result<(), Array> {
    let (m, q, kv) = match (mask.aval(), inputs_q.aval(), inputs_kv.aval()) {
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Err(Array::error(e)),
        (Ok(m), Ok(q), Ok(kv)) => (m, q, kv),
    };
    let (qs, ks) = (&q.shape, &kv.shape);
    let mut weights: Vec<i64> = qs[..qs.len() - 2]
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            if ks.len() == qs.len() && d == 1 {
                ks[i]
            } else {
                d
            }
        })
        .collect();
    weights.extend([heads, qs[qs.len() - 2], ks[ks.len() - 2]]);
    let fits = m.shape.len() == weights.len()
        && m.shape
            .iter()
            .zip(&weights)
            .all(|(&a, &w)| a == 1 || a == w);
    if fits {
        return Ok(());
    }
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    let shape = |s: &[i64]| {
        s.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    Err(Array::error(oxla::Error::InvalidArgument(format!(
        "{location}: {layer} of {q} with mask {m}: the mask must have one axis more than the \
         query input, [batch..., heads, q_len, kv_len], each of size 1 or the attention \
         weights' [{}] (a mask of rank {} does not fit an input of rank {}; under vmap, \
         make the mask from the example, e.g. make_causal_mask or make_attention_mask)",
        shape(&weights),
        m.shape.len(),
        qs.len(),
    ))))
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
/// let mask = make_causal_mask(&jnp::zeros(&[3, 5], DType::I32)); // [batch, 1, length, length]
/// let y = attention.apply(&x, Some(&mask));
/// assert_eq!(y.to_vec::<f32>()?.len(), 3 * 5 * 8);
/// // A mask must have one axis more than the input: [length, length] is
/// // not broadcast silently.
/// let e = attention.apply(&x, Some(&jnp::ones(&[5, 5], DType::Bool))).check().map(|_| ()).unwrap_err();
/// assert!(e.to_string().contains("MultiHeadAttention.apply of f32[3,5,8] with mask bool[5,5]"));
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

    /// Self-attention of `x` `[batch..., length, features]`; `mask` keeps
    /// the weights where true (nonzero) and is `[batch..., heads, length,
    /// length]`, each axis of size 1 or the weights' (Flax's convention),
    /// e.g. [`make_causal_mask`] or [`make_attention_mask`] of the tokens.
    /// A mask of another rank (one made for a batch, met by one example
    /// under `vmap`, say) or with a size that neither is 1 nor matches is
    /// an error naming the layer, both shapes and the caller's line, never
    /// a silent broadcast.
    #[track_caller]
    pub fn apply(&self, x: &Array, mask: Option<&Array>) -> Array {
        self.attend("MultiHeadAttention.apply", x, x, mask)
    }

    /// Attention of queries from `inputs_q` `[batch..., q_len, features]`
    /// over keys and values from `inputs_kv` `[batch..., kv_len,
    /// features]`; `mask` as in [`apply`](Self::apply), `[batch..., heads,
    /// q_len, kv_len]`.
    #[track_caller]
    pub fn apply_cross(&self, inputs_q: &Array, inputs_kv: &Array, mask: Option<&Array>) -> Array {
        self.attend("MultiHeadAttention.apply_cross", inputs_q, inputs_kv, mask)
    }

    /// [`apply_cross`](Self::apply_cross), its errors naming `layer`.
    #[track_caller]
    fn attend(
        &self,
        layer: &str,
        inputs_q: &Array,
        inputs_kv: &Array,
        mask: Option<&Array>,
    ) -> Array {
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
        if let Some(mask) = mask
            && let Err(e) = check_mask(layer, mask, inputs_q, inputs_kv, self.num_heads)
        {
            return e;
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
