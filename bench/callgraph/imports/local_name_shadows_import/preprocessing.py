def normalize(text):
    return text.lower()
