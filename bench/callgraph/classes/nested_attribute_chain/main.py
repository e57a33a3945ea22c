"""A method is reached through a chain of three attributes, each an instance built in another class's __init__."""


class TextEncoder:
    def encode(self, text):
        return len(text)


class ImageEncoder:
    def encode(self, image):
        return sum(image)


class Backbone:
    def __init__(self):
        self.text = TextEncoder()
        self.image = ImageEncoder()


class Model:
    def __init__(self):
        self.backbone = Backbone()


class Pipeline:
    def __init__(self):
        self.model = Model()

    def embed_text(self, text):
        return self.model.backbone.text.encode(text)


Pipeline().embed_text("a photo of a cat")
