//! Control flow that stays inside one compiled program, as `jax.lax`'s:
//! `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`, and the
//! implicitly differentiated solvers `custom_linear_solve` and
//! `custom_root` (in `solves`). Bodies are traced into closed sub-jaxprs;
//! what they capture (concrete arrays and tracers of enclosing
//! transformations) becomes explicit operands.

mod solves;

use oxla_core::primitive::control;
use oxla_core::{Aval, DType, Jaxpr, Location, Primitive, SubJaxpr};
pub use solves::{LinearSolver, TransposeSolve, custom_linear_solve, custom_root};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::lax;
use crate::pytree::{Pytree, TreeDef};
use crate::transform::eval::trace_flat;

#[track_caller]
fn caller() -> Location {
    crate::ops::current_location(std::panic::Location::caller())
}

fn avals_of(leaves: &[Array]) -> Result<Vec<Aval>> {
    leaves.iter().map(|x| x.aval().cloned()).collect()
}

/// `f` traced on arguments shaped like `leaves` (structure `tree`): the
/// jaxpr (constvars: what it captured), the captured values, the output
/// structure.
fn trace_tree<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    tree: &TreeDef,
    avals: &[Aval],
    location: Location,
) -> Result<(Jaxpr, Vec<Array>, TreeDef)> {
    let mut out_tree = None;
    let (jaxpr, consts) = trace_flat(avals, true, location, |xs| {
        let args = In::unflatten_from(tree, &mut xs.iter().cloned())?;
        let (outs, t) = f(args).flatten();
        out_tree = Some(t);
        Ok(outs)
    })?;
    Ok((jaxpr, consts, out_tree.expect("traced")))
}

/// Closed branches over one operand list: each branch takes every
/// branch's captured values (its own used, the others ignored), then the
/// operands. Returns the sub-jaxprs and the captured values in order.
pub(crate) fn join_branches(branches: Vec<(Jaxpr, Vec<Array>)>) -> (Vec<SubJaxpr>, Vec<Array>) {
    let all_consts: Vec<Array> = branches.iter().flat_map(|(_, c)| c.clone()).collect();
    let counts: Vec<usize> = branches.iter().map(|(_, c)| c.len()).collect();
    let const_avals: Vec<Aval> = branches
        .iter()
        .flat_map(|(j, _)| {
            j.constvars
                .iter()
                .map(|v| j.aval(*v).clone())
                .collect::<Vec<_>>()
        })
        .collect();
    let joined = branches
        .into_iter()
        .enumerate()
        .map(|(i, (mut j, _))| {
            let before: usize = counts[..i].iter().sum();
            let mut invars = Vec::with_capacity(const_avals.len() + j.invars.len());
            for (k, aval) in const_avals.iter().enumerate() {
                if k >= before && k < before + counts[i] {
                    invars.push(j.constvars[k - before]);
                } else {
                    let v = oxla_core::Var(j.avals.len() as u32);
                    j.avals.push(aval.clone());
                    invars.push(v);
                }
            }
            invars.extend(j.invars.iter().copied());
            j.constvars.clear();
            j.invars = invars;
            SubJaxpr::new(j)
        })
        .collect();
    (joined, all_consts)
}

/// Binds `primitive` on `operands` and rebuilds `Out` from the results.
fn bind_tree<Out: Pytree>(
    primitive: Primitive,
    operands: &[Array],
    out_tree: &TreeDef,
    location: Location,
) -> Result<Out> {
    let refs: Vec<&Array> = operands.iter().collect();
    let outs = crate::ops::bind_at(primitive, &refs, location)?;
    Out::unflatten_from(out_tree, &mut outs.into_iter())
}

/// A usage error of a control-flow function.
fn usage(function: &'static str, message: String, location: Location) -> Error {
    Error::Usage {
        function,
        message,
        location,
    }
}

/// Checks that every branch returns the first branch's structure and types.
fn check_branches(
    function: &'static str,
    outs: &[(Jaxpr, TreeDef)],
    location: Location,
) -> Result<()> {
    let (first, first_tree) = &outs[0];
    let want = first.out_avals();
    for (i, (j, tree)) in outs.iter().enumerate().skip(1) {
        if tree != first_tree {
            return Err(usage(
                function,
                format!("branch {i} returns {tree}, but branch 0 returns {first_tree}"),
                location,
            ));
        }
        let paths = tree.leaf_paths();
        for (k, (g, w)) in j.out_avals().iter().zip(&want).enumerate() {
            let path = paths.get(k).map(String::as_str).unwrap_or("");
            if g.dtype != w.dtype || g.shape != w.shape {
                return Err(usage(
                    function,
                    format!(
                        "branch {i} returns {g} for output {k}{path}, but branch 0 returns {w}"
                    ),
                    location,
                ));
            }
            if g.vma != w.vma {
                return Err(usage(
                    function,
                    format!(
                        "branch {i}'s output {k}{path} varies over the mesh axes {}, but branch \
                         0's over {} (inside a shard_map, branches agree on the axes their \
                         results vary over; make them agree with sharding::collectives::pvary)",
                        axes_text(&g.vma),
                        axes_text(&w.vma)
                    ),
                    location,
                ));
            }
        }
    }
    Ok(())
}

/// `branches[index](operands)` inside the compiled program, as
/// `jax.lax.switch`: `index` is an integer scalar, clamped into range.
/// Every branch takes the same operands and must return the same
/// structure and types. Differentiable in both modes; under `vmap` a
/// batched index runs every branch and selects.
///
/// ```
/// use oxla::{Array, jit, lax};
/// # fn main() -> oxla::Result<()> {
/// let f = jit(|(i, x): (Array, Array)| {
///     lax::switch(&i, &[&|x: Array| &x + 1.0, &|x: Array| &x * 2.0, &|x: Array| -&x], x)
/// });
/// let x = Array::from_slice(&[3.0f32], &[1])?;
/// assert_eq!(f.call((Array::scalar(1i32)?, x.clone()))?.to_vec::<f32>()?, vec![6.0]);
/// assert_eq!(f.call((Array::scalar(7i32)?, x))?.to_vec::<f32>()?, vec![-3.0]);   // clamped to 2
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn switch<In: Pytree, Out: Pytree>(
    index: &Array,
    branches: &[&dyn Fn(In) -> Out],
    operands: In,
) -> Result<Out::Value> {
    let location = caller();
    let aval = index.aval()?.clone();
    if aval.rank() != 0 || !(aval.dtype.is_int() || aval.dtype == DType::Bool) {
        return Err(usage(
            "switch",
            format!("the branch index must be an integer scalar, got {aval}"),
            location,
        ));
    }
    if branches.is_empty() {
        return Err(usage(
            "switch",
            "needs at least one branch".into(),
            location,
        ));
    }
    let index = lax::convert_element_type(index, DType::I32);
    let last = Array::weak_scalar((branches.len() - 1) as i32);
    let index = lax::clamp(&Array::weak_scalar(0i32), &index, &last);
    switch_clamped("switch", &index, branches, operands, location)
}

/// `switch` on an i32 index already in range.
fn switch_clamped<In: Pytree, Out: Pytree>(
    function: &'static str,
    index: &Array,
    branches: &[&dyn Fn(In) -> Out],
    operands: In,
    location: Location,
) -> Result<Out::Value> {
    let (leaves, tree) = operands.flatten();
    let avals = avals_of(&leaves)?;
    let mut traced = Vec::with_capacity(branches.len());
    let mut trees = Vec::with_capacity(branches.len());
    for branch in branches {
        let (jaxpr, consts, out_tree) = trace_tree(branch, &tree, &avals, location)?;
        trees.push((jaxpr.clone(), out_tree));
        traced.push((jaxpr, consts));
    }
    check_branches(function, &trees, location)?;
    let out_tree = trees[0].1.clone();
    let (branches, consts) = join_branches(traced);
    let mut ops = vec![index.clone()];
    ops.extend(consts);
    ops.extend(leaves);
    bind_tree::<Out>(
        Primitive::Control(control::Op::Cond { branches }),
        &ops,
        &out_tree,
        location,
    )?
    .into_value()
}

/// `true_fn(operands)` if `pred` else `false_fn(operands)`, inside the
/// compiled program, as `jax.lax.cond`: `pred` is a bool scalar; both
/// branches must return the same structure and types.
///
/// This is how a jitted function chooses on a traced value: Rust's `if`
/// cannot, since the value is unknown while tracing (reading it is
/// [`Error::Concretization`]). Both branches are traced into the one
/// compiled program and one runs. What a branch captures (arrays, tracers
/// of enclosing transformations) is passed in as operands. Differentiable
/// in both modes; under `vmap` a batched predicate runs both branches and
/// selects. For an elementwise choice, `numpy::where_` is simpler.
///
/// ```
/// use oxla::{Array, grad, jit, lax, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let f = |x: Array| {
///     let pred = jnp::greater(&x, &Array::weak_scalar(0.0f32));
///     lax::cond(&pred, |x: Array| &x * &x, |x: Array| -&x, x).unwrap_or_else(Array::error)
/// };
/// assert_eq!(jit(f).call(Array::scalar(3.0f32)?)?.item::<f32>()?, 9.0);
/// assert_eq!(jit(f).call(Array::scalar(-2.0f32)?)?.item::<f32>()?, 2.0);
/// assert_eq!(grad(f).call(Array::scalar(-2.0f32)?)?.item::<f32>()?, -1.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn cond<In: Pytree, Out: Pytree>(
    pred: &Array,
    true_fn: impl Fn(In) -> Out,
    false_fn: impl Fn(In) -> Out,
    operands: In,
) -> Result<Out::Value> {
    let location = caller();
    let aval = pred.aval()?.clone();
    if aval.rank() != 0 || aval.dtype != DType::Bool {
        return Err(usage(
            "cond",
            format!("the predicate must be a bool scalar, got {aval}"),
            location,
        ));
    }
    let index = lax::convert_element_type(pred, DType::I32);
    switch_clamped("cond", &index, &[&false_fn, &true_fn], operands, location)
}

/// Checks that a loop body returns its carry's structure and types.
fn check_carry(
    function: &'static str,
    tree: &TreeDef,
    out_tree: &TreeDef,
    avals: &[Aval],
    out: &[Aval],
    location: Location,
) -> Result<()> {
    if tree != out_tree {
        return Err(usage(
            function,
            format!("the body returns {out_tree}, but the carry is {tree}"),
            location,
        ));
    }
    let paths = tree.leaf_paths();
    for (k, (g, w)) in out.iter().zip(avals).enumerate() {
        let path = paths.get(k).map(String::as_str).unwrap_or("");
        if g.dtype != w.dtype || g.shape != w.shape {
            return Err(usage(
                function,
                format!(
                    "the body changes the carry{path} from {w} to {g} (a loop carry keeps its type; \
                     convert it in the body)"
                ),
                location,
            ));
        }
        if g.vma != w.vma {
            return Err(usage(
                function,
                format!(
                    "the carry{path} ({w}) varies over the mesh axes {} when the loop starts, and \
                     over {} after the body: a carry keeps the axes it varies over (inside a \
                     shard_map; start it varying with sharding::collectives::pvary, or psum it in \
                     the body)",
                    axes_text(&w.vma),
                    axes_text(&g.vma)
                ),
                location,
            ));
        }
    }
    Ok(())
}

/// `['data', 'model']`, or `[]`: mesh axes as an error message lists them.
fn axes_text(axes: &[std::sync::Arc<str>]) -> String {
    let names: Vec<String> = axes.iter().map(|a| format!("'{a}'")).collect();
    format!("[{}]", names.join(", "))
}

/// `while cond_fn(carry): carry = body_fn(carry)` inside the compiled
/// program, as `jax.lax.while_loop`. Forward-mode differentiable; reverse
/// mode needs a fixed trip count (`fori_loop` with static bounds, `scan`):
/// `grad` through a while loop is an error that says so. The body must
/// return the carry with its structure, dtypes and shapes. Under `vmap`, a
/// batched condition runs the loop until every example is done.
///
/// ```
/// use oxla::{Array, jit, lax};
/// # fn main() -> oxla::Result<()> {
/// // Collatz steps of n until it reaches 1, counting them.
/// let steps = jit(|n: Array| {
///     lax::while_loop(
///         |(n, _): &(Array, Array)| lax::gt(n, &Array::weak_scalar(1i32)),
///         |(n, count): (Array, Array)| {
///             let even = lax::eq(&lax::rem(&n, &Array::weak_scalar(2i32)), &Array::weak_scalar(0i32));
///             let next = lax::select_n(&even, &[&(&n * 3 + 1), &lax::div(&n, &Array::weak_scalar(2i32))]);
///             (next, &count + 1)
///         },
///         (n, Array::scalar(0i32).unwrap_or_else(Array::error)),
///     )
/// });
/// let (_, count) = steps.call(Array::scalar(6i32)?)?;
/// assert_eq!(count.item::<i32>()?, 8);                      // 6 3 10 5 16 8 4 2 1
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn while_loop<C: Pytree, P: Pytree<Value = Array>, R: Pytree<Value = C>>(
    cond_fn: impl Fn(&C) -> P,
    body_fn: impl Fn(C) -> R,
    init: C,
) -> Result<C> {
    let location = caller();
    let (leaves, tree) = init.flatten();
    let avals = avals_of(&leaves)?;
    let (cond_jaxpr, cond_consts, _) = trace_tree(|c: C| cond_fn(&c), &tree, &avals, location)?;
    let pred = cond_jaxpr.out_avals();
    if pred.len() != 1 || pred[0].dtype != DType::Bool || pred[0].rank() != 0 {
        return Err(usage(
            "while_loop",
            format!(
                "the condition must return a bool scalar, got {}",
                pred.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            location,
        ));
    }
    let (body_jaxpr, body_consts, out_tree) = trace_tree(&body_fn, &tree, &avals, location)?;
    check_carry(
        "while_loop",
        &tree,
        &out_tree,
        &avals,
        &body_jaxpr.out_avals(),
        location,
    )?;
    let primitive = Primitive::Control(control::Op::While(control::WhileParams {
        cond_nconsts: cond_consts.len(),
        body_nconsts: body_consts.len(),
        cond_jaxpr: SubJaxpr::new(cond_jaxpr),
        body_jaxpr: SubJaxpr::new(body_jaxpr),
    }));
    let mut ops = cond_consts;
    ops.extend(body_consts);
    ops.extend(leaves);
    bind_tree(primitive, &ops, &tree, location)
}

/// Options of [`scan`]; `ScanOptions::default()` scans every slice of `xs`
/// forward, one iteration per step of the compiled loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanOptions {
    /// The number of iterations, needed when `xs` has no leaves.
    pub length: Option<i64>,
    /// Run from the last slice to the first (ys stay in xs' order).
    pub reverse: bool,
    /// Iterations per step of the compiled loop (1 when 0).
    pub unroll: i64,
}

/// A loop over the leading axis of `xs` carrying `init`, as
/// `jax.lax.scan`: `f(carry, x) -> (carry, y)`; returns the final carry and
/// the ys stacked along a new leading axis. Differentiable in both modes
/// (reverse mode saves per-iteration residuals only) and batchable.
///
/// `xs` and the stacked `ys` are pytrees (use `()` for none); every `xs`
/// leaf needs the same leading length, or give [`ScanOptions::length`]
/// when `xs` has no leaves. The body must return the carry with its
/// structure, dtypes and shapes.
///
/// ```
/// use oxla::{Array, grad, lax, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // A running sum: the carry is the total so far, each y the new total.
/// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])?;
/// let (total, running) = lax::scan(
///     |c: Array, x: Array| { let c = &c + &x; (c.clone(), c) },
///     Array::scalar(0.0f32)?,
///     xs.clone(),
///     lax::ScanOptions::default(),
/// )?;
/// assert_eq!(total.item::<f32>()?, 10.0);
/// assert_eq!(running.to_vec::<f32>()?, vec![1.0, 3.0, 6.0, 10.0]);
///
/// // Reverse mode through it: d/dxs Π xs.
/// let product = |xs: Array| {
///     let (p, ()) = lax::scan(|c: Array, x: Array| (&c * &x, ()), jnp::ones(&[], oxla::DType::F32), xs, Default::default())
///         .unwrap_or_else(|e| (Array::error(e), ()));
///     p
/// };
/// assert_eq!(grad(product).call(xs)?.to_vec::<f32>()?, vec![24.0, 12.0, 8.0, 6.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn scan<C: Pytree, X: Pytree, Y: Pytree, R: Pytree<Value = (C, Y)>>(
    f: impl Fn(C, X) -> R,
    init: C,
    xs: X,
    options: ScanOptions,
) -> Result<(C, Y)> {
    let location = caller();
    let (carry, carry_tree) = init.flatten();
    let (x_leaves, x_tree) = xs.flatten();
    let carry_avals = avals_of(&carry)?;
    let x_avals = avals_of(&x_leaves)?;
    let mut length = options.length;
    let mut slice_avals = Vec::with_capacity(x_avals.len());
    let paths = x_tree.leaf_paths();
    for (i, a) in x_avals.iter().enumerate() {
        let path = paths.get(i).map(String::as_str).unwrap_or("");
        let Some(&n) = a.shape.first() else {
            return Err(usage(
                "scan",
                format!("xs{path} is a scalar {a}: it needs a leading axis to scan over"),
                location,
            ));
        };
        match length {
            Some(l) if l != n => {
                return Err(usage(
                    "scan",
                    format!(
                        "xs{path} is {a}, but the scan's length is {l}: every xs leaf needs that leading axis"
                    ),
                    location,
                ));
            }
            Some(_) | None => length = Some(n),
        }
        slice_avals.push(a.leading_slice());
    }
    let length = length.ok_or_else(|| {
        usage(
            "scan",
            "xs has no leaves: give options.length".into(),
            location,
        )
    })?;
    let mut in_avals = carry_avals.clone();
    in_avals.extend(slice_avals);
    let n_carry = carry.len();
    let mut out_trees = None;
    let (jaxpr, consts) = trace_flat(&in_avals, true, location, |args| {
        let c = C::unflatten_from(&carry_tree, &mut args[..n_carry].iter().cloned())?;
        let x = X::unflatten_from(&x_tree, &mut args[n_carry..].iter().cloned())?;
        let (c2, y) = f(c, x).into_value()?;
        let (mut outs, ct) = c2.flatten();
        let (ys, yt) = y.flatten();
        out_trees = Some((ct, yt, outs.len()));
        outs.extend(ys);
        Ok(outs)
    })?;
    let (out_carry_tree, y_tree, n_out_carry) = out_trees.expect("traced");
    let outs = jaxpr.out_avals();
    if n_out_carry != n_carry || out_carry_tree != carry_tree {
        return Err(usage(
            "scan",
            format!("the body returns the carry {out_carry_tree}, but it is {carry_tree}"),
            location,
        ));
    }
    check_carry(
        "scan",
        &carry_tree,
        &out_carry_tree,
        &carry_avals,
        &outs[..n_carry],
        location,
    )?;
    let primitive = Primitive::Control(control::Op::Scan(control::ScanParams {
        num_consts: consts.len(),
        num_carry: n_carry,
        length,
        reverse: options.reverse,
        unroll: options.unroll.max(1),
        jaxpr: SubJaxpr::new(jaxpr),
    }));
    let mut ops = consts;
    ops.extend(carry);
    ops.extend(x_leaves);
    let refs: Vec<&Array> = ops.iter().collect();
    let results = crate::ops::bind_at(primitive, &refs, location)?;
    let mut results = results.into_iter();
    let c = C::unflatten_from(&carry_tree, &mut results.by_ref().take(n_carry))?;
    let y = Y::unflatten_from(&y_tree, &mut results)?;
    Ok((c, y))
}

/// `f` over the leading axis of `xs`, one slice at a time inside the
/// compiled program, as `jax.lax.map`: a [`scan`] without a carry, so
/// one compiled loop rather than a batched computation (`vmap`).
///
/// ```
/// use oxla::{Array, lax, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let row_sums = lax::map(|row: Array| jnp::sum(&row, None, false), xs)?;
/// assert_eq!(row_sums.to_vec::<f32>()?, vec![3.0, 7.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn map<X: Pytree, Y: Pytree, R: Pytree<Value = Y>>(f: impl Fn(X) -> R, xs: X) -> Result<Y> {
    let body = |(), x| -> Result<((), Y)> { Ok(((), f(x).into_value()?)) };
    let (_, ys) = scan(body, (), xs, ScanOptions::default())?;
    Ok(ys)
}

/// `for i in lower..upper: carry = body(i, carry)` with bounds known now,
/// as `jax.lax.fori_loop` with static bounds: a scan (so reverse-mode
/// differentiable), `i` an i32 scalar. For bounds computed in the program
/// use [`fori_loop_dynamic`].
///
/// ```
/// use oxla::{Array, DType, grad, lax};
/// # fn main() -> oxla::Result<()> {
/// // Σ i for i in 2..7.
/// let total = lax::fori_loop(2, 7, |i: Array, acc: Array| &acc + &lax::convert_element_type(&i, DType::F32),
///     Array::scalar(0.0f32)?)?;
/// assert_eq!(total.item::<f32>()?, 20.0);
/// // x ↦ x^(2^3), squared three times, and its derivative 8x⁷ at 1.
/// let pow8 = |x: Array| lax::fori_loop(0, 3, |_, y: Array| &y * &y, x).unwrap_or_else(Array::error);
/// assert_eq!(grad(pow8).call(Array::scalar(1.0f32)?)?.item::<f32>()?, 8.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn fori_loop<C: Pytree, R: Pytree<Value = C>>(
    lower: i64,
    upper: i64,
    body: impl Fn(Array, C) -> R,
    init: C,
) -> Result<C> {
    let location = caller();
    let start = crate::transform::support::literal(lower as f64, DType::I32, false);
    let ((_, carry), ()) = scan(
        |(i, c): (Array, C), ()| -> Result<((Array, C), ())> {
            let next = lax::add(&i, &Array::weak_scalar(1i32));
            Ok(((next, body(i, c).into_value()?), ()))
        },
        (start, init),
        (),
        ScanOptions {
            length: Some((upper - lower).max(0)),
            ..ScanOptions::default()
        },
    )
    .map_err(|e| relocate(e, location))?;
    Ok(carry)
}

/// `fori_loop` with bounds computed in the program (integer scalars): a
/// while loop, so forward-mode differentiable only.
///
/// ```
/// use oxla::{Array, jit, lax};
/// # fn main() -> oxla::Result<()> {
/// // 2^n for a traced n.
/// let pow2 = jit(|n: Array| {
///     lax::fori_loop_dynamic(&Array::weak_scalar(0i32), &n, |_, acc: Array| &acc * 2, Array::scalar(1i32).unwrap_or_else(Array::error))
/// });
/// assert_eq!(pow2.call(Array::scalar(5i32)?)?.item::<i32>()?, 32);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn fori_loop_dynamic<C: Pytree, R: Pytree<Value = C>>(
    lower: &Array,
    upper: &Array,
    body: impl Fn(Array, C) -> R,
    init: C,
) -> Result<C> {
    let lower = lax::convert_element_type(lower, DType::I32);
    let upper = lax::convert_element_type(upper, DType::I32);
    let (_, _, carry) = while_loop(
        |(i, upper, _): &(Array, Array, C)| lax::lt(i, upper),
        |(i, upper, c): (Array, Array, C)| -> Result<(Array, Array, C)> {
            let next = lax::add(&i, &Array::weak_scalar(1i32));
            Ok((next, upper, body(i, c).into_value()?))
        },
        (lower, upper, init),
    )?;
    Ok(carry)
}

/// An error of an inner call reported at the caller's line instead.
fn relocate(e: Error, location: Location) -> Error {
    match e {
        Error::Usage {
            function, message, ..
        } => Error::Usage {
            function,
            message,
            location,
        },
        other => other,
    }
}
