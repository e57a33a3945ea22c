"""`getattr` with a constant name calls that method of the object it is given; a same-named method of another class is not called."""


class Encoder:
    def forward(self, x):
        return x * 2

    def backward(self, grad):
        return grad * 2


class Decoder:
    def forward(self, x):
        return x - 1


def run(model, x):
    method = getattr(model, "forward")
    return method(x)


run(Encoder(), 3)
