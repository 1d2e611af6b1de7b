"""JAX's side of oxla's jit benchmark: the same workloads, timed the same way.

Prints JSON with median microseconds per call for each workload.
"""

import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def median_us(fn, calls, blocks):
    fn()
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def trace_lower_us(fn, *args):
    """Median microseconds to trace and lower `fn` at `args` under jit, a
    new function object each time, so JAX's tracing caches (keyed on the
    function) miss, as oxla's first trace of a function does."""

    def lower():
        fresh = lambda *a: fn(*a)  # noqa: E731
        jax.jit(fresh).lower(*args)
    return median_us(lower, 5, 9)


def serve_blocks(step):
    """Answers each input line "N" with the microseconds per call of N
    calls of `step` (blocking on its results), until stdin closes."""
    for line in sys.stdin:
        n = int(line)
        start = time.perf_counter()
        for _ in range(n):
            jax.block_until_ready(step())
        print((time.perf_counter() - start) / n * 1e6, flush=True)


def serve_named(steps):
    """Answers each input line "NAME N" with the microseconds per call of N
    calls of `steps[NAME]` (blocking on its results), until stdin closes."""
    for line in sys.stdin:
        name, n = line.split()
        start = time.perf_counter()
        for _ in range(int(n)):
            jax.block_until_ready(steps[name]())
        print((time.perf_counter() - start) / int(n) * 1e6, flush=True)


def mlp_loss(params, x, y):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def main():
    rng = np.random.default_rng(0)
    tiny = jax.jit(lambda x: x + 1.0)
    x4 = jnp.ones(4, jnp.float32)
    tiny(x4).block_until_ready()
    results = {"tiny_call": median_us(lambda: tiny(x4), 2000, 15)}

    sizes = [784, 512, 512, 10]
    params = [(jnp.asarray(rng.standard_normal((a, b)).astype(np.float32) * 0.05), jnp.zeros(b, jnp.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rng.standard_normal((128, 784)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])

    results["mlp_trace_lower"] = trace_lower_us(mlp_loss, params, x, y)

    compiled = jax.jit(mlp_loss)
    compiled(params, x, y).block_until_ready()
    results["mlp_run"] = median_us(lambda: compiled(params, x, y).block_until_ready(), 50, 9)
    results["mlp_loss"] = float(compiled(params, x, y))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
