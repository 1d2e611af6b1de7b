"""Runs jax.export files in JAX: for each NAME given, DIR holds
NAME.jaxexport and its inputs NAME.in0.npy, NAME.in1.npy, ...; writes the
first output to NAME.out.npy. Prints a JSON object mapping each NAME to
"ok" or to JAX's error.

Usage: run_exports.py DIR NAME...
"""

import json
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402

directory = pathlib.Path(sys.argv[1])


def load_input(path, aval):
    array = np.load(path)
    if aval.dtype == jax.numpy.bfloat16:
        array = array.view(ml_dtypes.bfloat16)
    return array


def run(name):
    exp = export.deserialize((directory / f"{name}.jaxexport").read_bytes())
    inputs = [load_input(directory / f"{name}.in{i}.npy", a) for i, a in enumerate(exp.in_avals)]
    args, kwargs = jax.tree_util.tree_unflatten(exp.in_tree, inputs)
    out = exp.call(*args, **kwargs)
    first = np.asarray(jax.tree_util.tree_leaves(out)[0])
    if first.dtype == ml_dtypes.bfloat16:
        first = first.view(np.uint16).view("V2")
    np.save(directory / f"{name}.out.npy", first)
    return "ok"


verdicts = {}
for name in sys.argv[2:]:
    try:
        verdicts[name] = run(name)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        verdicts[name] = f"{type(e).__name__}: {e}"[:2000]
print(json.dumps(verdicts))
