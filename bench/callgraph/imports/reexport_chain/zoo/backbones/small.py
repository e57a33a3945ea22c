def build(name):
    return name + "-small"
