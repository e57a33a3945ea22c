"""A function returning one of two update functions by name is run in both configurations, so the caller calls both."""


def sgd_update(weight, grad):
    return weight - 0.1 * grad


def adam_update(weight, grad):
    return weight - 0.01 * grad / (abs(grad) + 1e-8)


def rmsprop_update(weight, grad):
    return weight - 0.01 * grad


def get_update(name):
    if name == "sgd":
        return sgd_update
    return adam_update


def train(name, weight, grads):
    update = get_update(name)
    for grad in grads:
        weight = update(weight, grad)
    return weight


train("sgd", 1.0, [0.1, 0.2])
train("adam", 1.0, [0.1, 0.2])
