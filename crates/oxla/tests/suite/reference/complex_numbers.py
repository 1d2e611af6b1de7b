"""JAX's values for oxla's complex-number tests (complex_numbers.rs).

Prints JSON: {"inputs": {name: enc}, "outputs": {name: enc}, "printed": [str]}:
gradients of real-valued functions of complex inputs (JAX's convention),
holomorphic grad, jacfwd and jacrev, and numpy's printing of complex arrays.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ops import enc  # noqa: E402

rng = np.random.default_rng(77)


def cnormal(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


Z, W = cnormal(4), cnormal(4)
S = np.complex64(0.7 - 1.3j)


def squared_norm(z, w):
    return jnp.sum(jnp.real(z * jnp.conj(z)) + jnp.real(z * w))


def abs_of_exp(z, w):
    return jnp.sum(jnp.abs(jnp.exp(z) * w) + jnp.angle(z))


def holomorphic_scalar(z):
    return jnp.sum(jnp.sin(z) * z)


def holomorphic_vector(z):
    return z * z * W + jnp.log(z)


def real_vector(z):
    return jnp.abs(z) ** 2 + jnp.imag(z)


outputs = {
    "grad_squared_norm": jax.grad(squared_norm)(Z, W),
    "grad_squared_norm_w": jax.grad(squared_norm, argnums=1)(Z, W),
    "grad_abs_of_exp": jax.grad(abs_of_exp)(Z, W),
    "grad_holomorphic": jax.grad(holomorphic_scalar, holomorphic=True)(Z),
    "grad_holomorphic_scalar": jax.grad(lambda s: s * s * jnp.exp(s), holomorphic=True)(S),
    "jacfwd_holomorphic": jax.jacfwd(holomorphic_vector, holomorphic=True)(Z),
    "jacrev_holomorphic": jax.jacrev(holomorphic_vector, holomorphic=True)(Z),
    "jacrev_real": jax.jacrev(real_vector)(Z),
    "vjp_complex": jax.vjp(holomorphic_vector, Z)[1](W)[0],
    "jvp_complex": jax.jvp(holomorphic_vector, (Z,), (W,))[1],
}
printed = [str(a) for a in [
    np.array([1 + 2j, 3.5 - 4j], np.complex64),
    np.array([[0.25 + 0j, -1j], [2 + 2j, -3.5 + 0.5j]], np.complex64),
    np.array(1 + 2j, np.complex64),
]]
json.dump({
    "inputs": {"z": enc(Z), "w": enc(W), "s": enc(S)},
    "outputs": {k: enc(v) for k, v in outputs.items()},
    "printed": printed,
}, sys.stdout)
