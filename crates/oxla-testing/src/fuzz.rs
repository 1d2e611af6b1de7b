//! A time- or count-bounded fuzz loop over a proptest strategy, with a
//! fixed seed (the same inputs every run): CI runs a few cases of each
//! fuzzer; `OXLA_FUZZ_SECONDS=600` runs each for ten minutes instead.

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// How long a fuzzer runs: `OXLA_FUZZ_SECONDS` seconds if set, else
/// `default_cases` inputs.
#[derive(Debug, Clone, Copy)]
pub struct FuzzBudget {
    cases: Option<usize>,
    duration: Option<Duration>,
}

impl FuzzBudget {
    /// The budget from `OXLA_FUZZ_SECONDS`, else `default_cases` inputs.
    pub fn from_env(default_cases: usize) -> FuzzBudget {
        match std::env::var("OXLA_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
        {
            Some(seconds) => FuzzBudget {
                cases: None,
                duration: Some(Duration::from_secs(seconds)),
            },
            None => FuzzBudget {
                cases: Some(default_cases),
                duration: None,
            },
        }
    }
}

/// Feeds `check` inputs drawn from `strategy` (seeded, so reproducible)
/// until `budget` is spent; returns how many inputs were checked. `check`
/// panics on an input that breaks a rule.
pub fn fuzz<S: Strategy>(
    name: &str,
    strategy: S,
    budget: FuzzBudget,
    mut check: impl FnMut(S::Value),
) -> usize {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let start = Instant::now();
    let mut done = 0;
    loop {
        let more = match (budget.cases, budget.duration) {
            (Some(cases), _) => done < cases,
            (None, Some(duration)) => start.elapsed() < duration,
            (None, None) => false,
        };
        if !more {
            break;
        }
        let value = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{name}: cannot draw an input: {e}"))
            .current();
        check(value);
        done += 1;
    }
    eprintln!(
        "fuzz {name}: {done} inputs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    done
}
