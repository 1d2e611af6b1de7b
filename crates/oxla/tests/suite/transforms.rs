//! Transformations on composite models against JAX (reference/transforms.py)
//! and finite differences: grad of an MLP, attention, layer norm and a CNN;
//! jacobians and hessians; per-example gradients; custom rules; every pair
//! of jit, grad and vmap composed; checkpoint policies; and the errors.

use oxla::checkpoint;
use oxla::lax::{ConvOptions, Padding};
use oxla::{
    Array, DType, Error, RematPolicy, Static, custom_jvp, custom_vjp, grad, hessian, jacfwd,
    jacrev, jit, jvp, lax, numpy as jnp, value_and_grad, vjp, vmap,
};
use oxla_core::WindowOp;
use oxla_nn as nn;

use crate::reference;

fn data(name: &str) -> &'static serde_json::Value {
    &reference::script("transforms.py")[name]
}

fn inputs(name: &str) -> Vec<Array> {
    reference::arrays(&data(name)["inputs"])
}

fn check(got: &Array, want: &serde_json::Value, what: &str) {
    reference::assert_close(got, want, what);
}

fn check_all(got: &[Array], want: &serde_json::Value, what: &str) {
    reference::assert_all_close(got, want, what);
}

fn mlp_loss(p: &[Array], x: &Array, y: &Array) -> Array {
    let h = nn::relu(&(jnp::matmul(x, &p[0]) + &p[1]));
    let logits = jnp::matmul(&h, &p[2]) + &p[3];
    jnp::mean(
        &-jnp::sum(&(nn::log_softmax(&logits, None) * y), Some(&[-1]), false),
        None,
        false,
    )
}

fn mlp_setup() -> (Vec<Array>, Array, Array) {
    let a = inputs("mlp");
    (a[..4].to_vec(), a[4].clone(), a[5].clone())
}

#[test]
fn mlp_gradients_match_jax_eagerly_and_in_every_composition_with_jit() {
    let (params, x, y) = mlp_setup();
    let want = &data("mlp")["grads"];
    let (value, grads) = value_and_grad(|p: Vec<Array>| mlp_loss(&p, &x, &y))
        .call(params.clone())
        .unwrap();
    check(&value, &data("mlp")["value"], "value");
    check_all(&grads, want, "grad");
    // jit ∘ grad
    let jitted = jit(|(p, x, y): (Vec<Array>, Array, Array)| {
        grad(|p: Vec<Array>| mlp_loss(&p, &x, &y)).call(p)
    });
    let g = jitted.call((params.clone(), x.clone(), y.clone())).unwrap();
    check_all(&g, want, "jit(grad)");
    // grad ∘ jit
    let inner = jit(|(p, x, y): (Vec<Array>, Array, Array)| mlp_loss(&p, &x, &y));
    let g = grad(|p: Vec<Array>| {
        inner
            .call((p, x.clone(), y.clone()))
            .unwrap_or_else(Array::error)
    })
    .call(params.clone())
    .unwrap();
    check_all(&g, want, "grad(jit)");
    // jit ∘ grad ∘ jit, twice (the second call hits the cache)
    let both = jit(|(p, x, y): (Vec<Array>, Array, Array)| {
        grad(|p: Vec<Array>| {
            inner
                .call((p, x.clone(), y.clone()))
                .unwrap_or_else(Array::error)
        })
        .call(p)
    });
    for _ in 0..2 {
        let g = both.call((params.clone(), x.clone(), y.clone())).unwrap();
        check_all(&g, want, "jit(grad(jit))");
    }
    assert_eq!(both.cache_size(), 1);
}

#[test]
fn mlp_gradient_matches_central_differences() {
    let (params, x, y) = mlp_setup();
    let g = grad(|p: Vec<Array>| mlp_loss(&p, &x, &y))
        .call(params.clone())
        .unwrap();
    reference::assert_central_difference(
        &params,
        &g,
        |p| mlp_loss(p, &x, &y),
        |i, k| (((k * 7 + i * 13) % 11) as f32 - 5.0) / 5.0,
    );
}

#[test]
fn per_example_gradients_vmap_of_grad_and_grad_of_vmap() {
    let (params, x, y) = mlp_setup();
    let n = x.shape()[0];
    let xe = jnp::reshape(&x, &[n, 1, x.shape()[1]]);
    let ye = jnp::reshape(&y, &[n, 1, y.shape()[1]]);
    let per_example =
        |(p, x, y): (Vec<Array>, Array, Array)| grad(|p: Vec<Array>| mlp_loss(&p, &x, &y)).call(p);
    let g = vmap(per_example)
        .in_axes(&[None, Some(0), Some(0)])
        .call((params.clone(), xe.clone(), ye.clone()))
        .unwrap();
    check_all(&g, &data("mlp_per_example")["grads"], "vmap(grad)");
    // jit ∘ vmap ∘ grad
    let jitted = jit(|args: (Vec<Array>, Array, Array)| {
        vmap(per_example)
            .in_axes(&[None, Some(0), Some(0)])
            .call(args)
    });
    let g = jitted
        .call((params.clone(), xe.clone(), ye.clone()))
        .unwrap();
    check_all(&g, &data("mlp_per_example")["grads"], "jit(vmap(grad))");
    // grad ∘ vmap
    let g = grad(|p: Vec<Array>| {
        let losses = vmap(|(x, y): (Array, Array)| mlp_loss(&p, &x, &y))
            .call((xe.clone(), ye.clone()))
            .unwrap_or_else(Array::error);
        jnp::sum(&losses, None, false)
    })
    .call(params)
    .unwrap();
    check_all(&g, &data("mlp_grad_of_vmap")["grads"], "grad(vmap)");
}

#[test]
fn grad_of_the_mlp_has_at_most_one_and_a_half_times_jaxs_equations() {
    let (params, x, y) = mlp_setup();
    let jaxpr = oxla::make_jaxpr(
        |p: Vec<Array>| grad(|p: Vec<Array>| mlp_loss(&p, &x, &y)).call(p),
        &params,
    )
    .unwrap();
    let jax = data("mlp_jaxpr_eqns").as_u64().unwrap() as usize;
    assert!(
        jaxpr.eqns.len() * 2 <= jax * 3,
        "oxla {} equations, jax {jax}:\n{jaxpr}",
        jaxpr.eqns.len()
    );
}

fn layer_norm(x: &Array, gamma: &Array, beta: &Array) -> Array {
    let mean = jnp::mean(x, Some(&[-1]), true);
    let var = jnp::mean(&jnp::square(&(x - &mean)), Some(&[-1]), true);
    (x - &mean) * lax::rsqrt(&(var + 1e-5)) * gamma + beta
}

#[test]
fn layer_norm_vjp_matches_jax() {
    let a = inputs("layer_norm");
    let (_, pullback) = vjp(
        |(x, g, b): (Array, Array, Array)| layer_norm(&x, &g, &b),
        &(a[0].clone(), a[1].clone(), a[2].clone()),
    )
    .unwrap();
    let (gx, gg, gb) = pullback.call(&a[3]).unwrap();
    check_all(
        &[gx, gg, gb],
        &data("layer_norm")["grads"],
        "layer_norm vjp",
    );
}

fn attention_loss(p: &[Array], x: &Array) -> Array {
    let h = layer_norm(x, &p[4], &p[5]);
    let (q, k, v) = (
        jnp::matmul(&h, &p[0]),
        jnp::matmul(&h, &p[1]),
        jnp::matmul(&h, &p[2]),
    );
    let t = x.shape()[0];
    let d = q.shape()[1] as f64;
    let scores = jnp::matmul(&q, &jnp::transpose(&k, None)) / d.sqrt();
    let rows = lax::iota(DType::I32, &[t, t], 0);
    let cols = lax::iota(DType::I32, &[t, t], 1);
    let masked = jnp::where_(
        &lax::ge(&rows, &cols),
        &scores,
        &Array::weak_scalar(-1e9f32),
    );
    let out = jnp::matmul(&jnp::matmul(&nn::softmax(&masked, None), &v), &p[3]) + x;
    jnp::sum(&jnp::square(&jnp::tanh(&out)), None, false)
}

#[test]
fn causal_self_attention_gradients_match_jax() {
    let a = inputs("attention");
    let (params, x) = (a[..6].to_vec(), a[6].clone());
    let (value, g) = value_and_grad(|p: Vec<Array>| attention_loss(&p, &x))
        .call(params)
        .unwrap();
    check(&value, &data("attention")["value"], "attention value");
    check_all(&g, &data("attention")["grads"], "attention grad");
}

fn conv_loss(p: &[Array], x: &Array) -> Array {
    let y = lax::conv_general_dilated(
        x,
        &p[0],
        &[1, 1],
        &Padding::Same,
        ("NHWC", "HWIO", "NHWC"),
        &ConvOptions::default(),
    ) + &p[1];
    let y = nn::relu(&y);
    let pooled = lax::reduce_window(
        &y,
        WindowOp::Max,
        &[1, 2, 2, 1],
        &[1, 2, 2, 1],
        &[(0, 0); 4],
    );
    jnp::mean(&jnp::square(&pooled), None, false)
}

#[test]
fn conv_and_pooling_gradients_match_jax() {
    let a = inputs("conv");
    let (params, x) = (a[..2].to_vec(), a[2].clone());
    let (value, g) = value_and_grad(|p: Vec<Array>| conv_loss(&p, &x))
        .call(params)
        .unwrap();
    check(&value, &data("conv")["value"], "conv value");
    check_all(&g, &data("conv")["grads"], "conv grad");
}

fn cube_sum(x: Array) -> Array {
    jnp::sum(&(jnp::sin(&x) * jnp::square(&x)), None, false)
}

#[test]
fn jacobians_hessian_and_second_derivatives_match_jax() {
    let a = inputs("jacobians");
    let (x, w) = (a[0].clone(), a[1].clone());
    let layer = |x: Array| jnp::tanh(&jnp::matmul(&w, &x));
    let want = data("jacobians");
    check(&jacfwd(layer, &x).unwrap(), &want["jacfwd"], "jacfwd");
    check(&jacrev(layer, &x).unwrap(), &want["jacrev"], "jacrev");
    check(&hessian(cube_sum, &x).unwrap(), &want["hessian"], "hessian");
    let grad_grad = grad(|x: Array| {
        let g = grad(cube_sum).call(x).unwrap_or_else(Array::error);
        jnp::sum(&g, None, false)
    })
    .call(x)
    .unwrap();
    check(&grad_grad, &want["grad_grad"], "grad(grad)");
}

fn log1pexp_rule((x,): (Array,), (t,): (Array,)) -> (Array, Array) {
    let y = jnp::log(&(jnp::exp(&x) + 1.0));
    let slope = 1.0 - (1.0 / (jnp::exp(&x) + 1.0));
    (y, t * slope)
}

#[test]
fn custom_jvp_log1pexp_is_stable_under_grad_vmap_jit_and_second_order() {
    let log1pexp = custom_jvp(
        |(x,): (Array,)| jnp::log(&(jnp::exp(&x) + 1.0)),
        log1pexp_rule,
    );
    let x = inputs("log1pexp")[0].clone();
    let want = data("log1pexp");
    check(
        &log1pexp.call((x.clone(),)).unwrap(),
        &want["value"],
        "value",
    );
    let dlog = |x: Array| grad(|x: Array| log1pexp.call((x,)).unwrap_or_else(Array::error)).call(x);
    let g = vmap(dlog).call(x.clone()).unwrap();
    check(&g, &want["grad"], "vmap(grad)");
    let (_, t) = jvp(
        |x: Array| log1pexp.call((x,)).unwrap_or_else(Array::error),
        &x,
        &jnp::ones_like(&x),
    )
    .unwrap();
    check(&t, &want["jvp"], "jvp");
    let jitted = jit(|x: Array| vmap(dlog).call(x));
    check(
        &jitted.call(x.clone()).unwrap(),
        &want["grad"],
        "jit(vmap(grad))",
    );
    let second = vmap(|x: Array| grad(|x: Array| dlog(x).unwrap_or_else(Array::error)).call(x))
        .call(x)
        .unwrap();
    check(&second, &want["second"], "grad(grad)");
}

#[test]
fn custom_vjp_clips_gradients_under_grad_and_jit() {
    let clip = custom_vjp(
        |(x,): (Array,)| x,
        |(x,): (Array,)| (x, ()),
        |(): (), g: Array| {
            (jnp::clip(
                &g,
                &Array::weak_scalar(-0.1f32),
                &Array::weak_scalar(0.1f32),
            ),)
        },
    );
    let x = inputs("clip_gradient")[0].clone();
    let loss = |x: Array| {
        jnp::sum(
            &jnp::square(&clip.call((x,)).unwrap_or_else(Array::error)),
            None,
            false,
        )
    };
    let g = grad(loss).call(x.clone()).unwrap();
    check(&g, &data("clip_gradient")["grad"], "grad");
    let jitted = jit(|x: Array| grad(loss).call(x));
    check(
        &jitted.call(x.clone()).unwrap(),
        &data("clip_gradient")["grad"],
        "jit(grad)",
    );
    // grad of a jitted function that uses it (custom_lin inside a pjit).
    let jitted_loss = jit(loss);
    let g = grad(|x: Array| jitted_loss.call(x).unwrap_or_else(Array::error))
        .call(x.clone())
        .unwrap();
    check(&g, &data("clip_gradient")["grad"], "grad(jit)");
    // Batched: vmap of grad, grad of vmap, and vmap of the plain call.
    let per_element = |x: Array| grad(loss).call(x);
    let g = vmap(per_element).call(x.clone()).unwrap();
    check(&g, &data("clip_gradient")["grad"], "vmap(grad)");
    let batched_loss = |x: Array| {
        let y = vmap(|x: Array| clip.call((x,)).unwrap_or_else(Array::error))
            .call(x)
            .unwrap_or_else(Array::error);
        jnp::sum(&jnp::square(&y), None, false)
    };
    check(
        &grad(batched_loss).call(x.clone()).unwrap(),
        &data("clip_gradient")["grad"],
        "grad(vmap)",
    );
    let err = jvp(loss, &x, &x).unwrap_err().to_string();
    assert!(
        err.contains("custom_vjp function cannot be differentiated in forward mode"),
        "{err}"
    );
}

#[test]
fn logsumexp_and_log_softmax_of_infinite_rows_match_jax() {
    let rows = inputs("logsumexp_inf")[0].clone();
    let want = data("logsumexp_inf");
    check(
        &nn::logsumexp(&rows, Some(&[-1]), false),
        &want["value"],
        "logsumexp",
    );
    let first = rows.index(&oxla::s![0..1]);
    check(
        &nn::log_softmax(&first, None),
        &want["log_softmax"],
        "log_softmax",
    );
    let g = grad(|r: Array| jnp::sum(&nn::logsumexp(&r, Some(&[-1]), false), None, false))
        .call(rows)
        .unwrap();
    check(&g, &want["grad"], "grad");
}

#[test]
fn no_perturbation_confusion() {
    // d/dx [x * grad(y ↦ x + y)(c)] = 1
    let f = |x: Array| {
        let c = Array::scalar(3.0f32).unwrap();
        let inner = grad(|y: Array| &x + &y)
            .call(c)
            .unwrap_or_else(Array::error);
        &x * &inner
    };
    let g = grad(f).call(Array::scalar(2.0f32).unwrap()).unwrap();
    assert_eq!(g.item::<f32>().unwrap(), 1.0);
    let g = jit(|x: Array| grad(f).call(x))
        .call(Array::scalar(2.0f32).unwrap())
        .unwrap();
    assert_eq!(g.item::<f32>().unwrap(), 1.0);
}

fn deep_mlp(layers: &[Array], x: &Array, policy: Option<RematPolicy>) -> Array {
    let mut h = x.clone();
    for w in layers {
        let layer = |(h, w): (Array, Array)| jnp::tanh(&jnp::matmul(&h, &w));
        h = match &policy {
            Some(p) => checkpoint(layer)
                .policy(p.clone())
                .call((h, w.clone()))
                .unwrap_or_else(Array::error),
            None => layer((h, w.clone())),
        };
    }
    jnp::sum(&jnp::square(&h), None, false)
}

/// The deep MLP as a scan over stacked weights `ws[layer, in, out]`, its
/// body checkpointed with `nothing_saveable` when `remat`.
fn scanned_deep_mlp(ws: &Array, x: &Array, remat: bool) -> Array {
    let layer = |(h, w): (Array, Array)| jnp::tanh(&jnp::matmul(&h, &w));
    let body = |h: Array, w: Array| {
        let h = if remat {
            checkpoint(layer)
                .policy(RematPolicy::NothingSaveable)
                .call((h, w))
                .unwrap_or_else(Array::error)
        } else {
            layer((h, w))
        };
        (h, ())
    };
    let (h, ()) = lax::scan(body, x.clone(), ws.clone(), lax::ScanOptions::default())
        .unwrap_or_else(|e| (Array::error(e), ()));
    jnp::sum(&jnp::square(&h), None, false)
}

/// JAX's policies over named values decide which of them reverse mode keeps:
/// the residuals of the linearized function (its tangent jaxpr's
/// constants) hold a named value exactly when the policy saves it. `a` is
/// an f32[3] and `b` an f32[5], so a residual's shape says which it is; the
/// gradient is the same whatever is kept.
#[test]
fn named_value_policies_keep_exactly_the_values_they_save() {
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let only = |n: &[&str]| RematPolicy::SaveOnlyTheseNames(names(n));
    let cases = [
        (RematPolicy::NothingSaveable, false, false),
        (only(&["a"]), true, false),
        (
            RematPolicy::SaveAnyNamesButThese(names(&["a"])),
            false,
            true,
        ),
        (RematPolicy::SaveAnyNamesButThese(names(&[])), true, true),
        (
            RematPolicy::SaveFromBothPolicies(Box::new(only(&["a"])), Box::new(only(&["b"]))),
            true,
            true,
        ),
        (
            RematPolicy::SaveFromBothPolicies(
                Box::new(RematPolicy::NothingSaveable),
                Box::new(only(&["b"])),
            ),
            false,
            true,
        ),
    ];
    let body = |x: Array| {
        let first = x.index(&oxla::s![..1]);
        let a = oxla::checkpoint_name(&jnp::sin(&jnp::concatenate(&[&x, &first], 0)), "a");
        let b = oxla::checkpoint_name(&jnp::sin(&jnp::concatenate(&[&x, &x, &first], 0)), "b");
        jnp::sum(&jnp::cos(&a), None, false) + jnp::sum(&jnp::cos(&b), None, false)
    };
    let x = Array::from_slice(&[0.3f32, -1.2], &[2]).unwrap();
    let plain = grad(body).call(x.clone()).unwrap();
    for (policy, keeps_a, keeps_b) in cases {
        let f = |x: Array| {
            checkpoint(body)
                .policy(policy.clone())
                .call(x)
                .unwrap_or_else(Array::error)
        };
        let (_, linear) = oxla::linearize(f, &x).unwrap();
        let jaxpr = linear.jaxpr();
        let residual_sizes: Vec<i64> = jaxpr
            .constvars
            .iter()
            .map(|&v| jaxpr.aval(v).size())
            .collect();
        assert_eq!(
            (residual_sizes.contains(&3), residual_sizes.contains(&5)),
            (keeps_a, keeps_b),
            "{}: residual sizes {residual_sizes:?}",
            policy.name()
        );
        let g = grad(f).call(x.clone()).unwrap();
        assert_eq!(
            g.to_vec::<f32>().unwrap(),
            plain.to_vec::<f32>().unwrap(),
            "{}",
            policy.name()
        );
    }
}

/// Custom rules' non-differentiable arguments (JAX's `nondiff_argnums`) are
/// `Static` values: the jvp rule sees them in the primals and the tangents,
/// the vjp's forward pass may keep them in its residuals and the backward
/// pass gives them back; under grad and jit the rules are the ones used.
#[test]
fn custom_rules_take_static_non_differentiable_arguments() {
    // x^n with its own rule n x^(n-1) t, n static.
    let power = custom_jvp(
        |(x, n): (Array, Static<i32>)| jnp::power(&x, &Array::weak_scalar(n.0)),
        |(x, n): (Array, Static<i32>), (t, _): (Array, Static<i32>)| {
            let y = jnp::power(&x, &Array::weak_scalar(n.0));
            let slope = jnp::power(&x, &Array::weak_scalar(n.0 - 1)) * (n.0 as f64);
            (y, &t * &slope)
        },
    );
    let x = Array::scalar(2.0f32).unwrap();
    for n in [2, 3] {
        let f = |x: Array| power.call((x, Static(n))).unwrap_or_else(Array::error);
        let want = n as f32 * 2f32.powi(n - 1);
        assert_eq!(
            grad(f).call(x.clone()).unwrap().item::<f32>().unwrap(),
            want
        );
        let jitted = jit(|x: Array| grad(f).call(x)).call(x.clone()).unwrap();
        assert_eq!(jitted.item::<f32>().unwrap(), want);
    }
    // A backward pass that scales by 10 n (not the true derivative n), to
    // show that it is the one used.
    let scaled = custom_vjp(
        |(x, n): (Array, Static<i32>)| &x * (n.0 as f64),
        |(x, n): (Array, Static<i32>)| (&x * (n.0 as f64), n),
        |n: Static<i32>, ct: Array| (&ct * (10.0 * n.0 as f64), n),
    );
    let g = grad(|x: Array| scaled.call((x, Static(2))).unwrap_or_else(Array::error))
        .call(x)
        .unwrap();
    assert_eq!(g.item::<f32>().unwrap(), 20.0);
}

/// `custom_jvps`, one rule per input leaf (JAX's `defjvps`): with the true
/// partial derivatives the gradient is autodiff's, eagerly, under jit and
/// in forward mode; a `None` rule leaves its input out; a rule count that
/// does not match the leaves is an error.
#[test]
fn custom_jvps_sum_one_rule_per_input_leaf() {
    use oxla::{LeafJvp, custom_jvps};
    type P = (Array, Array);
    let body = |(x, y): P| jnp::sin(&x) * &y;
    let by_x: LeafJvp<P, Array> = Box::new(|t, _, (x, y)| t * &jnp::cos(x) * y);
    let by_y: LeafJvp<P, Array> = Box::new(|t, _, (x, _)| t * &jnp::sin(x));
    let f = custom_jvps(body, vec![Some(by_x), Some(by_y)]);
    let p = (
        Array::from_slice(&[0.3f32, -1.1], &[2]).unwrap(),
        Array::from_slice(&[2.0f32, 0.5], &[2]).unwrap(),
    );
    let loss = |p: P| jnp::sum(&f.call(p).unwrap_or_else(Array::error), None, false);
    let plain = |p: P| jnp::sum(&body(p), None, false);
    let want = grad(plain).call(p.clone()).unwrap();
    let got = grad(loss).call(p.clone()).unwrap();
    let jitted = jit(|p: P| grad(loss).call(p)).call(p.clone()).unwrap();
    for (g, j, w) in [(&got.0, &jitted.0, &want.0), (&got.1, &jitted.1, &want.1)] {
        let w = w.to_vec::<f32>().unwrap();
        assert_eq!(g.to_vec::<f32>().unwrap(), w);
        assert_eq!(j.to_vec::<f32>().unwrap(), w);
    }
    let (_, t) = jvp(
        loss,
        &p,
        &(jnp::ones(&[2], DType::F32), jnp::zeros(&[2], DType::F32)),
    )
    .unwrap();
    let (_, t_plain) = jvp(
        plain,
        &p,
        &(jnp::ones(&[2], DType::F32), jnp::zeros(&[2], DType::F32)),
    )
    .unwrap();
    assert_eq!(t.item::<f32>().unwrap(), t_plain.item::<f32>().unwrap());
    // Without y's rule, y does not move the output.
    let by_x: LeafJvp<P, Array> = Box::new(|t, _, (x, y)| t * &jnp::cos(x) * y);
    let only_x = custom_jvps(body, vec![Some(by_x), None]);
    let (_, dy) = grad(|p: P| jnp::sum(&only_x.call(p).unwrap_or_else(Array::error), None, false))
        .call(p.clone())
        .unwrap();
    assert_eq!(dy.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    let one_rule = custom_jvps(body, vec![None]);
    let err = grad(|p: P| jnp::sum(&one_rule.call(p).unwrap_or_else(Array::error), None, false))
        .call(p)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("custom_jvps has 1 rules for 2 input leaves"),
        "{err}"
    );
}

/// A checkpointed function's static arguments (JAX's `static_argnums`) are
/// Rust values in `Static`: they shape the trace and are not
/// differentiated; the gradient is the one without checkpoint, for each
/// static value, eagerly and under jit.
#[test]
fn checkpoint_takes_static_arguments() {
    let body = |(x, n): (Array, Static<i32>)| {
        let mut y = x;
        for _ in 0..n.0 {
            y = jnp::sin(&y);
        }
        jnp::sum(&y, None, false)
    };
    let x = Array::from_slice(&[0.5f32, -1.0], &[2]).unwrap();
    for n in [1, 3] {
        let remat = |x: Array| {
            checkpoint(body)
                .policy(RematPolicy::NothingSaveable)
                .call((x, Static(n)))
                .unwrap_or_else(Array::error)
        };
        let want = grad(|x: Array| body((x, Static(n))))
            .call(x.clone())
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        let eager = grad(remat).call(x.clone()).unwrap();
        assert_eq!(eager.to_vec::<f32>().unwrap(), want, "n = {n}");
        let jitted = jit(|x: Array| grad(remat).call(x)).call(x.clone()).unwrap();
        assert_eq!(jitted.to_vec::<f32>().unwrap(), want, "n = {n} under jit");
    }
}

#[test]
fn checkpoint_policies_keep_gradients_and_recompute_behind_a_barrier() {
    let a = inputs("deep_mlp");
    let (layers, x) = (a[..4].to_vec(), a[4].clone());
    let policies = [
        RematPolicy::NothingSaveable,
        RematPolicy::EverythingSaveable,
        RematPolicy::DotsSaveable,
        RematPolicy::DotsWithNoBatchDimsSaveable,
        RematPolicy::SaveOnlyTheseNames(vec!["none".into()]),
        RematPolicy::SaveAnyNamesButThese(vec!["none".into()]),
        RematPolicy::SaveFromBothPolicies(
            Box::new(RematPolicy::DotsWithNoBatchDimsSaveable),
            Box::new(RematPolicy::NothingSaveable),
        ),
    ];
    for p in policies {
        let g = grad(|l: Vec<Array>| deep_mlp(&l, &x, Some(p.clone())))
            .call(layers.clone())
            .unwrap();
        check_all(&g, &data("deep_mlp")["grads"], &format!("{p:?}"));
        let jitted = jit(|(l, x): (Vec<Array>, Array)| {
            grad(|l: Vec<Array>| deep_mlp(&l, &x, Some(p.clone()))).call(l)
        });
        let g = jitted.call((layers.clone(), x.clone())).unwrap();
        check_all(&g, &data("deep_mlp")["grads"], &format!("jit {p:?}"));
    }
    // The same layers as a scan with a checkpointed body.
    let stacked = jnp::stack(&layers.iter().collect::<Vec<_>>(), 0);
    for remat in [false, true] {
        let g = grad(|ws: Array| scanned_deep_mlp(&ws, &x, remat))
            .call(stacked.clone())
            .unwrap();
        let per_layer: Vec<Array> = jnp::split(&g, 4, 0)
            .iter()
            .map(|l| jnp::squeeze(l, Some(&[0])))
            .collect();
        check_all(
            &per_layer,
            &data("deep_mlp")["grads"],
            &format!("scan, remat {remat}"),
        );
    }
    // 16 layers of 256 x 256 on a batch of 512. The checkpointed program
    // recomputes each layer behind an optimization barrier; XLA's CPU
    // compiler removes barriers before CSE, so (for JAX too) it merges the
    // recomputation back and the temporaries do not drop on this backend:
    // oxla must use no more than JAX's program does, either way.
    let w: Vec<Array> = (0..16)
        .map(|i| {
            lax::mul(
                &jnp::eye(256, DType::F32),
                &Array::weak_scalar(0.9 + 0.001 * i as f32),
            )
        })
        .collect();
    let xb = jnp::ones(&[512, 256], DType::F32);
    let program = |policy: Option<RematPolicy>| {
        jit(move |(l, x): (Vec<Array>, Array)| {
            grad(|l: Vec<Array>| deep_mlp(&l, &x, policy.clone())).call(l)
        })
    };
    let jax = &data("deep_memory");
    for (name, policy) in [
        ("plain", None),
        ("remat", Some(RematPolicy::NothingSaveable)),
    ] {
        let f = program(policy);
        let temp = f
            .memory_stats(&(w.clone(), xb.clone()))
            .unwrap()
            .temp_size_in_bytes;
        let theirs = jax[name].as_i64().unwrap();
        assert!(
            temp <= theirs,
            "{name}: oxla {temp} B of temporaries, JAX {theirs} B"
        );
    }
    // The same 16 layers as a scan over stacked weights: here the
    // checkpointed body's residual is only the carry (the weights are the
    // scan's xs, passed through), so peak temporaries must drop, as JAX's do.
    let ws = jnp::stack(&w.iter().collect::<Vec<_>>(), 0);
    let scanned = |remat: bool| {
        jit(move |(ws, x): (Array, Array)| {
            grad(|ws: Array| scanned_deep_mlp(&ws, &x, remat)).call(ws)
        })
        .memory_stats(&(ws.clone(), xb.clone()))
        .unwrap()
        .temp_size_in_bytes
    };
    let (scan_plain, scan_remat) = (scanned(false), scanned(true));
    assert!(
        scan_remat < scan_plain,
        "checkpoint inside scan: {scan_remat} B of temporaries, without {scan_plain} B"
    );
    for (name, ours) in [("scan_plain", scan_plain), ("scan_remat", scan_remat)] {
        let theirs = jax[name].as_i64().unwrap();
        assert!(
            ours <= theirs,
            "{name}: oxla {ours} B of temporaries, JAX {theirs} B"
        );
    }
    let text = |policy| program(policy).lower(&(w.clone(), xb.clone())).unwrap();
    let (plain, remat) = (text(None), text(Some(RematPolicy::NothingSaveable)));
    let dots = |t: &str| t.matches("stablehlo.dot_general").count();
    assert!(remat.contains("stablehlo.optimization_barrier"));
    assert_eq!(
        dots(&remat),
        dots(&plain) + 16,
        "one recomputed product per layer"
    );
}

#[test]
fn transformation_errors_are_clear_and_name_the_caller() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let i = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    // Differentiating w.r.t. an integer input.
    let weighted = |(x, i): (Array, Array)| {
        jnp::sum(
            &(&x * &lax::convert_element_type(&i, DType::F32)),
            None,
            false,
        )
    };
    let line = line!() + 1;
    let err = grad(weighted).call((x.clone(), i.clone())).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Usage { .. }), "{text}");
    assert!(
        text.contains("i32")
            && text.contains("[1]")
            && text.contains(&format!("transforms.rs:{line}")),
        "{text}"
    );
    // ... allowed with argnums that skip it, and vjp gives zeros for it.
    let g = grad(weighted)
        .argnums(&[0])
        .call((x.clone(), i.clone()))
        .unwrap();
    assert_eq!(g.0.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    let (_, pullback) = vjp(
        |(x, i): (Array, Array)| &x * &lax::convert_element_type(&i, DType::F32),
        &(x.clone(), i.clone()),
    )
    .unwrap();
    let (gx, gi) = pullback.call(&jnp::ones_like(&x)).unwrap();
    assert_eq!(gx.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(gi.to_vec::<i32>().unwrap(), vec![0, 0, 0]);
    // Mismatched vmap axis sizes.
    let y = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let add = vmap(|(a, b): (Array, Array)| &a + &b);
    let line = line!() + 1;
    let err = add.call((x.clone(), y)).unwrap_err().to_string();
    assert!(
        err.contains("inconsistent sizes") && err.contains(&format!("transforms.rs:{line}")),
        "{err}"
    );
    // out_axes None on a batched output.
    let err = vmap(|a: Array| &a * 2.0)
        .out_axes(&[None])
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("out_axes None") && err.contains("depends on the batch"),
        "{err}"
    );
    // A custom rule returning the wrong structure.
    let bad = custom_jvp(
        |(x,): (Array,)| jnp::sin(&x),
        |(x,): (Array,), (t,): (Array,)| (jnp::sin(&x), jnp::concatenate(&[&t, &t], 0)),
    );
    let err = grad(|x: Array| jnp::sum(&bad.call((x,)).unwrap_or_else(Array::error), None, false))
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("custom_jvp rule's tangent output") && err.contains("f32[6]"),
        "{err}"
    );
    // A non-scalar function under grad.
    let err = grad(|a: Array| &a * 2.0)
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("scalar"), "{err}");
}

#[test]
fn tangents_and_cotangents_of_another_type_than_their_primals_are_errors() {
    // JAX: "tangent values inconsistent with the primal values". A tangent
    // f32[3, 2] for a primal f32[3] once returned an f32[2].
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let wide = jnp::ones(&[3, 2], DType::F32);
    let half = jnp::ones(&[3], DType::F16);
    let cube = |x: Array| &x * &x * &x;
    let (_, linear) = oxla::linearize(cube, &x).unwrap();
    for (bad, got) in [(&wide, "f32[3,2]"), (&half, "f16[3]")] {
        let line = line!() + 1;
        let err = linear.call(bad).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Usage { .. }), "{text}");
        assert!(
            text.contains(&format!(
                "tangent 0 is {got}, inconsistent with its primal f32[3]"
            )) && text.contains(&format!("transforms.rs:{line}")),
            "{text}"
        );
        let line = line!() + 1;
        let text = jvp(cube, &x, bad).unwrap_err().to_string();
        assert!(
            text.contains(&format!(
                "tangent 0 is {got}, inconsistent with its primal f32[3]"
            )) && text.contains(&format!("transforms.rs:{line}")),
            "{text}"
        );
        let (_, pullback) = vjp(cube, &x).unwrap();
        let line = line!() + 1;
        let text = pullback.call(bad).unwrap_err().to_string();
        assert!(
            text.contains(&format!(
                "cotangent 0 is {got}, inconsistent with its output f32[3]"
            )) && text.contains(&format!("transforms.rs:{line}")),
            "{text}"
        );
    }
    // The right types still work, and integer inputs take any tangent
    // (they have none, as JAX's float0).
    assert_eq!(
        linear
            .call(&jnp::ones_like(&x))
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![3.0, 12.0, 27.0]
    );
    let i = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let (_, ints) = oxla::linearize(|i: Array| &i * 2, &i).unwrap();
    assert!(ints.call(&jnp::ones(&[5], DType::F32)).is_ok());
}

#[test]
fn an_error_no_output_depends_on_is_still_reported() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let wrong = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = grad(|a: Array| {
        let _unused = &a + &wrong;
        jnp::sum(&a, None, false)
    })
    .call(x.clone())
    .unwrap_err()
    .to_string();
    assert!(err.contains("incompatible shapes"), "{err}");
    let err = jit(|a: Array| {
        let _unused = &a + &wrong;
        jnp::sum(&a, None, false)
    })
    .call(x)
    .unwrap_err()
    .to_string();
    assert!(err.contains("incompatible shapes"), "{err}");
}

#[test]
fn equations_made_by_rules_carry_the_users_line() {
    let x = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
    let jaxpr = oxla::make_jaxpr(
        |x: Array| grad(|x: Array| jnp::sum(&jnp::sin(&x), None, false)).call(x),
        &x,
    )
    .unwrap();
    assert!(jaxpr.eqns.iter().any(|e| e.primitive.name() == "cos"));
    for e in &jaxpr.eqns {
        let file = e.location.map(|l| l.file).unwrap_or("none");
        assert!(
            file.ends_with("transforms.rs"),
            "{} made at {file}",
            e.primitive
        );
    }
}

#[test]
fn a_non_linear_custom_rule_is_an_error_naming_the_primitive_and_line() {
    let square_tangent = custom_jvp(
        |(x,): (Array,)| jnp::sin(&x),
        |(x,): (Array,), (t,): (Array,)| (jnp::sin(&x), &t * &t),
    );
    let x = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
    // Forward mode is fine (the rule is just evaluated) ...
    let (_, t) = jvp(
        |x: Array| square_tangent.call((x,)).unwrap_or_else(Array::error),
        &x,
        &x,
    )
    .unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.25, 1.0]);
    // ... but reverse mode must transpose `t * t`.
    let err = grad(|x: Array| {
        jnp::sum(
            &square_tangent.call((x,)).unwrap_or_else(Array::error),
            None,
            false,
        )
    })
    .call(x)
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("transpose of mul") && err.contains("not linear"),
        "{err}"
    );
    assert!(err.contains("transforms.rs:"), "{err}");
}

#[test]
fn nested_vmap_with_axes_on_different_dims_and_negative_out_axes() {
    // m[i, j] = a[i] * b[j], built as vmap over b (axis -1 of bt) of vmap over a.
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let bt = Array::from_slice(&[10.0f32, 20.0], &[1, 2]).unwrap();
    let outer = vmap(|(a, b): (Array, Array)| {
        vmap(|(a, b): (Array, Array)| &a * &b)
            .in_axes(&[Some(0), None])
            .call((a, b))
    })
    .in_axes(&[None, Some(-1)])
    .out_axes(&[Some(-1)]);
    let m = outer.call((a, bt)).unwrap();
    assert_eq!(m.shape(), &[3, 1, 2]);
    assert_eq!(
        m.to_vec::<f32>().unwrap(),
        vec![10.0, 20.0, 20.0, 40.0, 30.0, 60.0]
    );
}

#[test]
fn rust_control_flow_on_values_works_under_grad_but_not_under_jit() {
    let f = |x: Array| -> Array {
        match x.item::<f32>() {
            Ok(v) if v > 0.0 => &x * &x,
            Ok(_) => -&x,
            Err(e) => Array::error(e),
        }
    };
    let pos = grad(f).call(Array::scalar(3.0f32).unwrap()).unwrap();
    assert_eq!(pos.item::<f32>().unwrap(), 6.0);
    let neg = grad(f).call(Array::scalar(-3.0f32).unwrap()).unwrap();
    assert_eq!(neg.item::<f32>().unwrap(), -1.0);
    let err = jit(|x: Array| grad(f).call(x))
        .call(Array::scalar(3.0f32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read a traced f32[]"), "{err}");
}

#[test]
fn jit_vmap_and_grad_compose_in_every_order() {
    // f(x) = sum(sin(x) * x), grad f = cos(x) x + sin(x); rows of a batch.
    let rows = Array::from_slice(&[0.1f32, 0.5, -1.0, 2.0, 0.3, -0.7], &[2, 3]).unwrap();
    let f = |x: Array| jnp::sum(&(jnp::sin(&x) * &x), None, false);
    let want: Vec<f32> = rows
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.cos() * x + x.sin())
        .collect();
    let close = |got: &Array, what: &str| {
        for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(&want) {
            assert!((g - w).abs() < 1e-5, "{what}: {g} vs {w}");
        }
    };
    let jf = jit(f);
    let grad_f = |x: Array| grad(f).call(x);
    let grad_jf = |x: Array| grad(|x: Array| jf.call(x).unwrap_or_else(Array::error)).call(x);
    close(&vmap(grad_f).call(rows.clone()).unwrap(), "vmap(grad)");
    close(
        &vmap(grad_jf).call(rows.clone()).unwrap(),
        "vmap(grad(jit))",
    );
    let jit_vmap_grad = jit(|x: Array| vmap(grad_f).call(x));
    close(
        &jit_vmap_grad.call(rows.clone()).unwrap(),
        "jit(vmap(grad))",
    );
    let vmap_jit_grad = jit(grad_f);
    let g = vmap(|x: Array| vmap_jit_grad.call(x))
        .call(rows.clone())
        .unwrap();
    close(&g, "vmap(jit(grad))");
    // grad of a sum over vmap of a jitted function.
    let g = grad(|x: Array| {
        let per_row = vmap(|r: Array| jf.call(r).unwrap_or_else(Array::error))
            .call(x)
            .unwrap_or_else(Array::error);
        jnp::sum(&per_row, None, false)
    })
    .call(rows.clone())
    .unwrap();
    close(&g, "grad(vmap(jit))");
    // jit inside jit inside grad.
    let outer = jit(|x: Array| jf.call(x));
    // The jitted jit's result is one flat Result, which grad's closure may
    // return as it is.
    let g = grad(|x: Array| outer.call(x))
        .call(rows.index(&oxla::s![0]))
        .unwrap();
    let first: Vec<f32> = want[..3].to_vec();
    for (g, w) in g.to_vec::<f32>().unwrap().iter().zip(&first) {
        assert!((g - w).abs() < 1e-5, "grad(jit(jit)): {g} vs {w}");
    }
}

#[test]
fn second_order_derivatives_through_scan_and_cond() {
    use oxla::lax::ScanOptions;
    // f(w) = prod_t (w x_t)^2-ish through a scan with a cond inside:
    // c ← c * w * x if c > 0 else c + w; h(w) = final c.
    let xs = Array::from_slice(&[1.0f32, 0.5, 2.0], &[3]).unwrap();
    let f = |w: Array| {
        lax::scan(
            |c: Array, x: Array| {
                let p = lax::gt(&c, &Array::weak_scalar(0.0f32));
                let wc = w.clone();
                let wc2 = w.clone();
                let next = lax::cond(
                    &p,
                    move |(c, x): (Array, Array)| &c * &(&wc * &x),
                    move |(c, _): (Array, Array)| &c + &wc2,
                    (c, x),
                )
                .unwrap_or_else(Array::error);
                (next, ())
            },
            Array::scalar(1.0f32).unwrap(),
            xs.clone(),
            ScanOptions::default(),
        )
        .map(|(c, ())| c)
        .unwrap_or_else(Array::error)
    };
    // c stays positive for w = 1.5: h(w) = w^3 * (1 * 0.5 * 2) = w^3.
    let w = Array::scalar(1.5f32).unwrap();
    let d1 = grad(f).call(w.clone()).unwrap().item::<f32>().unwrap();
    assert!((d1 - 3.0 * 1.5f32.powi(2)).abs() < 1e-4, "{d1}");
    let d2 = grad(|w: Array| grad(f).call(w).unwrap_or_else(Array::error))
        .call(w.clone())
        .unwrap()
        .item::<f32>()
        .unwrap();
    assert!((d2 - 6.0 * 1.5).abs() < 1e-4, "{d2}");
    let h = hessian(f, &w).unwrap().item::<f32>().unwrap();
    assert!((h - 9.0).abs() < 1e-4, "{h}");
}

/// Composed transformations give one flat `Result` (`jit(vmap(grad))` of a
/// function that returns `Result` is called with one `?`), and the
/// functions given to grad, scan, map, fori_loop and while_loop may return
/// `Result`s and use `?`; an `Err` they return is the transformation's
/// error.
#[test]
fn composed_transformations_give_one_flat_result_and_bodies_may_return_results() {
    use oxla::{Error, Result, lax};
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    // v ↦ v⁴ through a fori_loop whose body returns a Result; per example,
    // its derivative 4v³.
    let pow4 = |v: Array| -> Result<Array> {
        lax::fori_loop(
            0,
            3,
            |_, acc: Array| -> Result<Array> { Ok(&acc * &v) },
            v.clone(),
        )
    };
    let per_example = jit(|x: Array| vmap(|xi: Array| grad(pow4).call(xi)).call(x));
    let g: Array = per_example.call(x.clone()).unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![4.0, 32.0, 108.0]);

    let (total, partials) = lax::scan(
        |c: Array, xi: Array| -> Result<(Array, Array)> { Ok((&c + &xi, &c * 1.0)) },
        Array::scalar(0.0f32).unwrap(),
        x.clone(),
        lax::ScanOptions::default(),
    )
    .unwrap();
    assert_eq!(total.item::<f32>().unwrap(), 6.0);
    assert_eq!(partials.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 3.0]);
    let doubled = lax::map(|r: Array| -> Result<Array> { Ok(&r * 2.0) }, x.clone()).unwrap();
    assert_eq!(doubled.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    let halved = lax::while_loop(
        |c: &Array| -> Result<Array> { Ok(lax::gt(c, &Array::weak_scalar(1.0f32))) },
        |c: Array| -> Result<Array> { Ok(&c * 0.5) },
        Array::scalar(8.0f32).unwrap(),
    )
    .unwrap();
    assert_eq!(halved.item::<f32>().unwrap(), 1.0);

    // An Err from a body or a differentiated function is the call's error.
    let refusing = |_: Array| -> Result<Array> { Err(Error::InvalidArgument("no thanks".into())) };
    let e = lax::map(refusing, x.clone()).unwrap_err().to_string();
    assert!(e.contains("no thanks"), "{e}");
    let e = grad(refusing)
        .call(Array::scalar(1.0f32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no thanks"), "{e}");
    let e = jit(|x: Array| grad(refusing).call(x))
        .call(Array::scalar(1.0f32).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("no thanks"), "{e}");
}
