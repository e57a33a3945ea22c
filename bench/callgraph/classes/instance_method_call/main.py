"""Instantiating a class runs its __init__, and a method called on the instance resolves to that class's method only."""


class Encoder:
    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return x * self.dim

    def backward(self, grad):
        return grad / self.dim


class Head:
    def forward(self, x):
        return x + 1


def main():
    encoder = Encoder(8)
    return encoder.forward(2)


main()
