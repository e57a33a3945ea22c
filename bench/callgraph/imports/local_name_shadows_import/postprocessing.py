def normalize(text):
    return text.strip()
