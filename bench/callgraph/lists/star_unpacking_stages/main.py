"""Star-unpacking a list of stages and unpacking a list of two models decide which object each call reaches."""


class Encoder:
    def encode(self, x):
        return x * 2

    def decode(self, x):
        return x / 2


class Decoder:
    def encode(self, x):
        return x + 1

    def decode(self, x):
        return x - 1


def embed(x):
    return x + 1


def attend(x):
    return x * 3


def project(x):
    return x - 2


def apply_all(stages, x):
    for stage in stages:
        x = stage(x)
    return x


def run(x):
    first, *middle, last = [embed, attend, project]
    return last(apply_all(middle, first(x)))


def autoencode(x):
    encoder, decoder = [Encoder(), Decoder()]
    return decoder.decode(encoder.encode(x))


run(1.0)
autoencode(1.0)
