"""A config-driven factory looks a class up in a dict registry, instantiates it and calls forward; a registered class that no config names is never built."""


class ResNet:
    def __init__(self, depth):
        self.depth = depth

    def forward(self, x):
        return x * self.depth


class ViT:
    def __init__(self, patch_size):
        self.patch_size = patch_size

    def forward(self, x):
        return x / self.patch_size


class ConvNeXt:
    def __init__(self, width):
        self.width = width

    def forward(self, x):
        return x + self.width


MODELS = {"resnet": ResNet, "vit": ViT, "convnext": ConvNeXt}


def build_model(cfg):
    model_cls = MODELS[cfg["type"]]
    return model_cls(**cfg["args"])


def run(configs, x):
    return [build_model(cfg).forward(x) for cfg in configs]


run([{"type": "resnet", "args": {"depth": 50}}, {"type": "vit", "args": {"patch_size": 16}}], 2.0)
