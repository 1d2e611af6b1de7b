"""Reference values for oxla::random's rbg and unsafe_rbg keys and for
lax.rng_bit_generator (random_impls.rs), computed by JAX (CPU) at test time:
keys, splits, fold-ins, bits of every width, samplers, jit and vmap, each
under both implementations. Prints JSON {impl: {name: enc}, "lax": {...}}."""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


out = {}
for impl in ["rbg", "unsafe_rbg"]:
    k = random.key(42, impl=impl)
    d = {
        "key_0": random.key_data(random.key(0, impl=impl)),
        "key_42": random.key_data(k),
        "split": random.key_data(random.split(k)),
        "split_shape": random.key_data(random.split(k, (2, 3))),
        "fold_in": random.key_data(random.fold_in(k, 7)),
        "bits_u32": random.bits(k, (5,), jnp.uint32),
        "bits_u8": random.bits(k, (7,), jnp.uint8),
        "bits_u16": random.bits(k, (3, 2), jnp.uint16),
        "uniform": random.uniform(k, (4,)),
        "normal": random.normal(k, (2, 3)),
        "randint": random.randint(k, (6,), 0, 10),
        "permutation": random.permutation(k, 10),
        "gamma": random.gamma(k, 2.5, (4,)),
        "binomial": random.binomial(k, 10.0, 0.3, (4,)),
        "jit_uniform": jax.jit(lambda k: random.uniform(k, (4,)))(k),
        "vmap_uniform": jax.vmap(lambda k: random.uniform(k, (2,)))(random.split(k, 3)),
        "split_then_normal": random.normal(random.split(k)[1], (3,)),
    }
    out[impl] = {name: enc(v) for name, v in d.items()}

key = np.array([1, 2, 3, 4], np.uint32)
new_key, bits = lax.rng_bit_generator(key, (3, 4), dtype=jnp.uint32)
out["lax"] = {"new_key": enc(new_key), "bits": enc(bits)}
for name, algorithm in [("three_fry", lax.RandomAlgorithm.RNG_THREE_FRY),
                        ("philox", lax.RandomAlgorithm.RNG_PHILOX)]:
    new_key, bits = lax.rng_bit_generator(key, (6,), dtype=jnp.uint8, algorithm=algorithm)
    out["lax"][f"{name}_key"] = enc(new_key)
    out["lax"][f"{name}_bits"] = enc(bits)
keys = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint32)
new_keys, bits = jax.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(keys)
out["lax"]["vmap_keys"] = enc(new_keys)
out["lax"]["vmap_bits"] = enc(bits)
print(json.dumps(out))
