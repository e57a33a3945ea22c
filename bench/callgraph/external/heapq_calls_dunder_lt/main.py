"""`heapq` orders beam hypotheses with their `__lt__`, called on behalf of the function that pushes and pops them."""

import heapq


class Hypothesis:
    def __init__(self, tokens, score):
        self.tokens = tokens
        self.score = score

    def __lt__(self, other):
        return self.score > other.score


class Span:
    def __init__(self, start):
        self.start = start

    def __lt__(self, other):
        return self.start < other.start


def beam_search(steps, width):
    beam = []
    for tokens, score in steps:
        heapq.heappush(beam, Hypothesis(tokens, score))
    return [heapq.heappop(beam).tokens for _ in range(width)]


beam_search([(["a"], 0.1), (["b"], 0.7), (["c"], 0.4)], 2)
