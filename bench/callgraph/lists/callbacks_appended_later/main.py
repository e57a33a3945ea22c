"""Callback objects appended to a list after it is created are the ones the training loop calls."""


class EarlyStopping:
    def on_epoch_end(self, epoch, loss):
        return loss < 0.1


class Checkpoint:
    def __init__(self, path):
        self.path = path

    def on_epoch_end(self, epoch, loss):
        return f"{self.path}/{epoch}.ckpt"


class ProgressBar:
    def on_epoch_end(self, epoch, loss):
        return "#" * epoch


callbacks = []


def register(callback):
    callbacks.append(callback)
    return callback


def train(epochs):
    for epoch in range(epochs):
        loss = 1.0 / (epoch + 1)
        for callback in callbacks:
            callback.on_epoch_end(epoch, loss)


register(EarlyStopping())
callbacks.append(Checkpoint("ckpts"))
train(2)
