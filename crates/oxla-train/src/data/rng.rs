//! The generator `random_map` transforms draw from: numpy's
//! `np.random.Generator` over its `Philox` bit generator, the generator
//! Grain hands each record, with numpy's algorithms for the draws, so a
//! record gets the numbers it gets in Grain.

use super::philox::{Philox, PhiloxStart};
use super::seed_sequence;

/// A random generator: numpy's `np.random.Generator(np.random.Philox(..))`,
/// integer arithmetic only, so a key gives the same numbers on every
/// machine. The methods are numpy's draws of the same name or role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    bits: Philox,
}

impl Rng {
    /// `np.random.Generator(np.random.Philox(key=key))`: the key's high
    /// word 0, the counter 0. Grain's `IndexSampler` gives the record at
    /// global index `i` the generator of key `seed + i`.
    pub fn new(key: u64) -> Rng {
        Rng::philox([key, 0], [0; 4])
    }

    /// `np.random.Generator(np.random.Philox(seed))`: the key drawn from
    /// `seed` by numpy's `SeedSequence`, the counter 0.
    pub fn from_seed(seed: u64) -> Rng {
        Rng::philox(seed_sequence::philox_key(seed), [0; 4])
    }

    /// A generator with Philox's whole state given: the 128-bit `key` and
    /// 256-bit `counter`, low words first, before the first draw (as
    /// numpy's `Philox(key=.., counter=..)`).
    pub fn philox(key: [u64; 2], counter: [u64; 4]) -> Rng {
        Rng::start(PhiloxStart { key, counter })
    }

    /// A fresh generator at `start`.
    pub(crate) fn start(start: PhiloxStart) -> Rng {
        Rng {
            bits: Philox::new(start),
        }
    }

    /// The next 64 random bits (`rng.bit_generator.random_raw()`).
    pub fn next_u64(&mut self) -> u64 {
        self.bits.next_u64()
    }

    /// The next 32 random bits: the low half of a 64-bit word, then its
    /// high half (`rng.integers(0, 2**32, dtype=np.uint32)`).
    pub fn next_u32(&mut self) -> u32 {
        self.bits.next_u32()
    }

    /// A uniform `f32` in `[0, 1)` from 24 random bits
    /// (`rng.random(dtype=np.float32)`).
    pub fn uniform(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// A uniform `f64` in `[0, 1)` from 53 random bits (`rng.random()`).
    pub fn uniform_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// A uniform integer in `0..bound` (`rng.integers(0, bound)`: Lemire's
    /// multiply-and-reject, on 32-bit words when `bound - 1` fits in 32
    /// bits); a `bound` of 0 or 1 gives 0 and draws nothing (numpy refuses
    /// 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        let range = bound.saturating_sub(1);
        match range {
            0 => 0,
            0xffff_ffff => u64::from(self.next_u32()),
            1..0xffff_ffff => u64::from(self.lemire_u32(range as u32)),
            0x1_0000_0000..u64::MAX => self.lemire_u64(range),
            u64::MAX => self.next_u64(),
        }
    }

    /// Lemire's bounded draw in `0..=range` from 32-bit words
    /// (`range` below `u32::MAX`).
    fn lemire_u32(&mut self, range: u32) -> u32 {
        let excl = range + 1;
        let mut m = u64::from(self.next_u32()) * u64::from(excl);
        if (m as u32) < excl {
            let threshold = (u32::MAX - range) % excl;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(excl);
            }
        }
        (m >> 32) as u32
    }

    /// Lemire's bounded draw in `0..=range` from 64-bit words
    /// (`range` below `u64::MAX`).
    fn lemire_u64(&mut self, range: u64) -> u64 {
        let excl = range + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(excl);
        if (m as u64) < excl {
            let threshold = (u64::MAX - range) % excl;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(excl);
            }
        }
        (m >> 64) as u64
    }

    /// A uniform integer in `0..=max` by masked rejection (numpy's
    /// `random_interval`, what `shuffle` draws).
    fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = u64::MAX >> max.leading_zeros();
        loop {
            let value = if max <= u64::from(u32::MAX) {
                u64::from(self.next_u32()) & mask
            } else {
                self.next_u64() & mask
            };
            if value <= max {
                return value;
            }
        }
    }

    /// Shuffles `values` in place (`rng.shuffle(values)`: Fisher–Yates
    /// from the back).
    pub fn shuffle<T>(&mut self, values: &mut [T]) {
        for i in (1..values.len()).rev() {
            let j = self.interval(i as u64) as usize;
            values.swap(i, j);
        }
    }
}
