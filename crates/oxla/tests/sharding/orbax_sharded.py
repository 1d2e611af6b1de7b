"""Restores the Orbax checkpoint oxla wrote of arrays over 8 CPU devices
(argv[1]/oxla) with Orbax, without a target, and saves what it restored
again with ocp.StandardCheckpointer under argv[1]/twin, for the
orbax_sharded test.

Prints JSON {"leaves": {name: {"sharding": repr of the restored array's
sharding kind, "mesh": {axis: size}, "axis_types": [...], "spec": [...],
"devices": [ids in mesh order], "dtype", "shape", "data": base64}},
"stores": {"oxla"|"twin": {"keys": [...], "zarray": {key: text}}}}."""

import base64
import json
import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import orbax.checkpoint as ocp  # noqa: E402
import tensorstore as ts  # noqa: E402

root = sys.argv[1]
ours = os.path.join(root, "oxla")
twin = os.path.join(root, "twin")

with ocp.StandardCheckpointer() as c:
    restored = c.restore(ours)


def spec_entry(entry):
    if entry is None or isinstance(entry, str):
        return entry
    return list(entry)


def describe(x):
    s = x.sharding
    out = {"sharding": type(s).__name__, "dtype": str(x.dtype), "shape": list(x.shape),
           "data": base64.b64encode(np.asarray(x).tobytes()).decode()}
    if isinstance(s, jax.sharding.NamedSharding):
        out["mesh"] = dict(s.mesh.shape)
        out["axis_names"] = list(s.mesh.axis_names)
        out["axis_types"] = [str(t) for t in s.mesh.axis_types]
        out["spec"] = [spec_entry(e) for e in s.spec]
        out["devices"] = [d.id for d in s.mesh.devices.flat]
    else:
        out["devices"] = sorted(d.id for d in s.device_set)
    return out


leaves = {k: describe(v) for k, v in restored.items()}
with ocp.StandardCheckpointer() as c:
    c.save(twin, restored)


def store(path):
    kv = ts.KvStore.open({"driver": "ocdbt", "base": "file://" + path + "/"}).result()
    keys = sorted(k.decode() for k in kv.list().result())
    zarray = {k: kv.read(k).result().value.decode() for k in keys if k.endswith("/.zarray")}
    return {"keys": keys, "zarray": zarray}


print(json.dumps({"leaves": leaves, "stores": {"oxla": store(ours), "twin": store(twin)}}))
