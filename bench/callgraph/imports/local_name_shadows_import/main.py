"""A parameter and a function-local import shadow module-level imports, so same-looking calls reach different functions."""
import tokenizer
from preprocessing import normalize


class WordTokenizer:
    def encode(self, text):
        return text.split()


def encode_batch(tokenizer, texts):
    return [tokenizer.encode(normalize(t)) for t in texts]


def encode_raw(text):
    return tokenizer.encode(text)


def encode_clean(text):
    from postprocessing import normalize
    return tokenizer.encode(normalize(text))


encode_batch(WordTokenizer(), ["Hello World"])
encode_raw("hi")
encode_clean("  hi  ")
