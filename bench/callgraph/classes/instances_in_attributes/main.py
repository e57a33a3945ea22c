"""Instances stored in attributes of a trainer are reached through self.<attr> in a method."""


class Encoder:
    def forward(self, x):
        return x * 2


class Decoder:
    def forward(self, x):
        return x / 2


class SGD:
    def __init__(self, lr):
        self.lr = lr

    def step(self):
        return self.lr


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = SGD(lr)

    def step(self, batch):
        out = self.model.forward(batch)
        self.optimizer.step()
        return out


trainer = Trainer(Encoder(), lr=0.1)
trainer.step(3)
