"""Reference values for oxla_nn's Embedding.attend, MultiHeadAttention under
a padding mask, the mask helpers, GluMlp and Sequential, computed by Flax
linen 0.12.8 (JAX 0.10.2, CPU) when the tests run.

Prints JSON with, per case, Flax's parameters (initialized, biases and
scales perturbed so that they matter), inputs, outputs and the gradient of
loss = sum(sin(y)) w.r.t. the parameters and the input (jax.grad):
  attend: nn.Embed(10, 6).attend of a [2, 3, 6] query
  attention: nn.MultiHeadDotProductAttention(num_heads=2) over [3, 5, 8]
    with the padding mask nn.make_attention_mask(tokens > 0, tokens > 0)
  masks: nn.make_causal_mask(tokens) (and with extra_batch_dims=2) and nn.make_attention_mask(valid,
    valid, extra_batch_dims=1) as bools, and the padding mask's tokens
  glu_<act>: a linen module gate/up/down of bias-free nn.Dense with act
    silu (SwiGLU, with the gradient), gelu (GeGLU) and sigmoid (GLU)
  sequential: nn.Sequential([Dense(16), relu, Dense(8), LayerNorm()])
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def enc_tree(tree):
    return jax.tree_util.tree_map(enc, tree)


rng = np.random.default_rng(0)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def perturb(params):
    """Every bias and scale moved off zeros and ones."""
    def move(path, p):
        name = path[-1].key
        if name in ("bias", "scale"):
            return p + rand(*p.shape, scale=0.3)
        return p
    return jax.tree_util.tree_map_with_path(move, params)


def loss_of(y):
    return jnp.sum(jnp.sin(y))


def case(apply, params, x):
    """Output and d loss / d(params, x) of apply(params, x)."""
    y = apply(params, x)
    gp, gx = jax.grad(lambda p, x: loss_of(apply(p, x)), argnums=(0, 1))(params, x)
    return {"params": enc_tree(params), "x": enc(x), "output": enc(y),
            "grad": {"params": enc_tree(gp), "x": enc(gx)}}


out = {}

# Embed.attend: logits over 10 ids from 6 features.
embed = nn.Embed(num_embeddings=10, features=6)
query = rand(2, 3, 6)
p_embed = embed.init(jax.random.PRNGKey(0), jnp.zeros((1,), jnp.int32))["params"]
out["attend"] = case(
    lambda p, q: embed.apply({"params": p}, q, method=nn.Embed.attend), p_embed, query)

# Self-attention under a padding mask: tokens 0 are padding (one sequence
# entirely valid, two padded at the end).
tokens = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 0, 0], [5, 3, 0, 0, 0]], np.int32)
valid = tokens > 0
padding_mask = nn.make_attention_mask(valid, valid)
mha = nn.MultiHeadDotProductAttention(num_heads=2)
x_attention = rand(3, 5, 8)
p_mha = perturb(mha.init(jax.random.PRNGKey(1), x_attention)["params"])
out["attention"] = case(
    lambda p, x: mha.apply({"params": p}, x, mask=padding_mask), p_mha, x_attention)
out["attention"]["mask"] = enc(padding_mask)

out["masks"] = {
    "tokens": enc(tokens),
    "causal": enc(nn.make_causal_mask(tokens, dtype=jnp.bool_)),
    "causal_extra": enc(nn.make_causal_mask(tokens, extra_batch_dims=2, dtype=jnp.bool_)),
    "padding_extra": enc(nn.make_attention_mask(
        valid, valid, extra_batch_dims=1, dtype=jnp.bool_)),
}


class GluMlp(nn.Module):
    """down(act(gate(x)) * up(x)), LLaMA's feed-forward block."""
    hidden: int
    features: int
    act: Callable

    @nn.compact
    def __call__(self, x):
        gate = nn.Dense(self.hidden, use_bias=False, name="gate")(x)
        up = nn.Dense(self.hidden, use_bias=False, name="up")(x)
        return nn.Dense(self.features, use_bias=False, name="down")(self.act(gate) * up)


x_glu = rand(2, 4, 8)
for name, act in [("silu", nn.silu), ("gelu", nn.gelu), ("sigmoid", nn.sigmoid)]:
    glu = GluMlp(hidden=24, features=8, act=act)
    p_glu = glu.init(jax.random.PRNGKey(2), x_glu)["params"]
    out[f"glu_{name}"] = case(jax.jit(lambda p, x, glu=glu: glu.apply({"params": p}, x)),
                              p_glu, x_glu)

seq = nn.Sequential([nn.Dense(16), nn.relu, nn.Dense(8), nn.LayerNorm()])
x_seq = rand(5, 4)
p_seq = perturb(seq.init(jax.random.PRNGKey(3), x_seq)["params"])
out["sequential"] = case(lambda p, x: seq.apply({"params": p}, x), p_seq, x_seq)

print(json.dumps(out))
