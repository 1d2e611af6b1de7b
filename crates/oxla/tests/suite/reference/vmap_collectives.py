"""Reference values for collectives over named vmap axes
(vmap_collectives.rs), computed by JAX (CPU) at test time. Prints JSON: the
inputs and, per case name, the output(s) of `jax.vmap(..., axis_name=...)`,
under grad, jvp and jit too.
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

XS = np.array([[1.0, 0.5, -1.0], [0.0, 2.0, 1.0], [-1.5, 0.5, 0.25], [0.3, -0.7, 1.1]], np.float32)
BLOCKS = np.arange(4 * 8 * 3, dtype=np.float32).reshape(4, 8, 3) / 10.0 - 4.0
GRID = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
TANGENT = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, -0.8, 0.9], [-1.0, 1.1, 0.2]], np.float32)
CYCLE = [(0, 1), (1, 2), (2, 3), (3, 0)]


def vm(f, name="i"):
    return jax.vmap(f, axis_name=name)


def share(x):
    return x / lax.psum(x, "i")


def stats(x):
    return lax.pmean(x, "i"), lax.pmax(x, "i"), lax.pmin(x, "i"), lax.psum(2.0, "i") * x


def loss(x):
    # Every collective with a derivative, in one example's loss.
    gathered = lax.all_gather(jnp.sin(x), "i")
    shifted = lax.ppermute(x * x, "i", CYCLE)
    return (jnp.sum(gathered * x) + jnp.sum(shifted * lax.pmean(x, "i"))
            + jnp.sum(share(x * x + 1.0)) + lax.axis_index("i") * jnp.sum(x))


def total(xs):
    return jnp.sum(vm(loss)(xs))


def partial_ppermute(xs):
    """A ppermute whose example 0 gets nothing (zeros), computed directly."""
    out = np.zeros_like(xs)
    for src, dst in [(0, 1), (1, 2), (2, 3)]:
        out[dst] = xs[src]
    return out


def main():
    x = jnp.asarray(XS)
    blocks = jnp.asarray(BLOCKS)
    grid = jnp.asarray(GRID)
    nested = jax.vmap(jax.vmap(lambda v: (lax.psum(v, "i"), lax.psum(v, ("i", "j")),
                                          lax.axis_index(("i", "j")), lax.pmax(v, "j")),
                               axis_name="j"), axis_name="i")(grid)
    primal, tangent = jax.jvp(vm(loss), (x,), (jnp.asarray(TANGENT),))
    out = {
        "xs": enc(XS), "blocks": enc(BLOCKS), "grid": enc(GRID), "tangent": enc(TANGENT),
        "share": enc(vm(share)(x)),
        "stats": [enc(v) for v in vm(stats)(x)],
        "axis_index": enc(vm(lambda v: v * lax.axis_index("i"))(x)),
        "all_gather": enc(vm(lambda v: lax.all_gather(v, "i"))(x)),
        # JAX 0.10.2 batches pbroadcast of a numpy array (of a jax Array, its
        # rule fails in take).
        "pbroadcast": enc(vm(lambda v: lax.pbroadcast(v, "i", 2))(XS)),
        "all_gather_axis1": enc(vm(lambda v: lax.all_gather(v, "i", axis=1))(blocks)),
        "all_gather_tiled": enc(vm(lambda v: lax.all_gather(v, "i", axis=1, tiled=True))(blocks)),
        "psum_scatter": enc(vm(lambda v: lax.psum_scatter(v[:4], "i"))(blocks)),
        "psum_scatter_tiled": enc(vm(lambda v: lax.psum_scatter(v, "i", tiled=True))(blocks)),
        "psum_scatter_dim1": enc(vm(lambda v: lax.psum_scatter(v.T[:, :4], "i", scatter_dimension=1))(blocks)),
        "all_to_all": enc(vm(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))(blocks)),
        "all_to_all_back": enc(vm(lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True))(blocks)),
        "ppermute": enc(vm(lambda v: lax.ppermute(v, "i", CYCLE))(x)),
        "ppermute_partial": enc(partial_ppermute(XS)),
        "nested": [enc(v) for v in nested],
        "loss": enc(vm(loss)(x)),
        "grad_total": enc(jax.grad(total)(x)),
        "per_example_grad": enc(vm(jax.grad(loss))(x)),
        "per_example_grad_psum": enc(vm(jax.grad(lambda v: lax.psum(jnp.sum(v * v), "i")))(x)),
        "jvp": [enc(primal), enc(tangent)],
    }
    print(json.dumps(out))


main()
