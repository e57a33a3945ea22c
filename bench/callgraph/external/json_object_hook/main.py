"""`json.loads` calls the `object_hook` it is handed for each decoded object, on behalf of the function that handed it over."""

import json


class LayerSpec:
    def __init__(self, kind, size):
        self.kind = kind
        self.size = size


def decode_layer(obj):
    if "kind" in obj:
        return LayerSpec(obj["kind"], obj["size"])
    return obj


def encode_layer(spec):
    return {"kind": spec.kind, "size": spec.size}


def load_architecture(text):
    return json.loads(text, object_hook=decode_layer)


load_architecture('{"layers": [{"kind": "linear", "size": 4}, {"kind": "relu", "size": 4}]}')
