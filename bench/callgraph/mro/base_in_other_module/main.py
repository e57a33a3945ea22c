"""A method inherited from a base class in another module runs there and dispatches back to the subclass's override."""
from callbacks import Callback


class Logger(Callback):
    def on_setup(self, trainer):
        trainer["log"] = []


class Profiler(Callback):
    def on_setup(self, trainer):
        trainer["timings"] = {}

    def describe(self):
        return "profiler"


trainer = {}
Logger().on_train_begin(trainer)
