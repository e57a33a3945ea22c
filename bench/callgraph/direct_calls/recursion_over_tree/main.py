"""A recursive function walks a nested model spec; another recursive function is defined but never called."""


def count_params(spec):
    total = spec.get("params", 0)
    for child in spec.get("children", []):
        total += count_params(child)
    return total


def depth(spec):
    return 1 + max((depth(child) for child in spec.get("children", [])), default=0)


model = {
    "params": 10,
    "children": [{"params": 4}, {"params": 6, "children": [{"params": 2}]}],
}
count_params(model)
