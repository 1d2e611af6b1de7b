"""Reference values for oxla's control flow, computed by JAX (CPU) when the
tests run: a scan RNN with its gradients, fori_loop with static and traced
bounds, a while_loop Newton solver with its jvp, switch under vmap with a
batched index, cond inside scan inside grad, and the compiled memory of grad
of a long scan.

Prints JSON {name: {...}} where each array is {"dtype", "shape", "data":
base64 of little-endian bytes}. The Rust test (control.rs) builds the same
functions with oxla and compares.
"""

import base64
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(11)


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def normal(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- programs (each mirrored in control.rs) -----------------------------------

def rnn_loss(params, xs):
    """An Elman RNN over xs[time, batch, in]: h' = tanh(x Wx + h Wh + b)."""
    wx, wh, b = params
    h0 = jnp.zeros((xs.shape[1], wh.shape[0]), jnp.float32)

    def step(h, x):
        h = jnp.tanh(x @ wx + h @ wh + b)
        return h, h

    h, hs = lax.scan(step, h0, xs)
    return jnp.mean(hs ** 2) + jnp.sum(h)


def fori_static(x, w):
    return jnp.sum(lax.fori_loop(0, 6, lambda i, c: jnp.sin(c * w) + i.astype(jnp.float32) * 0.1, x))


def fori_traced(lo, hi, x):
    return lax.fori_loop(lo, hi, lambda i, c: c * 0.9 + jnp.sin(c) * i.astype(jnp.float32), x)


def newton_cbrt(a):
    """x^3 = a by Newton's method, until the residual is small."""

    def unconverged(state):
        i, x = state
        return (i < 50) & (jnp.max(jnp.abs(x ** 3 - a) / a) > 1e-6)

    def step(state):
        i, x = state
        return i + 1, x - (x ** 3 - a) / (3.0 * x ** 2)

    return lax.while_loop(unconverged, step, (0, a))[1]


def switched(w, i, x):
    branches = [lambda x: jnp.sin(x) * w, lambda x: x ** 2 + w, lambda x: jnp.tanh(x * w)]
    return lax.switch(i, branches, x)


def switch_loss(w, idx, xs):
    return jnp.sum(jax.vmap(switched, in_axes=(None, 0, 0))(w, idx, xs) ** 2)


def cond_scan_loss(w, xs):
    def step(h, x):
        h = lax.cond(jnp.sum(x) > 0, lambda: jnp.tanh(h * w + x), lambda: h * 0.5 - x * w)
        return h, h

    _, hs = lax.scan(step, jnp.ones(3, jnp.float32), xs)
    return jnp.sum(hs ** 2)


def main():
    out = {}
    d_in, d_h, t, b = 3, 5, 6, 2
    params = [normal(d_in, d_h, scale=0.5), normal(d_h, d_h, scale=0.5), normal(d_h, scale=0.1)]
    xs = normal(t, b, d_in)
    value, grads = jax.value_and_grad(rnn_loss)(params, xs)
    out["rnn"] = {"inputs": [enc(a) for a in params + [xs]], "value": enc(value),
                  "grads": [enc(g) for g in grads], "grad_xs": enc(jax.grad(rnn_loss, argnums=1)(params, xs))}

    x, w = normal(4), normal(4)
    value, grads = jax.value_and_grad(fori_static, argnums=(0, 1))(x, w)
    out["fori_static"] = {"inputs": [enc(x), enc(w)], "value": enc(value), "grads": [enc(g) for g in grads]}
    lo, hi = np.int32(2), np.int32(7)
    tangent = normal(4)
    primal, jvp = jax.jit(lambda lo, hi, x, t: jax.jvp(lambda x: fori_traced(lo, hi, x), (x,), (t,)))(lo, hi, x, tangent)
    out["fori_traced"] = {"inputs": [enc(lo), enc(hi), enc(x), enc(tangent)], "value": enc(primal), "jvp": enc(jvp)}

    a = np.array([2.0, 5.0, 10.0, 27.0, 0.5], np.float32)
    ta = np.array([1.0, -1.0, 0.5, 2.0, 1.0], np.float32)
    primal, jvp = jax.jvp(newton_cbrt, (a,), (ta,))
    out["newton"] = {"inputs": [enc(a), enc(ta)], "value": enc(primal), "jvp": enc(jvp)}

    w = normal(4)
    idx = np.array([0, 1, 2, 5, -1, 1], np.int32)
    xsw = normal(6, 4)
    out["switch"] = {
        "inputs": [enc(w), enc(idx), enc(xsw)],
        "value": enc(jax.vmap(switched, in_axes=(None, 0, 0))(w, idx, xsw)),
        "grads": [enc(g) for g in jax.grad(switch_loss, argnums=(0, 2))(w, idx, xsw)],
    }

    wc = normal(3)
    xc = normal(7, 3)
    value, grads = jax.value_and_grad(cond_scan_loss, argnums=(0, 1))(wc, xc)
    out["cond_scan"] = {"inputs": [enc(wc), enc(xc)], "value": enc(value), "grads": [enc(g) for g in grads]}

    # Loops of no iteration: scan and map over zero rows, fori_loop(5, 5) and
    # fori_loop(7, 3) give the initial carry and empty ys, with grad and vmap.
    c0 = normal(3)
    empty = np.zeros((0, 3), np.float32)

    def empty_scan(c, xs):
        c, ys = lax.scan(lambda c, x: (jnp.sin(c) * x + c, c * x), c, xs)
        return jnp.sum(c) + jnp.sum(ys)

    def empty_fori(c, lo, hi):
        return jnp.sum(lax.fori_loop(lo, hi, lambda i, c: jnp.sin(c) * 2.0, c))

    out["zero_length"] = {
        "inputs": [enc(c0), enc(empty)],
        "scan_carry": enc(lax.scan(lambda c, x: (c + x, c * x), c0, empty)[0]),
        "scan_ys": enc(lax.scan(lambda c, x: (c + x, c * x), c0, empty)[1]),
        "scan_grad": enc(jax.grad(empty_scan)(c0, empty)),
        "scan_vmap": enc(jax.vmap(empty_scan, in_axes=(0, None))(jnp.stack([c0, 2 * c0]), empty)),
        "map": enc(lax.map(lambda x: x * 2.0, empty)),
        "fori_5_5_grad": enc(jax.grad(empty_fori)(c0, 5, 5)),
        "fori_7_3_grad": enc(jax.grad(empty_fori)(c0, 7, 3)),
        "fori_7_3_vmap": enc(jax.vmap(empty_fori, in_axes=(0, None, None))(jnp.stack([c0, 2 * c0]), 7, 3)),
    }

    # The compiler's temporaries for grad of a long RNN scan, and the jaxpr's
    # size, at several lengths.
    big = [normal(16, 64, scale=0.2), normal(64, 64, scale=0.1), normal(64, scale=0.1)]
    memory, eqns = {}, {}
    for length in (250, 500, 1000):
        seq = jnp.ones((length, 8, 16), jnp.float32)
        grad = jax.jit(jax.grad(rnn_loss))
        memory[str(length)] = grad.lower(big, seq).compile().memory_analysis().temp_size_in_bytes
        eqns[str(length)] = len(jax.make_jaxpr(jax.grad(rnn_loss))(big, seq).eqns)
    out["long_scan"] = {"temp_bytes": memory, "eqns": eqns}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
