"""type(obj)(...) builds a new instance of the object's own class, running that class's __init__ and not a sibling's."""


class Layer:
    def __init__(self, size):
        self.size = size


class Conv(Layer):
    def __init__(self, size):
        super().__init__(size)
        self.kernel = 3


class Pool(Layer):
    def __init__(self, size):
        super().__init__(size)
        self.stride = 2


def clone_layer(layer):
    return type(layer)(layer.size)


def main():
    conv = Conv(16)
    return clone_layer(conv)


main()
