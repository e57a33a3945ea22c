"""`super().__init__()` climbs the class chain, and a base `__init__` calling `self.build()` reaches the most derived override."""


class Module:
    def __init__(self):
        self.params = []


class Encoder(Module):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
        self.build()

    def build(self):
        self.params = ["embed"]


class TransformerEncoder(Encoder):
    def __init__(self, depth, heads):
        self.heads = heads
        super().__init__(depth)

    def build(self):
        self.params = [f"attn{i}" for i in range(self.depth)]


TransformerEncoder(depth=2, heads=4)
