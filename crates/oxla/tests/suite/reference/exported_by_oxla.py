"""Loads exports that oxla wrote (Jit::export) and runs them in JAX.

Usage: exported_by_oxla.py DIR. DIR holds:
  mlp.jaxexport with mlp.params_<key>.npy, mlp.x.npy, mlp.labels.npy:
    oxla's MLP loss over ({'b1','b2','w1','w2'}, x, labels) with its vjp;
  second_order.jaxexport with second_order.x.npy: a scalar function of one
    array with vjps to order 2;
  constants.jaxexport with constants.x.npy: a function of one array that
    closed over a float and a boolean array.
Prints JSON: the structures JAX read, the loss called directly and inside
jax.jit, jax.grad of it, and the second derivative, as nested lists.
"""

import json
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402

directory = pathlib.Path(sys.argv[1])
load = lambda name: np.load(directory / f"{name}.npy")

mlp = export.deserialize((directory / "mlp.jaxexport").read_bytes())
params = {k: load(f"mlp.params_{k}") for k in ("b1", "b2", "w1", "w2")}
x, labels = load("mlp.x"), load("mlp.labels")
loss = lambda p: mlp.call(p, x, labels)
grads = jax.jit(jax.grad(loss))(params)

second = export.deserialize((directory / "second_order.jaxexport").read_bytes())
x2 = load("second_order.x")
# d/dx of sum(grad f(x)): needs the vjp of the vjp.
second_derivative = jax.grad(lambda v: jnp.sum(jax.grad(second.call)(v)))(x2)

constants = export.deserialize((directory / "constants.jaxexport").read_bytes())
with_constants = constants.call(load("constants.x"))

print(
    json.dumps(
        {
            "in_tree": str(mlp.in_tree),
            "out_tree": str(mlp.out_tree),
            "in_avals": [str(a) for a in mlp.in_avals],
            "vjp_in_avals": [str(a) for a in mlp.vjp().in_avals],
            "vjp_out_avals": [str(a) for a in mlp.vjp().out_avals],
            "loss": float(loss(params)),
            "jit_loss": float(jax.jit(loss)(params)),
            "grads": {k: np.asarray(v).tolist() for k, v in grads.items()},
            "second_derivative": np.asarray(second_derivative).tolist(),
            "with_constants": np.asarray(with_constants).tolist(),
        }
    )
)
