"""A `with` statement calls its context manager's `__init__`, `__enter__` and `__exit__`; another context manager is never used."""


class EvalMode:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.model.training = False
        return self.model

    def __exit__(self, exc_type, exc, tb):
        self.model.training = True
        return False


class TrainMode(EvalMode):
    def __enter__(self):
        self.model.training = True
        return self.model


class Model:
    training = True

    def predict(self, x):
        return x * 2


def evaluate(model, xs):
    with EvalMode(model) as m:
        return [m.predict(x) for x in xs]


evaluate(Model(), [1, 2])
