"""Closures made in a loop read their free variable when called, so every hook calls the loop's last callback."""


def log_metrics(step):
    return f"metrics at {step}"


def save_checkpoint(step):
    return f"checkpoint at {step}"


def build_hooks(callbacks):
    hooks = []
    for callback in callbacks:
        def hook(step):
            return callback(step)

        hooks.append(hook)
    return hooks


for fn in build_hooks([log_metrics, save_checkpoint]):
    fn(1)
