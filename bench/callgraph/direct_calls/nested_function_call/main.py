"""A nested function is called by the function that defines it; a same-named nested function elsewhere is never called."""


def train(losses):
    def log_metrics(step, loss):
        return f"train step={step} loss={loss:.3f}"

    lines = []
    for step, loss in enumerate(losses):
        lines.append(log_metrics(step, loss))
    return lines


def evaluate(losses):
    def log_metrics(loss):
        return f"eval loss={loss:.3f}"

    return sum(losses) / len(losses)


train([0.9, 0.7])
evaluate([0.5, 0.4])
