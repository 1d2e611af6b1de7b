"""Reference trajectories for oxla_optim's optimizers, computed by Optax 0.2.6
and JAX 0.10.2 (CPU) when the tests run.

A three-leaf parameter tuple (w: 8x6, b: 6, t: 4x3x5, so that Adafactor's
factored second moments and SM3's per-axis accumulators see a matrix, a
vector and a rank-3 tensor) takes 50 steps of fixed gradients whose scale
cycles over 0.1, 0.3, 0.9 and 2.7, with each optimizer's update jitted.

Prints JSON with:
  params0: the initial parameters
  grads: the 50 gradient tuples
  steps: the (1-based) steps recorded
  optimizers: {name: [parameters after each recorded step]}
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
The Rust test (optimizers.rs) builds the optimizer of each name with
oxla_optim and compares.
"""

import base64
import json

import jax
import numpy as np
import optax


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(11)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


SHAPES = [(8, 6), (6,), (4, 3, 5)]
STEPS = 50
RECORDED = [1, 10, 20, 30, 40, 50]

params0 = tuple(rand(*s) for s in SHAPES)
grads = [tuple(rand(*s, scale=0.1 * 3.0 ** (i % 4)) for s in SHAPES) for i in range(STEPS)]

OPTIMIZERS = {
    "rmsprop": optax.rmsprop(0.01),
    "rmsprop_centered_nesterov": optax.rmsprop(
        0.01, decay=0.95, eps=1e-6, initial_scale=0.1, centered=True, momentum=0.9, nesterov=True),
    "rmsprop_bias_corrected": optax.rmsprop(
        0.01, eps_in_sqrt=False, bias_correction=True, momentum=0.5),
    "adagrad": optax.adagrad(0.1),
    "adadelta": optax.adadelta(0.5, weight_decay=0.01),
    "adadelta_no_learning_rate": optax.adadelta(),
    "adamax": optax.adamax(0.01),
    "nadam": optax.nadam(0.01),
    "radam": optax.radam(0.01),
    "radam_nesterov": optax.radam(0.01, threshold=4.0, nesterov=True),
    "lion": optax.lion(0.001),
    "lamb": optax.lamb(0.01, weight_decay=0.01),
    "lars": optax.lars(0.1, weight_decay=1e-3),
    "lars_nesterov": optax.lars(0.5, trust_coefficient=0.01, eps=1e-6, nesterov=True),
    "adabelief": optax.adabelief(0.01),
    "adabelief_nesterov": optax.adabelief(0.01, nesterov=True),
    "novograd": optax.novograd(0.01, weight_decay=1e-3),
    "sm3": optax.sm3(0.1),
    "adafactor": optax.adafactor(0.01),
    "adafactor_factored": optax.adafactor(0.01, min_dim_size_to_factor=2),
    "adafactor_momentum": optax.adafactor(
        0.01, min_dim_size_to_factor=5, momentum=0.9, weight_decay_rate=1e-3),
    "adafactor_no_learning_rate": optax.adafactor(
        min_dim_size_to_factor=3, clipping_threshold=None, multiply_by_parameter_scale=False),
}

optimizers = {}
for name, opt in OPTIMIZERS.items():
    params, state, trajectory = params0, opt.init(params0), []
    update = jax.jit(opt.update)
    for step, g in enumerate(grads, start=1):
        updates, state = update(g, state, params)
        params = optax.apply_updates(params, updates)
        if step in RECORDED:
            trajectory.append([enc(p) for p in params])
    optimizers[name] = trajectory

print(json.dumps({
    "params0": [enc(p) for p in params0],
    "grads": [[enc(g) for g in gs] for gs in grads],
    "steps": RECORDED,
    "optimizers": optimizers,
}))
