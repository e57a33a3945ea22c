"""Head instances stored in a dict attribute are looked up by task name; only the head of the requested task has its forward called."""


class ClassifierHead:
    def __init__(self, num_classes):
        self.num_classes = num_classes

    def forward(self, features):
        return [f % self.num_classes for f in features]


class RegressionHead:
    def __init__(self, scale):
        self.scale = scale

    def forward(self, features):
        return [f * self.scale for f in features]


class MultiTaskModel:
    def __init__(self):
        self.heads = {"cls": ClassifierHead(10), "reg": RegressionHead(0.5)}

    def encode(self, x):
        return [x, x + 1]

    def forward(self, x, task):
        head = self.heads[task]
        return head.forward(self.encode(x))


MultiTaskModel().forward(3, task="cls")
