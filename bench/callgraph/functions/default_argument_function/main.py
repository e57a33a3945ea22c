"""A function given as a parameter's default value is called when the caller omits it; the one passed in is called otherwise."""


def sgd_update(weight, grad, lr):
    return weight - lr * grad


def momentum_update(weight, grad, lr):
    return weight - lr * 0.9 * grad


def adam_update(weight, grad, lr):
    return weight - lr * grad / (abs(grad) + 1e-8)


def train_step(weight, grad, lr=0.1, update=sgd_update):
    return update(weight, grad, lr)


train_step(1.0, 0.5)
train_step(1.0, 0.5, update=momentum_update)
