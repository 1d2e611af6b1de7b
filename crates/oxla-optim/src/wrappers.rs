//! Optax's wrappers: transformations that change where, when or how
//! another transformation applies (`optax.masked`, `optax.multi_transform`,
//! `optax.MultiSteps`, `optax.apply_if_finite`, `optax.inject_hyperparams`
//! for the learning rate).

mod apply_if_finite;
mod inject;
mod masked;
mod multi_steps;
mod multi_transform;

pub use apply_if_finite::{ApplyIfFinite, ApplyIfFiniteState, apply_if_finite};
pub use inject::{InjectLearningRate, InjectLearningRateState, inject_learning_rate};
pub use masked::{AdamWMasked, Masked, MaskedState, adamw_with_mask, mask_by_path, masked};
pub use multi_steps::{MultiSteps, MultiStepsState, multi_steps};
pub use multi_transform::{MultiTransform, MultiTransformState, TransformGroups, multi_transform};
