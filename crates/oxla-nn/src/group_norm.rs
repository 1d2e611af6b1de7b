//! [`GroupNorm`]: normalization over groups of channels, as Flax's
//! `nn.GroupNorm` (channels last).

use oxla::numpy as jnp;
use oxla::{Array, DType};

use super::norm_stats::{
    check_scaled_layer, compute_stats, constructor_error, input_error, normalize,
};

/// Flax's `num_groups` default.
const DEFAULT_NUM_GROUPS: i64 = 32;
/// Flax's `epsilon` default for `GroupNorm`.
const DEFAULT_EPSILON: f64 = 1e-6;

/// Splits the channels (the last axis) into `num_groups` groups of
/// consecutive channels and normalizes each example's group over its
/// channels and every axis between the first (the batch) and the last,
/// then scales and shifts per channel, as Flax's `nn.GroupNorm`.
///
/// ```
/// use oxla::{DType, numpy as jnp, random::{self, Key}};
/// use oxla_nn::GroupNorm;
/// # fn main() -> oxla::Result<()> {
/// let gn = GroupNorm::with_num_groups(8, 4);               // 4 groups of 2 channels
/// let x = random::normal(Key::new(0), &[2, 5, 5, 8], DType::F32);   // NHWC
/// let y = gn.apply(&x);
/// // Each example's group (5 × 5 × 2 values) has mean 0.
/// let groups = jnp::reshape(&y, &[2, 5, 5, 4, 2]);
/// let means = jnp::mean(&groups, Some(&[1, 2, 4]), false).to_vec::<f32>()?;
/// assert!(means.iter().all(|m| m.abs() < 1e-5), "{means:?}");
/// assert_eq!(GroupNorm::with_group_size(8, 2).num_groups, 4);
/// // 8 channels do not split into Flax's default 32 groups.
/// assert!(GroupNorm::new(8).apply(&x).check().is_err());
/// # Ok(())
/// # }
/// ```
#[derive(oxla::Pytree, Clone, Debug)]
pub struct GroupNorm {
    /// `[channels]`, ones at first; `None` when not scaled.
    pub scale: Option<Array>,
    /// `[channels]`, zeros at first; `None` when not shifted.
    pub bias: Option<Array>,
    /// Number of groups the channels split into.
    #[pytree(static)]
    pub num_groups: i64,
    /// Added to the variance.
    #[pytree(static)]
    pub epsilon: f64,
    /// The variance as `E[x²] - E[x]²` clipped at 0 (Flax's default), else
    /// as `E[(x - E[x])²]`.
    #[pytree(static)]
    pub use_fast_variance: bool,
}

impl GroupNorm {
    /// A group norm over `channels` in Flax's default 32 groups, with scale
    /// and bias, f32, epsilon 1e-6. The layer carries an error (reported by
    /// `apply`) when 32 does not divide `channels`.
    #[track_caller]
    pub fn new(channels: i64) -> GroupNorm {
        GroupNorm::build("GroupNorm::new", channels, DEFAULT_NUM_GROUPS)
    }

    /// A group norm over `channels` in `num_groups` groups (Flax's
    /// `num_groups=`); an error layer when they do not divide `channels`.
    #[track_caller]
    pub fn with_num_groups(channels: i64, num_groups: i64) -> GroupNorm {
        GroupNorm::build("GroupNorm::with_num_groups", channels, num_groups)
    }

    /// A group norm over `channels` in groups of `group_size` channels
    /// (Flax's `num_groups=None, group_size=`); an error layer when
    /// `group_size` does not divide `channels`.
    #[track_caller]
    pub fn with_group_size(channels: i64, group_size: i64) -> GroupNorm {
        if group_size <= 0 || channels % group_size != 0 {
            let e = constructor_error(
                "GroupNorm::with_group_size",
                &format!("{channels} channels are not a multiple of the group size {group_size}"),
            );
            return GroupNorm::error(e, 0);
        }
        GroupNorm::build(
            "GroupNorm::with_group_size",
            channels,
            channels / group_size,
        )
    }

    /// The same layer with another epsilon.
    pub fn with_epsilon(mut self, epsilon: f64) -> GroupNorm {
        self.epsilon = epsilon;
        self
    }

    #[track_caller]
    fn build(constructor: &str, channels: i64, num_groups: i64) -> GroupNorm {
        if num_groups <= 0 || channels % num_groups != 0 {
            let e = constructor_error(
                constructor,
                &format!("{num_groups} groups do not divide {channels} channels"),
            );
            return GroupNorm::error(e, num_groups);
        }
        GroupNorm {
            scale: Some(jnp::ones(&[channels], DType::F32)),
            bias: Some(jnp::zeros(&[channels], DType::F32)),
            num_groups,
            epsilon: DEFAULT_EPSILON,
            use_fast_variance: true,
        }
    }

    fn error(e: Array, num_groups: i64) -> GroupNorm {
        GroupNorm {
            scale: Some(e.clone()),
            bias: Some(e),
            num_groups,
            epsilon: DEFAULT_EPSILON,
            use_fast_variance: true,
        }
    }

    /// The normalized `x` `[batch, ..., channels]` (or `[channels]`).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        const METHOD: &str = "GroupNorm.apply";
        let (scale, bias) = (self.scale.as_ref(), self.bias.as_ref());
        if let Some(e) = check_scaled_layer(METHOD, self, scale, bias, x, 1) {
            return e;
        }
        let shape = x.shape_or_empty();
        let rank = shape.len();
        let channels = shape[rank - 1];
        if self.num_groups <= 0 || channels % self.num_groups != 0 {
            return input_error(
                METHOD,
                x,
                &format!(
                    "{} groups do not divide the {channels} channels",
                    self.num_groups
                ),
            );
        }
        let group_size = channels / self.num_groups;
        let mut grouped = shape[..rank - 1].to_vec();
        grouped.extend([self.num_groups, group_size]);
        // Over the grouped array: the axes between the batch and the groups,
        // and each group's channels (just those for a rank-1 input).
        let mut axes: Vec<i64> = (1..rank.saturating_sub(1) as i64).collect();
        axes.push(rank as i64);
        let (mean, var) = compute_stats(&jnp::reshape(x, &grouped), &axes, self.use_fast_variance);
        let mean = jnp::repeat(&mean, group_size, Some(-1));
        let var = jnp::repeat(&var, group_size, Some(-1));
        normalize(
            x,
            (&mean, &var),
            &axes[..axes.len() - 1],
            self.epsilon,
            self.scale.as_ref(),
            self.bias.as_ref(),
        )
    }
}
