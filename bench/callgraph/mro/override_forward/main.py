"""The base class `__call__` reaches the subclass's `forward` override; the base method and a sibling's override are never called."""


class Model:
    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        raise NotImplementedError


class MLP(Model):
    def forward(self, x):
        return [2 * v for v in x]


class CNN(Model):
    def forward(self, x):
        return x[::-1]


model = MLP()
model([1, 2])
