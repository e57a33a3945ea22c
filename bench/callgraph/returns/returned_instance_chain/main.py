"""An instance created deep inside a chain of returns and an attribute read is the receiver of the final call."""


class Linear:
    def predict(self, x):
        return 2 * x


class Tree:
    def predict(self, x):
        return 0


class Checkpoint:
    def __init__(self, path):
        self.path = path
        self.model = Linear()

    def restore(self):
        return self.model


def _parse(path):
    return Checkpoint(path)


def load(path):
    checkpoint = _parse(path)
    return checkpoint


def serve(path, x):
    model = load(path).restore()
    return model.predict(x)


serve("model.ckpt", 3)
