"""Reference values for oxla_nn's LstmCell, GruCell, Rnn, Bidirectional and
flip_sequences, computed by Flax linen 0.12.8 (JAX 0.10.2, CPU) when the
tests run.

Prints JSON with, per case, Flax's parameters (initialized, then perturbed
so that the zero biases matter) as Flax's nested dict, the inputs, the
initial carry (a list for an LSTM's (c, h)), the final carry and outputs,
and the gradient of
    loss = sum(sin(outputs)) + sum of every leaf of the final carry
w.r.t. the parameters ("params", the same nesting), the input ("x") and
the initial carry ("carry") by jax.grad:
  lstm_cell, gru_cell: one step on [batch 2, features 3], 4 hidden
  rnn_lstm: RNN(LSTMCell(4), return_carry=True) over [2, 5, 3] from a
    random carry; zero_carry_outputs: the same RNN from Flax's own
    initialize_carry (zeros)
  rnn_gru_reverse: RNN(GRUCell(4), reverse=True) over [2, 5, 3];
    keep_order_outputs: the same with keep_order=True
  rnn_lstm_time_major: RNN(LSTMCell(4), time_major=True, reverse=True,
    keep_order=True) over [5, 2, 3]
  rnn_seq_lengths: RNN(LSTMCell(4), reverse=True, keep_order=True) over
    [3, 6, 3] with seq_lengths [6, 2, 4]; forward: the same forwards
  bidirectional: Bidirectional(RNN(LSTMCell(4)), RNN(GRUCell(3))) over
    [3, 6, 3] with seq_lengths [6, 2, 4]; carry is [lstm (c, h), gru h]
  flip_sequences: flax's flip_sequences of [3, 6, 2] with lengths [6, 2, 4],
    batch-major, and of its [6, 3, 2] transpose, time-major
Each array is {"dtype", "shape", "data": base64 of little-endian bytes}.
"""

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn
from flax.linen.recurrent import flip_sequences


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def enc_tree(t):
    """Dicts stay dicts, tuples become lists, arrays are encoded."""
    if isinstance(t, dict):
        return {k: enc_tree(v) for k, v in t.items()}
    if isinstance(t, (tuple, list)):
        return [enc_tree(v) for v in t]
    return enc(t)


rng = np.random.default_rng(0)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def perturbed(params):
    """Flax's initial parameters, each moved a little (biases off zero)."""
    return jax.tree_util.tree_map(lambda p: p + rand(*p.shape, scale=0.3), params)


def loss_of(carry, outputs):
    return jnp.sum(jnp.sin(outputs)) + sum(
        jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(carry))


def case(module, x, carry, call):
    """Params, forward and jax.grad of loss_of for call(params, x, carry)
    -> (final carry, outputs)."""
    params = perturbed(module.init(jax.random.PRNGKey(1), *init_args(module, x, carry))["params"])
    final, outputs = call(params, x, carry)
    gp, gx, gc = jax.grad(lambda p, x, c: loss_of(*call(p, x, c)), argnums=(0, 1, 2))(
        params, x, carry)
    return {"params": enc_tree(params), "x": enc(x), "carry": enc_tree(carry),
            "final_carry": enc_tree(final), "outputs": enc(outputs),
            "grad": {"params": enc_tree(gp), "x": enc(gx), "carry": enc_tree(gc)}}


def init_args(module, x, carry):
    return (carry, x) if isinstance(module, nn.RNNCellBase) else (x,)


def cell_call(module):
    return lambda p, x, c: module.apply({"params": p}, c, x)


def rnn_call(module, **kwargs):
    return lambda p, x, c: module.apply(
        {"params": p}, x, initial_carry=c, return_carry=True, **kwargs)


out = {}

x_step = rand(2, 3)
lstm = nn.LSTMCell(features=4)
out["lstm_cell"] = case(lstm, x_step, (rand(2, 4), rand(2, 4)), cell_call(lstm))
gru = nn.GRUCell(features=4)
out["gru_cell"] = case(gru, x_step, rand(2, 4), cell_call(gru))

x_seq = rand(2, 5, 3)
rnn = nn.RNN(nn.LSTMCell(features=4))
c = out["rnn_lstm"] = case(rnn, x_seq, (rand(2, 4), rand(2, 4)), rnn_call(rnn))
params = perturbed(rnn.init(jax.random.PRNGKey(1), x_seq)["params"])
c["zero_carry_params"] = enc_tree(params)
c["zero_carry_outputs"] = enc(rnn.apply({"params": params}, x_seq))

rnn = nn.RNN(nn.GRUCell(features=4), reverse=True)
c = out["rnn_gru_reverse"] = case(rnn, x_seq, rand(2, 4), rnn_call(rnn))
keep = nn.RNN(nn.GRUCell(features=4), reverse=True, keep_order=True)
gru_params = perturbed(keep.init(jax.random.PRNGKey(2), x_seq)["params"])
c["keep_order_params"] = enc_tree(gru_params)
c["keep_order_outputs"] = enc(keep.apply({"params": gru_params}, x_seq))

x_time_major = rand(5, 2, 3)
rnn = nn.RNN(nn.LSTMCell(features=4), time_major=True, reverse=True, keep_order=True)
out["rnn_lstm_time_major"] = case(
    rnn, x_time_major, (rand(2, 4), rand(2, 4)), rnn_call(rnn))

x_padded = rand(3, 6, 3)
lengths = np.array([6, 2, 4], np.int32)
rnn = nn.RNN(nn.LSTMCell(features=4), reverse=True, keep_order=True)
c = out["rnn_seq_lengths"] = case(
    rnn, x_padded, (rand(3, 4), rand(3, 4)), rnn_call(rnn, seq_lengths=lengths))
c["seq_lengths"] = enc(lengths)
rnn = nn.RNN(nn.LSTMCell(features=4))
c = out["rnn_seq_lengths_forward"] = case(
    rnn, x_padded, (rand(3, 4), rand(3, 4)), rnn_call(rnn, seq_lengths=lengths))
c["seq_lengths"] = enc(lengths)

bi = nn.Bidirectional(nn.RNN(nn.LSTMCell(features=4)), nn.RNN(nn.GRUCell(features=3)))
c = out["bidirectional"] = case(
    bi, x_padded, ((rand(3, 4), rand(3, 4)), rand(3, 3)), rnn_call(bi, seq_lengths=lengths))
c["seq_lengths"] = enc(lengths)

x_flip = rand(3, 6, 2)
out["flip_sequences"] = {
    "x": enc(x_flip), "seq_lengths": enc(lengths),
    "batch_major": enc(flip_sequences(x_flip, lengths, 1, False)),
    "time_major": enc(flip_sequences(np.swapaxes(x_flip, 0, 1), lengths, 1, True)),
}

print(json.dumps(out))
