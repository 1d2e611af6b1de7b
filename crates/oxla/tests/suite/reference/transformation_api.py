"""Reference values for vjp with has_aux, linear_transpose and eval_shape
(transformation_api.rs), computed by JAX (CPU) at test time. Prints JSON:

  {"vjp_aux": {"x", "ct", "out", "aux", "x_ct": enc},
   "transpose": {"a", "x", "y", "c_vec", "c_sum", "x_ct", "y_ct": enc},
   "eval_shape": ["f32[3]{weak}" ...]}
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ops import enc  # noqa: E402

X = np.array([0.3, -1.2, 2.0], np.float32)
CT = np.array([1.0, 2.0, -0.5], np.float32)
A = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32)
Y = np.array([0.7, -0.1], np.float32)
C_VEC = np.array([0.5, -1.5], np.float32)
C_SUM = np.float32(2.0)


def with_aux(x):
    return jnp.sin(x) * x, {"norm": jnp.sum(x * x), "first": x[0]}


def linear(x, y):
    return A @ x + 2.0 * y, jnp.sum(x) - y[1]


def shapes(x, n):
    return {"sum": jnp.sum(x, axis=0), "idx": jnp.argmax(x), "scaled": x * 2, "count": n + 1}


W = np.array([[0.5, -1.0], [0.25, 0.75], [-0.5, 1.5]], np.float32)
B = np.array([0.1, -0.2], np.float32)
XS = np.array([[1.0, 0.5, -1.0], [0.0, 2.0, 1.0], [-1.5, 0.5, 0.25], [0.3, -0.7, 1.1]], np.float32)


def model(params, x):
    w, b = params
    return jnp.tanh(x @ w + b), jnp.sum(w * w)


def model_aux(params, x):
    out = model(params, x)
    return out, jnp.max(out[0])


def scalar_model(w, b):
    return jnp.sum(jnp.tanh(XS @ w + b) ** 2)


def jacobians():
    rev = jax.jacrev(model, argnums=0)((W, B), XS)
    fwd = jax.jacfwd(model, argnums=0)((W, B), XS)
    full = jax.jacrev(model, argnums=(0, 1))((W, B), XS)
    (aux_jac, aux) = jax.jacfwd(model_aux, has_aux=True)((W, B), XS)
    hess = jax.hessian(scalar_model, argnums=(0, 1))(W, B)
    blocks = lambda j: [[enc(j[i][k]) for k in range(2)] for i in range(2)]
    return {
        "w": enc(W), "b": enc(B), "xs": enc(XS),
        "rev": blocks(rev), "fwd": blocks(fwd),
        "x_blocks": [enc(full[i][1]) for i in range(2)],
        "aux": enc(aux), "aux_jac": blocks(aux_jac),
        "hessian": [[enc(hess[i][k]) for k in range(2)] for i in range(2)],
    }


SEEN = []


@jax.custom_jvp
def sin_times(x, y):
    return jnp.sin(x) * y


def sin_times_jvp(primals, tangents):
    from jax.custom_derivatives import SymbolicZero
    x, y = primals
    tx, ty = tangents
    zero = (isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero))
    SEEN.append(list(zero))
    terms = []
    if not zero[0]:
        terms.append(jnp.cos(x) * y * tx)
    if not zero[1]:
        terms.append(jnp.sin(x) * ty)
    return jnp.sin(x) * y, sum(terms[1:], terms[0])


sin_times.defjvp(sin_times_jvp, symbolic_zeros=True)


def symbolic_zeros():
    x, y = jnp.float32(0.7), jnp.float32(-1.5)
    out = {}
    SEEN.clear()
    out["dx"] = enc(jax.grad(sin_times, argnums=0)(x, y))
    out["dx_seen"] = SEEN[-1]
    out["dy"] = enc(jax.grad(sin_times, argnums=1)(x, y))
    out["dy_seen"] = SEEN[-1]
    _, t = jax.jvp(sin_times, (x, y), (jnp.float32(0.5), jnp.float32(2.0)))
    out["jvp"] = enc(t)
    out["jvp_seen"] = SEEN[-1]
    xs = jnp.array([0.1, -0.4, 2.0], jnp.float32)
    out["vmap_dx"] = enc(jax.vmap(jax.grad(sin_times, argnums=0), in_axes=(0, None))(xs, y))
    out["vmap_dx_seen"] = SEEN[-1]
    out["jit_dy"] = enc(jax.jit(jax.grad(sin_times, argnums=1))(x, y))
    return out


def main():
    out, pullback, aux = jax.vjp(with_aux, X, has_aux=True)
    (x_ct,) = pullback(CT)
    transposed = jax.linear_transpose(linear, X, Y)
    x_t, y_t = transposed((C_VEC, C_SUM))
    types = jax.eval_shape(shapes, jnp.zeros((4, 3), jnp.float32), 3)
    leaves = jax.tree_util.tree_leaves(types)
    print(json.dumps({
        "vjp_aux": {"x": enc(X), "ct": enc(CT), "out": enc(out), "norm": enc(aux["norm"]),
                    "first": enc(aux["first"]), "x_ct": enc(x_ct)},
        "transpose": {"a": enc(A), "x": enc(X), "y": enc(Y), "c_vec": enc(C_VEC),
                      "c_sum": enc(C_SUM), "x_ct": enc(x_t), "y_ct": enc(y_t)},
        "eval_shape": [[str(np.dtype(l.dtype)), list(l.shape), bool(l.weak_type)] for l in leaves],
        "jacobians": jacobians(),
        "symbolic_zeros": symbolic_zeros(),
    }))


main()
