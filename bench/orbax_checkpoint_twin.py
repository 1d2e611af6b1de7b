"""Orbax side of oxla's checkpoint benchmark (bench/src/bin/checkpoint_vs_orbax.rs):
the same training state (oxla writes it as STATE, a safetensors file: a
transformer LM's parameters and AdamW moments), saved and restored by
orbax-checkpoint's CheckpointManager with its default settings (async
save, OCDBT + zarr3) into a fresh directory under DIR.

Usage: orbax_checkpoint_twin.py STATE DIR ROUNDS. Prints one JSON line with
lists over ROUNDS saves of: "save_returns_ms" (until `save` returns and the
train step may go on), "save_total_ms" (until `wait_until_finished`),
"restore_ms" (until every restored array is ready), "peak_mb" (the rise of
the process's peak resident memory over a save and its wait, after
resetting the peak), and "bytes" (the checkpoint's size on disk).
"""

import json
import os
import sys
import time

import jax
import numpy as np
import orbax.checkpoint as ocp
from safetensors.numpy import load_file

STATE, DIR, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])


def rss_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_peak():
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def disk_bytes(path):
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(path) for f in files)


# Flat names as keys (Orbax nests by key path; oxla's names hold brackets).
host = load_file(STATE)
state = {f"leaf{i:04d}": jax.device_put(host[name]) for i, name in enumerate(sorted(host))}
jax.block_until_ready(state)
abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)

options = ocp.CheckpointManagerOptions(max_to_keep=2)
manager = ocp.CheckpointManager(os.path.join(DIR, "orbax"), options=options)
results = {"save_returns_ms": [], "save_total_ms": [], "restore_ms": [], "peak_mb": [],
           "bytes": 0}
# Peak memory: the rise over the whole run from before the first save
# (buffers a library keeps between saves count).
reset_peak()
baseline = rss_kb("VmRSS")
# One save first: Orbax's first save sets up its thread pools and metadata.
manager.save(0, args=ocp.args.StandardSave(state))
manager.wait_until_finished()
for step in range(1, ROUNDS + 1):
    start = time.perf_counter()
    manager.save(step, args=ocp.args.StandardSave(state))
    returned = time.perf_counter()
    manager.wait_until_finished()
    done = time.perf_counter()
    results["save_returns_ms"].append((returned - start) * 1e3)
    results["save_total_ms"].append((done - start) * 1e3)
results["peak_mb"].append((rss_kb("VmHWM") - baseline) / 1024)
for step in (ROUNDS - 1, ROUNDS):
    start = time.perf_counter()
    restored = manager.restore(step, args=ocp.args.StandardRestore(abstract))
    jax.block_until_ready(restored)
    results["restore_ms"].append((time.perf_counter() - start) * 1e3)
    assert all(np.array_equal(np.asarray(restored[k]), np.asarray(state[k])) for k in state)
    del restored
results["bytes"] = disk_bytes(os.path.join(DIR, "orbax", str(ROUNDS)))
manager.close()
print(json.dumps(results), flush=True)
