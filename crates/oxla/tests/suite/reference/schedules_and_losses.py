"""Reference values for oxla_optim's schedules and oxla_nn's losses,
computed by JAX and Optax (CPU) when the tests run.

Prints JSON with:
  steps: the int32 step counts 0..N
  schedules: each optax schedule's values at those steps (jax.vmap, as
    training.py does)
  schedules_jit: the same from jax.jit of each schedule, one scalar count
    at a time
  losses: per loss its inputs, its value and the gradient of the summed
    loss with respect to the first input (jax.grad)
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# Schedules: names match crates/oxla/tests/suite/schedules_and_losses.rs.
STEPS = np.arange(0, 48, dtype=np.int32)
S = optax.schedules


def custom(count):
    c = count.astype(jnp.float32)
    return 0.1 * jnp.exp(-c / 10.0) + 0.01 * jnp.sin(c)


SCHEDULES = {
    "piecewise_constant": S.piecewise_constant_schedule(0.5, {10: 0.5, 25: 0.1, 40: 2.0}),
    "piecewise_constant_empty": S.piecewise_constant_schedule(0.3),
    "polynomial_2": S.polynomial_schedule(1.0, 0.01, 2, 30, 5),
    "polynomial_half": S.polynomial_schedule(0.2, 1.0, 0.5, 20),
    "polynomial_no_steps": S.polynomial_schedule(0.7, 0.1, 3, 0),
    "polynomial_negative_begin": S.polynomial_schedule(1.0, 0.0, 1.5, 16, -4),
    "cosine_decay": S.cosine_decay_schedule(2.0, 30, 0.1, 1.5),
    "join": S.join_schedules(
        [S.linear_schedule(0.0, 1.0, 10), S.constant_schedule(1.0),
         S.cosine_decay_schedule(1.0, 20, 0.05)], [10, 20]),
    "warmup_exponential_decay": S.warmup_exponential_decay_schedule(
        0.0, 1.0, 8, 5, 0.6, transition_begin=3, staircase=False, end_value=0.05),
    "warmup_exponential_staircase": S.warmup_exponential_decay_schedule(
        0.1, 0.8, 4, 6, 0.5, staircase=True),
    "exponential_no_steps": S.exponential_decay(0.9, 0, 0.5),
    "exponential_negative_begin": S.exponential_decay(1.0, 4, 0.8, transition_begin=-3),
    "sgdr": S.sgdr_schedule([
        dict(init_value=0.0, peak_value=1.0, warmup_steps=4, decay_steps=16, end_value=0.1),
        dict(init_value=0.1, peak_value=0.5, warmup_steps=2, decay_steps=12, end_value=0.0),
        dict(init_value=0.0, peak_value=0.25, warmup_steps=3, decay_steps=10, end_value=0.01,
             exponent=2.0),
    ]),
    "cosine_onecycle": S.cosine_onecycle_schedule(40, 1.0, 0.25, 20.0, 100.0),
    "linear_onecycle": S.linear_onecycle_schedule(40, 0.8, 0.3, 0.85, 25.0, 1e4),
    "piecewise_interpolate_linear": S.piecewise_interpolate_schedule(
        "linear", 1.0, {30: 0.01, 6: 0.5, 18: 0.2}),
    "piecewise_interpolate_cosine": S.piecewise_interpolate_schedule(
        "cosine", 0.4, {5: 2.5, 20: 0.1, 35: 0.5}),
    "custom": custom,
}
schedules = {name: enc(jnp.broadcast_to(jax.vmap(fn)(STEPS), STEPS.shape).astype(np.float32))
             for name, fn in SCHEDULES.items()}
# Under jax.jit, one traced int32 count at a time: XLA simplifies the
# compiled program (polynomial_half's pow(0, 0.5) is NaN there, 0 eagerly),
# so oxla's jitted schedules are compared with JAX's jitted ones.
schedules_jit = {}
for name, fn in SCHEDULES.items():
    jitted = jax.jit(fn)
    schedules_jit[name] = enc(np.stack(
        [np.float32(jitted(jnp.int32(s))) for s in STEPS]))


# Losses: value and jax.grad of the summed loss w.r.t. the first argument.
def case(fn, *args, **kwargs):
    value = fn(*args, **kwargs)
    grad = jax.grad(lambda x: jnp.sum(fn(x, *args[1:], **kwargs)))(args[0])
    return {"inputs": [enc(a) for a in args], "value": enc(value), "grad": enc(grad)}


L = optax.losses
logits = rand(4, 6, scale=3.0)
probs = np.asarray(jax.nn.softmax(rand(4, 6)))
one_hot = np.asarray(jax.nn.one_hot(np.array([0, 5, 2, 2]), 6), np.float32)
preds, targets = rand(3, 5, scale=2.0), rand(3, 5, scale=2.0)
binary = (rng.uniform(size=(3, 5)) > 0.5).astype(np.float32)
signs = np.where(rng.uniform(size=(3, 5)) > 0.5, 1.0, -1.0).astype(np.float32)
log_preds = np.asarray(jax.nn.log_softmax(rand(4, 6)))
sparse_targets = np.asarray(probs).copy()
sparse_targets[:, 1] = 0.0
sparse_targets /= sparse_targets.sum(-1, keepdims=True)
log_targets = np.asarray(jax.nn.log_softmax(rand(4, 6)))

losses = {
    "sigmoid_binary_cross_entropy": case(L.sigmoid_binary_cross_entropy, preds, binary),
    "sigmoid_binary_cross_entropy_soft": case(
        L.sigmoid_binary_cross_entropy, preds, np.asarray(jax.nn.sigmoid(targets))),
    "huber_loss": case(L.huber_loss, preds, targets, delta=1.0),
    "huber_loss_delta": case(L.huber_loss, preds, targets, delta=0.7),
    "cosine_similarity": case(L.cosine_similarity, preds, targets),
    "cosine_similarity_epsilon": case(
        L.cosine_similarity, preds * 0.05, targets, epsilon=0.5),
    "cosine_distance": case(L.cosine_distance, preds, targets),
    "l2_loss": case(L.l2_loss, preds, targets),
    "squared_error": case(L.squared_error, preds, targets),
    "hinge_loss": case(L.hinge_loss, preds, signs),
    "kl_divergence": case(L.kl_divergence, log_preds, sparse_targets),
    "kl_divergence_with_log_targets": case(L.kl_divergence_with_log_targets, log_preds, log_targets),
    "softmax_cross_entropy": case(L.softmax_cross_entropy, logits, probs),
    "softmax_cross_entropy_smoothed": case(
        L.softmax_cross_entropy, logits, np.asarray(optax.smooth_labels(one_hot, 0.1))),
    "smooth_labels": {"inputs": [enc(one_hot)], "value": enc(optax.smooth_labels(one_hot, 0.1))},
    "log_cosh": case(L.log_cosh, preds, targets),
    "poly_loss_cross_entropy": case(L.poly_loss_cross_entropy, logits, probs, epsilon=2.0),
    "poly_loss_cross_entropy_eps": case(L.poly_loss_cross_entropy, logits, one_hot, epsilon=-0.5),
}

# CTC: batch 3, 7 frames, 5 classes, up to 4 labels; sequences padded at
# the end, repeated labels, and one whose labels cannot fit its frames.
B, T, K, N = 3, 7, 5, 4
ctc_logits = rand(B, T, K, scale=2.0)
ctc_labels = np.array([[1, 2, 2, 3], [4, 4, 1, 0], [3, 1, 2, 4]], np.int32)
ctc_label_pad = np.array([[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], np.float32)
ctc_logit_pad = np.array([[0] * 7, [0] * 5 + [1, 1], [0] * 3 + [1] * 4], np.float32)
for name, blank in (("ctc_loss", 0), ("ctc_loss_blank_2", 2)):
    labels = ctc_labels if blank == 0 else np.where(ctc_labels == 2, 0, ctc_labels)
    losses[name] = case(L.ctc_loss, ctc_logits, ctc_logit_pad, labels, ctc_label_pad,
                        blank_id=blank)
_, phi, emit = L.ctc_loss_with_forward_probs(ctc_logits, ctc_logit_pad, ctc_labels, ctc_label_pad)
losses["ctc_loss"]["logalpha_phi"] = enc(phi)
losses["ctc_loss"]["logalpha_emit"] = enc(emit)

print(json.dumps({"steps": enc(STEPS), "schedules": schedules,
                  "schedules_jit": schedules_jit, "losses": losses}))
