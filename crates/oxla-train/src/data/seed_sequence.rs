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

/// `np.random.SeedSequence(seed).generate_state(2, np.uint64)`: the key
/// of `np.random.Philox(seed)`.
pub(crate) fn philox_key(seed: u64) -> [u64; 2] {
    // At most two words, fewer than the pool's four, so every word goes
    // into the pool's first round.
    let entropy = words(seed);
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
    let mut hash_const = INIT_B;
    let mut state = [0u32; 4];
    for (i, out) in state.iter_mut().enumerate() {
        let mut value = pool[i % POOL_SIZE] ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_B);
        value = value.wrapping_mul(hash_const);
        *out = value ^ (value >> XSHIFT);
    }
    [
        u64::from(state[0]) | (u64::from(state[1]) << 32),
        u64::from(state[2]) | (u64::from(state[3]) << 32),
    ]
}
