"""Callables passed by keyword, in a different order than the parameters, are called by the receiver."""


def sgd_step(weights, grad):
    return [w - 0.1 * g for w, g in zip(weights, grad)]


def adam_step(weights, grad):
    return weights


def log_progress(epoch, weights):
    return f"{epoch}: {weights}"


def train(weights, grad, epochs, update=None, on_epoch_end=None):
    for epoch in range(epochs):
        weights = update(weights, grad)
        on_epoch_end(epoch, weights)
    return weights


train([1.0, 2.0], [0.5, 0.5], epochs=2, on_epoch_end=log_progress, update=sgd_step)
