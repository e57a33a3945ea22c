"""A callback is handed down two levels and called only by the innermost function; two runs pass different callbacks."""


def print_progress(epoch, loss):
    return f"epoch {epoch}: {loss:.3f}"


def early_stop_check(epoch, loss):
    return loss < 0.1


def run_epoch(epoch, on_epoch_end):
    loss = 1.0 / (epoch + 1)
    return on_epoch_end(epoch, loss)


def fit(epochs, on_epoch_end):
    return [run_epoch(epoch, on_epoch_end) for epoch in range(epochs)]


def main():
    fit(2, print_progress)
    fit(3, early_stop_check)


main()
