"""`getattr` with a name built from an event string dispatches to the matching callback method; an unfired event's method is not called."""


class LoggingCallback:
    def on_train_start(self):
        return "start"

    def on_epoch_end(self):
        return "epoch"

    def on_validation_end(self):
        return "validation"


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def fire(self, event):
        for callback in self.callbacks:
            handler = getattr(callback, f"on_{event}", None)
            if handler is not None:
                handler()

    def fit(self, epochs):
        self.fire("train_start")
        for _ in range(epochs):
            self.fire("epoch_end")


Trainer([LoggingCallback()]).fit(2)
