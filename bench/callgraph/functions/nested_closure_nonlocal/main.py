"""A nested function updating `nonlocal` state is called by its enclosing function; its sibling nested function never is."""


def accumulate_loss(batch_losses):
    total = 0.0
    count = 0

    def add(loss):
        nonlocal total, count
        total += loss
        count += 1

    def reset():
        nonlocal total, count
        total, count = 0.0, 0

    for loss in batch_losses:
        add(loss)
    return total / count


accumulate_loss([0.5, 0.3, 0.1])
