def encode(text):
    return [ord(c) for c in text]


def decode(ids):
    return "".join(chr(i) for i in ids)
