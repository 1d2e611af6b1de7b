"""Reference values for JAX's general lax.reduce (general_reduce.rs),
computed by JAX (CPU) at test time. Prints JSON: inputs and, per case, the
results, under jit, vmap, jvp and grad.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from ops import enc  # noqa: E402

X = np.array([[0.5, -1.25, 2.0, 0.75], [3.0, 3.0, -0.5, 1.5], [-2.0, 0.25, 1.0, -3.5]], np.float32)
CUBE = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) * 0.37) % 2.0 - 1.0
T = np.array([[0.1, 0.2, -0.3, 0.4], [1.0, -1.0, 0.5, 0.25], [0.3, 0.6, -0.9, 0.2]], np.float32)


def argmax_pair(acc, val):
    """(value, index) of the larger value; the smaller index on ties."""
    (av, ai), (bv, bi) = acc, val
    take_b = (bv > av) | ((bv == av) & (bi < ai))
    return jnp.where(take_b, bv, av), jnp.where(take_b, bi, ai)


def argmax_rows(x):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, 1)
    return lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)), argmax_pair, (1,))


def lse(x, dims):
    return lax.reduce(x, np.float32(-np.inf), jnp.logaddexp, dims)


def main():
    x, cube, t = jnp.asarray(X), jnp.asarray(CUBE), jnp.asarray(T)
    primal, tangent = jax.jvp(lambda v: lse(v, (1,)), (x,), (t,))
    print(json.dumps({
        "x": enc(X), "cube": enc(CUBE), "t": enc(T),
        "argmax_rows": [enc(v) for v in argmax_rows(x)],
        "argmax_rows_jit": [enc(v) for v in jax.jit(argmax_rows)(x)],
        "lse_rows": enc(lse(x, (1,))),
        "lse_cube": enc(lse(cube, (0, 2))),
        "lse_all": enc(lse(cube, (0, 1, 2))),
        "vmap_lse": enc(jax.vmap(lambda r: lse(r, (0,)))(x)),
        "vmap_argmax": [enc(v) for v in jax.vmap(argmax_rows, in_axes=1)(cube)],
        "jvp": [enc(primal), enc(tangent)],
        "grad_lse": enc(jax.grad(lambda v: jnp.sum(lse(v, (0, 2)) ** 2))(cube)),
        "sum_monoid": enc(lax.reduce(x, 0.0, lax.add, (0,))),
        "sum_monoid_jaxpr": str(jax.make_jaxpr(lambda v: lax.reduce(v, 0.0, lax.add, (0,)))(x)),
    }))


main()
