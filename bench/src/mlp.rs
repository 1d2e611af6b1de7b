//! The MLP forward and loss (784-512-512-10, batch 128) the benchmarks
//! share with their JAX twins.

use oxla::{Array, DType, numpy as jnp};
use oxla_nn as nn;

/// One layer: weights and bias.
pub type Layer = (Array, Array);

/// Softmax cross-entropy of a ReLU MLP.
pub fn mlp_loss((params, x, y): (Vec<Layer>, Array, Array)) -> Array {
    let mut h = x;
    for (i, (w, b)) in params.iter().enumerate() {
        h = jnp::matmul(&h, w) + b;
        if i + 1 < params.len() {
            h = nn::relu(&h);
        }
    }
    -jnp::mean(
        &jnp::sum(&(nn::log_softmax(&h, None) * &y), Some(&[-1]), false),
        None,
        false,
    )
}

/// Deterministic pseudo-random data of `shape` in [-scale, scale) (each
/// side uses its own data; the workloads, not the values, are compared).
pub fn data(shape: &[i64], scale: f32, seed: u64) -> anyhow::Result<Array> {
    let n: i64 = shape.iter().product();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let values: Vec<f32> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * scale
        })
        .collect();
    Ok(Array::from_slice(&values, shape)?)
}

/// The MLP's parameters (784-512-512-10).
pub fn mlp_params() -> anyhow::Result<Vec<Layer>> {
    let sizes = [784i64, 512, 512, 10];
    sizes
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            Ok((
                data(&[w[0], w[1]], 0.05, i as u64)?,
                jnp::zeros(&[w[1]], DType::F32),
            ))
        })
        .collect()
}

/// A batch of `n` inputs and one-hot labels.
pub fn mlp_batch(n: i64) -> anyhow::Result<(Array, Array)> {
    let x = data(&[n, 784], 1.0, 10)?;
    let labels: Vec<i32> = (0..n as i32).map(|i| i * 7 % 10).collect();
    let y = nn::one_hot(&Array::from_slice(&labels, &[n])?, 10);
    Ok((x, y))
}

/// The MLP's parameters and a batch of 128.
pub fn mlp_args() -> anyhow::Result<(Vec<Layer>, Array, Array)> {
    let (x, y) = mlp_batch(128)?;
    Ok((mlp_params()?, x, y))
}

/// Learning rate of the benchmarks' SGD step.
pub const LEARNING_RATE: f64 = 0.01;

/// One SGD step of the MLP: `value_and_grad` of the loss over the
/// parameter pytree, then `p - lr * g` for every leaf.
pub fn train_step((params, x, y): (Vec<Layer>, Array, Array)) -> oxla::Result<(Vec<Layer>, Array)> {
    let (loss, grads) = oxla::value_and_grad(|p: Vec<Layer>| mlp_loss((p, x.clone(), y.clone())))
        .call(params.clone())?;
    let updated = params
        .iter()
        .zip(&grads)
        .map(|((w, b), (gw, gb))| (w - &(gw * LEARNING_RATE), b - &(gb * LEARNING_RATE)))
        .collect();
    Ok((updated, loss))
}

/// A deep tanh MLP's loss, each layer optionally checkpointed with `policy`.
pub fn deep_loss(layers: &[Array], x: &Array, policy: Option<&oxla::RematPolicy>) -> Array {
    let mut h = x.clone();
    for w in layers {
        let layer = |(h, w): (Array, Array)| jnp::tanh(&jnp::matmul(&h, &w));
        h = match policy {
            Some(p) => oxla::checkpoint(layer)
                .policy(p.clone())
                .call((h, w.clone()))
                .unwrap_or_else(Array::error),
            None => layer((h, w.clone())),
        };
    }
    jnp::sum(&jnp::square(&h), None, false)
}

/// The deep tanh MLP as a scan over stacked weights `ws[layer, in, out]`,
/// the body optionally checkpointed with `policy`.
pub fn scanned_deep_loss(ws: &Array, x: &Array, policy: Option<&oxla::RematPolicy>) -> Array {
    let layer = |(h, w): (Array, Array)| jnp::tanh(&jnp::matmul(&h, &w));
    let body = |h: Array, w: Array| {
        let h = match policy {
            Some(p) => oxla::checkpoint(layer)
                .policy(p.clone())
                .call((h, w))
                .unwrap_or_else(Array::error),
            None => layer((h, w)),
        };
        (h, ())
    };
    let (h, ()) = oxla::lax::scan(
        body,
        x.clone(),
        ws.clone(),
        oxla::lax::ScanOptions::default(),
    )
    .unwrap_or_else(|e| (Array::error(e), ()));
    jnp::sum(&jnp::square(&h), None, false)
}
