"""A decorator written as a class: decoration runs its __init__, and calling the decorated name runs its __call__, which calls the function."""


class no_grad:
    def __init__(self, fn):
        self.fn = fn
        self.enabled = True

    def __call__(self, *args, **kwargs):
        self.enabled = False
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.enabled = True

    def reset(self):
        self.enabled = True


@no_grad
def evaluate(model_outputs):
    return sum(model_outputs) / len(model_outputs)


def validate():
    return evaluate([0.2, 0.4])


validate()
