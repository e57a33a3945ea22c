"""`setattr` puts a function on an instance, so `self.hook(...)` in a method calls it instead of the class's own `hook`."""


def log_step(step):
    return f"step {step}"


class Trainer:
    def hook(self, step):
        return None

    def step(self, n):
        return self.hook(n)


hook_name = "hook"
trainer = Trainer()
setattr(trainer, hook_name, log_step)
trainer.step(1)
