"""`next` with a default resumes a generator one record at a time until it is exhausted."""


def parse_record(line):
    name, value = line.split(",")
    return name, float(value)


def read_records(lines):
    for line in lines:
        if line.strip():
            yield parse_record(line)


def load(lines):
    records = read_records(lines)
    out = []
    while (record := next(records, None)) is not None:
        out.append(record)
    return out


load(["loss,0.5", "", "acc,0.9"])
