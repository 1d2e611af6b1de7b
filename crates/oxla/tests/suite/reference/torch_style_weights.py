"""Writes a PyTorch-style safetensors file for the mapped-load test:
argv[1] the path. A torch.nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
state dict as PyTorch names and lays it out (`0.weight` [out, in], `0.bias`,
`2.weight`, `2.bias`) in float16, plus a buffer no oxla leaf takes
(`0.num_batches_tracked`). Prints JSON {"kernels": [..], "biases": [..]}:
what a Flax Dense would hold (weight transposed, as float32), each as
{"dtype", "shape", "data": base64}."""

import base64
import json
import sys

import numpy as np
from safetensors.numpy import save_file


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(0)
tensors = {}
kernels, biases = [], []
for index, (fan_in, fan_out) in zip((0, 2), ((4, 8), (8, 3))):
    weight = rng.normal(size=(fan_out, fan_in)).astype(np.float16)
    bias = rng.normal(size=(fan_out,)).astype(np.float16)
    tensors[f"{index}.weight"] = weight
    tensors[f"{index}.bias"] = bias
    kernels.append(enc(weight.T.astype(np.float32)))
    biases.append(enc(bias.astype(np.float32)))
tensors["0.num_batches_tracked"] = np.array(7, dtype=np.int64)
save_file(tensors, sys.argv[1], metadata={"format": "pt"})
print(json.dumps({"kernels": kernels, "biases": biases}))
