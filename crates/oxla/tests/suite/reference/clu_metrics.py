"""Reference values for oxla_train::metrics, computed with numpy as
clu.metrics defines them (clu is not installed): three batches of logits,
integer labels, a mask and per-example values [batch, 3]; per batch and over
all batches together (the merge): Accuracy (argmax == label, masked),
Average and Std of the values (the mask broadcast over their trailing axis,
Std the population's), and the masked confusion matrix (rows labels,
columns predictions); also the first two batches together. Prints JSON, arrays as {"dtype", "shape", "data":
base64}."""

import base64
import json

import numpy as np


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


rng = np.random.default_rng(7)
classes = 5
batches = []
for size in (8, 6, 10):
    batches.append({
        "logits": rng.normal(size=(size, classes)).astype(np.float32),
        "labels": rng.integers(0, classes, size=size).astype(np.int32),
        "mask": (rng.random(size) < 0.7),
        "values": rng.normal(2.0, 3.0, size=(size, 3)).astype(np.float32),
    })


def metrics(bs):
    logits = np.concatenate([b["logits"] for b in bs])
    labels = np.concatenate([b["labels"] for b in bs])
    mask = np.concatenate([b["mask"] for b in bs])
    values = np.concatenate([b["values"] for b in bs]).astype(np.float64)
    hits = (logits.argmax(-1) == labels)
    vmask = np.broadcast_to(mask[:, None], values.shape)
    v = values[vmask]
    confusion = np.zeros((classes, classes), np.int32)
    np.add.at(confusion, (labels[mask], logits.argmax(-1)[mask]), 1)
    return {
        "accuracy": float(hits[mask].mean()),
        "accuracy_unmasked": float(hits.mean()),
        "average": float(v.mean()),
        "average_count": int(v.size),
        "std": float(v.std()),
        "confusion": enc(confusion),
    }


print(json.dumps({
    "classes": classes,
    "batches": [{k: enc(b[k]) for k in b} for b in batches],
    "per_batch": [metrics([b]) for b in batches],
    "first_two": metrics(batches[:2]),
    "merged": metrics(batches),
}))
