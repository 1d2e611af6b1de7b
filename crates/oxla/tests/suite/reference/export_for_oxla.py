"""Exports functions from JAX for oxla to call inside its own programs.

Usage: export_for_oxla.py DIR. Writes into DIR:
  mlp.jaxexport: an MLP loss f(params, x, y) (params a dict), with its vjp,
    as JAX writes it (StableHLO portable artifacts);
  mlp.<name>.npy: the initial params, x and y;
  per_example.jaxexport (+ .x.npy): f32[3] -> f32[2], without a vjp, its
    module written as StableHLO text in MLIR's generic form (which JAX
    also loads and runs);
  artifact.jaxexport: the same function as JAX writes it by default.
Prints JSON: the losses of 20 SGD steps (lr 0.1) taken in JAX through the
export, and per_example mapped over the rows of per_example.x.
"""

import dataclasses
import json
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

out = pathlib.Path(sys.argv[1])
rng = np.random.default_rng(5)


def generic_text(exp):
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(exp.mlir_module())
        text = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
    return text.encode()


def as_text(exp):
    return dataclasses.replace(exp, mlir_module_serialized=generic_text(exp), _get_vjp=None)


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


params = {
    "w1": (rng.standard_normal((4, 8)) * 0.5).astype(np.float32),
    "b1": np.zeros(8, np.float32),
    "w2": (rng.standard_normal((8, 3)) * 0.5).astype(np.float32),
    "b2": np.zeros(3, np.float32),
}
x = rng.standard_normal((16, 4)).astype(np.float32)
y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]
exp = export.export(jax.jit(loss))(params, x, y)
(out / "mlp.jaxexport").write_bytes(exp.serialize(vjp_order=1))
for name, value in params.items():
    np.save(out / f"mlp.{name}.npy", value)
np.save(out / "mlp.x.npy", x)
np.save(out / "mlp.y.npy", y)

reloaded = export.deserialize((out / "mlp.jaxexport").read_bytes())
step = jax.jit(jax.value_and_grad(lambda p: reloaded.call(p, x, y)))
losses = []
p = params
for _ in range(20):
    value, grads = step(p)
    losses.append(float(value))
    p = jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)


def per_example(v):
    return jnp.stack([jnp.sum(jnp.sin(v)), jnp.prod(v)])


pe = export.export(jax.jit(per_example))(jax.ShapeDtypeStruct((3,), np.float32))
(out / "per_example.jaxexport").write_bytes(as_text(pe).serialize())
xs = rng.standard_normal((5, 3)).astype(np.float32)
np.save(out / "per_example.x.npy", xs)
# JAX has no batching rule for call_exported; a map is what oxla's vmap runs.
batched = jax.lax.map(export.deserialize((out / "per_example.jaxexport").read_bytes()).call, xs)

(out / "artifact.jaxexport").write_bytes(pe.serialize())



# A loss through JAX's CPU linear algebra (LAPACK custom calls), with its
# vjp: its value and gradient as JAX computes them.
def linalg_loss(a, b):
    x = jnp.linalg.solve(a, b)
    sym = a @ a.T + 4 * jnp.eye(a.shape[0], dtype=a.dtype)
    return (
        jnp.sum(jnp.sin(x))
        + jnp.linalg.slogdet(a)[1]
        + jnp.sum(jnp.linalg.eigvalsh(sym))
        + jnp.sum(jnp.linalg.svd(a, compute_uv=False))
        + jnp.sum(jnp.linalg.cholesky(sym))
        + jnp.sum(jnp.linalg.qr(a)[1] ** 2)
    )


la = (rng.standard_normal((4, 4)) + 3 * np.eye(4)).astype(np.float32)
lb = rng.standard_normal((4, 2)).astype(np.float32)
le = export.export(jax.jit(linalg_loss))(la, lb)
(out / "linalg.jaxexport").write_bytes(le.serialize(vjp_order=1))
np.save(out / "linalg.a.npy", la)
np.save(out / "linalg.b.npy", lb)
lvalue, (lga, lgb) = jax.value_and_grad(linalg_loss, argnums=(0, 1))(la, lb)

# The MLP loss exported with a symbolic batch size, with its vjp: its
# value and parameter gradients at two batch sizes, as JAX computes them
# through the deserialized export.
batch = export.symbolic_shape("b")[0]
poly = export.export(jax.jit(loss))(
    params,
    jax.ShapeDtypeStruct((batch, 4), np.float32),
    jax.ShapeDtypeStruct((batch, 3), np.float32),
)
(out / "poly_mlp.jaxexport").write_bytes(poly.serialize(vjp_order=1))
poly_reloaded = export.deserialize((out / "poly_mlp.jaxexport").read_bytes())
poly_results = {}
for rows in (16, 6):
    value, grads = jax.value_and_grad(lambda p: poly_reloaded.call(p, x[:rows], y[:rows]))(params)
    poly_results[str(rows)] = {
        "value": float(value),
        "grads": {k: np.asarray(g).ravel().tolist() for k, g in grads.items()},
    }

print(
    json.dumps(
        {
            "poly_mlp": poly_results,
            "losses": losses,
            "per_example": np.asarray(batched).tolist(),
            "linalg": {
                "value": float(lvalue),
                "grad_a": np.asarray(lga).tolist(),
                "grad_b": np.asarray(lgb).tolist(),
            },
        }
    )
)
