"""A bound method returned by a function, chosen by phase and stored on a runner, is called later by the runner."""


class Model:
    def train_step(self, batch):
        return sum(batch)

    def eval_step(self, batch):
        return max(batch)

    def predict_step(self, batch):
        return batch


class Baseline:
    def train_step(self, batch):
        return 0

    def eval_step(self, batch):
        return 0


def get_step(model, phase):
    if phase == "train":
        return model.train_step
    return model.eval_step


class Runner:
    def __init__(self, step_fn):
        self.step_fn = step_fn

    def run(self, batches):
        return [self.step_fn(b) for b in batches]


model = Model()
for phase in ("train", "eval"):
    Runner(get_step(model, phase)).run([[1, 2], [3]])
