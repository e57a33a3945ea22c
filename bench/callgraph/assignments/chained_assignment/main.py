"""A chained assignment binds one callable to a module name and to an attribute of a config object, and both are called."""


class Config:
    pass


def adamw_update(param, grad):
    return param - 0.001 * grad


def sgd_update(param, grad):
    return param - 0.1 * grad


cfg = Config()
default_update = cfg.update_fn = adamw_update


def apply_updates(params, grads):
    first = default_update(params[0], grads[0])
    second = cfg.update_fn(params[1], grads[1])
    return first, second


apply_updates([1.0, 2.0], [0.5, 0.5])
