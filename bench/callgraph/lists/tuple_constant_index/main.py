"""Constant indices into a tuple of hooks decide which hook each function calls."""


def on_train_start(state):
    state["started"] = True


def on_train_end(state):
    state["finished"] = True


HOOKS = (on_train_start, on_train_end)


def begin(state):
    HOOKS[0](state)


def finish(state):
    HOOKS[-1](state)


state = {}
begin(state)
finish(state)
