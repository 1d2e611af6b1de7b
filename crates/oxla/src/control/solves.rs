//! Solvers differentiated implicitly, as `jax.lax`'s
//! `custom_linear_solve` and `custom_root`: the user's solver computes the
//! value (a while loop, an iterative method, a factorization), and
//! derivatives come from the implicit function theorem, never from the
//! solver's own operations.

use std::sync::Arc;

use oxla_core::primitive::{call, control};
use oxla_core::{Aval, Location, OpaqueRule, Primitive, SubJaxpr};

use super::{avals_of, bind_tree, caller, trace_tree, usage};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};
use crate::transform::eval::{eval_jaxpr, trace_flat};
use crate::transform::jvp::jvp_jaxpr;
use crate::transform::rules::call::{CustomJvpRule, JvpRuleFn};
use crate::transform::support::{Tangent, bind_all, has_tangent, location, zeros};

/// A solver of `A x = b` given the operator `A` as a function (`matvec`
/// for [`custom_linear_solve`], the linearized function for
/// [`custom_root`]'s `tangent_solve`).
pub type LinearSolver<'f, T> = dyn Fn(&dyn Fn(T) -> T, T) -> T + 'f;

/// How [`custom_linear_solve`] solves the transposed system `Aᵀ x = b`,
/// which reverse-mode differentiation needs (JAX's `transpose_solve` and
/// `symmetric` arguments).
pub enum TransposeSolve<'f, T> {
    /// None given: forward mode works, reverse mode is an error.
    NotTransposable,
    /// `A` is symmetric: the solver solves the transposed system too.
    Symmetric,
    /// `transpose_solve(vecmat, b)` solves `Aᵀ x = b`, given `vecmat`,
    /// the transpose of the operator.
    Solve(Box<LinearSolver<'f, T>>),
}

impl<'f, T> TransposeSolve<'f, T> {
    /// [`TransposeSolve::Solve`] with `transpose_solve(vecmat, b)`.
    pub fn solve(transpose_solve: impl Fn(&dyn Fn(T) -> T, T) -> T + 'f) -> Self {
        TransposeSolve::Solve(Box::new(transpose_solve))
    }
}

/// The leaves of `tree` all carrying `e` (what a function that must return
/// a tree gives when it fails; the trace reports the error).
fn error_tree<T: Pytree>(tree: &TreeDef, e: Error) -> T {
    let mut leaves = (0..tree.num_leaves()).map(|_| Array::error(e.clone()));
    T::unflatten_from(tree, &mut leaves).expect("a structure rebuilt from its own leaf count")
}

/// Checks that a user's function returned a tree like the vector's, leaf
/// for leaf of the same types.
fn check_like(
    function: &'static str,
    what: &str,
    (tree, avals): (&TreeDef, &[Aval]),
    (out_tree, out): (&TreeDef, &[Aval]),
    location: Location,
) -> Result<()> {
    if tree != out_tree {
        return Err(usage(
            function,
            format!("{what} returns {out_tree}, but must return the structure {tree}"),
            location,
        ));
    }
    let paths = tree.leaf_paths();
    for (k, (got, want)) in out.iter().zip(avals).enumerate() {
        if got.dtype != want.dtype || got.shape != want.shape {
            let at = match paths.get(k).map(String::as_str) {
                None | Some("") => String::new(),
                Some(path) => format!(" at {path}"),
            };
            return Err(usage(
                function,
                format!("{what} returns {got}{at}, but must return {want}"),
                location,
            ));
        }
    }
    Ok(())
}

/// A function of the vector traced on its types, checked to return a
/// vector of the same structure and types: (jaxpr, captured values).
fn trace_vector_map<T: Pytree>(
    function: &'static str,
    what: &str,
    f: impl FnOnce(T) -> T,
    tree: &TreeDef,
    avals: &[Aval],
    location: Location,
) -> Result<(SubJaxpr, Vec<Array>)> {
    let (jaxpr, consts, out_tree) = trace_tree(f, tree, avals, location)?;
    check_like(
        function,
        what,
        (tree, avals),
        (&out_tree, &jaxpr.out_avals()),
        location,
    )?;
    Ok((SubJaxpr::new(jaxpr), consts))
}

/// Checks that the vector's leaves are floating-point or complex.
fn check_inexact(
    function: &'static str,
    what: &str,
    avals: &[Aval],
    location: Location,
) -> Result<()> {
    match avals
        .iter()
        .enumerate()
        .find(|(_, a)| !a.dtype.is_inexact())
    {
        Some((i, a)) => Err(usage(
            function,
            format!(
                "{what} leaf {i} is {a}: a linear solve takes floating-point or complex arrays"
            ),
            location,
        )),
        None => Ok(()),
    }
}

/// `x` with `matvec(x) = b`, computed by `solve(matvec, b)` and
/// differentiated implicitly, as `jax.lax.custom_linear_solve`: the
/// tangent of `x` is another solve, `A⁻¹ (ḃ − Ȧ x)` (so an iterative
/// solver is never differentiated through its iterations), and reverse
/// mode solves the transposed system with `transpose_solve`. `matvec` must
/// be linear; `b` and `x` are pytrees of the same structure and types (the
/// operator is square). Jit, vmap (with batched operators or right-hand
/// sides) and derivatives of any order go through it.
///
/// ```
/// use oxla::{Array, grad, lax, numpy as jnp};
/// use oxla::lax::TransposeSolve;
/// # fn main() -> oxla::Result<()> {
/// // Solve a diagonal system with a solver that divides, and differentiate
/// // the solution in the diagonal: d(b / d) / dd = -b / d².
/// let loss = |d: Array| {
///     let b = Array::from_slice(&[2.0f32, 3.0], &[2]).unwrap_or_else(Array::error);
///     let x = lax::custom_linear_solve(
///         |x: Array| &d * &x,
///         &b,
///         |_matvec, b: Array| &b / &d,
///         TransposeSolve::Symmetric,
///     )
///     .unwrap_or_else(Array::error);
///     jnp::sum(&x, None, false)
/// };
/// let d = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// assert_eq!(grad(loss).call(d)?.to_vec::<f32>()?, vec![-2.0, -0.75]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn custom_linear_solve<T: Pytree>(
    matvec: impl Fn(T) -> T,
    b: &T,
    solve: impl Fn(&dyn Fn(T) -> T, T) -> T,
    transpose_solve: TransposeSolve<'_, T>,
) -> Result<T> {
    const NAME: &str = "custom_linear_solve";
    let location = caller();
    let (leaves, tree) = b.flatten();
    let avals = avals_of(&leaves)?;
    check_inexact(NAME, "b", &avals, location)?;
    let (matvec_jaxpr, matvec_consts) =
        trace_vector_map(NAME, "matvec", &matvec, &tree, &avals, location)?;
    let (solve_jaxpr, solve_consts) = trace_vector_map(
        NAME,
        "solve",
        |b: T| solve(&matvec, b),
        &tree,
        &avals,
        location,
    )?;
    let transposed = match transpose_solve {
        TransposeSolve::NotTransposable => None,
        TransposeSolve::Symmetric => Some((
            (matvec_jaxpr.clone(), matvec_consts.clone()),
            (solve_jaxpr.clone(), solve_consts.clone()),
        )),
        TransposeSolve::Solve(transpose_solve) => {
            let transpose =
                crate::autodiff::linear_transpose(|x: T| -> Result<T> { Ok(matvec(x)) }, b)?;
            let vecmat = |y: T| transpose.call(&y).unwrap_or_else(|e| error_tree(&tree, e));
            let vecmat_traced = trace_vector_map(NAME, "vecmat", vecmat, &tree, &avals, location)?;
            let solve_t = trace_vector_map(
                NAME,
                "transpose_solve",
                |b: T| transpose_solve(&vecmat, b),
                &tree,
                &avals,
                location,
            )?;
            Some((vecmat_traced, solve_t))
        }
    };
    let ((vecmat, vecmat_consts), (transpose_solve, transpose_consts)) = match transposed {
        Some(((v, vc), (t, tc))) => ((Some(v), vc), (Some(t), tc)),
        None => ((None, Vec::new()), (None, Vec::new())),
    };
    let params = control::LinearSolveParams {
        matvec: matvec_jaxpr,
        vecmat,
        solve: solve_jaxpr,
        transpose_solve,
        consts: control::LinearSolveConsts {
            matvec: matvec_consts.len(),
            vecmat: vecmat_consts.len(),
            solve: solve_consts.len(),
            transpose_solve: transpose_consts.len(),
        },
    };
    let mut operands = matvec_consts;
    operands.extend(vecmat_consts);
    operands.extend(solve_consts);
    operands.extend(transpose_consts);
    operands.extend(leaves);
    bind_tree(
        Primitive::Control(control::Op::LinearSolve(params)),
        &operands,
        &tree,
        location,
    )
}

/// The three functions of a [`custom_root`], each taking its captured
/// values then its arguments, and how many values each captured.
struct RootFunctions {
    /// `(f's captured values, x) → f(x)`.
    f: SubJaxpr,
    /// `(captured values, x, b) → tangent_solve(∂f(x), b)`.
    linearize_and_solve: SubJaxpr,
    /// Captured values of f, solve, linearize_and_solve.
    counts: [usize; 3],
    /// The primitive's body: `(all captured values, guess) → root`.
    body: SubJaxpr,
}

/// The `custom_jvp_call` of a root: its value is the solver's, its jvp rule
/// the implicit function theorem's (which binds a fresh one for the
/// primal, so derivatives of any order use the rule again).
fn root_primitive(functions: Arc<RootFunctions>) -> Primitive {
    let body = functions.body.clone();
    let rule: Arc<JvpRuleFn> = Arc::new(move |primals: &[Array], tangents: &[Tangent]| {
        root_jvp(&functions, primals, tangents)
    });
    let rule = CustomJvpRule {
        num_consts: 0,
        rule,
    };
    Primitive::Call(call::Op::CustomJvpCall {
        jaxpr: body,
        rule: OpaqueRule::new("custom_root", Arc::new(rule)),
    })
}

/// JAX's `_root_jvp`: with `u*(m)` the root of `f(m, u) = 0` in `u`, where
/// `m` are f's captured values, `∂u* = −(∂ᵤf)⁻¹ ∂ₘf ṁ`: the jvp of f in its
/// captured values at the root, then the user's tangent solve, negated.
fn root_jvp(
    functions: &Arc<RootFunctions>,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>)> {
    let [n_f, n_solve, n_ls] = functions.counts;
    let refs: Vec<&Array> = primals.iter().collect();
    let solution = bind_all(root_primitive(functions.clone()), &refs)?;
    let f_consts = &primals[..n_f];
    let moving: Vec<bool> = f_consts
        .iter()
        .zip(&tangents[..n_f])
        .map(|(p, t)| t.is_some() && has_tangent(p.dtype_or_bool()))
        .collect();
    let f_tangents: Vec<Array> = tangents[..n_f]
        .iter()
        .zip(&moving)
        .filter_map(|(t, m)| if *m { t.clone() } else { None })
        .collect();
    if f_tangents.is_empty() {
        let n = solution.len();
        return Ok((solution, vec![None; n]));
    }
    let mut nonzero = moving;
    nonzero.extend(std::iter::repeat_n(false, solution.len()));
    let (jvp, jvp_consts, out_nonzero) = jvp_jaxpr(functions.f.jaxpr(), &nonzero, &[], location())?;
    let mut args = f_consts.to_vec();
    args.extend(solution.iter().cloned());
    args.extend(f_tangents);
    let outs = eval_jaxpr(&jvp, &jvp_consts, &args)?;
    let mut f_dot = outs[solution.len()..].iter();
    let rhs: Vec<Array> = out_nonzero
        .iter()
        .zip(&solution)
        .map(|(nz, s)| match nz.then(|| f_dot.next()).flatten() {
            Some(t) => Ok(t.clone()),
            None => Ok(zeros(s.aval()?)),
        })
        .collect::<Result<_>>()?;
    let mut ls_args = primals[n_f + n_solve..n_f + n_solve + n_ls].to_vec();
    ls_args.extend(solution.iter().cloned());
    ls_args.extend(rhs);
    let solved = eval_jaxpr(functions.linearize_and_solve.jaxpr(), &[], &ls_args)?;
    let tangents = solved.iter().map(|t| Some(crate::lax::neg(t))).collect();
    Ok((solution, tangents))
}

/// A root `x` of `f(x) = 0`, computed by `solve(f, initial_guess)` and
/// differentiated implicitly, as `jax.lax.custom_root`: the tangent of the
/// root in the values `f` captures is `−(∂f/∂x)⁻¹ ∂f/∂m ṁ`, found by
/// `tangent_solve(g, y)`, which solves the linear `g(x) = y` (`g` is `f`
/// linearized at the root; for a scalar `|g, y| &y / &g(1)` does). The
/// solver's own operations (a while loop, say) are never differentiated,
/// so reverse mode works through any solver as long as `tangent_solve` is
/// differentiable (use [`custom_linear_solve`] inside it for an iterative
/// one). `f` returns a tree like `initial_guess`.
///
/// ```
/// use oxla::{Array, grad, lax};
/// # fn main() -> oxla::Result<()> {
/// // √a as the root of x² − a, by ten Newton steps; its derivative is
/// // 1 / (2√a), from the rule, not from the steps.
/// let sqrt = |a: Array| {
///     lax::custom_root(
///         |x: Array| &x * &x - &a,
///         &Array::weak_scalar(1.0f32),
///         |f, x0: Array| {
///             let mut x = x0;
///             for _ in 0..10 {
///                 let fx = f(x.clone());
///                 x = &x - &(&fx / &(&x * 2.0));
///             }
///             x
///         },
///         |g, y: Array| &y / &g(Array::weak_scalar(1.0f32)),
///     )
///     .unwrap_or_else(Array::error)
/// };
/// let a = Array::scalar(4.0f32)?;
/// assert_eq!(sqrt(a.clone()).item::<f32>()?, 2.0);
/// assert_eq!(grad(sqrt).call(a)?.item::<f32>()?, 0.25);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn custom_root<T: Pytree>(
    f: impl Fn(T) -> T,
    initial_guess: &T,
    solve: impl Fn(&dyn Fn(T) -> T, T) -> T,
    tangent_solve: impl Fn(&dyn Fn(T) -> T, T) -> T,
) -> Result<T> {
    const NAME: &str = "custom_root";
    let location = caller();
    let (guess, tree) = initial_guess.flatten();
    let avals = avals_of(&guess)?;
    let (f_jaxpr, f_consts) = trace_vector_map(NAME, "f", &f, &tree, &avals, location)?;
    let (solve_jaxpr, solve_consts) =
        trace_vector_map(NAME, "solve", |x: T| solve(&f, x), &tree, &avals, location)?;
    // (x, b) ↦ tangent_solve(∂f(x), b), traced on two vectors.
    let n = guess.len();
    let pair_avals: Vec<Aval> = avals.iter().chain(&avals).cloned().collect();
    let mut solved_tree = None;
    let (ls_jaxpr, ls_consts) = trace_flat(&pair_avals, true, location, |xs| {
        let (x, b) = xs.split_at(n);
        let x = T::unflatten_from(&tree, &mut x.iter().cloned())?;
        let b = T::unflatten_from(&tree, &mut b.iter().cloned())?;
        let (_, linear) = crate::autodiff::linearize(&f, &x)?;
        let g = |t: T| linear.call(&t).unwrap_or_else(|e| error_tree(&tree, e));
        let (outs, out_tree) = tangent_solve(&g, b).flatten();
        solved_tree = Some(out_tree);
        Ok(outs)
    })?;
    check_like(
        NAME,
        "tangent_solve",
        (&tree, &avals),
        (&solved_tree.expect("traced"), &ls_jaxpr.out_avals()),
        location,
    )?;
    let counts = [f_consts.len(), solve_consts.len(), ls_consts.len()];
    let mut operands = f_consts;
    operands.extend(solve_consts);
    operands.extend(ls_consts);
    let n_consts = operands.len();
    operands.extend(guess);
    // The body: every captured value and the guess in, the solver's root out.
    let all_avals = avals_of(&operands)?;
    let (body, _) = trace_flat(&all_avals, true, location, |xs| {
        let mut args = xs[counts[0]..counts[0] + counts[1]].to_vec();
        args.extend_from_slice(&xs[n_consts..]);
        eval_jaxpr(solve_jaxpr.jaxpr(), &[], &args)
    })?;
    let functions = Arc::new(RootFunctions {
        f: f_jaxpr,
        linearize_and_solve: SubJaxpr::new(ls_jaxpr),
        counts,
        body: SubJaxpr::new(body),
    });
    bind_tree(root_primitive(functions), &operands, &tree, location)
}
