"""A loss function passed to a training step is called there, next to the model's forward."""


class Model:
    def forward(self, batch):
        return [x * 0.5 for x in batch]


def mse_loss(pred, target):
    return sum((p - t) ** 2 for p, t in zip(pred, target)) / len(pred)


def l1_loss(pred, target):
    return sum(abs(p - t) for p, t in zip(pred, target)) / len(pred)


def train_step(model, batch, target, loss_fn):
    pred = model.forward(batch)
    return loss_fn(pred, target)


def main():
    model = Model()
    return train_step(model, [1.0, 2.0], [0.4, 1.1], loss_fn=mse_loss)


main()
