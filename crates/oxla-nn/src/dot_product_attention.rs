//! `jax.nn.dot_product_attention`: scaled dot-product attention over
//! `[batch, length, heads, depth]` arrays, with grouped key/value heads,
//! an additive bias, boolean, causal, local-window and sequence-length
//! masks, computed as JAX's XLA implementation computes it.

use oxla::numpy as jnp;
use oxla::{Array, DType, lax};

use super::activations::softmax;

/// The optional arguments of [`dot_product_attention`] (JAX's keyword
/// arguments), all off by default.
#[derive(Clone, Copy, Default)]
pub struct AttentionOptions<'a> {
    /// Added to the scaled logits: `[B|1, N|1, T, S]` (or of rank 3 or
    /// less, given leading size-1 dimensions).
    pub bias: Option<&'a Array>,
    /// Where false, the logit is replaced by a large negative value: bool,
    /// shaped as `bias`.
    pub mask: Option<&'a Array>,
    /// The logits' scale (default `1 / sqrt(depth)`).
    pub scale: Option<f64>,
    /// Each query position attends to key positions at or before its own.
    pub is_causal: bool,
    /// Valid query lengths per batch element (i32 `[B]`): later query
    /// positions attend to nothing and their outputs are zero.
    pub query_seq_lengths: Option<&'a Array>,
    /// Valid key/value lengths per batch element (i32 `[B]`).
    pub key_value_seq_lengths: Option<&'a Array>,
    /// `(left, right)`: each query position `t` attends to key positions in
    /// `[t - left, t + right]`.
    pub local_window_size: Option<(i64, i64)>,
}

/// `jax.nn.dot_product_attention(query, key, value, ...)`: `query`
/// `[B, T, N, H]`, `key` and `value` `[B, S, K, H]` (rank 3 drops `B`),
/// `N` a multiple of `K` (each key/value head serves `N / K` query heads).
/// The logits are computed in at least f32, scaled, biased and masked
/// (masked ones set to `-0.7 ×` the dtype's largest value), normalized by
/// softmax in f32, and the result `[B, T, N, H]` is the weighted values.
#[track_caller]
pub fn dot_product_attention(
    query: &Array,
    key: &Array,
    value: &Array,
    options: &AttentionOptions<'_>,
) -> Array {
    let location = oxla::Location::from_caller(std::panic::Location::caller());
    oxla::at_caller_location(|| attention(query, key, value, options, location))
}

fn attention(
    query: &Array,
    key: &Array,
    value: &Array,
    o: &AttentionOptions<'_>,
    location: oxla::Location,
) -> Array {
    let shape_error = |message: String| {
        Array::error(oxla::Error::InvalidArgument(format!(
            "{location}: dot_product_attention: {message}"
        )))
    };
    let out_rank = query.ndim_or_zero();
    let (q, k, v) = (ensure_4d(query), ensure_4d(key), ensure_4d(value));
    let (qs, ks) = (q.shape_or_empty().to_vec(), k.shape_or_empty().to_vec());
    if qs.len() != 4 || ks.len() != 4 || value.shape_or_empty() != key.shape_or_empty() {
        return shape_error(format!(
            "query, key and value must be [B, T, N, H], [B, S, K, H] and [B, S, K, H], got {:?}, \
             {:?} and {:?}",
            query.shape_or_empty(),
            key.shape_or_empty(),
            value.shape_or_empty()
        ));
    }
    let [b, t, n, h] = [qs[0], qs[1], qs[2], qs[3]];
    let [_, s, heads_kv, _] = [ks[0], ks[1], ks[2], ks[3]];
    if ks[0] != b || ks[3] != h || heads_kv == 0 || n % heads_kv != 0 {
        return shape_error(format!(
            "query {qs:?} and key {ks:?} need the same batch and depth, and query heads a \
             multiple of key/value heads"
        ));
    }
    let groups = n / heads_kv;
    let logits_dtype = promote_to_f32(q.dtype_or_bool());
    let grouped = jnp::reshape(&q, &[b, t, heads_kv, groups, h]);
    let as_logits = |x: &Array| lax::convert_element_type(x, logits_dtype);
    let mut logits = jnp::einsum("BTKGH,BSKH->BKGTS", &[&as_logits(&grouped), &as_logits(&k)]);
    let scale = o.scale.unwrap_or(1.0 / (h as f64).sqrt());
    logits = &logits * &lax::convert_element_type(&Array::weak_scalar(scale), logits_dtype);
    let to_grouped = |x: &Array| grouped_heads(&ensure_4d(x), heads_kv, groups);
    if let Some(bias) = o.bias {
        logits = as_logits(&(&logits + &to_grouped(bias)));
    }
    if let Some(mask) = combined_mask(o, b, t, s, &to_grouped) {
        let large_negative = Array::weak_scalar(-0.7 * largest_finite(logits_dtype));
        logits = jnp::where_(
            &mask,
            &logits,
            &lax::convert_element_type(&large_negative, logits_dtype),
        );
    }
    let probs = lax::convert_element_type(
        &softmax(&lax::convert_element_type(&logits, DType::F32), Some(&[-1])),
        k.dtype_or_bool(),
    );
    let mut encoded = jnp::reshape(
        &jnp::einsum("BKGTS,BSKH->BTKGH", &[&probs, &v]),
        &[b, t, n, h],
    );
    if let Some(lengths) = o.query_seq_lengths {
        let valid = jnp::less(
            &jnp::reshape(&positions(t), &[1, t, 1, 1]),
            &jnp::reshape(lengths, &[b, 1, 1, 1]),
        );
        encoded = &encoded * &lax::convert_element_type(&valid, encoded.dtype_or_bool());
    }
    match out_rank {
        3 => jnp::reshape(&encoded, &[t, n, h]),
        _ => encoded,
    }
}

/// The boolean mask `[B|1, K, G|1, T, S]` of every mask the options ask
/// for (`None`: none).
fn combined_mask(
    o: &AttentionOptions<'_>,
    b: i64,
    t: i64,
    s: i64,
    to_grouped: &dyn Fn(&Array) -> Array,
) -> Option<Array> {
    let mut masks: Vec<Array> = Vec::new();
    if let Some(mask) = o.mask {
        masks.push(to_grouped(mask));
    }
    let query_pos = jnp::reshape(&positions(t), &[t, 1]);
    let key_pos = jnp::reshape(&positions(s), &[1, s]);
    if o.is_causal {
        masks.push(jnp::greater_equal(&query_pos, &key_pos));
    }
    if let Some((left, right)) = o.local_window_size {
        let within_left = jnp::less_equal(&query_pos, &(&key_pos + left));
        let within_right = jnp::greater_equal(&query_pos, &(&key_pos - right));
        masks.push(lax::and(&within_left, &within_right));
    }
    if let Some(lengths) = o.query_seq_lengths {
        let valid = jnp::less(
            &jnp::reshape(&positions(t), &[1, t, 1]),
            &jnp::reshape(lengths, &[b, 1, 1]),
        );
        masks.push(jnp::reshape(&valid, &[b, 1, 1, t, 1]));
    }
    if let Some(lengths) = o.key_value_seq_lengths {
        let valid = jnp::less(
            &jnp::reshape(&positions(s), &[1, 1, s]),
            &jnp::reshape(lengths, &[b, 1, 1]),
        );
        masks.push(jnp::reshape(&valid, &[b, 1, 1, 1, s]));
    }
    masks.into_iter().reduce(|all, m| {
        let v = broadcast_pair(&all, &m);
        lax::and(&v.0, &v.1)
    })
}

/// Both operands broadcast to their common shape (ranks aligned right).
fn broadcast_pair(x: &Array, y: &Array) -> (Array, Array) {
    match jnp::broadcast_shapes(x.shape_or_empty(), y.shape_or_empty()) {
        Some(shape) => (jnp::broadcast_to(x, &shape), jnp::broadcast_to(y, &shape)),
        // Incompatible: `and` reports the shapes.
        None => (x.clone(), y.clone()),
    }
}

/// A bias or mask `[B|1, N|1, T, S]` as `[B|1, K, G|1, T, S]`.
fn grouped_heads(x: &Array, heads_kv: i64, groups: i64) -> Array {
    let shape = x.shape_or_empty().to_vec();
    match shape.as_slice() {
        [tb, 1, tt, ts] => jnp::reshape(x, &[*tb, 1, 1, *tt, *ts]),
        [tb, _, tt, ts] => jnp::reshape(x, &[*tb, heads_kv, groups, *tt, *ts]),
        _ => x.clone(),
    }
}

/// `x` with leading size-1 dimensions up to rank 4.
fn ensure_4d(x: &Array) -> Array {
    let shape = x.shape_or_empty();
    if shape.len() >= 4 {
        return x.clone();
    }
    let mut full = vec![1; 4 - shape.len()];
    full.extend_from_slice(shape);
    jnp::reshape(x, &full)
}

/// `0, 1, ..., n - 1` as i32.
fn positions(n: i64) -> Array {
    jnp::arange(0.0, n as f64, 1.0, DType::I32)
}

/// `jnp.promote_types(dtype, float32)` for a float dtype.
fn promote_to_f32(dtype: DType) -> DType {
    match dtype {
        DType::F64 => DType::F64,
        _ => DType::F32,
    }
}

/// The largest finite value of `dtype`, capped at f32's (JAX's
/// `_get_large_negative` caps it so the value stays finite in f32).
fn largest_finite(dtype: DType) -> f64 {
    dtype.float_info().max.min(DType::F32.float_info().max)
}
