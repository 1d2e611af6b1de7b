//! The loader's one pseudo-random generator: SplitMix64 (Steele, Lea and
//! Flood), integer arithmetic only, so a seed gives the same numbers on
//! every machine. The sampler's per-epoch shuffles and `random_map`'s
//! per-record generators both draw from it.

/// A SplitMix64 generator; [`Rng::derive`] makes independent streams from
/// a seed and a path of integers (an epoch, a record's position).
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// A generator for `seed` and the stream `path` (for example the
    /// epoch, or the position of a record in the sampler's order):
    /// different paths give unrelated streams.
    pub fn derive(seed: u64, path: &[u64]) -> Rng {
        let state = path.iter().fold(mix(seed ^ GOLDEN), |s, &p| {
            mix(s ^ mix(p.wrapping_add(GOLDEN)))
        });
        Rng { state }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A uniform `f32` in `[0, 1)` (24 random bits).
    pub fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniform integer in `0..bound` without modulo bias (Lemire's
    /// multiply-and-reject); `bound` must be positive.
    pub fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound > 0, "Rng::below(0)");
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(bound);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// Shuffles `values` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, values: &mut [T]) {
        for i in (1..values.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            values.swap(i, j);
        }
    }
}
