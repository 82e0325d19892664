#!/usr/bin/env python3
# An independent implementation of the augmentation draws documented in
# runtime/include/traincc/runtime/data/Augment.h. AugmentTest.cpp pins the
# draws this script prints; rerun it when the rules change.
from sampler_reference import MASK, SplitMix64, mix, nth_output

AUGMENT_STREAM = int.from_bytes(b"augment!", "big")


def draw(seed, epoch, position, padding):
    stream = mix(seed ^ AUGMENT_STREAM)
    key = nth_output(stream, epoch + 1)
    rng = SplitMix64(nth_output(key, position + 1))
    flip = rng.next() >> 63
    top = rng.below(2 * padding + 1)
    left = rng.below(2 * padding + 1)
    return flip, top, left


def main():
    for seed, epoch, position in [(0, 0, 0), (0, 0, 1), (0, 1, 0), (7, 3, 12),
                                  (2**64 - 1, 5, 1000)]:
        print(seed, epoch, position, draw(seed, epoch, position, 4))


if __name__ == "__main__":
    main()
