//! oxla_train::precision (mixed precision as DeepMind's jmp) and
//! oxla_train::summary (parameter counts by module).
//!
//! jmp is not installed where these tests run, so there is no recorded
//! reference: the expected values are computed here, in plain Rust on the
//! host, from jmp's documented algorithms (its README and the docstrings of
//! `jmp.get_policy`, `jmp.DynamicLossScale`, `jmp.all_finite` and
//! `jmp.select_tree`), and compared exactly (powers of two, integer
//! counters).

use std::collections::BTreeMap;

use oxla::random::Key;
use oxla::{
    Array, DType, Error, jit, make_jaxpr, numpy as jnp, tree_leaves, tree_map2, value_and_grad,
};
use oxla_nn::{Activation, Mlp};
use oxla_train::precision::{
    DynamicLossScale, LossScale, NoOpLossScale, Policy, StaticLossScale, all_finite, half_dtype,
    select_tree,
};
use oxla_train::summary::{self, Summary, parameter_bytes, parameter_count};

fn dtypes<T: oxla::Pytree>(tree: &T) -> Vec<DType> {
    tree_leaves(tree).iter().map(Array::dtype).collect()
}

fn invalid(text: &str) -> String {
    match Policy::parse(text) {
        Err(Error::InvalidArgument(message)) => message,
        other => panic!("{text:?}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn policies_parse_as_jmp_get_policy() {
    use DType::{BF16, F16, F32, F64};
    let cases = [
        (
            "params=float32,compute=bfloat16,output=float32",
            (F32, BF16, F32),
        ),
        ("p=f32,c=bf16,o=f32", (F32, BF16, F32)),
        ("p=full,c=f16,o=full", (F32, F16, F32)),
        // Params default to f32, compute follows params, output compute.
        ("c=f16", (F32, F16, F16)),
        ("compute=bfloat16", (F32, BF16, BF16)),
        ("p=f16,c=bf16", (F16, BF16, BF16)),
        ("p=f16", (F16, F16, F16)),
        ("o=bf16", (F32, F32, BF16)),
        ("output=float64,params=float16", (F16, F16, F64)),
        // A key given twice takes its last value.
        ("p=f32,p=bf16", (BF16, BF16, BF16)),
        // One dtype for all three.
        ("bf16", (BF16, BF16, BF16)),
        ("float16", (F16, F16, F16)),
        ("full", (F32, F32, F32)),
        ("f64", (F64, F64, F64)),
    ];
    for (text, (p, c, o)) in cases {
        let policy = Policy::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(policy, Policy::new(p, c, o), "{text}");
        assert_eq!(text.parse::<Policy>().unwrap(), policy, "{text}");
        // jmp's __str__ form parses back to the same policy.
        assert_eq!(
            Policy::parse(&policy.to_string()).unwrap(),
            policy,
            "{policy}"
        );
    }
    assert_eq!(
        Policy::parse("p=f32,c=bf16,o=f32").unwrap().to_string(),
        "p=full,c=bf16,o=full"
    );
    // "half" is bf16 on TPU, f16 elsewhere (the suite's plugin is a CPU).
    let half = half_dtype().unwrap();
    assert_eq!(half, DType::F16);
    assert_eq!(
        Policy::parse("half").unwrap(),
        Policy::new(half, half, half)
    );
    assert_eq!(
        Policy::parse("c=half").unwrap(),
        Policy::new(F32, half, half)
    );
    assert_eq!(
        Policy::parse("p=f32,c=bf16")
            .unwrap()
            .with_output_dtype(F32),
        Policy::new(F32, BF16, F32)
    );
}

#[test]
fn bad_policies_are_errors_naming_the_part() {
    let m = invalid("compute=int8");
    assert!(m.contains("unknown dtype \"int8\""), "{m}");
    assert!(m.contains("\"compute=int8\""), "{m}");
    let m = invalid("params=float32,compute=bfloat16,outputs=float32");
    assert!(m.contains("unknown key \"outputs\""), "{m}");
    assert!(
        m.contains("'params' ('p'), 'compute' ('c') or 'output' ('o')"),
        "{m}"
    );
    let m = invalid("p=f32,,c=bf16");
    assert!(m.contains("the part \"\" is not one `key=dtype`"), "{m}");
    let m = invalid("p=f32=bf16");
    assert!(
        m.contains("the part \"p=f32=bf16\" is not one `key=dtype`"),
        "{m}"
    );
    let m = invalid("p=f32,");
    assert!(m.contains("the part \"\""), "{m}");
    // As in jmp: case sensitive, spaces not stripped.
    let m = invalid("P=F32");
    assert!(m.contains("unknown dtype \"F32\""), "{m}");
    let m = invalid("p=f32, c=bf16");
    assert!(m.contains("unknown key \" c\""), "{m}");
    let m = invalid("");
    assert!(m.contains("unknown dtype \"\""), "{m}");
    let m = invalid("float8");
    assert!(m.contains("unknown dtype \"float8\""), "{m}");
    assert!("c=int32".parse::<Policy>().is_err());
}

/// An MLP with an integer step counter and a bool flag beside it: the
/// casts change the float leaves only.
#[derive(oxla::Pytree, Clone, Debug)]
struct State {
    model: Mlp,
    step: Array,
    flag: Array,
    table: BTreeMap<String, Array>,
}

fn state() -> State {
    let mut table = BTreeMap::new();
    table.insert("half".to_string(), jnp::ones(&[2], DType::F16));
    table.insert("ids".to_string(), jnp::arange(0.0, 3.0, 1.0, DType::U8));
    State {
        model: Mlp::new(Key::new(3), &[3, 4, 2], Activation::Tanh),
        step: Array::scalar(5i32).unwrap(),
        flag: Array::scalar(true).unwrap(),
        table,
    }
}

#[test]
fn an_mlp_casts_to_bf16_compute_and_back_with_only_float_leaves_cast() {
    use DType::{BF16, Bool, F16, F32, I32, U8};
    let policy = Policy::parse("params=float32,compute=bfloat16,output=float16").unwrap();
    let s = state();
    // Leaf order: the MLP's kernel, bias, kernel, bias; step; flag; the
    // table's "half" and "ids".
    assert_eq!(dtypes(&s), vec![F32, F32, F32, F32, I32, Bool, F16, U8]);

    let compute = policy.cast_to_compute(&s).unwrap();
    assert_eq!(
        dtypes(&compute),
        vec![BF16, BF16, BF16, BF16, I32, Bool, BF16, U8]
    );
    assert_eq!(compute.model.activation, Activation::Tanh);
    assert_eq!(compute.step.item::<i32>().unwrap(), 5);
    assert_eq!(compute.table["ids"].to_vec::<u8>().unwrap(), vec![0, 1, 2]);

    let back = policy.cast_to_param(&compute).unwrap();
    assert_eq!(dtypes(&back), vec![F32, F32, F32, F32, I32, Bool, F32, U8]);
    // Back in f32: the values rounded to bf16 once.
    for (orig, round_trip) in tree_leaves(&s.model).iter().zip(tree_leaves(&back.model)) {
        let want: Vec<f32> = orig
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(|v| half::bf16::from_f32(v).to_f32())
            .collect();
        assert_eq!(round_trip.to_vec::<f32>().unwrap(), want);
    }
    let output = policy.cast_to_output(&back).unwrap();
    assert_eq!(
        dtypes(&output),
        vec![F16, F16, F16, F16, I32, Bool, F16, U8]
    );

    // A leaf already of the target dtype is the same array.
    let same = Policy::parse("f32")
        .unwrap()
        .cast_to_param(&s.model)
        .unwrap();
    assert_eq!(
        same.layers[0].kernel.to_vec::<f32>().unwrap(),
        s.model.layers[0].kernel.to_vec::<f32>().unwrap()
    );

    // The same casts inside jit.
    let to_compute = jit(move |s: State| policy.cast_to_compute(&s));
    let jitted = to_compute.call(s.clone()).unwrap();
    assert_eq!(dtypes(&jitted), dtypes(&compute));
    for (a, b) in tree_leaves(&jitted.model)
        .iter()
        .zip(tree_leaves(&compute.model))
    {
        assert_eq!(
            a.to_vec::<half::bf16>().unwrap(),
            b.to_vec::<half::bf16>().unwrap()
        );
    }
}

/// The data of a tiny regression: y = sin(x0) + x1 / 2.
fn regression() -> (Array, Array) {
    let x = oxla::random::normal(Key::new(11), &[32, 2], DType::F32);
    let x0 = oxla::lax::slice(&x, &[0, 0], &[32, 1], None);
    let x1 = oxla::lax::slice(&x, &[0, 1], &[32, 2], None);
    let y = jnp::sin(&x0) + x1 * 0.5;
    (x, y)
}

#[test]
fn a_jitted_mixed_precision_step_with_dynamic_loss_scaling_trains_a_tiny_mlp() {
    let policy = Policy::parse("p=f32,c=bf16,o=f32").unwrap();
    let (x, y) = regression();
    let loss_of = move |params: &Mlp, x: &Array, y: &Array| -> oxla::Result<Array> {
        let compute = policy.cast_to_compute(params)?;
        let out = compute.apply(&policy.cast_to_compute(x)?);
        let out = policy.cast_to_output(&out)?;
        Ok(jnp::mean(&jnp::square(&(out - y)), None, false))
    };
    let step = jit(
        move |(params, scale, x, y): (Mlp, DynamicLossScale, Array, Array)| -> oxla::Result<(Mlp, DynamicLossScale, Array)> {
            let ((_, loss), grads) = value_and_grad(|p: Mlp| -> oxla::Result<(Array, Array)> {
                let loss = loss_of(&p, &x, &y)?;
                Ok((scale.scale(&loss)?, loss))
            })
            .call_with_aux(params.clone())?;
            let grads = scale.unscale(&grads)?;
            let finite = all_finite(&grads);
            let updated = tree_map2(&params, &grads, |p, g| p - g * 0.2f32)?;
            let params = select_tree(&finite, &updated, &params)?;
            Ok((params, scale.adjust(&finite)?, loss))
        },
    );
    let mut params = Mlp::new(Key::new(0), &[2, 16, 1], Activation::Tanh);
    let mut scale = DynamicLossScale::new(Array::scalar(2f32.powi(15)).unwrap()).unwrap();

    // The forward pass runs in bf16 (the traced step converts to bf16).
    let jaxpr = make_jaxpr(
        |(p, x): (Mlp, Array)| {
            policy
                .cast_to_compute(&p)
                .map(|p| p.apply(&policy.cast_to_compute(&x).unwrap()))
        },
        &(params.clone(), x.clone()),
    )
    .unwrap()
    .to_string();
    assert!(jaxpr.contains("bf16["), "{jaxpr}");

    let first = loss_of(&params, &x, &y).unwrap().item::<f32>().unwrap();
    let mut losses = Vec::new();
    for _ in 0..60 {
        let (p, s, loss) = step.call((params, scale, x.clone(), y.clone())).unwrap();
        params = p;
        scale = s;
        losses.push(loss.item::<f32>().unwrap());
    }
    assert_eq!(step.cache_size(), 1, "one compile for every step");
    // The first step's loss is the eager loss (within bf16 rounding: the
    // compiler may fuse the bf16 ops differently).
    assert!(
        (losses[0] - first).abs() <= 1e-2 * first,
        "{} vs {first}",
        losses[0]
    );
    let last = loss_of(&params, &x, &y).unwrap().item::<f32>().unwrap();
    assert!(last < 0.5 * first, "loss {first} -> {last}: {losses:?}");
    // Master parameters stay f32; every step had finite gradients.
    assert!(dtypes(&params).iter().all(|d| *d == DType::F32));
    assert_eq!(scale.counter.item::<i32>().unwrap(), 60);
    assert_eq!(scale.loss_scale.item::<f32>().unwrap(), 2f32.powi(15));
}

/// jmp's `DynamicLossScale.adjust` as its docstring states it, on the host.
fn adjust_by_hand(
    (scale, counter): (f32, i32),
    finite: bool,
    period: i32,
    factor: i32,
    min: f32,
) -> (f32, i32) {
    if finite {
        let counter = counter + 1;
        if counter == period {
            let grown = scale * factor as f32;
            (if grown.is_finite() { grown } else { scale }, 0)
        } else {
            (scale, counter)
        }
    } else {
        (min.max(scale / factor as f32), 0)
    }
}

fn value(s: &DynamicLossScale) -> (f32, i32) {
    (
        s.loss_scale.item::<f32>().unwrap(),
        s.counter.item::<i32>().unwrap(),
    )
}

/// Step by step against [`adjust_by_hand`], jitted and eagerly: `period`
/// finite steps double the scale; a NaN gradient halves it and resets the
/// counter, and `select_tree` keeps the parameters of that step.
#[test]
fn dynamic_loss_scale_matches_jmps_algorithm_step_by_step() {
    let defaults = DynamicLossScale::new(Array::scalar(2f32.powi(15)).unwrap()).unwrap();
    assert_eq!((defaults.period, defaults.factor), (2000, 2));
    assert_eq!(defaults.min_loss_scale.item::<f32>().unwrap(), 1.0);
    assert_eq!(defaults.min_loss_scale.dtype(), DType::F32);
    assert_eq!(value(&defaults), (32768.0, 0));
    // The 2000th finite step doubles the default scale.
    let at_1999 = DynamicLossScale {
        counter: Array::scalar(1999i32).unwrap(),
        ..defaults.clone()
    };
    let yes = Array::scalar(true).unwrap();
    let no = Array::scalar(false).unwrap();
    assert_eq!(value(&at_1999.adjust(&yes).unwrap()), (65536.0, 0));
    assert_eq!(value(&defaults.adjust(&yes).unwrap()), (32768.0, 1));

    // A step: SGD on params with the unscaled gradients, skipped when they
    // are not finite; `bad` puts a NaN in the gradient.
    let step = jit(
        |(params, scale, grads): (Vec<Array>, DynamicLossScale, Vec<Array>)| -> oxla::Result<(Vec<Array>, DynamicLossScale, Array)> {
            let grads = scale.unscale(&grads)?;
            let finite = all_finite(&grads);
            let updated = tree_map2(&params, &grads, |p, g| p - g)?;
            Ok((select_tree(&finite, &updated, &params)?, scale.adjust(&finite)?, finite))
        },
    );
    let period = 4;
    let mut scale = DynamicLossScale::new(Array::scalar(2f32.powi(15)).unwrap())
        .unwrap()
        .with_period(period)
        .unwrap();
    let mut params = vec![jnp::zeros(&[3], DType::F32), Array::scalar(0.0f32).unwrap()];
    let mut want = (2f32.powi(15), 0);
    let mut want_params = [0.0f32; 4];
    // finite ×4 (grows), ×2, NaN (halves, resets), ×4 (grows), inf, NaN.
    let finite_steps = [
        true, true, true, true, true, true, false, true, true, true, true, false, false,
    ];
    let mut seen = Vec::new();
    for (i, &ok) in finite_steps.iter().enumerate() {
        let s = value(&scale).0;
        // Scaled gradients of 1, 2, 3 and 4 (times the scale), or a NaN /
        // an inf in one leaf.
        let bad = if i == 11 { f32::INFINITY } else { f32::NAN };
        let first = if ok { 1.0 } else { bad };
        let grads = vec![
            Array::from_slice(&[first * s, 2.0 * s, 3.0 * s], &[3]).unwrap(),
            Array::scalar(4.0 * s).unwrap(),
        ];
        let (p, next, finite) = step.call((params, scale, grads)).unwrap();
        assert_eq!(finite.item::<bool>().unwrap(), ok, "step {i}");
        want = adjust_by_hand(want, ok, period, 2, 1.0);
        assert_eq!(value(&next), want, "step {i}");
        if ok {
            for (w, g) in want_params.iter_mut().zip([1.0, 2.0, 3.0, 4.0]) {
                *w -= g;
            }
        }
        let got: Vec<f32> = p[0]
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .chain([p[1].item::<f32>().unwrap()])
            .collect();
        assert_eq!(
            got, want_params,
            "step {i}: the update is skipped when not finite"
        );
        seen.push(want);
        params = p;
        scale = next;
    }
    assert_eq!(step.cache_size(), 1);
    // The trajectory, spelled out: ×2 after the 4th finite step, ÷2 on
    // the NaN, ×2 after 4 more, ÷2 twice.
    let k = 2f32.powi(15);
    assert_eq!(
        seen,
        vec![
            (k, 1),
            (k, 2),
            (k, 3),
            (2.0 * k, 0),
            (2.0 * k, 1),
            (2.0 * k, 2),
            (k, 0),
            (k, 1),
            (k, 2),
            (k, 3),
            (2.0 * k, 0),
            (k, 0),
            (k / 2.0, 0),
        ]
    );

    // Not below the minimum; a scale whose growth overflows stays.
    let small = DynamicLossScale::new(Array::scalar(1.5f32).unwrap()).unwrap();
    assert_eq!(value(&small.adjust(&no).unwrap()), (1.0, 0));
    let floor = DynamicLossScale::new(Array::scalar(64f32).unwrap())
        .unwrap()
        .with_min_loss_scale(Array::scalar(48f32).unwrap())
        .unwrap();
    let floor = jit(|(s, f): (DynamicLossScale, Array)| s.adjust(&f))
        .call((floor, no.clone()))
        .unwrap();
    assert_eq!(value(&floor), (48.0, 0));
    assert_eq!(floor.min_loss_scale.item::<f32>().unwrap(), 48.0);
    let huge = DynamicLossScale::new(Array::scalar(2f32.powi(127)).unwrap())
        .unwrap()
        .with_period(1)
        .unwrap();
    assert_eq!(value(&huge.adjust(&yes).unwrap()), (2f32.powi(127), 0));
    let factor_4 = DynamicLossScale::new(Array::scalar(8f32).unwrap())
        .unwrap()
        .with_period(1)
        .unwrap()
        .with_factor(4)
        .unwrap();
    assert_eq!(value(&factor_4.adjust(&yes).unwrap()), (32.0, 0));
    assert_eq!(value(&factor_4.adjust(&no).unwrap()), (2.0, 0));

    // Errors: a non-bool or non-scalar predicate, a bad period, an int scale.
    let m = defaults
        .adjust(&Array::scalar(1i32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(m.contains("expected a bool scalar, got i32[]"), "{m}");
    let two = Array::from_slice(&[true, false], &[2]).unwrap();
    assert!(defaults.adjust(&two).is_err());
    assert!(defaults.clone().with_period(0).is_err());
    assert!(defaults.clone().with_factor(0).is_err());
    let m = DynamicLossScale::new(Array::scalar(2i32).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("loss_scale must be floating-point, got i32"),
        "{m}"
    );
}

#[test]
fn static_and_no_op_loss_scales_all_finite_and_select_tree() {
    let loss = Array::scalar(0.75f32).unwrap();
    let fixed = StaticLossScale::new(Array::scalar(128f32).unwrap()).unwrap();
    assert_eq!(fixed.scale(&loss).unwrap().item::<f32>().unwrap(), 96.0);
    let grads = (
        Array::scalar(256f32).unwrap(),
        jnp::full(&[2], 64.0, DType::F32),
    );
    let unscaled = fixed.unscale(&grads).unwrap();
    assert_eq!(unscaled.0.item::<f32>().unwrap(), 2.0);
    assert_eq!(unscaled.1.to_vec::<f32>().unwrap(), vec![0.5, 0.5]);
    let same = fixed.adjust(&Array::scalar(false).unwrap()).unwrap();
    assert_eq!(same.loss_scale.item::<f32>().unwrap(), 128.0);
    // A bf16 loss times the f32 scale is f32, as in jmp.
    let bf16_loss = loss.astype(DType::BF16);
    assert_eq!(fixed.scale(&bf16_loss).unwrap().dtype(), DType::F32);

    let none = NoOpLossScale::new();
    assert_eq!(none.scale(&loss).unwrap().item::<f32>().unwrap(), 0.75);
    assert_eq!(
        none.unscale(&grads).unwrap().0.item::<f32>().unwrap(),
        256.0
    );
    assert_eq!(none.adjust(&Array::scalar(true).unwrap()).unwrap(), none);
    assert!(tree_leaves(&none).is_empty());
    // Both pass through jit.
    let f = jit(
        |(s, n, x): (StaticLossScale, NoOpLossScale, Array)| -> oxla::Result<Array> {
            n.scale(&s.scale(&x)?)
        },
    );
    assert_eq!(
        f.call((fixed, none, loss.clone()))
            .unwrap()
            .item::<f32>()
            .unwrap(),
        96.0
    );

    // all_finite: every leaf, integer leaves always finite, no leaves true.
    let mixed = (
        jnp::ones(&[2], DType::BF16),
        Array::scalar(3i32).unwrap(),
        Array::from_slice(&[1.0f32, f32::NEG_INFINITY], &[2]).unwrap(),
    );
    assert!(!all_finite(&mixed).item::<bool>().unwrap());
    assert!(
        all_finite(&(mixed.0.clone(), mixed.1.clone()))
            .item::<bool>()
            .unwrap()
    );
    assert!(all_finite(&()).item::<bool>().unwrap());
    let nan_bf16 = Array::scalar(f32::NAN).unwrap().astype(DType::BF16);
    assert!(!all_finite(&vec![nan_bf16]).item::<bool>().unwrap());
    let jitted = jit(|t: (Array, Array, Array)| all_finite(&t));
    assert!(!jitted.call(mixed.clone()).unwrap().item::<bool>().unwrap());

    // select_tree: a bool scalar picks a whole tree; else an error.
    let a = vec![Array::scalar(1f32).unwrap(), Array::scalar(2i32).unwrap()];
    let b = vec![Array::scalar(10f32).unwrap(), Array::scalar(20i32).unwrap()];
    let t = select_tree(&Array::scalar(true).unwrap(), &a, &b).unwrap();
    assert_eq!(
        (t[0].item::<f32>().unwrap(), t[1].item::<i32>().unwrap()),
        (1.0, 2)
    );
    let f = select_tree(&Array::scalar(false).unwrap(), &a, &b).unwrap();
    assert_eq!(
        (f[0].item::<f32>().unwrap(), f[1].item::<i32>().unwrap()),
        (10.0, 20)
    );
    let m = select_tree(&Array::scalar(1f32).unwrap(), &a, &b)
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("select_tree: expected a bool scalar, got f32[]"),
        "{m}"
    );
    let m = select_tree(&Array::scalar(true).unwrap(), &a, &b[..1].to_vec())
        .unwrap_err()
        .to_string();
    assert!(m.contains("select_tree"), "{m}");
}

#[test]
fn summary_of_an_mlp_counts_parameters_by_module() {
    let model = Mlp::new(Key::new(0), &[784, 512, 10], Activation::Relu);
    let count = 784 * 512 + 512 + 512 * 10 + 10;
    assert_eq!(count, 407_050);
    assert_eq!(parameter_count(&model).unwrap(), count);
    assert_eq!(parameter_bytes(&model).unwrap(), 4 * count);
    let s = Summary::of(&model).unwrap();
    assert_eq!((s.count, s.bytes), (count, 4 * count));
    let paths: Vec<&str> = s.params.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "layers[0].kernel",
            "layers[0].bias",
            "layers[1].kernel",
            "layers[1].bias"
        ]
    );
    assert_eq!(paths, oxla_train::checkpoint::tensor_names(&model));
    let kernel = &s.params[0];
    assert_eq!(
        (
            kernel.module.as_str(),
            kernel.name.as_str(),
            kernel.dtype,
            kernel.shape.as_slice()
        ),
        ("layers[0]", "kernel", DType::F32, &[784i64, 512][..])
    );
    assert_eq!((kernel.count, kernel.bytes), (784 * 512, 4 * 784 * 512));
    let rows: Vec<(&str, usize, usize)> = s
        .modules
        .iter()
        .map(|m| (m.module.as_str(), m.count, m.bytes))
        .collect();
    assert_eq!(
        rows,
        [
            ("layers[0]", 784 * 512 + 512, 4 * (784 * 512 + 512)),
            ("layers[1]", 512 * 10 + 10, 4 * (512 * 10 + 10)),
        ]
    );
    assert_eq!(s.modules[1].params.len(), 2);
    // In bf16: the same count, half the bytes.
    let half = Policy::parse("bf16")
        .unwrap()
        .cast_to_param(&model)
        .unwrap();
    assert_eq!(parameter_count(&half).unwrap(), count);
    assert_eq!(parameter_bytes(&half).unwrap(), 2 * count);
    let table = s.to_string();
    assert!(
        table
            .lines()
            .last()
            .unwrap()
            .ends_with(" 407,050  1,628,200"),
        "{table}"
    );
    assert!(table.starts_with("Module / parameter"), "{table}");
}

#[test]
fn summary_table_snapshot() {
    let model = Mlp::new(Key::new(0), &[2, 3, 1], Activation::Relu);
    let s = Summary::of(&model).unwrap();
    assert_eq!(
        s.to_string(),
        "\
Module / parameter  Dtype  Shape   Params  Bytes
layers[0]                               9     36
  kernel            f32    [2, 3]       6     24
  bias              f32    [3]          3     12
layers[1]                               4     16
  kernel            f32    [3, 1]       3     12
  bias              f32    [1]          1      4
Total                                  13     52"
    );

    // Top-level leaves, map keys and a bare array.
    let mut tree = BTreeMap::new();
    tree.insert("w".to_string(), jnp::zeros(&[2, 2], DType::BF16));
    tree.insert("step".to_string(), Array::scalar(0i32).unwrap());
    let s = Summary::of(&(tree, vec![jnp::zeros(&[3], DType::F16)])).unwrap();
    let paths: Vec<(&str, &str, &str)> = s
        .params
        .iter()
        .map(|p| (p.path.as_str(), p.module.as_str(), p.name.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("[0]['step']", "[0]", "['step']"),
            ("[0]['w']", "[0]", "['w']"),
            ("[1][0]", "[1]", "[0]"),
        ]
    );
    assert_eq!(
        s.to_string(),
        "\
Module / parameter  Dtype  Shape   Params  Bytes
[0]                                     5     12
  ['step']          i32    []           1      4
  ['w']             bf16   [2, 2]       4      8
[1]                                     3      6
  [0]               f16    [3]          3      6
Total                                   8     18"
    );
    let bare = Summary::of(&jnp::zeros(&[4], DType::F32)).unwrap();
    assert_eq!(bare.params[0].path, "");
    assert!(bare.to_string().contains("<top level>"), "{bare}");
    assert!(bare.to_string().contains("  <array>"), "{bare}");
    assert_eq!(Summary::of(&()).unwrap().count, 0);
    // An error leaf is an error, not a made-up count.
    let broken = vec![Array::error(Error::InvalidArgument("broken leaf".into()))];
    assert!(
        parameter_count(&broken)
            .unwrap_err()
            .to_string()
            .contains("broken leaf")
    );
}

#[test]
fn flops_of_a_jitted_matmul_from_the_cost_model() {
    let f = jit(|(a, b): (Array, Array)| jnp::matmul(&a, &b));
    let args = (
        jnp::ones(&[4, 8], DType::F32),
        jnp::ones(&[8, 16], DType::F32),
    );
    let flops = summary::flops(&f, &args).unwrap();
    // 2 * m * k * n: the suite's plugin (XLA's CPU compiler) has a cost
    // model.
    assert_eq!(flops, Some(2.0 * 4.0 * 8.0 * 16.0));
}
