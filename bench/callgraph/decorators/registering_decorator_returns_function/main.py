"""A decorator that registers the function and returns it unchanged: decorating calls the decorator, and later calls go straight to the function."""

TASKS = []


def register_task(fn):
    TASKS.append(fn.__name__)
    return fn


@register_task
def train_classifier(epochs):
    return f"classifier for {epochs} epochs"


@register_task
def train_detector(epochs):
    return f"detector for {epochs} epochs"


def main():
    return train_classifier(3)


main()
