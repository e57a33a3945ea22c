"""Case functions share names with the standard-library functions really called; one is rebound by a later `from json import`."""

import json
import math
import os


def dumps(obj):
    return repr(obj)


def sqrt(x):
    return x ** 0.5


def join(*parts):
    return "/".join(parts)


def loads(text):
    return dict(item.split("=") for item in text.split(","))


from json import loads  # noqa: E402  (rebinds `loads` to the standard library's)


def rms(values):
    return math.sqrt(sum(v * v for v in values) / len(values))


def save_metrics(run_dir, values):
    path = os.path.join(run_dir, "metrics.json")
    return path, json.dumps({"rms": rms(values)})


def load_metrics(text):
    return loads(text)


save_metrics("runs/exp1", [3.0, 4.0])
load_metrics('{"rms": 3.5}')
