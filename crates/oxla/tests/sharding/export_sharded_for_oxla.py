"""Exports a sharded jit from JAX for oxla to call inside its own sharded
jit: f(x, w) = (tanh(x @ w), sum(x, axis=1)) on a ('data': 4, 'model': 2)
mesh of 8 CPU devices, x split by rows over 'data', w by columns over
'model', with its vjp.

Usage: export_sharded_for_oxla.py DIR. Writes DIR/sharded_f.jaxexport,
DIR/x.npy and DIR/w.npy, and prints JSON: JAX's outputs of the export
(called in jax.jit) and the gradient of sum(tanh(x @ w)) with respect to w
through it.
"""

import json
import os
import pathlib
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

directory = pathlib.Path(sys.argv[1])
mesh = jax.make_mesh((4, 2), ("data", "model"))
x_sharding = NamedSharding(mesh, P("data", None))
w_sharding = NamedSharding(mesh, P(None, "model"))


def f(x, w):
    return jnp.tanh(x @ w), jnp.sum(x, axis=1)


jitted = jax.jit(f, in_shardings=(x_sharding, w_sharding),
                 out_shardings=(NamedSharding(mesh, P("data", "model")), NamedSharding(mesh, P("data"))))
x = (np.arange(32, dtype=np.float32).reshape(8, 4) - 10) / 7
w = (np.arange(24, dtype=np.float32).reshape(4, 6) - 5) / 11
exported = jax.export.export(jitted)(x, w)
(directory / "sharded_f.jaxexport").write_bytes(exported.serialize(vjp_order=1))
np.save(directory / "x.npy", x)
np.save(directory / "w.npy", w)

loaded = jax.export.deserialize((directory / "sharded_f.jaxexport").read_bytes())
xs, ws = jax.device_put(x, x_sharding), jax.device_put(w, w_sharding)
y, s = jax.jit(loaded.call)(xs, ws)
grad_w = jax.jit(jax.grad(lambda w: jnp.sum(loaded.call(xs, w)[0])))(ws)
print(json.dumps({
    "y": np.asarray(y).reshape(-1).tolist(),
    "s": np.asarray(s).reshape(-1).tolist(),
    "grad_w": np.asarray(grad_w).reshape(-1).tolist(),
}))
