//! User-defined derivative rules (`custom_jvp`, `custom_vjp`) and
//! rematerialization (`checkpoint`, `checkpoint_name`), as in JAX. Outside
//! any transformation each just calls the function; under one, the
//! function is traced and applied as a primitive that carries its jaxpr
//! and the user's rules, so jit, vmap and differentiation of any order
//! honour them.

mod leaf_jvps;

pub use leaf_jvps::{LeafJvp, custom_jvps};
use oxla_core::primitive::{call, marker};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use oxla_core::{Aval, Location, OpaqueRule, Primitive, RematPolicy, SubJaxpr};

use crate::array::Array;
use crate::error::Result;
use crate::pytree::{Pytree, TreeDef};
use crate::transform::eval::trace_flat;
use crate::transform::rules::call::{CustomJvpRule, CustomVjpRule};

#[track_caller]
fn caller() -> Location {
    Location::from_caller(std::panic::Location::caller())
}

/// A function traced for a call-like primitive.
struct TracedCall {
    jaxpr: oxla_core::Jaxpr,
    /// The values it captured (its leading operands).
    consts: Vec<Array>,
    /// The argument's leaves.
    leaves: Vec<Array>,
    in_tree: TreeDef,
    out_tree: TreeDef,
}

/// `f` traced on `args`'s leaves.
fn trace_call<In: Pytree, Out: Pytree>(
    f: &impl Fn(In) -> Out,
    args: &In,
    location: Location,
) -> Result<TracedCall> {
    let (leaves, in_tree) = args.flatten();
    let avals: Vec<Aval> = leaves
        .iter()
        .map(|x| x.aval().cloned())
        .collect::<Result<_>>()?;
    let mut out_tree = None;
    let (jaxpr, consts) = trace_flat(&avals, true, location, |xs| {
        let a = In::unflatten_from(&in_tree, &mut xs.iter().cloned())?;
        let (outs, tree) = f(a).flatten();
        out_tree = Some(tree);
        Ok(outs)
    })?;
    Ok(TracedCall {
        jaxpr,
        consts,
        leaves,
        in_tree,
        out_tree: out_tree.expect("traced"),
    })
}

/// Binds a call-like primitive on the captured values and the leaves.
fn bind_call<Out: Pytree>(
    primitive: Primitive,
    consts: Vec<Array>,
    leaves: Vec<Array>,
    out_tree: &TreeDef,
    location: Location,
) -> Result<Out> {
    let mut operands = consts;
    operands.extend(leaves);
    let refs: Vec<&Array> = operands.iter().collect();
    let outs = crate::ops::bind_at(primitive, &refs, location)?;
    Out::unflatten_from(out_tree, &mut outs.into_iter())
}

/// Makes the flat rule for the inputs' structure: (primal leaves, tangent
/// leaves, `None` a symbolic zero) → (output leaves, output tangents).
type FlatJvpRule = dyn Fn(TreeDef) -> Arc<crate::transform::rules::call::JvpRuleFn> + Send + Sync;

/// A function with a custom jvp rule; see [`custom_jvp`].
pub struct CustomJvp<In, Out, F> {
    f: F,
    rule: Arc<FlatJvpRule>,
    _signature: PhantomData<fn(In) -> Out>,
    /// One rule handle per input structure and number of captured values,
    /// so re-traced calls make equal primitives (and hit compile caches).
    handles: Mutex<HashMap<(TreeDef, usize), OpaqueRule>>,
}

/// `f` with the jvp rule `rule(primals, tangents) -> (outputs, output
/// tangents)`, as `jax.custom_jvp`: every differentiation of `f` (forward,
/// reverse, any order, under jit and vmap) uses the rule instead of `f`'s
/// own operations. The rule must be linear in the tangents.
///
/// Outside any transformation, [`CustomJvp::call`] just calls `f`.
///
/// ```
/// use oxla::{Array, custom_jvp, grad, jit, jvp, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // log(1 + exp(x)), whose derivative computed from its own operations is
/// // NaN at large x (inf / inf); the rule gives 1 - 1 / (1 + exp(x)).
/// let log1pexp = custom_jvp(
///     |x: Array| jnp::log(&(jnp::exp(&x) + 1.0)),
///     |x: Array, t: Array| {
///         let y = jnp::log(&(jnp::exp(&x) + 1.0));
///         let slope = 1.0 - (1.0 / (jnp::exp(&x) + 1.0));
///         (y, &t * &slope)
///     },
/// );
/// let f = |x: Array| log1pexp.call(x).unwrap_or_else(Array::error);
/// let big = Array::scalar(100.0f32)?;
/// assert_eq!(grad(f).call(big.clone())?.item::<f32>()?, 1.0);
/// assert_eq!(jit(|x: Array| grad(f).call(x)).call(big)?.item::<f32>()?, 1.0);
/// let (_, t) = jvp(f, &Array::scalar(0.0f32)?, &Array::scalar(1.0f32)?)?;
/// assert_eq!(t.item::<f32>()?, 0.5);
/// # Ok(())
/// # }
/// ```
pub fn custom_jvp<In, Out, F, R>(f: F, rule: R) -> CustomJvp<In, Out, F>
where
    In: Pytree + 'static,
    Out: Pytree + 'static,
    F: Fn(In) -> Out,
    R: Fn(In, In) -> (Out, Out) + Send + Sync + 'static,
{
    let rule = Arc::new(rule);
    CustomJvp {
        f,
        rule: Arc::new(move |in_tree: TreeDef| {
            let user = rule.clone();
            Arc::new(
                move |p: &[Array],
                      t: &[Option<Array>]|
                      -> Result<(Vec<Array>, Vec<Option<Array>>)> {
                    // Symbolic zeros become zeros: the rule sees arrays.
                    let t: Vec<Array> = p
                        .iter()
                        .zip(t)
                        .map(|(p, t)| Ok(crate::transform::support::instantiate(t, p.aval()?)))
                        .collect::<Result<_>>()?;
                    let primals = In::unflatten_from(&in_tree, &mut p.iter().cloned())?;
                    let tangents = In::unflatten_from(&in_tree, &mut t.into_iter())?;
                    let (outs, touts) = user(primals, tangents);
                    Ok((
                        outs.flatten().0,
                        touts.flatten().0.into_iter().map(Some).collect(),
                    ))
                },
            ) as Arc<crate::transform::rules::call::JvpRuleFn>
        }),
        _signature: PhantomData,
        handles: Mutex::new(HashMap::new()),
    }
}

/// `f` with a jvp rule that sees which tangents are zero, as
/// `jax.custom_jvp(f, symbolic_zeros=True)`: `rule(primals, tangents)` gets
/// one tangent per input leaf (in flattening order), `None` where it is a
/// symbolic zero (the input does not move: a constant, or an argument not
/// differentiated), and returns the outputs and one tangent per output
/// leaf, `None` for a zero tangent. A rule can so skip the work of inputs
/// that do not move. The rule must be linear in the tangents.
///
/// ```
/// use oxla::{Array, custom_jvp_symbolic, grad};
/// # fn main() -> oxla::Result<()> {
/// // x * y, whose rule only computes the terms of moving inputs.
/// let product = custom_jvp_symbolic(
///     |(x, y): (Array, Array)| &x * &y,
///     |(x, y): (Array, Array), t: Vec<Option<Array>>| {
///         let terms: Vec<Array> = [t[0].as_ref().map(|tx| tx * &y), t[1].as_ref().map(|ty| &x * ty)]
///             .into_iter()
///             .flatten()
///             .collect();
///         let tangent = terms.into_iter().reduce(|a, b| &a + &b);
///         (&x * &y, vec![tangent])
///     },
/// );
/// let y = Array::scalar(3.0f32)?;
/// // Only x moves: the rule sees (Some, None).
/// let f = |x: Array| product.call((x, y.clone())).unwrap_or_else(Array::error);
/// let dx = grad(f).call(Array::scalar(2.0f32)?)?;
/// assert_eq!(dx.item::<f32>()?, 3.0);
/// # Ok(())
/// # }
/// ```
pub fn custom_jvp_symbolic<In, Out, F, R>(f: F, rule: R) -> CustomJvp<In, Out, F>
where
    In: Pytree + 'static,
    Out: Pytree + 'static,
    F: Fn(In) -> Out,
    R: Fn(In, Vec<Option<Array>>) -> (Out, Vec<Option<Array>>) + Send + Sync + 'static,
{
    let rule = Arc::new(rule);
    CustomJvp {
        f,
        rule: Arc::new(move |in_tree: TreeDef| {
            let user = rule.clone();
            Arc::new(
                move |p: &[Array],
                      t: &[Option<Array>]|
                      -> Result<(Vec<Array>, Vec<Option<Array>>)> {
                    let primals = In::unflatten_from(&in_tree, &mut p.iter().cloned())?;
                    let (outs, touts) = user(primals, t.to_vec());
                    Ok((outs.flatten().0, touts))
                },
            ) as Arc<crate::transform::rules::call::JvpRuleFn>
        }),
        _signature: PhantomData,
        handles: Mutex::new(HashMap::new()),
    }
}

impl<In: Pytree + 'static, Out: Pytree + 'static, F: Fn(In) -> Out> CustomJvp<In, Out, F> {
    /// Calls the function (one that returns `Result<T>` gives a
    /// `Result<T>` here, not a nested one).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out::Value> {
        self.call_tree(args)?.into_value()
    }

    /// The call, with the function's own result type.
    #[track_caller]
    fn call_tree(&self, args: In) -> Result<Out> {
        let location = caller();
        if !crate::trace::is_tracing() {
            return Ok((self.f)(args));
        }
        let TracedCall {
            jaxpr,
            consts,
            leaves,
            in_tree,
            out_tree,
        } = trace_call(&self.f, &args, location)?;
        let key = (in_tree.clone(), consts.len());
        let handle = {
            let mut handles = self.handles.lock().unwrap_or_else(|e| e.into_inner());
            handles
                .entry(key)
                .or_insert_with(|| {
                    let rule = CustomJvpRule {
                        num_consts: consts.len(),
                        rule: (self.rule)(in_tree),
                    };
                    OpaqueRule::new("custom_jvp", Arc::new(rule))
                })
                .clone()
        };
        let primitive = Primitive::Call(call::Op::CustomJvpCall {
            jaxpr: SubJaxpr::new(jaxpr),
            rule: handle,
        });
        bind_call(primitive, consts, leaves, &out_tree, location)
    }
}

type FwdRule<In, Out, Res> = dyn Fn(In) -> (Out, Res) + Send + Sync;
type BwdRule<In, Out, Res> = dyn Fn(Res, Out) -> In + Send + Sync;

/// A function with custom reverse-mode rules; see [`custom_vjp`].
pub struct CustomVjp<In, Out, Res, F> {
    f: F,
    fwd: Arc<FwdRule<In, Out, Res>>,
    bwd: Arc<BwdRule<In, Out, Res>>,
    handles: Mutex<HashMap<(TreeDef, Vec<Aval>), OpaqueRule>>,
}

/// `f` with the reverse-mode rules `fwd(inputs) -> (outputs, residuals)`
/// and `bwd(residuals, output cotangents) -> input cotangents`, as
/// `jax.custom_vjp`. Forward mode (jvp) of such a function is an error, as
/// in JAX. `bwd` returns one cotangent per input, in the inputs' structure.
///
/// Outside any transformation, [`CustomVjp::call`] just calls `f`.
///
/// ```
/// use oxla::{Array, custom_vjp, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // The identity, whose gradient is clipped to [-1, 1] on the way back.
/// let clip_gradient = custom_vjp(
///     |x: Array| x,
///     |x: Array| (x, ()),                                    // no residuals
///     |(): (), g: Array| jnp::clip(&g, &Array::weak_scalar(-1.0f32), &Array::weak_scalar(1.0f32)),
/// );
/// let loss = |x: Array| {
///     let y = clip_gradient.call(x).unwrap_or_else(Array::error);
///     jnp::sum(&(&y * 3.0), None, false)
/// };
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// assert_eq!(grad(loss).call(x)?.to_vec::<f32>()?, vec![1.0, 1.0]);   // 3, clipped
/// # Ok(())
/// # }
/// ```
pub fn custom_vjp<In, Out, Res, F, Fwd, Bwd>(f: F, fwd: Fwd, bwd: Bwd) -> CustomVjp<In, Out, Res, F>
where
    In: Pytree + 'static,
    Out: Pytree + 'static,
    Res: Pytree + 'static,
    F: Fn(In) -> Out,
    Fwd: Fn(In) -> (Out, Res) + Send + Sync + 'static,
    Bwd: Fn(Res, Out) -> In + Send + Sync + 'static,
{
    CustomVjp {
        f,
        fwd: Arc::new(fwd),
        bwd: Arc::new(bwd),
        handles: Mutex::new(HashMap::new()),
    }
}

impl<In, Out, Res, F> CustomVjp<In, Out, Res, F>
where
    In: Pytree + 'static,
    Out: Pytree + 'static,
    Res: Pytree + 'static,
    F: Fn(In) -> Out,
{
    /// Calls the function (one that returns `Result<T>` gives a
    /// `Result<T>` here, not a nested one).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out::Value> {
        self.call_tree(args)?.into_value()
    }

    /// The call, with the function's own result type.
    #[track_caller]
    fn call_tree(&self, args: In) -> Result<Out> {
        let location = caller();
        if !crate::trace::is_tracing() {
            return Ok((self.f)(args));
        }
        let TracedCall {
            jaxpr,
            consts,
            leaves,
            in_tree,
            out_tree,
        } = trace_call(&self.f, &args, location)?;
        let invar_avals: Vec<Aval> = jaxpr
            .constvars
            .iter()
            .chain(&jaxpr.invars)
            .map(|v| jaxpr.aval(*v).clone())
            .collect();
        let in_avals = invar_avals[consts.len()..].to_vec();
        let out_avals: Vec<Aval> = jaxpr
            .outvars
            .iter()
            .map(|o| jaxpr.atom_aval(o).clone())
            .collect();
        let handle = {
            let mut handles = self.handles.lock().unwrap_or_else(|e| e.into_inner());
            handles
                .entry((in_tree.clone(), invar_avals))
                .or_insert_with(|| {
                    let res_tree: Arc<Mutex<Option<TreeDef>>> = Arc::default();
                    let (fwd, bwd) = (self.fwd.clone(), self.bwd.clone());
                    let (in_tree_f, res_tree_f) = (in_tree.clone(), res_tree.clone());
                    let fwd_flat = move |p: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
                        let inputs = In::unflatten_from(&in_tree_f, &mut p.iter().cloned())?;
                        let (outs, res) = fwd(inputs);
                        let (res_leaves, tree) = res.flatten();
                        *res_tree_f.lock().unwrap_or_else(|e| e.into_inner()) = Some(tree);
                        Ok((outs.flatten().0, res_leaves))
                    };
                    let out_tree_b = out_tree.clone();
                    let bwd_flat = move |r: &[Array], c: &[Array]| -> Result<Vec<Array>> {
                        let tree = res_tree
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .clone()
                            .ok_or_else(|| {
                                crate::error::Error::InvalidArgument(
                                    "custom_vjp: bwd called before fwd".into(),
                                )
                            })?;
                        let res = Res::unflatten_from(&tree, &mut r.iter().cloned())?;
                        let cts = Out::unflatten_from(&out_tree_b, &mut c.iter().cloned())?;
                        Ok(bwd(res, cts).flatten().0)
                    };
                    let rule = CustomVjpRule {
                        num_consts: consts.len(),
                        fwd: Arc::new(fwd_flat),
                        bwd: Arc::new(bwd_flat),
                        in_avals,
                        out_avals,
                    };
                    OpaqueRule::new("custom_vjp", Arc::new(rule))
                })
                .clone()
        };
        let primitive = Primitive::Call(call::Op::CustomVjpCall {
            jaxpr: SubJaxpr::new(jaxpr),
            rule: handle,
        });
        bind_call(primitive, consts, leaves, &out_tree, location)
    }
}

/// A checkpointed function; see [`checkpoint`].
pub struct Checkpoint<In, Out, F> {
    f: F,
    policy: RematPolicy,
    prevent_cse: bool,
    _types: PhantomData<fn(In) -> Out>,
}

/// `f`, rematerialized in reverse mode, as `jax.checkpoint`: its
/// intermediate values are not kept for the backward pass (only what the
/// policy allows, [`Checkpoint::policy`]; nothing by default) but
/// recomputed from its inputs, trading compute for memory.
///
/// Outside reverse mode it changes nothing: the values and gradients are
/// the same, only what the backward pass stores differs.
///
/// ```
/// use oxla::{Array, RematPolicy, checkpoint, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let block = |(h, w): (Array, Array)| jnp::tanh(&jnp::matmul(&h, &w));
/// let loss = |w: Array| {
///     let x = Array::from_slice(&[1.0f32, 0.0], &[1, 2]).unwrap_or_else(Array::error);
///     let h = checkpoint(block)
///         .policy(RematPolicy::DotsSaveable)                 // keep matmuls, recompute tanh
///         .call((x, w))
///         .unwrap_or_else(Array::error);
///     jnp::sum(&h, None, false)
/// };
/// let w = jnp::zeros(&[2, 2], oxla::DType::F32);
/// let g = grad(loss).call(w.clone())?;
/// // d/dw Σ tanh(x w) at w = 0: x for every column (tanh'(0) = 1).
/// assert_eq!(g.to_vec::<f32>()?, vec![1.0, 1.0, 0.0, 0.0]);
/// # Ok(())
/// # }
/// ```
pub fn checkpoint<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(f: F) -> Checkpoint<In, Out, F> {
    Checkpoint {
        f,
        policy: RematPolicy::NothingSaveable,
        prevent_cse: true,
        _types: PhantomData,
    }
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Checkpoint<In, Out, F> {
    /// Which intermediate values may be kept (`jax.checkpoint_policies`).
    pub fn policy(mut self, policy: RematPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Whether the recomputation is fenced so XLA cannot merge it with the
    /// forward pass (default true, as JAX).
    pub fn prevent_cse(mut self, prevent_cse: bool) -> Self {
        self.prevent_cse = prevent_cse;
        self
    }

    /// Calls the function (one that returns `Result<T>` gives a
    /// `Result<T>` here, not a nested one).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out::Value> {
        self.call_tree(args)?.into_value()
    }

    /// The call, with the function's own result type.
    #[track_caller]
    fn call_tree(&self, args: In) -> Result<Out> {
        let location = caller();
        if !crate::trace::is_tracing() {
            return Ok((self.f)(args));
        }
        let TracedCall {
            jaxpr,
            consts,
            leaves,
            out_tree,
            ..
        } = trace_call(&self.f, &args, location)?;
        let primitive = Primitive::Call(call::Op::Remat {
            jaxpr: SubJaxpr::new(jaxpr),
            policy: self.policy.clone(),
            prevent_cse: self.prevent_cse,
        });
        bind_call(primitive, consts, leaves, &out_tree, location)
    }
}

/// Names `x` for [`RematPolicy::SaveOnlyTheseNames`] (the identity
/// otherwise), as `jax.ad_checkpoint.checkpoint_name`.
///
/// ```
/// use oxla::{Array, RematPolicy, checkpoint, checkpoint_name, grad, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let f = |x: Array| {
///     let h = checkpoint_name(&jnp::sin(&x), "h");            // saved for the backward pass
///     jnp::sum(&(&h * &h), None, false)
/// };
/// let remat = |x: Array| {
///     checkpoint(f)
///         .policy(RematPolicy::SaveOnlyTheseNames(vec!["h".into()]))
///         .call(x)
///         .unwrap_or_else(Array::error)
/// };
/// let x = Array::from_slice(&[0.0f32], &[1])?;
/// assert_eq!(grad(remat).call(x)?.to_vec::<f32>()?, vec![0.0]);   // 2 sin x cos x
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn checkpoint_name(x: &Array, name: &str) -> Array {
    if !crate::trace::is_tracing() {
        return x.clone();
    }
    crate::ops::bind(
        Primitive::Marker(marker::Op::CheckpointName { name: name.into() }),
        &[x],
    )
}
