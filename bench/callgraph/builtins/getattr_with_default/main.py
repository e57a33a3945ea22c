"""getattr with a function as default calls the model's method where the model has one and the default where it has none."""


def noop():
    return None


class Bert:
    def on_load(self):
        return "bert weights tied"


class ResNet:
    pass


class ViT:
    def on_load(self):
        return "vit position embeddings resized"


def load(model):
    hook = getattr(model, "on_load", noop)
    return hook()


def main():
    load(Bert())
    load(ResNet())
    return ViT


main()
