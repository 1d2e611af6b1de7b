//! Bad input gives errors that name the op, the types and the caller's
//! line; nothing panics.

use oxla_core::primitive::elementwise;
use std::cell::RefCell;

use oxla::{Array, DType, Error, jit, numpy as jnp};

fn f32s(values: &[f32], shape: &[i64]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

#[test]
fn shape_errors_name_op_shapes_and_line() {
    let a = f32s(&[0.0; 6], &[2, 3]);
    let b = f32s(&[0.0; 12], &[3, 4]);
    let line = line!() + 1;
    let bad = &a + &b;
    let err = bad.check().unwrap_err().to_string();
    assert!(err.contains(&format!("errors.rs:{line}:")), "{err}");
    assert!(err.contains("add of f32[2,3], f32[3,4]"), "{err}");
    assert!(err.contains("incompatible shapes"), "{err}");
    // The error travels through later ops and surfaces at the next Result.
    let later = jnp::sum(&jnp::exp(&bad), None, false);
    assert_eq!(later.to_vec::<f32>().unwrap_err().to_string(), err);
}

#[test]
fn an_error_travels_unchanged_through_ops_that_inspect_shapes() {
    let a = f32s(&[0.0; 6], &[2, 3]);
    let bad = &a + &f32s(&[0.0; 12], &[3, 4]);
    let err = bad.check().unwrap_err().to_string();
    let w = f32s(&[0.0; 12], &[3, 4]);
    let through = [
        jnp::matmul(&bad, &w),
        jnp::matmul(&w, &bad),
        jnp::tril(&bad, 0),
        jnp::einsum("ij,jk->ik", &[&bad, &w]),
        jnp::split(&bad, 3, 0)[1].clone(),
    ];
    for (i, t) in through.iter().enumerate() {
        assert_eq!(t.check().unwrap_err().to_string(), err, "op {i}");
    }
    // Their own errors name the op, the operands and the caller's line.
    let e = jnp::matmul(&Array::scalar(1.0f32).unwrap(), &w)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("matmul") && e.contains("f32[]") && e.contains("errors.rs:"),
        "{e}"
    );
    let batched = f32s(&[0.0; 24], &[2, 3, 4]);
    let e = jnp::matmul(&batched, &f32s(&[0.0; 60], &[3, 4, 5]))
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("matmul") && e.contains("f32[2,3,4]") && e.contains("errors.rs:"),
        "{e}"
    );
    let e = jnp::split(&a, 2, 1)[0].check().unwrap_err().to_string();
    assert!(
        e.contains("split") && e.contains("f32[2,3]") && e.contains("errors.rs:"),
        "{e}"
    );
    let e = jnp::split(&a, 2, 5)[0].check().unwrap_err().to_string();
    assert!(e.contains("axis 5"), "{e}");
    let e = jnp::triu(&f32s(&[0.0; 3], &[3]), 0)
        .check()
        .unwrap_err()
        .to_string();
    assert!(e.contains("triu") && e.contains("f32[3]"), "{e}");
    let e = jnp::zeros(&[2, -1], DType::F32)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("negative dimension") && e.contains("errors.rs:"),
        "{e}"
    );
}

/// An array carrying an error has no shape: `shape()`, `dtype()`, `ndim()`
/// and `size()` panic with the carried error (op, shapes, caller's line)
/// rather than report a made-up `[]`/bool/1; `try_shape` and `aval`
/// return the error.
#[test]
fn an_error_array_never_reports_a_made_up_shape() {
    let bad = jnp::matmul(&f32s(&[0.0; 6], &[2, 3]), &f32s(&[0.0; 8], &[2, 4]));
    let carried = bad.check().unwrap_err().to_string();
    assert!(
        carried.contains("matmul") && carried.contains("errors.rs:"),
        "{carried}"
    );
    assert_eq!(bad.try_shape().unwrap_err().to_string(), carried);
    assert!(bad.aval().is_err());
    type Accessor = fn(&Array) -> String;
    let accessors: [(&str, Accessor); 4] = [
        ("shape", |a| format!("{:?}", a.shape())),
        ("dtype", |a| a.dtype().to_string()),
        ("ndim", |a| a.ndim().to_string()),
        ("size", |a| a.size().to_string()),
    ];
    for (name, accessor) in accessors {
        let panic =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| accessor(&bad))).unwrap_err();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            message.contains(&format!("Array::{name}()")) && message.contains(&carried),
            "{name}: {message}"
        );
    }
    let good = f32s(&[0.0; 6], &[2, 3]);
    assert_eq!(good.try_shape().unwrap(), &[2, 3]);
    assert_eq!(
        (good.shape(), good.ndim(), good.size()),
        (&[2i64, 3][..], 2, 6)
    );
}

#[test]
fn errors_inside_jit_are_returned_by_call() {
    let f = jit(|(x, y): (Array, Array)| jnp::matmul(&x, &y));
    let err = f
        .call((f32s(&[0.0; 6], &[2, 3]), f32s(&[0.0; 8], &[2, 4])))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::InvalidArgument(_)), "{text}");
    assert!(
        text.contains("matmul of f32[2,3], f32[2,4]")
            && text.contains("(size 3)")
            && text.contains("errors.rs:"),
        "{text}"
    );
    assert_eq!(f.cache_size(), 0);
}

#[test]
fn reading_a_traced_value_is_a_concretization_error() {
    let f = jit(|x: Array| -> oxla::Result<Array> {
        let values = x.to_vec::<f32>()?;
        Ok(&x * values.len() as f64)
    });
    let err = f.call(f32s(&[1.0, 2.0], &[2])).unwrap_err();
    assert!(matches!(err, Error::Concretization { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("cannot read a traced f32[2]") && text.contains("errors.rs:"),
        "{text}"
    );
}

#[test]
fn a_tracer_used_after_its_jit_returned_is_an_error() {
    let leaked: RefCell<Option<Array>> = RefCell::new(None);
    let f = jit(|x: Array| {
        *leaked.borrow_mut() = Some(x.clone());
        x
    });
    f.call(f32s(&[1.0], &[1])).unwrap();
    let tracer = leaked.borrow_mut().take().unwrap();
    let g = jit(|y: Array| &y + &tracer);
    let err = g.call(f32s(&[1.0], &[1])).unwrap_err();
    assert!(matches!(err, Error::EscapedTracer { .. }), "{err}");
    let err = tracer.to_vec::<f32>().unwrap_err();
    assert!(matches!(err, Error::Concretization { .. }), "{err}");
}

#[test]
fn wrong_host_data_and_reads_are_errors() {
    let err = Array::from_slice(&[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert!(
        err.to_string()
            .contains("12 bytes given for a f32[2, 2] buffer"),
        "{err}"
    );
    let x = f32s(&[1.0, 2.0], &[2]);
    let err = x.to_vec::<i32>().unwrap_err();
    assert!(
        err.to_string()
            .contains("to_vec::<i32>() of a f32[2] array"),
        "{err}"
    );
    assert!(
        x.item::<f32>()
            .unwrap_err()
            .to_string()
            .contains("2 elements")
    );
}

#[test]
fn bad_indices_are_errors() {
    let x = f32s(&[0.0; 6], &[2, 3]);
    // Past the end is clamped, as in JAX; a dim of size 0 has nothing to read.
    let empty = f32s(&[], &[0, 3]);
    let line = line!() + 1;
    let err = empty.index(&oxla::s![5]).check().unwrap_err().to_string();
    assert!(
        err.contains(&format!("errors.rs:{line}"))
            && err.contains("index 5 into dimension 0 of size 0"),
        "{err}"
    );
    let err = x.index(&oxla::s![0, 1, 2]).check().unwrap_err().to_string();
    assert!(
        err.contains("too many indices (3) for an array of rank 2"),
        "{err}"
    );
    let err = x.index(&oxla::s![..;0]).check().unwrap_err().to_string();
    assert!(err.contains("step cannot be zero"), "{err}");
    // A boolean mask must cover dims of its shape, and be concrete.
    let rows = Array::from_slice(&[true, false, true], &[3]).unwrap();
    let err = x.index(&oxla::s![rows]).check().unwrap_err().to_string();
    assert!(
        err.contains("the boolean index bool[3] does not match dims 0.. of f32[2,3]"),
        "{err}"
    );
    let line = std::cell::Cell::new(0);
    let traced = jit(|x: Array| {
        let positive = oxla::lax::gt(&x, &Array::weak_scalar(0.5f32));
        line.set(line!() + 1);
        x.at(&oxla::s![positive]).set(&Array::weak_scalar(0.0f32))
    });
    let err = traced.call(x.clone()).unwrap_err().to_string();
    let line = line.get();
    assert!(
        err.contains(&format!("errors.rs:{line}"))
            && err.contains("at: a boolean index needs concrete values")
            && err.contains("where_"),
        "{err}"
    );
}

#[test]
fn ops_on_unsupported_types_are_errors() {
    let u = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    let err = oxla::lax::abs(&u).check().unwrap_err().to_string();
    assert!(
        err.contains(
            "abs of u8[2]: needs a signed integer, floating-point or complex type, got u8"
        ),
        "{err}"
    );
    let b = Array::from_slice(&[true], &[1]).unwrap();
    let err = oxla::lax::neg(&b).check().unwrap_err().to_string();
    assert!(
        err.contains("neg of bool[1]: needs a numeric type"),
        "{err}"
    );
}

#[test]
fn a_module_the_plugin_rejects_reports_the_op_the_line_and_the_message() {
    use oxla_core::{Atom, Aval, DType, Equation, Jaxpr, Location, Primitive, UnaryOp, Var};
    // A hand-built jaxpr that skips the shape rules: abs of an unsigned
    // integer, which StableHLO's verifier refuses.
    let u8s = Aval::new(DType::U8, &[3]);
    let jaxpr = Jaxpr {
        avals: vec![u8s.clone(), u8s],
        constvars: vec![],
        invars: vec![Var(0)],
        eqns: vec![Equation {
            primitive: Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Abs)),
            inputs: vec![Atom::Var(Var(0))],
            outputs: vec![Var(1)],
            location: Some(Location {
                file: "model.rs",
                line: 42,
                column: 7,
            }),
        }],
        outvars: vec![Atom::Var(Var(1))],
    };
    let err = oxla::compile_jaxpr(&jaxpr, "hand_made").err().unwrap();
    assert!(matches!(err, Error::Compile { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("the plugin rejected the lowered module of hand_made"),
        "{text}"
    );
    assert!(text.contains("model.rs:42:7"), "{text}");
    assert!(text.contains("'stablehlo.abs' op"), "{text}");
}

#[test]
fn an_execution_failure_is_an_error_with_the_plugins_message() {
    // 4 TiB of output: the plugin cannot allocate it and says so, at the
    // call or (dispatch being asynchronous) at the first wait; reading the
    // failed value back is the same error, not a 4 TiB host allocation.
    let f = jit(|x: Array| jnp::broadcast_to(&x, &[1 << 20, 1 << 20]));
    let result = f.call(f32s(&[1.0], &[1]));
    if let Ok(y) = &result {
        let read = y.to_host().map(|_| ()).unwrap_err();
        assert_eq!(
            read.to_string(),
            y.block_until_ready().map(|_| ()).unwrap_err().to_string()
        );
    }
    let err = result
        .and_then(|y| y.block_until_ready().map(|_| ()))
        .unwrap_err();
    assert!(matches!(err, Error::Runtime(_)), "{err}");
    let text = err.to_string();
    // At the call the CPU plugin reports RESOURCE_EXHAUSTED, at a wait
    // INTERNAL ("Buffer Definition Event: ..."); the GPU plugin's allocator
    // RESOURCE_EXHAUSTED at the wait. Each message names the size, in bytes
    // (CPU) or TiB (GPU).
    assert!(
        text.contains("Out of memory")
            && (text.contains("4398046511104 bytes") || text.contains("4.00TiB")),
        "{text}"
    );
}

/// numpy-level shape errors name the function, the operands' types and the
/// caller's line.
#[test]
fn numpy_shape_errors_name_the_function_the_types_and_the_line() {
    let x = oxla::numpy::ones(&[8, 4], oxla::DType::F32);
    let v = oxla::numpy::ones(&[5], oxla::DType::F32);
    let s = oxla::Array::scalar(2.0f32).unwrap();
    let message = |a: &oxla::Array| a.check().map(|_| ()).unwrap_err().to_string();
    let cases = [
        (
            message(&oxla::numpy::split(&x, 3, 0)[0]),
            vec!["split of f32[8,4]", "3 equal sections"],
        ),
        (
            message(&oxla::numpy::einsum("ij,jk->iq", &[&x, &x])),
            vec!["einsum \"ij,jk->iq\" of f32[8,4], f32[8,4]", "letter q"],
        ),
        (
            message(&oxla::numpy::einsum("ij,j", &[&x])),
            vec!["einsum \"ij,j\" of f32[8,4]", "2 subscripts for 1 operands"],
        ),
        (
            message(&oxla::numpy::einsum("ijk", &[&x])),
            vec!["einsum \"ijk\" of f32[8,4]", "rank 2"],
        ),
        (
            message(&oxla::numpy::tril(&v, 0)),
            vec!["tril of f32[5]", "rank >= 2"],
        ),
        (
            message(&oxla::numpy::matmul(&s, &x)),
            vec!["matmul of f32[], f32[8,4]", "rank >= 1"],
        ),
        (
            message(&oxla::numpy::matmul(&v, &x)),
            vec!["matmul of f32[5], f32[8,4]", "(size 5)", "(size 8)"],
        ),
    ];
    for (text, wants) in cases {
        assert!(text.contains("errors.rs"), "{text}");
        for want in wants {
            assert!(text.contains(want), "{want:?} not in {text}");
        }
    }
}

#[test]
fn out_of_bounds_axes_are_errors_never_clamped_or_wrapped() {
    // JAX raises for each of these ("axis 3 is out of bounds for array of
    // dimension 3"); oxla once clamped argmax's -4 to axis 0 and wrapped
    // swapaxes' 5 to axis 2.
    let x = jnp::zeros(&[2, 3, 4], DType::F32);
    let cases: Vec<(&str, Array)> = vec![
        ("argmax", jnp::argmax(&x, Some(-4))),
        ("argmin", jnp::argmin(&x, Some(3))),
        ("cumsum", jnp::cumsum(&x, Some(-4))),
        ("sort", jnp::sort(&x, 3)),
        ("argsort", jnp::argsort(&x, -4)),
        (
            "take",
            jnp::take(&x, &Array::scalar(0i32).unwrap(), Some(5), true),
        ),
        (
            "take_along_axis",
            jnp::take_along_axis(&x, &jnp::zeros(&[2, 3, 1], DType::I32), -4),
        ),
        ("transpose", jnp::transpose(&x, Some(&[0, 1, -4]))),
        ("swapaxes", jnp::swapaxes(&x, 5, 0)),
        ("moveaxis", jnp::moveaxis(&x, 0, 3)),
        ("concatenate", jnp::concatenate(&[&x, &x], -4)),
        ("stack", jnp::stack(&[&x, &x], 4)),
        (
            "lax::split",
            oxla::lax::split(&x, &[1, 1], 3).swap_remove(0),
        ),
        (
            "lax::sort",
            oxla::lax::sort(&[&x], -4, true, 1).swap_remove(0),
        ),
    ];
    for (function, result) in cases {
        let e = result.check().unwrap_err().to_string();
        assert!(
            e.contains(function) && e.contains("out of") && e.contains("errors.rs:"),
            "{function}: {e}"
        );
    }
    // In range, negative axes count from the end.
    assert_eq!(jnp::swapaxes(&x, -1, 0).shape(), &[4, 3, 2]);
    assert_eq!(jnp::moveaxis(&x, -1, 0).shape(), &[4, 2, 3]);
    assert_eq!(
        oxla::lax::squeeze(&jnp::zeros(&[2, 1], DType::F32), &[-1]).shape(),
        &[2]
    );
}

#[test]
fn top_k_and_index_take_arguments_are_checked() {
    let x = f32s(&[0.0; 6], &[2, 3]);
    let line = line!() + 1;
    let err = oxla::lax::top_k_along(&x, -1, 0)
        .0
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("errors.rs:{line}")) && err.contains("k must be nonnegative, got -1"),
        "{err}"
    );
    let err = oxla::lax::top_k_along(&x, 1, 2)
        .1
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains("axis 2 is out of range for f32[2,3]"), "{err}");
    let idx = Array::from_slice(&[0i32, 1], &[2]).unwrap();
    let err = oxla::lax::index_take(&x, &[&idx], &[0, 1])
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("needs one index array per axis, got 1 for 2 axes"),
        "{err}"
    );
}

#[test]
fn advanced_indices_that_do_not_broadcast_or_are_not_integers_are_errors() {
    let x = f32s(&[0.0; 12], &[3, 4]);
    let rows = Array::from_slice(&[0i32, 1], &[2]).unwrap();
    let cols = Array::from_slice(&[0i32, 1, 2], &[3]).unwrap();
    let line = line!() + 1;
    let indexed = x.index(&oxla::s![&rows, &cols]);
    let err = indexed.check().unwrap_err().to_string();
    assert!(
        err.contains(&format!("errors.rs:{line}"))
            && err.contains("cannot be broadcast together: shapes [2], [3]"),
        "{err}"
    );
    let floats = f32s(&[0.0, 1.0], &[2]);
    let err = x
        .at(&oxla::s![&rows, &floats])
        .set(&Array::weak_scalar(1.0f32))
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains("an index array must hold integers"), "{err}");
    let err = x
        .index(&oxla::s![&rows, 0, 1])
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("too many indices (3) for an array of rank 2"),
        "{err}"
    );
}

/// `x + 0i`.
fn lax_complex(x: &Array) -> Array {
    oxla::lax::complex(x, &jnp::zeros_like(x))
}

/// Each jax.numpy function refuses bad arguments with an error naming the
/// function, what was wrong, and the caller's line; the process goes on.
#[test]
fn numpy_functions_refuse_bad_arguments_naming_the_function_and_line() {
    use oxla::numpy::linalg::{self as la, Ord};
    let m = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let v = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let cube = jnp::reshape(&v, &[1, 2, 2]);
    let ints = Array::from_slice(&[15i32, 24], &[2]).unwrap();
    // lax.ragged_dot_general of lhs [2, 3] whose ragged dimensions are
    // `ragged`, by rhs [2, 3, 4] contracting lhs's 1 with rhs's 1.
    let experts = jnp::ones(&[2, 3, 4], DType::F32);
    let ragged = |lhs: &Array, rhs: &Array, sizes: &Array, ragged: &[i64], group: &[i64]| {
        let dims = oxla::lax::RaggedDotDimensionNumbers {
            dot_dimension_numbers: ((&[1], &[1]), (&[], &[])),
            lhs_ragged_dimensions: ragged,
            rhs_group_dimensions: group,
        };
        oxla::lax::ragged_dot_general(lhs, rhs, sizes, dims, None, None)
    };
    let cases: Vec<(Array, &str)> = vec![
        (
            jnp::rot90(&m, 1, (0, 0)),
            "jnp.rot90: needs two distinct axes",
        ),
        (
            jnp::rot90(&v, 1, (0, 1)),
            "jnp.rot90: needs two distinct axes",
        ),
        (
            jnp::array_split(&v, 0, 0).remove(0),
            "jnp.array_split: needs a positive number of sections, got 0",
        ),
        (
            jnp::diagonal(&m, 0, 1, -1),
            "jnp.diagonal: needs two distinct axes, got 1 and -1",
        ),
        (
            jnp::diag(&cube, 0),
            "jnp.diag: takes a 1-d or 2-d array, got rank 3",
        ),
        (
            jnp::broadcast_arrays(&[&m, &v]).remove(0),
            "jnp.broadcast_arrays: the shapes do not broadcast",
        ),
        (
            jnp::matrix_transpose(&v),
            "jnp.matrix_transpose: needs rank 2 or more, got 1",
        ),
        (
            la::matrix_norm(&v, false, Ord::Fro),
            "jnp.linalg.matrix_norm: needs rank 2 or more, got 1",
        ),
        (
            la::matrix_norm(&m, false, Ord::P(3.0)),
            "jnp.linalg.matrix_norm: ord 3 is not a matrix norm",
        ),
        (
            la::norm(&cube, None, Some(&[0, 1, 2]), false),
            "jnp.linalg.norm: takes one or two axes",
        ),
        (
            jnp::pad(&m, &[(1, 1), (1, 1), (1, 1)], jnp::PadMode::Edge),
            "jnp.pad: takes one (before, after) pair or one per axis (2), got 3",
        ),
        (
            jnp::pad(&m, &[(1, -1)], jnp::PadMode::Constant(0.0)),
            "jnp.pad: widths must be non-negative, got (1, -1)",
        ),
        (
            jnp::pad(
                &jnp::zeros(&[0, 2], DType::F32),
                &[(1, 1)],
                jnp::PadMode::Wrap,
            ),
            "cannot pad the empty axis 0",
        ),
        (
            jnp::nanquantile(&m, &m, Some(0), false),
            "jnp.nanquantile: q must have rank <= 1, got 2",
        ),
        (
            jnp::resize(&m, &[2, -1]),
            "jnp.resize: all elements of new_shape must be non-negative, got -1",
        ),
        (
            jnp::spacing(&lax_complex(&m)),
            "jnp.spacing: is not defined for complex inputs",
        ),
        (
            la::cholesky(&m, false),
            "cholesky of f32[2,3]: the operand must be a (batch of) square matrices",
        ),
        (
            la::matrix_power(&m, 2),
            "jnp.linalg.matrix_power: needs square matrices, got shape [2, 3]",
        ),
        (
            la::solve(&m, &m),
            "jnp.linalg.solve: a must be (a batch of) square matrices, got shape [2, 3]",
        ),
        (
            la::solve(&jnp::ones(&[3, 3], DType::F32), &m),
            "jnp.linalg.solve: b must have 3 rows to match a 3×3 a, got shape [2, 3]",
        ),
        (
            la::inv(&v),
            "jnp.linalg.inv: a must be (a batch of) square matrices, got shape [4]",
        ),
        (
            la::det(&m),
            "jnp.linalg.det: a must be (a batch of) square matrices",
        ),
        (
            la::eigh(&m, false, true).0,
            "eigh of f32[2,3]: the operand must be a (batch of) square matrices",
        ),
        (
            la::eigvals(&m),
            "eig of f32[2,3]: the operand must be a (batch of) square matrices",
        ),
        (
            la::svd(&v, true, false).1,
            "svd of f32[4]: the operand must be a (batch of) matrices, of rank 2 or more",
        ),
        (
            la::qr(
                &oxla::lax::convert_element_type(&m, DType::F16),
                la::QrMode::Reduced,
            )
            .0,
            "qr of f16[2,3]: the operand must be float32, float64, complex64 or complex128",
        ),
        (
            la::lstsq(&v, &v, None).0,
            "jnp.linalg.lstsq: takes a 2-D a and a 1-D or 2-D b with as many rows",
        ),
        (
            la::cond(&jnp::zeros(&[0, 0], DType::F32), None),
            "jnp.linalg.cond: needs non-empty matrices",
        ),
        (
            la::tensorinv(&m, 3),
            "jnp.linalg.tensorinv: ind must be in 1..=2, got 3",
        ),
        (
            oxla::lax::approx_max_k(&ints, 1, 0).0,
            "lax.approx_max_k: operand must be a floating type, got i32",
        ),
        (
            oxla::lax::mulhi(&m, &m),
            "lax.mulhi: takes integers, got f32",
        ),
        (
            oxla::lax::ragged_dot(&m, &m, &ints, None, None),
            "lax.ragged_dot: takes lhs m×k, rhs g×k×n and g group sizes",
        ),
        (
            ragged(&m, &experts, &ints, &[], &[0]),
            "lax.ragged_dot_general: expects exactly one lhs ragged dimension, got []",
        ),
        (
            ragged(&m, &experts, &v, &[0], &[0]),
            "lax.ragged_dot_general: group_sizes must have an integer dtype, got f32",
        ),
        (
            ragged(
                &m,
                &experts,
                &Array::from_slice(&[1i32, 1, 0], &[3]).unwrap(),
                &[0],
                &[0],
            ),
            "lax.ragged_dot_general: expected rhs group dimension size to be 3, got 2",
        ),
        (
            ragged(&m, &experts, &ints, &[0], &[]),
            "lax.ragged_dot_general: needs exactly one rhs group dimension when the lhs ragged \
             dimension is a free one, got []",
        ),
        (
            ragged(&m, &experts, &ints, &[1], &[0]),
            "lax.ragged_dot_general: takes no rhs group dimensions when the lhs ragged dimension \
             is a contracting or batch one, got [0]",
        ),
        (
            ragged(&m, &experts, &jnp::reshape(&ints, &[1, 2]), &[0], &[0]),
            "lax.ragged_dot_general: expected group_sizes to have shape [2], got [1, 2]",
        ),
        (
            oxla::lax::scatter_apply(
                &v,
                &Array::from_slice(&[1i32], &[1, 1]).unwrap(),
                |e| oxla::lax::convert_element_type(e, DType::I32),
                oxla::lax::ScatterDimensionNumbers {
                    update_window_dims: [].into_iter().collect(),
                    inserted_window_dims: [0].into_iter().collect(),
                    scatter_dims_to_operand_dims: [0].into_iter().collect(),
                },
                &[1],
                oxla::lax::GatherMode::Fill,
            ),
            "lax.scatter_apply: func must return a scalar of the operand's dtype f32, got i32[]",
        ),
        (
            oxla::lax::scaled_dot(&v, &v, None, None, None, None),
            "lax.scaled_dot: does not support rank-0 and rank-1 operands without dimension \
             numbers, got lhs of shape [4]",
        ),
        (
            oxla::lax::scaled_dot(&m, &jnp::transpose(&m, None), Some(&m), None, None, None),
            "lax.scaled_dot: lhs contracting dimension 1 of size 3 must be a multiple, at least \
             twice, of its scale's size 3",
        ),
        (
            oxla::lax::scaled_dot(&m, &jnp::transpose(&m, None), Some(&v), None, None, None),
            "lax.scaled_dot: all input tensors must have the same rank",
        ),
        (
            oxla::lax::scaled_dot(&m, &m, None, None, None, None),
            "lax.scaled_dot: dimension numbers (([1], [0]), ([], [])) do not fit lhs [2, 3] and \
             rhs [2, 3]: lhs dimension 1 (size 3) does not match rhs dimension 0 (size 2)",
        ),
        (
            oxla::lax::conv_general_dilated_patches(
                &m,
                &[2, 2, 2],
                &[1],
                &oxla::lax::Padding::Valid,
                None,
                None,
                None,
                None,
            ),
            "lax.conv_general_dilated_patches: needs a filter shape for each of the 0 spatial",
        ),
        (
            oxla::lax::linalg::lu_solve(&m, &v, &v, 0),
            "lax.linalg.lu_solve: the LU factors must be (a batch of) square matrices",
        ),
        (
            la::multi_dot(&[]),
            "jnp.linalg.multi_dot: needs at least two arrays",
        ),
        (
            la::multi_dot(&[&m, &v, &m]),
            "jnp.linalg.multi_dot: array 1 has rank 1",
        ),
        (
            la::cross(&v, &v),
            "jnp.linalg.cross: needs 2- or 3-vectors along the last axis",
        ),
        (
            la::outer(&m, &v),
            "jnp.linalg.outer: takes vectors, got ranks 2 and 1",
        ),
        (
            jnp::convolve(&m, &v, "full"),
            "jnp.convolve: only 1-d inputs are supported",
        ),
        (
            jnp::correlate(&v, &v, "wide"),
            "jnp.correlate: mode must be full, same or valid, got wide",
        ),
        (
            jnp::round(&ints, -1),
            "round of integers is not implemented for decimals < 0 (got -1)",
        ),
        (
            jnp::histogram(&v, &jnp::Bins::Count(0), None, None, false).0,
            "jnp.histogram_bin_edges: bins must be a positive count, got 0",
        ),
        (
            jnp::histogram(&v, &jnp::Bins::Count(3), None, Some(&m), false).0,
            "jnp.histogram: weights should have the same shape as a ([4]), got [2, 3]",
        ),
        (
            jnp::histogramdd(&v, &[jnp::Bins::Count(2)], None, None, false).0,
            "jnp.histogramdd: sample must be [N, D], got shape [4]",
        ),
        (
            jnp::histogramdd(
                &m,
                &[jnp::Bins::Count(2), jnp::Bins::Count(2)],
                None,
                None,
                false,
            )
            .0,
            "jnp.histogramdd: should be a bin for each dimension (3), got 2",
        ),
        (
            jnp::place(&m, &v, &v),
            "jnp.place: arr and mask must be the same size",
        ),
        (
            jnp::put_along_axis(&m, &v, &v, Some(1)),
            "jnp.put_along_axis: arr and indices must have the same rank, got 2 and 1",
        ),
        (
            jnp::choose(&v, &[&v], jnp::IndexMode::Wrap),
            "jnp.choose: `a` array must be integer typed",
        ),
        (
            jnp::choose(&ints, &[&v, &v], jnp::IndexMode::Raise),
            "jnp.choose: invalid entry in choice array",
        ),
        (
            jnp::delete(&m, &jnp::Positions::One(3), Some(0)),
            "jnp.delete: index 3 is out of bounds for axis 0 with size 2",
        ),
        (
            jnp::insert(&m, &jnp::Positions::Many(vec![0, 1]), &v, Some(1)),
            "jnp.insert: 2 positions and 4 values along the axis do not broadcast",
        ),
        (
            jnp::unique(
                &m,
                &jnp::UniqueOptions {
                    axis: Some(2),
                    ..Default::default()
                },
            ),
            "jnp.unique: axis 2 is out of bounds for an array of rank 2",
        ),
        (
            jnp::unique(
                &jnp::zeros(&[0], DType::F32),
                &jnp::UniqueOptions {
                    size: Some(2),
                    ..Default::default()
                },
            ),
            "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be \
             specified",
        ),
    ];
    for (out, want) in cases {
        let err = out
            .check()
            .map(|_| format!("no error, wanted: {want}"))
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(_) | Error::Shape(_)),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains(want), "{text}\nwanted: {want}");
        assert!(text.contains("errors.rs"), "no caller line: {text}");
    }
    // The arrays used are intact.
    assert_eq!(
        m.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

/// `lax.betainc` differentiates in `x` only: a gradient in `a` or `b` is
/// an error, as in JAX; the one in `x` is a value.
#[test]
fn betainc_has_no_gradient_in_its_parameters_as_in_jax() {
    let a = Array::scalar(2.0f32).unwrap();
    let b = Array::scalar(3.0f32).unwrap();
    let x = Array::scalar(0.4f32).unwrap();
    let (b2, x2) = (b.clone(), x.clone());
    let err = oxla::grad(move |a: Array| oxla::lax::betainc(&a, &b2, &x2))
        .call(a.clone())
        .and_then(|g| g.to_host().map(|_| g))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("gradient with respect to a and b is not supported"),
        "{err}"
    );
    let dx = oxla::grad(move |x: Array| oxla::lax::betainc(&a, &b, &x))
        .call(x)
        .unwrap()
        .item::<f32>()
        .unwrap();
    // x^(a-1) (1-x)^(b-1) / B(2, 3) = 0.4 · 0.36 · 12.
    assert!((dx - 1.728).abs() < 1e-5, "{dx}");
}

/// `jnp.vectorize` refuses a bad signature, a wrong number of arguments,
/// core sizes that disagree and outputs that do not fit the signature,
/// naming the caller's line.
#[test]
fn vectorize_checks_its_signature_arguments_and_outputs() {
    let m = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let v = f32s(&[1.0, 2.0], &[2]);
    let dot = |a: &[Array]| jnp::dot(&a[0], &a[1]);
    let cases = [
        (
            jnp::vectorize(dot).signature("(n),(n)").call(&[&m, &m]),
            "jnp.vectorize: not a valid gufunc signature: \"(n),(n)\"",
        ),
        (
            jnp::vectorize(dot).signature("(n),(n)->()").call(&[&m]),
            "jnp.vectorize: wrong number of positional arguments: expected 2, got 1",
        ),
        (
            jnp::vectorize(dot).signature("(n),(n)->()").call(&[&m, &v]),
            "jnp.vectorize: inconsistent size for core dimension \"n\": 2 vs 3",
        ),
        (
            jnp::vectorize(dot)
                .signature("(m,n),(n)->()")
                .call(&[&v, &v]),
            "jnp.vectorize: input 0 with shape [2] does not have enough dimensions for all core \
             dimensions [\"m\", \"n\"]",
        ),
        (
            jnp::vectorize(|a: &[Array]| jnp::outer(&a[0], &a[0]))
                .signature("(n)->(n)")
                .call(&[&m]),
            "jnp.vectorize: output 0 has shape [3, 3], which does not match its core dimensions \
             [\"n\"]",
        ),
        (
            jnp::vectorize(|a: &[Array]| jnp::stack(&[&a[0], &a[0]], 0)).call(&[&m]),
            "jnp.vectorize: output 0 has shape [2], which does not match its core dimensions []",
        ),
        (
            jnp::vectorize(dot).call(&[&m, &f32s(&[1.0, 2.0], &[2])]),
            "jnp.vectorize: the loop dimensions [2] of input 1 do not broadcast with [2, 3]",
        ),
    ];
    for (out, want) in cases {
        let err = out
            .map(|_| format!("no error, wanted: {want}"))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains(want), "{text}\nwanted: {want}");
        assert!(text.contains("errors.rs"), "no caller line: {text}");
    }
}
