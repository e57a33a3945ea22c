"""A function passed as an argument is called by the function that receives it."""


def log_metrics(state):
    return f"step={state['step']} loss={state['loss']}"


def save_checkpoint(state):
    return {"path": f"ckpt-{state['step']}.pt"}


def run_hook(hook, state):
    return hook(state)


run_hook(log_metrics, {"step": 10, "loss": 0.5})
