"""JAX's side of oxla's export benchmark (bench/src/bin/exports_vs_jax.rs).

Usage: jax_exports_twin.py DIR. Exports an MLP loss (784-512-512-10, batch
256, params a dict) with its vjp into DIR/mlp.jaxexport and its inputs as
.npy, then prints JSON (one line) with the median microseconds of
`jax.export.deserialize`, of exporting the loss with its vjp and serializing
it, and of tracing + lowering the training step, and
serves timing blocks of the compiled step: a jitted SGD step whose loss is
`exported.call`, differentiated through the serialized vjp (each input line
"N" runs N steps and answers with the microseconds per step).
"""

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from jax_twin import median_us, serve_blocks

out = pathlib.Path(sys.argv[1])
rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = {}
for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
    params[f"w{i}"] = (rng.standard_normal((a, b)) * (2 / a) ** 0.5).astype(np.float32)
    params[f"b{i}"] = np.zeros(b, np.float32)
x = rng.standard_normal((256, 784)).astype(np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]


def loss(p, x, y):
    h = x
    for i in range(3):
        h = h @ p[f"w{i}"] + p[f"b{i}"]
        if i < 2:
            h = jax.nn.relu(h)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))


serialized = export.export(jax.jit(loss))(params, x, y).serialize(vjp_order=1)
(out / "mlp.jaxexport").write_bytes(serialized)
for name, value in params.items():
    np.save(out / f"{name}.npy", value)
np.save(out / "x.npy", x)
np.save(out / "y.npy", y)

exported = export.deserialize(serialized)


def step(p, x, y):
    value, grads = jax.value_and_grad(lambda q: exported.call(q, x, y))(p)
    return value, jax.tree.map(lambda w, g: w - 0.01 * g, p, grads)


def trace_lower():
    fresh = lambda p, x, y: step(p, x, y)  # noqa: E731
    jax.jit(fresh).lower(params, x, y)


compiled = jax.jit(step)
device = jax.device_put((params, x, y))
print(
    json.dumps(
        {
            "deserialize": median_us(lambda: export.deserialize(serialized), 20, 9),
            "export_serialize": median_us(
                lambda: export.export(jax.jit(loss))(params, x, y).serialize(vjp_order=1), 3, 7
            ),
            "step_trace_lower": median_us(trace_lower, 3, 7),
            "loss": float(compiled(*device)[0]),
        }
    ),
    flush=True,
)
serve_blocks(lambda: compiled(*device))
