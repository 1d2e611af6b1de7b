//! Differentiation, as JAX's `jax.jvp`, `jax.linearize`, `jax.vjp`,
//! `jax.grad`, `jax.value_and_grad`, `jax.jacfwd`, `jax.jacrev` and
//! `jax.hessian`. Functions take and return pytrees; forward mode pushes
//! tangents through, reverse mode linearizes and transposes the linear part.
//! Everything composes with `jit`, `vmap` and itself, to any order.

pub mod jacobian;

use std::marker::PhantomData;

use oxla_core::{Aval, Location};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::with_rule_location;
use crate::pytree::{Pytree, TreeDef};
use crate::trace::{TraceGuard, TraceKind};
use crate::transform::jvp::{split, tracer};
use crate::transform::linearize::{Linear, linearize_flat};
use crate::transform::support::{Tangent, instantiate};

#[track_caller]
fn caller() -> Location {
    Location::from_caller(std::panic::Location::caller())
}

/// Runs a typed function on flat leaves.
fn flat_fn<'f, In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out + 'f,
    in_tree: &'f TreeDef,
    out_tree: &'f mut Option<TreeDef>,
) -> impl FnOnce(&[Array]) -> Result<Vec<Array>> + 'f {
    move |leaves: &[Array]| {
        let args = In::unflatten_from(in_tree, &mut leaves.iter().cloned())?;
        let (outs, tree) = f(args).flatten();
        *out_tree = Some(tree);
        Ok(outs)
    }
}

fn check_same_structure(
    what: &'static str,
    a: &TreeDef,
    b: &TreeDef,
    location: Location,
) -> Result<()> {
    if a != b {
        return Err(Error::Usage {
            function: what,
            message: format!("the tangents' structure {b} differs from the primals' {a}"),
            location,
        });
    }
    Ok(())
}

/// Forward mode: `f(primals)` and its directional derivative along
/// `tangents` (a pytree like `primals`), as `jax.jvp`. Integer and bool
/// leaves have no tangent (JAX's float0): theirs are ignored and their
/// output tangents are zeros. Each float tangent must have its primal's
/// dtype and shape.
///
/// Like every transformation here, `jvp` takes and returns pytrees and
/// composes with [`jit`](crate::jit), [`vmap`](crate::vmap) and the other
/// transformations, to any order.
///
/// ```
/// use oxla::{Array, jvp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let t = Array::from_slice(&[1.0f32, 0.5], &[2])?;
/// let (y, dy) = jvp(|x: Array| &x * &x * &x, &x, &t)?;     // 3x² · t
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 8.0]);
/// assert_eq!(dy.to_vec::<f32>()?, vec![3.0, 6.0]);
/// // Several inputs: a tuple of primals and a tuple of tangents.
/// // d(a·b) = da·b + a·db, at (a, b) = (x, t) along (da, db) = (t, x).
/// let (_, d) = jvp(|(a, b): (Array, Array)| &a * &b, &(x.clone(), t.clone()), &(t.clone(), x.clone()))?;
/// assert_eq!(d.to_vec::<f32>()?, vec![2.0, 4.25]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn jvp<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    primals: &In,
    tangents: &In,
) -> Result<(Out, Out)> {
    let location = caller();
    let (p_leaves, in_tree) = primals.flatten();
    let (t_leaves, t_tree) = tangents.flatten();
    check_same_structure("jvp", &in_tree, &t_tree, location)?;
    let primal_avals = p_leaves
        .iter()
        .map(|p| p.aval().cloned())
        .collect::<Result<Vec<_>>>()?;
    check_leaf_types("jvp", Leaves::Tangents, &t_leaves, &primal_avals, location)?;
    let guard = TraceGuard::open(TraceKind::Jvp {
        tangent_trace: None,
    });
    let id = guard.id();
    let inputs: Vec<Array> = p_leaves
        .iter()
        .zip(&t_leaves)
        .map(|(p, t)| tracer(id, p.clone(), Some(t.clone())))
        .collect();
    let mut out_tree = None;
    let outs = flat_fn(f, &in_tree, &mut out_tree)(&inputs)?;
    for x in &outs {
        crate::transform::eval::check_live(x, location)?;
        x.check()?;
    }
    guard.finish()?;
    let out_tree = out_tree.expect("traced");
    let (primal_outs, tangent_outs): (Vec<Array>, Vec<Tangent>) =
        outs.iter().map(|x| split(id, x)).unzip();
    let tangent_outs: Vec<Array> = with_rule_location(location, || {
        tangent_outs
            .iter()
            .zip(&primal_outs)
            .map(|(t, p)| Ok(instantiate(t, p.aval()?)))
            .collect::<Result<_>>()
    })?;
    Ok((
        Out::unflatten_from(&out_tree, &mut primal_outs.into_iter())?,
        Out::unflatten_from(&out_tree, &mut tangent_outs.into_iter())?,
    ))
}

/// What a list of leaves given to a derivative function holds.
#[derive(Clone, Copy)]
enum Leaves {
    /// Tangents, each typed as its primal.
    Tangents,
    /// Cotangents, each typed as its output.
    Cotangents,
}

/// Checks that each tangent (cotangent) has the dtype and shape of its
/// primal (output) where that is a float, as JAX's "tangent values
/// inconsistent with the primal values"; leaves of other dtypes have no
/// tangent (JAX's float0) and are ignored. The error names the leaf, both
/// types and the caller's line.
fn check_leaf_types(
    function: &'static str,
    kind: Leaves,
    leaves: &[Array],
    avals: &[Aval],
    location: Location,
) -> Result<()> {
    let (leaf, counterpart) = match kind {
        Leaves::Tangents => ("tangent", "primal"),
        Leaves::Cotangents => ("cotangent", "output"),
    };
    for (i, (t, want)) in leaves.iter().zip(avals).enumerate() {
        let got = t.aval()?;
        if want.dtype.is_inexact() && (got.dtype != want.dtype || got.shape != want.shape) {
            return Err(Error::Usage {
                function,
                message: format!(
                    "{leaf} {i} is {got}, inconsistent with its {counterpart} {want}: \
                     they must have one dtype and shape"
                ),
                location,
            });
        }
    }
    Ok(())
}

/// A function's linear part at a point with its input and output structures.
struct LinearPart<In, Out> {
    linear: Linear,
    in_tree: TreeDef,
    out_tree: TreeDef,
    /// Trailing outputs of `linear` that are auxiliary values (not in
    /// `out_tree`, never given a cotangent).
    n_aux: usize,
    _types: PhantomData<fn(In) -> Out>,
}

/// A function returning `(outputs, aux)` linearized: the outputs and aux
/// values, the linear part (the aux leaves trail the outputs and are never
/// given a cotangent: they are not differentiated), the outputs' structure
/// and the number of aux leaves.
struct WithAux<Out, Aux> {
    out: Out,
    aux: Aux,
    linear: Linear,
    out_tree: TreeDef,
    n_aux: usize,
}

fn linearize_with_aux<In: Pytree, Out: Pytree, Aux: Pytree>(
    f: impl FnOnce(In) -> Result<(Out, Aux)>,
    in_tree: &TreeDef,
    leaves: &[Array],
    differentiable: &[bool],
    location: Location,
) -> Result<WithAux<Out, Aux>> {
    let mut trees = None;
    let (outs, linear) = linearize_flat(
        |xs: &[Array]| {
            let args = In::unflatten_from(in_tree, &mut xs.iter().cloned())?;
            let (out, aux) = f(args)?;
            let (mut outs, out_tree) = out.flatten();
            let (mut aux_leaves, aux_tree) = aux.flatten();
            trees = Some((out_tree, aux_tree, aux_leaves.len()));
            outs.append(&mut aux_leaves);
            Ok(outs)
        },
        leaves,
        differentiable,
        location,
    )?;
    let (out_tree, aux_tree, n_aux) = trees.expect("traced");
    let mut outs = outs.into_iter();
    let n_out = outs.len() - n_aux;
    Ok(WithAux {
        out: Out::unflatten_from(&out_tree, &mut outs.by_ref().take(n_out))?,
        aux: Aux::unflatten_from(&aux_tree, &mut outs)?,
        linear,
        out_tree,
        n_aux,
    })
}

/// Linearizes a typed function: its outputs and its linear part.
fn linearize_typed<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    primals: &In,
    location: Location,
) -> Result<(Out, LinearPart<In, Out>)> {
    let (leaves, in_tree) = primals.flatten();
    let differentiable = vec![true; leaves.len()];
    let mut out_tree = None;
    let (outs, linear) = linearize_flat(
        flat_fn(f, &in_tree, &mut out_tree),
        &leaves,
        &differentiable,
        location,
    )?;
    let out_tree = out_tree.expect("traced");
    Ok((
        Out::unflatten_from(&out_tree, &mut outs.into_iter())?,
        LinearPart {
            linear,
            in_tree,
            out_tree,
            n_aux: 0,
            _types: PhantomData,
        },
    ))
}

/// The linear part of a function at a point ([`linearize`]): apply it to
/// tangents with [`Linearized::call`].
pub struct Linearized<In, Out>(LinearPart<In, Out>);

/// `f(primals)` and its linear part, as `jax.linearize`: the primal
/// computation runs now, the tangent computation is kept as a jaxpr that
/// each [`Linearized::call`] evaluates. Outside `jit` the primal ops run
/// eagerly, so Rust control flow on their values works.
///
/// ```
/// use oxla::{Array, linearize, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let (y, f_jvp) = linearize(|x: Array| &x * &x, &x)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 4.0]);
/// // The linear map t ↦ 2x·t, applied to as many tangents as you like.
/// assert_eq!(f_jvp.call(&jnp::ones_like(&x))?.to_vec::<f32>()?, vec![2.0, 4.0]);
/// assert_eq!(f_jvp.call(&(&x * 0.5))?.to_vec::<f32>()?, vec![1.0, 4.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn linearize<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    primals: &In,
) -> Result<(Out, Linearized<In, Out>)> {
    let (out, part) = linearize_typed(f, primals, caller())?;
    Ok((out, Linearized(part)))
}

impl<In: Pytree, Out: Pytree> Linearized<In, Out> {
    /// The output tangents for input `tangents`.
    #[track_caller]
    pub fn call(&self, tangents: &In) -> Result<Out> {
        let location = caller();
        let (leaves, tree) = tangents.flatten();
        check_same_structure("linearize", &self.0.in_tree, &tree, location)?;
        let in_avals = &self.0.linear.in_avals;
        check_leaf_types("linearize", Leaves::Tangents, &leaves, in_avals, location)?;
        let ts: Vec<Tangent> = leaves.into_iter().map(Some).collect();
        let outs = with_rule_location(location, || -> Result<Vec<Array>> {
            let outs = self.0.linear.apply(&ts)?;
            Ok(outs
                .iter()
                .zip(&self.0.linear.out_avals)
                .map(|(t, a)| instantiate(t, a))
                .collect())
        })?;
        Out::unflatten_from(&self.0.out_tree, &mut outs.into_iter())
    }

    /// The linear jaxpr (residuals as constants, tangents in, tangents out).
    pub fn jaxpr(&self) -> &oxla_core::Jaxpr {
        &self.0.linear.jaxpr
    }
}

/// The vector-Jacobian product of a function at a point ([`vjp`]).
pub struct Vjp<In, Out>(LinearPart<In, Out>);

/// `f(primals)` and its vjp function, as `jax.vjp`: [`Vjp::call`] maps
/// output cotangents to input cotangents (zeros for integer inputs).
/// Reverse mode linearizes `f` and transposes the linear part; it goes
/// through `lax::cond`, `switch`, `scan` and static `fori_loop`, not
/// through `while_loop` (an error pointing to `scan`).
///
/// ```
/// use oxla::{Array, vjp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// let (y, pullback) = vjp(|x: Array| &x * &x, &x)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 4.0, 9.0]);
/// let ct = Array::from_slice(&[1.0f32, 1.0, 0.5], &[3])?;
/// assert_eq!(pullback.call(&ct)?.to_vec::<f32>()?, vec![2.0, 4.0, 3.0]);   // 2x · ct
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn vjp<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    primals: &In,
) -> Result<(Out, Vjp<In, Out>)> {
    let (out, part) = linearize_typed(f, primals, caller())?;
    Ok((out, Vjp(part)))
}

/// [`vjp`] of `f` returning `(outputs, aux)`, as JAX's
/// `vjp(f, x, has_aux=True)`: the outputs, their pullback, and the
/// auxiliary values, which are not differentiated.
///
/// ```
/// use oxla::{Array, numpy as jnp, vjp_with_aux};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let (y, pullback, norm) = vjp_with_aux(
///     |x: Array| (&x * &x, jnp::sum(&x, None, false)),
///     &x,
/// )?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 4.0]);
/// assert_eq!(norm.item::<f32>()?, 3.0);
/// assert_eq!(pullback.call(&jnp::ones(&[2], oxla::DType::F32))?.to_vec::<f32>()?, vec![2.0, 4.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn vjp_with_aux<In: Pytree, Out: Pytree, Aux: Pytree, R: Pytree<Value = (Out, Aux)>>(
    f: impl FnOnce(In) -> R,
    primals: &In,
) -> Result<(Out, Vjp<In, Out>, Aux)> {
    let location = caller();
    let (leaves, in_tree) = primals.flatten();
    let differentiable = vec![true; leaves.len()];
    let WithAux {
        out,
        aux,
        linear,
        out_tree,
        n_aux,
    } = linearize_with_aux(
        |x| f(x).into_value(),
        &in_tree,
        &leaves,
        &differentiable,
        location,
    )?;
    let part = LinearPart {
        linear,
        in_tree,
        out_tree,
        n_aux,
        _types: PhantomData,
    };
    Ok((out, Vjp(part), aux))
}

/// The transpose of the linear function `f`, as
/// `jax.linear_transpose(f, *primals)`: `f` is traced at the types of
/// `primals` (their values are not used) and its jaxpr transposed, so the
/// result maps cotangents of the outputs to cotangents of the inputs. A
/// function that is not linear in its inputs is an error naming the
/// primitive; inputs and outputs must be floats. Arrays `f` captures are
/// constants of the linear map.
///
/// ```
/// use oxla::{Array, linear_transpose, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let x = jnp::zeros(&[3], oxla::DType::F32);
/// // x ↦ A x, whose transpose is y ↦ Aᵀ y.
/// let transposed = linear_transpose(|x: Array| jnp::matmul(&a, &x), &x)?;
/// let y = Array::from_slice(&[1.0f32, -1.0], &[2])?;
/// assert_eq!(transposed.call(&y)?.to_vec::<f32>()?, vec![-3.0, -3.0, -3.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn linear_transpose<In: Pytree, Out: Pytree, R: Pytree<Value = Out>>(
    f: impl FnOnce(In) -> R,
    primals: &In,
) -> Result<Vjp<In, Out>> {
    let location = caller();
    let (leaves, in_tree) = primals.flatten();
    let in_avals = crate::jit::abstract_leaves(&leaves)?;
    let not_float = |what: &str, avals: &[Aval]| {
        avals
            .iter()
            .enumerate()
            .find(|(_, a)| !a.dtype.is_inexact())
            .map(|(i, a)| Error::Usage {
                function: "linear_transpose",
                message: format!(
                    "{what} {i} is {a}: a linear function takes and gives floating-point or complex arrays"
                ),
                location,
            })
    };
    if let Some(e) = not_float("input", &in_avals) {
        return Err(e);
    }
    let mut out_tree = None;
    let (jaxpr, residuals) =
        crate::transform::eval::trace_flat(&in_avals, false, location, |xs: &[Array]| {
            let args = In::unflatten_from(&in_tree, &mut xs.iter().cloned())?;
            let (outs, tree) = f(args).into_value()?.flatten();
            out_tree = Some(tree);
            Ok(outs)
        })?;
    let out_avals = jaxpr.out_avals();
    if let Some(e) = not_float("output", &out_avals) {
        return Err(e);
    }
    let linear = Linear {
        in_nonzero: vec![true; in_avals.len()],
        out_nonzero: vec![true; out_avals.len()],
        jaxpr,
        residuals,
        in_avals,
        out_avals,
    };
    Ok(Vjp(LinearPart {
        linear,
        in_tree,
        out_tree: out_tree.expect("traced"),
        n_aux: 0,
        _types: PhantomData,
    }))
}

impl<In: Pytree, Out: Pytree> Vjp<In, Out> {
    /// The input cotangents for output cotangents `cts` (a pytree like the
    /// outputs).
    #[track_caller]
    pub fn call(&self, cts: &Out) -> Result<In> {
        let location = caller();
        let (leaves, tree) = cts.flatten();
        if tree != self.0.out_tree {
            return Err(Error::Usage {
                function: "vjp",
                message: format!(
                    "the cotangents' structure {tree} differs from the outputs' {}",
                    self.0.out_tree
                ),
                location,
            });
        }
        let all_avals = &self.0.linear.out_avals;
        let out_avals = &all_avals[..all_avals.len() - self.0.n_aux];
        check_leaf_types("vjp", Leaves::Cotangents, &leaves, out_avals, location)?;
        let mut cts: Vec<Tangent> = leaves.into_iter().map(Some).collect();
        cts.extend(std::iter::repeat_n(None, self.0.n_aux));
        let in_cts = with_rule_location(location, || -> Result<Vec<Array>> {
            let in_cts = self.0.linear.transpose(&cts)?;
            Ok(in_cts
                .iter()
                .zip(&self.0.linear.in_avals)
                .map(|(c, a)| instantiate(c, a))
                .collect())
        })?;
        In::unflatten_from(&self.0.in_tree, &mut in_cts.into_iter())
    }
}

/// Which inputs [`grad`] differentiates and how.
#[derive(Debug, Clone, Default)]
struct GradOptions {
    argnums: Option<Vec<usize>>,
    allow_int: bool,
    /// JAX's `holomorphic=True`: complex inputs and outputs, differentiated
    /// as holomorphic functions.
    holomorphic: bool,
}

/// The gradient of a scalar function; see [`grad`] and [`value_and_grad`].
pub struct Grad<F> {
    f: F,
    options: GradOptions,
}

/// The gradient of `f` (a function to a scalar float array), as
/// `jax.grad`: `grad(f).call(x)` has `x`'s structure. `.argnums(&[..])`
/// differentiates only those top-level arguments of a tuple input (the
/// others' gradients are zeros); `.allow_int()` lets integer leaves
/// through (their gradients are zeros), which are an error otherwise;
/// [`Grad::call_with_aux`] differentiates a function returning
/// `(value, aux)` (JAX's `has_aux=True`).
///
/// Reverse mode: `f` is linearized at `x` (its primal operations run now,
/// eagerly outside `jit`) and the linear part is transposed. `grad`
/// composes with [`jit`](crate::jit), [`vmap`](crate::vmap) and itself in
/// any order and to any depth: `jit(grad(f))`, `grad(jit(f))`,
/// `vmap(grad(f))` for per-example gradients, `grad(grad(f))`. Inside a
/// transformation, turn the `Result` of an inner `call` into an array
/// with `.unwrap_or_else(Array::error)`; the outer call reports it.
///
/// ```
/// use oxla::{Array, grad, jit, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let f = |x: Array| jnp::sum(&(&x * &x), None, false);
/// let x = Array::from_slice(&[1.0f32, -2.0, 3.0], &[3])?;
/// assert_eq!(grad(f).call(x.clone())?.to_vec::<f32>()?, vec![2.0, -4.0, 6.0]);
///
/// // Under jit, and the second derivative of x³ (6x).
/// let g = jit(|x: Array| grad(f).call(x)).call(x.clone())?;
/// assert_eq!(g.to_vec::<f32>()?, vec![2.0, -4.0, 6.0]);
/// let d = |x: Array| grad(|x: Array| &x * &x * &x).call(x).unwrap_or_else(Array::error);
/// assert_eq!(grad(d).call(Array::scalar(2.0f32)?)?.item::<f32>()?, 12.0);
///
/// // Only the first of two arguments.
/// let (dw, db) = grad(|(w, b): (Array, Array)| jnp::sum(&(&w * &b), None, false))
///     .argnums(&[0])
///     .call((x.clone(), x))?;
/// assert_eq!(dw.to_vec::<f32>()?, vec![1.0, -2.0, 3.0]);
/// assert_eq!(db.to_vec::<f32>()?, vec![0.0, 0.0, 0.0]);
/// # Ok(())
/// # }
/// ```
pub fn grad<F>(f: F) -> Grad<F> {
    Grad {
        f,
        options: GradOptions::default(),
    }
}

/// Like [`grad`], but `call` returns the value too, as `jax.value_and_grad`.
///
/// ```
/// use oxla::{Array, numpy as jnp, value_and_grad};
/// # fn main() -> oxla::Result<()> {
/// let loss = |w: Array| jnp::sum(&jnp::square(&(&w - 1.0)), None, false);
/// let w = Array::from_slice(&[0.0f32, 3.0], &[2])?;
/// let (value, dw) = value_and_grad(loss).call(w.clone())?;
/// assert_eq!(value.item::<f32>()?, 5.0);
/// assert_eq!(dw.to_vec::<f32>()?, vec![-2.0, 4.0]);
///
/// // With an auxiliary output that is not differentiated.
/// let ((value, aux), _) = value_and_grad(|w: Array| (loss(w.clone()), jnp::max(&w, None, false)))
///     .call_with_aux(w)?;
/// assert_eq!((value.item::<f32>()?, aux.item::<f32>()?), (5.0, 3.0));
/// # Ok(())
/// # }
/// ```
pub fn value_and_grad<F>(f: F) -> ValueAndGrad<F> {
    ValueAndGrad(grad(f))
}

/// The value and gradient of a scalar function; see [`value_and_grad`].
pub struct ValueAndGrad<F>(Grad<F>);

impl<F> ValueAndGrad<F> {
    /// Differentiates only these top-level positions of a tuple input.
    pub fn argnums(self, argnums: &[usize]) -> Self {
        ValueAndGrad(self.0.argnums(argnums))
    }

    /// Allows integer and bool leaves (their gradients are zeros).
    pub fn allow_int(self) -> Self {
        ValueAndGrad(self.0.allow_int())
    }

    /// Differentiates a holomorphic function of complex inputs to a
    /// complex output (JAX's `holomorphic=True`).
    pub fn holomorphic(self) -> Self {
        ValueAndGrad(self.0.holomorphic())
    }

    /// The value and the gradient at `args`.
    #[track_caller]
    pub fn call<In: Pytree, R: Pytree<Value = Array>>(&self, args: In) -> Result<(Array, In)>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let (v, _, g) = value_and_grad_flat(
            |x| Ok(((self.0.f)(x).into_value()?, ())),
            &args,
            &self.0.options,
            location,
        )?;
        Ok((v, g))
    }

    /// The value, auxiliary output and gradient of `f` returning
    /// `(value, aux)` (JAX's `has_aux=True`).
    #[track_caller]
    pub fn call_with_aux<In: Pytree, Aux: Pytree, R: Pytree<Value = (Array, Aux)>>(
        &self,
        args: In,
    ) -> Result<((Array, Aux), In)>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let (v, aux, g) = value_and_grad_flat(
            |x| (self.0.f)(x).into_value(),
            &args,
            &self.0.options,
            location,
        )?;
        Ok(((v, aux), g))
    }
}

impl<F> Grad<F> {
    /// Differentiates only these top-level positions of a tuple input.
    pub fn argnums(mut self, argnums: &[usize]) -> Self {
        self.options.argnums = Some(argnums.to_vec());
        self
    }

    /// Allows integer and bool leaves (their gradients are zeros).
    pub fn allow_int(mut self) -> Self {
        self.options.allow_int = true;
        self
    }

    /// Differentiates a holomorphic function of complex inputs to a
    /// complex output (JAX's `holomorphic=True`): the gradient is f'(z),
    /// the cotangent of an output cotangent 1.
    pub fn holomorphic(mut self) -> Self {
        self.options.holomorphic = true;
        self
    }
}

/// Which leaves of `tree` are differentiated under `options`; errors for
/// integer leaves that are.
fn differentiated(
    tree: &TreeDef,
    leaves: &[Array],
    options: &GradOptions,
    location: Location,
) -> Result<Vec<bool>> {
    let mut selected = vec![true; leaves.len()];
    if let Some(argnums) = &options.argnums {
        let children: Vec<&TreeDef> = match tree {
            TreeDef::Tuple(c) => c.iter().collect(),
            other => vec![other],
        };
        for &a in argnums {
            if a >= children.len() {
                return Err(Error::Usage {
                    function: "grad",
                    message: format!(
                        "argnums {a} is out of range: the function takes {} argument(s)",
                        children.len()
                    ),
                    location,
                });
            }
        }
        let mut start = 0;
        for (i, child) in children.iter().enumerate() {
            let n = child.num_leaves();
            for s in &mut selected[start..start + n] {
                *s = argnums.contains(&i);
            }
            start += n;
        }
    }
    let paths = tree.leaf_paths();
    for (i, (x, s)) in leaves.iter().zip(&selected).enumerate() {
        let dtype = x.aval()?.dtype;
        let path = paths.get(i).map(String::as_str).unwrap_or("");
        let named = if path.is_empty() {
            format!("input {i}")
        } else {
            format!("input {i} {path}")
        };
        if *s && options.holomorphic && !dtype.is_complex() {
            return Err(Error::Usage {
                function: "grad",
                message: format!(
                    "grad with holomorphic() requires inputs with complex dtype, but {named} is \
                     {dtype}"
                ),
                location,
            });
        }
        if *s && !dtype.is_inexact() && !options.allow_int {
            return Err(Error::Usage {
                function: "grad",
                message: format!(
                    "grad requires real- or complex-valued inputs (a floating-point or complex \
                     dtype), but {named} is {dtype}. If you want to use integer or bool inputs, \
                     use vjp, or allow_int()"
                ),
                location,
            });
        }
    }
    Ok(selected)
}

/// The value of a scalar output, checked: a real scalar, or a complex one
/// under `holomorphic` (as JAX's `_check_output_dtype_grad`).
fn scalar_output(out: &Array, options: &GradOptions, location: Location) -> Result<()> {
    let aval = out.aval()?;
    let usage = |message: String| Error::Usage {
        function: "grad",
        message,
        location,
    };
    if !aval.shape.is_empty() || !aval.dtype.is_inexact() {
        return Err(usage(format!(
            "the differentiated function must return a scalar float array, got {aval}"
        )));
    }
    match (options.holomorphic, aval.dtype.is_complex()) {
        (true, false) => Err(usage(format!(
            "grad with holomorphic() requires a complex output, got {aval}"
        ))),
        (false, true) => Err(usage(format!(
            "grad requires real-valued outputs (a floating-point dtype), got {aval}. For \
             holomorphic differentiation, use holomorphic(); for non-holomorphic functions \
             with complex outputs, use vjp"
        ))),
        (true, true) | (false, false) => Ok(()),
    }
}

/// Reverse mode over flat leaves: value, aux leaves and gradients.
fn value_and_grad_flat<In: Pytree, Aux: Pytree>(
    f: impl FnOnce(In) -> Result<(Array, Aux)>,
    args: &In,
    options: &GradOptions,
    location: Location,
) -> Result<(Array, Aux, In)> {
    let (leaves, in_tree) = args.flatten();
    let differentiable = differentiated(&in_tree, &leaves, options, location)?;
    let WithAux {
        out: value,
        aux,
        linear,
        ..
    } = linearize_with_aux(f, &in_tree, &leaves, &differentiable, location)?;
    scalar_output(&value, options, location)?;
    // The backward pass's equations are the caller's.
    let grads = with_rule_location(location, || -> Result<Vec<Array>> {
        let one = crate::transform::support::full(value.aval()?, 1.0);
        let mut cts: Vec<Tangent> = vec![Some(one)];
        cts.extend(std::iter::repeat_n(None, linear.out_avals.len() - 1));
        let in_cts = linear.transpose(&cts)?;
        Ok(in_cts
            .iter()
            .zip(&linear.in_avals)
            .map(|(c, a)| instantiate(c, a))
            .collect())
    })?;
    Ok((
        value,
        aux,
        In::unflatten_from(&in_tree, &mut grads.into_iter())?,
    ))
}

impl<F> Grad<F> {
    /// The gradient at `args`.
    #[track_caller]
    pub fn call<In: Pytree, R: Pytree<Value = Array>>(&self, args: In) -> Result<In>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let (_, _, g) = value_and_grad_flat(
            |x| Ok(((self.f)(x).into_value()?, ())),
            &args,
            &self.options,
            location,
        )?;
        Ok(g)
    }

    /// The gradient and the auxiliary output of `f` returning
    /// `(value, aux)` (JAX's `has_aux=True`).
    ///
    /// ```
    /// use oxla::{Array, grad, numpy as jnp};
    /// # fn main() -> oxla::Result<()> {
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let (g, squares) = grad(|x: Array| {
    ///     let squares = &x * &x;
    ///     (jnp::sum(&squares, None, false), squares)
    /// })
    /// .call_with_aux(x)?;
    /// assert_eq!(g.to_vec::<f32>()?, vec![2.0, 4.0]);
    /// assert_eq!(squares.to_vec::<f32>()?, vec![1.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn call_with_aux<In: Pytree, Aux: Pytree, R: Pytree<Value = (Array, Aux)>>(
        &self,
        args: In,
    ) -> Result<(In, Aux)>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let (_, aux, g) =
            value_and_grad_flat(|x| (self.f)(x).into_value(), &args, &self.options, location)?;
        Ok((g, aux))
    }
}

/// The Jacobian of `f` at `x` by forward mode (one jvp per input element,
/// batched with vmap), as `jax.jacfwd`: shape `out.shape ++ x.shape`.
///
/// ```
/// use oxla::{Array, jacfwd, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// // f(x) = [x0 · x1, x0 + x1]: the Jacobian is [[x1, x0], [1, 1]].
/// let f = |x: Array| jnp::stack(&[&(jnp::prod(&x, None, false)), &jnp::sum(&x, None, false)], 0);
/// let j = jacfwd(f, &x)?;
/// assert_eq!(j.shape(), &[2, 2]);
/// assert_eq!(j.to_vec::<f32>()?, vec![2.0, 1.0, 1.0, 1.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn jacfwd(f: impl Fn(Array) -> Array, x: &Array) -> Result<Array> {
    let location = caller();
    let aval = x.aval()?.clone();
    let n = aval.size();
    let basis = standard_basis(&aval)?;
    let out_shape = f(x.clone()).shape_or_empty().to_vec();
    // Each basis vector's jvp, batched along a new leading axis.
    let columns = crate::vmap::vmap(|t: Array| -> Result<Array> {
        let (_, tangent) = jvp(|y: Array| f(y), x, &t)?;
        Ok(tangent)
    })
    .call_with_location(basis, location)?;
    // columns: [n, *out] → [*out, *x]
    let out_rank = out_shape.len() as i64;
    let mut perm: Vec<i64> = (1..=out_rank).collect();
    perm.push(0);
    let moved = crate::lax::transpose(&columns, &perm);
    let mut shape = out_shape;
    shape.extend_from_slice(&aval.shape);
    let _ = n;
    Ok(crate::lax::reshape(&moved, &shape))
}

/// The Jacobian of `f` at `x` by reverse mode (one vjp per output
/// element, batched with vmap), as `jax.jacrev`: shape `out.shape ++ x.shape`.
///
/// ```
/// use oxla::{Array, jacrev, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// // f(x) = [Σ x²]: a 1×3 Jacobian, 2x.
/// let j = jacrev(|x: Array| jnp::reshape(&jnp::sum(&(&x * &x), None, false), &[1]), &x)?;
/// assert_eq!(j.shape(), &[1, 3]);
/// assert_eq!(j.to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn jacrev(f: impl Fn(Array) -> Array, x: &Array) -> Result<Array> {
    let location = caller();
    let (out, pullback) = vjp(|y: Array| f(y), x)?;
    let out_aval = out.aval()?.clone();
    let basis = standard_basis(&out_aval)?;
    let rows =
        crate::vmap::vmap(|ct: Array| pullback.call(&ct)).call_with_location(basis, location)?;
    let mut shape = out_aval.shape.to_vec();
    shape.extend_from_slice(x.shape_or_empty());
    Ok(crate::lax::reshape(&rows, &shape))
}

/// The Hessian of a scalar function, as `jax.hessian` (forward over reverse):
/// [`jacfwd`] of [`jacrev`], shape `x.shape ++ x.shape`.
///
/// ```
/// use oxla::{Array, hessian};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// // f(x) = x0² x1: the Hessian is [[2 x1, 2 x0], [2 x0, 0]].
/// let f = |x: Array| {
///     let x0 = x.index(&oxla::s![0]);
///     let x1 = x.index(&oxla::s![1]);
///     &x0 * &x0 * &x1
/// };
/// assert_eq!(hessian(f, &x)?.to_vec::<f32>()?, vec![4.0, 2.0, 2.0, 0.0]);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn hessian(f: impl Fn(Array) -> Array + Copy, x: &Array) -> Result<Array> {
    jacfwd(
        |y: Array| match jacrev(f, &y) {
            Ok(j) => j,
            Err(e) => Array::error(e),
        },
        x,
    )
}

/// The identity matrix of `aval`'s size, rows shaped like `aval`:
/// `[size, *shape]`.
fn standard_basis(aval: &oxla_core::Aval) -> Result<Array> {
    let n = aval.size();
    let eye = crate::numpy::eye(n, aval.dtype);
    let mut shape = vec![n];
    shape.extend_from_slice(&aval.shape);
    let basis = crate::lax::reshape(&eye, &shape);
    basis.check()?;
    Ok(basis)
}
