def relu(x):
    return max(0.0, x)


def sigmoid(x):
    return 1.0 / (1.0 + 2.718281828 ** -x)
