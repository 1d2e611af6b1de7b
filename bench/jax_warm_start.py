"""JAX's side of oxla's warm-start benchmark: one process computes the
jitted MLP loss once, with the persistent compilation cache in argv[1]."""

import sys

import jax

jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def mlp_loss(params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i + 1 < len(params):
            h = jax.nn.relu(h)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))


rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(jnp.asarray(rng.uniform(-0.05, 0.05, (a, b)).astype(np.float32)), jnp.zeros(b, jnp.float32))
          for a, b in zip(sizes[:-1], sizes[1:])]
x = jnp.asarray(rng.uniform(-1, 1, (128, 784)).astype(np.float32))
y = jax.nn.one_hot(jnp.arange(128) * 7 % 10, 10)
print(float(jax.jit(mlp_loss)(params, x, y)))
