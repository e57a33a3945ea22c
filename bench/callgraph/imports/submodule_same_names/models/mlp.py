def build(depth):
    return _make_layers(depth)


def _make_layers(n):
    return ["dense"] * n
