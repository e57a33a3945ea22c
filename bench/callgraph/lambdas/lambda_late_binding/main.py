"""Lambdas made in a loop look the loop variable up when called, so they all call the last function, unless a default argument binds it early."""


def save_checkpoint(epoch):
    return f"ckpt-{epoch}"


def log_metrics(epoch):
    return f"log-{epoch}"


def notify(epoch):
    return f"notify-{epoch}"


def early_stop(epoch):
    return epoch > 10


def make_hooks():
    hooks = []
    for fn in (save_checkpoint, log_metrics):
        hooks.append(lambda epoch: fn(epoch))
    return hooks


def make_bound_hooks():
    return [lambda epoch, fn=fn: fn(epoch) for fn in (notify, early_stop)]


for hook in make_hooks() + make_bound_hooks():
    hook(3)
