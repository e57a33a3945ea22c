"""An exception raised in a `with` body reaches `__exit__`, which calls the handler it holds and suppresses the error."""


def log_failure(exc):
    return f"batch skipped: {exc}"


def log_success():
    return "batch done"


class SkipBadBatch:
    def __init__(self, on_error):
        self.on_error = on_error

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            self.on_error(exc)
            return True
        return False


def train_step(batch):
    if not batch:
        raise ValueError("empty batch")
    return sum(batch)


def train(batches):
    for batch in batches:
        with SkipBadBatch(log_failure):
            train_step(batch)


train([[1, 2], []])
