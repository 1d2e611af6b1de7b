"""JAX 0.10.2's public function names, per namespace oxla mirrors: every
public callable attribute that is not a class or module. Prints JSON
{namespace: [names]}."""

import inspect
import json

import jax
import jax.nn
import jax.numpy as jnp
import jax.numpy.fft
import jax.numpy.linalg
import jax.random
from jax import lax

NAMESPACES = {
    "jax.numpy": jnp,
    "jax.lax": lax,
    "jax.nn": jax.nn,
    "jax.random": jax.random,
    "jax.numpy.linalg": jax.numpy.linalg,
    "jax.numpy.fft": jax.numpy.fft,
}


def functions(module):
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if inspect.ismodule(value) or inspect.isclass(value) or not callable(value):
            continue
        names.append(name)
    return sorted(names)


print(json.dumps({ns: functions(m) for ns, m in NAMESPACES.items()}))
