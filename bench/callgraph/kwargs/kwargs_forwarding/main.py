"""A callback passed in `**kwargs` is forwarded through two functions to the one that calls it."""


def print_progress(epoch, loss):
    return f"epoch {epoch} loss {loss}"


def save_checkpoint(epoch, loss):
    return f"ckpt-{epoch}"


def run_loop(model, epochs=1, callback=None, lr=0.1):
    for epoch in range(epochs):
        callback(epoch, model(epoch) * lr)


def fit(model, **train_kwargs):
    train_kwargs.setdefault("lr", 0.01)
    return run_loop(model, **train_kwargs)


def experiment(model, **overrides):
    return fit(model, epochs=2, **overrides)


def quadratic(epoch):
    return (epoch - 1) ** 2


experiment(quadratic, callback=print_progress)
