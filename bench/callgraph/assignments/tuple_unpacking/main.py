"""Callables bound by tuple unpacking, nested unpacking and a swap are called under their new names."""


def normalize(x):
    return x / 255.0


def denormalize(x):
    return x * 255.0


def random_flip(x):
    return -x


def center_crop(x):
    return x


def random_erase(x):
    return 0.0


def preprocess(raw):
    pre, post = normalize, denormalize
    train_tf, (eval_tf, _unused) = random_flip, (center_crop, random_erase)
    pre, post = post, pre
    x = post(raw)
    return train_tf(x), eval_tf(x)


preprocess(128.0)
