//! Complex numbers against JAX: the gradient convention for real-valued
//! functions of complex inputs, holomorphic `grad`, `jacfwd` and `jacrev`,
//! `jvp` and `vjp` of complex functions, numpy's printing, file formats and
//! the errors JAX gives. (Every complex primitive and jax.numpy function is
//! compared eagerly, under jit, with its jvp, vjp and vmap and as a
//! portable artifact in ops_vs_jax and transforms_ops: ops.py's `c_*`
//! cases.)

use num_complex::Complex32;
use oxla::numpy as jnp;
use oxla::{Array, DType, grad, jacobian, jvp, lax, vjp};
use oxla_testing::{Tolerance, compare};

use crate::reference;

fn data() -> &'static serde_json::Value {
    reference::script("complex_numbers.py")
}

fn input(name: &str) -> Array {
    reference::array(&data()["inputs"][name])
}

/// Several ops, each rounded: a gradient is a short chain.
const CHAIN: Tolerance = Tolerance::chain(
    16.0,
    4.0,
    "a gradient is a chain of a few complex ops, which XLA may fuse and round differently",
);

fn check(name: &str, got: &Array) {
    let want = reference::host(&data()["outputs"][name]);
    let got = got.to_host().unwrap();
    if let Err(e) = compare(&got, &want, CHAIN) {
        panic!("{name}: {e}");
    }
}

fn squared_norm(z: &Array, w: &Array) -> Array {
    jnp::sum(
        &jnp::add(&jnp::real(&(z * &jnp::conj(z))), &jnp::real(&(z * w))),
        None,
        false,
    )
}

fn holomorphic_vector(z: &Array) -> Array {
    let w = input("w");
    &(z * z) * &w + jnp::log(z)
}

#[test]
fn gradients_of_real_functions_of_complex_inputs_follow_jax() {
    let (z, w) = (input("z"), input("w"));
    let (gz, gw) = grad(|(z, w): (Array, Array)| squared_norm(&z, &w))
        .call((z.clone(), w.clone()))
        .unwrap();
    check("grad_squared_norm", &gz);
    check("grad_squared_norm_w", &gw);
    let g = grad(|z: Array| {
        jnp::sum(
            &jnp::add(&jnp::abs(&(jnp::exp(&z) * &w)), &jnp::angle(&z, false)),
            None,
            false,
        )
    })
    .call(z)
    .unwrap();
    check("grad_abs_of_exp", &g);
}

#[test]
fn holomorphic_derivatives_match_jax() {
    let z = input("z");
    let g = grad(|z: Array| jnp::sum(&(jnp::sin(&z) * &z), None, false))
        .holomorphic()
        .call(z.clone())
        .unwrap();
    check("grad_holomorphic", &g);
    let s = input("s");
    let g = grad(|s: Array| &(&s * &s) * &jnp::exp(&s))
        .holomorphic()
        .call(s)
        .unwrap();
    check("grad_holomorphic_scalar", &g);
    let forward = jacobian::jacfwd(|z: Array| holomorphic_vector(&z))
        .holomorphic()
        .call(z.clone())
        .unwrap();
    check("jacfwd_holomorphic", &forward.rows[0]);
    let reverse = jacobian::jacrev(|z: Array| holomorphic_vector(&z))
        .holomorphic()
        .call(z.clone())
        .unwrap();
    check("jacrev_holomorphic", &reverse.rows[0]);
    let real = jacobian::jacrev(|z: Array| jnp::add(&jnp::square(&jnp::abs(&z)), &jnp::imag(&z)))
        .call(z.clone())
        .unwrap();
    check("jacrev_real", &real.rows[0]);
}

#[test]
fn jvp_and_vjp_of_complex_functions_match_jax() {
    let (z, w) = (input("z"), input("w"));
    let (_, tangent) = jvp(|z: Array| holomorphic_vector(&z), &z, &w).unwrap();
    check("jvp_complex", &tangent);
    let (_, pullback) = vjp(|z: Array| holomorphic_vector(&z), &z).unwrap();
    check("vjp_complex", &pullback.call(&w).unwrap());
}

#[test]
fn complex_arrays_print_like_numpy() {
    let c = Complex32::new;
    let ours = [
        Array::from_slice(&[c(1.0, 2.0), c(3.5, -4.0)], &[2]).unwrap(),
        Array::from_slice(
            &[c(0.25, 0.0), c(-0.0, -1.0), c(2.0, 2.0), c(-3.5, 0.5)],
            &[2, 2],
        )
        .unwrap(),
        Array::from_slice(&[c(1.0, 2.0)], &[]).unwrap(),
    ];
    let printed: Vec<String> = ours.iter().map(|a| a.to_string()).collect();
    let numpy: Vec<&str> = data()["printed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(printed, numpy);
    assert_eq!(ours[0].aval().unwrap().to_string(), "c64[2]");
}

#[test]
fn complex_values_round_trip_through_the_host_and_npy_files() {
    let c = Complex32::new;
    let values = [c(1.0, -2.0), c(f32::INFINITY, 0.5), c(-0.0, 3.25)];
    let z = Array::from_slice(&values, &[3]).unwrap();
    assert_eq!(z.dtype(), DType::C64);
    assert_eq!(z.to_vec::<Complex32>().unwrap(), values);
    assert!(z.to_vec::<f32>().is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.npy");
    z.to_npy(&path).unwrap();
    let back = Array::from_npy(&path).unwrap();
    assert_eq!(back.dtype(), DType::C64);
    assert_eq!(back.to_vec::<Complex32>().unwrap(), values);
    // safetensors has complex64 and no complex128.
    let file = dir.path().join("z.safetensors");
    oxla_train::checkpoint::save_safetensors(&file, &vec![z.clone()]).unwrap();
    let loaded = oxla_train::checkpoint::load_safetensors(&file, &vec![z.clone()]).unwrap();
    assert_eq!(loaded[0].to_vec::<Complex32>().unwrap(), values);
}

#[test]
fn complex_misuse_is_an_error_naming_the_op_as_in_jax() {
    let z = input("z");
    let x = jnp::real(&z);
    let err = grad(|z: Array| jnp::sum(&(&z * &z), None, false))
        .call(z.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("grad requires real-valued outputs") && err.contains("holomorphic()"),
        "{err}"
    );
    let err = grad(|x: Array| jnp::sum(&(&x * &x), None, false))
        .holomorphic()
        .call(x.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("requires inputs with complex dtype"), "{err}");
    let err = grad(|z: Array| jnp::sum(&jnp::real(&z), None, false))
        .holomorphic()
        .call(z.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("requires a complex output"), "{err}");
    let err = jacobian::jacfwd(|z: Array| jnp::abs(&z))
        .call(z.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("jacfwd requires real-valued inputs"), "{err}");
    let err = jacobian::jacrev(|z: Array| &z * 2.0)
        .call(z.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("jacrev requires real-valued outputs"), "{err}");
    // Ops that have no complex meaning name the op, the operand and the line.
    let err = lax::rem(&z, &z).check().unwrap_err().to_string();
    assert!(
        err.contains("rem") && err.contains("c64[4]") && err.contains("complex_numbers.rs"),
        "{err}"
    );
    let err = lax::floor(&z).check().unwrap_err().to_string();
    assert!(err.contains("floor") && err.contains("c64[4]"), "{err}");
    let ints = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let err = lax::complex(&ints, &ints).check().unwrap_err().to_string();
    assert!(
        err.contains("complex") && err.contains("float32 or float64"),
        "{err}"
    );
    let err = lax::real(&x).check().unwrap_err().to_string();
    assert!(
        err.contains("real") && err.contains("a complex type"),
        "{err}"
    );
}

#[test]
fn fourier_transform_misuse_is_an_error_naming_the_function() {
    use oxla::lax::FftType;
    use oxla::numpy::fft::{self, Norm};
    let z = input("z");
    let x = jnp::real(&z);
    let message = |a: Array| a.check().unwrap_err().to_string();
    let err = message(fft::fft(&z, Some(0), -1, Norm::Backward));
    assert!(
        err.contains("jnp.fft: the lengths s [0] must be positive"),
        "{err}"
    );
    assert!(err.contains("complex_numbers.rs"), "{err}");
    let err = message(fft::fftn(&z, Some(&[2, 2]), Some(&[0]), Norm::Backward));
    assert!(err.contains("have different lengths"), "{err}");
    let z2 = jnp::reshape(&z, &[2, 2]);
    let err = message(fft::fftn(&z2, None, Some(&[0, -2]), Norm::Backward));
    assert!(err.contains("repeated axes"), "{err}");
    let err = message(fft::fft2(&z2, None, &[0], Norm::Backward));
    assert!(err.contains("jnp.fft2: takes 2 axes"), "{err}");
    let err = message(fft::fft(&z, None, 3, Norm::Backward));
    assert!(err.contains("axis 3 is out of range"), "{err}");
    let err = message(oxla::lax::fft(&z, FftType::Rfft, &[4]));
    assert!(err.contains("RFFT takes real operands, got c64"), "{err}");
    // The primitive's own shape rule: IRFFT's operand holds n/2 + 1
    // frequencies.
    let err = message(oxla::lax::fft(&z, FftType::Irfft, &[4]));
    assert!(
        err.contains("fft") && err.contains("trailing dimensions [3]") && err.contains("c64[4]"),
        "{err}"
    );
    let err = message(oxla::lax::fft(&x, FftType::Fft, &[2, 4]));
    assert!(err.contains("rank 1"), "{err}");
}
