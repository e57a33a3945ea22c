"""In chained generators each stage's body is resumed by the stage that iterates it, not by the function that built the chain."""


def split_words(line):
    return line.split()


def read_lines(texts):
    for text in texts:
        yield from text.splitlines()


def tokenize(lines):
    for line in lines:
        yield split_words(line)


def batch(token_lists, size):
    chunk = []
    for tokens in token_lists:
        chunk.append(tokens)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def run(texts):
    return [len(b) for b in batch(tokenize(read_lines(texts)), 2)]


run(["a b\nc", "d e f"])
