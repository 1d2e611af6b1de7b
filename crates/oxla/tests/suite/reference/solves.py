"""Reference values for lax.custom_linear_solve and lax.custom_root
(solves.rs), computed by JAX (CPU) at test time: values, jvps, gradients,
second derivatives and vmaps of solves whose solvers are dense solves,
conjugate gradients in a while loop (never differentiable by itself), Newton
iterations and fixed-point iterations. Prints JSON {name: enc}."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from ops import enc  # noqa: E402

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
NONSYM = np.array([[3.0, 1.0, -1.0], [0.5, 2.0, 0.3], [-0.2, 0.4, 1.5]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)
W = np.array([0.3, -1.2, 0.8], np.float32)
TA = np.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.1, 0.4]], np.float32)
TB = np.array([0.5, 0.25, -1.0], np.float32)
BS = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1], [2.0, 0.0, 1.0], [-0.5, 1.5, 0.2]], np.float32)
AS = np.stack([NONSYM, NONSYM.T + np.eye(3, dtype=np.float32)])
# The block operator (x1, x2) ↦ (M1 x1, M2 x2 + K x1) on a two-leaf vector.
M1 = np.array([[2.0, 0.5], [-0.3, 1.5]], np.float32)
M2 = np.array([[3.0, 0.2, 0.1], [0.4, 2.5, -0.2], [0.0, 0.3, 1.8]], np.float32)
K = np.array([[0.5, -1.0], [0.2, 0.3], [-0.4, 0.6]], np.float32)
B1 = np.array([1.0, -0.5], np.float32)
B2 = np.array([0.3, 2.0, -1.0], np.float32)
# The fixed point x = p - 0.3 tanh(M x), a root of x + 0.3 tanh(M x) - p.
MR = np.array([[0.8, -0.4, 0.3], [0.2, 0.9, -0.5], [-0.6, 0.1, 0.7]], np.float32)
P = np.array([0.5, -1.0, 2.0], np.float32)


def dense_solve(a, b):
    return lax.custom_linear_solve(
        lambda x: a @ x,
        b,
        solve=lambda _, b: jnp.linalg.solve(a, b),
        transpose_solve=lambda _, b: jnp.linalg.solve(a.T, b),
    )


def cg(matvec, b):
    """Conjugate gradients, four steps in a while loop."""

    def body(state):
        i, x, r, p, rs = state
        ap = matvec(p)
        alpha = rs / jnp.vdot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = jnp.vdot(r, r)
        p = r + (rs_new / rs) * p
        return i + 1, x, r, p, rs_new

    x0 = jnp.zeros_like(b)
    state = (jnp.int32(0), x0, b, b, jnp.vdot(b, b))
    return lax.while_loop(lambda s: s[0] < 4, body, state)[1]


def cg_solve(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, solve=cg, symmetric=True)


def block_solve(m1, m2, k, b1, b2):
    def matvec(x):
        x1, x2 = x
        return (m1 @ x1, m2 @ x2 + k @ x1)

    def solve(_, b):
        b1, b2 = b
        x1 = jnp.linalg.solve(m1, b1)
        return (x1, jnp.linalg.solve(m2, b2 - k @ x1))

    def transpose_solve(_, b):
        b1, b2 = b
        y2 = jnp.linalg.solve(m2.T, b2)
        return (jnp.linalg.solve(m1.T, b1 - k.T @ y2), y2)

    return lax.custom_linear_solve(matvec, (b1, b2), solve, transpose_solve)


def newton_sqrt(a):
    def solve(f, x0):
        def body(state):
            i, x = state
            return i + 1, x - f(x) / (2.0 * x)

        return lax.while_loop(lambda s: s[0] < 20, body, (jnp.int32(0), x0))[1]

    return lax.custom_root(lambda x: x * x - a, jnp.float32(1.0), solve, lambda g, y: y / g(1.0))


def fixed_point_root(p, m):
    def f(x):
        return x + 0.3 * jnp.tanh(m @ x) - p

    def solve(f, x0):
        def body(state):
            i, x = state
            return i + 1, x - f(x)

        return lax.while_loop(lambda s: s[0] < 60, body, (jnp.int32(0), x0))[1]

    def tangent_solve(g, y):
        return jnp.linalg.solve(jax.jacfwd(g)(y), y)

    return lax.custom_root(f, jnp.zeros(3, jnp.float32), solve, tangent_solve)


def dense_loss(a, b):
    return jnp.sum(W * dense_solve(a, b))


def cg_loss(a, b):
    return jnp.sum(W * cg_solve(a, b))


def block_loss(m1, m2, k, b1, b2):
    x1, x2 = block_solve(m1, m2, k, b1, b2)
    return jnp.sum(x1 * B1) + jnp.sum(W * x2)


def shifted(s):
    return jnp.sum(W * cg_solve(SPD + s * jnp.eye(3, dtype=jnp.float32), B))


def root_loss(p, m):
    return jnp.sum(W * fixed_point_root(p, m))


out = {}
out["dense_x"] = dense_solve(NONSYM, B)
out["dense_grad_a"], out["dense_grad_b"] = jax.grad(dense_loss, (0, 1))(NONSYM, B)
out["dense_jvp"] = jax.jvp(dense_solve, (NONSYM, B), (TA, TB))[1]
out["dense_jit_grad_a"] = jax.jit(jax.grad(dense_loss))(NONSYM, B)
out["cg_x"] = cg_solve(SPD, B)
out["cg_grad_a"], out["cg_grad_b"] = jax.grad(cg_loss, (0, 1))(SPD, B)
out["cg_jvp"] = jax.jvp(cg_solve, (SPD, B), (TA + TA.T, TB))[1]
out["cg_second"] = jax.grad(jax.grad(shifted))(jnp.float32(0.3))
out["vmap_b"] = jax.vmap(dense_solve, (None, 0))(NONSYM, BS)
out["vmap_b_axis1"] = jax.vmap(dense_solve, (None, 1))(NONSYM, BS.T)
out["vmap_a"] = jax.vmap(dense_solve, (0, None))(AS, B)
out["vmap_both"] = jax.vmap(dense_solve, (0, 0))(AS, BS[:2])
out["vmap_grad_a"] = jax.vmap(jax.grad(cg_loss), (None, 0))(SPD, BS)
out["grad_vmap_b"] = jax.grad(lambda a: jnp.sum(jax.vmap(dense_solve, (None, 0))(a, BS) ** 2))(NONSYM)
x1, x2 = block_solve(M1, M2, K, B1, B2)
out["block_x1"], out["block_x2"] = x1, x2
g = jax.grad(block_loss, (0, 1, 2, 3, 4))(M1, M2, K, B1, B2)
for name, v in zip(["m1", "m2", "k", "b1", "b2"], g):
    out[f"block_grad_{name}"] = v
out["sqrt"] = newton_sqrt(jnp.float32(2.0))
out["sqrt_grad"] = jax.grad(newton_sqrt)(jnp.float32(2.0))
out["sqrt_second"] = jax.grad(jax.grad(newton_sqrt))(jnp.float32(2.0))
out["sqrt_jvp"] = jax.jvp(newton_sqrt, (jnp.float32(2.0),), (jnp.float32(0.5),))[1]
out["sqrt_vmap_grad"] = jax.vmap(jax.grad(newton_sqrt))(np.array([1.0, 2.0, 4.0, 9.0], np.float32))
out["root"] = fixed_point_root(P, MR)
out["root_grad_p"], out["root_grad_m"] = jax.grad(root_loss, (0, 1))(P, MR)
out["root_jit_grad_m"] = jax.jit(jax.grad(root_loss, 1))(P, MR)
print(json.dumps({k: enc(v) for k, v in out.items()}))
