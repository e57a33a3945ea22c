"""Lambdas stored in a list and in a tuple are applied in a loop; each lambda's calls belong to the scope that wrote it."""


def tokenize(text):
    return text.split()


def pad(tokens, width=4):
    return tokens + ["<pad>"] * (width - len(tokens))


def detokenize(tokens):
    return " ".join(t for t in tokens if t != "<pad>")


def truncate(tokens):
    return tokens[:2]


POSTPROCESS = (lambda tokens: detokenize(tokens),)


def build_pipeline():
    return [lambda text: tokenize(text), lambda tokens: pad(tokens)]


def run(stages, value):
    for stage in stages:
        value = stage(value)
    return value


tokens = run(build_pipeline(), "a b")
text = run(POSTPROCESS, tokens)
