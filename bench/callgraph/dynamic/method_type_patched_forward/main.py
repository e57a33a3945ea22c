"""`types.MethodType` binds a replacement `forward` to one layer instance; it calls the original bound method it saved."""

import types


class Linear:
    def __init__(self, weight):
        self.weight = weight

    def forward(self, x):
        return self.weight * x


def lora_forward(self, x):
    return self._original_forward(x) + 0.1 * x


def inject_adapter(layer):
    layer._original_forward = layer.forward
    layer.forward = types.MethodType(lora_forward, layer)
    return layer


def predict(layer, x):
    return layer.forward(x)


layer = inject_adapter(Linear(2.0))
predict(layer, 3.0)
