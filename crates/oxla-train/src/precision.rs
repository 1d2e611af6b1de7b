//! Mixed precision, as DeepMind's `jmp`: a [`Policy`] says which dtype
//! parameters are kept in, which dtype the computation runs in and which
//! dtype outputs are returned in, and casts the floating-point leaves of any
//! pytree to them; loss scales ([`DynamicLossScale`], [`StaticLossScale`],
//! [`NoOpLossScale`]) keep small half-precision gradients from flushing to
//! zero, with [`all_finite`] and [`select_tree`] to skip the update of a
//! step whose gradients overflowed.
//!
//! Everything here is lax ops on the arrays it is given, with no reads to
//! the host, so it runs the same inside [`oxla::jit`] as eagerly; the loss
//! scales are pytrees and pass through `jit` as arguments and results.
//!
//! ```
//! use oxla::{Array, DType, numpy as jnp};
//! use oxla_train::precision::{DynamicLossScale, LossScale, Policy, all_finite, select_tree};
//! # fn main() -> oxla::Result<()> {
//! let policy = Policy::parse("params=float32,compute=bfloat16,output=float32")?;
//! let params = (jnp::ones(&[2], DType::F32), Array::scalar(3i32)?);
//! let compute = policy.cast_to_compute(&params)?;
//! assert_eq!((compute.0.dtype(), compute.1.dtype()), (DType::BF16, DType::I32));
//!
//! let scale = DynamicLossScale::new(Array::scalar(2f32.powi(15))?)?;
//! let grads = scale.unscale(&vec![jnp::full(&[2], 2f64.powi(15), DType::F32)])?;
//! assert_eq!(grads[0].to_vec::<f32>()?, vec![1.0, 1.0]);
//! let finite = all_finite(&grads);
//! let kept = select_tree(&finite, &grads, &vec![jnp::zeros(&[2], DType::F32)])?;
//! assert_eq!(kept[0].to_vec::<f32>()?, vec![1.0, 1.0]);
//! let scale = scale.adjust(&finite)?;
//! assert_eq!(scale.counter.item::<i32>()?, 1);
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::str::FromStr;

use oxla::pytree::{Pytree, tree_map_named};
use oxla::{Array, DType, Error, Result, lax, numpy as jnp};

/// The dtypes of a mixed-precision computation, as `jmp.Policy`:
/// parameters are stored in `param_dtype`, the computation runs in
/// `compute_dtype`, and results are returned in `output_dtype`. The casts
/// change floating-point leaves only: integer, bool and complex leaves pass
/// through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    /// The dtype parameters are stored (and updated) in.
    pub param_dtype: DType,
    /// The dtype the computation runs in.
    pub compute_dtype: DType,
    /// The dtype results are returned in.
    pub output_dtype: DType,
}

impl Policy {
    /// A policy of the three dtypes.
    pub fn new(param_dtype: DType, compute_dtype: DType, output_dtype: DType) -> Policy {
        Policy {
            param_dtype,
            compute_dtype,
            output_dtype,
        }
    }

    /// Parses a policy as `jmp.get_policy` does.
    ///
    /// A string with `=` is a comma-separated list of `key=dtype`, keys
    /// `params` (or `p`), `compute` (or `c`) and `output` (or `o`); a key
    /// given twice takes its last value. Params default to `float32`,
    /// compute follows params and output follows compute, so `"c=bf16"` is
    /// `p=f32,c=bf16,o=bf16`. A string without `=` is one dtype for all
    /// three (`"bf16"`, `"half"`). Dtype names are jmp's: `bf16`/`bfloat16`,
    /// `f16`/`float16`, `full`/`f32`/`float32`, `f64`/`float64`, and `half`,
    /// which is bf16 on TPU and f16 elsewhere (it asks the default client
    /// its platform). As in jmp, the names and keys are case sensitive and
    /// spaces are not stripped.
    ///
    /// An unknown key or dtype, or a part that is not one `key=dtype`, is
    /// an [`Error::InvalidArgument`] that names it and the whole string.
    ///
    /// ```
    /// use oxla::DType;
    /// use oxla_train::precision::Policy;
    /// # fn main() -> oxla::Result<()> {
    /// let p = Policy::parse("p=f32,c=bf16")?;
    /// assert_eq!(p, Policy::new(DType::F32, DType::BF16, DType::BF16));
    /// assert_eq!(p.to_string(), "p=full,c=bf16,o=bf16");
    /// assert!(Policy::parse("compute=int8").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn parse(policy: &str) -> Result<Policy> {
        if !policy.contains('=') {
            let dtype = parse_dtype(policy, policy)?;
            return Ok(Policy::new(dtype, dtype, dtype));
        }
        let mut param_dtype = DType::F32;
        let mut compute_dtype = None;
        let mut output_dtype = None;
        for part in policy.split(',') {
            let mut kv = part.split('=');
            let (Some(key), Some(value), None) = (kv.next(), kv.next(), kv.next()) else {
                return Err(Error::InvalidArgument(format!(
                    "mixed precision policy {policy:?}: the part {part:?} is not one `key=dtype`"
                )));
            };
            let dtype = parse_dtype(value, policy)?;
            match key {
                "p" | "params" => param_dtype = dtype,
                "c" | "compute" => compute_dtype = Some(dtype),
                "o" | "output" => output_dtype = Some(dtype),
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "mixed precision policy {policy:?}: unknown key {other:?}, which should \
                         be 'params' ('p'), 'compute' ('c') or 'output' ('o')"
                    )));
                }
            }
        }
        let compute_dtype = compute_dtype.unwrap_or(param_dtype);
        let output_dtype = output_dtype.unwrap_or(compute_dtype);
        Ok(Policy::new(param_dtype, compute_dtype, output_dtype))
    }

    /// The policy with another output dtype (`jmp.Policy.with_output_dtype`).
    pub fn with_output_dtype(self, output_dtype: DType) -> Policy {
        Policy {
            output_dtype,
            ..self
        }
    }

    /// `tree` with its floating-point leaves cast to the param dtype.
    pub fn cast_to_param<T: Pytree>(&self, tree: &T) -> Result<T> {
        cast_floating_to(tree, self.param_dtype)
    }

    /// `tree` with its floating-point leaves cast to the compute dtype.
    pub fn cast_to_compute<T: Pytree>(&self, tree: &T) -> Result<T> {
        cast_floating_to(tree, self.compute_dtype)
    }

    /// `tree` with its floating-point leaves cast to the output dtype.
    pub fn cast_to_output<T: Pytree>(&self, tree: &T) -> Result<T> {
        cast_floating_to(tree, self.output_dtype)
    }
}

impl FromStr for Policy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Policy> {
        Policy::parse(s)
    }
}

/// jmp's form, `p=full,c=bf16,o=full`: each dtype by its first jmp name
/// (`full` for f32); a dtype jmp has no name for by its short name.
impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "p={},c={},o={}",
            jmp_name(self.param_dtype),
            jmp_name(self.compute_dtype),
            jmp_name(self.output_dtype)
        )
    }
}

/// jmp's first name of a float dtype.
fn jmp_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "full",
        other => other.name(),
    }
}

/// A dtype of jmp's names, `half` by the default client's platform.
fn parse_dtype(value: &str, policy: &str) -> Result<DType> {
    Ok(match value {
        "bf16" | "bfloat16" => DType::BF16,
        "f16" | "float16" => DType::F16,
        "full" | "f32" | "float32" => DType::F32,
        "f64" | "float64" => DType::F64,
        "half" => half_dtype()?,
        other => {
            return Err(Error::InvalidArgument(format!(
                "mixed precision policy {policy:?}: unknown dtype {other:?}, which should be \
                 full, half, float16, bfloat16, float32, float64 or a short form of one \
                 (f16, bf16, f32, f64)"
            )));
        }
    })
}

/// The half-precision dtype of the default backend, as `jmp.half_dtype`:
/// bf16 on TPU, f16 elsewhere.
pub fn half_dtype() -> Result<DType> {
    let platform = oxla::client()?.platform_name()?;
    Ok(if platform.eq_ignore_ascii_case("tpu") {
        DType::BF16
    } else {
        DType::F16
    })
}

/// `tree` with each real floating-point leaf of another dtype converted to
/// `dtype` (a leaf already of `dtype` is kept as it is); an error leaf is
/// the error.
fn cast_floating_to<T: Pytree>(tree: &T, dtype: DType) -> Result<T> {
    let (leaves, def) = tree.flatten();
    let cast = leaves
        .into_iter()
        .map(|leaf| {
            let aval = leaf.aval()?;
            Ok(if aval.dtype.is_float() && aval.dtype != dtype {
                leaf.astype(dtype)
            } else {
                leaf
            })
        })
        .collect::<Result<Vec<Array>>>()?;
    T::unflatten_from(&def, &mut cast.into_iter())
}

/// Whether every element of every leaf of `tree` is finite, as a bool
/// scalar (`jmp.all_finite`): true for a tree without leaves; integer and
/// bool leaves are always finite. An error leaf gives an array carrying
/// its error.
pub fn all_finite<T: Pytree>(tree: &T) -> Array {
    let leaves = tree.flatten().0;
    if leaves.is_empty() {
        return Array::scalar(true).unwrap_or_else(Array::error);
    }
    let each: Vec<Array> = leaves
        .iter()
        .map(|leaf| jnp::all(&jnp::isfinite(leaf), None, false))
        .collect();
    let refs: Vec<&Array> = each.iter().collect();
    jnp::all(&jnp::stack(&refs, 0), None, false)
}

/// `on_true` where the bool scalar `pred` is true, else `on_false`, leaf by
/// leaf (`jmp.select_tree`): how a step keeps its old parameters and
/// optimizer state when its gradients are not finite. An error when
/// `pred` is not a bool scalar or the trees differ in structure.
#[track_caller]
pub fn select_tree<T: Pytree>(pred: &Array, on_true: &T, on_false: &T) -> Result<T> {
    expect_bool_scalar(pred, "select_tree")?;
    tree_map_named("select_tree", &[on_true, on_false], |l| {
        lax::select(pred, l[0], l[1])
    })
}

/// An error unless `x` is a bool scalar.
fn expect_bool_scalar(x: &Array, what: &str) -> Result<()> {
    let aval = x.aval()?;
    if aval.dtype != DType::Bool || !aval.shape.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{what}: expected a bool scalar, got {}{:?}",
            aval.dtype, aval.shape
        )));
    }
    Ok(())
}

/// What the three loss scales have in common (`jmp.LossScale`), for a
/// train step generic over them.
pub trait LossScale: Pytree + Clone {
    /// `tree` (the loss) times the loss scale.
    fn scale<T: Pytree>(&self, tree: &T) -> Result<T>;

    /// `tree` (the gradients) divided by the loss scale.
    fn unscale<T: Pytree>(&self, tree: &T) -> Result<T>;

    /// The loss scale of the next step, given whether this step's
    /// gradients were all finite (a bool scalar, see [`all_finite`]).
    fn adjust(&self, grads_finite: &Array) -> Result<Self>;
}

/// A loss scale that does nothing (`jmp.NoOpLossScale`): scaling and
/// unscaling return the tree as it is. A pytree without leaves.
#[derive(oxla::Pytree, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoOpLossScale {}

impl NoOpLossScale {
    /// The no-op loss scale.
    pub fn new() -> NoOpLossScale {
        NoOpLossScale {}
    }
}

impl LossScale for NoOpLossScale {
    fn scale<T: Pytree>(&self, tree: &T) -> Result<T> {
        with_same_leaves(tree)
    }

    fn unscale<T: Pytree>(&self, tree: &T) -> Result<T> {
        with_same_leaves(tree)
    }

    fn adjust(&self, _grads_finite: &Array) -> Result<Self> {
        Ok(*self)
    }
}

/// A copy of `tree` (its leaves are shared).
fn with_same_leaves<T: Pytree>(tree: &T) -> Result<T> {
    let (leaves, _) = tree.flatten();
    tree.with_leaves(&mut leaves.into_iter())
}

/// A fixed loss scale (`jmp.StaticLossScale`): multiplies by `loss_scale`
/// and by its reciprocal. Unlike jmp's, whose scale is part of the pytree's
/// static structure, the scale here is a leaf, so a new value does not
/// compile the step again.
#[derive(oxla::Pytree, Debug, Clone)]
pub struct StaticLossScale {
    /// The scale (a floating-point array, usually a scalar).
    pub loss_scale: Array,
}

impl StaticLossScale {
    /// A fixed loss scale; an error unless `loss_scale` is floating-point.
    pub fn new(loss_scale: Array) -> Result<StaticLossScale> {
        expect_float(&loss_scale, "StaticLossScale", "loss_scale")?;
        Ok(StaticLossScale { loss_scale })
    }
}

impl LossScale for StaticLossScale {
    fn scale<T: Pytree>(&self, tree: &T) -> Result<T> {
        multiply_leaves(tree, &self.loss_scale)
    }

    fn unscale<T: Pytree>(&self, tree: &T) -> Result<T> {
        multiply_leaves(tree, &(1.0 / &self.loss_scale))
    }

    fn adjust(&self, _grads_finite: &Array) -> Result<Self> {
        Ok(self.clone())
    }
}

/// Each leaf of `tree` times `factor` (with jnp's promotion: a bf16 loss
/// times an f32 scale is f32, as in jmp).
fn multiply_leaves<T: Pytree>(tree: &T, factor: &Array) -> Result<T> {
    factor.check()?;
    let (leaves, def) = tree.flatten();
    let scaled: Vec<Array> = leaves.iter().map(|x| x * factor).collect();
    for leaf in &scaled {
        leaf.check()?;
    }
    T::unflatten_from(&def, &mut scaled.into_iter())
}

/// An error unless `x` has a floating-point dtype.
fn expect_float(x: &Array, what: &str, field: &str) -> Result<()> {
    let dtype = x.aval()?.dtype;
    if !dtype.is_float() {
        return Err(Error::InvalidArgument(format!(
            "{what}: {field} must be floating-point, got {dtype}"
        )));
    }
    Ok(())
}

/// A loss scale that adapts (`jmp.DynamicLossScale`): each step with finite
/// gradients counts; after `period` of them in a row the scale is
/// multiplied by `factor` (unless that overflows) and the count starts
/// again; a step with non-finite gradients divides the scale by `factor`
/// (not below `min_loss_scale`) and resets the count. In jmp's words:
///
/// ```text
/// if grads_finite:
///     counter += 1
///     if counter == period:
///         counter = 0
///         loss_scale = first_finite(loss_scale * factor, loss_scale)
/// else:
///     counter = 0
///     loss_scale = max(min_loss_scale, loss_scale / factor)
/// ```
///
/// A pytree: `loss_scale`, `counter` and `min_loss_scale` are leaves,
/// `period` and `factor` static (part of a jitted step's cache key), so it
/// is an argument and a result of a jitted train step. (jmp's flattening
/// drops `min_loss_scale`, which then reverts to 1 after a `jit`; here it
/// is kept.)
#[derive(oxla::Pytree, Debug, Clone)]
pub struct DynamicLossScale {
    /// The current scale (floating-point; usually an f32 scalar such as
    /// 2^15).
    pub loss_scale: Array,
    /// Finite steps since the scale last changed, an i32 scalar.
    pub counter: Array,
    /// Finite steps before the scale grows (jmp's default 2000).
    #[pytree(static)]
    pub period: i32,
    /// What the scale is multiplied and divided by (jmp's default 2).
    #[pytree(static)]
    pub factor: i32,
    /// The scale never drops below this (jmp's default 1, an f32 scalar).
    pub min_loss_scale: Array,
}

impl DynamicLossScale {
    /// A dynamic loss scale starting at `loss_scale` with jmp's defaults:
    /// counter 0 (i32), period 2000, factor 2, minimum 1 (f32). An error
    /// unless `loss_scale` is floating-point.
    pub fn new(loss_scale: Array) -> Result<DynamicLossScale> {
        expect_float(&loss_scale, "DynamicLossScale", "loss_scale")?;
        Ok(DynamicLossScale {
            loss_scale,
            counter: Array::scalar(0i32)?,
            period: 2000,
            factor: 2,
            min_loss_scale: Array::scalar(1.0f32)?,
        })
    }

    /// The same scale with another period; an error unless `period` is
    /// positive.
    pub fn with_period(self, period: i32) -> Result<DynamicLossScale> {
        if period < 1 {
            return Err(Error::InvalidArgument(format!(
                "DynamicLossScale: period must be at least 1, got {period}"
            )));
        }
        Ok(DynamicLossScale { period, ..self })
    }

    /// The same scale with another growth factor; an error unless `factor`
    /// is positive.
    pub fn with_factor(self, factor: i32) -> Result<DynamicLossScale> {
        if factor < 1 {
            return Err(Error::InvalidArgument(format!(
                "DynamicLossScale: factor must be at least 1, got {factor}"
            )));
        }
        Ok(DynamicLossScale { factor, ..self })
    }

    /// The same scale with another minimum; an error unless
    /// `min_loss_scale` is floating-point.
    pub fn with_min_loss_scale(self, min_loss_scale: Array) -> Result<DynamicLossScale> {
        expect_float(&min_loss_scale, "DynamicLossScale", "min_loss_scale")?;
        Ok(DynamicLossScale {
            min_loss_scale,
            ..self
        })
    }
}

impl LossScale for DynamicLossScale {
    fn scale<T: Pytree>(&self, tree: &T) -> Result<T> {
        multiply_leaves(tree, &self.loss_scale)
    }

    fn unscale<T: Pytree>(&self, tree: &T) -> Result<T> {
        multiply_leaves(tree, &(1.0 / &self.loss_scale))
    }

    /// jmp's `adjust`, op for op: with `grads_finite`, the scale grows by
    /// `factor` where the counter is at `period - 1` (kept if the grown
    /// scale is not finite), else stays; without, it is
    /// `max(min_loss_scale, loss_scale / factor)`. The counter becomes
    /// `((counter + 1) % period) * grads_finite`. An error unless
    /// `grads_finite` is a bool scalar.
    fn adjust(&self, grads_finite: &Array) -> Result<Self> {
        expect_bool_scalar(grads_finite, "DynamicLossScale::adjust")?;
        let scale = &self.loss_scale;
        let grown = scale * self.factor;
        let first_finite = lax::select(
            &jnp::all(&jnp::isfinite(&grown), None, false),
            &grown,
            scale,
        );
        let at_period = jnp::equal(&self.counter, &Array::weak_scalar(self.period - 1));
        let if_finite = lax::select(&at_period, &first_finite, scale);
        let if_not = jnp::maximum(&self.min_loss_scale, &(scale / self.factor));
        let loss_scale = lax::select(grads_finite, &if_finite, &if_not);
        let counter = ((&self.counter + 1) % self.period) * grads_finite;
        loss_scale.check()?;
        counter.check()?;
        Ok(DynamicLossScale {
            loss_scale,
            counter,
            period: self.period,
            factor: self.factor,
            min_loss_scale: self.min_loss_scale.clone(),
        })
    }
}
