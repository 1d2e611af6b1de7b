"""Reference trajectories for oxla_optim's wrappers, computed by Optax 0.2.6
and JAX 0.10.2 (CPU) when the tests run.

A two-leaf parameter tuple (w: 8x6, b: 6) takes 30 steps of fixed gradients
whose scale cycles over 0.1, 0.3, 0.9 and 2.7, each optimizer's update
jitted:
  masked_adamw: optax.adamw with weight decay masked off the vector b
  multi_transform: adam on the matrix, sgd on the vector
  multi_steps: optax.MultiSteps(optax.adam, 4)
  apply_if_finite: optax.apply_if_finite(optax.adam, 2) with NaN or inf
    gradients at fixed steps (its gradients are "finite_grads" below)
  inject_adam: optax.inject_hyperparams(optax.adam) with only the learning
    rate injected (0.01, set to 0.001 after step 10)
  inject_adam_all_hyperparams: the same with Optax's default, which injects
    b1, b2, eps and eps_root as float32 arrays too
  clip: optax.chain(optax.clip(0.2), optax.sgd(0.1, momentum=0.9))

Prints JSON with:
  params0: the initial parameters
  grads: the 30 gradient tuples
  finite_grads: apply_if_finite's gradients (grads with NaN/inf injected)
  bad_steps: the (1-based) steps whose finite_grads hold NaN or inf
  optimizers: {name: [parameters after each step]}
  multi_steps_has_updated: has_updated after each step
  apply_if_finite_state: [[notfinite_count, last_finite, total_notfinite]
    after each step]
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json

import jax
import numpy as np
import optax


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(23)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


SHAPES = [(8, 6), (6,)]
STEPS = 30
LR_CHANGE_AFTER = 10

params0 = tuple(rand(*s) for s in SHAPES)
grads = [tuple(rand(*s, scale=0.1 * 3.0 ** (i % 4)) for s in SHAPES) for i in range(STEPS)]

# NaN or inf at fixed steps: single ones, and two in a row (as many as
# max_consecutive_errors skips).
BAD_STEPS = {5: ("nan", 0), 9: ("inf", 1), 14: ("-inf", 0), 15: ("nan", 1), 22: ("nan", 1)}
finite_grads = []
for step, g in enumerate(grads, start=1):
    g = [x.copy() for x in g]
    if step in BAD_STEPS:
        value, leaf = BAD_STEPS[step]
        g[leaf].flat[3] = float(value)
    finite_grads.append(tuple(g))

multi_steps = optax.MultiSteps(optax.adam(0.01), 4)
OPTIMIZERS = {
    "masked_adamw": optax.adamw(0.01, weight_decay=0.1, mask=lambda p: (True, False)),
    "multi_transform": optax.multi_transform(
        {"adam": optax.adam(0.01), "sgd": optax.sgd(0.1)}, lambda p: ("adam", "sgd")),
    "multi_steps": multi_steps,
    "apply_if_finite": optax.apply_if_finite(optax.adam(0.01), 2),
    # Only the learning rate in the state, as oxla's InjectLearningRate.
    "inject_adam": optax.inject_hyperparams(
        optax.adam, static_args=("b1", "b2", "eps", "eps_root"))(learning_rate=0.01),
    # Optax's default injects b1, b2, eps and eps_root too, as float32
    # arrays, so 1 - b1 rounds in float32 rather than in Python's float64.
    "inject_adam_all_hyperparams": optax.inject_hyperparams(optax.adam)(learning_rate=0.01),
    "clip": optax.chain(optax.clip(0.2), optax.sgd(0.1, momentum=0.9)),
}

optimizers = {}
has_updated = []
finite_state = []
for name, opt in OPTIMIZERS.items():
    params, state, trajectory = params0, opt.init(params0), []
    update = jax.jit(opt.update)
    gs = finite_grads if name == "apply_if_finite" else grads
    for step, g in enumerate(gs, start=1):
        updates, state = update(g, state, params)
        params = optax.apply_updates(params, updates)
        trajectory.append([enc(p) for p in params])
        if name == "multi_steps":
            has_updated.append(bool(multi_steps.has_updated(state)))
        if name == "apply_if_finite":
            finite_state.append([int(state.notfinite_count), bool(state.last_finite),
                                 int(state.total_notfinite)])
        if name.startswith("inject_adam") and step == LR_CHANGE_AFTER:
            state.hyperparams["learning_rate"] = jax.numpy.asarray(0.001, dtype=np.float32)
    optimizers[name] = trajectory

print(json.dumps({
    "params0": [enc(p) for p in params0],
    "grads": [[enc(g) for g in gs] for gs in grads],
    "finite_grads": [[enc(g) for g in gs] for gs in finite_grads],
    "bad_steps": sorted(BAD_STEPS),
    "optimizers": optimizers,
    "multi_steps_has_updated": has_updated,
    "apply_if_finite_state": finite_state,
}))
