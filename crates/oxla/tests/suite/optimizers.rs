//! oxla_optim's optimizers against Optax 0.2.6 (reference/optimizers.py):
//! RMSProp (plain, centered with Nesterov momentum, bias-corrected),
//! AdaGrad, AdaDelta, AdaMax, NAdam, RAdam, Lion, LAMB, LARS, AdaBelief,
//! NovoGrad, SM3 and Adafactor (unfactored, factored, with momentum and
//! weight decay, without a learning rate), each over the same 50 steps of
//! gradients on a matrix, a vector and a rank-3 tensor, the update jitted
//! as the script jits Optax's; and the errors of a state made for other
//! parameters.

use std::collections::BTreeSet;

use oxla::{Array, DType, jit, numpy as jnp};
use oxla_optim::{self as optim, GradientTransformation, Schedule};
use serde_json::Value;

use crate::reference;

fn data() -> &'static Value {
    reference::script("optimizers.py")
}

/// The parameters: an 8x6 matrix, a 6-vector and a 4x3x5 tensor.
type Tree = (Array, Array, Array);

fn tree(v: &Value) -> Tree {
    let a = reference::arrays(v);
    assert_eq!(a.len(), 3);
    (a[0].clone(), a[1].clone(), a[2].clone())
}

/// Each step's parameters against Optax's within [`reference::CHAIN`]
/// (840 ε relative plus 84 ε of the leaf's largest element). Most of these
/// optimizers match Optax bit for bit; where a step rounds a `rsqrt`, a
/// `pow` or a norm's sum differently from jaxlib's XLA build, the few ulps
/// feed every later step. The largest distance measured over the 50 steps
/// (`OXLA_TEST_REPORT_DISTANCE=1`) is about 115 ε, for Adafactor without a
/// learning rate (whose ±1 steps random-walk the parameters), and under 20 ε
/// for all others.
fn check(name: &str, got: &[Tree]) {
    let want = data()["optimizers"][name]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: not in optimizers.py"));
    let steps = data()["steps"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{name}: recorded steps");
    for ((params, want), step) in got.iter().zip(want).zip(steps) {
        let leaves = [&params.0, &params.1, &params.2];
        for (leaf, (got, want)) in ["w", "b", "t"]
            .iter()
            .zip(leaves.iter().zip(want.as_array().unwrap()))
        {
            reference::assert_close(got, want, &format!("{name} step {step} {leaf}"));
        }
    }
}

/// The parameters after each recorded step of the script's 50 updates by
/// `opt` (its update jitted, the updates applied outside, as the script
/// does).
fn trajectory<T: GradientTransformation<Tree>>(opt: &T) -> Vec<Tree> {
    let recorded: BTreeSet<u64> = data()["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    let update =
        jit(|(grads, state, params): (Tree, T::State, Tree)| opt.update(grads, state, &params));
    let mut params = tree(&data()["params0"]);
    let mut state = opt.init(&params);
    let mut out = Vec::new();
    for (step, grads) in (1..).zip(data()["grads"].as_array().unwrap()) {
        let (updates, next) = update
            .call((tree(grads), state, params.clone()))
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
        state = next;
        params = optim::apply_updates(&params, &updates).unwrap();
        if recorded.contains(&step) {
            out.push(params.clone());
        }
    }
    assert_eq!(update.cache_size(), 1, "one compilation for all 50 steps");
    out
}

/// Runs `$opt` and compares it with the script's `$name`, recording the
/// name as tested.
macro_rules! case {
    ($tested:ident, $name:literal, $opt:expr) => {{
        check($name, &trajectory(&$opt));
        $tested.insert($name);
    }};
}

#[test]
fn optimizers_match_optax_over_50_steps() {
    let mut tested = BTreeSet::new();
    case!(tested, "rmsprop", optim::rmsprop(0.01));
    case!(
        tested,
        "rmsprop_centered_nesterov",
        optim::rmsprop_with(
            0.01,
            optim::RmspropOptions {
                decay: 0.95,
                eps: 1e-6,
                initial_scale: 0.1,
                centered: true,
                momentum: Some(0.9),
                nesterov: true,
                ..Default::default()
            },
        )
    );
    case!(
        tested,
        "rmsprop_bias_corrected",
        optim::rmsprop_with(
            0.01,
            optim::RmspropOptions {
                eps_in_sqrt: false,
                bias_correction: true,
                momentum: Some(0.5),
                ..Default::default()
            },
        )
    );
    case!(tested, "adagrad", optim::adagrad(0.1));
    case!(
        tested,
        "adadelta",
        optim::adadelta_with(Some(Schedule::Constant(0.5)), 0.9, 1e-6, 0.01)
    );
    case!(
        tested,
        "adadelta_no_learning_rate",
        optim::adadelta_with(None, 0.9, 1e-6, 0.0)
    );
    case!(tested, "adamax", optim::adamax(0.01));
    case!(tested, "nadam", optim::nadam(0.01));
    case!(tested, "radam", optim::radam(0.01));
    case!(
        tested,
        "radam_nesterov",
        optim::radam_with(
            0.01,
            optim::RadamOptions {
                threshold: 4.0,
                nesterov: true,
                ..Default::default()
            },
        )
    );
    case!(tested, "lion", optim::lion(0.001));
    case!(
        tested,
        "lamb",
        optim::lamb_with(
            0.01,
            optim::LambOptions {
                weight_decay: 0.01,
                ..Default::default()
            },
        )
    );
    case!(
        tested,
        "lars",
        optim::lars_with(
            0.1,
            optim::LarsOptions {
                weight_decay: 1e-3,
                ..Default::default()
            },
        )
    );
    case!(
        tested,
        "lars_nesterov",
        optim::lars_with(
            0.5,
            optim::LarsOptions {
                trust_coefficient: 0.01,
                eps: 1e-6,
                nesterov: true,
                ..Default::default()
            },
        )
    );
    case!(tested, "adabelief", optim::adabelief(0.01));
    case!(
        tested,
        "adabelief_nesterov",
        optim::adabelief_with(
            0.01,
            optim::AdabeliefOptions {
                nesterov: true,
                ..Default::default()
            },
        )
    );
    case!(
        tested,
        "novograd",
        optim::novograd_with(
            0.01,
            optim::NovogradOptions {
                weight_decay: 1e-3,
                ..Default::default()
            },
        )
    );
    case!(tested, "sm3", optim::sm3(0.1));
    case!(tested, "adafactor", optim::adafactor(0.01));
    case!(
        tested,
        "adafactor_factored",
        optim::adafactor_with(optim::AdafactorOptions {
            learning_rate: Some(Schedule::Constant(0.01)),
            min_dim_size_to_factor: 2,
            ..Default::default()
        })
    );
    case!(
        tested,
        "adafactor_momentum",
        optim::adafactor_with(optim::AdafactorOptions {
            learning_rate: Some(Schedule::Constant(0.01)),
            min_dim_size_to_factor: 5,
            momentum: Some(0.9),
            weight_decay_rate: Some(1e-3),
            ..Default::default()
        })
    );
    case!(
        tested,
        "adafactor_no_learning_rate",
        optim::adafactor_with(optim::AdafactorOptions {
            min_dim_size_to_factor: 3,
            clipping_threshold: None,
            multiply_by_parameter_scale: false,
            ..Default::default()
        })
    );
    let in_script: BTreeSet<&str> = data()["optimizers"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tested, in_script,
        "every optimizer of optimizers.py, and only those"
    );
}

/// Which leaves Adafactor factors, and the shapes of its moments, follow
/// Optax's rule: the two largest axes, when the second largest is at least
/// `min_dim_size_to_factor` long.
#[test]
fn adafactor_factors_the_two_largest_axes() {
    let params = tree(&data()["params0"]);
    let opt = optim::scale_by_factored_rms(true, 0.8, 0, 4, 1e-30);
    let state = opt.init(&params);
    let shapes = |t: &Tree| {
        [
            t.0.shape().to_vec(),
            t.1.shape().to_vec(),
            t.2.shape().to_vec(),
        ]
    };
    // 8x6: rows averaged over the 8, columns over the 6; the vector is
    // never factored; 4x3x5 is factored over 5 and 4 (its second largest, 4,
    // is long enough).
    assert_eq!(shapes(&state.v_row), [vec![6], vec![1], vec![4, 3]]);
    assert_eq!(shapes(&state.v_col), [vec![8], vec![1], vec![3, 5]]);
    assert_eq!(shapes(&state.v), [vec![1], vec![6], vec![1]]);
}

#[test]
fn a_state_for_other_parameters_is_a_clear_error() {
    let ones = |shape: &[i64]| jnp::ones(shape, DType::F32);
    let params = vec![ones(&[8, 6]), ones(&[6]), ones(&[4, 3, 5])];
    let fewer = vec![ones(&[8, 6]), ones(&[6])];
    let sm3 = optim::sm3(0.1);
    let e = sm3
        .update(fewer.clone(), sm3.init(&params), &fewer)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scale_by_sm3") && e.contains("3 leaves") && e.contains("have 2"),
        "{e}"
    );
    let e = sm3
        .update(
            vec![ones(&[])],
            sm3.init(&vec![ones(&[])]),
            &vec![ones(&[])],
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("scale_by_sm3") && e.contains("scalar"), "{e}");
    let adafactor = optim::adafactor(0.01);
    let e = adafactor
        .update(fewer.clone(), adafactor.init(&params), &fewer)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scale_by_factored_rms") && e.contains("3 leaves") && e.contains("2 leaves"),
        "{e}"
    );
    // A bias-corrected RMSProp given a state without a step count.
    let plain = optim::rmsprop(0.01);
    let corrected = optim::rmsprop_with(
        0.01,
        optim::RmspropOptions {
            bias_correction: true,
            ..Default::default()
        },
    );
    let e = corrected
        .update(params.clone(), plain.init(&params), &params)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scale_by_rms") && e.contains("step count"),
        "{e}"
    );
}
