"""Calling a loss object runs its class's __call__, which calls forward on self."""


class CrossEntropyLoss:
    def __call__(self, logits, target):
        return self.forward(logits, target)

    def forward(self, logits, target):
        return -logits[target]


class MSELoss:
    def __call__(self, pred, target):
        return self.forward(pred, target)

    def forward(self, pred, target):
        return (pred - target) ** 2


def train_step(logits, target):
    criterion = CrossEntropyLoss()
    return criterion(logits, target)


train_step([0.1, 0.9], 1)
