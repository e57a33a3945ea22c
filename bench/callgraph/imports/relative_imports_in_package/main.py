"""Relative imports inside a package (`from . import utils`, `from .callbacks import log_epoch`) and a function re-exported by its `__init__.py`."""
from trainer import fit


def toy_model(epoch):
    return 1.0 / (epoch + 1)


history = fit(toy_model, 2)
