"""In a diamond, `super().setup()` follows the instance's MRO, so the first mixin calls the second mixin rather than the shared base."""


class Callback:
    def setup(self, trainer):
        trainer.ready = True


class LoggingMixin(Callback):
    def setup(self, trainer):
        trainer.logs = []
        super().setup(trainer)


class CheckpointMixin(Callback):
    def setup(self, trainer):
        trainer.ckpts = []
        super().setup(trainer)


class TrainerCallbacks(LoggingMixin, CheckpointMixin):
    def setup(self, trainer):
        super().setup(trainer)


class Trainer:
    pass


TrainerCallbacks().setup(Trainer())
