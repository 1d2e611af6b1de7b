"""Reference values for oxla_nn's BatchNorm, GroupNorm and InstanceNorm,
computed by Flax linen (JAX 0.10.2, CPU) when the tests run.

Prints JSON with, per layer, Flax's parameters (initialized, then
perturbed so that scale and bias matter), inputs, outputs and the gradient
of loss = sum(sin(y)) w.r.t. the input and the parameters (jax.grad):
  batch_norm: three training steps (use_running_average=False,
    mutable=['batch_stats']) from Flax's initial statistics, each step's
    output and updated running mean/var and gradient; then evaluation
    (use_running_average=True) with the final statistics, and its gradient
  group_norm: NHWC input, num_groups=4 on 8 channels
  group_norm_size: the same input, group_size=4 (num_groups=None)
  instance_norm: NHWC input
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(0)


def rand(*shape, scale=1.0, shift=0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(np.float32)


def perturbed(params):
    """Flax's initial scale and bias, moved off ones and zeros."""
    f = params["scale"].shape[0]
    return {"scale": params["scale"] + rand(f, scale=0.2),
            "bias": params["bias"] + rand(f, scale=0.3)}


def loss_of(y):
    return jnp.sum(jnp.sin(y))


def grads(apply, params, x):
    """d loss / d(params, x) for a stateless apply(params, x)."""
    gp, gx = jax.grad(lambda p, x: loss_of(apply(p, x)), argnums=(0, 1))(params, x)
    return {"x": enc(gx), "scale": enc(gp["scale"]), "bias": enc(gp["bias"])}


out = {}

# BatchNorm: [batch, height, width, features], features 8.
bn = nn.BatchNorm(use_running_average=False)
xs = [rand(4, 3, 3, 8, scale=2.0, shift=0.5 * i + 1.0) for i in range(3)]
variables = bn.init(jax.random.PRNGKey(0), xs[0])
params = perturbed(variables["params"])
stats = variables["batch_stats"]
steps = []
for x in xs:
    def train(p, x, stats=stats):
        return bn.apply({"params": p, "batch_stats": stats}, x, mutable=["batch_stats"])
    y, updates = train(params, x)
    g = grads(lambda p, x: train(p, x)[0], params, x)
    stats = updates["batch_stats"]
    steps.append({"x": enc(x), "output": enc(y), "mean": enc(stats["mean"]),
                  "var": enc(stats["var"]), "grad": g})
x_eval = rand(5, 3, 3, 8, scale=2.0, shift=1.5)
bn_eval = nn.BatchNorm(use_running_average=True)


def evaluate(p, x):
    return bn_eval.apply({"params": p, "batch_stats": stats}, x)


out["batch_norm"] = {
    "scale": enc(params["scale"]), "bias": enc(params["bias"]),
    "initial_mean": enc(variables["batch_stats"]["mean"]),
    "initial_var": enc(variables["batch_stats"]["var"]),
    "steps": steps,
    "eval": {"x": enc(x_eval), "output": enc(evaluate(params, x_eval)),
             "grad": grads(evaluate, params, x_eval)},
}


def stateless(name, module, x):
    p = perturbed(module.init(jax.random.PRNGKey(1), x)["params"])

    def apply(p, x):
        return module.apply({"params": p}, x)
    out[name] = {"scale": enc(p["scale"]), "bias": enc(p["bias"]), "x": enc(x),
                 "output": enc(apply(p, x)), "grad": grads(apply, p, x)}


x_image = rand(2, 4, 5, 8, scale=1.5, shift=0.7)
stateless("group_norm", nn.GroupNorm(num_groups=4), x_image)
stateless("group_norm_size", nn.GroupNorm(num_groups=None, group_size=4), x_image)
stateless("instance_norm", nn.InstanceNorm(), x_image)

print(json.dumps(out))
