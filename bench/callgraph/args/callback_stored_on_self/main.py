"""A callback passed to a constructor is stored on self and called later by a method; without one the class's default method runs."""


def log_to_tracker(step, loss):
    return {"step": step, "loss": loss}


def push_to_dashboard(step, loss):
    return f"{step}:{loss}"


class Trainer:
    def __init__(self, on_step=None):
        self.global_step = 0
        if on_step is not None:
            self.on_step = on_step

    def on_step(self, step, loss):
        return None

    def step(self, loss):
        self.global_step += 1
        return self.on_step(self.global_step, loss)


def main():
    tracked = Trainer(on_step=log_to_tracker)
    plain = Trainer()
    tracked.step(0.7)
    plain.step(0.6)


main()
