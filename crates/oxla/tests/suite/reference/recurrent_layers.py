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
  simple_cell, simple_cell_residual: SimpleCell(4) (residual=True) one step
  mgu_cell, mgu_cell_no_reset: MGUCell(4) (reset_gate=False) one step
  conv_lstm_cell: ConvLSTMCell(4, (3, 3)) one step on [2, 5, 5, 2]
  rnn_conv_lstm: RNN(ConvLSTMCell(3, (3, 3)), reverse=True,
    keep_order=True) over [2, 4, 5, 5, 2] with seq_lengths [4, 2]
  rnn_mgu_time_major: RNN(MGUCell(4), time_major=True) over [5, 2, 3]
  bidirectional_sum: Bidirectional(RNN(SimpleCell(4)), RNN(GRUCell(4)),
    merge_fn=a + b) over [3, 6, 3] with seq_lengths [6, 2, 4]
  carry_init: each cell's initialize_carry(jax.random.key(3), shape) with
    carry_init=normal(0.5) (lstm, gru, simple, mgu on (2, 3); conv_lstm on
    (2, 5, 5, 2), its carry_init uniform(2.0)); a list for a pair
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

simple = nn.SimpleCell(features=4)
out["simple_cell"] = case(simple, x_step, rand(2, 4), cell_call(simple))
simple = nn.SimpleCell(features=4, residual=True)
out["simple_cell_residual"] = case(simple, x_step, rand(2, 4), cell_call(simple))
mgu = nn.MGUCell(features=4)
out["mgu_cell"] = case(mgu, x_step, rand(2, 4), cell_call(mgu))
mgu = nn.MGUCell(features=4, reset_gate=False)
out["mgu_cell_no_reset"] = case(mgu, x_step, rand(2, 4), cell_call(mgu))

x_image = rand(2, 5, 5, 2)
conv = nn.ConvLSTMCell(features=4, kernel_size=(3, 3))
out["conv_lstm_cell"] = case(
    conv, x_image, (rand(2, 5, 5, 4), rand(2, 5, 5, 4)), cell_call(conv))

x_video = rand(2, 4, 5, 5, 2)
video_lengths = np.array([4, 2], np.int32)
rnn = nn.RNN(nn.ConvLSTMCell(features=3, kernel_size=(3, 3)), reverse=True, keep_order=True)
c = out["rnn_conv_lstm"] = case(
    rnn, x_video, (rand(2, 5, 5, 3), rand(2, 5, 5, 3)),
    rnn_call(rnn, seq_lengths=video_lengths))
c["seq_lengths"] = enc(video_lengths)

rnn = nn.RNN(nn.MGUCell(features=4), time_major=True)
out["rnn_mgu_time_major"] = case(rnn, x_time_major, rand(2, 4), rnn_call(rnn))

bi = nn.Bidirectional(nn.RNN(nn.SimpleCell(features=4)), nn.RNN(nn.GRUCell(features=4)),
                      merge_fn=lambda a, b: a + b)
c = out["bidirectional_sum"] = case(
    bi, x_padded, (rand(3, 4), rand(3, 4)), rnn_call(bi, seq_lengths=lengths))
c["seq_lengths"] = enc(lengths)

key = jax.random.key(3)
normal = nn.initializers.normal(0.5)
out["carry_init"] = {
    "lstm": enc_tree(nn.LSTMCell(4, carry_init=normal).initialize_carry(key, (2, 3))),
    "gru": enc_tree(nn.GRUCell(4, carry_init=normal).initialize_carry(key, (2, 3))),
    "simple": enc_tree(nn.SimpleCell(4, carry_init=normal).initialize_carry(key, (2, 3))),
    "mgu": enc_tree(nn.MGUCell(4, carry_init=normal).initialize_carry(key, (2, 3))),
    "conv_lstm": enc_tree(nn.ConvLSTMCell(
        4, (3, 3), carry_init=nn.initializers.uniform(2.0)).initialize_carry(key, (2, 5, 5, 2))),
}

print(json.dumps(out))
