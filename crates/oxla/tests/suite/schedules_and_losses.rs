//! oxla_optim's schedules and oxla_nn's losses against Optax
//! (reference/schedules_and_losses.py): every schedule at steps 0..48,
//! eagerly on the step vector against Optax's vmapped values, and as one
//! jitted function of a traced scalar count against Optax's jitted ones
//! (XLA's simplifier changes some values in a compiled program: JAX and
//! oxla both give NaN for `polynomial_schedule`'s `0 ** 0.5` under jit);
//! every loss's value and the gradient of its sum with
//! respect to its first input (the predictions or logits), the CTC loss
//! through its scan over time included; and the errors of bad arguments.

use oxla::{Array, DType, jit, numpy as jnp};
use oxla_optim::{Schedule, losses};
use serde_json::Value;

use crate::reference::{self, assert_close};

fn data() -> &'static Value {
    reference::script("schedules_and_losses.py")
}

/// The schedule the script names `name`, built as Optax builds it there.
fn schedule(name: &str) -> Schedule {
    let warmup_cosine = |init, peak, warmup, decay, end, exponent| Schedule::WarmupCosineDecay {
        init_value: init,
        peak_value: peak,
        warmup_steps: warmup,
        decay_steps: decay,
        end_value: end,
        exponent,
    };
    let exponential = |init, steps, rate, begin| Schedule::Exponential {
        init_value: init,
        transition_steps: steps,
        decay_rate: rate,
        transition_begin: begin,
        staircase: false,
        end_value: None,
    };
    let built = match name {
        "piecewise_constant" => {
            Schedule::piecewise_constant(0.5, &[(25, 0.1), (10, 0.5), (40, 2.0)])
        }
        "piecewise_constant_empty" => Schedule::piecewise_constant(0.3, &[]),
        "polynomial_2" => Ok(Schedule::polynomial(1.0, 0.01, 2.0, 30, 5)),
        "polynomial_half" => Ok(Schedule::polynomial(0.2, 1.0, 0.5, 20, 0)),
        "polynomial_no_steps" => Ok(Schedule::polynomial(0.7, 0.1, 3.0, 0, 0)),
        "polynomial_negative_begin" => Ok(Schedule::polynomial(1.0, 0.0, 1.5, 16, -4)),
        "cosine_decay" => Schedule::cosine_decay(2.0, 30, 0.1, 1.5),
        "join" => Schedule::join(
            vec![
                Schedule::linear(0.0, 1.0, 10),
                Schedule::Constant(1.0),
                Schedule::cosine_decay(1.0, 20, 0.05, 1.0).unwrap(),
            ],
            vec![10, 20],
        ),
        "warmup_exponential_decay" => Ok(Schedule::warmup_exponential_decay(
            0.0,
            1.0,
            8,
            5,
            0.6,
            3,
            false,
            Some(0.05),
        )),
        "warmup_exponential_staircase" => Ok(Schedule::warmup_exponential_decay(
            0.1, 0.8, 4, 6, 0.5, 0, true, None,
        )),
        "exponential_no_steps" => Ok(exponential(0.9, 0, 0.5, 0)),
        "exponential_negative_begin" => Ok(exponential(1.0, 4, 0.8, -3)),
        "sgdr" => Schedule::sgdr(&[
            warmup_cosine(0.0, 1.0, 4, 16, 0.1, 1.0),
            warmup_cosine(0.1, 0.5, 2, 12, 0.0, 1.0),
            warmup_cosine(0.0, 0.25, 3, 10, 0.01, 2.0),
        ]),
        "cosine_onecycle" => Schedule::cosine_onecycle(40, 1.0, 0.25, 20.0, 100.0),
        "linear_onecycle" => Schedule::linear_onecycle(40, 0.8, 0.3, 0.85, 25.0, 1e4),
        "piecewise_interpolate_linear" => {
            Schedule::piecewise_interpolate("linear", 1.0, &[(30, 0.01), (6, 0.5), (18, 0.2)])
        }
        "piecewise_interpolate_cosine" => {
            Schedule::piecewise_interpolate("cosine", 0.4, &[(5, 2.5), (20, 0.1), (35, 0.5)])
        }
        // 0.1 exp(-c / 10) + 0.01 sin(c), as the script's `custom`.
        "custom" => Ok(Schedule::from_fn(|count| {
            let c = count.astype(DType::F32);
            jnp::exp(&(-&c / 10.0)) * 0.1 + jnp::sin(&c) * 0.01
        })),
        other => panic!("unknown schedule {other}"),
    };
    built.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Each schedule of the script, on the whole step vector and, jitted, one
/// traced scalar count at a time (one compilation for all steps).
#[test]
fn schedules_match_optax_eagerly_and_under_jit() {
    let steps = reference::array(&data()["steps"]);
    let n = steps.size();
    let all = data()["schedules"].as_object().unwrap();
    assert_eq!(all.len(), 18);
    for (name, want) in all {
        let s = schedule(name);
        let eager = jnp::broadcast_to(&s.value(&steps), &[n]);
        assert_close(&eager, want, &format!("{name} eagerly"));

        let jitted = jit(|count: Array| s.value(&count));
        let mut values = Vec::new();
        for step in 0..n as i32 {
            let v = jitted.call(Array::scalar(step).unwrap()).unwrap();
            values.push(v);
        }
        let refs: Vec<&Array> = values.iter().collect();
        let want_jit = &data()["schedules_jit"][name.as_str()];
        assert_close(
            &jnp::stack(&refs, 0),
            want_jit,
            &format!("{name} under jit"),
        );
        assert_eq!(
            jitted.cache_size(),
            1,
            "{name}: one compilation for all counts"
        );
    }
}

#[test]
fn schedules_keep_clone_debug_and_equality() {
    let custom = schedule("custom");
    assert_eq!(format!("{custom:?}"), "Custom(<fn>)");
    assert_eq!(custom, custom.clone(), "a clone shares the function");
    assert_ne!(
        custom,
        schedule("custom"),
        "another closure is another schedule"
    );
    let join = schedule("join");
    assert_eq!(join, join.clone());
    assert!(format!("{join:?}").starts_with("Join { schedules: [Linear {"));
    assert!(!join.is_constant());
}

fn schedule_error(r: oxla::Result<Schedule>) -> String {
    r.map(|s| format!("{s:?}")).unwrap_err().to_string()
}

#[test]
fn bad_schedule_arguments_are_clear_errors() {
    let unordered = Schedule::join(
        vec![
            Schedule::Constant(1.0),
            Schedule::Constant(0.5),
            Schedule::Constant(0.1),
        ],
        vec![20, 10],
    );
    let e = schedule_error(unordered);
    assert!(
        e.contains("join_schedules") && e.contains("strictly increasing") && e.contains("[20, 10]"),
        "{e}"
    );
    let e = schedule_error(Schedule::join(vec![Schedule::Constant(1.0)], vec![5]));
    assert!(e.contains("1 schedules and 1 boundaries"), "{e}");
    let e = schedule_error(Schedule::piecewise_constant(1.0, &[(10, 0.5), (20, -0.1)]));
    assert!(
        e.contains("piecewise_constant_schedule")
            && e.contains("non-negative")
            && e.contains("-0.1"),
        "{e}"
    );
    let e = schedule_error(Schedule::piecewise_interpolate("cubic", 1.0, &[]));
    assert!(
        e.contains("'cosine' or 'linear'") && e.contains("\"cubic\""),
        "{e}"
    );
    let e = schedule_error(Schedule::cosine_decay(1.0, 0, 0.0, 1.0));
    assert!(e.contains("positive decay_steps"), "{e}");
    let e = schedule_error(Schedule::sgdr(&[Schedule::Constant(1.0)]));
    assert!(
        e.contains("sgdr_schedule") && e.contains("WarmupCosineDecay"),
        "{e}"
    );
    let e = schedule_error(Schedule::cosine_onecycle(0, 1.0, 0.3, 25.0, 1e4));
    assert!(e.contains("cosine_onecycle_schedule"), "{e}");
    // A Join built by hand without schedules: an error array, not a panic.
    let empty = Schedule::Join {
        schedules: vec![],
        boundaries: vec![],
    };
    let e = empty
        .value(&Array::scalar(0i32).unwrap())
        .check()
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().contains("at least one schedule"), "{e}");
}

type Loss = fn(&Array, &[Array]) -> Array;

/// Each loss of the script with the rest of its inputs after the first.
fn loss(name: &str) -> Loss {
    match name {
        "sigmoid_binary_cross_entropy" | "sigmoid_binary_cross_entropy_soft" => {
            |x, r| losses::sigmoid_binary_cross_entropy(x, &r[0])
        }
        "huber_loss" => |x, r| losses::huber_loss(x, &r[0], 1.0),
        "huber_loss_delta" => |x, r| losses::huber_loss(x, &r[0], 0.7),
        "cosine_similarity" => |x, r| losses::cosine_similarity(x, &r[0], 0.0),
        "cosine_similarity_epsilon" => |x, r| losses::cosine_similarity(x, &r[0], 0.5),
        "cosine_distance" => |x, r| losses::cosine_distance(x, &r[0], 0.0),
        "l2_loss" => |x, r| losses::l2_loss(x, &r[0]),
        "squared_error" => |x, r| losses::squared_error(x, &r[0]),
        "hinge_loss" => |x, r| losses::hinge_loss(x, &r[0]),
        "kl_divergence" => |x, r| losses::kl_divergence(x, &r[0]),
        "kl_divergence_with_log_targets" => |x, r| losses::kl_divergence_with_log_targets(x, &r[0]),
        "softmax_cross_entropy" | "softmax_cross_entropy_smoothed" => {
            |x, r| losses::softmax_cross_entropy(x, &r[0])
        }
        "smooth_labels" => |x, _| losses::smooth_labels(x, 0.1),
        "log_cosh" => |x, r| losses::log_cosh(x, &r[0]),
        "poly_loss_cross_entropy" => |x, r| losses::poly_loss_cross_entropy(x, &r[0], 2.0),
        "poly_loss_cross_entropy_eps" => |x, r| losses::poly_loss_cross_entropy(x, &r[0], -0.5),
        "ctc_loss" => |x, r| losses::ctc_loss(x, &r[0], &r[1], &r[2], 0),
        "ctc_loss_blank_2" => |x, r| losses::ctc_loss(x, &r[0], &r[1], &r[2], 2),
        other => panic!("unknown loss {other}"),
    }
}

/// Values and gradients of the summed loss, eagerly (the gradient also
/// jitted for the CTC loss, whose scan is the one loop here).
#[test]
fn losses_and_their_gradients_match_optax() {
    let all = data()["losses"].as_object().unwrap();
    assert_eq!(all.len(), 20);
    for (name, c) in all {
        let f = loss(name);
        let inputs = reference::arrays(&c["inputs"]);
        let (x, rest) = (inputs[0].clone(), inputs[1..].to_vec());
        assert_close(&f(&x, &rest), &c["value"], &format!("{name} value"));
        if name == "smooth_labels" {
            continue;
        }
        let summed = |x: Array| jnp::sum(&f(&x, &rest), None, false);
        let grad = oxla::grad(summed).call(x.clone()).unwrap();
        assert_close(&grad, &c["grad"], &format!("{name} gradient"));
        if name.starts_with("ctc") {
            let jitted = jit(|x: Array| oxla::grad(summed).call(x));
            let grad = jitted.call(x.clone()).unwrap();
            assert_close(&grad, &c["grad"], &format!("{name} gradient under jit"));
        }
    }
}

#[test]
fn ctc_forward_probabilities_match_optax() {
    let c = &data()["losses"]["ctc_loss"];
    let i = reference::arrays(&c["inputs"]);
    let (loss, phi, emit) =
        losses::ctc_loss_with_forward_probs(&i[0], &i[1], &i[2], &i[3], 0, -1e5);
    assert_close(&loss, &c["value"], "ctc loss");
    assert_close(&phi, &c["logalpha_phi"], "ctc logalpha_phi");
    assert_close(&emit, &c["logalpha_emit"], "ctc logalpha_emit");
}

fn error_of(a: Array) -> String {
    a.check().map(|_| ()).unwrap_err().to_string()
}

#[test]
fn bad_loss_inputs_are_clear_errors() {
    let f = |shape: &[i64]| jnp::ones(shape, DType::F32);
    let e = error_of(losses::squared_error(&f(&[4, 6]), &f(&[6])));
    assert!(
        e.contains("squared_error of predictions f32[4,6], targets f32[6]")
            && e.contains("same shape")
            && e.contains("schedules_and_losses.rs"),
        "{e}"
    );
    let e = error_of(losses::l2_loss(&f(&[3]), &f(&[3, 1])));
    assert!(
        e.contains("l2_loss of predictions f32[3], targets f32[3,1]"),
        "{e}"
    );
    let ints = jnp::ones(&[3], DType::I32);
    let e = error_of(losses::log_cosh(&ints, &f(&[3])));
    assert!(
        e.contains("log_cosh") && e.contains("predictions must be a floating-point"),
        "{e}"
    );
    // CTC: labels' paddings of another shape, a blank outside the classes.
    let (logits, logit_pad) = (f(&[2, 5, 4]), f(&[2, 5]));
    let labels = jnp::zeros(&[2, 3], DType::I32);
    let e = error_of(losses::ctc_loss(
        &logits,
        &logit_pad,
        &labels,
        &f(&[2, 2]),
        0,
    ));
    assert!(
        e.contains(
            "ctc_loss of logits f32[2,5,4], logit_paddings f32[2,5], labels i32[2,3], \
             label_paddings f32[2,2]"
        ),
        "{e}"
    );
    let e = error_of(losses::ctc_loss(
        &logits,
        &logit_pad,
        &labels,
        &f(&[2, 3]),
        4,
    ));
    assert!(e.contains("blank_id 4 is not one of the 4 classes"), "{e}");
    let e = error_of(losses::ctc_loss(
        &f(&[2, 5]),
        &logit_pad,
        &labels,
        &f(&[2, 3]),
        0,
    ));
    assert!(e.contains("[batch, time, classes]"), "{e}");
}
