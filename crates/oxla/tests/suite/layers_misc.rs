//! oxla_nn's `Embedding::attend`, `MultiHeadAttention` under padding and
//! causal masks (and their rank check, eagerly and under vmap),
//! `make_attention_mask` / `make_causal_mask`, `GluMlp` and `Sequential`
//! against Flax linen (reference/layers_misc.py): on Flax's (perturbed)
//! parameters, each output and the gradient of `sum(sin(y))` w.r.t. the
//! parameters and the input; and the errors of inputs and masks that do
//! not fit.

use oxla::{Array, DType, Pytree, grad, jit, numpy as jnp, vmap};
use oxla_nn::{
    self as nn, Activation, Embedding, GluMlp, LayerNorm, Linear, MultiHeadAttention, Projection,
    Sequential,
};
use serde_json::Value;

use crate::reference::{self, assert_close};

fn case(name: &str) -> &'static Value {
    &reference::script("layers_misc.py")[name]
}

fn arr(v: &Value) -> Array {
    reference::array(v)
}

fn loss(y: &Array) -> Array {
    jnp::sum(&jnp::sin(y), None, false)
}

fn error_of(a: &Array) -> String {
    a.check().map(|_| ()).unwrap_err().to_string()
}

/// The gradient of `sum(sin(apply(layer, x)))` w.r.t. the layer and `x`.
fn gradient<L: Pytree + Clone>(
    layer: &L,
    x: &Array,
    apply: impl Fn(&L, &Array) -> Array,
) -> (L, Array) {
    grad(|(l, x): (L, Array)| loss(&apply(&l, &x)))
        .call((layer.clone(), x.clone()))
        .unwrap()
}

#[test]
fn attend_matches_flax_forward_and_gradient() {
    let c = case("attend");
    let table = Embedding {
        embedding: arr(&c["params"]["embedding"]),
    };
    let query = arr(&c["x"]);
    assert_close(&table.attend(&query), &c["output"], "attend");
    let (g, gq) = gradient(&table, &query, Embedding::attend);
    assert_close(
        &g.embedding,
        &c["grad"]["params"]["embedding"],
        "attend: d/dembedding",
    );
    assert_close(&gq, &c["grad"]["x"], "attend: d/dquery");
    // A query whose width is not the table's features.
    let line = line!() + 1;
    let msg = error_of(&table.attend(&jnp::ones(&[2, 5], DType::F32)));
    assert!(
        msg.contains("Embedding.attend of f32[2,5]")
            && msg.contains("f32[10,6]")
            && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
}

fn projection(p: &Value) -> Projection {
    Projection {
        kernel: arr(&p["kernel"]),
        bias: arr(&p["bias"]),
    }
}

fn flax_attention(c: &Value) -> MultiHeadAttention {
    let p = &c["params"];
    MultiHeadAttention {
        query: projection(&p["query"]),
        key: projection(&p["key"]),
        value: projection(&p["value"]),
        out: projection(&p["out"]),
        num_heads: 2,
    }
}

/// The padding mask of token ids, as the reference makes it.
fn padding_mask(tokens: &Array) -> Array {
    let valid = jnp::not_equal(tokens, &Array::scalar(0i32).unwrap());
    nn::make_attention_mask(&valid, &valid, jnp::logical_and, 0)
}

#[test]
fn mask_helpers_match_flax() {
    let m = &case("masks");
    let tokens = arr(&m["tokens"]);
    assert_close(
        &nn::make_causal_mask(&tokens),
        &m["causal"],
        "make_causal_mask",
    );
    assert_close(
        &nn::make_causal_mask_with(&tokens, 2),
        &m["causal_extra"],
        "make_causal_mask(extra_batch_dims=2)",
    );
    let valid = jnp::greater(&tokens, &Array::scalar(0i32).unwrap());
    assert_close(
        &nn::make_attention_mask(&valid, &valid, jnp::logical_and, 1),
        &m["padding_extra"],
        "make_attention_mask(extra_batch_dims=1)",
    );
    // Flax's default pairwise function, multiplication, on integers: the
    // same mask (nonzero is true).
    let ints = jnp::astype(&valid, DType::I32);
    assert_close(
        &nn::make_attention_mask(&ints, &ints, jnp::multiply, 1),
        &m["padding_extra"],
        "make_attention_mask(multiply)",
    );
    let line = line!() + 1;
    let msg = error_of(&nn::make_causal_mask(&Array::scalar(3i32).unwrap()));
    assert!(
        msg.contains("make_causal_mask of i32[]: x needs a sequence axis")
            && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
}

#[test]
fn attention_with_a_padding_mask_matches_flax() {
    let c = case("attention");
    let mha = flax_attention(c);
    let x = arr(&c["x"]);
    let mask = padding_mask(&arr(&case("masks")["tokens"]));
    assert_eq!(mask.shape(), &[3, 1, 5, 5]);
    assert_close(&mha.apply(&x, Some(&mask)), &c["output"], "padding mask");
    // Flax's own mask, float32 ones and zeros, reads the same.
    let flax_mask = arr(&c["mask"]);
    assert_close(
        &mha.apply(&x, Some(&flax_mask)),
        &c["output"],
        "Flax's float mask",
    );
    let (g, gx) = gradient(&mha, &x, |m, x| m.apply(x, Some(&mask)));
    let want = &c["grad"]["params"];
    for (name, got) in [
        ("query", &g.query),
        ("key", &g.key),
        ("value", &g.value),
        ("out", &g.out),
    ] {
        assert_close(
            &got.kernel,
            &want[name]["kernel"],
            &format!("d{name}.kernel"),
        );
        if name == "key" {
            // Softmax does not see the key bias (it adds q·b to every key of
            // a query): its gradient is zero, here and in Flax only rounding.
            let noise = got.bias.to_vec::<f32>().unwrap();
            assert!(noise.iter().all(|v| v.abs() < 1e-5), "dkey.bias {noise:?}");
        } else {
            assert_close(&got.bias, &want[name]["bias"], &format!("d{name}.bias"));
        }
    }
    assert_close(&gx, &c["grad"]["x"], "attention: d/dx");
}

#[test]
fn masks_of_another_rank_or_size_are_errors() {
    let mha = flax_attention(case("attention"));
    let x = jnp::ones(&[3, 5, 8], DType::F32);
    // [q, kv] alone: Flax's convention wants [batch, heads, q, kv].
    let line = line!() + 1;
    let msg = error_of(&mha.apply(&x, Some(&jnp::ones(&[5, 5], DType::Bool))));
    assert!(
        msg.contains("MultiHeadAttention.apply of f32[3,5,8] with mask bool[5,5]")
            && msg.contains("[3,2,5,5]")
            && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
    // One axis too many, and a heads axis that is neither 1 nor 2.
    let msg = error_of(&mha.apply(&x, Some(&jnp::ones(&[1, 3, 1, 5, 5], DType::Bool))));
    assert!(msg.contains("with mask bool[1,3,1,5,5]"), "{msg}");
    let msg = error_of(&mha.apply(&x, Some(&jnp::ones(&[3, 3, 5, 5], DType::Bool))));
    assert!(msg.contains("with mask bool[3,3,5,5]"), "{msg}");
    // Cross-attention names itself, with the key length in the weights.
    let kv = jnp::ones(&[3, 4, 8], DType::F32);
    let msg = error_of(&mha.apply_cross(&x, &kv, Some(&jnp::ones(&[3, 1, 5, 5], DType::Bool))));
    assert!(
        msg.contains("MultiHeadAttention.apply_cross of f32[3,5,8] with mask bool[3,1,5,5]")
            && msg.contains("[3,2,5,4]"),
        "{msg}"
    );
    // Every size-1 broadcast Flax's convention allows is accepted.
    for shape in [[1, 1, 5, 5], [3, 2, 5, 5], [1, 2, 1, 5], [3, 1, 5, 1]] {
        let y = mha.apply(&x, Some(&jnp::ones(&shape, DType::Bool)));
        assert_eq!(y.shape(), &[3, 5, 8], "mask {shape:?}");
    }
}

#[test]
fn per_example_masks_under_vmap_equal_the_batch_and_flax() {
    let c = case("attention");
    let mha = flax_attention(c);
    let x = arr(&c["x"]);
    let tokens = arr(&case("masks")["tokens"]);
    // The mask made inside vmap from one example's tokens is [1, 5, 5].
    let per_example = vmap(|(m, x, t): (MultiHeadAttention, Array, Array)| {
        let mask = padding_mask(&t);
        assert_eq!(mask.shape(), &[1, 5, 5]);
        m.apply(&x, Some(&mask))
    })
    .in_axes(&[None, Some(0), Some(0)])
    .call((mha.clone(), x.clone(), tokens.clone()))
    .unwrap();
    assert_close(&per_example, &c["output"], "vmap padding mask");
    let batched = mha.apply(&x, Some(&padding_mask(&tokens)));
    assert_eq!(
        per_example.to_vec::<f32>().unwrap(),
        batched.to_vec::<f32>().unwrap(),
        "vmap against the batch"
    );
    // The causal mask of one example, likewise.
    let causal = vmap(|(m, x, t): (MultiHeadAttention, Array, Array)| {
        m.apply(&x, Some(&nn::make_causal_mask(&t)))
    })
    .in_axes(&[None, Some(0), Some(0)])
    .call((mha.clone(), x.clone(), tokens.clone()))
    .unwrap();
    let batched = mha.apply(&x, Some(&nn::make_causal_mask(&tokens)));
    assert_eq!(
        causal.to_vec::<f32>().unwrap(),
        batched.to_vec::<f32>().unwrap(),
        "vmap causal against the batch"
    );
    // The batch's mask [3, 1, 5, 5] met by one example [5, 8]: an error,
    // not a broadcast to [3, 2, 5, 5] weights.
    let batch_mask = padding_mask(&tokens);
    let line = line!() + 1;
    let result = vmap(|(m, x): (MultiHeadAttention, Array)| m.apply(&x, Some(&batch_mask)))
        .in_axes(&[None, Some(0)])
        .call((mha, x));
    let msg = result.map(|_| ()).unwrap_err().to_string();
    assert!(
        msg.contains("MultiHeadAttention.apply of f32[5,8] with mask bool[3,1,5,5]")
            && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
}

fn flax_glu(c: &Value, activation: Activation) -> GluMlp {
    let linear = |name: &str| Linear {
        kernel: arr(&c["params"][name]["kernel"]),
        bias: None,
    };
    GluMlp {
        gate: linear("gate"),
        up: linear("up"),
        down: linear("down"),
        activation,
    }
}

fn assert_glu_grads(g: &GluMlp, gx: &Array, c: &Value, what: &str) {
    for (name, got) in [("gate", &g.gate), ("up", &g.up), ("down", &g.down)] {
        assert_close(
            &got.kernel,
            &c["grad"]["params"][name]["kernel"],
            &format!("{what}: d{name}.kernel"),
        );
    }
    assert_close(gx, &c["grad"]["x"], &format!("{what}: d/dx"));
}

#[test]
fn swiglu_matches_flax_under_jit() {
    let c = case("glu_silu");
    let ffn = flax_glu(c, Activation::Silu);
    let x = arr(&c["x"]);
    let forward = jit(|(m, x): (GluMlp, Array)| m.apply(&x));
    assert_close(
        &forward.call((ffn.clone(), x.clone())).unwrap(),
        &c["output"],
        "swiglu jit",
    );
    let step = jit(|(m, x): (GluMlp, Array)| {
        grad(|(m, x): (GluMlp, Array)| loss(&m.apply(&x))).call((m, x))
    });
    let (g, gx) = step.call((ffn.clone(), x.clone())).unwrap();
    assert_glu_grads(&g, &gx, c, "swiglu jit");
    // The constructor's shapes and names are the Flax module's.
    let fresh = GluMlp::swiglu(oxla::random::Key::new(0), 8, 24);
    let (_, def) = fresh.flatten();
    assert_eq!(
        def.leaf_paths(),
        [".gate.kernel", ".up.kernel", ".down.kernel"]
    );
    assert_eq!(fresh.up.kernel.shape(), ffn.up.kernel.shape());
}

#[test]
fn geglu_and_glu_match_flax() {
    for (name, activation) in [
        ("glu_gelu", Activation::Gelu),
        ("glu_sigmoid", Activation::Sigmoid),
    ] {
        let c = case(name);
        let ffn = flax_glu(c, activation);
        let x = arr(&c["x"]);
        assert_close(&ffn.apply(&x), &c["output"], name);
        let (g, gx) = gradient(&ffn, &x, GluMlp::apply);
        assert_glu_grads(&g, &gx, c, name);
    }
}

#[test]
fn glu_errors_name_the_layer_and_line() {
    let ffn = flax_glu(case("glu_silu"), Activation::Silu);
    let line = line!() + 1;
    let msg = error_of(&ffn.apply(&jnp::ones(&[2, 7], DType::F32)));
    assert!(
        msg.contains("GluMlp.apply of f32[2,7]")
            && msg.contains("last dimension is 8")
            && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
    // Kernels assembled by hand that do not chain.
    let bad = GluMlp {
        down: Linear::new(oxla::random::Key::new(1), 16, 8),
        ..ffn
    };
    let msg = error_of(&bad.apply(&jnp::ones(&[2, 8], DType::F32)));
    assert!(
        msg.contains("GluMlp.apply: the kernels gate f32[8,24], up f32[8,24] and down f32[16,8]"),
        "{msg}"
    );
}

type FlaxSequential = Sequential<(Linear, Activation, Linear, LayerNorm)>;

fn flax_sequential(c: &Value) -> FlaxSequential {
    let p = &c["params"];
    let linear = |name: &str| Linear {
        kernel: arr(&p[name]["kernel"]),
        bias: Some(arr(&p[name]["bias"])),
    };
    Sequential::new((
        linear("layers_0"),
        Activation::Relu,
        linear("layers_2"),
        LayerNorm {
            scale: Some(arr(&p["layers_3"]["scale"])),
            bias: Some(arr(&p["layers_3"]["bias"])),
            ..LayerNorm::new(8)
        },
    ))
}

#[test]
fn sequential_matches_flax_nn_sequential() {
    let c = case("sequential");
    let model = flax_sequential(c);
    let x = arr(&c["x"]);
    assert_close(&model.apply(&x), &c["output"], "sequential");
    let jitted = jit(|(m, x): (FlaxSequential, Array)| m.apply(&x));
    assert_close(
        &jitted.call((model.clone(), x.clone())).unwrap(),
        &c["output"],
        "sequential jit",
    );
    let (g, gx) = gradient(&model, &x, FlaxSequential::apply);
    let want = &c["grad"]["params"];
    let (g0, _, g2, g3) = &g.layers;
    for (name, linear) in [("layers_0", g0), ("layers_2", g2)] {
        assert_close(
            &linear.kernel,
            &want[name]["kernel"],
            &format!("d{name}.kernel"),
        );
        assert_close(
            linear.bias.as_ref().unwrap(),
            &want[name]["bias"],
            &format!("d{name}.bias"),
        );
    }
    assert_close(
        g3.scale.as_ref().unwrap(),
        &want["layers_3"]["scale"],
        "dlayers_3.scale",
    );
    assert_close(
        g3.bias.as_ref().unwrap(),
        &want["layers_3"]["bias"],
        "dlayers_3.bias",
    );
    assert_close(&gx, &c["grad"]["x"], "sequential: d/dx");
    // Leaves named by position, as Flax's layers_<i>.
    let (_, def) = model.flatten();
    assert_eq!(
        def.leaf_paths(),
        [
            ".layers[0].kernel",
            ".layers[0].bias",
            ".layers[2].kernel",
            ".layers[2].bias",
            ".layers[3].scale",
            ".layers[3].bias"
        ]
    );
}

#[test]
fn sequential_of_a_vec_nests_and_reports_errors() {
    let c = case("sequential");
    let model = flax_sequential(c);
    let x = arr(&c["x"]);
    // A Sequential is a Layer: nested, with a Vec of one type, the same.
    let nested = Sequential::new((model.clone(), vec![Activation::Tanh]));
    let want = jnp::tanh(&model.apply(&x));
    assert_eq!(
        nested.apply(&x).to_vec::<f32>().unwrap(),
        want.to_vec::<f32>().unwrap()
    );
    // An input the first layer cannot take names that layer and this line.
    let line = line!() + 1;
    let msg = error_of(&model.apply(&jnp::ones(&[5, 3], DType::F32)));
    assert!(
        msg.contains("Linear.apply of f32[5,3]") && msg.contains(&format!("layers_misc.rs:{line}")),
        "{msg}"
    );
    // No layers at all, as Flax refuses.
    let empty: Sequential<Vec<Linear>> = Sequential::new(Vec::new());
    let msg = error_of(&empty.apply(&x));
    assert!(
        msg.contains("Sequential.apply: there are no layers"),
        "{msg}"
    );
}
