"""JAX's answers for oxla's sharding tests, on 8 CPU devices: for each
program, the output values and the partition spec JAX's jit gives each
output. Prints JSON on stdout."""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def named(*spec):
    return NamedSharding(mesh, P(*spec))


def inputs():
    x = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) - 10.0) / 7.0
    w = (np.arange(4 * 6, dtype=np.float32).reshape(4, 6) - 5.0) / 11.0
    return x, w


def spec_text(sharding):
    """The spec as oxla prints it: P('data', None) with trailing Nones dropped."""
    entries = list(sharding.spec)
    while entries and entries[-1] is None:
        entries.pop()
    parts = []
    for e in entries:
        if e is None:
            parts.append("None")
        elif isinstance(e, tuple):
            parts.append("(" + ", ".join(f"'{a}'" for a in e) + ")")
        else:
            parts.append(f"'{e}'")
    return "P(" + ", ".join(parts) + ")"


def run(f, *args):
    out = jax.jit(f)(*args)
    return {"value": np.asarray(out).ravel().tolist(), "shape": list(out.shape), "spec": spec_text(out.sharding)}


x, w = inputs()
xs = jax.device_put(x, named("data", None))
ws = jax.device_put(w, named(None, "model"))


def matmul_tanh_sum(x, w):
    return jnp.tanh(x @ w).sum(0)


def matmul(x, w):
    return x @ w


def constrained(x, w):
    y = jax.lax.with_sharding_constraint(x @ w, named("data", "model"))
    return jnp.sin(y) * 2.0


def tensor_parallel_mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


w1 = (np.arange(4 * 8, dtype=np.float32).reshape(4, 8) - 13.0) / 9.0
w2 = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) - 7.0) / 10.0
w1s = jax.device_put(w1, named(None, "model"))
w2s = jax.device_put(w2, named("model", None))

cases = {
    "tensor_parallel_mlp": run(tensor_parallel_mlp, xs, w1s, w2s),
    "matmul_tanh_sum": run(matmul_tanh_sum, xs, ws),
    "matmul": run(matmul, xs, ws),
    "constrained": run(constrained, xs, ws),
    "elementwise": run(lambda x: jnp.exp(x) + 1.0, xs),
}
print(json.dumps(cases))
