//! `Debug` and `PartialEq` for [`Schedule`], written out for the closure of
//! [`Schedule::Custom`].

use std::fmt;
use std::sync::Arc;

use super::Schedule;

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Constant(v) => f.debug_tuple("Constant").field(v).finish(),
            Schedule::Linear {
                init_value,
                end_value,
                transition_steps,
                transition_begin,
            } => f
                .debug_struct("Linear")
                .field("init_value", init_value)
                .field("end_value", end_value)
                .field("transition_steps", transition_steps)
                .field("transition_begin", transition_begin)
                .finish(),
            Schedule::WarmupCosineDecay {
                init_value,
                peak_value,
                warmup_steps,
                decay_steps,
                end_value,
                exponent,
            } => f
                .debug_struct("WarmupCosineDecay")
                .field("init_value", init_value)
                .field("peak_value", peak_value)
                .field("warmup_steps", warmup_steps)
                .field("decay_steps", decay_steps)
                .field("end_value", end_value)
                .field("exponent", exponent)
                .finish(),
            Schedule::Exponential {
                init_value,
                transition_steps,
                decay_rate,
                transition_begin,
                staircase,
                end_value,
            } => f
                .debug_struct("Exponential")
                .field("init_value", init_value)
                .field("transition_steps", transition_steps)
                .field("decay_rate", decay_rate)
                .field("transition_begin", transition_begin)
                .field("staircase", staircase)
                .field("end_value", end_value)
                .finish(),
            Schedule::PiecewiseConstant {
                init_value,
                boundaries_and_scales,
            } => f
                .debug_struct("PiecewiseConstant")
                .field("init_value", init_value)
                .field("boundaries_and_scales", boundaries_and_scales)
                .finish(),
            Schedule::Polynomial {
                init_value,
                end_value,
                power,
                transition_steps,
                transition_begin,
            } => f
                .debug_struct("Polynomial")
                .field("init_value", init_value)
                .field("end_value", end_value)
                .field("power", power)
                .field("transition_steps", transition_steps)
                .field("transition_begin", transition_begin)
                .finish(),
            Schedule::CosineDecay {
                init_value,
                decay_steps,
                alpha,
                exponent,
            } => f
                .debug_struct("CosineDecay")
                .field("init_value", init_value)
                .field("decay_steps", decay_steps)
                .field("alpha", alpha)
                .field("exponent", exponent)
                .finish(),
            Schedule::PiecewiseInterpolate {
                cosine,
                init_value,
                boundaries_and_scales,
            } => f
                .debug_struct("PiecewiseInterpolate")
                .field("cosine", cosine)
                .field("init_value", init_value)
                .field("boundaries_and_scales", boundaries_and_scales)
                .finish(),
            Schedule::Join {
                schedules,
                boundaries,
            } => f
                .debug_struct("Join")
                .field("schedules", schedules)
                .field("boundaries", boundaries)
                .finish(),
            Schedule::Custom(_) => f.write_str("Custom(<fn>)"),
        }
    }
}

/// Equal variants with equal fields; two [`Schedule::Custom`] are equal when
/// they share one function (the same `Arc`).
impl PartialEq for Schedule {
    fn eq(&self, other: &Schedule) -> bool {
        use Schedule as S;
        match (self, other) {
            (S::Constant(a), S::Constant(b)) => a == b,
            (
                S::Linear {
                    init_value: a0,
                    end_value: a1,
                    transition_steps: a2,
                    transition_begin: a3,
                },
                S::Linear {
                    init_value: b0,
                    end_value: b1,
                    transition_steps: b2,
                    transition_begin: b3,
                },
            ) => (a0, a1, a2, a3) == (b0, b1, b2, b3),
            (
                S::WarmupCosineDecay {
                    init_value: a0,
                    peak_value: a1,
                    warmup_steps: a2,
                    decay_steps: a3,
                    end_value: a4,
                    exponent: a5,
                },
                S::WarmupCosineDecay {
                    init_value: b0,
                    peak_value: b1,
                    warmup_steps: b2,
                    decay_steps: b3,
                    end_value: b4,
                    exponent: b5,
                },
            ) => (a0, a1, a2, a3, a4, a5) == (b0, b1, b2, b3, b4, b5),
            (
                S::Exponential {
                    init_value: a0,
                    transition_steps: a1,
                    decay_rate: a2,
                    transition_begin: a3,
                    staircase: a4,
                    end_value: a5,
                },
                S::Exponential {
                    init_value: b0,
                    transition_steps: b1,
                    decay_rate: b2,
                    transition_begin: b3,
                    staircase: b4,
                    end_value: b5,
                },
            ) => (a0, a1, a2, a3, a4, a5) == (b0, b1, b2, b3, b4, b5),
            (
                S::PiecewiseConstant {
                    init_value: a0,
                    boundaries_and_scales: a1,
                },
                S::PiecewiseConstant {
                    init_value: b0,
                    boundaries_and_scales: b1,
                },
            ) => (a0, a1) == (b0, b1),
            (
                S::Polynomial {
                    init_value: a0,
                    end_value: a1,
                    power: a2,
                    transition_steps: a3,
                    transition_begin: a4,
                },
                S::Polynomial {
                    init_value: b0,
                    end_value: b1,
                    power: b2,
                    transition_steps: b3,
                    transition_begin: b4,
                },
            ) => (a0, a1, a2, a3, a4) == (b0, b1, b2, b3, b4),
            (
                S::CosineDecay {
                    init_value: a0,
                    decay_steps: a1,
                    alpha: a2,
                    exponent: a3,
                },
                S::CosineDecay {
                    init_value: b0,
                    decay_steps: b1,
                    alpha: b2,
                    exponent: b3,
                },
            ) => (a0, a1, a2, a3) == (b0, b1, b2, b3),
            (
                S::PiecewiseInterpolate {
                    cosine: a0,
                    init_value: a1,
                    boundaries_and_scales: a2,
                },
                S::PiecewiseInterpolate {
                    cosine: b0,
                    init_value: b1,
                    boundaries_and_scales: b2,
                },
            ) => (a0, a1, a2) == (b0, b1, b2),
            (
                S::Join {
                    schedules: a0,
                    boundaries: a1,
                },
                S::Join {
                    schedules: b0,
                    boundaries: b1,
                },
            ) => (a0, a1) == (b0, b1),
            (S::Custom(a), S::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}
