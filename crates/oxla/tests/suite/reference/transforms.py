"""Reference values for oxla's transformations on composite models,
computed by JAX (CPU) when the tests run.

Prints JSON {name: {"inputs": [...], "outputs": [...], ...}} where each array
is {"dtype", "shape", "data": base64 of little-endian bytes}. The Rust test
(transforms.rs) builds the same functions with oxla and compares.
"""

import base64
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(7)


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def normal(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- models (each mirrored in transforms.rs) ---------------------------------

def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jax.nn.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    return jnp.mean(-jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def layer_norm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * gamma + beta


def attention_loss(params, x):
    wq, wk, wv, wo, gamma, beta = params
    h = layer_norm(x, gamma, beta)
    q, k, v = h @ wq, h @ wk, h @ wv
    t = x.shape[0]
    scores = (q @ k.T) / np.float32(np.sqrt(q.shape[-1]))
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    scores = jnp.where(mask, scores, -1e9)
    out = jax.nn.softmax(scores) @ v @ wo + x
    return jnp.sum(jnp.tanh(out) ** 2)


def conv_loss(params, x):
    kernel, bias = params
    y = lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + bias
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.mean(y ** 2)


def cube_sum(x):
    return jnp.sum(jnp.sin(x) * x ** 2)


def tanh_layer(x, w):
    return jnp.tanh(w @ x)


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


@jax.custom_vjp
def clip_gradient(x):
    return x


def clip_fwd(x):
    return x, None


def clip_bwd(_, g):
    return (jnp.clip(g, -0.1, 0.1),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


def deep_mlp(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return jnp.sum(x ** 2)


def main():
    out = {}
    d_in, d_h, d_out, n = 8, 16, 4, 5
    mlp_params = [normal(d_in, d_h, scale=0.3), normal(d_h, scale=0.1), normal(d_h, d_out, scale=0.3), normal(d_out, scale=0.1)]
    x = normal(n, d_in)
    y = np.eye(d_out, dtype=np.float32)[rng.integers(0, d_out, n)]
    value, grads = jax.value_and_grad(mlp_loss)(mlp_params, x, y)
    out["mlp"] = {"inputs": [enc(a) for a in mlp_params + [x, y]], "value": enc(value), "grads": [enc(g) for g in grads]}
    per_example = jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0))(mlp_params, x[:, None, :], y[:, None, :])
    out["mlp_per_example"] = {"grads": [enc(g) for g in per_example]}
    out["mlp_grad_of_vmap"] = {"grads": [enc(g) for g in jax.grad(
        lambda p: jnp.sum(jax.vmap(mlp_loss, in_axes=(None, 0, 0))(p, x[:, None, :], y[:, None, :])))(mlp_params)]}
    out["mlp_jaxpr_eqns"] = len(jax.make_jaxpr(jax.grad(mlp_loss))(mlp_params, x, y).eqns)

    t, d = 6, 8
    att_params = [normal(d, d, scale=0.3) for _ in range(4)] + [1.0 + normal(d, scale=0.1), normal(d, scale=0.1)]
    xa = normal(t, d)
    value, grads = jax.value_and_grad(attention_loss)(att_params, xa)
    out["attention"] = {"inputs": [enc(a) for a in att_params + [xa]], "value": enc(value), "grads": [enc(g) for g in grads]}

    xl = normal(3, 8)
    g = 1.0 + normal(8, scale=0.1)
    bt = normal(8, scale=0.1)
    ct = normal(3, 8)
    _, pullback = jax.vjp(layer_norm, xl, g, bt)
    out["layer_norm"] = {"inputs": [enc(xl), enc(g), enc(bt), enc(ct)], "grads": [enc(a) for a in pullback(ct)]}

    kernel, bias = normal(3, 3, 2, 4, scale=0.3), normal(4, scale=0.1)
    xc = normal(2, 6, 6, 2)
    value, grads = jax.value_and_grad(conv_loss)([kernel, bias], xc)
    out["conv"] = {"inputs": [enc(kernel), enc(bias), enc(xc)], "value": enc(value), "grads": [enc(a) for a in grads]}

    xv = normal(4)
    wv = normal(3, 4)
    out["jacobians"] = {
        "inputs": [enc(xv), enc(wv)],
        "jacfwd": enc(jax.jacfwd(tanh_layer)(xv, wv)),
        "jacrev": enc(jax.jacrev(tanh_layer)(xv, wv)),
        "hessian": enc(jax.hessian(cube_sum)(xv)),
        "grad_grad": enc(jax.grad(lambda a: jnp.sum(jax.grad(cube_sum)(a)))(xv)),
    }

    xs = np.array([-30.0, -1.0, 0.0, 2.0, 50.0], dtype=np.float32)
    out["log1pexp"] = {
        "inputs": [enc(xs)],
        "value": enc(log1pexp(xs)),
        "grad": enc(jax.vmap(jax.grad(log1pexp))(xs)),
        "jvp": enc(jax.jvp(log1pexp, (xs,), (np.ones_like(xs),))[1]),
        "second": enc(jax.vmap(jax.grad(jax.grad(log1pexp)))(xs)),
    }
    xg = normal(5) * 3
    out["clip_gradient"] = {"inputs": [enc(xg)], "grad": enc(jax.grad(lambda a: jnp.sum(clip_gradient(a) ** 2))(xg))}

    rows = np.array([[0.5, -1.0, 2.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    out["logsumexp_inf"] = {
        "inputs": [enc(rows)],
        "value": enc(jax.nn.logsumexp(rows, axis=-1)),
        "log_softmax": enc(jax.nn.log_softmax(rows[:1])),
        "grad": enc(jax.grad(lambda r: jnp.sum(jax.nn.logsumexp(r, axis=-1)))(rows)),
    }

    layers = [normal(32, 32, scale=0.2) for _ in range(4)]
    xd = normal(4, 32)
    out["deep_mlp"] = {"inputs": [enc(a) for a in layers + [xd]],
                       "grads": [enc(a) for a in jax.grad(deep_mlp)(layers, xd)]}
    # The compiler's temporaries for grad of a 16-layer MLP, each layer
    # checkpointed (nothing_saveable) or not.
    big = [jnp.eye(256, dtype=jnp.float32) * (0.9 + 0.001 * i) for i in range(16)]
    xb = jnp.ones((512, 256), jnp.float32)

    def big_loss(layers, x, remat):
        layer = lambda h, w: jnp.tanh(h @ w)  # noqa: E731
        if remat:
            layer = jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable)
        for w in layers:
            x = layer(x, w)
        return jnp.sum(x ** 2)

    # The same 16 layers as a scan over the stacked weights: the layout in
    # which JAX's checkpoint lowers peak memory on XLA's CPU backend (the
    # unrolled one's recomputation is merged back by XLA's CSE).
    big_stacked = jnp.stack(big)

    def scanned_loss(ws, x, remat):
        body = lambda h, w: (jnp.tanh(h @ w), None)  # noqa: E731
        if remat:
            body = jax.checkpoint(body, policy=jax.checkpoint_policies.nothing_saveable)
        h, _ = jax.lax.scan(body, x, ws)
        return jnp.sum(h ** 2)

    def temp_bytes(loss, params, remat):
        return jax.jit(jax.grad(lambda l, a: loss(l, a, remat))).lower(params, xb).compile() \
            .memory_analysis().temp_size_in_bytes

    out["deep_memory"] = {
        "plain": temp_bytes(big_loss, big, False),
        "remat": temp_bytes(big_loss, big, True),
        "scan_plain": temp_bytes(scanned_loss, big_stacked, False),
        "scan_remat": temp_bytes(scanned_loss, big_stacked, True),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
