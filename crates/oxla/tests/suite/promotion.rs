//! oxla's type promotion against JAX's, for every pair of dtypes and weak
//! types, with x64 off and on.

use oxla::DType;
use oxla_core::promotion::promote;

use crate::reference::jaxprs_and_promotion;

#[test]
fn promotion_table_matches_jax() {
    let table = jaxprs_and_promotion()["promotion"].as_array().unwrap();
    assert!(table.len() > 300, "{} rows", table.len());
    let mut mismatches = Vec::new();
    for row in table {
        let r = row.as_array().unwrap();
        let dt = |i: usize| DType::from_name(r[i].as_str().unwrap()).unwrap();
        let b = |i: usize| r[i].as_bool().unwrap();
        let (a, aw, bb, bw, x64, want, want_weak) = (dt(0), b(1), dt(2), b(3), b(4), dt(5), b(6));
        let got = promote(a, aw, bb, bw, x64);
        if got != (want, want_weak) {
            mismatches.push(format!(
                "{a}{} + {bb}{} (x64={x64}): oxla {got:?}, jax ({want}, {want_weak})",
                if aw { " weak" } else { "" },
                if bw { " weak" } else { "" }
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// JAX's reference for jnp functions on integer (and bool) inputs.
fn int_inputs() -> &'static serde_json::Value {
    static CASES: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    CASES.get_or_init(|| {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/suite/reference/int_inputs.py");
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap()
    })
}

/// Every jnp wrapper that computes in floating point promotes integer
/// inputs as JAX does (int32 → f32), with JAX's values; reductions and
/// cumulative ops of bools and narrow ints accumulate in JAX's dtypes.
#[test]
fn integer_inputs_promote_as_jax_does() {
    use oxla::{Array, numpy as jnp};
    let ints = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let unit = Array::from_slice(&[0i32, 1, 0], &[3]).unwrap();
    let twice = &ints * 2;
    let bools = Array::from_slice(&[true, false, true], &[3]).unwrap();
    let int8 = Array::from_slice(&[2i8, 3, 4], &[3]).unwrap();
    type Unary = fn(&Array) -> Array;
    let unary: [(&str, Unary); 16] = [
        ("exp", jnp::exp),
        ("exp2", jnp::exp2),
        ("expm1", jnp::expm1),
        ("log", jnp::log),
        ("log1p", jnp::log1p),
        ("sqrt", jnp::sqrt),
        ("cbrt", jnp::cbrt),
        ("tanh", jnp::tanh),
        ("sin", jnp::sin),
        ("cos", jnp::cos),
        ("tan", jnp::tan),
        ("arctan", jnp::arctan),
        ("sinh", jnp::sinh),
        ("cosh", jnp::cosh),
        ("arcsinh", jnp::arcsinh),
        ("arccosh", jnp::arccosh),
    ];
    let mut got: Vec<(&str, Array)> = unary.iter().map(|(n, f)| (*n, f(&ints))).collect();
    let on_unit: [(&str, Unary); 3] = [
        ("arcsin", jnp::arcsin),
        ("arccos", jnp::arccos),
        ("arctanh", jnp::arctanh),
    ];
    got.extend(on_unit.iter().map(|(n, f)| (*n, f(&unit))));
    got.extend([
        ("arctan2", jnp::arctan2(&ints, &twice)),
        ("divide", jnp::divide(&ints, &twice)),
        ("power", jnp::power(&ints, &ints)),
        ("mean", jnp::mean(&ints, None, false)),
        ("var", jnp::var(&ints, None, false)),
        ("cumsum_bool", jnp::cumsum(&bools, None)),
        ("cumprod_bool", jnp::cumprod(&bools, None)),
        ("sum_bool", jnp::sum(&bools, None, false)),
        ("prod_int8", jnp::prod(&int8, None, false)),
    ]);
    let reference = int_inputs();
    assert_eq!(got.len(), reference.as_object().unwrap().len());
    for (name, array) in got {
        let want = &reference[name];
        let dtype = DType::from_name(want["dtype"].as_str().unwrap()).unwrap();
        let array = array
            .check()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .clone();
        assert_eq!(array.dtype(), dtype, "{name}");
        let values: Vec<f64> = oxla::lax::convert_element_type(&array, DType::F64)
            .to_vec::<f64>()
            .or_else(|_| {
                oxla::lax::convert_element_type(&array, DType::F32)
                    .to_vec::<f32>()
                    .map(|v| v.into_iter().map(f64::from).collect())
            })
            .unwrap();
        for (i, (g, w)) in values
            .iter()
            .zip(want["values"].as_array().unwrap())
            .enumerate()
        {
            match w.as_f64() {
                Some(w) => assert!(
                    (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "{name}[{i}]: {g} vs {w}"
                ),
                None => assert_eq!(g.to_string(), w.as_str().unwrap(), "{name}[{i}]"),
            }
        }
    }
}

/// Every Rust number is a weak scalar operand, on the right of any operator
/// (and f64, i32, f16, bf16 on the left): the array's dtype wins, as a
/// Python scalar's does in JAX (`x_f16 * 2.0` is f16), and values are the
/// arithmetic's.
#[test]
fn every_rust_number_is_a_weak_scalar_operand() {
    use half::{bf16, f16};
    use oxla::Array;
    let h = Array::from_slice(&[f16::from_f32(1.0), f16::from_f32(2.5)], &[2]).unwrap();
    let f = Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap();
    let i = Array::from_slice(&[7i32, -3], &[2]).unwrap();
    let u = Array::from_slice(&[200u8, 3], &[2]).unwrap();

    let cases: Vec<(&str, Array, DType, Vec<f64>)> = vec![
        ("f16 * 2f32", &h * 2.0f32, DType::F16, vec![2.0, 5.0]),
        (
            "f16 + bf16",
            &h + bf16::from_f32(0.5),
            DType::F16,
            vec![1.5, 3.0],
        ),
        ("f32 - 1u8", &f - 1u8, DType::F32, vec![0.0, -3.0]),
        ("f32 / 4i64", &f / 4i64, DType::F32, vec![0.25, -0.5]),
        ("i32 * 3u16", &i * 3u16, DType::I32, vec![21.0, -9.0]),
        ("u8 % 7u32", &u % 7u32, DType::U8, vec![4.0, 3.0]),
        ("u8 + 1u64", &u + 1u64, DType::U8, vec![201.0, 4.0]),
        ("i32 + 0.5f32", &i + 0.5f32, DType::F32, vec![7.5, -2.5]),
        (
            "f16 on the left",
            f16::from_f32(2.0) * &f,
            DType::F32,
            vec![2.0, -4.0],
        ),
        (
            "bf16 on the left",
            bf16::from_f32(1.0) - f.clone(),
            DType::F32,
            vec![0.0, 3.0],
        ),
        ("literals", 2.0 * &f + 1, DType::F32, vec![3.0, -3.0]),
    ];
    for (what, got, dtype, want) in cases {
        assert_eq!(got.dtype(), dtype, "{what}");
        assert!(
            !got.weak_type(),
            "{what}: an array with a weak scalar stays strong"
        );
        let as_f32 = oxla::lax::convert_element_type(&got, DType::F32);
        let values: Vec<f64> = as_f32
            .to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect();
        assert_eq!(values, want, "{what}");
    }
}

/// `jnp.issubdtype` and `jnp.isdtype` for every dtype and class, against
/// JAX's answers.
#[test]
fn dtype_classes_and_kinds_match_jax() {
    use oxla::numpy::{DTypeClass, isdtype, issubdtype};
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kinds.py");
    std::fs::write(
        &script,
        "import json, jax.numpy as jnp, numpy as np\n\
         names = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',\n\
                  'float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128']\n\
         classes = {'generic': np.generic, 'number': np.number, 'integer': np.integer,\n\
                    'signedinteger': np.signedinteger, 'unsignedinteger': np.unsignedinteger,\n\
                    'inexact': np.inexact, 'floating': np.floating,\n\
                    'complexfloating': np.complexfloating, 'bool': np.bool_}\n\
         kinds = {'number': 'numeric', 'integer': 'integral', 'signedinteger': 'signed integer',\n\
                  'unsignedinteger': 'unsigned integer', 'floating': 'real floating',\n\
                  'complexfloating': 'complex floating', 'bool': 'bool'}\n\
         print(json.dumps({n: {'sub': {c: bool(jnp.issubdtype(jnp.dtype(n), k)) for c, k in classes.items()},\n\
                               'kind': {c: bool(jnp.isdtype(jnp.dtype(n), k)) for c, k in kinds.items()}}\n\
                           for n in names}))\n",
    )
    .unwrap();
    let jax: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap();
    let classes = [
        ("generic", DTypeClass::Generic),
        ("number", DTypeClass::Number),
        ("integer", DTypeClass::Integer),
        ("signedinteger", DTypeClass::SignedInteger),
        ("unsignedinteger", DTypeClass::UnsignedInteger),
        ("inexact", DTypeClass::Inexact),
        ("floating", DTypeClass::Floating),
        ("complexfloating", DTypeClass::ComplexFloating),
        ("bool", DTypeClass::Bool),
    ];
    let mut checked = 0;
    for dtype in DType::ALL {
        let row = &jax[dtype.numpy_name()];
        for (name, class) in classes {
            assert_eq!(
                issubdtype(dtype, class),
                row["sub"][name].as_bool().unwrap(),
                "issubdtype({dtype}, {name})"
            );
            if let Some(kind) = row["kind"][name].as_bool() {
                assert_eq!(isdtype(dtype, &[class]), kind, "isdtype({dtype}, {name})");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 15 * 7);
    assert!(isdtype(
        DType::F32,
        &[DTypeClass::Integer, DTypeClass::Floating]
    ));
}

/// `jnp.can_cast` for every pair of dtypes and every casting rule,
/// against JAX's (NumPy's) answers.
#[test]
fn can_cast_matches_jax_for_every_pair_and_rule() {
    use oxla::numpy::{Casting, can_cast};
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("casts.py");
    std::fs::write(
        &script,
        "import json, jax.numpy as jnp\n\
         names = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',\n\
                  'float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128']\n\
         rules = ['no', 'equiv', 'safe', 'same_kind', 'unsafe']\n\
         print(json.dumps({r: {f: {t: bool(jnp.can_cast(jnp.dtype(f), jnp.dtype(t), r)) for t in names}\n\
                               for f in names} for r in rules}))\n",
    )
    .unwrap();
    let jax: serde_json::Value =
        serde_json::from_slice(&oxla_testing::run_python(&script, &[])).unwrap();
    let rules = [
        ("no", Casting::No),
        ("equiv", Casting::Equiv),
        ("safe", Casting::Safe),
        ("same_kind", Casting::SameKind),
        ("unsafe", Casting::Unsafe),
    ];
    for (name, rule) in rules {
        for from in DType::ALL {
            for to in DType::ALL {
                assert_eq!(
                    can_cast(from, to, rule),
                    jax[name][from.numpy_name()][to.numpy_name()]
                        .as_bool()
                        .unwrap(),
                    "can_cast({from}, {to}, {name})"
                );
            }
        }
    }
}
