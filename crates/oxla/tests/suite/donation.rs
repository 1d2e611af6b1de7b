//! Donation: outputs reuse donated input buffers in place; a donated array
//! cannot be used again, with an error that names the argument.

use oxla::{Array, Error, jit, numpy as jnp};

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
