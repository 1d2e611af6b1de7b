//! A training run with oxla: full-batch gradient descent on a linear model
//! y = x.w + b, with a jitted train step (compiled once, run 300 times on
//! the CPU plugin) whose gradients come from `value_and_grad` over the
//! parameter pytree.
//!
//! `cargo run --release -p oxla --example linear_regression`

use oxla::{Array, DType, jit, lax, numpy as jnp, value_and_grad};

const SAMPLES: i64 = 256;
const FEATURES: i64 = 4;
const STEPS: usize = 300;
const LEARNING_RATE: f64 = 0.3;

/// x[i, j] = sin(0.37 (j + 1) i + j): features of different frequencies.
fn features() -> Array {
    let i = lax::iota(DType::F32, &[SAMPLES, FEATURES], 0);
    let j = lax::iota(DType::F32, &[SAMPLES, FEATURES], 1);
    jnp::sin(&((&j + 1.0) * 0.37 * &i + &j))
}

/// The parameters: weights and bias.
type Params = (Array, Array);

/// Mean squared error of the model on (x, y).
fn loss((w, b): Params, x: &Array, y: &Array) -> Array {
    let err = jnp::matmul(x, &w) + &b - y;
    jnp::mean(&jnp::square(&err), None, false)
}

/// One step: the updated parameters, and the loss before it.
fn train_step((params, x, y): (Params, Array, Array)) -> oxla::Result<(Params, Array)> {
    let (value, (grad_w, grad_b)) =
        value_and_grad(|p: Params| loss(p, &x, &y)).call(params.clone())?;
    let (w, b) = params;
    Ok((
        (
            &w - &(grad_w * LEARNING_RATE),
            &b - &(grad_b * LEARNING_RATE),
        ),
        value,
    ))
}

fn main() -> oxla::Result<()> {
    let x = features();
    let true_w = Array::from_slice(&[1.5f32, -2.0, 0.5, 3.0], &[FEATURES])?;
    let y = jnp::matmul(&x, &true_w) + 0.7;
    let mut w = jnp::zeros(&[FEATURES], DType::F32);
    let mut b = Array::scalar(0.0f32)?;
    let step = jit(train_step);
    let mut loss = f32::NAN;
    for i in 0..STEPS {
        let ((new_w, new_b), l) = step.call(((w, b), x.clone(), y.clone()))?;
        (w, b) = (new_w, new_b);
        if i % 50 == 0 || i + 1 == STEPS {
            loss = l.item::<f32>()?;
            println!("step {i:3}  loss {loss:.6}");
        }
    }
    println!("w = {w}");
    println!("b = {b}");
    println!(
        "compiled {} train step(s), {} eager op programs",
        step.cache_size(),
        oxla::eager_cache_size()
    );
    if loss > 1e-4 {
        return Err(oxla::Error::InvalidArgument(format!(
            "training did not converge: loss {loss}"
        )));
    }
    Ok(())
}
