"""Reference values for higher-order differentiation through control flow
and custom rules (higher_order.rs), computed by JAX (CPU) at test time.

Each family is a function F of x: f32[3] with a scalar result, built around
one construct (checkpoint under three policies, scan, cond on either branch,
while_loop, custom_jvp, custom_vjp); F1(s) = F(s * BASE) is its restriction
to a line. Each transformation pair (grad∘grad, jacrev∘grad, jacfwd∘grad,
vmap∘grad∘grad, and jit inside each) is applied where JAX can, and while_loop
(forward mode only) gets jacfwd∘jacfwd instead. Prints JSON:

  {"inputs": {"x": enc, "s": enc, "batch": enc},
   "cases": {"<family>/<transformation>": enc, or {"error": "..."} where JAX raises},
   "pow": {...: enc} (see pow_cases)}
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from ops import enc  # noqa: E402

BASE = np.array([0.7, -0.4, 1.3], np.float32)
X = BASE
S = np.float32(0.9)
BATCH = np.array([0.3, 0.9, -0.5, 1.4], np.float32)


def coupled(x):
    return jnp.cos(jnp.sin(x)) * (x @ x)


def checkpointed(policy):
    return lambda x: jnp.sum(jax.checkpoint(coupled, policy=policy)(x))


def scanned(x):
    def body(c, xi):
        c2 = jnp.sin(c * xi) + c
        return c2, c2 * xi

    c, ys = lax.scan(body, jnp.float32(0.5), x)
    return c + jnp.sum(ys)


def branched(x):
    y = lax.cond(jnp.sum(x) > 0, lambda x: jnp.sin(x) * x, lambda x: jnp.cos(x) * (x @ x), x)
    return jnp.sum(y)


def looped(x):
    def body(state):
        i, c = state
        return i + 1, jnp.sin(c) * x + c

    _, c = lax.while_loop(lambda s: s[0] < 3, body, (0, x))
    return jnp.sum(c) * jnp.sum(x)


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), jax.nn.sigmoid(x) * t


@jax.custom_vjp
def sine(x):
    return jnp.sin(x)


def sine_fwd(x):
    return jnp.sin(x), x


def sine_bwd(x, g):
    return (jnp.cos(x) * g,)


sine.defvjp(sine_fwd, sine_bwd)

FAMILIES = {
    "checkpoint_nothing": checkpointed(jax.checkpoint_policies.nothing_saveable),
    "checkpoint_everything": checkpointed(jax.checkpoint_policies.everything_saveable),
    "checkpoint_dots": checkpointed(jax.checkpoint_policies.dots_saveable),
    "scan": scanned,
    "cond_true": branched,
    "cond_false": lambda x: branched(-x),
    "while": looped,
    "custom_jvp": lambda x: jnp.sum(softplus(x) * x) * jnp.sum(x),
    "custom_vjp": lambda x: jnp.sum(sine(x) * x) * jnp.sum(x),
}


def line(f):
    return lambda s: f(s * BASE)


REVERSE = {
    "grad_grad": lambda f: jax.grad(jax.grad(line(f)))(S),
    "jacrev_grad": lambda f: jax.jacrev(jax.grad(f))(X),
    "jacfwd_grad": lambda f: jax.jacfwd(jax.grad(f))(X),
    "vmap_grad_grad": lambda f: jax.vmap(jax.grad(jax.grad(line(f))))(BATCH),
    "grad_jit_grad": lambda f: jax.grad(jax.jit(jax.grad(line(f))))(S),
    "jit_jacrev_grad": lambda f: jax.jit(jax.jacrev(jax.grad(f)))(X),
    "jacrev_jit_grad": lambda f: jax.jacrev(jax.jit(jax.grad(f)))(X),
}

FORWARD = {
    "jacfwd_jacfwd": lambda f: jax.jacfwd(jax.jacfwd(f))(X),
    "jit_jacfwd_jacfwd": lambda f: jax.jit(jax.jacfwd(jax.jacfwd(f)))(X),
    "vmap_jacfwd_jacfwd": lambda f: jax.vmap(jax.jacfwd(jax.jacfwd(line(f))))(BATCH),
}


POW_POINTS = np.array([[4.0, 0.0], [2.0, 3.0], [0.5, -1.5], [3.0, 1.0]], np.float32)


def pow_cases():
    """lax.pow's derivatives (a float exponent) and integer_pow's (a static
    int exponent), where the two rules differ: hessians of x ** y at
    POW_POINTS, d/dx and d/dy of x ** y at (0, 0), and d/dx of x ** 0 and
    x ** 3 at 0 with the exponent a Python int."""
    pow2 = lambda v: jnp.power(v[0], v[1])  # noqa: E731
    zero = np.float32(0.0)
    return {
        "hessians": enc(jnp.stack([jax.hessian(pow2)(p) for p in POW_POINTS])),
        "grad_at_zero": enc(jax.grad(pow2)(np.array([0.0, 0.0], np.float32))),
        "static_0": enc(jax.grad(lambda x: jnp.power(x, 0))(zero)),
        "static_3": enc(jax.grad(lambda x: jnp.power(x, 3))(zero)),
        "static_3_second": enc(jax.grad(jax.grad(lambda x: jnp.power(x, 3)))(np.float32(2.0))),
    }


def main():
    cases = {}
    for family, f in FAMILIES.items():
        transforms = dict(FORWARD)
        if family == "while":
            # Reverse mode of a while_loop is an error in JAX: recorded so
            # that oxla is checked to raise one too.
            transforms["grad_grad"] = REVERSE["grad_grad"]
        else:
            transforms.update(REVERSE)
        for name, t in transforms.items():
            try:
                cases[f"{family}/{name}"] = enc(t(f))
            except Exception as e:  # JAX refuses: oxla must too
                cases[f"{family}/{name}"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    inputs = {"x": enc(X), "s": enc(S), "batch": enc(BATCH), "pow_points": enc(POW_POINTS)}
    json.dump({"inputs": inputs, "cases": cases, "pow": pow_cases()}, sys.stdout)


if __name__ == "__main__":
    main()
