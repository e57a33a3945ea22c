def format_metrics(epoch, loss):
    return f"epoch {epoch}: loss {loss:.3f}"


def format_time(seconds):
    return f"{seconds:.1f}s"
