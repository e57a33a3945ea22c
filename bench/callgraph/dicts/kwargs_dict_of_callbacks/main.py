"""Callbacks passed as keyword arguments land in a **kwargs dict, built with dict(...), and only the keys the trainer looks up are called."""


def save_checkpoint(epoch):
    return f"ckpt-{epoch}.pt"


def log_loss(step, loss):
    return f"{step}: {loss}"


def run_validation(epoch):
    return 0.9


def train(epochs, **callbacks):
    on_batch_end = callbacks.get("on_batch_end")
    for epoch in range(epochs):
        if on_batch_end is not None:
            on_batch_end(epoch * 10, 0.5)
        callbacks["on_epoch_end"](epoch)


def main():
    options = dict(on_epoch_end=save_checkpoint, on_validation=run_validation)
    train(1, **options)
    train(1, on_epoch_end=save_checkpoint, on_batch_end=log_loss)


main()
