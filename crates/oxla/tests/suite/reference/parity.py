"""JAX + Optax twins of oxla's MLP classifier and transformer LM, trained
from oxla's initial parameters on oxla's data, for the loss parity test.

Usage: parity.py DIR, where DIR holds (written by the Rust test):
  mlp.safetensors, mlp_x.npy [batches, 128, 784] f32, mlp_y.npy [batches, 128] i32
  lm.safetensors, lm_tokens.npy [batches, 16, 129] i32
Prints JSON {"mlp": [loss per step], "lm": [loss per step]}: 100 AdamW
steps each, step i on batch i % batches. The models are jax_models.py's.
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
from safetensors.numpy import load_file

from jax_models import lm_layers, lm_loss, mlp_loss

STEPS = 100
DIR = sys.argv[1]


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
    mlp_loss,
    lambda i: (x[i % len(x)], y[i % len(y)]),
    optax.adamw(1e-3, weight_decay=1e-4),
)

lm_params = {k: jnp.asarray(v) for k, v in load_file(os.path.join(DIR, "lm.safetensors")).items()}
layers = lm_layers(lm_params)
tokens = np.load(os.path.join(DIR, "lm_tokens.npy"))
lm_losses = train(
    lm_params,
    lambda p, t: lm_loss(p, t, layers),
    lambda i: (tokens[i % len(tokens)],),
    optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3, weight_decay=1e-2)),
)
print(json.dumps({"mlp": mlp_losses, "lm": lm_losses}))
