"""A local rebound before each call site calls only the target it holds at that site; a first binding overwritten unused is never called."""


def linear_warmup(step):
    return step / 100


def cosine_decay(step):
    return 1.0 - step / 1000


def constant_lr(step):
    return 1.0


def step_decay(step):
    return 0.1 ** (step // 30)


def schedule_lr(step):
    schedule = linear_warmup
    warm = schedule(step)
    schedule = cosine_decay
    decayed = schedule(step)
    fallback = constant_lr
    fallback = step_decay
    return warm, decayed, fallback(step)


schedule_lr(50)
