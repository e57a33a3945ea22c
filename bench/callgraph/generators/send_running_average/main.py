"""`send` resumes a coroutine-style generator that one function primes with `next`, feeds, and closes."""


def smooth(previous, value, beta):
    return beta * previous + (1 - beta) * value


def running_average(beta):
    average = yield
    while True:
        value = yield average
        average = smooth(average, value, beta)


def track(losses):
    tracker = running_average(0.9)
    next(tracker)
    history = [tracker.send(losses[0])]
    for loss in losses[1:]:
        history.append(tracker.send(loss))
    tracker.close()
    return history


track([1.0, 0.8, 0.6])
