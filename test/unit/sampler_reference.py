#!/usr/bin/env python3
# An independent implementation of the data-order rules documented in
# runtime/include/traincc/runtime/data/Sampler.h and support/Random.h.
# SamplerTest.cpp pins the sequences this script prints; rerun it when the
# rules change.

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def nth_output(seed, k):
    return mix((seed + k * GAMMA) & MASK)


class SplitMix64:
    def __init__(self, state):
        self.state = state

    def next(self):
        self.state = (self.state + GAMMA) & MASK
        return mix(self.state)

    def below(self, bound):  # Lemire's multiply-and-reject
        if bound <= 1:
            return 0
        product = self.next() * bound
        if product & MASK < bound:
            threshold = ((1 << 64) - bound) % bound
            while product & MASK < threshold:
                product = self.next() * bound
        return product >> 64

    def unit(self):
        return (self.next() >> 11) * 2.0**-53


def shuffled(seed, epoch, n):
    rng = SplitMix64(nth_output(seed, epoch + 1))
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def weighted(seed, epoch, labels, weights):
    members = [[i for i, l in enumerate(labels) if l == c]
               for c in range(len(weights))]
    prefix, total = [], 0.0
    for c, w in enumerate(weights):
        total += w * float(len(members[c]))
        prefix.append(total)
    last = max(c for c, w in enumerate(weights) if w > 0 and members[c])
    rng = SplitMix64(nth_output(seed, epoch + 1))
    order = []
    for _ in labels:
        u = rng.unit() * total
        c = 0
        while c < last and not u < prefix[c]:
            c += 1
        order.append(members[c][rng.below(len(members[c]))])
    return order


if __name__ == "__main__":
    rng = SplitMix64(1234567)
    print("splitmix64(1234567):", [rng.next() for _ in range(5)])
    print("shuffle seed 42 epoch 0:", shuffled(42, 0, 10))
    print("shuffle seed 42 epoch 1:", shuffled(42, 1, 10))
    print("weighted seed 7:",
          weighted(7, 0, [0, 1, 2, 0, 1, 2, 0, 1, 2, 2], [1.0, 0.0, 3.0]))
    rng = SplitMix64(99)
    print("below(10) seed 99:", [rng.below(10) for _ in range(8)])
    print("below(2^63) seed 5:", SplitMix64(5).below(1 << 63))
