from . import utils
from .callbacks import log_epoch


def fit(model, epochs):
    history = []
    for epoch in range(epochs):
        loss = model(epoch)
        history.append(utils.format_metrics(epoch, loss))
        log_epoch(history[-1])
    return history
