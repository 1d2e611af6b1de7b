"""JAX + Optax twins of oxla's MLP classifier and transformer LM, trained
from oxla's initial parameters on oxla's data, for the loss parity test.

Usage: parity.py DIR, where DIR holds (written by the Rust test):
  mlp.safetensors, mlp_x.npy [batches, 128, 784] f32, mlp_y.npy [batches, 128] i32
  lm.safetensors, lm_tokens.npy [batches, 16, 129] i32
Prints JSON {"mlp": [loss per step], "lm": [loss per step]}: 100 AdamW
steps each, step i on batch i % batches. The models are written from
Flax's definitions (Dense, LayerNorm with its fast variance, multi-head
attention, GELU tanh), parameters addressed by oxla's tensor names.
"""

import json
import os
import sys

# jaxlib 0.10.2 runs these dots through YNNPACK fusions by default, the
# pinned plugins through XLA's own dot emitter: the same formulas summed in
# another order, which 100 steps of overfitting 1,280 MNIST images amplify
# from 1e-7 to 1e-2 in the MLP's loss. With YNNPACK off both use the same
# kernels, and the curves agree to 1e-6: what the test checks is the model
# and optimizer arithmetic, not the kernel library.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_experimental_ynn_fusion_type=invalid").strip()

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from safetensors.numpy import load_file

STEPS = 100
DIR = sys.argv[1]


def dense(p, name, x):
    return lax.dot_general(x, p[name + ".kernel"], (((x.ndim - 1,), (0,)), ((), ()))) + p[name + ".bias"]


def mlp(p, name, x, layers, act):
    for i in range(layers):
        x = dense(p, f"{name}layers[{i}]", x)
        if i < layers - 1:
            x = act(x)
    return x


def cross_entropy(logits, labels):
    return jnp.mean(optax.losses.softmax_cross_entropy_with_integer_labels(logits, labels))


def layer_norm(p, name, x, eps=1e-6):
    mean = jnp.mean(x, -1, keepdims=True)
    mean2 = jnp.mean(lax.square(x), -1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - lax.square(mean))
    return (x - mean) * (lax.rsqrt(var + eps) * p[name + ".scale"]) + p[name + ".bias"]


def attention(p, name, x, mask):
    def heads(part):
        return lax.dot_general(x, p[f"{name}.{part}.kernel"], (((x.ndim - 1,), (0,)), ((), ()))) \
            + p[f"{name}.{part}.bias"]
    q, k, v = heads("query"), heads("key"), heads("value")
    q = q / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    w = jnp.einsum("...qhd,...khd->...hqk", q, k)
    w = jax.nn.softmax(jnp.where(mask, w, jnp.finfo(w.dtype).min))
    y = jnp.einsum("...hqk,...khd->...qhd", w, v)
    return lax.dot_general(y, p[f"{name}.out.kernel"], (((y.ndim - 2, y.ndim - 1), (0, 1)), ((), ()))) \
        + p[f"{name}.out.bias"]


def lm_loss(p, tokens, layers):
    inputs, targets = tokens[..., :-1], tokens[..., 1:]
    length = inputs.shape[-1]
    x = jnp.take(p["token_embedding.embedding"], inputs, axis=0) + p["position_embedding"][:length]
    mask = jnp.tril(jnp.ones((length, length), bool))[None, None]
    for i in range(layers):
        b = f"blocks[{i}]"
        x = x + attention(p, b + ".attention", layer_norm(p, b + ".ln1", x), mask)
        x = x + mlp(p, b + ".mlp.", layer_norm(p, b + ".ln2", x), 2, jax.nn.gelu)
    return cross_entropy(dense(p, "head", layer_norm(p, "ln_final", x)), targets)


def train(params, loss, batches, opt):
    state = opt.init(params)

    @jax.jit
    def step(params, state, batch):
        value, grads = jax.value_and_grad(loss)(params, *batch)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    losses = []
    for i in range(STEPS):
        params, state, value = step(params, state, batches(i))
        losses.append(float(value))
    return losses


mlp_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "mlp.safetensors")).items()}
x, y = np.load(os.path.join(DIR, "mlp_x.npy")), np.load(os.path.join(DIR, "mlp_y.npy"))
mlp_losses = train(
    mlp_params,
    lambda p, x, y: cross_entropy(mlp(p, "", x, 3, jax.nn.relu), y),
    lambda i: (x[i % len(x)], y[i % len(y)]),
    optax.adamw(1e-3, weight_decay=1e-4),
)

lm_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "lm.safetensors")).items()}
layers = 1 + max(int(k.split("]")[0].split("[")[1]) for k in lm_params if k.startswith("blocks["))
tokens = np.load(os.path.join(DIR, "lm_tokens.npy"))
lm_losses = train(
    lm_params,
    lambda p, t: lm_loss(p, t, layers),
    lambda i: (tokens[i % len(tokens)],),
    optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3, weight_decay=1e-2)),
)
print(json.dumps({"mlp": mlp_losses, "lm": lm_losses}))
