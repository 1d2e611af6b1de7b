"""JAX's side of oxla's host-callback benchmark (bench/src/bin/callbacks_vs_jax.rs):
jitted functions on f32[1024] that call the host once per call, timed the same
way. Steps: "pure" (jax.pure_callback returning x * 2 from numpy), "io"
(jax.experimental.io_callback, ordered, counting calls), "vmap" (a pure
callback under vmap over 8 rows, vmap_method="sequential": 8 host calls),
"none" (the same program without a callback).

Prints JSON (one line) with the call count the io callback saw, then serves
"NAME N" timing requests (see jax_twin.serve_named).
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from jax_twin import serve_named

SIZE = 1024


def main():
    x = jnp.arange(SIZE, dtype=jnp.float32) / SIZE
    rows = jnp.reshape(jnp.arange(8 * SIZE, dtype=jnp.float32), (8, SIZE)) / SIZE
    spec = jax.ShapeDtypeStruct((SIZE,), jnp.float32)
    calls = [0]

    def doubled(v):
        return (np.asarray(v) * 2).astype(np.float32)

    def count(v):
        calls[0] += 1

    def pure(v):
        return jax.pure_callback(doubled, spec, v, vmap_method="sequential") + 1.0

    steps = {
        "none": jax.jit(lambda v: v * 2 + 1.0),
        "pure": jax.jit(pure),
        "io": jax.jit(lambda v: (io_callback(count, None, v, ordered=True), v + 1.0)[1]),
        "vmap": jax.jit(jax.vmap(pure)),
    }
    args = {"none": x, "pure": x, "io": x, "vmap": rows}
    for name, step in steps.items():
        step(args[name]).block_until_ready()
    print(json.dumps({"io_calls_after_warmup": calls[0]}), flush=True)
    serve_named({name: (lambda s=step, a=args[name]: s(a)) for name, step in steps.items()})


if __name__ == "__main__":
    main()
