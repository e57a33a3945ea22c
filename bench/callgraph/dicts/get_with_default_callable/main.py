"""dict.get returns the registered hook for a known event and the default function for an unknown one."""


def on_train_start(trainer):
    return f"starting {trainer}"


def on_train_end(trainer):
    return f"finished {trainer}"


def noop(trainer):
    return None


HOOKS = {"train_start": on_train_start, "train_end": on_train_end}


def fire(event, trainer):
    hook = HOOKS.get(event, noop)
    return hook(trainer)


def main():
    fire("train_start", "resnet50")
    fire("batch_end", "resnet50")


main()
