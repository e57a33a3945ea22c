"""A module function calls another module function directly; a third is defined but never called."""


def parse_line(line):
    key, _, value = line.partition("=")
    return key.strip(), value.strip()


def load_config(text):
    config = {}
    for line in text.splitlines():
        if line:
            key, value = parse_line(line)
            config[key] = value
    return config


def dump_config(config):
    return "\n".join(f"{key}={value}" for key, value in config.items())


config = load_config("lr = 0.1\nepochs = 3\n")
