"""The method called on a caught exception depends on the class raised: two subclasses are raised, the base and a third never."""


class DataLoaderError(Exception):
    def recover(self):
        return "skip"


class RetryableError(DataLoaderError):
    def recover(self):
        return "retry"


class FatalError(DataLoaderError):
    def recover(self):
        return "abort"


class CorruptShardError(DataLoaderError):
    def recover(self):
        return "quarantine"


def fetch(shard):
    if shard < 0:
        raise FatalError(shard)
    if shard % 2:
        raise RetryableError(shard)
    return shard


def handle(err):
    return err.recover()


def load(shard):
    try:
        return fetch(shard)
    except DataLoaderError as err:
        return handle(err)


load(1)
load(-1)
load(2)
