"""JAX's side of oxla's data-parallel benchmark: the MLP SGD step of
bench/src/mlp.rs (784-512-512-10) on a global batch of 1024 split over 8 CPU
devices (mesh ('data': 8), parameters replicated), timed the same way (see
bench/src/bin/dp_vs_jax.rs): as a jit that XLA partitions ("jit"), and as
a shard_map whose body takes the gradient on its block with JAX's default
check_vma=True, so the replicated parameters' cotangents are summed over
the devices ("shard_map").

Prints JSON (one line) with the first losses, then serves timing blocks of
the compiled steps (see jax_twin.serve_named).
"""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

from jax_twin import mlp_loss, serve_named  # noqa: E402

BATCH, LEARNING_RATE = 1024, 0.01


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb) for (w, b), (gw, gb) in zip(params, grads)], loss


def shard_map_step(mesh):
    """The SGD step as a per-device body: the mean of the devices'
    gradients (JAX sums them, check_vma=True; the body divides)."""
    devices = mesh.shape["data"]

    def body(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        updated = [(w - LEARNING_RATE * gw / devices, b - LEARNING_RATE * gb / devices)
                   for (w, b), (gw, gb) in zip(params, grads)]
        return updated, jax.lax.pmean(loss, "data")

    return jax.shard_map(body, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=(P(), P()))


def main():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    replicated = NamedSharding(mesh, P())
    rows = NamedSharding(mesh, P("data"))
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [(rng.standard_normal((a, b)).astype(np.float32) * 0.05, np.zeros(b, np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = jax.device_put(rng.standard_normal((BATCH, 784)).astype(np.float32), rows)
    y = jax.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)], rows)
    steps = {"jit": jax.jit(train_step, donate_argnums=(0,)),
             "shard_map": jax.jit(shard_map_step(mesh), donate_argnums=(0,))}
    # Each step owns (and donates) its own copy of the parameters.
    state = {name: jax.device_put(params, replicated) for name in steps}
    losses = {}
    for name, step in steps.items():
        state[name], loss = step(state[name], x, y)
        losses[name] = float(loss)
    print(json.dumps({"loss": losses["jit"], "shard_map_loss": losses["shard_map"],
                      "devices": len(jax.devices())}), flush=True)

    def one(name):
        def run():
            state[name], loss = steps[name](state[name], x, y)
            return loss
        return run

    serve_named({name: one(name) for name in steps})


if __name__ == "__main__":
    main()
