"""Calls in try, except, else and finally run over two calls; the handler of an exception that is never raised does not."""


def read_checkpoint(path):
    if path.endswith(".pt"):
        return {"step": 10}
    raise FileNotFoundError(path)


def start_from_scratch():
    return {"step": 0}


def report_resumed(state):
    return f"resumed at {state['step']}"


def report_corrupt():
    return "corrupt checkpoint"


def close_logger():
    return None


def resume(path):
    try:
        state = read_checkpoint(path)
    except FileNotFoundError:
        state = start_from_scratch()
    except KeyError:
        state = None
        report_corrupt()
    else:
        report_resumed(state)
    finally:
        close_logger()
    return state


resume("model.pt")
resume("missing.bin")
