"""The dtypes of JAX's sum, prod, cumsum and cumprod of ones(3) of each
dtype, without and with x64. Prints JSON: {"x64": {dtype: [4 dtypes]}}."""

import json

import jax
import jax.numpy as jnp
import numpy as np

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32"]
out = {}
for x64 in (False, True):
    jax.config.update("jax_enable_x64", x64)
    table = {}
    for name in DTYPES:
        a = jnp.ones(3, jnp.dtype(name))
        table[name] = [str(f(a).dtype) for f in (jnp.sum, jnp.prod, jnp.cumsum, jnp.cumprod)]
    out[str(x64).lower()] = table
print(json.dumps(out))
