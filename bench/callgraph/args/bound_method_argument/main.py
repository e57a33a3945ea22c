"""A bound method passed as an argument calls the method of the instance it was taken from."""


class SGD:
    def __init__(self, lr):
        self.lr = lr

    def step(self):
        return self.lr


class Adam:
    def __init__(self, lr):
        self.lr = lr

    def step(self):
        return self.lr * 0.9


def clip_grads(max_norm):
    return min(max_norm, 1.0)


def with_grad_clip(step_fn, max_norm):
    clip_grads(max_norm)
    return step_fn()


def main():
    sgd = SGD(0.1)
    adam = Adam(0.001)
    with_grad_clip(sgd.step, max_norm=5.0)
    return adam.lr


main()
