//! `optax.masked`: a transformation applied to some leaves only.

use oxla::pytree::{Pytree, TreeDef};
use oxla::{Array, Error, Result};

use crate::GradientTransformation;
use crate::schedules::Schedule;
use crate::transforms::{
    AddDecayedWeights, ScaleByAdam, ScaleByLearningRate, add_decayed_weights, scale_by_adam,
    scale_by_learning_rate,
};

/// State of [`Masked`]: the inner transformation's state, made for the
/// masked leaves only (`optax.MaskedState`).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct MaskedState<S: Pytree> {
    /// The inner transformation's state.
    pub inner_state: S,
}

/// Applies `inner` to the leaves whose mask entry is true and passes the
/// others through unchanged (`optax.masked`).
///
/// The mask is a function of the parameters (at `init`) and of the updates
/// (at `update`, as Optax calls it) giving one `bool` per leaf, in
/// flattening order. The inner transformation sees the chosen leaves as a
/// `Vec<Array>` (Optax's tree with `MaskedNode`s, which have no leaves), so
/// its state holds only those leaves, and a global-norm clip inside it sees
/// only those leaves, as in Optax.
#[derive(Debug, Clone)]
pub struct Masked<T, F> {
    /// The transformation applied to the masked leaves.
    pub inner: T,
    /// One `bool` per leaf: whether `inner` applies to it.
    pub mask: F,
}

/// `optax.masked(inner, mask)` with a mask function of the parameters.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = (Array::from_slice(&[2.0f32], &[1])?, Array::from_slice(&[2.0f32], &[1])?);
/// let grads = (Array::from_slice(&[1.0f32], &[1])?, Array::from_slice(&[1.0f32], &[1])?);
/// // Weight decay on the first leaf only.
/// let opt = optim::masked(optim::add_decayed_weights(0.5), |_: &(Array, Array)| vec![true, false]);
/// let (u, _) = opt.update(grads, opt.init(&params), &params)?;
/// assert_eq!(u.0.item::<f32>()?, 2.0);                       // 1 + 0.5 · 2
/// assert_eq!(u.1.item::<f32>()?, 1.0);                       // unchanged
/// # Ok(())
/// # }
/// ```
pub fn masked<T, F>(inner: T, mask: F) -> Masked<T, F> {
    Masked { inner, mask }
}

/// A mask function choosing the leaves whose key path (as
/// [`TreeDef::leaf_paths`] writes it: `[0]`, `.layers[1].b`, `['w']`)
/// satisfies `keep`.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::mask_by_path;
/// # fn main() -> oxla::Result<()> {
/// let params = (Array::scalar(1.0f32)?, Array::scalar(2.0f32)?);
/// let not_second = mask_by_path(|path: &str| path != "[1]");
/// assert_eq!(not_second(&params), vec![true, false]);
/// # Ok(())
/// # }
/// ```
pub fn mask_by_path<P: Pytree>(keep: impl Fn(&str) -> bool) -> impl Fn(&P) -> Vec<bool> {
    move |params: &P| {
        params
            .flatten()
            .1
            .leaf_paths()
            .iter()
            .map(|p| keep(p))
            .collect()
    }
}

/// An error unless `mask` has one entry per leaf of `def`.
pub(crate) fn check_mask_length(what: &str, mask: &[bool], def: &TreeDef) -> Result<()> {
    let leaves = def.num_leaves();
    if mask.len() == leaves {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{what}: the mask has {} entries but the pytree {def} has {leaves} leaves (one bool per \
         leaf, in the order of {:?})",
        mask.len(),
        def.leaf_paths()
    )))
}

/// The leaves whose mask entry is true.
pub(crate) fn chosen(leaves: &[Array], mask: &[bool]) -> Vec<Array> {
    leaves
        .iter()
        .zip(mask)
        .filter(|(_, m)| **m)
        .map(|(l, _)| l.clone())
        .collect()
}

/// The inner state for `params` under `mask`: when the mask does not fit
/// the parameters, the state is made from leaves carrying that error (so
/// the first use of the state reports it; `update` checks again).
pub(crate) fn masked_init<P: Pytree, T: GradientTransformation<Vec<Array>>>(
    what: &str,
    inner: &T,
    params: &P,
    mask: &[bool],
) -> T::State {
    let (leaves, def) = params.flatten();
    match check_mask_length(what, mask, &def) {
        Ok(()) => inner.init(&chosen(&leaves, mask)),
        Err(e) => inner.init(&leaves.iter().map(|_| Array::error(e.clone())).collect()),
    }
}

/// `inner` applied to the leaves of `updates` (and of `params`) chosen by
/// `mask`, the others unchanged; `mask` has been checked against `updates`.
pub(crate) fn masked_leaves_update<T: GradientTransformation<Vec<Array>>>(
    what: &str,
    inner: &T,
    mask: &[bool],
    updates: Vec<Array>,
    params: &[Array],
    state: T::State,
) -> Result<(Vec<Array>, T::State)> {
    if params.len() != updates.len() {
        return Err(Error::InvalidArgument(format!(
            "{what}: the updates have {} leaves but the parameters have {}",
            updates.len(),
            params.len()
        )));
    }
    let want = mask.iter().filter(|m| **m).count();
    let (new, state) = inner.update(chosen(&updates, mask), state, &chosen(params, mask))?;
    if new.len() != want {
        return Err(Error::InvalidArgument(format!(
            "{what}: the inner transformation returned {} leaves for {want} masked leaves",
            new.len()
        )));
    }
    let mut new = new.into_iter();
    let merged = updates
        .into_iter()
        .zip(mask)
        .map(|(old, m)| if *m { new.next().unwrap_or(old) } else { old })
        .collect();
    Ok((merged, state))
}

impl<P, T, F> GradientTransformation<P> for Masked<T, F>
where
    P: Pytree,
    T: GradientTransformation<Vec<Array>>,
    F: Fn(&P) -> Vec<bool>,
{
    type State = MaskedState<T::State>;

    fn init(&self, params: &P) -> Self::State {
        let mask = (self.mask)(params);
        MaskedState {
            inner_state: masked_init("masked", &self.inner, params, &mask),
        }
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        let mask = (self.mask)(&updates);
        let (leaves, def) = updates.flatten();
        check_mask_length("masked", &mask, &def)?;
        let (param_leaves, param_def) = params.flatten();
        if param_def != def {
            return Err(Error::InvalidArgument(format!(
                "masked: the updates are {def} but the parameters are {param_def}"
            )));
        }
        let (merged, inner_state) = masked_leaves_update(
            "masked",
            &self.inner,
            &mask,
            leaves,
            &param_leaves,
            state.inner_state,
        )?;
        Ok((
            P::unflatten_from(&def, &mut merged.into_iter())?,
            MaskedState { inner_state },
        ))
    }
}

/// AdamW whose weight decay applies only where the mask is true:
/// `(scale_by_adam, masked(add_decayed_weights, mask), scale_by_learning_rate)`.
pub type AdamWMasked<F> = (
    ScaleByAdam,
    Masked<AddDecayedWeights, F>,
    ScaleByLearningRate,
);

/// `optax.adamw(learning_rate, b1, b2, eps, weight_decay, mask=mask)`: the
/// decay skips the leaves whose mask entry is false (biases, norm scales).
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// type Tree = (Array, Array);
/// let params: Tree = (Array::from_slice(&[2.0f32], &[1])?, Array::from_slice(&[2.0f32], &[1])?);
/// let grads: Tree = (Array::from_slice(&[1.0f32], &[1])?, Array::from_slice(&[1.0f32], &[1])?);
/// let opt = optim::adamw_with_mask(0.1, 0.9, 0.999, 1e-8, 0.5, |_: &Tree| vec![true, false]);
/// let (u, _) = opt.update(grads, opt.init(&params), &params)?;
/// assert!((u.0.item::<f32>()? + 0.2).abs() < 1e-5);          // -0.1 · (1 + 0.5 · 2)
/// assert!((u.1.item::<f32>()? + 0.1).abs() < 1e-5);          // -0.1 · 1: no decay
/// # Ok(())
/// # }
/// ```
pub fn adamw_with_mask<F>(
    learning_rate: impl Into<Schedule>,
    b1: f64,
    b2: f64,
    eps: f64,
    weight_decay: f64,
    mask: F,
) -> AdamWMasked<F> {
    (
        scale_by_adam(b1, b2, eps),
        masked(add_decayed_weights(weight_decay), mask),
        scale_by_learning_rate(learning_rate),
    )
}
