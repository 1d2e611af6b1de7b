//! A GRU sequence classifier (input 64, hidden 256, 10 classes; length 256,
//! batch 32) and its SGD training step, which the control-flow benchmark
//! shares with its JAX twin (bench/jax_control_twin.py). The recurrence is
//! one `lax::scan`; the input projection of every step is one product
//! before it, as JAX users write it.

use oxla::lax::{self, ScanOptions};
use oxla::{Array, numpy as jnp};
use oxla_nn as nn;

use crate::mlp::{LEARNING_RATE, data};

/// Input features per step.
pub const INPUT: i64 = 64;
/// Hidden units.
pub const HIDDEN: i64 = 256;
/// Steps per sequence.
pub const LENGTH: i64 = 256;
/// Sequences per batch.
pub const BATCH: i64 = 32;
/// Classes of the readout.
pub const CLASSES: i64 = 10;

/// The GRU's parameters: input weights `[INPUT, 3H]` and bias `[3H]`,
/// recurrent weights `[H, 3H]` and bias `[3H]` (gates r, z, n side by
/// side), readout weights `[H, CLASSES]` and bias.
pub type GruParams = Vec<Array>;

/// One GRU step: `h' = (1 - z) n + z h` with
/// `r, z = σ(x Wi + bi + h Wh + bh)` and `n = tanh(x Win + bin + r (h Whn + bhn))`,
/// where `xw = x Wi + bi` is precomputed.
fn gru_step(wh: &Array, bh: &Array, h: Array, xw: Array) -> Array {
    let hw = jnp::matmul(&h, wh) + bh;
    let xs = jnp::split(&xw, 3, -1);
    let hs = jnp::split(&hw, 3, -1);
    let r = nn::sigmoid(&(&xs[0] + &hs[0]));
    let z = nn::sigmoid(&(&xs[1] + &hs[1]));
    let n = jnp::tanh(&(&xs[2] + &(&r * &hs[2])));
    &n + &(&z * &(&h - &n))
}

/// Softmax cross-entropy of the readout of the last hidden state.
pub fn gru_loss(p: &[Array], xs: &Array, y: &Array) -> Array {
    let (wi, bi, wh, bh, wo, bo) = (&p[0], &p[1], &p[2], &p[3], &p[4], &p[5]);
    let xw = jnp::matmul(xs, wi) + bi;
    let h0 = jnp::zeros(&[BATCH, HIDDEN], oxla::DType::F32);
    let (h, ()) = lax::scan(
        |h: Array, xw: Array| (gru_step(wh, bh, h, xw), ()),
        h0,
        xw,
        ScanOptions::default(),
    )
    .unwrap_or_else(|e| (Array::error(e), ()));
    let logits = jnp::matmul(&h, wo) + bo;
    -jnp::mean(
        &jnp::sum(&(nn::log_softmax(&logits, None) * y), Some(&[-1]), false),
        None,
        false,
    )
}

/// The GRU's parameters, a batch of sequences `[LENGTH, BATCH, INPUT]` and
/// one-hot labels.
pub fn gru_args() -> anyhow::Result<(GruParams, Array, Array)> {
    let params = vec![
        data(&[INPUT, 3 * HIDDEN], 0.1, 1)?,
        data(&[3 * HIDDEN], 0.01, 2)?,
        data(&[HIDDEN, 3 * HIDDEN], 0.05, 3)?,
        data(&[3 * HIDDEN], 0.01, 4)?,
        data(&[HIDDEN, CLASSES], 0.05, 5)?,
        data(&[CLASSES], 0.01, 6)?,
    ];
    let xs = data(&[LENGTH, BATCH, INPUT], 1.0, 7)?;
    let labels: Vec<i32> = (0..BATCH as i32).map(|i| i * 3 % CLASSES as i32).collect();
    let y = nn::one_hot(&Array::from_slice(&labels, &[BATCH])?, CLASSES);
    Ok((params, xs, y))
}

/// One SGD step of the GRU: `value_and_grad` through the scan, then
/// `p - lr * g` for every parameter.
pub fn gru_train_step(
    (params, xs, y): (GruParams, Array, Array),
) -> oxla::Result<(GruParams, Array)> {
    let (loss, grads) =
        oxla::value_and_grad(|p: GruParams| gru_loss(&p, &xs, &y)).call(params.clone())?;
    let updated = params
        .iter()
        .zip(&grads)
        .map(|(p, g)| p - &(g * LEARNING_RATE))
        .collect();
    Ok((updated, loss))
}
