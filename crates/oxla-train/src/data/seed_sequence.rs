//! numpy's `SeedSequence` for an integer seed, as far as
//! `np.random.Philox(seed)` uses it: the seed's 32-bit words hashed into a
//! pool of four and drawn out as the generator's 128-bit key
//! (`generate_state(2, np.uint64)`).

/// The pool's size and the hash constants of numpy's `SeedSequence`.
const POOL_SIZE: usize = 4;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;

/// The hash that feeds a word into the pool, advancing `hash_const`.
fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut value = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    value = value.wrapping_mul(*hash_const);
    value ^ (value >> XSHIFT)
}

/// Two pool words mixed into one.
fn mix(x: u32, y: u32) -> u32 {
    let result = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    result ^ (result >> XSHIFT)
}

/// The 32-bit words of `seed`, least significant first (one word for 0,
/// as numpy's `_coerce_to_uint32_array`).
fn words(seed: u64) -> Vec<u32> {
    let (low, high) = (seed as u32, (seed >> 32) as u32);
    if high == 0 {
        vec![low]
    } else {
        vec![low, high]
    }
}

/// numpy's `SeedSequence(entropy)` pool for entropy given as 32-bit
/// words (`mix_entropy`): the first four words hashed in and mixed with
/// each other, then every further word mixed into each pool word.
fn pool(entropy: &[u32]) -> [u32; POOL_SIZE] {
    let mut hash_const = INIT_A;
    let mut pool = [0u32; POOL_SIZE];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0), &mut hash_const);
    }
    for src in 0..POOL_SIZE {
        for dst in 0..POOL_SIZE {
            if src != dst {
                pool[dst] = mix(pool[dst], hashmix(pool[src], &mut hash_const));
            }
        }
    }
    for &word in entropy.iter().skip(POOL_SIZE) {
        for slot in pool.iter_mut() {
            *slot = mix(*slot, hashmix(word, &mut hash_const));
        }
    }
    pool
}

/// `SeedSequence(entropy).generate_state(N, np.uint32)` for entropy
/// given as 32-bit words.
fn generate_state<const N: usize>(entropy: &[u32]) -> [u32; N] {
    let pool = pool(entropy);
    let mut hash_const = INIT_B;
    let mut state = [0u32; N];
    for (i, out) in state.iter_mut().enumerate() {
        let mut value = pool[i % POOL_SIZE] ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_B);
        value = value.wrapping_mul(hash_const);
        *out = value ^ (value >> XSHIFT);
    }
    state
}

/// `np.random.SeedSequence(seed).generate_state(2, np.uint64)`: the key
/// of `np.random.Philox(seed)`.
pub(crate) fn philox_key(seed: u64) -> [u64; 2] {
    let state: [u32; 4] = generate_state(&words(seed));
    [
        u64::from(state[0]) | (u64::from(state[1]) << 32),
        u64::from(state[2]) | (u64::from(state[3]) << 32),
    ]
}

/// `np.random.SeedSequence([values...]).generate_state(1, np.uint32)[0]`:
/// each value's 32-bit words in turn (numpy's `_coerce_to_uint32_array`
/// of a list), hashed into one word. Grain's default seed of a random
/// transformation is this of `[pipeline seed, depth]`.
pub(crate) fn state_word(values: &[u64]) -> u32 {
    let entropy: Vec<u32> = values.iter().flat_map(|&v| words(v)).collect();
    let [word] = generate_state::<1>(&entropy);
    word
}

#[cfg(test)]
mod tests {
    use super::state_word;

    #[test]
    fn state_word_is_numpys_for_short_and_long_entropy() {
        // np.random.SeedSequence(values).generate_state(1, np.uint32)[0]
        // (numpy 2.x): two words, and six words (past the pool of four,
        // one value above 2^32).
        assert_eq!(state_word(&[5, 1]), 3_796_490_668);
        assert_eq!(state_word(&[(1 << 40) + 3, 2, 7, 9, 11]), 2_906_146_310);
    }
}
