"""A lambda called where it is written, and a lambda returned by a module-level lambda, make their calls for the scope they are written in."""


def load_defaults():
    return {"lr": 0.1}


def tokenize(text):
    return text.split()


def lowercase(text):
    return text.lower()


def strip_accents(text):
    return text


def setup():
    config = (lambda: load_defaults())()
    return config


compose = lambda f, g: lambda x: f(g(x))
pipeline = compose(tokenize, lowercase)


def encode(text):
    return pipeline(text)


setup()
encode("Hello World")
