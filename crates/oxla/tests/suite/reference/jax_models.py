"""JAX + Optax twins of oxla's MLP classifier (nn::Mlp) and transformer
language model (nn::TransformerLm), written from Flax's definitions (Dense,
LayerNorm with its fast variance, multi-head dot-product attention, GELU
tanh) over flat parameter dicts keyed by oxla's tensor names (as
oxla::checkpoint writes them). Used by the loss parity test (parity.py)
and the training benchmark (bench/jax_train_twin.py)."""

import jax
import jax.numpy as jnp
import optax
from jax import lax


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


def mlp_loss(p, x, y):
    """Cross entropy of the ReLU MLP's logits (as many layers as `p` has)."""
    layers = 1 + max(int(k.split("]")[0].split("[")[1]) for k in p if k.startswith("layers["))
    return cross_entropy(mlp(p, "", x, layers, jax.nn.relu), y)


def lm_layers(p):
    """Number of transformer blocks in a parameter dict."""
    return 1 + max(int(k.split("]")[0].split("[")[1]) for k in p if k.startswith("blocks["))
