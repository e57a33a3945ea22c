"""Two functions call each other to flatten a nested config into dotted keys."""


def flatten_dict(prefix, node, out):
    for key, value in node.items():
        flatten_value(f"{prefix}{key}", value, out)
    return out


def flatten_value(path, value, out):
    if isinstance(value, dict):
        flatten_dict(path + ".", value, out)
    else:
        out[path] = value


flatten_dict("", {"optim": {"lr": 0.1, "betas": {"b1": 0.9}}, "epochs": 3}, {})
