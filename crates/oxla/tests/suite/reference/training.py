"""Reference values for oxla::nn and oxla::optim, computed by JAX 0.10.2 and
Optax 0.2.6 (CPU) when the tests run.

Prints JSON with:
  initializers: jax.nn.initializers.<name>(...)(PRNGKey(seed), shape)
  layers: each layer's parameters, input and output, the formulas written
    as Flax's source computes them (Dense, LayerNorm, RMSNorm, Embed,
    MultiHeadDotProductAttention with a causal mask, Conv, max/avg pool),
    plus the gradient of a scalar loss through the attention layer
  schedules: optax schedule values at steps 0..N
  optimizers: parameters after each of 6 Optax updates of a two-leaf tree
    from fixed gradients, per optimizer
  losses: optax.losses of fixed logits and labels
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(0)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


init = jax.nn.initializers
INITIALIZERS = {
    "lecun_normal": init.lecun_normal(),
    "lecun_uniform": init.lecun_uniform(),
    "glorot_uniform": init.glorot_uniform(),
    "glorot_normal": init.glorot_normal(),
    "he_normal": init.he_normal(),
    "he_uniform": init.he_uniform(),
    "normal_0.02": init.normal(0.02),
    "uniform_0.5": init.uniform(0.5),
    "truncated_normal_0.1": init.truncated_normal(0.1),
    "zeros": init.zeros,
    "ones": init.ones,
    "embed": init.variance_scaling(1.0, "fan_in", "normal", out_axis=0),
}
initializers = []
for name, fn in INITIALIZERS.items():
    for seed, shape in [(0, (5, 7)), (3, (3, 3, 4, 8)), (42, (64, 16))]:
        initializers.append({"name": name, "seed": seed, "shape": list(shape),
                             "output": enc(fn(jax.random.PRNGKey(seed), shape, jnp.float32))})

# Layers, as Flax computes them.
layers = {}
x = rand(2, 5, 8)
kernel, bias = rand(8, 6, scale=0.3), rand(6, scale=0.1)
layers["dense"] = {"kernel": enc(kernel), "bias": enc(bias), "x": enc(x),
                   "output": enc(lax.dot_general(x, kernel, (((2,), (0,)), ((), ()))) + bias)}

scale, shift = rand(8) + 1.0, rand(8)


def flax_layer_norm(x, scale, bias, eps=1e-6):
    mean = jnp.mean(x, -1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), -1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - lax.square(mean))
    mul = lax.rsqrt(var + eps) * scale
    return (x - mean) * mul + bias


def flax_rms_norm(x, scale, eps=1e-6):
    mean2 = jnp.mean(lax.square(x), -1, keepdims=True)
    return x * (lax.rsqrt(mean2 + eps) * scale)


layers["layer_norm"] = {"scale": enc(scale), "bias": enc(shift), "x": enc(x),
                        "output": enc(flax_layer_norm(x, scale, shift))}
layers["rms_norm"] = {"scale": enc(scale), "x": enc(x), "output": enc(flax_rms_norm(x, scale))}

table = rand(11, 4)
ids = np.array([[0, 3, 10], [7, -1, 2]], np.int32)
layers["embed"] = {"embedding": enc(table), "ids": enc(ids),
                   "output": enc(jnp.take(table, ids, axis=0)),
                   "query": enc(x[..., :4]), "attend": enc(jnp.dot(x[..., :4], table.T))}

heads, head_dim = 2, 4
mha = {name: {"kernel": rand(8, heads, head_dim, scale=0.3), "bias": rand(heads, head_dim, scale=0.1)}
       for name in ("query", "key", "value")}
mha["out"] = {"kernel": rand(heads, head_dim, 8, scale=0.3), "bias": rand(8, scale=0.1)}


def flax_mha(params, x, mask):
    def dense_in(p):
        return lax.dot_general(x, p["kernel"], (((x.ndim - 1,), (0,)), ((), ()))) + p["bias"]
    q, k, v = dense_in(params["query"]), dense_in(params["key"]), dense_in(params["value"])
    q = q / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    w = jnp.einsum("...qhd,...khd->...hqk", q, k)
    w = jnp.where(mask, w, jnp.finfo(w.dtype).min)
    w = jax.nn.softmax(w)
    y = jnp.einsum("...hqk,...khd->...qhd", w, v)
    out = params["out"]
    return lax.dot_general(y, out["kernel"], (((y.ndim - 2, y.ndim - 1), (0, 1)), ((), ()))) + out["bias"]


causal = jnp.tril(jnp.ones((5, 5), bool))[None, None]
mha_out = flax_mha(mha, x, causal)
mha_grad = jax.grad(lambda p: jnp.sum(jnp.sin(flax_mha(p, x, causal))))(mha)
layers["attention"] = {
    "params": {n: {k: enc(v) for k, v in p.items()} for n, p in mha.items()},
    "grads": {n: {k: enc(v) for k, v in p.items()} for n, p in mha_grad.items()},
    "x": enc(x), "output": enc(mha_out), "unmasked": enc(flax_mha(mha, x, jnp.ones((1, 1, 5, 5), bool)))}

img = rand(2, 9, 9, 3)
conv_k, conv_b = rand(3, 3, 3, 5, scale=0.3), rand(5, scale=0.1)
conv_out = lax.conv_general_dilated(img, conv_k, (2, 2), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")) + conv_b
layers["conv"] = {"kernel": enc(conv_k), "bias": enc(conv_b), "x": enc(img), "output": enc(conv_out)}


def flax_pool(x, init, op, window, strides, padding):
    dims = (1,) + window + (1,)
    steps = (1,) + strides + (1,)
    return lax.reduce_window(x, init, op, dims, steps, padding)


layers["max_pool"] = {"x": enc(img), "output": enc(flax_pool(img, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID"))}
layers["avg_pool"] = {"x": enc(img),
                      "output": enc(flax_pool(img, 0.0, lax.add, (3, 3), (1, 1), "SAME") / 9.0)}
# Explicit (low, high) padding per spatial axis, by Flax's own pools.
from flax import linen as flax_nn  # noqa: E402

EXPLICIT = ((1, 0), (2, 1))
layers["max_pool_explicit"] = {
    "x": enc(img), "output": enc(flax_nn.max_pool(img, (3, 2), (2, 1), EXPLICIT))}
layers["avg_pool_explicit"] = {
    "x": enc(img), "output": enc(flax_nn.avg_pool(img, (2, 3), (1, 2), EXPLICIT))}

# Schedules.
STEPS = np.arange(0, 40, dtype=np.int32)
SCHEDULES = {
    "constant": optax.constant_schedule(0.1),
    "linear": optax.linear_schedule(1.0, 0.1, 20, transition_begin=5),
    "warmup_cosine": optax.warmup_cosine_decay_schedule(0.0, 1.0, 10, 30, 0.05),
    "exponential": optax.exponential_decay(1.0, 4, 0.5, transition_begin=3, end_value=0.05),
    "exponential_staircase": optax.exponential_decay(2.0, 5, 0.7, staircase=True),
}
schedules = {name: enc(jax.vmap(fn)(STEPS).astype(np.float32)) for name, fn in SCHEDULES.items()}

# Optimizers over a two-leaf tree (w, b) from fixed gradients.
params0 = (rand(3, 4), rand(4))
grad_steps = [(rand(3, 4, scale=2.0 ** i), rand(4, scale=2.0 ** i)) for i in range(6)]
OPTIMIZERS = {
    "sgd": optax.sgd(0.1),
    "momentum": optax.sgd(0.1, momentum=0.9),
    "nesterov": optax.sgd(0.1, momentum=0.9, nesterov=True),
    "adam": optax.adam(0.01),
    "adamw": optax.adamw(0.01, weight_decay=0.1),
    "clip_adam": optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.01)),
    "adamw_warmup_cosine": optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 0.02, 2, 6, 0.001),
                                       weight_decay=1e-4),
}
optimizers = {}
for name, opt in OPTIMIZERS.items():
    params, state, trajectory = params0, opt.init(params0), []
    update = jax.jit(opt.update)
    for g in grad_steps:
        updates, state = update(g, state, params)
        params = optax.apply_updates(params, updates)
        trajectory.append([enc(p) for p in params])
    optimizers[name] = trajectory

logits = rand(4, 6, scale=3.0)
labels = np.array([0, 5, 2, 2], np.int32)
probs = np.asarray(jax.nn.softmax(rand(4, 6)))
losses = {
    "logits": enc(logits), "labels": enc(labels), "probs": enc(probs),
    "integer": enc(optax.losses.softmax_cross_entropy_with_integer_labels(logits, labels)),
    "integer_grad": enc(jax.grad(lambda l: optax.losses.softmax_cross_entropy_with_integer_labels(
        l, labels).mean())(logits)),
    "soft": enc(optax.losses.softmax_cross_entropy(logits, probs)),
    "l2": enc(optax.losses.l2_loss(logits, probs)),
}

print(json.dumps({
    "initializers": initializers, "layers": layers, "schedules": schedules,
    "params0": [enc(p) for p in params0], "grads": [[enc(g) for g in gs] for gs in grad_steps],
    "optimizers": optimizers, "losses": losses,
}))
