"""jnp.unique and the set operations without a size, as JAX computes them
outside jit (data-dependent sizes), for tests/suite/sets.rs."""

import json

import jax.numpy as jnp
import numpy as np

UQ = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8], np.int32)
UQ2 = np.array([[7, 5, 0], [3, 11, 5]], np.int32)
UQ_F = np.array([2.5, np.nan, 1.0, 2.5, np.nan, -3.0, 0.5, 7.0], np.float32)


def enc(x):
    return [None if np.isnan(v) else float(v) for v in np.ravel(np.asarray(x, np.float64))]


values, index, inverse, counts = jnp.unique(UQ, return_index=True, return_inverse=True, return_counts=True)
print(json.dumps({
    "unique": enc(values), "index": enc(index), "inverse": enc(inverse), "counts": enc(counts),
    "unique_nan": enc(jnp.unique(UQ_F)),
    "unique_values_nan": enc(jnp.unique_values(UQ_F)),
    "union1d": enc(jnp.union1d(UQ, UQ2)),
    "intersect1d": enc(jnp.intersect1d(UQ, UQ2)),
    "setdiff1d": enc(jnp.setdiff1d(UQ, UQ2)),
    "setxor1d": enc(jnp.setxor1d(UQ, UQ2)),
    "trim_zeros": enc(jnp.trim_zeros(np.array([0, 0, 3, 0, 2, 0], np.int32))),
    "trim_zeros_f": enc(jnp.trim_zeros(np.array([0, 0, 3, 0, 2, 0], np.int32), trim="f")),
    "trim_zeros_2d": enc(jnp.trim_zeros(np.array([[0, 0, 0], [0, 4, 0], [0, 5, 0], [0, 0, 0]], np.int32))),
    "roots_real": enc(jnp.real(jnp.roots(np.array([0.0, 0.0, 1.0, -3.0, 2.0], np.float32)))),
}))
