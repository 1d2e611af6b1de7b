//! oxla_nn and oxla_optim against JAX 0.10.2 and Optax 0.2.6
//! (reference/training.py): initializers bit for bit from the same keys;
//! every layer's output on JAX's parameters and inputs (Flax's formulas);
//! the attention layer's gradient against jax.grad and finite differences;
//! schedules; seven optimizers over six steps, eagerly and as a jitted,
//! donated step; losses; and the errors of bad inputs.

use oxla::lax::Padding;
use oxla::random::Key;
use oxla::{Array, DType, jit, numpy as jnp, value_and_grad};
use oxla_nn::initializers::{self, Initializer};
use oxla_nn::{self as nn, Conv2d, Embedding, LayerNorm, Linear, MultiHeadAttention, RmsNorm};
use oxla_optim::{self as optim, GradientTransformation, Schedule, losses};
use serde_json::Value;

use crate::reference::{self, assert_close};

fn data() -> &'static Value {
    reference::script("training.py")
}

fn layer(name: &str) -> &'static Value {
    &data()["layers"][name]
}

fn arr(v: &Value) -> Array {
    reference::array(v)
}

/// `got` is JAX's f32 `want` within four units in the last place.
fn within_four_ulps(got: &Array, want: &Value, what: &str) {
    let want = reference::host(want);
    let got = got.to_host().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.dims, want.dims, "{what}: shape");
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let (a32, b32) = (*a as f32, *b as f32);
        let ulps = (a32.to_bits() as i64 - b32.to_bits() as i64).abs();
        assert!(
            a32 == b32 || (a32.signum() == b32.signum() && ulps <= 4),
            "{what}: element {i}: oxla {a}, jax {b}"
        );
    }
}

fn initializer(name: &str) -> Initializer {
    use initializers::{Distribution, FanMode};
    match name {
        "lecun_normal" => initializers::lecun_normal(),
        "lecun_uniform" => initializers::lecun_uniform(),
        "glorot_uniform" => initializers::glorot_uniform(),
        "glorot_normal" => initializers::glorot_normal(),
        "he_normal" => initializers::he_normal(),
        "he_uniform" => initializers::he_uniform(),
        "normal_0.02" => initializers::normal(0.02),
        "uniform_0.5" => initializers::uniform(0.5),
        "truncated_normal_0.1" => initializers::truncated_normal(0.1),
        "zeros" => initializers::zeros(),
        "ones" => initializers::ones(),
        "embed" => Initializer::VarianceScaling {
            scale: 1.0,
            mode: FanMode::FanIn,
            distribution: Distribution::Normal,
            in_axis: -2,
            out_axis: 0,
        },
        other => panic!("unknown initializer {other}"),
    }
}

/// The same threefry bits through the same f32 operations: equal but for
/// an occasional element of a (truncated) normal whose erf_inv is a few
/// ulps off JAX's for some shapes (XLA's polynomial is fused differently in
/// the two programs), which the scale multiply can round once more.
#[test]
fn initializers_match_jax_within_four_ulps() {
    let cases = data()["initializers"].as_array().unwrap();
    assert_eq!(cases.len(), 36);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let shape: Vec<i64> = serde_json::from_value(c["shape"].clone()).unwrap();
        let seed = c["seed"].as_u64().unwrap();
        let got = initializer(name).init(Key::new(seed), &shape, DType::F32);
        within_four_ulps(&got, &c["output"], &format!("{name} seed {seed} {shape:?}"));
    }
}

#[test]
fn variance_scaling_of_a_vector_is_a_clear_error() {
    let e = initializers::lecun_normal()
        .init(Key::new(0), &[5], DType::F32)
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("shape [5]") && e.contains("rank 2"), "{e}");
}

#[test]
fn linear_matches_flax_dense() {
    let c = layer("dense");
    let dense = Linear {
        kernel: arr(&c["kernel"]),
        bias: Some(arr(&c["bias"])),
    };
    assert_close(&dense.apply(&arr(&c["x"])), &c["output"], "dense");
    assert_eq!((dense.in_features(), dense.out_features()), (8, 6));
}

#[test]
fn norms_match_flax() {
    let c = layer("layer_norm");
    let ln = LayerNorm {
        scale: Some(arr(&c["scale"])),
        bias: Some(arr(&c["bias"])),
        epsilon: 1e-6,
    };
    assert_close(&ln.apply(&arr(&c["x"])), &c["output"], "layer_norm");
    let c = layer("rms_norm");
    let rms = RmsNorm {
        scale: Some(arr(&c["scale"])),
        epsilon: 1e-6,
    };
    assert_close(&rms.apply(&arr(&c["x"])), &c["output"], "rms_norm");
    // Fresh norms start as the identity affine map.
    let fresh = LayerNorm::new(8).apply(&arr(&c["x"]));
    let mean = jnp::mean(&fresh, Some(&[-1]), false);
    assert!(
        jnp::max(&jnp::abs(&mean), None, false)
            .item::<f32>()
            .unwrap()
            < 1e-5
    );
}

#[test]
fn embedding_matches_flax_embed() {
    let c = layer("embed");
    let embed = Embedding {
        embedding: arr(&c["embedding"]),
    };
    // Id -1 counts from the end, as jnp.take does.
    assert_close(&embed.apply(&arr(&c["ids"])), &c["output"], "embed");
    assert_close(&embed.attend(&arr(&c["query"])), &c["attend"], "attend");
    let fresh = Embedding::new(Key::new(1), 11, 4);
    assert_eq!(fresh.embedding.shape(), &[11, 4]);
}

fn projection(v: &Value) -> nn::Projection {
    nn::Projection {
        kernel: arr(&v["kernel"]),
        bias: arr(&v["bias"]),
    }
}

fn attention_from(params: &Value) -> MultiHeadAttention {
    MultiHeadAttention {
        query: projection(&params["query"]),
        key: projection(&params["key"]),
        value: projection(&params["value"]),
        out: projection(&params["out"]),
        num_heads: 2,
    }
}

#[test]
fn attention_matches_flax_with_and_without_a_causal_mask() {
    let c = layer("attention");
    let mha = attention_from(&c["params"]);
    let x = arr(&c["x"]);
    let mask = nn::make_causal_mask(&jnp::zeros(&[1, 5], DType::I32));
    assert_close(&mha.apply(&x, Some(&mask)), &c["output"], "causal");
    assert_close(&mha.apply(&x, None), &c["unmasked"], "unmasked");
    // Under jit too.
    let f = jit(|(m, x): (MultiHeadAttention, Array)| {
        m.apply(
            &x,
            Some(&nn::make_causal_mask(&jnp::zeros(&[1, 5], DType::I32))),
        )
    });
    assert_close(&f.call((mha, x)).unwrap(), &c["output"], "jit causal");
}

#[test]
fn attention_gradient_matches_jax_and_finite_differences() {
    let c = layer("attention");
    let mha = attention_from(&c["params"]);
    let x = arr(&c["x"]);
    let loss = |m: MultiHeadAttention| {
        jnp::sum(
            &jnp::sin(&m.apply(
                &x,
                Some(&nn::make_causal_mask(&jnp::zeros(&[1, 5], DType::I32))),
            )),
            None,
            false,
        )
    };
    let (_, grads) = value_and_grad(loss).call(mha.clone()).unwrap();
    for name in ["query", "key", "value", "out"] {
        let (g, w) = match name {
            "query" => (&grads.query, &c["grads"]["query"]),
            "key" => (&grads.key, &c["grads"]["key"]),
            "value" => (&grads.value, &c["grads"]["value"]),
            _ => (&grads.out, &c["grads"]["out"]),
        };
        assert_close(&g.kernel, &w["kernel"], &format!("d{name}.kernel"));
        if name == "key" {
            // The key bias adds q.b to every score of a query's row, which
            // softmax ignores: its gradient is zero, and both JAX's and
            // oxla's are rounding noise far below the other gradients.
            for (who, v) in [
                ("oxla", g.bias.to_vec::<f32>().unwrap()),
                (
                    "jax",
                    reference::host(&w["bias"])
                        .to_f64_vec()
                        .iter()
                        .map(|x| *x as f32)
                        .collect(),
                ),
            ] {
                assert!(
                    v.iter().all(|x| x.abs() < 1e-6),
                    "{who}'s dkey.bias is not ~0: {v:?}"
                );
            }
        } else {
            assert_close(&g.bias, &w["bias"], &format!("d{name}.bias"));
        }
    }
    let params = oxla::tree_leaves(&mha);
    let def = oxla::tree_structure(&mha);
    reference::assert_central_difference(
        &params,
        &oxla::tree_leaves(&grads),
        |p| loss(oxla::tree_unflatten(&def, p.to_vec()).unwrap()),
        |i, k| (((i * 31 + k * 7) % 11) as f32 - 5.0) / 5.0,
    );
}

#[test]
fn conv_and_pools_match_flax() {
    let c = layer("conv");
    let conv = Conv2d {
        kernel: arr(&c["kernel"]),
        bias: Some(arr(&c["bias"])),
        strides: [2, 2],
        padding: Padding::Same,
    };
    assert_close(&conv.apply(&arr(&c["x"])), &c["output"], "conv");
    let fresh = Conv2d::new(Key::new(0), 3, 5, [3, 3]).with_strides([2, 2]);
    assert_eq!(fresh.apply(&arr(&c["x"])).shape(), &[2, 5, 5, 5]);
    let c = layer("max_pool");
    let got = nn::max_pool(&arr(&c["x"]), &[2, 2], &[2, 2], &Padding::Valid);
    assert_close(&got, &c["output"], "max_pool");
    let c = layer("avg_pool");
    let got = nn::avg_pool(&arr(&c["x"]), &[3, 3], &[], &Padding::Same);
    assert_close(&got, &c["output"], "avg_pool");
    // Explicit padding names the spatial axes only, as Flax's.
    let explicit = Padding::Explicit(vec![(1, 0), (2, 1)]);
    let c = layer("max_pool_explicit");
    let got = nn::max_pool(&arr(&c["x"]), &[3, 2], &[2, 1], &explicit);
    assert_close(&got, &c["output"], "max_pool with explicit padding");
    let c = layer("avg_pool_explicit");
    let got = nn::avg_pool(&arr(&c["x"]), &[2, 3], &[1, 2], &explicit);
    assert_close(&got, &c["output"], "avg_pool with explicit padding");
    // Windows, strides or pairs that do not fit the spatial axes: one error
    // naming the pool, the input and the caller's line.
    let x = arr(&c["x"]);
    let three_pairs = Padding::Explicit(vec![(1, 0), (2, 1), (0, 0)]);
    let line = line!() + 1;
    let e = nn::max_pool(&x, &[3, 2], &[2, 1], &three_pairs)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("max_pool of f32[")
            && e.contains("3 padding pairs")
            && e.contains(&format!("training.rs:{line}")),
        "{e}"
    );
    let e = nn::avg_pool(&x, &[2, 2, 2], &[], &Padding::Valid)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("avg_pool of") && e.contains("a window of 3"),
        "{e}"
    );
}

#[test]
fn mlp_and_dropout_compose_as_pytrees() {
    let mlp = nn::Mlp::new(Key::new(0), &[6, 16, 16, 3], nn::Activation::Gelu);
    assert_eq!(mlp.layers.len(), 3);
    assert_eq!(
        oxla_train::checkpoint::tensor_names(&mlp),
        [
            "layers[0].kernel",
            "layers[0].bias",
            "layers[1].kernel",
            "layers[1].bias",
            "layers[2].kernel",
            "layers[2].bias"
        ]
    );
    let x = jnp::ones(&[4, 6], DType::F32);
    assert_eq!(mlp.apply(&x).shape(), &[4, 3]);
    let drop = nn::Dropout::new(0.5);
    let kept = drop.apply(&x, None);
    assert_eq!(kept.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let dropped = drop.apply(&x, Some(Key::new(3))).to_vec::<f32>().unwrap();
    assert!(dropped.iter().all(|&v| v == 0.0 || v == 2.0));
    assert!(dropped.contains(&0.0) && dropped.contains(&2.0));
}

#[test]
fn layers_name_the_layer_shapes_and_line_on_bad_input() {
    let dense = Linear::new(Key::new(0), 784, 10);
    let line = line!() + 1;
    let e = dense.apply(&jnp::ones(&[8, 100], DType::F32));
    let msg = e.check().map(|_| ()).unwrap_err().to_string();
    assert!(
        msg.contains("Linear.apply of f32[8,100]")
            && msg.contains("784")
            && msg.contains(&format!("training.rs:{line}")),
        "{msg}"
    );
    let emb = Embedding::new(Key::new(0), 10, 4);
    let msg = emb
        .apply(&jnp::ones(&[3], DType::F32))
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("Embedding.apply") && msg.contains("integers"),
        "{msg}"
    );
    let bad = MultiHeadAttention::new(Key::new(0), 10, 3);
    let msg = bad
        .query
        .kernel
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("10 features") && msg.contains("3 heads"),
        "{msg}"
    );
    // Used, the layer reports its constructor's error (message and line),
    // not a complaint about the input.
    let msg = bad
        .apply(&jnp::ones(&[2, 5, 10], DType::F32), None)
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("MultiHeadAttention::new: 10 features do not split into 3 heads")
            && msg.contains("training.rs:"),
        "{msg}"
    );
    let ln = LayerNorm::new(8);
    let msg = ln
        .apply(&jnp::ones(&[2, 7], DType::F32))
        .check()
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("LayerNorm.apply of f32[2,7]"), "{msg}");
}

fn schedule(name: &str) -> Schedule {
    match name {
        "constant" => Schedule::Constant(0.1),
        "linear" => Schedule::Linear {
            init_value: 1.0,
            end_value: 0.1,
            transition_steps: 20,
            transition_begin: 5,
        },
        "warmup_cosine" => Schedule::warmup_cosine_decay(0.0, 1.0, 10, 30, 0.05),
        "exponential" => Schedule::Exponential {
            init_value: 1.0,
            transition_steps: 4,
            decay_rate: 0.5,
            transition_begin: 3,
            staircase: false,
            end_value: Some(0.05),
        },
        "exponential_staircase" => Schedule::Exponential {
            init_value: 2.0,
            transition_steps: 5,
            decay_rate: 0.7,
            transition_begin: 0,
            staircase: true,
            end_value: None,
        },
        other => panic!("unknown schedule {other}"),
    }
}

#[test]
fn schedules_match_optax() {
    let steps = jnp::arange(0.0, 40.0, 1.0, DType::I32);
    let all = data()["schedules"].as_object().unwrap();
    assert_eq!(all.len(), 5);
    for (name, want) in all {
        let got = schedule(name).value(&steps);
        let got = jnp::broadcast_to(&got, &[40]);
        assert_close(&got, want, name);
    }
}

type Tree = (Array, Array);

/// Six Optax updates from JAX's gradients, with `opt`.
fn trajectory<T: GradientTransformation<Tree>>(opt: &T) -> Vec<Tree> {
    let p0 = reference::arrays(&data()["params0"]);
    let mut params: Tree = (p0[0].clone(), p0[1].clone());
    let mut state = opt.init(&params);
    let mut out = Vec::new();
    for g in data()["grads"].as_array().unwrap() {
        let g = reference::arrays(g);
        let (updates, next) = opt
            .update((g[0].clone(), g[1].clone()), state, &params)
            .unwrap();
        state = next;
        params = optim::apply_updates(&params, &updates).unwrap();
        out.push(params.clone());
    }
    out
}

fn check_trajectory(name: &str, got: &[Tree]) {
    let want = data()["optimizers"][name].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (i, ((w, b), step)) in got.iter().zip(want).enumerate() {
        assert_close(w, &step[0], &format!("{name} step {i} w"));
        assert_close(b, &step[1], &format!("{name} step {i} b"));
    }
}

#[test]
fn optimizers_match_optax() {
    check_trajectory("sgd", &trajectory(&optim::sgd(0.1)));
    check_trajectory("momentum", &trajectory(&optim::momentum(0.1, 0.9, false)));
    check_trajectory("nesterov", &trajectory(&optim::momentum(0.1, 0.9, true)));
    check_trajectory("adam", &trajectory(&optim::adam(0.01)));
    check_trajectory("adamw", &trajectory(&optim::adamw(0.01, 0.1)));
    check_trajectory(
        "clip_adam",
        &trajectory(&(optim::clip_by_global_norm(1.0), optim::adam(0.01))),
    );
    let warmup = Schedule::warmup_cosine_decay(0.0, 0.02, 2, 6, 0.001);
    check_trajectory(
        "adamw_warmup_cosine",
        &trajectory(&optim::adamw(warmup, 1e-4)),
    );
}

/// The same AdamW with a schedule as one jitted step whose parameters and
/// state are donated: compiled once, Optax's numbers.
#[test]
fn jitted_donated_update_matches_optax() {
    let opt = optim::adamw(Schedule::warmup_cosine_decay(0.0, 0.02, 2, 6, 0.001), 1e-4);
    type State = optim::StateOf<optim::AdamW, Tree>;
    let step = jit(|(params, state, grads): (Tree, State, Tree)| {
        let (updates, state) = opt.update(grads, state, &params)?;
        oxla::Result::Ok((optim::apply_updates(&params, &updates)?, state))
    })
    .donate(&[0, 1]);
    let p0 = reference::arrays(&data()["params0"]);
    let mut params: Tree = (p0[0].clone(), p0[1].clone());
    let mut state = opt.init(&params);
    let mut got = Vec::new();
    for g in data()["grads"].as_array().unwrap() {
        let g = reference::arrays(g);
        let old = params.0.clone();
        (params, state) = step
            .call((params, state, (g[0].clone(), g[1].clone())))
            .unwrap();
        assert!(old.to_host().is_err(), "the old parameters were donated");
        // Copies: the next step donates `params` itself.
        let copy = |a: &Array| reference::array(&reference::encode(a));
        got.push((copy(&params.0), copy(&params.1)));
    }
    check_trajectory("adamw_warmup_cosine", &got);
    assert_eq!(step.cache_size(), 1);
    let (adam_state, (), schedule_state) = &state;
    assert_eq!(adam_state.count.item::<i32>().unwrap(), 6);
    assert_eq!(
        schedule_state
            .count
            .as_ref()
            .unwrap()
            .item::<i32>()
            .unwrap(),
        6
    );
}

#[test]
fn an_update_with_another_structure_is_a_clear_error() {
    let ones = |n| jnp::ones(&[n], DType::F32);
    let opt = optim::adam(0.1);
    let params = vec![ones(2), ones(3)];
    let state = opt.init(&params);
    let e = opt
        .update(vec![ones(2), ones(3), ones(4)], state, &params)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scale_by_adam") && e.contains("[*, *]") && e.contains("[*, *, *]"),
        "{e}"
    );
    let e = optim::apply_updates(&params, &vec![ones(2), ones(4)])
        .and_then(|leaves| leaves.iter().try_for_each(|l| l.check().map(|_| ())))
        .unwrap_err()
        .to_string();
    assert!(e.contains("f32[3]") && e.contains("f32[4]"), "{e}");
}

#[test]
fn losses_match_optax() {
    let c = &data()["losses"];
    let (logits, labels, probs) = (arr(&c["logits"]), arr(&c["labels"]), arr(&c["probs"]));
    assert_close(
        &losses::softmax_cross_entropy_with_integer_labels(&logits, &labels),
        &c["integer"],
        "integer labels",
    );
    let grad = oxla::grad(|l: Array| {
        jnp::mean(
            &losses::softmax_cross_entropy_with_integer_labels(&l, &labels),
            None,
            false,
        )
    })
    .call(logits.clone())
    .unwrap();
    assert_close(&grad, &c["integer_grad"], "integer labels grad");
    assert_close(
        &losses::softmax_cross_entropy(&logits, &probs),
        &c["soft"],
        "soft labels",
    );
    assert_close(&losses::l2_loss(&logits, &probs), &c["l2"], "l2");
}
