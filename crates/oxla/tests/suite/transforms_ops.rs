//! The transformation rules of every op against JAX: jvp, vjp and vmap of
//! each case of reference/ops.py (oxla's version of it from ops_vs_jax.rs)
//! must match JAX's, computed by reference/transforms_ops.py; and vjp
//! against central finite differences. Each test checks every case and then
//! lists all the ones that differ (or fail), so one run shows everything.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use oxla::{Array, DType, jvp, numpy as jnp, vjp, vmap};
use oxla_npy::HostArray;
use oxla_testing::{Tolerance, compare};
use serde_json::Value;

use crate::ops_vs_jax::{apply, tolerance_of};
use crate::reference;

/// One section ("jvp", "vjp" or "vmap") of transforms_ops.py's output.
fn section(name: &str) -> &'static serde_json::Map<String, Value> {
    reference::script("transforms_ops.py")[name]
        .as_object()
        .unwrap_or_else(|| panic!("transforms_ops.py has no section {name}"))
}

fn arrays(v: &Value) -> Vec<Array> {
    v.as_array().unwrap().iter().map(reference::array).collect()
}

/// What a derivative must meet: a jvp or vjp rule is a chain of ops (the
/// derivative formula after the primal), and XLA builds may fuse and round
/// it differently.
const DERIVATIVE: Tolerance = Tolerance::chain(
    64.0,
    16.0,
    "a derivative rule is a chain of a few ops; XLA may fuse and reassociate it",
);

/// [`DERIVATIVE`], or the case's own tolerance where that is looser (GPU
/// contractions in TensorFloat-32).
fn derivative_tolerance(name: &str) -> Tolerance {
    match tolerance_of(name) {
        own @ Tolerance::Chain { relative, .. } if relative > 64.0 => own,
        _ => DERIVATIVE,
    }
}

/// How closely a vmapped case must match JAX's: as the case itself,
/// except for scaled dots with f32 results.
fn vmap_tolerance(name: &str) -> Tolerance {
    match name {
        "lax_scaled_dot_batched_f32" | "lax_scaled_dot_dims_unscaled_rhs" => Tolerance::chain(
            65536.0,
            65536.0,
            "one bf16 epsilon (2^16 f32 epsilons): oxla's vmap runs the batched scaled_dot op by \
             op, rounding each bf16 product, where JAX's batched scaled_dot is one program in \
             which XLA drops the f32-bf16-f32 round trips (eagerly and under jit oxla's is one \
             program too, and matches within 8 epsilons)",
        ),
        _ => tolerance_of(name),
    }
}

/// Records a mismatch of `got` and `want` in `failures`.
fn check(
    failures: &mut Vec<String>,
    what: &str,
    got: &HostArray,
    want: &Value,
    tolerance: Tolerance,
) {
    if let Err(e) = compare(got, &reference::host(want), tolerance) {
        failures.push(format!("{what}: {e}"));
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// Runs `f`, turning its error or its panic into a message, so that one
/// case that fails does not hide the others.
fn attempt<T>(f: impl FnOnce() -> oxla::Result<T>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("error: {e}")),
        Err(payload) => Err(format!("panicked: {}", panic_message(&*payload))),
    }
}

/// Fails listing every failure, or if fewer than `at_least` cases were
/// checked (so that a test cannot pass vacuously).
fn finish(what: &str, checked: usize, at_least: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures in {checked} {what} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        checked >= at_least,
        "only {checked} {what} cases were checked (expected at least {at_least})"
    );
}

#[test]
fn jvp_of_every_differentiable_op_matches_jax() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, case) in section("jvp") {
        let primals = arrays(&case["primals"]);
        // Integer and bool inputs have no tangent (JAX's float0): oxla
        // ignores what is passed for them.
        let tangents: Vec<Array> = primals
            .iter()
            .zip(case["tangents"].as_array().unwrap())
            .map(|(p, t)| {
                if t.is_null() {
                    jnp::zeros_like(p)
                } else {
                    reference::array(t)
                }
            })
            .collect();
        checked += 1;
        let got = attempt(|| {
            let (primal, tangent) = jvp(|xs: Vec<Array>| apply(name, &xs), &primals, &tangents)?;
            Ok((primal.to_host()?, tangent.to_host()?))
        });
        match got {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((primal, tangent)) => {
                check(
                    &mut failures,
                    &format!("{name} (primal)"),
                    &primal,
                    &case["primal"],
                    tolerance_of(name),
                );
                check(
                    &mut failures,
                    &format!("{name} (tangent)"),
                    &tangent,
                    &case["out"],
                    derivative_tolerance(name),
                );
            }
        }
    }
    finish("jvp", checked, 124, &failures);
}

#[test]
fn vjp_of_every_differentiable_op_matches_jax() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, case) in section("vjp") {
        let primals = arrays(&case["primals"]);
        let ct = reference::array(&case["ct"]);
        // JAX's cotangent of each input; null for integer and bool inputs,
        // whose cotangents (zeros) are not compared.
        let want = case["out"].as_array().unwrap();
        checked += 1;
        let got = attempt(|| {
            let (primal, pullback) = vjp(|xs: Vec<Array>| apply(name, &xs), &primals)?;
            let cts = pullback.call(&ct)?;
            let cts = cts
                .iter()
                .zip(want)
                .map(|(c, w)| {
                    if w.is_null() {
                        Ok(None)
                    } else {
                        c.to_host().map(Some)
                    }
                })
                .collect::<oxla::Result<Vec<_>>>()?;
            Ok((primal.to_host()?, cts))
        });
        match got {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((_, cts)) if cts.len() != want.len() => failures.push(format!(
                "{name}: {} input cotangents for {} inputs",
                cts.len(),
                want.len()
            )),
            Ok((primal, cts)) => {
                check(
                    &mut failures,
                    &format!("{name} (primal)"),
                    &primal,
                    &case["primal"],
                    tolerance_of(name),
                );
                for (i, (c, w)) in cts.iter().zip(want).enumerate() {
                    if let Some(c) = c {
                        check(
                            &mut failures,
                            &format!("{name} (cotangent {i})"),
                            c,
                            w,
                            derivative_tolerance(name),
                        );
                    }
                }
            }
        }
    }
    finish("vjp", checked, 124, &failures);
}

#[test]
fn vmap_of_every_op_matches_jax() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, case) in section("vmap") {
        let inputs = arrays(&case["inputs"]);
        let in_axes: Vec<Option<i64>> = case["in_axes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_i64())
            .collect();
        checked += 1;
        let got = attempt(|| {
            vmap(|xs: Vec<Array>| apply(name, &xs))
                .in_axes(&in_axes)
                .call(inputs)?
                .to_host()
        });
        match got {
            Err(e) => failures.push(format!("{name} (in_axes {in_axes:?}): {e}")),
            Ok(out) => check(
                &mut failures,
                &format!("{name} (in_axes {in_axes:?})"),
                &out,
                &case["out"],
                vmap_tolerance(name),
            ),
        }
    }
    finish("vmap", checked, 175, &failures);
}

/// A small deterministic generator (splitmix64) of uniform values in
/// [-1, 1).
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn vec(&mut self, shape: &[i64]) -> Vec<f32> {
        let n: i64 = shape.iter().product();
        (0..n).map(|_| self.uniform()).collect()
    }
}

/// Smooth cases of ops.py (all f32; take_along_axis's indices are held
/// fixed) for the finite-difference check.
const FINITE_DIFFERENCE_CASES: &[&str] = &[
    "exp",
    "tanh",
    "log",
    "sin",
    "mul",
    "div",
    "atan2",
    "dot_general",
    "conv_nhwc_same",
    "einsum_attention",
    "einsum_three",
    "einsum_repeated_kept",
    "softmax",
    "logsumexp",
    "jnp_var",
    "gelu",
    "cumprod",
    "take_along_axis",
    "mlp_loss",
    // JAX has no transpose for these modes (NotImplementedError), so the
    // vjp section leaves them out; finite differences check oxla's.
    "lax_ragged_dot_general_contracting",
    "lax_ragged_dot_general_contracting_per_batch",
    "lax_ragged_dot_general_batch",
];

/// ⟨ct, f(x+εv) − f(x−εv)⟩ / 2ε against ⟨vjp(ct), v⟩ for a random
/// cotangent ct and direction v of the float inputs, in f32 with ε = 1e-2:
/// they must agree within 2e-2 relative to the larger of the two and of the
/// sums of their terms' magnitudes (so that cancellation in an inner
/// product does not fail a correct derivative). JAX's own vjp passes each
/// case with a margin of 3x or more (mlp_loss, whose relus bend within ε)
/// and mostly 100x.
#[test]
fn vjp_matches_central_finite_differences() {
    const EPS: f32 = 1e-2;
    let mut rng = Rng(0x0A1B_2C3D_4E5F_6071);
    let mut failures = Vec::new();
    for &name in FINITE_DIFFERENCE_CASES {
        let x = reference::case(name).inputs;
        let got = attempt(|| {
            let (out, pullback) = vjp(|xs: Vec<Array>| apply(name, &xs), &x)?;
            let ct = rng.vec(out.shape());
            let cts = pullback.call(&Array::from_slice(&ct, out.shape())?)?;
            // A direction for each f32 input; None for the others.
            let dirs: Vec<Option<Vec<f32>>> = x
                .iter()
                .map(|a| (a.dtype() == DType::F32).then(|| rng.vec(a.shape())))
                .collect();
            let shifted = |sign: f32| -> oxla::Result<Vec<f64>> {
                let xs = x
                    .iter()
                    .zip(&dirs)
                    .map(|(a, v)| -> oxla::Result<Array> {
                        match v {
                            None => Ok(a.clone()),
                            Some(v) => {
                                let data: Vec<f32> = a
                                    .to_host()?
                                    .to_f64_vec()
                                    .iter()
                                    .zip(v)
                                    .map(|(b, d)| *b as f32 + sign * EPS * d)
                                    .collect();
                                Array::from_slice(&data, a.shape())
                            }
                        }
                    })
                    .collect::<oxla::Result<Vec<_>>>()?;
                Ok(apply(name, &xs).to_host()?.to_f64_vec())
            };
            let (plus, minus) = (shifted(1.0)?, shifted(-1.0)?);
            let eps = f64::from(EPS);
            let (mut fd, mut fd_terms) = (0.0f64, 0.0f64);
            for ((p, m), c) in plus.iter().zip(&minus).zip(&ct) {
                let t = f64::from(*c) * (p - m) / (2.0 * eps);
                fd += t;
                fd_terms += t.abs();
            }
            let (mut ad, mut ad_terms) = (0.0f64, 0.0f64);
            for (c, v) in cts.iter().zip(&dirs) {
                let Some(v) = v else { continue };
                for (g, d) in c.to_host()?.to_f64_vec().iter().zip(v) {
                    let t = g * f64::from(*d);
                    ad += t;
                    ad_terms += t.abs();
                }
            }
            Ok((fd, fd_terms, ad, ad_terms))
        });
        match got {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((fd, fd_terms, ad, ad_terms)) => {
                let scale = fd.abs().max(ad.abs()).max(fd_terms).max(ad_terms);
                // NaN disagrees.
                let agree = (fd - ad).abs() <= 2e-2 * scale && scale > 0.0;
                if !agree {
                    failures.push(format!(
                        "{name}: finite differences give {fd}, vjp {ad} (scale {scale})"
                    ));
                }
            }
        }
    }
    finish(
        "finite-difference",
        FINITE_DIFFERENCE_CASES.len(),
        FINITE_DIFFERENCE_CASES.len(),
        &failures,
    );
}

/// `lax.scatter_apply`, which JAX does not differentiate, is forward-mode
/// differentiable in oxla (a loop with a trip count found at run time):
/// its jvp along a random direction against central differences, where an
/// element hit twice gets the chain rule of `func` applied twice.
#[test]
fn scatter_apply_jvp_matches_central_finite_differences() {
    const EPS: f32 = 1e-2;
    let mut rng = Rng(0x5CA7_7E2A_FF1E_0001);
    for name in ["lax_scatter_apply_repeated", "lax_scatter_apply_rows_clip"] {
        let inputs = reference::case(name).inputs;
        let (x, at) = (inputs[0].clone(), inputs[1].clone());
        let direction = rng.vec(x.shape());
        let f = |x: Array| apply(name, &[x, at.clone()]);
        let v = Array::from_slice(&direction, x.shape()).unwrap();
        let (_, tangent) = jvp(
            |xs: Vec<Array>| f(xs[0].clone()),
            &vec![x.clone()],
            &vec![v],
        )
        .unwrap();
        let shifted = |sign: f32| {
            let data: Vec<f32> = x
                .to_vec::<f32>()
                .unwrap()
                .iter()
                .zip(&direction)
                .map(|(a, d)| a + sign * EPS * d)
                .collect();
            f(Array::from_slice(&data, x.shape()).unwrap())
                .to_vec::<f32>()
                .unwrap()
        };
        let (plus, minus) = (shifted(1.0), shifted(-1.0));
        for (i, (t, (p, m))) in tangent
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .zip(plus.iter().zip(&minus))
            .enumerate()
        {
            let fd = (p - m) / (2.0 * EPS);
            assert!(
                (t - fd).abs() <= 2e-2 * fd.abs().max(1.0),
                "{name} element {i}: jvp {t}, finite differences {fd}"
            );
        }
    }
}
