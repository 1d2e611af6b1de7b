"""Writes JAX's device memory profile (jax.profiler.device_memory_profile,
gzip-compressed pprof) with one live array, to the path given, for
tests/suite/profiler.rs to compare its layout with oxla's."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

x = jnp.ones((64, 64), jnp.float32).block_until_ready()
with open(sys.argv[1], "wb") as out:
    out.write(jax.profiler.device_memory_profile())
