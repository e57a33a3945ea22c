"""Builder methods returning `self` are chained, and the last one returns another object whose method ends the chain."""


def lowercase(text):
    return text.lower()


def strip(text):
    return text.strip()


class Pipeline:
    def __init__(self, steps):
        self.steps = steps

    def run(self, text):
        for step in self.steps:
            text = step(text)
        return text


class PipelineBuilder:
    def __init__(self):
        self.steps = []

    def add(self, step):
        self.steps.append(step)
        return self

    def reverse(self):
        self.steps.reverse()
        return self

    def build(self):
        return Pipeline(list(self.steps))


class Dataset:
    def reverse(self):
        return self

    def run(self, text):
        return text


PipelineBuilder().add(strip).add(lowercase).reverse().build().run("  Hello ")
