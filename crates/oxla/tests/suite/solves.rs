//! `lax::custom_linear_solve` and `lax::custom_root` against JAX
//! (reference/solves.py): values, jvps, gradients (also against central
//! differences), second derivatives, jit and vmap, for solvers that could
//! not be differentiated by themselves (conjugate gradients, Newton and
//! fixed-point iterations in while loops), a two-leaf vector, and the
//! errors of ill-formed solves.

use oxla::lax::{self, TransposeSolve};
use oxla::{Array, DType, grad, jit, jvp, numpy as jnp, vmap};

use crate::reference::{self, assert_central_difference, assert_close};

fn want(name: &str) -> &'static serde_json::Value {
    &reference::script("solves.py")[name]
}

fn f32s(data: &[f32], shape: &[i64]) -> Array {
    Array::from_slice(data, shape).unwrap()
}

fn spd() -> Array {
    f32s(&[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0], &[3, 3])
}
fn nonsym() -> Array {
    f32s(&[3.0, 1.0, -1.0, 0.5, 2.0, 0.3, -0.2, 0.4, 1.5], &[3, 3])
}
fn b() -> Array {
    f32s(&[1.0, -2.0, 0.5], &[3])
}
fn w() -> Array {
    f32s(&[0.3, -1.2, 0.8], &[3])
}
fn ta() -> Array {
    f32s(&[0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 0.2, 0.1, 0.4], &[3, 3])
}
fn tb() -> Array {
    f32s(&[0.5, 0.25, -1.0], &[3])
}
fn bs() -> Array {
    f32s(
        &[
            1.0, -2.0, 0.5, 0.3, 0.7, -1.1, 2.0, 0.0, 1.0, -0.5, 1.5, 0.2,
        ],
        &[4, 3],
    )
}

fn or_error(r: oxla::Result<Array>) -> Array {
    r.unwrap_or_else(Array::error)
}

/// `A x = b` by exact solves of `A` and `Aᵀ`.
fn dense_solve(a: &Array, b: &Array) -> Array {
    or_error(lax::custom_linear_solve(
        |x: Array| jnp::matmul(a, &x),
        b,
        |_, b: Array| jnp::linalg::solve(a, &b),
        TransposeSolve::solve(|_, b: Array| jnp::linalg::solve(&jnp::matrix_transpose(a), &b)),
    ))
}

/// Conjugate gradients, four steps in a while loop (which reverse mode
/// cannot go through by itself).
fn cg(matvec: &dyn Fn(Array) -> Array, b: Array) -> Array {
    let state = (
        Array::scalar(0i32).unwrap(),
        jnp::zeros_like(&b),
        b.clone(),
        b.clone(),
        jnp::vdot(&b, &b),
    );
    let out = lax::while_loop(
        |s: &(Array, Array, Array, Array, Array)| jnp::less(&s.0, &Array::weak_scalar(4i32)),
        |(i, x, r, p, rs): (Array, Array, Array, Array, Array)| {
            let ap = matvec(p.clone());
            let alpha = &rs / &jnp::vdot(&p, &ap);
            let x = &x + &(&alpha * &p);
            let r = &r - &(&alpha * &ap);
            let rs_new = jnp::vdot(&r, &r);
            let p = &r + &(&(&rs_new / &rs) * &p);
            (i + 1, x, r, p, rs_new)
        },
        state,
    );
    match out {
        Ok((_, x, ..)) => x,
        Err(e) => Array::error(e),
    }
}

fn cg_solve(a: &Array, b: &Array) -> Array {
    or_error(lax::custom_linear_solve(
        |x: Array| jnp::matmul(a, &x),
        b,
        cg,
        TransposeSolve::Symmetric,
    ))
}

fn dense_loss((a, b): (Array, Array)) -> Array {
    jnp::sum(&(w() * dense_solve(&a, &b)), None, false)
}

fn cg_loss((a, b): (Array, Array)) -> Array {
    jnp::sum(&(w() * cg_solve(&a, &b)), None, false)
}

#[test]
fn custom_linear_solve_matches_jax_in_value_jvp_and_gradient() {
    let (a, b) = (nonsym(), b());
    assert_close(&dense_solve(&a, &b), want("dense_x"), "dense x");
    let (ga, gb) = grad(dense_loss).call((a.clone(), b.clone())).unwrap();
    assert_close(&ga, want("dense_grad_a"), "dense grad a");
    assert_close(&gb, want("dense_grad_b"), "dense grad b");
    assert_central_difference(
        &[a.clone(), b.clone()],
        &[ga, gb],
        |p| dense_loss((p[0].clone(), p[1].clone())),
        |i, k| [0.3, -0.7, 0.5, 0.2][(i + k) % 4],
    );
    let (_, t) = jvp(
        |(a, b): (Array, Array)| dense_solve(&a, &b),
        &(a.clone(), b.clone()),
        &(ta(), tb()),
    )
    .unwrap();
    assert_close(&t, want("dense_jvp"), "dense jvp");
    let jitted = jit(|(a, b): (Array, Array)| grad(dense_loss).call((a, b)).map(|g| g.0));
    assert_close(
        &jitted.call((a, b)).unwrap(),
        want("dense_jit_grad_a"),
        "jit(grad) in a",
    );
}

#[test]
fn an_iterative_solver_in_a_while_loop_is_differentiated_implicitly() {
    let (a, b) = (spd(), b());
    assert_close(&cg_solve(&a, &b), want("cg_x"), "cg x");
    let (ga, gb) = grad(cg_loss).call((a.clone(), b.clone())).unwrap();
    assert_close(&ga, want("cg_grad_a"), "cg grad a");
    assert_close(&gb, want("cg_grad_b"), "cg grad b");
    assert_central_difference(
        &[a.clone(), b.clone()],
        &[ga, gb],
        |p| cg_loss((p[0].clone(), p[1].clone())),
        |i, k| [0.3, -0.7, 0.5, 0.2][(i + 2 * k) % 4],
    );
    let sym_ta = &ta() + &jnp::matrix_transpose(&ta());
    let (_, t) = jvp(
        |(a, b): (Array, Array)| cg_solve(&a, &b),
        &(a.clone(), b.clone()),
        &(sym_ta, tb()),
    )
    .unwrap();
    assert_close(&t, want("cg_jvp"), "cg jvp");
    // A second derivative: the rules' own solves are differentiated again.
    let shifted = |s: Array| {
        let shifted = &a + &(&s * &jnp::eye(3, DType::F32));
        jnp::sum(&(w() * cg_solve(&shifted, &b)), None, false)
    };
    let second = grad(|s: Array| or_error(grad(shifted).call(s)))
        .call(Array::scalar(0.3f32).unwrap())
        .unwrap();
    assert_close(&second, want("cg_second"), "grad(grad)");
}

#[test]
fn custom_linear_solve_batches_operators_and_right_hand_sides() {
    let solve = |(a, b): (Array, Array)| dense_solve(&a, &b);
    let got = vmap(solve)
        .in_axes(&[None, Some(0)])
        .call((nonsym(), bs()))
        .unwrap();
    assert_close(&got, want("vmap_b"), "vmap over b");
    let got = vmap(solve)
        .in_axes(&[None, Some(1)])
        .call((nonsym(), jnp::matrix_transpose(&bs())))
        .unwrap();
    assert_close(&got, want("vmap_b_axis1"), "vmap over b at axis 1");
    let as_ = jnp::stack(
        &[
            &nonsym(),
            &(jnp::matrix_transpose(&nonsym()) + jnp::eye(3, DType::F32)),
        ],
        0,
    );
    let got = vmap(solve)
        .in_axes(&[Some(0), None])
        .call((as_.clone(), b()))
        .unwrap();
    assert_close(&got, want("vmap_a"), "vmap over a");
    let two_bs = lax::slice(&bs(), &[0, 0], &[2, 3], None);
    let got = vmap(solve).call((as_, two_bs)).unwrap();
    assert_close(&got, want("vmap_both"), "vmap over both");
    let got = vmap(|(a, b): (Array, Array)| grad(cg_loss).call((a, b)).map(|g| g.0))
        .in_axes(&[None, Some(0)])
        .call((spd(), bs()))
        .unwrap();
    assert_close(&got, want("vmap_grad_a"), "vmap(grad)");
    let got = grad(|a: Array| {
        let xs = or_error(vmap(solve).in_axes(&[None, Some(0)]).call((a, bs())));
        jnp::sum(&(&xs * &xs), None, false)
    })
    .call(nonsym())
    .unwrap();
    assert_close(&got, want("grad_vmap_b"), "grad(vmap)");
}

#[test]
fn custom_linear_solve_takes_a_vector_of_several_leaves() {
    let m1 = f32s(&[2.0, 0.5, -0.3, 1.5], &[2, 2]);
    let m2 = f32s(&[3.0, 0.2, 0.1, 0.4, 2.5, -0.2, 0.0, 0.3, 1.8], &[3, 3]);
    let k = f32s(&[0.5, -1.0, 0.2, 0.3, -0.4, 0.6], &[3, 2]);
    let b1 = f32s(&[1.0, -0.5], &[2]);
    let b2 = f32s(&[0.3, 2.0, -1.0], &[3]);
    let block_solve = |m1: &Array, m2: &Array, k: &Array, b: (Array, Array)| {
        let solved = lax::custom_linear_solve(
            |(x1, x2): (Array, Array)| {
                (
                    jnp::matmul(m1, &x1),
                    jnp::matmul(m2, &x2) + jnp::matmul(k, &x1),
                )
            },
            &b,
            |_, (b1, b2): (Array, Array)| {
                let x1 = jnp::linalg::solve(m1, &b1);
                let x2 = jnp::linalg::solve(m2, &(&b2 - &jnp::matmul(k, &x1)));
                (x1, x2)
            },
            TransposeSolve::solve(|_, (b1, b2): (Array, Array)| {
                let t = jnp::matrix_transpose;
                let y2 = jnp::linalg::solve(&t(m2), &b2);
                let y1 = jnp::linalg::solve(&t(m1), &(&b1 - &jnp::matmul(&t(k), &y2)));
                (y1, y2)
            }),
        );
        solved.unwrap_or_else(|e| (Array::error(e.clone()), Array::error(e)))
    };
    let (x1, x2) = block_solve(&m1, &m2, &k, (b1.clone(), b2.clone()));
    assert_close(&x1, want("block_x1"), "block x1");
    assert_close(&x2, want("block_x2"), "block x2");
    let loss = |(m1, m2, k, b1, b2): (Array, Array, Array, Array, Array)| {
        let (x1, x2) = block_solve(&m1, &m2, &k, (b1, b2));
        jnp::sum(&(x1 * f32s(&[1.0, -0.5], &[2])), None, false) + jnp::sum(&(w() * x2), None, false)
    };
    let g = grad(loss).call((m1, m2, k, b1, b2)).unwrap();
    for (got, name) in [g.0, g.1, g.2, g.3, g.4]
        .iter()
        .zip(["m1", "m2", "k", "b1", "b2"])
    {
        assert_close(got, want(&format!("block_grad_{name}")), name);
    }
}

/// √a as the root of x² − a, by twenty Newton steps in a while loop.
fn newton_sqrt(a: Array) -> Array {
    or_error(lax::custom_root(
        |x: Array| &x * &x - &a,
        &Array::scalar(1.0f32).unwrap(),
        |f, x0: Array| {
            let out = lax::while_loop(
                |(i, _): &(Array, Array)| jnp::less(i, &Array::weak_scalar(20i32)),
                |(i, x): (Array, Array)| (i + 1, &x - &(f(x.clone()) / (&x * 2.0))),
                (Array::scalar(0i32).unwrap(), x0),
            );
            out.map(|(_, x)| x).unwrap_or_else(Array::error)
        },
        |g, y: Array| &y / &g(Array::weak_scalar(1.0f32)),
    ))
}

/// The root of x + 0.3 tanh(M x) − p, by sixty fixed-point steps, with a
/// tangent solve through the linearized function's dense Jacobian.
fn fixed_point_root(p: &Array, m: &Array) -> Array {
    or_error(lax::custom_root(
        |x: Array| &x + &(jnp::tanh(&jnp::matmul(m, &x)) * 0.3) - p,
        &jnp::zeros(&[3], DType::F32),
        |f, x0: Array| {
            let out = lax::while_loop(
                |(i, _): &(Array, Array)| jnp::less(i, &Array::weak_scalar(60i32)),
                |(i, x): (Array, Array)| (i + 1, &x - &f(x.clone())),
                (Array::scalar(0i32).unwrap(), x0),
            );
            out.map(|(_, x)| x).unwrap_or_else(Array::error)
        },
        |g, y: Array| {
            let jacobian = or_error(oxla::jacfwd(g, &y));
            jnp::linalg::solve(&jacobian, &y)
        },
    ))
}

#[test]
fn custom_root_matches_jax_in_value_and_derivatives_of_any_order() {
    let two = Array::scalar(2.0f32).unwrap();
    assert_close(&newton_sqrt(two.clone()), want("sqrt"), "sqrt");
    assert_close(
        &grad(newton_sqrt).call(two.clone()).unwrap(),
        want("sqrt_grad"),
        "grad sqrt",
    );
    let second = grad(|a: Array| or_error(grad(newton_sqrt).call(a)))
        .call(two.clone())
        .unwrap();
    assert_close(&second, want("sqrt_second"), "grad(grad(sqrt))");
    let (_, t) = jvp(newton_sqrt, &two, &Array::scalar(0.5f32).unwrap()).unwrap();
    assert_close(&t, want("sqrt_jvp"), "jvp sqrt");
    let batch = f32s(&[1.0, 2.0, 4.0, 9.0], &[4]);
    let got = vmap(|a: Array| grad(newton_sqrt).call(a))
        .call(batch)
        .unwrap();
    assert_close(&got, want("sqrt_vmap_grad"), "vmap(grad(sqrt))");

    let p = f32s(&[0.5, -1.0, 2.0], &[3]);
    let m = f32s(&[0.8, -0.4, 0.3, 0.2, 0.9, -0.5, -0.6, 0.1, 0.7], &[3, 3]);
    assert_close(&fixed_point_root(&p, &m), want("root"), "fixed point");
    let loss = |(p, m): (Array, Array)| jnp::sum(&(w() * fixed_point_root(&p, &m)), None, false);
    let (gp, gm) = grad(loss).call((p.clone(), m.clone())).unwrap();
    assert_close(&gp, want("root_grad_p"), "root grad p");
    assert_close(&gm, want("root_grad_m"), "root grad m");
    assert_central_difference(
        &[p.clone(), m.clone()],
        &[gp, gm],
        |x| loss((x[0].clone(), x[1].clone())),
        |i, k| [0.4, -0.6, 0.2, 0.9][(i + k) % 4],
    );
    let jitted = jit(|(p, m): (Array, Array)| grad(loss).call((p, m)).map(|g| g.1));
    assert_close(
        &jitted.call((p, m)).unwrap(),
        want("root_jit_grad_m"),
        "jit(grad) in m",
    );
}

#[test]
fn ill_formed_solves_are_errors_naming_the_function_and_line() {
    let a = nonsym();
    let line = line!() + 1;
    let err = lax::custom_linear_solve(
        |x: Array| jnp::concatenate(&[&x, &x], 0),
        &b(),
        |_, b: Array| b,
        TransposeSolve::NotTransposable,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("custom_linear_solve")
            && err.contains("matvec returns f32[6]")
            && err.contains(&format!("solves.rs:{line}")),
        "{err}"
    );
    let err = lax::custom_linear_solve(
        |x: Array| jnp::matmul(&a, &x),
        &Array::from_slice(&[1i32, 2, 3], &[3]).unwrap(),
        |_, b: Array| b,
        TransposeSolve::NotTransposable,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("floating-point"), "{err}");
    // Forward mode needs no transposed solver; reverse mode does.
    let solve_only = |b: Array| {
        or_error(lax::custom_linear_solve(
            |x: Array| jnp::matmul(&a, &x),
            &b,
            |_, b: Array| jnp::linalg::solve(&a, &b),
            TransposeSolve::NotTransposable,
        ))
    };
    let (_, t) = jvp(solve_only, &b(), &tb()).unwrap();
    let (_, want_t) = jvp(|b: Array| dense_solve(&a, &b), &b(), &tb()).unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), want_t.to_vec::<f32>().unwrap());
    let err = grad(|b: Array| jnp::sum(&solve_only(b), None, false))
        .call(b())
        .unwrap_err()
        .to_string();
    assert!(err.contains("transpose_solve"), "{err}");
    let line = line!() + 1;
    let err = lax::custom_root(
        |x: Array| jnp::sum(&x, None, false),
        &b(),
        |_, x: Array| x,
        |_, y: Array| y,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("custom_root")
            && err.contains("f returns f32[]")
            && err.contains(&format!("solves.rs:{line}")),
        "{err}"
    );
    let err = lax::custom_root(
        |x: Array| &x * 2.0,
        &b(),
        |_, x: Array| x,
        |_, y: Array| lax::convert_element_type(&y, DType::F16),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("tangent_solve returns f16[3]"), "{err}");
}
