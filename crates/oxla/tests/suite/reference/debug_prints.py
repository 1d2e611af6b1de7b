"""What jax.debug.print prints for the programs of tests/suite/debug_print.rs
(the same programs, the same values), on standard output, between
"BEGIN" and "END" lines."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

print("BEGIN", flush=True)
x = jnp.array([1.0, 2.0, 3.0], jnp.float32)
m = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], jnp.float32)


def jitted(x):
    jax.debug.print("jit: x = {} and 2x = {}", x, x * 2)
    return x * 2


jax.jit(jitted)(x).block_until_ready()


def row(r):
    jax.debug.print("vmap: row {}", r)
    return r.sum()


jax.jit(jax.vmap(row))(m).block_until_ready()


def loss(x):
    jax.debug.print("grad: forward {}", x)
    return jnp.sum(x * x)


jax.jit(jax.grad(loss))(x).block_until_ready()


def branches(p, x):
    return lax.cond(
        p,
        lambda x: (jax.debug.print("cond: true {}", x), x + 1)[1],
        lambda x: (jax.debug.print("cond: false {}", x), x - 1)[1],
        x,
    )


jax.jit(branches)(True, x).block_until_ready()
jax.jit(branches)(False, x).block_until_ready()


def loop(x):
    def body(i, c):
        jax.debug.print("while: i = {} c = {}", i, c)
        return c + 1.0

    return lax.fori_loop(0, 3, body, x)


jax.jit(loop)(jnp.float32(7.0)).block_until_ready()


def scanned(xs):
    def step(c, v):
        jax.debug.print("scan: c = {} v = {}", c, v)
        return c + v, c

    return lax.scan(step, jnp.float32(0.0), xs)


jax.jit(scanned)(x)[0].block_until_ready()


def ordered(c):
    jax.debug.print("order: before {}", c, ordered=True)

    def body(i, c):
        jax.debug.print("order: step {}", i, ordered=True)

        def first(c):
            jax.debug.print("order: first step {}", c, ordered=True)
            return c + 1.0

        return lax.cond(i < 1, first, lambda c: c - 1.0, c)

    c = lax.fori_loop(0, 3, body, c)
    jax.debug.print("order: after {}", c, ordered=True)
    return c


jax.jit(ordered)(jnp.float32(7.0)).block_until_ready()
jax.debug.print("eager: {} {{braces}} {}", jnp.int32(3), m)
print("END", flush=True)
