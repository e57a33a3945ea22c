"""A method the subclass does not define is found on its base; a sibling subclass's override of it is not used."""


class BaseTrainer:
    def __init__(self):
        self.history = []

    def log(self, message):
        self.history.append(message)


class Trainer(BaseTrainer):
    def step(self, batch):
        self.log(f"batch {batch}")


class EvalTrainer(BaseTrainer):
    def log(self, message):
        print(message)


trainer = Trainer()
trainer.step(1)
