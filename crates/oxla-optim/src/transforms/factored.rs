//! Adafactor's second moments: for a matrix (or higher-rank) leaf, running
//! means of the squared gradient's row and column means instead of the
//! full matrix (`optax.scale_by_factored_rms`).

use oxla::Array;
use oxla::DType;
use oxla::Result;
use oxla::numpy as jnp;
use oxla::pytree::{Pytree, tree_map, tree_map_named, tree_structure, tree_unflatten};

use super::{GradientTransformation, safe_increment, zero_count};

/// The two largest axes of `shape` to factor over, `(second largest,
/// largest)` (ties in the order of the axes), or `None` when the leaf is
/// not factored: factoring off, rank below 2, or the second largest axis
/// shorter than `min_dim_size_to_factor` (Optax's `_factored_dims`).
fn factored_dims(
    shape: &[i64],
    factored: bool,
    min_dim_size_to_factor: i64,
) -> Option<(usize, usize)> {
    if !factored || shape.len() < 2 {
        return None;
    }
    let mut sorted: Vec<usize> = (0..shape.len()).collect();
    sorted.sort_by_key(|&axis| shape[axis]);
    let (d1, d0) = (sorted[shape.len() - 2], sorted[shape.len() - 1]);
    (shape[d1] >= min_dim_size_to_factor).then_some((d1, d0))
}

/// `shape` without axis `axis`.
fn without_axis(shape: &[i64], axis: usize) -> Vec<i64> {
    let mut shape = shape.to_vec();
    shape.remove(axis);
    shape
}

/// State of [`ScaleByFactoredRms`]: the step count and, per leaf, either
/// the row and column moments (`v_row`, `v_col`; `v` a placeholder of
/// shape `[1]`) of a factored leaf or the full moment `v` (`v_row` and
/// `v_col` placeholders) of one that is not.
#[derive(oxla::Pytree, Clone, Debug)]
pub struct FactoredState<P: Pytree> {
    /// Steps taken (`int32`).
    pub count: Array,
    /// Running means of squared gradients averaged over the largest axis.
    pub v_row: P,
    /// Running means of squared gradients averaged over the second largest
    /// axis.
    pub v_col: P,
    /// Running means of squared gradients of the leaves not factored.
    pub v: P,
}

/// Adafactor's rescaling: updates divided by the root of a running mean of
/// squared gradients (plus `epsilon`), whose decay grows towards 1 as
/// `1 - (step - step_offset + 1)^(-decay_rate)`; for a leaf whose two
/// largest axes are at least `min_dim_size_to_factor` long, that mean is
/// rebuilt from its row and column means (`optax.scale_by_factored_rms`
/// with its default decay schedule).
#[derive(Debug, Clone, Copy)]
pub struct ScaleByFactoredRms {
    /// Whether to factor the second moments of matrices at all.
    pub factored: bool,
    /// The exponent of the decay schedule.
    pub decay_rate: f64,
    /// Steps to shift the decay schedule by.
    pub step_offset: i64,
    /// The shortest second-largest axis a leaf is factored over.
    pub min_dim_size_to_factor: i64,
    /// Added to the squared gradients.
    pub epsilon: f64,
}

/// `optax.scale_by_factored_rms(factored, decay_rate, step_offset,
/// min_dim_size_to_factor, epsilon)`; Optax's defaults are `(true, 0.8, 0,
/// 128, 1e-30)`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = oxla::numpy::ones(&[4, 3], oxla::DType::F32);
/// let rms = optim::scale_by_factored_rms(true, 0.8, 0, 2, 1e-30);
/// let state = rms.init(&params);
/// assert_eq!(state.v_row.shape(), &[3]);                      // means over the 4 rows
/// assert_eq!(state.v_col.shape(), &[4]);                      // means over the 3 columns
/// let (u, _) = rms.update(params.clone() * 2.0, state, &params)?;
/// // The first step's decay is 0, so the update is g / |g|.
/// assert!(u.to_vec::<f32>()?.iter().all(|x| (x - 1.0).abs() < 1e-6));
/// # Ok(())
/// # }
/// ```
pub fn scale_by_factored_rms(
    factored: bool,
    decay_rate: f64,
    step_offset: i64,
    min_dim_size_to_factor: i64,
    epsilon: f64,
) -> ScaleByFactoredRms {
    ScaleByFactoredRms {
        factored,
        decay_rate,
        step_offset,
        min_dim_size_to_factor,
        epsilon,
    }
}

/// One leaf's update and its next `v_row`, `v_col` and `v`.
struct LeafUpdate {
    update: Array,
    v_row: Array,
    v_col: Array,
    v: Array,
}

impl ScaleByFactoredRms {
    fn dims(&self, shape: &[i64]) -> Option<(usize, usize)> {
        factored_dims(shape, self.factored, self.min_dim_size_to_factor)
    }

    /// The update of `grad` for `param`, `rate` being this step's decay.
    fn leaf_update(
        &self,
        grad: &Array,
        [v_row, v_col, v]: [&Array; 3],
        param: &Array,
        rate: &Array,
    ) -> LeafUpdate {
        let dtype = param.dtype_or_bool();
        let placeholder = || jnp::zeros(&[1], dtype);
        let keep = 1.0 - rate;
        let grad_sqr = grad * grad + self.epsilon;
        match self.dims(param.shape_or_empty()) {
            Some((d1, d0)) => {
                let (d1, d0) = (d1 as i64, d0 as i64);
                let new_v_row = (rate * v_row + &keep * &jnp::mean(&grad_sqr, Some(&[d0]), false))
                    .astype(dtype);
                let new_v_col = (rate * v_col + &keep * &jnp::mean(&grad_sqr, Some(&[d1]), false))
                    .astype(dtype);
                let reduced_d1 = if d1 > d0 { d1 - 1 } else { d1 };
                let row_col_mean = jnp::mean(&new_v_row, Some(&[reduced_d1]), true);
                let minus_half = Array::weak_scalar(-0.5);
                let row_factor = jnp::power(&(&new_v_row / &row_col_mean), &minus_half);
                let col_factor = jnp::power(&new_v_col, &minus_half);
                let update =
                    grad * &jnp::expand_dims(&row_factor, d0) * jnp::expand_dims(&col_factor, d1);
                LeafUpdate {
                    update,
                    v_row: new_v_row,
                    v_col: new_v_col,
                    v: placeholder(),
                }
            }
            None => {
                let new_v = (rate * v + &keep * &grad_sqr).astype(dtype);
                let update = grad * &jnp::power(&new_v, &Array::weak_scalar(-0.5));
                LeafUpdate {
                    update,
                    v_row: placeholder(),
                    v_col: placeholder(),
                    v: new_v,
                }
            }
        }
    }
}

impl<P: Pytree> GradientTransformation<P> for ScaleByFactoredRms {
    type State = FactoredState<P>;

    fn init(&self, params: &P) -> FactoredState<P> {
        let moment = |p: &Array, which: usize| {
            let (shape, dtype) = (p.shape_or_empty(), p.dtype_or_bool());
            let shape = match (self.dims(shape), which) {
                (Some((_, d0)), 0) => without_axis(shape, d0),
                (Some((d1, _)), 1) => without_axis(shape, d1),
                (None, 2) => shape.to_vec(),
                _ => vec![1],
            };
            jnp::zeros(&shape, dtype)
        };
        let tree = |which| {
            tree_map(params, |p| moment(p, which)).expect("a tree rebuilds from its own leaves")
        };
        FactoredState {
            count: zero_count(),
            v_row: tree(0),
            v_col: tree(1),
            v: tree(2),
        }
    }

    fn update(
        &self,
        grads: P,
        state: FactoredState<P>,
        params: &P,
    ) -> Result<(P, FactoredState<P>)> {
        // Optax's `_decay_rate_pow(step - step_offset, decay_rate)`.
        let t = (&state.count - Array::weak_scalar(self.step_offset) + 1).astype(DType::F32);
        let rate = 1.0 - jnp::power(&t, &Array::weak_scalar(-self.decay_rate));
        let (mut v_rows, mut v_cols, mut vs) = (Vec::new(), Vec::new(), Vec::new());
        let trees = [&grads, &state.v_row, &state.v_col, &state.v, params];
        let updates = tree_map_named("scale_by_factored_rms", &trees, |l| {
            let out = self.leaf_update(l[0], [l[1], l[2], l[3]], l[4], &rate);
            v_rows.push(out.v_row);
            v_cols.push(out.v_col);
            vs.push(out.v);
            out.update
        })?;
        let def = tree_structure(&updates);
        let state = FactoredState {
            count: safe_increment(&state.count),
            v_row: tree_unflatten(&def, v_rows)?,
            v_col: tree_unflatten(&def, v_cols)?,
            v: tree_unflatten(&def, vs)?,
        };
        Ok((updates, state))
    }
}
