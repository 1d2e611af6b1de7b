"""JAX's side of oxla's control-flow benchmark: the GRU training step of
bench/src/gru.rs, timed the same way (see bench/src/bin/control_vs_jax.rs).

Prints JSON (one line) with the median microseconds of trace + lower, the
step's temporary bytes and its loss, then serves timing blocks of the
compiled step (see jax_twin.serve_blocks).
"""

import json

import jax
import jax.numpy as jnp
import numpy as np

from jax_twin import serve_blocks, trace_lower_us

INPUT, HIDDEN, LENGTH, BATCH, CLASSES = 64, 256, 256, 32, 10
LEARNING_RATE = 0.01


def data(shape, scale, seed):
    """The same data as bench/src/mlp.rs `data` (an LCG)."""
    n = int(np.prod(shape))
    state = (seed * 6364136223846793005 + 1442695040888963407) % 2 ** 64
    unit = np.empty(n, np.float32)
    for i in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        unit[i] = ((state >> 40) / float(1 << 24) - 0.5) * 2.0  # exact in f32
    return jnp.asarray((unit * np.float32(scale)).reshape(shape))


def gru_step(wh, bh, h, xw):
    hw = h @ wh + bh
    xr, xz, xn = jnp.split(xw, 3, axis=-1)
    hr, hz, hn = jnp.split(hw, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return n + z * (h - n)


def gru_loss(p, xs, y):
    wi, bi, wh, bh, wo, bo = p
    xw = xs @ wi + bi
    h0 = jnp.zeros((BATCH, HIDDEN), jnp.float32)
    h, _ = jax.lax.scan(lambda h, xw: (gru_step(wh, bh, h, xw), None), h0, xw)
    logits = h @ wo + bo
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def train_step(params, xs, y):
    loss, grads = jax.value_and_grad(gru_loss)(params, xs, y)
    return [p - LEARNING_RATE * g for p, g in zip(params, grads)], loss


def main():
    params = [
        data((INPUT, 3 * HIDDEN), 0.1, 1),
        data((3 * HIDDEN,), 0.01, 2),
        data((HIDDEN, 3 * HIDDEN), 0.05, 3),
        data((3 * HIDDEN,), 0.01, 4),
        data((HIDDEN, CLASSES), 0.05, 5),
        data((CLASSES,), 0.01, 6),
    ]
    xs = data((LENGTH, BATCH, INPUT), 1.0, 7)
    y = jax.nn.one_hot(jnp.arange(BATCH) * 3 % CLASSES, CLASSES)
    results = {}

    results["step_trace_lower"] = trace_lower_us(train_step, params, xs, y)
    step = jax.jit(train_step)
    results["step_temp"] = step.lower(params, xs, y).compile().memory_analysis().temp_size_in_bytes
    results["loss"] = float(step(params, xs, y)[1])
    print(json.dumps(results), flush=True)
    serve_blocks(lambda: step(params, xs, y))


if __name__ == "__main__":
    main()
