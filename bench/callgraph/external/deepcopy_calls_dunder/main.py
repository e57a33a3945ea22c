"""`copy.deepcopy` calls the object's own `__deepcopy__`; a case function that is also named `deepcopy` is never called."""

import copy


def deepcopy(state):
    return {key: value for key, value in state.items()}


class ModelState:
    def __init__(self, weights):
        self.weights = weights

    def __deepcopy__(self, memo):
        return ModelState(list(self.weights))


def snapshot(state):
    return copy.deepcopy(state)


snapshot(ModelState([1.0, 2.0]))
