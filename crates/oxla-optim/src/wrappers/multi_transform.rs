//! `optax.multi_transform` (`optax.partition`): a transformation per group
//! of parameters.

use oxla::pytree::{Pytree, TreeDef};
use oxla::{Array, Error, Result};

use super::masked::{masked_init, masked_leaves_update};
use crate::GradientTransformation;

/// A tuple of transformations over the leaves of one group each (a
/// `Vec<Array>`), indexed by group label `0, 1, …`: what
/// [`multi_transform`] takes. Implemented for tuples of 2 to 6
/// transformations.
pub trait TransformGroups {
    /// The tuple of the groups' states.
    type States: Pytree;

    /// How many groups (transformations) there are.
    fn len(&self) -> usize;

    /// Whether there are no groups (never, for the tuples it is
    /// implemented for).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each group's initial state for the parameter leaves labelled with it.
    fn init_groups(&self, leaves: &[Array], labels: &[usize]) -> Self::States;

    /// Each group's transformation applied in turn to the leaves labelled
    /// with it, the other leaves unchanged.
    fn update_groups(
        &self,
        updates: Vec<Array>,
        states: Self::States,
        params: &[Array],
        labels: &[usize],
    ) -> Result<(Vec<Array>, Self::States)>;
}

/// The mask of group `group`: the leaves labelled with it.
fn group_mask(labels: &[usize], group: usize) -> Vec<bool> {
    labels.iter().map(|l| *l == group).collect()
}

macro_rules! transform_groups {
    ($n:literal; $(($t:ident, $s:ident, $i:tt)),+) => {
        impl<$($t: GradientTransformation<Vec<Array>>),+> TransformGroups for ($($t,)+) {
            type States = ($($t::State,)+);

            fn len(&self) -> usize {
                $n
            }

            fn init_groups(&self, leaves: &[Array], labels: &[usize]) -> Self::States {
                let leaves = leaves.to_vec();
                ($(masked_init("multi_transform", &self.$i, &leaves, &group_mask(labels, $i)),)+)
            }

            fn update_groups(
                &self,
                updates: Vec<Array>,
                states: Self::States,
                params: &[Array],
                labels: &[usize],
            ) -> Result<(Vec<Array>, Self::States)> {
                #[allow(non_snake_case)]
                let ($($s,)+) = states;
                $(let (updates, $s) = masked_leaves_update(
                    "multi_transform",
                    &self.$i,
                    &group_mask(labels, $i),
                    updates,
                    params,
                    $s,
                )?;)+
                Ok((updates, ($($s,)+)))
            }
        }
    };
}

transform_groups!(2; (A, a, 0), (B, b, 1));
transform_groups!(3; (A, a, 0), (B, b, 1), (C, c, 2));
transform_groups!(4; (A, a, 0), (B, b, 1), (C, c, 2), (D, d, 3));
transform_groups!(5; (A, a, 0), (B, b, 1), (C, c, 2), (D, d, 3), (E, e, 4));
transform_groups!(6; (A, a, 0), (B, b, 1), (C, c, 2), (D, d, 3), (E, e, 4), (F, f, 5));

/// State of [`MultiTransform`]: each group's state, a tuple in the order of
/// the transformations (`optax.PartitionState`).
#[derive(oxla::Pytree, Clone, Debug)]
pub struct MultiTransformState<S: Pytree> {
    /// The groups' states.
    pub inner_states: S,
}

/// A transformation per group of parameters (`optax.multi_transform`): the
/// label function gives each leaf (in flattening order) the index of its
/// group's transformation in the tuple `transforms`; each transformation
/// sees only its group's leaves (as a `Vec<Array>`) and keeps its own state.
#[derive(Debug, Clone)]
pub struct MultiTransform<Ts, F> {
    /// The groups' transformations, a tuple indexed by label.
    pub transforms: Ts,
    /// One label per leaf: the index in `transforms` of its transformation.
    pub labels: F,
}

/// `optax.multi_transform(transforms, param_labels)` with the
/// transformations a tuple and the labels their indices.
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// type Tree = (Array, Array);
/// let params: Tree = (Array::from_slice(&[1.0f32], &[1])?, Array::from_slice(&[1.0f32], &[1])?);
/// let grads: Tree = (Array::from_slice(&[2.0f32], &[1])?, Array::from_slice(&[2.0f32], &[1])?);
/// // SGD at 0.1 on the first leaf, at 0.5 on the second.
/// let opt = optim::multi_transform((optim::sgd(0.1), optim::sgd(0.5)), |_: &Tree| vec![0, 1]);
/// let (u, _) = opt.update(grads, opt.init(&params), &params)?;
/// assert!((u.0.item::<f32>()? + 0.2).abs() < 1e-6);
/// assert!((u.1.item::<f32>()? + 1.0).abs() < 1e-6);
/// # Ok(())
/// # }
/// ```
pub fn multi_transform<Ts, F>(transforms: Ts, labels: F) -> MultiTransform<Ts, F> {
    MultiTransform { transforms, labels }
}

/// An error unless every label names a transformation and there is one per
/// leaf.
fn check_labels(labels: &[usize], groups: usize, def: &TreeDef) -> Result<()> {
    if labels.len() != def.num_leaves() {
        return Err(Error::InvalidArgument(format!(
            "multi_transform: {} labels for the pytree {def} of {} leaves (one label per leaf, \
             in the order of {:?})",
            labels.len(),
            def.num_leaves(),
            def.leaf_paths()
        )));
    }
    match labels
        .iter()
        .zip(def.leaf_paths())
        .find(|(l, _)| **l >= groups)
    {
        None => Ok(()),
        Some((label, path)) => Err(Error::InvalidArgument(format!(
            "multi_transform: the leaf {path} has label {label}, but there are {groups} \
             transformations (labels 0 to {})",
            groups - 1
        ))),
    }
}

impl<P, Ts, F> GradientTransformation<P> for MultiTransform<Ts, F>
where
    P: Pytree,
    Ts: TransformGroups,
    F: Fn(&P) -> Vec<usize>,
{
    type State = MultiTransformState<Ts::States>;

    fn init(&self, params: &P) -> Self::State {
        let labels = (self.labels)(params);
        let (leaves, def) = params.flatten();
        let inner_states = match check_labels(&labels, self.transforms.len(), &def) {
            Ok(()) => self.transforms.init_groups(&leaves, &labels),
            Err(e) => {
                // The first group's state is made from leaves carrying the
                // error, so the state's first use reports it (and `update`
                // checks the labels again).
                let broken: Vec<Array> = leaves.iter().map(|_| Array::error(e.clone())).collect();
                self.transforms.init_groups(&broken, &vec![0; broken.len()])
            }
        };
        MultiTransformState { inner_states }
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        let labels = (self.labels)(&updates);
        let (leaves, def) = updates.flatten();
        check_labels(&labels, self.transforms.len(), &def)?;
        let (param_leaves, param_def) = params.flatten();
        if param_def != def {
            return Err(Error::InvalidArgument(format!(
                "multi_transform: the updates are {def} but the parameters are {param_def}"
            )));
        }
        let (merged, inner_states) =
            self.transforms
                .update_groups(leaves, state.inner_states, &param_leaves, &labels)?;
        Ok((
            P::unflatten_from(&def, &mut merged.into_iter())?,
            MultiTransformState { inner_states },
        ))
    }
}
