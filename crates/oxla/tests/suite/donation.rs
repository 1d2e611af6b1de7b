//! Donation: outputs reuse donated input buffers in place; a donated array
//! cannot be used again, with an error that names the argument.

use oxla::{Array, DType, Error, jit, numpy as jnp};

fn params(n: usize, size: i64) -> Vec<Array> {
    (0..n)
        .map(|i| Array::from_slice(&vec![i as f32 + 1.0; size as usize], &[size]).unwrap())
        .collect()
}

fn sgd((params, grads): (Vec<Array>, Vec<Array>)) -> Vec<Array> {
    params
        .iter()
        .zip(&grads)
        .map(|(p, g)| p - &(g * 0.5))
        .collect()
}

#[test]
fn a_donated_update_reuses_its_inputs_and_they_cannot_be_used_again() {
    let size = 256 * 1024; // 1 MiB of f32 per array, 4 arrays.
    let args = (params(4, size), params(4, size));
    let bytes = 4 * size * 4;

    let plain = jit(sgd);
    let donating = jit(sgd).donate(&[0]).named("sgd");
    let without = plain.memory_stats(&args).unwrap();
    let with = donating.memory_stats(&args).unwrap();
    assert_eq!(without.alias_size_in_bytes, 0, "{without:?}");
    assert_eq!(
        with.alias_size_in_bytes, bytes,
        "the outputs live in the donated buffers: {with:?}"
    );
    assert_eq!(with.argument_size_in_bytes, 2 * bytes);
    assert_eq!(
        with.output_size_in_bytes - with.alias_size_in_bytes,
        without.output_size_in_bytes - bytes
    );
    assert!(
        donating
            .lower(&args)
            .unwrap()
            .contains("tf.aliasing_output = 0 : i32")
    );

    let (p, g) = args;
    // Donating a buffer that the same call also reads is refused by the
    // plugin, as an error; nothing is consumed.
    let err = donating.call((p.clone(), p.clone())).unwrap_err();
    assert!(matches!(err, Error::Runtime(_)), "{err}");
    assert!(err.to_string().contains("donate"), "{err}");
    assert_eq!(p[0].index(&oxla::s![0]).item::<f32>().unwrap(), 1.0);
    let updated = donating.call((p.clone(), g.clone())).unwrap();
    assert_eq!(
        updated[2].index(&oxla::s![0]).item::<f32>().unwrap(),
        3.0 - 1.5
    );
    // The gradients were not donated and stay usable.
    assert_eq!(g[0].index(&oxla::s![0]).item::<f32>().unwrap(), 1.0);
    let line = line!() + 1;
    let err = p[1].to_vec::<f32>().unwrap_err();
    assert!(matches!(err, Error::Donated { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!("donation.rs:{line}:")), "{text}");
    assert!(
        text.contains("donated as argument 0 ([0][1]) of sgd"),
        "{text}"
    );
    // Passing it to another computation is the same error, not a crash.
    let err = jnp::sum(&p[1], None, false).check().unwrap_err();
    assert!(matches!(err, Error::Donated { .. }), "{err}");
    let err = donating.call((p, g)).unwrap_err();
    assert!(matches!(err, Error::Donated { .. }), "{err}");
}

/// Found by the MNIST example (issue 10): with XLA:CPU's XNNPACK dot path
/// (the plugins' default), the second and later calls of a jitted AdamW
/// step whose 784→300 dense layer is donated compute the gradient from the
/// kernel as it was before the first in-place update, on both pinned CPU
/// plugins. oxla compiles CPU programs with `xla_cpu_use_xnnpack=false`
/// (`CompileOptions::for_platform`); this test fails without it.
#[test]
fn donated_parameters_of_a_large_dense_layer_update_correctly() {
    use oxla::random::{self, Key};
    use oxla_nn::Linear;
    use oxla_optim::{self as optim, GradientTransformation};
    type State = optim::StateOf<optim::AdamW, Linear>;
    let opt = optim::adamw(1e-3, 1e-4);
    let step = |(model, state, x, y): (Linear, State, Array, Array)| {
        let loss = |m: Linear| {
            jnp::mean(
                &optim::losses::softmax_cross_entropy_with_integer_labels(&m.apply(&x), &y),
                None,
                false,
            )
        };
        let (_, grads) = oxla::value_and_grad(loss).call(model.clone())?;
        let (updates, state) = opt.update(grads, state, &model)?;
        oxla::Result::Ok((optim::apply_updates(&model, &updates)?, state))
    };
    let plain = jit(step);
    let donated = jit(step).donate(&[0]);
    let x = random::uniform(
        Key::new(1),
        &[128, 784],
        DType::F32,
        &Array::weak_scalar(0.0f32),
        &Array::weak_scalar(1.0f32),
    );
    let y = random::randint(
        Key::new(2),
        &[128],
        &Array::weak_scalar(0i32),
        &Array::weak_scalar(300i32),
        DType::I32,
    );
    let fresh = || {
        let m = Linear::new(Key::new(0), 784, 300);
        let s = opt.init(&m);
        (m, s)
    };
    let (mut m1, mut s1) = fresh();
    let (mut m2, mut s2) = fresh();
    for i in 0..3 {
        (m1, s1) = plain.call((m1, s1, x.clone(), y.clone())).unwrap();
        (m2, s2) = donated.call((m2, s2, x.clone(), y.clone())).unwrap();
        let (a, b) = (
            m1.kernel.to_vec::<f32>().unwrap(),
            m2.kernel.to_vec::<f32>().unwrap(),
        );
        let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert_eq!(
            differing,
            0,
            "step {i}: {differing} of {} elements differ",
            a.len()
        );
    }
}
