"""A callback stored on an exception instance flows through `raise` and `except`, and the handler calls it."""


def save_best(epoch):
    return f"saved best at epoch {epoch}"


def save_last(epoch):
    return f"saved last at epoch {epoch}"


class EarlyStopping(Exception):
    def __init__(self, epoch, on_stop):
        super().__init__(epoch)
        self.epoch = epoch
        self.on_stop = on_stop


class Trainer:
    def __init__(self, patience):
        self.patience = patience

    def run_epoch(self, epoch):
        if epoch >= self.patience:
            raise EarlyStopping(epoch, save_best)

    def fit(self, epochs):
        try:
            for epoch in range(epochs):
                self.run_epoch(epoch)
        except EarlyStopping as stop:
            return stop.on_stop(stop.epoch)


Trainer(2).fit(5)
