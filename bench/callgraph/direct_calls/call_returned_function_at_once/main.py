"""The function a call returns is called at once (`f(name)(x)`), once for each of the two functions it can return."""


def relu(x):
    return max(x, 0.0)


def gelu(x):
    return 0.5 * x * (1.0 + x / (1.0 + abs(x)))


def silu(x):
    return x / (1.0 + 2.718281828 ** -x)


def get_activation(name):
    if name == "relu":
        return relu
    return gelu


def forward(x, name):
    return get_activation(name)(x)


forward(-1.0, "relu")
forward(2.0, "gelu")
