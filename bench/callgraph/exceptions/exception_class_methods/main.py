"""A custom exception's `__init__` runs where it is raised and its method where it is caught; a sibling exception is never raised."""


class ConfigError(Exception):
    def __init__(self, key, value):
        super().__init__(f"bad value for {key}")
        self.key = key
        self.value = value

    def describe(self):
        return f"{self.key}={self.value!r} is invalid"


class ShapeError(Exception):
    def describe(self):
        return "shape mismatch"


def validate(config):
    if config["lr"] <= 0:
        raise ConfigError("lr", config["lr"])


def run(config):
    try:
        validate(config)
    except (ConfigError, ShapeError) as err:
        return err.describe()
    return "ok"


run({"lr": -1})
