//! numpy's `Philox` bit generator: Philox4x64-10 (Salmon et al.,
//! Random123), a 256-bit counter and a 128-bit key, with numpy's
//! buffering of the four words of each block and of the upper half of a
//! word drawn for 32 bits, so the same key and counter give numpy's
//! stream word for word.

/// Philox's multipliers and key increments (Weyl constants).
const MULTIPLIERS: [u64; 2] = [0xd2e7_470e_e14c_6c93, 0xca5a_8263_9512_1157];
const BUMPS: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xbb67_ae85_84ca_a73b];

/// The rounds of numpy's Philox.
const ROUNDS: usize = 10;

/// Where a Philox stream starts: the key and the counter before the first
/// block (numpy increments the counter before computing a block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PhiloxStart {
    /// The 128-bit key, low word first.
    pub key: [u64; 2],
    /// The 256-bit counter, low word first.
    pub counter: [u64; 4],
}

/// The state of numpy's `Philox`: key, counter, the block being handed
/// out, and a buffered 32-bit half.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Philox {
    key: [u64; 2],
    counter: [u64; 4],
    buffer: [u64; 4],
    buffer_pos: usize,
    half: Option<u32>,
}

/// The high and low words of `a · b`.
fn mul_hi_lo(a: u64, b: u64) -> (u64, u64) {
    let product = u128::from(a) * u128::from(b);
    ((product >> 64) as u64, product as u64)
}

/// Philox4x64 with [`ROUNDS`] rounds of `counter` under `key`.
fn block(mut counter: [u64; 4], mut key: [u64; 2]) -> [u64; 4] {
    for round in 0..ROUNDS {
        if round > 0 {
            key = [key[0].wrapping_add(BUMPS[0]), key[1].wrapping_add(BUMPS[1])];
        }
        let (hi0, lo0) = mul_hi_lo(MULTIPLIERS[0], counter[0]);
        let (hi1, lo1) = mul_hi_lo(MULTIPLIERS[1], counter[2]);
        counter = [
            hi1 ^ counter[1] ^ key[0],
            lo1,
            hi0 ^ counter[3] ^ key[1],
            lo0,
        ];
    }
    counter
}

impl Philox {
    /// A fresh generator at `start` (numpy's state after setting the key
    /// and counter: no buffered words).
    pub(crate) fn new(start: PhiloxStart) -> Philox {
        Philox {
            key: start.key,
            counter: start.counter,
            buffer: [0; 4],
            buffer_pos: 4,
            half: None,
        }
    }

    /// The next 64-bit word (numpy's `random_raw`).
    pub(crate) fn next_u64(&mut self) -> u64 {
        if self.buffer_pos == 4 {
            // The counter is a 256-bit integer, incremented with carries.
            for word in &mut self.counter {
                *word = word.wrapping_add(1);
                if *word != 0 {
                    break;
                }
            }
            self.buffer = block(self.counter, self.key);
            self.buffer_pos = 0;
        }
        let out = self.buffer[self.buffer_pos];
        self.buffer_pos += 1;
        out
    }

    /// The next 32-bit word: the low half of a fresh 64-bit word, then its
    /// high half (numpy's `next_uint32`).
    pub(crate) fn next_u32(&mut self) -> u32 {
        if let Some(half) = self.half.take() {
            return half;
        }
        let word = self.next_u64();
        self.half = Some((word >> 32) as u32);
        word as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known answers for Philox4x64-10 (`kat_vectors`): a zero
    /// counter and key, and the digits of pi.
    #[test]
    fn blocks_match_random123s_known_answers() {
        assert_eq!(
            block([0; 4], [0; 2]),
            [
                0x1655_4d9e_ca36_314c,
                0xdb20_fe9d_672d_0fdc,
                0xd7e7_72ce_e186_176b,
                0x7e68_b68a_ec7b_a23b
            ]
        );
        let counter = [
            0x243f_6a88_85a3_08d3,
            0x1319_8a2e_0370_7344,
            0xa409_3822_299f_31d0,
            0x082e_fa98_ec4e_6c89,
        ];
        let key = [0x4528_21e6_38d0_1377, 0xbe54_66cf_34e9_0c6c];
        assert_eq!(
            block(counter, key),
            [
                0xa528_f454_03e6_1d95,
                0x38c7_2dbd_566e_9788,
                0xa5a1_610e_72fd_18b5,
                0x57bd_43b5_e52b_7fe6
            ]
        );
    }

    #[test]
    fn the_counter_is_incremented_before_each_block_with_carries() {
        let mut bits = Philox::new(PhiloxStart {
            key: [3, 4],
            counter: [u64::MAX, u64::MAX, 0, 0],
        });
        let first = bits.next_u64();
        assert_eq!(first, block([0, 0, 1, 0], [3, 4])[0]);
        // The halves of one word: low, then high.
        let mut bits = Philox::new(PhiloxStart {
            key: [0; 2],
            counter: [0; 4],
        });
        let word = block([1, 0, 0, 0], [0; 2])[0];
        assert_eq!(bits.next_u32(), word as u32);
        assert_eq!(bits.next_u32(), (word >> 32) as u32);
    }
}
