"""`yield from` delegates to a sub-generator, which the delegating generator resumes; a generator expression drives the outer one."""


def decode(raw):
    return raw.upper()


def read_shard(name, size):
    for i in range(size):
        yield decode(f"{name}-{i}")


def read_all(shards):
    for name, size in shards:
        yield from read_shard(name, size)


def count_samples(shards):
    return sum(1 for _ in read_all(shards))


count_samples([("train", 2), ("extra", 1)])
