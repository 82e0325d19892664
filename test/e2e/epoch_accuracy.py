#!/usr/bin/env python3
"""Compares the validation accuracy of the last epoch of two trainer logs.

Usage: epoch_accuracy.py REFERENCE.jsonl CANDIDATE.jsonl MAX_POINTS
Prints both accuracies and their difference in points (percent) and exits 1
when the candidate is more than MAX_POINTS below the reference.
"""
import json
import sys


def last_accuracy(path):
    epochs = [json.loads(line) for line in open(path)]
    epochs = [e for e in epochs if e.get("event") == "epoch"]
    return epochs[-1]["val_acc"]


def main():
    reference, candidate = last_accuracy(sys.argv[1]), last_accuracy(sys.argv[2])
    points = 100.0 * (candidate - reference)
    ok = points >= -float(sys.argv[3])
    print(f"val_acc reference {reference:.4f}, candidate {candidate:.4f}, "
          f"difference {points:+.2f} points: {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
