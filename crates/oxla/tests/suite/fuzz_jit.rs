//! Random inputs for jitted functions, as a user could pass them by
//! mistake: pytrees of other lengths and keys, every dtype, shapes of rank
//! 0 to 4 with empty dimensions, Options and nested lists; through plain
//! jit, grad and vmap. Each call gives `Ok` or a clear `Err` within 10 s,
//! never a panic or an abort, and the functions still give the right
//! values afterwards. CI runs a few hundred inputs; `OXLA_FUZZ_SECONDS=600`
//! runs ten minutes, and `OXLA_FUZZ_VERBOSE=1` prints each error.

use std::collections::BTreeMap;
use std::time::Duration;

use oxla::{Array, DType, Jit, grad, jit, numpy as jnp, vmap};
use oxla_testing::{FuzzBudget, fuzz, within};
use proptest::prelude::*;

/// One random array: dtype and shape (its bytes are a fixed pattern).
#[derive(Debug, Clone)]
struct ArraySpec {
    dtype: DType,
    shape: Vec<i64>,
}

impl ArraySpec {
    fn build(&self) -> Array {
        let n: i64 = self.shape.iter().product();
        let bytes: Vec<u8> = (0..n as usize * self.dtype.byte_size())
            .map(|i| (i % 7) as u8)
            .collect();
        Array::from_bytes(self.dtype, &self.shape, &bytes)
            .unwrap_or_else(|e| panic!("building {self:?}: {e}"))
    }
}

fn array_spec() -> impl Strategy<Value = ArraySpec> {
    (
        proptest::sample::select(DType::ALL.to_vec()),
        proptest::collection::vec(prop_oneof![3 => 1i64..4, 1 => Just(0i64)], 0..5),
    )
        .prop_map(|(dtype, shape)| ArraySpec { dtype, shape })
}

/// One input for one of the fuzzed functions.
#[derive(Debug, Clone)]
enum Input {
    /// Two arrays for the matmul-and-elementwise function.
    Pair(ArraySpec, ArraySpec),
    /// A list of any length for the list-folding function.
    List(Vec<ArraySpec>),
    /// A dict with keys that may or may not be the expected ones.
    Dict(Vec<(String, ArraySpec)>),
    /// An optional array and a nested list.
    Nested(Option<ArraySpec>, Vec<Vec<ArraySpec>>),
    /// One array, differentiated.
    Grad(ArraySpec),
    /// One array, mapped over its leading axis.
    Vmap(ArraySpec),
}

fn input() -> impl Strategy<Value = Input> {
    let key = proptest::sample::select(vec!["w", "b", "x", "", "w "]).prop_map(str::to_string);
    prop_oneof![
        (array_spec(), array_spec()).prop_map(|(a, b)| Input::Pair(a, b)),
        proptest::collection::vec(array_spec(), 0..4).prop_map(Input::List),
        proptest::collection::vec((key, array_spec()), 0..3).prop_map(Input::Dict),
        (
            proptest::option::of(array_spec()),
            proptest::collection::vec(proptest::collection::vec(array_spec(), 0..2), 0..3)
        )
            .prop_map(|(o, n)| Input::Nested(o, n)),
        array_spec().prop_map(Input::Grad),
        array_spec().prop_map(Input::Vmap),
    ]
}

/// A jitted function of a plain `fn` (so the struct below can name it).
type Fuzzed<In, Out> = Jit<In, Out, fn(In) -> Out>;

/// The fuzzed functions, each kept across inputs (so its cache sees every
/// signature).
struct Functions {
    pair: Fuzzed<(Array, Array), (Array, Array, Array)>,
    list: Fuzzed<Vec<Array>, Array>,
    dict: Fuzzed<BTreeMap<String, Array>, Array>,
    nested: Fuzzed<(Option<Array>, Vec<Vec<Array>>), Array>,
    grad: Fuzzed<Array, Array>,
    vmap: Fuzzed<Array, Array>,
}

fn pair((a, b): (Array, Array)) -> (Array, Array, Array) {
    (
        jnp::matmul(&a, &b),
        &a * &b + 1.0,
        jnp::sum(&jnp::tanh(&a), None, false),
    )
}

fn list(xs: Vec<Array>) -> Array {
    xs.iter()
        .fold(Array::weak_scalar(0.0f32), |acc, x| acc + jnp::sin(x))
}

fn dict(m: BTreeMap<String, Array>) -> Array {
    let w = m
        .get("w")
        .cloned()
        .unwrap_or_else(|| Array::weak_scalar(1.0f32));
    let b = m
        .get("b")
        .cloned()
        .unwrap_or_else(|| Array::weak_scalar(0.0f32));
    jnp::sum(&(&w * 2.0 + &b), None, false)
}

fn nested((o, n): (Option<Array>, Vec<Vec<Array>>)) -> Array {
    let start = o.unwrap_or_else(|| Array::weak_scalar(0.0f32));
    n.iter()
        .flatten()
        .fold(start, |acc, x| jnp::maximum(&acc, x))
}

fn sum_of_squares_grad(a: Array) -> Array {
    grad(|x: Array| jnp::sum(&(&x * &x), None, false))
        .call(a)
        .unwrap_or_else(Array::error)
}

fn vmapped_sum_exp(a: Array) -> Array {
    vmap(|x: Array| jnp::sum(&jnp::exp(&x), None, false))
        .call(a)
        .unwrap_or_else(Array::error)
}

fn functions() -> Functions {
    Functions {
        pair: jit(pair as fn(_) -> _),
        list: jit(list as fn(_) -> _),
        dict: jit(dict as fn(_) -> _),
        nested: jit(nested as fn(_) -> _),
        grad: jit(sum_of_squares_grad as fn(_) -> _),
        vmap: jit(vmapped_sum_exp as fn(_) -> _),
    }
}

/// Calls the function `input` is for; `Ok(())` or the error's text.
fn call(f: &Functions, input: &Input) -> Result<(), String> {
    let text = |e: oxla::Error| e.to_string();
    match input {
        Input::Pair(a, b) => f.pair.call((a.build(), b.build())).map(drop).map_err(text),
        Input::List(xs) => f
            .list
            .call(xs.iter().map(ArraySpec::build).collect())
            .map(drop)
            .map_err(text),
        Input::Dict(items) => f
            .dict
            .call(items.iter().map(|(k, v)| (k.clone(), v.build())).collect())
            .map(drop)
            .map_err(text),
        Input::Nested(o, n) => f
            .nested
            .call((
                o.as_ref().map(ArraySpec::build),
                n.iter()
                    .map(|l| l.iter().map(ArraySpec::build).collect())
                    .collect(),
            ))
            .map(drop)
            .map_err(text),
        Input::Grad(a) => f.grad.call(a.build()).map(drop).map_err(text),
        Input::Vmap(a) => f.vmap.call(a.build()).map(drop).map_err(text),
    }
}

#[test]
fn random_jit_inputs_give_results_or_clear_errors() {
    let f = std::sync::Arc::new(functions());
    let (mut ok, mut errors) = (0usize, 0usize);
    let count = fuzz(
        "random Jit inputs",
        input(),
        FuzzBudget::from_env(300),
        |input| {
            let shown = format!("{input:?}");
            let f = f.clone();
            let result = within(
                Duration::from_secs(10),
                &format!("calling with {shown}"),
                move || call(&f, &input),
            );
            match result {
                Ok(()) => ok += 1,
                Err(message) => {
                    if std::env::var_os("OXLA_FUZZ_VERBOSE").is_some() {
                        eprintln!("{}", message.lines().next().unwrap_or(""));
                    }
                    assert!(
                        message.len() > 10 && !message.contains("panicked"),
                        "{shown}: unclear error {message:?}"
                    );
                    errors += 1;
                }
            }
        },
    );
    eprintln!("random Jit inputs: {ok} ran, {errors} were errors");
    assert!(
        count >= 1 && ok > 0 && errors > 0,
        "{ok} ran, {errors} errors"
    );
    // The functions still work after every error.
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let (_, prod, _) = f.pair.call((x.clone(), x.clone())).unwrap();
    assert_eq!(prod.to_vec::<f32>().unwrap(), vec![2.0, 5.0]);
    let g = f.grad.call(x.clone()).unwrap();
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    let m = BTreeMap::from([("w".to_string(), x.clone())]);
    assert_eq!(f.dict.call(m).unwrap().item::<f32>().unwrap(), 6.0);
}
