"""JAX's side of oxla's transformation benchmark: the same workloads, timed
the same way (see bench/src/bin/transforms_vs_jax.rs).

Prints JSON with median microseconds per call and memory figures (one line),
then serves timing blocks of the compiled step: each input line "N" runs N
steps and answers with the microseconds per step, so the Rust side can
alternate blocks of oxla and JAX (machine drift hits both alike).
"""

import json

import jax
import jax.numpy as jnp
import numpy as np

from jax_twin import mlp_loss, serve_blocks, trace_lower_us

LEARNING_RATE = 0.01


def train_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def deep_loss(layers, x, remat):
    layer = lambda h, w: jnp.tanh(h @ w)  # noqa: E731
    if remat:
        layer = jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable)
    for w in layers:
        x = layer(x, w)
    return jnp.sum(x ** 2)


def scanned_deep_loss(ws, x, remat):
    body = lambda h, w: (jnp.tanh(h @ w), None)  # noqa: E731
    if remat:
        body = jax.checkpoint(body, policy=jax.checkpoint_policies.nothing_saveable)
    h, _ = jax.lax.scan(body, x, ws)
    return jnp.sum(h ** 2)


def main():
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [(jnp.asarray(rng.standard_normal((a, b)).astype(np.float32) * 0.05), jnp.zeros(b, jnp.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rng.standard_normal((128, 784)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])
    results = {}

    results["step_trace_lower"] = trace_lower_us(train_step, params, x, y)

    step = jax.jit(train_step)
    jax.block_until_ready(step(params, x, y))

    layers = [jnp.eye(256, dtype=jnp.float32) * (0.9 + 0.001 * i) for i in range(16)]
    xb = jnp.ones((512, 256), jnp.float32)
    for name, remat in [("deep_temp_plain", False), ("deep_temp_remat", True)]:
        compiled = jax.jit(jax.grad(lambda l, a: deep_loss(l, a, remat))).lower(layers, xb).compile()
        results[name] = compiled.memory_analysis().temp_size_in_bytes
    stacked = jnp.stack(layers)
    for name, remat in [("scan_temp_plain", False), ("scan_temp_remat", True)]:
        compiled = jax.jit(jax.grad(lambda w, a: scanned_deep_loss(w, a, remat))).lower(stacked, xb).compile()
        results[name] = compiled.memory_analysis().temp_size_in_bytes
    print(json.dumps(results), flush=True)
    serve_blocks(lambda: step(params, x, y))


if __name__ == "__main__":
    main()
