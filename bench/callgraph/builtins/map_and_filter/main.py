"""Functions handed to map and filter are called by the function that hands them over."""


def tokenize(line):
    return line.lower().split()


def is_nonempty(tokens):
    return len(tokens) > 0


def is_comment(line):
    return line.startswith("#")


def preprocess(lines):
    tokenized = map(tokenize, lines)
    return list(filter(is_nonempty, tokenized))


preprocess(["Hello World", "", "A B"])
