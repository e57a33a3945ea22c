def build(name):
    return name + "-large"
