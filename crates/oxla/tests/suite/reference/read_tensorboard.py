"""Reads the event files oxla-train's SummaryWriter wrote, for the
tensorboard test, with TensorBoard's own readers: argv[1] the log directory.
EventAccumulator (what `tensorboard --logdir` loads) gives the scalars,
histograms and images by tag; event_file_loader gives the raw events (the
file version first, wall times). Images are decoded with PIL. Prints JSON
{"scalars": {tag: [[step, value]]}, "histograms": {tag: [{step, min, max,
num, sum, sum_squares, bucket_limit, bucket}]}, "images": {tag: [{step,
width, height, mode, pixels}]}, "raw": [{wall_time, step, what}]}."""

import glob
import io
import json
import math
import os
import sys

from PIL import Image
from tensorboard.backend.event_processing import event_accumulator, event_file_loader

log_dir = sys.argv[1]
acc = event_accumulator.EventAccumulator(
    log_dir,
    size_guidance={
        event_accumulator.SCALARS: 0,
        event_accumulator.HISTOGRAMS: 0,
        event_accumulator.IMAGES: 0,
    },
)
acc.Reload()
tags = acc.Tags()


def finite(x):
    # JSON has no infinity; TensorFlow's last bucket edge is DBL_MAX, which is finite.
    assert math.isfinite(x), x
    return x


scalars = {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags["scalars"]}
histograms = {
    t: [
        {
            "step": e.step,
            "min": finite(e.histogram_value.min),
            "max": finite(e.histogram_value.max),
            "num": e.histogram_value.num,
            "sum": e.histogram_value.sum,
            "sum_squares": e.histogram_value.sum_squares,
            "bucket_limit": [finite(x) for x in e.histogram_value.bucket_limit],
            "bucket": list(e.histogram_value.bucket),
        }
        for e in acc.Histograms(t)
    ]
    for t in tags["histograms"]
}
images = {}
for t in tags["images"]:
    images[t] = []
    for e in acc.Images(t):
        png = Image.open(io.BytesIO(e.encoded_image_string))
        assert png.format == "PNG", png.format
        images[t].append({
            "step": e.step,
            "width": e.width,
            "height": e.height,
            "mode": png.mode,
            "size": list(png.size),
            "pixels": list(png.tobytes()),
        })

raw = []
(path,) = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
for event in event_file_loader.EventFileLoader(path).Load():
    raw.append({
        "wall_time": event.wall_time,
        "step": event.step,
        "what": event.WhichOneof("what"),
        "file_version": event.file_version,
    })

print(json.dumps({
    "file": os.path.basename(path),
    "scalars": scalars,
    "histograms": histograms,
    "images": images,
    "raw": raw,
}))
