//! `oxla_optim`: optimizers in Optax's style.
//!
//! A [`GradientTransformation`] turns gradients into updates: `init` makes
//! its state from the parameters (a pytree, so it passes through `jit`,
//! donation and checkpoints like the parameters do), `update` maps
//! gradients and state to updates and the next state, and
//! [`apply_updates`] adds the updates to the parameters. Transformations
//! chain as tuples (`(clip_by_global_norm(1.0), adam(1e-3))`, whose state
//! is the tuple of their states, as `optax.chain`), and every formula is
//! Optax's, so the same gradients give the same updates as Optax.
//!
//! A jitted training step with AdamW, its state donated with the model:
//!
//! ```
//! use oxla_nn::{Activation, Mlp};
//! use oxla_optim::{self as optim, GradientTransformation};
//! use oxla::{Array, jit, value_and_grad};
//! # fn main() -> oxla::Result<()> {
//!
//! let model = Mlp::new(oxla::random::Key::new(0), &[4, 8, 1], Activation::Relu);
//! let opt = optim::adamw(1e-3, 1e-4);
//! let state = opt.init(&model);
//! let step = jit(move |(model, state, x): (Mlp, optim::StateOf<optim::AdamW, Mlp>, Array)| {
//!     let (loss, grads) =
//!         value_and_grad(|m: Mlp| oxla::numpy::mean(&m.apply(&x), None, false)).call(model.clone())?;
//!     let (updates, state) = opt.update(grads, state, &model)?;
//!     oxla::Result::Ok((optim::apply_updates(&model, &updates)?, state, loss))
//! })
//! .donate(&[0, 1]);
//! let x = oxla::numpy::ones(&[2, 4], oxla::DType::F32);
//! let (model, state, loss) = step.call((model, state, x.clone()))?;
//! let (_, _, next_loss) = step.call((model, state, x))?;
//! assert!(next_loss.item::<f32>()? < loss.item::<f32>()?);
//! # Ok(())
//! # }
//! ```

mod aliases;
pub use oxla_nn::losses;
mod schedules;
mod transforms;
mod tree;
mod wrappers;

pub use aliases::{
    Adabelief, AdabeliefOptions, Adadelta, Adafactor, AdafactorOptions, Adagrad, Adam, AdamW,
    Adamax, Lamb, LambOptions, Lars, LarsOptions, Lion, Novograd, NovogradOptions, Radam,
    RadamOptions, Rmsprop, RmspropOptions, Sgd, Sm3, adabelief, adabelief_with, adadelta,
    adadelta_with, adafactor, adafactor_with, adagrad, adagrad_with, adam, adam_with, adamax,
    adamax_with, adamw, adamw_with, lamb, lamb_with, lars, lars_with, lion, lion_with, momentum,
    nadam, nadam_with, novograd, novograd_with, radam, radam_with, rmsprop, rmsprop_with, sgd, sm3,
    sm3_with,
};
pub use schedules::Schedule;
pub use transforms::{
    AdadeltaState, AdamState, AddDecayedWeights, Clip, ClipByBlockRms, ClipByGlobalNorm, Ema,
    EmaState, FactoredState, Identity, LionState, NovogradState, RmsState, RssState, Scale,
    ScaleByAdadelta, ScaleByAdam, ScaleByAdamax, ScaleByBelief, ScaleByFactoredRms,
    ScaleByLearningRate, ScaleByLion, ScaleByNovograd, ScaleByParamBlockRms, ScaleByRadam,
    ScaleByRms, ScaleByRss, ScaleBySm3, ScaleByStddev, ScaleByTrustRatio, ScheduleState, Sm3State,
    StddevState, Trace, TraceState, add_decayed_weights, clip, clip_by_block_rms,
    clip_by_global_norm, ema, scale, scale_by_adadelta, scale_by_adam, scale_by_adamax,
    scale_by_belief, scale_by_factored_rms, scale_by_learning_rate, scale_by_lion,
    scale_by_novograd, scale_by_param_block_rms, scale_by_radam, scale_by_rms, scale_by_rss,
    scale_by_sm3, scale_by_stddev, scale_by_trust_ratio, trace,
};
pub use tree::{apply_updates, global_norm};
pub use wrappers::{
    AdamWMasked, ApplyIfFinite, ApplyIfFiniteState, InjectLearningRate, InjectLearningRateState,
    Masked, MaskedState, MultiSteps, MultiStepsState, MultiTransform, MultiTransformState,
    TransformGroups, adamw_with_mask, apply_if_finite, inject_learning_rate, mask_by_path, masked,
    multi_steps, multi_transform,
};

use oxla::Result;
use oxla::pytree::Pytree;

/// A gradient transformation over parameter pytrees of type `P`, as
/// Optax's `GradientTransformation(init, update)`.
///
/// Tuples of transformations are transformations too (`optax.chain`),
/// their state the tuple of their states:
///
/// ```
/// use oxla::Array;
/// use oxla_optim::{self as optim, GradientTransformation};
/// # fn main() -> oxla::Result<()> {
/// let params = vec![Array::from_slice(&[1.0f32], &[1])?, Array::from_slice(&[1.0f32], &[1])?];
/// let grads = vec![Array::from_slice(&[30.0f32], &[1])?, Array::from_slice(&[40.0f32], &[1])?];
/// // Clip the global norm (50) to 5, then SGD at rate 0.1.
/// let opt = (optim::clip_by_global_norm(5.0), optim::sgd(0.1));
/// let state = opt.init(&params);
/// let (updates, _state) = opt.update(grads, state, &params)?;
/// let params = optim::apply_updates(&params, &updates)?;
/// assert!((params[0].item::<f32>()? - 0.7).abs() < 1e-6);   // 1 - 0.1 · 3
/// assert!((params[1].item::<f32>()? - 0.6).abs() < 1e-6);   // 1 - 0.1 · 4
/// # Ok(())
/// # }
/// ```
pub trait GradientTransformation<P: Pytree> {
    /// The optimizer state: a pytree (arrays shaped like the parameters,
    /// step counts).
    type State: Pytree;

    /// The initial state for `params`.
    fn init(&self, params: &P) -> Self::State;

    /// The updates for `updates` (gradients, or the previous transform's
    /// updates in a chain) and the next state; `params` are the current
    /// parameters (for weight decay). An error when the pytrees' structures
    /// differ.
    #[track_caller]
    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)>;
}

/// The state type of transformation `T` over parameters `P` (to name it in
/// a jitted step's arguments).
pub type StateOf<T, P> = <T as GradientTransformation<P>>::State;

/// An optional transformation: `None` passes updates through (and has no
/// state), as a slot of a chain that may be empty (SGD without momentum).
impl<P: Pytree, T: GradientTransformation<P>> GradientTransformation<P> for Option<T> {
    type State = Option<T::State>;

    fn init(&self, params: &P) -> Self::State {
        self.as_ref().map(|t| t.init(params))
    }

    fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
        match (self, state) {
            (None, _) => Ok((updates, None)),
            (Some(t), Some(s)) => {
                let (updates, s) = t.update(updates, s, params)?;
                Ok((updates, Some(s)))
            }
            (Some(_), None) => Err(oxla::Error::InvalidArgument(
                "optimizer update: the state has no entry for a transformation of the chain \
                 (was it made by another optimizer's init?)"
                    .into(),
            )),
        }
    }
}

/// A chain of transformations as a tuple: each transforms the updates of the
/// one before; the state is the tuple of their states (`optax.chain`).
macro_rules! chain_tuple {
    ($(($t:ident, $s:ident)),+) => {
        impl<P: Pytree, $($t: GradientTransformation<P>),+> GradientTransformation<P> for ($($t,)+) {
            type State = ($($t::State,)+);

            fn init(&self, params: &P) -> Self::State {
                #[allow(non_snake_case)]
                let ($($t,)+) = self;
                ($($t.init(params),)+)
            }

            fn update(&self, updates: P, state: Self::State, params: &P) -> Result<(P, Self::State)> {
                #[allow(non_snake_case)]
                let ($($t,)+) = self;
                let ($($s,)+) = state;
                let updates = updates;
                $(let (updates, $s) = $t.update(updates, $s, params)?;)+
                Ok((updates, ($($s,)+)))
            }
        }
    };
}

chain_tuple!((A, a), (B, b));
chain_tuple!((A, a), (B, b), (C, c));
chain_tuple!((A, a), (B, b), (C, c), (D, d));
chain_tuple!((A, a), (B, b), (C, c), (D, d), (E, e));
chain_tuple!((A, a), (B, b), (C, c), (D, d), (E, e), (F, f));
chain_tuple!((A, a), (B, b), (C, c), (D, d), (E, e), (F, f), (G, g));
chain_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h)
);
