"""callable() picks between calling a learning-rate schedule and using a constant: a function and an object with __call__ are called, a float is not."""


def cosine_lr(step):
    return 0.5 * (1 + (1 - step / 100))


class WarmupSchedule:
    def __init__(self, warmup):
        self.warmup = warmup

    def __call__(self, step):
        return min(1.0, step / self.warmup)

    def describe(self):
        return f"warmup over {self.warmup} steps"


def resolve_lr(lr, step):
    return lr(step) if callable(lr) else lr


def main():
    resolve_lr(0.1, 10)
    resolve_lr(cosine_lr, 10)
    resolve_lr(WarmupSchedule(50), 10)


main()
