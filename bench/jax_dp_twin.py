"""JAX's side of oxla's data-parallel benchmark: the MLP SGD step of
bench/src/mlp.rs (784-512-512-10) on a global batch of 1024 split over 8 CPU
devices (mesh ('data': 8), parameters replicated), timed the same way (see
bench/src/bin/dp_vs_jax.rs).

Prints JSON (one line) with the first loss, then serves timing blocks of
the compiled step (see jax_twin.serve_blocks).
"""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

from jax_twin import mlp_loss, serve_blocks  # noqa: E402

BATCH, LEARNING_RATE = 1024, 0.01


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb) for (w, b), (gw, gb) in zip(params, grads)], loss


def main():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    replicated = NamedSharding(mesh, P())
    rows = NamedSharding(mesh, P("data"))
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [(rng.standard_normal((a, b)).astype(np.float32) * 0.05, np.zeros(b, np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    params = jax.device_put(params, replicated)
    x = jax.device_put(rng.standard_normal((BATCH, 784)).astype(np.float32), rows)
    y = jax.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)], rows)
    step = jax.jit(train_step, donate_argnums=(0,))
    state = {"params": params}
    state["params"], loss = step(state["params"], x, y)
    print(json.dumps({"loss": float(loss), "devices": len(jax.devices())}), flush=True)

    def one():
        state["params"], loss = step(state["params"], x, y)
        return loss

    serve_blocks(one)


if __name__ == "__main__":
    main()
