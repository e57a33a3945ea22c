"""A chain `f(name)()(flag)()` calls each function the previous call returned; only one branch of each choice is taken."""


def load_from_disk():
    return [1, 2, 3]


def load_from_cache():
    return []


def pick_loader(cached):
    return load_from_cache if cached else load_from_disk


def training_stage():
    return pick_loader


def evaluation_stage():
    return pick_loader


def get_stage(name):
    return training_stage if name == "train" else evaluation_stage


data = get_stage("train")()(False)()
