//! Grain's `index_shuffle`: the position of an index in a pseudo-random
//! permutation of `0..=max_index`, computed alone (no table), as Grain's
//! C++ extension (`grain/_src/python/experimental/index_shuffle`) does it,
//! bit for bit: a Simon-style Feistel cipher on a block of `B` bits, its
//! round keys drawn by C++'s `std::seed_seq` from the 32-bit seed, walked
//! in cycles until the value is at most `max_index`.

use super::error::DataError;

/// The smallest block Grain uses (two words of 8 bits).
const MIN_BLOCK_BITS: u32 = 16;

/// The round counts `index_shuffle` takes: even, 4 to 1024.
const ROUNDS: std::ops::RangeInclusive<u32> = 4..=1024;

/// The position of `index` in the permutation of `0..=max_index` drawn
/// from `seed` with `rounds` Feistel rounds (Grain's
/// `index_shuffle(index, max_index=, seed=, rounds=)`; its samplers and
/// `MapDataset.shuffle` use 4 rounds). An index above `max_index`, or a
/// round count that is odd or outside 4..=1024, is an error, as in Grain.
///
/// Grain's block has `ceil(log2(max_index))` bits (at least 16, made
/// even), one bit short when `max_index` is a power of two: the top bit
/// of `index == max_index` is dropped before encrypting, so for
/// `max_index = 2^k` with an even `k >= 16` (`2^k + 1` records) that index
/// lands where index 0 does. oxla keeps this, so its orders stay Grain's.
#[track_caller]
pub fn index_shuffle(index: u64, max_index: u64, seed: u32, rounds: u32) -> Result<u64, DataError> {
    if !ROUNDS.contains(&rounds) || !rounds.is_multiple_of(2) {
        return Err(DataError::option(
            "index_shuffle",
            format!("rounds must be an even integer between 4 and 1024, not {rounds}"),
        ));
    }
    if index > max_index {
        return Err(DataError::option(
            "index_shuffle",
            format!("index {index} is above max_index {max_index}"),
        ));
    }
    Ok(Permutation::new(max_index, seed, rounds).get(index))
}

/// One permutation of `0..=max_index`: its block size and round keys,
/// worked out once (for a sampler's epoch) and applied to any index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Permutation {
    max_index: u64,
    word_bits: u32,
    keys: Vec<u32>,
}

impl Permutation {
    /// The permutation of `0..=max_index` for `seed` with `rounds` rounds
    /// (even, 4..=1024: the caller's to check).
    pub(crate) fn new(max_index: u64, seed: u32, rounds: u32) -> Permutation {
        Permutation {
            max_index,
            word_bits: block_bits(max_index) / 2,
            keys: seed_seq(seed, rounds as usize),
        }
    }

    /// Where `index` (at most `max_index`) goes.
    pub(crate) fn get(&self, index: u64) -> u64 {
        if self.max_index == 0 {
            return 0;
        }
        let mut value = index;
        loop {
            value = self.encrypt(value);
            if value <= self.max_index {
                return value;
            }
        }
    }

    /// One pass of the cipher over the block `value` (bits above the block
    /// dropped, as C++'s `std::bitset` does).
    fn encrypt(&self, value: u64) -> u64 {
        // A word has 8 to 32 bits.
        let w = self.word_bits;
        let mask = (1u64 << w) - 1;
        let rotl = |x: u64, r: u32| ((x << r) | (x >> (w - r))) & mask;
        let f = |x: u64| (rotl(x, 1) & rotl(x, 8)) ^ rotl(x, 2);
        let (mut left, mut right) = ((value >> w) & mask, value & mask);
        for pair in self.keys.chunks_exact(2) {
            left ^= f(right);
            left ^= u64::from(pair[0]) & mask;
            right ^= f(left);
            right ^= u64::from(pair[1]) & mask;
        }
        (left << w) | right
    }
}

/// Grain's block size for `max_index` (above 0): `ceil(log2(max_index))`
/// in double precision, made even, at least 16, at most 64.
fn block_bits(max_index: u64) -> u32 {
    // max_index is at most 2^64, so the logarithm is in 0..=64.
    let bits = (max_index as f64).log2().ceil() as u32;
    (bits + bits % 2).clamp(MIN_BLOCK_BITS, 64)
}

/// C++'s `std::seed_seq{seed}.generate(..)` of `n` 32-bit words (the
/// algorithm of [rand.util.seedseq], all arithmetic modulo 2^32).
fn seed_seq(seed: u32, n: usize) -> Vec<u32> {
    let mut b = vec![0x8b8b_8b8b_u32; n];
    if n == 0 {
        return b;
    }
    let entropy = [seed];
    let s = entropy.len();
    let t = match n {
        623.. => 11,
        68..=622 => 7,
        39..=67 => 5,
        7..=38 => 3,
        _ => (n - 1) / 2,
    };
    let (p, q) = ((n - t) / 2, (n - t) / 2 + t);
    let m = (s + 1).max(n);
    let tmix = |x: u32| x ^ (x >> 27);
    for k in 0..m {
        let r1 = 1_664_525_u32.wrapping_mul(tmix(b[k % n] ^ b[(k + p) % n] ^ b[(k + n - 1) % n]));
        let r2 = r1.wrapping_add(if k == 0 {
            s as u32
        } else if k <= s {
            ((k % n) as u32).wrapping_add(entropy[k - 1])
        } else {
            (k % n) as u32
        });
        b[(k + p) % n] = b[(k + p) % n].wrapping_add(r1);
        b[(k + q) % n] = b[(k + q) % n].wrapping_add(r2);
        b[k % n] = r2;
    }
    for k in m..m + n {
        let sum = b[k % n]
            .wrapping_add(b[(k + p) % n])
            .wrapping_add(b[(k + n - 1) % n]);
        let r3 = 1_566_083_941_u32.wrapping_mul(tmix(sum));
        let r4 = r3.wrapping_sub((k % n) as u32);
        b[(k + p) % n] ^= r3;
        b[(k + q) % n] ^= r4;
        b[k % n] = r4;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_permutation_of_a_non_power_of_two_is_one() {
        for len in [1u64, 2, 3, 10, 97, 1000] {
            let p = Permutation::new(len - 1, 7, 4);
            let mut seen: Vec<u64> = (0..len).map(|i| p.get(i)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..len).collect::<Vec<_>>(), "{len}");
        }
    }

    #[test]
    fn bad_rounds_and_indices_are_errors() {
        assert!(index_shuffle(0, 9, 0, 5).is_err());
        assert!(index_shuffle(0, 9, 0, 2).is_err());
        assert!(index_shuffle(0, 9, 0, 1026).is_err());
        let e = index_shuffle(10, 9, 0, 4).unwrap_err().to_string();
        assert!(e.contains("index 10 is above max_index 9"), "{e}");
        assert_eq!(index_shuffle(0, 0, 3, 4).unwrap(), 0);
    }

    #[test]
    fn the_block_grows_with_max_index() {
        assert_eq!(block_bits(1), 16);
        assert_eq!(block_bits(65535), 16);
        assert_eq!(block_bits(65536), 16);
        assert_eq!(block_bits(65537), 18);
        assert_eq!(block_bits(u64::MAX), 64);
    }
}
