"""JAX's jnp functions on integer inputs (int32, bool where it makes sense):
the result's dtype and values, for oxla's wrapper promotion test. Prints
JSON {name: {"dtype": ..., "values": [...]}}; NaN and inf as strings."""

import json
import math

import jax.numpy as jnp
import numpy as np

ints = jnp.array([1, 2, 3], jnp.int32)
unit = jnp.array([0, 1, 0], jnp.int32)
wide = jnp.array([1, 2, 3], jnp.int32)
bools = jnp.array([True, False, True])

cases = {
    **{name: getattr(jnp, name)(ints) for name in [
        "exp", "exp2", "expm1", "log", "log1p", "sqrt", "cbrt", "tanh", "sin", "cos", "tan",
        "arctan", "sinh", "cosh", "arcsinh", "arccosh"]},
    **{name: getattr(jnp, name)(unit) for name in ["arcsin", "arccos", "arctanh"]},
    "arctan2": jnp.arctan2(ints, wide * 2),
    "divide": jnp.divide(ints, wide * 2),
    "power": jnp.power(ints, wide),
    "mean": jnp.mean(ints),
    "var": jnp.var(ints),
    "cumsum_bool": jnp.cumsum(bools),
    "cumprod_bool": jnp.cumprod(bools),
    "sum_bool": jnp.sum(bools),
    "prod_int8": jnp.prod(jnp.array([2, 3, 4], jnp.int8)),
}


def encode(v):
    v = float(v)
    return v if math.isfinite(v) else str(v)


print(json.dumps({
    name: {"dtype": str(out.dtype), "values": [encode(v) for v in np.asarray(out).ravel()]}
    for name, out in cases.items()
}))
