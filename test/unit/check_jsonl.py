#!/usr/bin/env python3
# Checks a JSON-lines training log against a description of what each line
# must hold, with Python's own json parser (strict: NaN/Infinity rejected).
#   check_jsonl.py LOG EXPECTED
# Each EXPECTED line describes one LOG line as space-separated KEY=KIND:VALUE
# in key order; KIND is s (string), i (integer), b (true/false), n (null) or
# f (a double given as 16 hex digits of its IEEE bits, compared exactly).
import json
import struct
import sys


def reject_constant(name):
    raise ValueError("non-standard JSON constant " + name)


def check(log_path, expected_path):
    with open(log_path, "rb") as f:
        raw = f.read()
    if not raw.endswith(b"\n"):
        return "log does not end with a newline"
    lines = raw.decode("ascii").split("\n")[:-1]
    with open(expected_path) as f:
        expected = [line.split() for line in f.read().splitlines()]
    if len(lines) != len(expected):
        return "%d log lines, expected %d" % (len(lines), len(expected))
    for number, (line, fields) in enumerate(zip(lines, expected), 1):
        pairs = json.loads(line, object_pairs_hook=list,
                           parse_constant=reject_constant)
        keys = [k for k, _ in pairs]
        want_keys = [field.split("=", 1)[0] for field in fields]
        if keys != want_keys:
            return "line %d: keys %s, expected %s" % (number, keys, want_keys)
        for (key, value), field in zip(pairs, fields):
            kind, text = field.split("=", 1)[1].split(":", 1)
            if kind == "s":
                ok = value == text
            elif kind == "i":
                ok = type(value) is int and value == int(text)
            elif kind == "b":
                ok = value is (text == "true")
            elif kind == "n":
                ok = value is None
            else:
                want = struct.unpack(">d", bytes.fromhex(text))[0]
                ok = (type(value) in (int, float) and
                      struct.pack(">d", float(value)) ==
                      struct.pack(">d", want))
            if not ok:
                return "line %d: %s is %r, expected %s" % (number, key, value,
                                                           field)
    return None


if __name__ == "__main__":
    problem = check(sys.argv[1], sys.argv[2])
    if problem:
        print("check_jsonl: " + problem)
        sys.exit(1)
