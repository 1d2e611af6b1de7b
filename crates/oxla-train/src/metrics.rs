//! Metrics accumulated over steps, as `clu.metrics`: a metric's state is a
//! small pytree made from one step's model output inside the jitted step
//! ([`Average::from_model_output`], [`Accuracy::from_model_output`], …),
//! returned from it, [`merge`](Metric::merge)d across steps (and batches)
//! on the host or on the device, and turned into its value by
//! [`compute`](Metric::compute).
//!
//! Every metric here is a sum of per-step sums (totals, counts, a count
//! matrix), so merging adds their leaves: [`merge`] does that for any
//! pytree of them, such as a user's `#[derive(Pytree)]` struct of metrics.
//! A [`Collection`] names several metrics and makes them all from one
//! step's named outputs ([`ModelOutput`]), as a `clu.metrics.Collection`.
//!
//! Masks follow clu: a mask's leading dimension is the values' leading
//! dimension, it broadcasts over the values' trailing dimensions, and an
//! element whose mask is zero counts for nothing.
//!
//! ```
//! use oxla::{Array, jit};
//! use oxla_train::metrics::{Accuracy, Average, Metric};
//! # fn main() -> oxla::Result<()> {
//! let step = jit(|(logits, labels): (Array, Array)| {
//!     Accuracy::from_model_output(&logits, &labels, None)
//! });
//! let logits = Array::from_slice(&[0.9f32, 0.1, 0.2, 0.8, 0.7, 0.3], &[3, 2])?;
//! let a = step.call((logits.clone(), Array::from_slice(&[0i32, 1, 1], &[3])?))?;
//! let b = step.call((logits, Array::from_slice(&[0i32, 0, 1], &[3])?))?;
//! assert_eq!(a.merge(&b)?.compute().item::<f32>()?, 3.0 / 6.0);
//! let loss = Average::from_model_output(&Array::scalar(2.0f32)?, None)?;
//! assert_eq!(loss.compute().item::<f32>()?, 2.0);
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::panic::Location;

use oxla::pytree::{Pytree, TreeDef, mismatch, tree_map2};
use oxla::{Array, DType, Error, Result, lax, numpy as jnp};

/// A metric's state: a pytree made from model outputs, merged across
/// steps, computed into its value.
pub trait Metric: Pytree + Clone {
    /// The state of `self`'s and `other`'s examples together (clu's
    /// `merge`): their leaves added. An error when the two differ in
    /// structure (a confusion matrix of another class count).
    #[track_caller]
    fn merge(&self, other: &Self) -> Result<Self> {
        merge(self, other)
    }

    /// The metric's value (clu's `compute`).
    fn compute(&self) -> Array;
}

/// Any pytree of additive metric states (or of plain sums) merged: leaf by
/// leaf added. A user's struct of metrics merges with this.
#[track_caller]
pub fn merge<T: Pytree>(a: &T, b: &T) -> Result<T> {
    tree_map2(a, b, |x, y| x + y)
}

/// `values` (a scalar becomes a vector of one) and its mask as bools of
/// the same rank, as clu's `_broadcast_masks`: the mask's leading dimension
/// must be the values', and it is broadcast over their trailing ones. No
/// mask is all true.
#[track_caller]
fn broadcast_mask(metric: &str, values: &Array, mask: Option<&Array>) -> Result<(Array, Array)> {
    let caller = Location::caller();
    let values_aval = values.aval()?;
    let values = if values_aval.shape.is_empty() {
        jnp::reshape(values, &[1])
    } else {
        values.clone()
    };
    let shape = values.try_shape()?.to_vec();
    let Some(mask) = mask else {
        return Ok((values, jnp::ones(&shape, DType::Bool)));
    };
    let mask_aval = mask.aval()?;
    if mask_aval.shape.first() != shape.first() || mask_aval.shape.len() > shape.len() {
        return Err(Error::InvalidArgument(format!(
            "{metric} at {caller}: a mask {mask_aval} for values {values_aval}: the mask's \
             leading dimension must be the values' and it must not have more dimensions"
        )));
    }
    let mut expanded = mask_aval.shape.to_vec();
    expanded.resize(shape.len(), 1);
    let mask = jnp::not_equal(&jnp::reshape(mask, &expanded), &Array::scalar(0i32)?);
    Ok((values, jnp::broadcast_to(&mask, &shape)))
}

/// The masked sum of `values` (float; other dtypes as f32) and the count of
/// masked-in elements (i32).
fn masked_sum_and_count(values: &Array, mask: &Array) -> (Array, Array) {
    let values = if values.dtype().is_float() {
        values.clone()
    } else {
        values.astype(DType::F32)
    };
    let total = jnp::sum(
        &jnp::where_(mask, &values, &jnp::zeros_like(&values)),
        None,
        false,
    );
    let count = jnp::sum(&mask.astype(DType::I32), None, false);
    (total, count)
}

/// `total / count` as a float.
fn ratio(total: &Array, count: &Array) -> Array {
    total / &count.astype(total.dtype())
}

/// The mean of values over steps, weighted by how many each step had
/// (`clu.metrics.Average`).
#[derive(oxla::Pytree, Debug, Clone)]
pub struct Average {
    /// The sum of the values (f32, or the values' float dtype).
    pub total: Array,
    /// How many values (i32).
    pub count: Array,
}

impl Average {
    /// No values yet: total 0 (f32), count 0.
    pub fn empty() -> Result<Average> {
        Ok(Average {
            total: Array::scalar(0f32)?,
            count: Array::scalar(0i32)?,
        })
    }

    /// The sum and count of `values` (any shape; a scalar is one value)
    /// where `mask` (see the [module](crate::metrics) docs) is nonzero.
    #[track_caller]
    pub fn from_model_output(values: &Array, mask: Option<&Array>) -> Result<Average> {
        let (values, mask) = broadcast_mask("Average::from_model_output", values, mask)?;
        let (total, count) = masked_sum_and_count(&values, &mask);
        Ok(Average { total, count })
    }
}

impl Metric for Average {
    /// The mean, `total / count` (NaN with no values, as clu's).
    fn compute(&self) -> Array {
        ratio(&self.total, &self.count)
    }
}

/// The standard deviation of values over steps (`clu.metrics.Std`, the
/// population's: divided by the count).
#[derive(oxla::Pytree, Debug, Clone)]
pub struct Std {
    /// The sum of the values.
    pub total: Array,
    /// The sum of their squares.
    pub sum_of_squares: Array,
    /// How many values (i32).
    pub count: Array,
}

impl Std {
    /// The sums and count of `values` where `mask` is nonzero, as
    /// [`Average::from_model_output`].
    #[track_caller]
    pub fn from_model_output(values: &Array, mask: Option<&Array>) -> Result<Std> {
        let (values, mask) = broadcast_mask("Std::from_model_output", values, mask)?;
        let (total, count) = masked_sum_and_count(&values, &mask);
        let (sum_of_squares, _) = masked_sum_and_count(&(&values * &values), &mask);
        Ok(Std {
            total,
            sum_of_squares,
            count,
        })
    }
}

impl Metric for Std {
    /// `sqrt(max(sum_of_squares / count - mean², 0))`.
    fn compute(&self) -> Array {
        let mean = ratio(&self.total, &self.count);
        let variance = ratio(&self.sum_of_squares, &self.count) - &mean * &mean;
        jnp::sqrt(&jnp::maximum(&variance, &jnp::zeros_like(&variance)))
    }
}

/// The fraction of examples whose largest logit is at their label
/// (`clu.metrics.Accuracy`): an [`Average`] of hits.
#[derive(oxla::Pytree, Debug, Clone)]
pub struct Accuracy {
    /// How many masked-in examples were right (f32).
    pub total: Array,
    /// How many masked-in examples (i32).
    pub count: Array,
}

impl Accuracy {
    /// The hits of `logits` (`[..., classes]`) against integer `labels`
    /// (`[...]`, the logits' shape without the last axis): an example is
    /// right when `argmax(logits, -1) == label`; only examples where
    /// `mask` is nonzero count. Other shapes or a non-integer label dtype
    /// are an error naming both types and the caller's line.
    #[track_caller]
    pub fn from_model_output(
        logits: &Array,
        labels: &Array,
        mask: Option<&Array>,
    ) -> Result<Accuracy> {
        check_logits_and_labels("Accuracy::from_model_output", logits, labels)?;
        let hits = lax::eq(
            &jnp::argmax(logits, Some(-1)).astype(labels.dtype()),
            labels,
        );
        let (hits, mask) = broadcast_mask("Accuracy::from_model_output", &hits, mask)?;
        let (total, count) = masked_sum_and_count(&hits, &mask);
        Ok(Accuracy { total, count })
    }
}

impl Metric for Accuracy {
    /// `total / count`.
    fn compute(&self) -> Array {
        ratio(&self.total, &self.count)
    }
}

/// An error unless `logits` is float `[..., classes]` and `labels` integer
/// `[...]` (the logits' shape without the last axis).
#[track_caller]
fn check_logits_and_labels(metric: &str, logits: &Array, labels: &Array) -> Result<()> {
    let caller = Location::caller();
    let (l, y) = (logits.aval()?, labels.aval()?);
    let fits = l.dtype.is_float()
        && y.dtype.is_int()
        && !l.shape.is_empty()
        && l.shape[..l.shape.len() - 1] == y.shape[..];
    if !fits {
        return Err(Error::InvalidArgument(format!(
            "{metric} at {caller}: logits {l} and labels {y}: expected float logits \
             [..., classes] and integer labels of the logits' shape without the last axis"
        )));
    }
    Ok(())
}

/// Counts of (label, prediction) pairs: `matrix[t, p]` is how many
/// examples of label `t` were predicted `p` (rows labels, columns
/// predictions, as `sklearn.metrics.confusion_matrix`). Labels and
/// predictions outside `[0, num_classes)` are not counted.
#[derive(oxla::Pytree, Debug, Clone)]
pub struct ConfusionMatrix {
    /// The counts, i32 `[num_classes, num_classes]`.
    pub matrix: Array,
    /// The number of classes.
    #[pytree(static)]
    pub num_classes: i64,
}

impl ConfusionMatrix {
    /// No examples yet: a zero matrix.
    pub fn empty(num_classes: i64) -> ConfusionMatrix {
        ConfusionMatrix {
            matrix: jnp::zeros(&[num_classes, num_classes], DType::I32),
            num_classes,
        }
    }

    /// The counts of integer `predictions` against integer `labels` of the
    /// same shape, where `mask` (of their shape) is nonzero. Other shapes
    /// or dtypes are an error naming them and the caller's line.
    #[track_caller]
    pub fn from_predictions(
        predictions: &Array,
        labels: &Array,
        mask: Option<&Array>,
        num_classes: i64,
    ) -> Result<ConfusionMatrix> {
        let caller = Location::caller();
        let (p, y) = (predictions.aval()?, labels.aval()?);
        let mask_aval = mask.map(Array::aval).transpose()?;
        if !p.dtype.is_int()
            || !y.dtype.is_int()
            || p.shape != y.shape
            || mask_aval.is_some_and(|m| m.shape != y.shape)
            || num_classes < 1
        {
            let mask_text = mask_aval.map_or(String::new(), |m| format!(", mask {m}"));
            return Err(Error::InvalidArgument(format!(
                "ConfusionMatrix at {caller}: predictions {p}, labels {y}{mask_text}, \
                 {num_classes} classes: expected integer predictions and labels of one shape \
                 (and a mask of that shape) and at least one class"
            )));
        }
        let n = y.shape.iter().product::<i64>();
        let rows = jnp::one_hot(&jnp::reshape(labels, &[n]), num_classes, DType::I32);
        let rows = match mask {
            Some(m) => {
                let keep = jnp::not_equal(&jnp::reshape(m, &[n, 1]), &Array::scalar(0i32)?);
                &rows * &keep.astype(DType::I32)
            }
            None => rows,
        };
        let columns = jnp::one_hot(&jnp::reshape(predictions, &[n]), num_classes, DType::I32);
        let matrix = jnp::matmul(&jnp::transpose(&rows, None), &columns);
        matrix.check()?;
        Ok(ConfusionMatrix {
            matrix,
            num_classes,
        })
    }

    /// The counts of `argmax(logits, -1)` against `labels`, as
    /// [`Accuracy::from_model_output`] takes them; the class count is the
    /// logits' last dimension.
    #[track_caller]
    pub fn from_logits(
        logits: &Array,
        labels: &Array,
        mask: Option<&Array>,
    ) -> Result<ConfusionMatrix> {
        check_logits_and_labels("ConfusionMatrix::from_logits", logits, labels)?;
        let classes = *logits
            .try_shape()?
            .last()
            .expect("checked: rank at least 1");
        let predictions = jnp::argmax(logits, Some(-1)).astype(DType::I32);
        Self::from_predictions(&predictions, labels, mask, classes)
    }
}

impl Metric for ConfusionMatrix {
    /// The count matrix.
    fn compute(&self) -> Array {
        self.matrix.clone()
    }
}

/// One step's named outputs that a [`Collection`] makes its metrics of
/// (clu's keyword arguments): `logits`, `labels` and `mask` by convention,
/// and any value an [`Average`] or [`Std`] names (`loss`).
#[derive(Debug, Clone, Default)]
pub struct ModelOutput {
    arrays: BTreeMap<String, Array>,
}

impl ModelOutput {
    /// No outputs.
    pub fn new() -> ModelOutput {
        ModelOutput::default()
    }

    /// `self` with `array` named `name` (replacing one of that name).
    pub fn with(mut self, name: &str, array: &Array) -> ModelOutput {
        self.arrays.insert(name.to_string(), array.clone());
        self
    }

    /// The output `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.arrays.get(name)
    }

    /// The output `name`, or an error naming it, the metric that needs it
    /// and the outputs there are.
    fn require(&self, name: &str, metric: &str) -> Result<&Array> {
        self.get(name).ok_or_else(|| {
            let have: Vec<&str> = self.arrays.keys().map(String::as_str).collect();
            Error::InvalidArgument(format!(
                "metric {metric:?} needs the model output {name:?}, and the outputs are {have:?}"
            ))
        })
    }
}

/// Which metric a [`Collection`] makes of the model output, and from which
/// outputs (clu's metric classes and `Average.from_output(name)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricSpec {
    /// The [`Average`] of the output of this name, masked by `mask` when
    /// there is one whose leading dimension is the output's (so a scalar
    /// loss beside a per-example mask is not masked, as in clu).
    Average(String),
    /// The [`Std`] of the output of this name, masked as `Average`.
    Std(String),
    /// The [`Accuracy`] of `logits` against `labels`, masked by `mask`.
    Accuracy,
    /// The [`ConfusionMatrix`] of `logits` against `labels`, masked by
    /// `mask`.
    ConfusionMatrix,
}

/// One metric of a [`Collection`]: a pytree whose structure says which.
#[derive(Debug, Clone)]
pub enum AnyMetric {
    /// An [`Average`].
    Average(Average),
    /// A [`Std`].
    Std(Std),
    /// An [`Accuracy`].
    Accuracy(Accuracy),
    /// A [`ConfusionMatrix`].
    ConfusionMatrix(ConfusionMatrix),
}

impl Pytree for AnyMetric {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        match self {
            AnyMetric::Average(m) => m.flatten_into(leaves),
            AnyMetric::Std(m) => m.flatten_into(leaves),
            AnyMetric::Accuracy(m) => m.flatten_into(leaves),
            AnyMetric::ConfusionMatrix(m) => m.flatten_into(leaves),
        }
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(match def {
            TreeDef::Struct("Average", _) => {
                AnyMetric::Average(Average::unflatten_from(def, leaves)?)
            }
            TreeDef::Struct("Std", _) => AnyMetric::Std(Std::unflatten_from(def, leaves)?),
            TreeDef::Struct("Accuracy", _) => {
                AnyMetric::Accuracy(Accuracy::unflatten_from(def, leaves)?)
            }
            TreeDef::Struct("ConfusionMatrix", _) => {
                AnyMetric::ConfusionMatrix(ConfusionMatrix::unflatten_from(def, leaves)?)
            }
            other => return Err(mismatch(other, "metric")),
        })
    }
}

impl Metric for AnyMetric {
    fn compute(&self) -> Array {
        match self {
            AnyMetric::Average(m) => m.compute(),
            AnyMetric::Std(m) => m.compute(),
            AnyMetric::Accuracy(m) => m.compute(),
            AnyMetric::ConfusionMatrix(m) => m.compute(),
        }
    }
}

/// Named metrics made together from one step's [`ModelOutput`]
/// (`clu.metrics.Collection`): a pytree, so a jitted step returns it, and
/// collections of the same metrics merge.
///
/// ```
/// use oxla::{Array, jit};
/// use oxla_train::metrics::{Collection, Metric, MetricSpec, ModelOutput};
/// # fn main() -> oxla::Result<()> {
/// let specs = [("accuracy", MetricSpec::Accuracy), ("loss", MetricSpec::Average("loss".into()))];
/// let step = jit(|(logits, labels): (Array, Array)| {
///     let loss = oxla::numpy::mean(&logits, None, false);
///     let out = ModelOutput::new().with("logits", &logits).with("labels", &labels).with("loss", &loss);
///     Collection::from_model_output(&specs, &out)
/// });
/// let logits = Array::from_slice(&[1f32, 0.0, 0.0, 1.0], &[2, 2])?;
/// let labels = Array::from_slice(&[0i32, 0], &[2])?;
/// let metrics = step.call((logits.clone(), labels.clone()))?.merge(&step.call((logits, labels))?)?;
/// let values = metrics.compute();
/// assert_eq!(values["accuracy"].item::<f32>()?, 0.5);
/// assert_eq!(values["loss"].item::<f32>()?, 0.5);
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Debug, Clone)]
pub struct Collection {
    /// The metrics by name.
    pub metrics: BTreeMap<String, AnyMetric>,
}

impl Collection {
    /// Each metric of `specs` made from `outputs` (clu's
    /// `single_from_model_output`). A missing output is an error naming it.
    #[track_caller]
    pub fn from_model_output(
        specs: &[(&str, MetricSpec)],
        outputs: &ModelOutput,
    ) -> Result<Collection> {
        let mask = outputs.get("mask");
        let mut metrics = BTreeMap::new();
        for (name, spec) in specs {
            let metric = match spec {
                MetricSpec::Average(output) | MetricSpec::Std(output) => {
                    let values = outputs.require(output, name)?;
                    let leading = values.try_shape()?.first().copied();
                    let mask = mask
                        .filter(|m| m.try_shape().ok().and_then(|s| s.first().copied()) == leading);
                    if matches!(spec, MetricSpec::Average(_)) {
                        AnyMetric::Average(Average::from_model_output(values, mask)?)
                    } else {
                        AnyMetric::Std(Std::from_model_output(values, mask)?)
                    }
                }
                MetricSpec::Accuracy => AnyMetric::Accuracy(Accuracy::from_model_output(
                    outputs.require("logits", name)?,
                    outputs.require("labels", name)?,
                    mask,
                )?),
                MetricSpec::ConfusionMatrix => {
                    AnyMetric::ConfusionMatrix(ConfusionMatrix::from_logits(
                        outputs.require("logits", name)?,
                        outputs.require("labels", name)?,
                        mask,
                    )?)
                }
            };
            metrics.insert(name.to_string(), metric);
        }
        Ok(Collection { metrics })
    }

    /// The metrics of `self`'s and `other`'s examples together (clu's
    /// `merge`); an error when the two hold other metrics.
    #[track_caller]
    pub fn merge(&self, other: &Collection) -> Result<Collection> {
        merge(self, other)
    }

    /// Every metric's value by name (clu's `compute`).
    pub fn compute(&self) -> BTreeMap<String, Array> {
        self.metrics
            .iter()
            .map(|(k, m)| (k.clone(), m.compute()))
            .collect()
    }
}
