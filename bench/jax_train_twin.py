"""JAX + Optax side of oxla's training benchmark (bench/src/bin/train_vs_jax.rs):
the same models (crates/oxla/tests/suite/reference/jax_models.py), initial
parameters (oxla's safetensors checkpoints) and data (.npy) as oxla, timed
the same way.

Usage: jax_train_twin.py DIR. Prints one JSON line: per model ("mlp", "lm",
"small")
the median µs of trace + lower, the compile ms, the compiled step's peak
bytes (arguments + outputs - aliased + temporaries), first-call ms cold
(empty persistent cache) and warm (cache filled, in-memory caches cleared),
the first loss; and the tiny-call µs. Then answers each input line "NAME N"
with the µs per call of N calls of NAME: a model's step ("mlp"), a loop of
LOOP_BLOCK steps of it, each fed a fresh host batch ("mlp_loop"), or the tiny
function.
"""

import json
import os
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from safetensors.numpy import load_file

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "crates", "oxla", "tests",
                                "suite", "reference"))
from jax_models import lm_layers, lm_loss, mlp_loss  # noqa: E402
from jax_twin import median_us, serve_named, trace_lower_us  # noqa: E402

DIR = sys.argv[1]
LOOP_BLOCK = 50


def make_step(loss, opt):
    def step(params, state, *batch):
        value, grads = jax.value_and_grad(loss)(params, *batch)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value
    return step


def first_call_ms(step, params, state, batch):
    """ms of the first call of a fresh jit of `step` (trace, lower, compile
    or load from the persistent cache, run), in-memory caches cleared."""
    jax.clear_caches()
    fresh = jax.jit(lambda *a: step(*a), donate_argnums=(0, 1))
    copy = jax.tree.map(jnp.copy, (params, state))
    start = time.perf_counter()
    jax.block_until_ready(fresh(*copy, *batch))
    return (time.perf_counter() - start) * 1e3


def measure(name, params, loss, opt, host_batches):
    step = make_step(loss, opt)
    state = opt.init(params)
    batch = [jnp.asarray(b) for b in host_batches(0)]
    out = {"trace_lower_us": trace_lower_us(step, params, state, *batch)}
    lowered = jax.jit(step, donate_argnums=(0, 1)).lower(params, state, *batch)
    start = time.perf_counter()
    compiled = lowered.compile()
    out["compile_ms"] = (time.perf_counter() - start) * 1e3
    m = compiled.memory_analysis()
    out["peak_bytes"] = (m.argument_size_in_bytes + m.output_size_in_bytes
                         - m.alias_size_in_bytes + m.temp_size_in_bytes)
    # The process's persistent cache (main) holds nothing of this step yet.
    out["cold_first_call_ms"] = first_call_ms(step, params, state, batch)
    out["warm_first_call_ms"] = first_call_ms(step, params, state, batch)
    jitted = jax.jit(step, donate_argnums=(0, 1))
    p, s = jax.tree.map(jnp.copy, (params, state))
    p, s, value = jitted(p, s, *batch)
    out["first_loss"] = float(value)
    jax.block_until_ready(p)
    state_holder = {"p": p, "s": s}

    def one():
        state_holder["p"], state_holder["s"], v = jitted(state_holder["p"], state_holder["s"], *batch)
        return v

    def loop():
        """LOOP_BLOCK steps, each fed a fresh host batch, as a training
        loop dispatches them (its caller waits for the last loss only)."""
        for i in range(LOOP_BLOCK):
            h = state_holder
            h["p"], h["s"], v = jitted(h["p"], h["s"], *host_batches(i))
        return v
    return out, one, loop


def main():
    # One persistent cache for the whole process (JAX sets it up once),
    # empty at the start.
    cache = tempfile.TemporaryDirectory()
    jax.config.update("jax_compilation_cache_dir", cache.name)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    mlp_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "mlp.safetensors")).items()}
    x, y = np.load(os.path.join(DIR, "mlp_x.npy")), np.load(os.path.join(DIR, "mlp_y.npy"))
    lm_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "lm.safetensors")).items()}
    tokens = np.load(os.path.join(DIR, "lm_tokens.npy"))
    small_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "small.safetensors")).items()}
    sx, sy = np.load(os.path.join(DIR, "small_x.npy")), np.load(os.path.join(DIR, "small_y.npy"))
    layers = lm_layers(lm_params)
    results, steps = {}, {}
    results["mlp"], steps["mlp"], steps["mlp_loop"] = measure(
        "mlp", mlp_params, mlp_loss, optax.adamw(1e-3, weight_decay=1e-4),
        lambda i: (x[i % len(x)], y[i % len(y)]))
    results["lm"], steps["lm"], steps["lm_loop"] = measure(
        "lm", lm_params, lambda p, t: lm_loss(p, t, layers),
        optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3, weight_decay=1e-2)),
        lambda i: (tokens[i % len(tokens)],))
    results["small"], steps["small"], steps["small_loop"] = measure(
        "small", small_params, mlp_loss, optax.adamw(1e-3, weight_decay=1e-4),
        lambda i: (sx[i % len(sx)], sy[i % len(sy)]))
    tiny = jax.jit(lambda v: v + 1.0)
    x4 = jnp.ones(4, jnp.float32)
    steps["tiny"] = lambda: tiny(x4)
    results["tiny_call_us"] = median_us(lambda: tiny(x4).block_until_ready(), 2000, 9)
    print(json.dumps(results), flush=True)
    serve_named(steps)


if __name__ == "__main__":
    main()
