"""A returned tuple unpacked into three names gives each name its own object, so same-named `step` methods are told apart by position."""


class Model:
    def forward(self, x):
        return x * 2

    def step(self):
        return "model step"


class MSELoss:
    def __call__(self, pred, target):
        return (pred - target) ** 2


class SGD:
    def __init__(self, model):
        self.model = model

    def step(self):
        return "sgd step"


def build_components():
    model = Model()
    return model, MSELoss(), SGD(model)


def train_step(x, y):
    model, loss_fn, optimizer = build_components()
    loss = loss_fn(model.forward(x), y)
    optimizer.step()
    return loss


train_step(1.0, 3.0)
