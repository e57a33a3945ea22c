"""A factory returns a closure that is called later; the closure calls a module function with the values it captured."""


def warmup_factor(step, warmup_steps):
    return min(1.0, (step + 1) / warmup_steps)


def cosine_factor(step, total_steps):
    return 0.5 * (1.0 + (1.0 - 2.0 * step / total_steps))


def make_lr_schedule(base_lr, warmup_steps):
    def schedule(step):
        return base_lr * warmup_factor(step, warmup_steps)

    return schedule


schedule = make_lr_schedule(0.1, 10)
learning_rates = [schedule(step) for step in range(3)]
