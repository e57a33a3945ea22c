"""Functions stored in a list literal are each called by the loop that iterates over it."""


def normalize(x):
    peak = max(x)
    return [v / peak for v in x]


def center(x):
    mean = sum(x) / len(x)
    return [v - mean for v in x]


def augment(x):
    return x + x[::-1]


TRANSFORMS = [normalize, center]


def apply_transforms(sample):
    for transform in TRANSFORMS:
        sample = transform(sample)
    return sample


apply_transforms([1.0, 2.0, 4.0])
