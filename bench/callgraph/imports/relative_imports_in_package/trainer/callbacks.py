LOG = []


def log_epoch(line):
    LOG.append(line)


def log_batch(line):
    LOG.append("  " + line)
