"""Reference values for oxla_nn's Conv and ConvTranspose, computed by Flax
linen (JAX 0.10.2, CPU) when the tests run.

Prints JSON with, per case, Flax's parameters (initialized, the bias moved
off zero so that it matters), the input, the output and the gradient of
loss = sum(sin(y)) w.r.t. the input, the kernel and the bias (jax.grad).
The Rust test builds the same layer (the hyper-parameters below) from these
parameters. Cases:
  conv1d_causal: 1-D, 2 feature groups, kernel dilation 2, CAUSAL
  conv1d_explicit: 1-D, 2 groups, dilation 2, stride 2, pairs ((2, 1),)
  conv1d_unbatched: 1-D SAME on an input without a batch axis
  conv1d_two_batch_axes: 1-D SAME on an input with two batch axes
  conv2d_valid: 2-D, strides (2, 1), VALID
  conv2d_circular: 2-D, an even window (3, 4), stride 2, CIRCULAR
  conv2d_reflect: 2-D, REFLECT, no bias
  conv2d_input_dilation: 2-D, input dilation (2, 1), explicit pairs
  conv3d_same: 3-D, strides (2, 1, 2), SAME (Flax's default)
  transpose1d_same: ConvTranspose 1-D, stride 2, SAME
  transpose1d_valid: ConvTranspose 1-D, stride 3, kernel dilation 2, VALID
  transpose2d_circular: ConvTranspose 2-D, window (4, 3), strides 2, CIRCULAR
  transpose2d_circular_transposed: the same with transpose_kernel=True
  transpose2d_explicit: ConvTranspose 2-D, strides (2, 1), pairs
  conv1d_masked: 1-D VALID with the kernel mask tril(ones(3, 3, 4))
  transpose1d_masked: ConvTranspose 1-D, stride 2, the same mask
  conv2d_highest: 2-D SAME with precision HIGHEST
  local1d_valid: ConvLocal 1-D VALID
  local2d_strided_same: ConvLocal 2-D, strides (2, 1), SAME
  local1d_masked_dilated: ConvLocal 1-D, kernel dilation 2, CAUSAL, mask tril(ones(6, 6, 4))
  local1d_unbatched_no_bias: ConvLocal 1-D SAME, no bias, an input without a batch axis
And init_stats: the kernel shape and the standard deviation of Flax's
default (LeCun normal) kernel of a grouped 2-D convolution.
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


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


out = {}


def case(name, module, x):
    params = module.init(jax.random.PRNGKey(len(out)), x)["params"]
    if "bias" in params:
        params = dict(params, bias=params["bias"] + rand(*params["bias"].shape, scale=0.3))

    def apply(p, x):
        return module.apply({"params": p}, x)

    def loss(p, x):
        return jnp.sum(jnp.sin(apply(p, x)))

    gp, gx = jax.grad(loss, argnums=(0, 1))(params, x)
    c = {"x": enc(x), "kernel": enc(params["kernel"]), "output": enc(apply(params, x)),
         "grad": {"x": enc(gx), "kernel": enc(gp["kernel"])}}
    if "bias" in params:
        c["bias"] = enc(params["bias"])
        c["grad"]["bias"] = enc(gp["bias"])
    out[name] = c


case("conv1d_causal",
     nn.Conv(6, (3,), feature_group_count=2, kernel_dilation=2, padding="CAUSAL"),
     rand(2, 9, 4))
case("conv1d_explicit",
     nn.Conv(6, (3,), feature_group_count=2, kernel_dilation=2, strides=2,
             padding=((2, 1),)),
     rand(2, 9, 4))
case("conv1d_unbatched", nn.Conv(4, (3,)), rand(7, 3))
case("conv1d_two_batch_axes", nn.Conv(4, (3,)), rand(2, 3, 7, 3))
case("conv2d_valid", nn.Conv(5, (3, 2), strides=(2, 1), padding="VALID"), rand(2, 7, 6, 3))
case("conv2d_circular", nn.Conv(4, (3, 4), strides=2, padding="CIRCULAR"), rand(2, 6, 7, 3))
case("conv2d_reflect", nn.Conv(4, (3, 3), padding="REFLECT", use_bias=False), rand(2, 5, 6, 3))
case("conv2d_input_dilation",
     nn.Conv(4, (3, 3), input_dilation=(2, 1), padding=((1, 1), (2, 0))),
     rand(2, 4, 5, 3))
case("conv3d_same", nn.Conv(4, (3, 2, 3), strides=(2, 1, 2)), rand(2, 4, 5, 5, 2))
case("transpose1d_same", nn.ConvTranspose(4, (3,), strides=(2,)), rand(2, 5, 3))
case("transpose1d_valid",
     nn.ConvTranspose(4, (3,), strides=(3,), padding="VALID", kernel_dilation=(2,)),
     rand(2, 5, 3))
case("transpose2d_circular",
     nn.ConvTranspose(4, (4, 3), strides=(2, 2), padding="CIRCULAR"), rand(2, 3, 4, 3))
case("transpose2d_circular_transposed",
     nn.ConvTranspose(4, (4, 3), strides=(2, 2), padding="CIRCULAR", transpose_kernel=True),
     rand(2, 3, 4, 3))
case("transpose2d_explicit",
     nn.ConvTranspose(4, (3, 2), strides=(2, 1), padding=((1, 2), (0, 1))),
     rand(2, 3, 4, 3))

# A lower-triangular (causal-like) kernel mask, as Flax's docstring's.
MASK_1D = np.tril(np.ones((3, 3, 4), np.float32))
case("conv1d_masked", nn.Conv(4, (3,), mask=jnp.asarray(MASK_1D), padding="VALID"), rand(2, 7, 3))
case("transpose1d_masked",
     nn.ConvTranspose(4, (3,), strides=(2,), mask=jnp.asarray(MASK_1D)), rand(2, 5, 3))
case("conv2d_highest", nn.Conv(4, (3, 3), precision=jax.lax.Precision.HIGHEST), rand(2, 5, 5, 3))
case("local1d_valid", nn.ConvLocal(4, (3,), padding="VALID"), rand(2, 8, 3))
case("local2d_strided_same", nn.ConvLocal(3, (3, 2), strides=(2, 1)), rand(2, 5, 6, 2))
case("local1d_masked_dilated",
     nn.ConvLocal(4, (2,), kernel_dilation=(2,), padding="CAUSAL",
                  mask=jnp.asarray(np.tril(np.ones((6, 6, 4), np.float32)))),
     rand(3, 6, 3))
case("local1d_unbatched_no_bias", nn.ConvLocal(2, (3,), use_bias=False), rand(6, 2))
out["mask_note"] = "masks: MASK_1D = tril(ones(3, 3, 4)); local1d_masked_dilated: tril(ones(6, 6, 4))"

grouped = nn.Conv(64, (3, 3), feature_group_count=2)
kernel = grouped.init(jax.random.PRNGKey(7), jnp.zeros((1, 4, 4, 32)))["params"]["kernel"]
out["init_stats"] = {"kernel_shape": list(kernel.shape), "std": float(jnp.std(kernel))}

print(json.dumps(out))
