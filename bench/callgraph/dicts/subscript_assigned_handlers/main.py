"""Handlers stored by subscript assignment are called by a command dispatcher; one registered handler is never dispatched."""


def run_train(args):
    return f"training with {args}"


def run_eval(args):
    return f"evaluating with {args}"


def run_export(args):
    return f"exporting with {args}"


COMMANDS = {}
COMMANDS["train"] = run_train
COMMANDS["eval"] = run_eval
COMMANDS["export"] = run_export


def dispatch(argv):
    command, *rest = argv
    return COMMANDS[command](rest)


def main():
    dispatch(["train", "--epochs", "3"])
    dispatch(["eval", "--split", "val"])


main()
