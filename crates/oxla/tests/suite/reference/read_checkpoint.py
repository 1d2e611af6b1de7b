"""Reads checkpoints written by oxla with Python's own readers, for the
checkpoint test: argv[1] a .safetensors file (safetensors.numpy.load_file),
argv[2] an .npz file (numpy.load). Prints JSON {"safetensors": {name: array},
"npz": {name: array}, "metadata": the safetensors header's metadata}, each
array as {"dtype", "shape", "data": base64}."""

import base64
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


with safe_open(sys.argv[1], framework="numpy") as f:
    metadata = f.metadata()
with np.load(sys.argv[2]) as npz:
    npz_arrays = {name: enc(npz[name]) for name in npz.files}
print(json.dumps({
    "safetensors": {name: enc(a) for name, a in load_file(sys.argv[1]).items()},
    "npz": npz_arrays,
    "metadata": metadata,
}))
