"""A module-level `def` after `from activations import relu` rebinds the name, so only the call made before it reaches the imported function."""
from activations import relu

warmup = relu(-1.0)


def relu(x):
    return x if x > 0 else 0.01 * x


def forward(x):
    return relu(x)


forward(2.0)
