//! oxla_nn's BatchNorm, GroupNorm and InstanceNorm against Flax linen
//! (reference/normalization_layers.py): on Flax's (perturbed) parameters,
//! each layer's output and the gradient of `sum(sin(y))` w.r.t. the input
//! and the parameters; BatchNorm's running mean and variance after each of
//! three jitted training steps, then evaluation with them; and the error
//! of an input with the wrong number of features.

use oxla::{Array, DType, jit, numpy as jnp, value_and_grad};
use oxla_nn::{BatchNorm, BatchStats, GroupNorm, InstanceNorm};
use serde_json::Value;

use crate::reference::{self, assert_close};

fn layer(name: &str) -> &'static Value {
    &reference::script("normalization_layers.py")[name]
}

fn arr(v: &Value) -> Array {
    reference::array(v)
}

fn loss(y: &Array) -> Array {
    jnp::sum(&jnp::sin(y), None, false)
}

/// Flax's parameters of `case` as `(scale, bias)`.
fn params(case: &Value) -> (Option<Array>, Option<Array>) {
    (Some(arr(&case["scale"])), Some(arr(&case["bias"])))
}

/// The gradients w.r.t. the input, scale and bias against jax.grad's.
fn assert_grads(gx: &Array, scale: &Option<Array>, bias: &Option<Array>, want: &Value, what: &str) {
    assert_close(gx, &want["x"], &format!("{what}: d/dx"));
    assert_close(
        scale.as_ref().unwrap(),
        &want["scale"],
        &format!("{what}: d/dscale"),
    );
    assert_close(
        bias.as_ref().unwrap(),
        &want["bias"],
        &format!("{what}: d/dbias"),
    );
}

fn flax_batch_norm(c: &Value) -> BatchNorm {
    let (scale, bias) = params(c);
    BatchNorm {
        scale,
        bias,
        ..BatchNorm::new(8)
    }
}

/// Three training steps as one jitted function that takes the layer, its
/// running statistics and a batch and returns the output, the updated
/// statistics and the gradients: each step's numbers are Flax's. Then
/// evaluation on the final statistics.
#[test]
fn batch_norm_trains_under_jit_and_evaluates_as_flax() {
    let c = layer("batch_norm");
    let bn = flax_batch_norm(c);
    let fresh = BatchStats::new(8);
    assert_close(&fresh.mean, &c["initial_mean"], "initial mean");
    assert_close(&fresh.var, &c["initial_var"], "initial var");
    let step = jit(|(bn, stats, x): (BatchNorm, BatchStats, Array)| {
        let ((_, (y, stats)), (g, gx)) = value_and_grad(|(bn, x): (BatchNorm, Array)| {
            let (y, new) = bn.apply_train(&stats, &x);
            (loss(&y), (y, new))
        })
        .call_with_aux((bn, x))?;
        oxla::Result::Ok((y, stats, g, gx))
    });
    let mut stats = fresh;
    for (i, s) in c["steps"].as_array().unwrap().iter().enumerate() {
        let x = arr(&s["x"]);
        if i == 0 {
            // Eagerly too.
            let (y, eager) = bn.apply_train(&stats, &x);
            assert_close(&y, &s["output"], "eager step 0");
            assert_close(&eager.mean, &s["mean"], "eager step 0: mean");
            assert_close(&eager.var, &s["var"], "eager step 0: var");
        }
        let (y, new, g, gx) = step.call((bn.clone(), stats, x)).unwrap();
        let what = format!("train step {i}");
        assert_close(&y, &s["output"], &what);
        assert_close(&new.mean, &s["mean"], &format!("{what}: running mean"));
        assert_close(&new.var, &s["var"], &format!("{what}: running var"));
        assert_grads(&gx, &g.scale, &g.bias, &s["grad"], &what);
        stats = new;
    }
    let e = &c["eval"];
    let x = arr(&e["x"]);
    assert_close(&bn.apply_eval(&stats, &x), &e["output"], "eval");
    let (g, gx) = oxla::grad(|(bn, x): (BatchNorm, Array)| loss(&bn.apply_eval(&stats, &x)))
        .call((bn, x))
        .unwrap();
    assert_grads(&gx, &g.scale, &g.bias, &e["grad"], "eval");
}

/// A stateless norm's output and gradients against Flax's.
fn check_stateless<L: oxla::Pytree + ScaleBias>(
    layer: L,
    apply: fn(&L, &Array) -> Array,
    c: &Value,
    what: &str,
) {
    let x = arr(&c["x"]);
    assert_close(&apply(&layer, &x), &c["output"], what);
    let (g, gx) = oxla::grad(|(l, x): (L, Array)| loss(&apply(&l, &x)))
        .call((layer, x))
        .unwrap();
    let (scale, bias) = g.scale_bias();
    assert_grads(&gx, &scale, &bias, &c["grad"], what);
}

/// The parameters of a norm's gradient.
trait ScaleBias {
    fn scale_bias(self) -> (Option<Array>, Option<Array>);
}

impl ScaleBias for GroupNorm {
    fn scale_bias(self) -> (Option<Array>, Option<Array>) {
        (self.scale, self.bias)
    }
}

impl ScaleBias for InstanceNorm {
    fn scale_bias(self) -> (Option<Array>, Option<Array>) {
        (self.scale, self.bias)
    }
}

#[test]
fn group_norm_matches_flax_by_group_count_and_group_size() {
    let c = layer("group_norm");
    let (scale, bias) = params(c);
    let gn = GroupNorm {
        scale,
        bias,
        ..GroupNorm::with_num_groups(8, 4)
    };
    check_stateless(gn, GroupNorm::apply, c, "group_norm num_groups=4");
    let c = layer("group_norm_size");
    let (scale, bias) = params(c);
    let gn = GroupNorm {
        scale,
        bias,
        ..GroupNorm::with_group_size(8, 4)
    };
    assert_eq!(gn.num_groups, 2);
    check_stateless(gn, GroupNorm::apply, c, "group_norm group_size=4");
}

#[test]
fn instance_norm_matches_flax() {
    let c = layer("instance_norm");
    let (scale, bias) = params(c);
    let norm = InstanceNorm {
        scale,
        bias,
        ..InstanceNorm::new(8)
    };
    check_stateless(norm, InstanceNorm::apply, c, "instance_norm");
}

fn error_of(a: &Array) -> String {
    a.check().map(|_| ()).unwrap_err().to_string()
}

#[test]
fn wrong_feature_sizes_name_the_layer_shapes_and_line() {
    let bn = BatchNorm::new(8);
    let stats = BatchStats::new(8);
    let x = jnp::ones(&[4, 5], DType::F32);
    let line = line!() + 1;
    let (y, new) = bn.apply_train(&stats, &x);
    let msg = error_of(&y);
    assert!(
        msg.contains("BatchNorm.apply_train of f32[4,5]")
            && msg.contains("last dimension is 8")
            && msg.contains(&format!("normalization_layers.rs:{line}")),
        "{msg}"
    );
    // The returned statistics carry the error too.
    assert_eq!(error_of(&new.mean), msg);
    let msg = error_of(&bn.apply_eval(&stats, &x));
    assert!(msg.contains("BatchNorm.apply_eval of f32[4,5]"), "{msg}");
    // Statistics of another size than the layer's parameters.
    let msg = error_of(&bn.apply_eval(&BatchStats::new(5), &x));
    assert!(msg.contains("scale is f32[8], not [5]"), "{msg}");
    let msg = error_of(&GroupNorm::with_num_groups(8, 4).apply(&x));
    assert!(msg.contains("GroupNorm.apply of f32[4,5]"), "{msg}");
    // Flax's default 32 groups do not divide 8 channels: the constructor's
    // error, with its line.
    let line = line!() + 1;
    let bad = GroupNorm::new(8);
    let msg = error_of(&bad.apply(&jnp::ones(&[2, 8], DType::F32)));
    assert!(
        msg.contains("GroupNorm::new: 32 groups do not divide 8 channels")
            && msg.contains(&format!("normalization_layers.rs:{line}")),
        "{msg}"
    );
    let msg = error_of(&InstanceNorm::new(8).apply(&jnp::ones(&[2, 3, 5], DType::F32)));
    assert!(msg.contains("InstanceNorm.apply of f32[2,3,5]"), "{msg}");
}
