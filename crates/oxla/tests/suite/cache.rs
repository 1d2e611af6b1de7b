//! jit's memory cache: new values hit; a new shape, dtype, weak type, static
//! value or structure misses, and the explanation says why.

use oxla::{Array, DType, Static, jit, numpy as jnp};

fn f32s(values: &[f32]) -> Array {
    Array::from_slice(values, &[values.len() as i64]).unwrap()
}

#[test]
fn new_values_hit_and_new_signatures_miss_with_a_reason() {
    let f = jit(|(x, scale): (Array, Static<i32>)| -> Array { &x * (scale.0 as f64) + 1.0 });
    let out = f.call((f32s(&[1.0, 2.0, 3.0]), Static(2))).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0]);
    assert_eq!(f.cache_size(), 1);

    // New values, same signature: a hit.
    assert_eq!(
        f.explain_miss(&(f32s(&[4.0, 5.0, 6.0]), Static(2)))
            .unwrap(),
        None
    );
    f.call((f32s(&[4.0, 5.0, 6.0]), Static(2))).unwrap();
    assert_eq!(f.cache_size(), 1);

    // New shape.
    let why = f
        .explain_miss(&(f32s(&[1.0, 2.0]), Static(2)))
        .unwrap()
        .unwrap();
    assert_eq!(why, "input 0 [0] changed shape from f32[3] to f32[2]");
    f.call((f32s(&[1.0, 2.0]), Static(2))).unwrap();
    assert_eq!(f.cache_size(), 2);

    // New dtype.
    let ints = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let why = f.explain_miss(&(ints.clone(), Static(2))).unwrap().unwrap();
    assert_eq!(why, "input 0 [0] changed dtype from f32 to i32");
    let out = f.call((ints, Static(2))).unwrap();
    assert_eq!(
        out.dtype(),
        DType::F32,
        "i32 * weak int + weak float is f32"
    );

    // New static value: compiles again, and the value is used.
    let why = f
        .explain_miss(&(f32s(&[1.0, 2.0, 3.0]), Static(5)))
        .unwrap()
        .unwrap();
    assert_eq!(why, "static argument values changed from 2 to 5");
    let out = f.call((f32s(&[1.0, 2.0, 3.0]), Static(5))).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![6.0, 11.0, 16.0]);
    assert_eq!(f.cache_size(), 4);
}

#[test]
fn weak_type_and_structure_are_part_of_the_key() {
    let g = jit(|xs: Vec<Array>| {
        let mut total = jnp::zeros(&[], DType::F32);
        for x in &xs {
            total = &total + x;
        }
        total
    });
    let strong = Array::scalar(1.0f32).unwrap();
    let weak = oxla::lax::convert_element_type_weak(&strong, DType::F32, true);
    assert!(weak.weak_type());
    g.call(vec![strong.clone()]).unwrap();
    let why = g.explain_miss(&vec![weak]).unwrap().unwrap();
    assert_eq!(why, "input 0 [0] changed weak type from false to true");
    let why = g
        .explain_miss(&vec![strong.clone(), strong.clone()])
        .unwrap()
        .unwrap();
    assert_eq!(why, "the input structure changed from [*] to [*, *]");
    let out = g.call(vec![strong.clone(), strong]).unwrap();
    assert_eq!(out.item::<f32>().unwrap(), 2.0);
    assert_eq!(g.cache_size(), 2);
}

#[test]
fn captured_arrays_are_constants_passed_as_arguments() {
    let w = f32s(&[10.0, 20.0]);
    let f = jit(|x: Array| &x * &w);
    let traced = f.trace(&f32s(&[1.0, 2.0])).unwrap();
    assert_eq!(traced.consts.len(), 1);
    assert_eq!(traced.jaxpr.constvars.len(), 1);
    let text = f.lower(&f32s(&[1.0, 2.0])).unwrap();
    assert!(
        !text.contains("dense<[1.0"),
        "captured values must not be embedded:\n{text}"
    );
    assert_eq!(
        f.call(f32s(&[1.0, 2.0])).unwrap().to_vec::<f32>().unwrap(),
        vec![10.0, 40.0]
    );
}

#[test]
fn ahead_of_time_compile_fills_the_cache() {
    let f = jit(|x: Array| jnp::exp(&x));
    f.compile(&f32s(&[0.0])).unwrap();
    assert_eq!(f.cache_size(), 1);
    f.call(f32s(&[0.0])).unwrap();
    assert_eq!(f.cache_size(), 1);
}

#[test]
fn compiles_are_logged_and_misses_explained_when_asked() {
    use std::sync::{Arc, Mutex};
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = lines.clone();
    oxla::config::set_diagnostics_sink(Some(Box::new(move |l: &str| {
        sink.lock().unwrap().push(l.to_string())
    })));
    oxla::config::set_log_compiles(true);
    oxla::config::set_explain_cache_misses(true);
    let f = jit(|x: Array| jnp::tanh(&x)).named("logged_tanh");
    f.call(f32s(&[1.0, 2.0])).unwrap();
    f.call(f32s(&[1.0, 2.0, 3.0])).unwrap();
    oxla::config::set_log_compiles(false);
    oxla::config::set_explain_cache_misses(false);
    oxla::config::set_diagnostics_sink(None);
    let lines = lines.lock().unwrap();
    let ours: Vec<&String> = lines.iter().filter(|l| l.contains("logged_tanh")).collect();
    // Compiled now, or loaded from the persistent cache of an earlier run.
    let compiled = |l: &&&String| {
        l.starts_with("oxla: compiled logged_tanh for (f32[2]): trace ")
            && l.contains(" ms, lower ")
            && l.contains(" ms, compile ")
    };
    let loaded = |l: &&&String| {
        l.starts_with("oxla: disk cache hit for logged_tanh (f32[2]): trace ")
            && l.contains(" ms, saved ")
    };
    assert!(ours.iter().any(|l| compiled(&l) || loaded(&l)), "{ours:?}");
    assert!(
        ours.iter().any(|l| l.as_str()
            == "oxla: cache miss for logged_tanh: first call: nothing compiled yet"
            || l.contains("cache miss for logged_tanh: first call")),
        "{ours:?}"
    );
    assert!(
        ours.iter().any(|l| l.as_str()
            == "oxla: cache miss for logged_tanh: input 0 changed shape from f32[2] to f32[3]"),
        "{ours:?}"
    );
}

/// The suite compiles into a cache of its own under the target directory
/// (or the root CI names for the tests), never into the user's
/// `~/.cache/oxla/compile`.
#[test]
fn tests_compile_into_their_own_cache() {
    let cache = oxla::disk_cache().expect("the compile cache is on");
    let root = oxla_testing::test_cache_root(env!("CARGO_TARGET_TMPDIR"));
    assert!(
        cache.dir().starts_with(root.join("compile-cache")),
        "{}",
        cache.dir().display()
    );
    assert!(
        !cache
            .dir()
            .starts_with(oxla_pjrt::oxla_home().join("compile"))
    );
}

#[test]
fn the_default_matmul_precision_is_part_of_the_key_and_reaches_the_program() {
    use oxla::config::with_default_matmul_precision;
    use oxla::lax::Precision;
    let f = jit(|(a, b): (Array, Array)| jnp::matmul(&a, &b));
    let args = (
        jnp::ones(&[2, 3], DType::F32),
        jnp::ones(&[3, 4], DType::F32),
    );
    f.call(args.clone()).unwrap();
    let highest = Some(Precision::Highest);
    let why = with_default_matmul_precision(highest, || f.explain_miss(&args))
        .unwrap()
        .unwrap();
    assert_eq!(
        why,
        "config flag default_matmul_precision changed from none to highest"
    );
    let text = with_default_matmul_precision(highest, || f.lower(&args)).unwrap();
    assert!(text.contains("HIGHEST"), "{text}");
    assert!(!f.lower(&args).unwrap().contains("HIGHEST"));
    let out = with_default_matmul_precision(highest, || f.call(args.clone())).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![3.0; 8]);
    assert_eq!(f.cache_size(), 2);
    // A precision the call names wins over the default.
    let g = jit(|(a, b): (Array, Array)| {
        oxla::lax::dot_general_with_precision(
            &a,
            &b,
            ((&[1], &[0]), (&[], &[])),
            None,
            Some(Precision::Default),
        )
    });
    let text = with_default_matmul_precision(highest, || g.lower(&args)).unwrap();
    assert!(
        !text.contains("HIGHEST") && text.contains("DEFAULT"),
        "{text}"
    );
    // Convolutions take the default too, and a precision of their own
    // wins over it, as JAX's conv_general_dilated(precision=...).
    let conv = |precision: Option<Precision>| {
        jit(move |(x, k): (Array, Array)| {
            let options = oxla::lax::ConvOptions {
                precision,
                ..Default::default()
            };
            let layout = ("NWC", "WIO", "NWC");
            oxla::lax::conv_general_dilated(
                &x,
                &k,
                &[1],
                &oxla::lax::Padding::Valid,
                layout,
                &options,
            )
        })
    };
    let conv_args = (
        jnp::ones(&[1, 5, 2], DType::F32),
        jnp::ones(&[3, 2, 4], DType::F32),
    );
    let text = with_default_matmul_precision(highest, || conv(None).lower(&conv_args)).unwrap();
    assert!(
        text.contains("stablehlo.convolution") && text.contains("HIGHEST"),
        "{text}"
    );
    assert!(
        !conv(None)
            .lower(&conv_args)
            .unwrap()
            .contains("precision_config")
    );
    let own = Some(Precision::Default);
    let text = with_default_matmul_precision(highest, || conv(own).lower(&conv_args)).unwrap();
    assert!(
        !text.contains("HIGHEST") && text.contains("DEFAULT"),
        "{text}"
    );
    let out =
        with_default_matmul_precision(highest, || conv(None).call(conv_args.clone())).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![6.0; 12]);
}
