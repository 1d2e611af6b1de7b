//! oxla_optim's wrappers against Optax 0.2.6 (reference/optimizer_wrappers.py):
//! AdamW with its weight decay masked off the vector, `multi_transform`
//! (Adam on the matrix, SGD on the vector), `MultiSteps(adam, 4)`,
//! `apply_if_finite(adam, 2)` with NaN and inf gradients at fixed steps,
//! `inject_hyperparams(adam)` with the learning rate changed after step 10
//! (without recompiling the jitted update) and `clip` before SGD with
//! momentum, each over the same 30 steps on a matrix and a vector, the
//! update jitted as the script jits Optax's; and the errors of a mask, labels
//! or a state that do not fit the parameters.

use oxla::pytree::tree_leaves;
use oxla::{Array, DType, jit, numpy as jnp};
use oxla_optim::{self as optim, GradientTransformation};
use serde_json::Value;

use crate::reference;

fn data() -> &'static Value {
    reference::script("optimizer_wrappers.py")
}

/// The parameters: an 8x6 matrix and a 6-vector.
type Tree = (Array, Array);

fn tree(v: &Value) -> Tree {
    let a = reference::arrays(v);
    assert_eq!(a.len(), 2);
    (a[0].clone(), a[1].clone())
}

fn grads(key: &str) -> Vec<Tree> {
    data()[key].as_array().unwrap().iter().map(tree).collect()
}

/// Each step's parameters against Optax's within [`reference::CHAIN`] (840 ε
/// relative plus 84 ε of the leaf's largest element). The wrappers add only
/// Optax's own arithmetic (a running mean, selects, a product with the
/// learning rate): measured over the 30 steps (`OXLA_TEST_REPORT_DISTANCE=1`)
/// masked AdamW, `apply_if_finite`, the injected learning rate and `clip`
/// match Optax bit for bit, `multi_transform` and `MultiSteps` within 3 ε
/// (the `pow` of Adam's bias correction), and Optax's default
/// `inject_hyperparams(adam)` within about 360 ε (see
/// [`inject_learning_rate_matches_optax_without_recompiling`]).
fn check(name: &str, got: &[Tree]) {
    let want = data()["optimizers"][name]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: not in optimizer_wrappers.py"));
    assert_eq!(got.len(), want.len(), "{name}: steps");
    for (step, (params, want)) in (1..).zip(got.iter().zip(want)) {
        let want = want.as_array().unwrap();
        reference::assert_close(&params.0, &want[0], &format!("{name} step {step} w"));
        reference::assert_close(&params.1, &want[1], &format!("{name} step {step} b"));
    }
}

/// The parameters after each of the 30 updates by `opt` of `grads` (its
/// update jitted, the updates applied outside, as the script does);
/// `between` sees the state after each step (1-based) and may change it.
fn trajectory<T: GradientTransformation<Tree>>(
    opt: &T,
    grads: &[Tree],
    mut between: impl FnMut(usize, &mut T::State),
) -> Vec<Tree> {
    let update =
        jit(|(grads, state, params): (Tree, T::State, Tree)| opt.update(grads, state, &params));
    let mut params = tree(&data()["params0"]);
    let mut state = opt.init(&params);
    let mut out = Vec::new();
    for (step, g) in (1..).zip(grads) {
        let (updates, next) = update
            .call((g.clone(), state, params.clone()))
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
        state = next;
        params = optim::apply_updates(&params, &updates).unwrap();
        between(step, &mut state);
        out.push(params.clone());
    }
    assert_eq!(update.cache_size(), 1, "one compilation for all the steps");
    out
}

/// The weight decay skips the vector (a mask by key path): Optax's
/// `adamw(…, mask=lambda p: (True, False))`.
#[test]
fn masked_adamw_matches_optax() {
    let opt = optim::adamw_with_mask(
        0.01,
        0.9,
        0.999,
        1e-8,
        0.1,
        optim::mask_by_path::<Tree>(|path| path != "[1]"),
    );
    check(
        "masked_adamw",
        &trajectory(&opt, &grads("grads"), |_, _| {}),
    );
}

/// Adam on the matrix, SGD on the vector, labelled by rank.
#[test]
fn multi_transform_matches_optax() {
    let opt = optim::multi_transform((optim::adam(0.01), optim::sgd(0.1)), |p: &Tree| {
        tree_leaves(p)
            .iter()
            .map(|leaf| usize::from(leaf.shape().len() < 2))
            .collect()
    });
    check(
        "multi_transform",
        &trajectory(&opt, &grads("grads"), |_, _| {}),
    );
}

/// Zero updates for three mini-steps, then Adam on the mean gradient;
/// `has_updated` as Optax's after every step.
#[test]
fn multi_steps_matches_optax() {
    let opt = optim::multi_steps(optim::adam(0.01), 4);
    let want = data()["multi_steps_has_updated"].as_array().unwrap();
    let got = trajectory(&opt, &grads("grads"), |step, state| {
        let updated = opt.has_updated(state).item::<bool>().unwrap();
        assert_eq!(Some(updated), want[step - 1].as_bool(), "step {step}");
    });
    check("multi_steps", &got);
}

/// NaN and inf gradients at fixed steps (two in a row once, as many as the
/// wrapper skips) are skipped, inside `jit`, with Optax's counters.
#[test]
fn apply_if_finite_matches_optax() {
    let opt = optim::apply_if_finite(optim::adam(0.01), 2);
    let want = data()["apply_if_finite_state"].as_array().unwrap();
    let got = trajectory(&opt, &grads("finite_grads"), |step, state| {
        let counters = (
            state.notfinite_count.item::<i32>().unwrap(),
            state.last_finite.item::<bool>().unwrap(),
            state.total_notfinite.item::<i32>().unwrap(),
        );
        let want = want[step - 1].as_array().unwrap();
        let want = (
            want[0].as_i64().unwrap() as i32,
            want[1].as_bool().unwrap(),
            want[2].as_i64().unwrap() as i32,
        );
        assert_eq!(counters, want, "step {step}");
    });
    check("apply_if_finite", &got);
}

/// After `max_consecutive_errors` skipped steps the next non-finite one is
/// applied, as Optax does.
#[test]
fn apply_if_finite_gives_up_after_max_consecutive_errors() {
    let opt = optim::apply_if_finite(optim::sgd(1.0), 1);
    let params = Array::from_slice(&[0.0f32, 0.0], &[2]).unwrap();
    let nan = Array::from_slice(&[1.0f32, f32::NAN], &[2]).unwrap();
    let update = jit(
        |(g, s, p): (
            Array,
            optim::StateOf<optim::ApplyIfFinite<optim::Sgd>, Array>,
            Array,
        )| { opt.update(g, s, &p) },
    );
    let (u, state) = update
        .call((nan.clone(), opt.init(&params), params.clone()))
        .unwrap();
    assert_eq!(u.to_vec::<f32>().unwrap(), vec![0.0, 0.0], "skipped");
    let (u, state) = update.call((nan, state, params)).unwrap();
    let u = u.to_vec::<f32>().unwrap();
    assert!(u[0] == -1.0 && u[1].is_nan(), "applied: {u:?}");
    assert_eq!(state.notfinite_count.item::<i32>().unwrap(), 2);
    assert_eq!(state.total_notfinite.item::<i32>().unwrap(), 2);
}

/// `inject_hyperparams(adam)` with only the learning rate injected
/// (`static_args` the others): the rate set in the state after step 10
/// takes effect from step 11, and the jitted update compiles once (checked
/// in [`trajectory`]). Optax's default `inject_hyperparams(adam)` also keeps
/// `b1`, `b2`, `eps` and `eps_root` as `float32` arrays in its state, so its
/// `1 - b1` rounds in `float32`: oxla's trajectory is up to about 360 ε from
/// that one (`OXLA_TEST_REPORT_DISTANCE=1`), within [`reference::CHAIN`],
/// and compared too.
#[test]
fn inject_learning_rate_matches_optax_without_recompiling() {
    let opt = optim::inject_learning_rate(optim::scale_by_adam(0.9, 0.999, 1e-8), 0.01);
    let got = trajectory(&opt, &grads("grads"), |step, state| {
        if step == 10 {
            state.set_learning_rate(0.001).unwrap();
        }
    });
    check("inject_adam", &got);
    check("inject_adam_all_hyperparams", &got);
}

/// `chain(clip(0.2), sgd(0.1, momentum=0.9))`.
#[test]
fn clip_matches_optax() {
    let opt = (optim::clip(0.2), optim::momentum(0.1, 0.9, false));
    check("clip", &trajectory(&opt, &grads("grads"), |_, _| {}));
}

#[test]
fn masks_labels_and_states_that_do_not_fit_are_clear_errors() {
    let ones = |shape: &[i64]| jnp::ones(shape, DType::F32);
    let params: Tree = (ones(&[8, 6]), ones(&[6]));
    // A mask of three entries for two leaves.
    let opt = optim::masked(optim::add_decayed_weights(0.1), |_: &Tree| {
        vec![true, false, true]
    });
    let e = opt
        .update(params.clone(), opt.init(&params), &params)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("masked") && e.contains("3 entries") && e.contains("2 leaves"),
        "{e}"
    );
    // A label with no transformation.
    let opt = optim::multi_transform((optim::sgd(0.1), optim::sgd(0.2)), |_: &Tree| vec![0, 2]);
    let e = opt
        .update(params.clone(), opt.init(&params), &params)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("multi_transform") && e.contains("label 2") && e.contains("2 transformations"),
        "{e}"
    );
    // A MultiSteps state made for other parameters.
    let opt = optim::multi_steps(optim::adam(0.01), 4);
    let two = vec![ones(&[8, 6]), ones(&[6])];
    let three = vec![ones(&[8, 6]), ones(&[6]), ones(&[2])];
    let e = opt
        .update(two.clone(), opt.init(&three), &two)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("MultiSteps") && e.contains("2 leaves") && e.contains("3 leaves"),
        "{e}"
    );
    let e = optim::multi_steps(optim::sgd(0.1), 0)
        .update(
            params.clone(),
            optim::multi_steps(optim::sgd(0.1), 0).init(&params),
            &params,
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("every_k"), "{e}");
}
