"""Loads a sharded export written by oxla (Jit::export of a jit with
in_shardings and out_shardings on a ('data': 4, 'model': 2) mesh) and runs
it in JAX on 8 CPU devices.

Usage: exported_sharded.py DIR. DIR holds sharded.jaxexport, x.npy, w.npy.
Prints JSON: the shardings and device count JAX read, the output called
inside jax.jit on arguments placed as the export says, and the output's
sharding spec.
"""

import json
import os
import pathlib
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402

directory = pathlib.Path(sys.argv[1])
exp = export.deserialize((directory / "sharded.jaxexport").read_bytes())
mesh = jax.make_mesh((4, 2), ("data", "model"))
specs = [s.spec for s in exp._in_named_shardings]
args = [
    jax.device_put(np.load(directory / f"{name}.npy"), NamedSharding(mesh, spec))
    for name, spec in zip(("x", "w"), specs)
]
out = jax.jit(exp.call)(*args)
print(
    json.dumps(
        {
            "nr_devices": exp.nr_devices,
            "in_specs": [str(s) for s in specs],
            "out_specs": [str(s.spec) for s in exp._out_named_shardings],
            "value": np.asarray(out).reshape(-1).tolist(),
            "out_spec": str(out.sharding.spec),
        }
    )
)
