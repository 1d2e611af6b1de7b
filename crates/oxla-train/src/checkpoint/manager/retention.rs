//! Which committed steps a [`CheckpointManager`](super::CheckpointManager)
//! keeps: Orbax's `max_to_keep`, `best_fn`/`best_mode` and `keep_period`.

use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Whether a larger or a smaller metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BestMode {
    /// Smaller is better (a loss).
    Min,
    /// Larger is better (an accuracy).
    Max,
}

/// Keep the checkpoints best by one metric, as Orbax's `best_fn` and
/// `best_mode`.
#[derive(Clone, Debug, PartialEq)]
pub struct BestBy {
    /// The name of the metric, as passed to
    /// [`save`](super::CheckpointManager::save).
    pub metric: String,
    /// Whether larger or smaller is better.
    pub mode: BestMode,
}

impl BestBy {
    /// The order of two `(metric, step)` pairs, the better first: by the
    /// metric as `mode` says, NaN last in either mode, and of equal
    /// metrics the later step first.
    pub(super) fn rank(&self, (a, step_a): (f64, u64), (b, step_b): (f64, u64)) -> Ordering {
        let by_metric = match self.mode {
            BestMode::Min => a.total_cmp(&b),
            BestMode::Max => b.total_cmp(&a),
        };
        a.is_nan()
            .cmp(&b.is_nan())
            .then(by_metric)
            .then(step_b.cmp(&step_a))
    }
}

/// What to keep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retention {
    /// Keep at most this many checkpoints (the latest ones, or with
    /// [`best`](Self::best) the best ones); `None` keeps every one.
    pub max_to_keep: Option<usize>,
    /// Rank checkpoints by a metric instead of by step.
    pub best: Option<BestBy>,
    /// Also keep every step that is a multiple of this, whatever else
    /// says (Orbax's `keep_period`).
    pub keep_period: Option<u64>,
}

/// A committed step and the value of the ranking metric saved with it
/// (`None` when no metric is ranked, or the step was saved without it).
pub(super) struct Committed {
    pub step: u64,
    pub metric: Option<f64>,
}

impl Retention {
    /// The steps of `committed` to delete. The latest step is always kept
    /// (a run resumes from it); with a ranking metric, the best
    /// `max_to_keep` are kept as well, and steps saved without the metric
    /// are kept (Orbax's `keep_checkpoints_without_metrics`). A NaN metric
    /// ranks last.
    pub(super) fn to_delete(&self, committed: &[Committed]) -> Vec<u64> {
        let Some(max) = self.max_to_keep else {
            return Vec::new();
        };
        let latest = committed.iter().map(|c| c.step).max();
        let mut keep: BTreeSet<u64> = latest.into_iter().collect();
        match &self.best {
            None => {
                let mut steps: Vec<u64> = committed.iter().map(|c| c.step).collect();
                steps.sort_unstable_by(|a, b| b.cmp(a));
                keep.extend(steps.into_iter().take(max));
            }
            Some(best) => {
                let mut ranked: Vec<(f64, u64)> = Vec::new();
                for c in committed {
                    match c.metric {
                        Some(m) => ranked.push((m, c.step)),
                        None => {
                            keep.insert(c.step);
                        }
                    }
                }
                ranked.sort_by(|a, b| best.rank(*a, *b));
                keep.extend(ranked.into_iter().take(max).map(|(_, s)| s));
            }
        }
        if let Some(period) = self.keep_period.filter(|&p| p > 0) {
            keep.extend(
                committed
                    .iter()
                    .map(|c| c.step)
                    .filter(|s| s.is_multiple_of(period)),
            );
        }
        let mut delete: Vec<u64> = committed
            .iter()
            .map(|c| c.step)
            .filter(|s| !keep.contains(s))
            .collect();
        delete.sort_unstable();
        delete
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(steps: &[(u64, Option<f64>)]) -> Vec<Committed> {
        steps
            .iter()
            .map(|&(step, metric)| Committed { step, metric })
            .collect()
    }

    #[test]
    fn the_latest_n_by_step() {
        let r = Retention {
            max_to_keep: Some(2),
            ..Retention::default()
        };
        let c = committed(&[(1, None), (5, None), (3, None), (7, None)]);
        assert_eq!(r.to_delete(&c), vec![1, 3]);
        assert_eq!(Retention::default().to_delete(&c), Vec::<u64>::new());
    }

    #[test]
    fn the_best_n_by_a_metric_plus_the_latest_and_the_period() {
        let loss = |mode| Retention {
            max_to_keep: Some(2),
            best: Some(BestBy {
                metric: "loss".into(),
                mode,
            }),
            keep_period: None,
        };
        let c = committed(&[
            (1, Some(0.9)),
            (2, Some(0.2)),
            (3, Some(f64::NAN)),
            (4, Some(0.5)),
            (5, Some(0.1)),
            (6, None),
            (7, Some(0.7)),
        ]);
        // Best two by min: 5 and 2; 6 has no metric; 7 is the latest.
        assert_eq!(loss(BestMode::Min).to_delete(&c), vec![1, 3, 4]);
        // Best two by max: 1 and 7 (NaN never best).
        assert_eq!(loss(BestMode::Max).to_delete(&c), vec![2, 3, 4, 5]);
        let periodic = Retention {
            keep_period: Some(4),
            ..loss(BestMode::Min)
        };
        assert_eq!(periodic.to_delete(&c), vec![1, 3]);
    }
}
