#!/usr/bin/env python3
"""Two builds of one trainer compared kernel by kernel.

A compiler change moves a few kernels and leaves the rest alone, but the
whole step varies between runs by more than the change (a shared VM). This
lines up the kernels of two `--profile-kernels` trainers by their
`traincc --report` rows (kernel, iterations, bytes: the numbering shifts
when kernels come or go) and prints the kernels whose time moved most,
those only one side has, and the per-class totals.

Inputs, for each side: the `--report` output of the compile and the
trainer's stderr from a run with TRAINCC_SLOWEST_KERNELS=0 (every kernel
listed). For example:

  traincc m.onnx --batch-size 128 --profile-kernels --report -o a > a.report
  TRAINCC_SLOWEST_KERNELS=0 ./a train ... --max-steps 3 2> a.profile
  (the same for b, with the other traincc)
  /usr/bin/python3 bench/compare_kernels.py a.report a.profile b.report b.profile

Alternate the two trainers' runs and compare more than one pair: a kernel
that moves the same way in every pair moved because of the change. A
profile argument may also name several runs, comma-separated: each
kernel's time is then its least over them (a busy moment of the machine
only ever adds time).

Usage: compare_kernels.py A_REPORT A_PROFILE B_REPORT B_PROFILE
                          [--step micro_step] [--top N]
"""
import argparse
import difflib
import re
import sys


def report_rows(path, step):
    """[(kernel number, "kernel iterations bytes")] of `step`'s CPU table."""
    rows, inside = [], False
    with open(path) as report:
        for line in report:
            if line.startswith("cpu "):
                inside = line.strip() == f"cpu {step}:"
                continue
            fields = line.split()
            if inside and len(fields) >= 4 and fields[0].isdigit():
                rows.append((int(fields[0]), " ".join(fields[1:4])))
            elif inside and line.startswith(step + ":"):
                inside = False
    return rows


def profile_times(path, step):
    """{kernel number: (class, ms per call)} from the slowest-kernels list
    of `step`'s table."""
    times, inside = {}, False
    pattern = re.compile(r"\s+(\d+)\s+([a-z][a-z ]*?)\s+([\d.]+)\s+[\d.]+%")
    with open(path) as profile:
        for line in profile:
            if not line.startswith(" "):
                inside = line.startswith(step + ":")
                continue
            match = pattern.match(line) if inside else None
            if match:
                times[int(match.group(1))] = (match.group(2),
                                              float(match.group(3)))
    return times


def least_times(paths, step):
    """profile_times of each comma-separated path, each kernel's least."""
    least = {}
    for path in paths.split(","):
        for kernel, (kind, ms) in profile_times(path, step).items():
            if kernel not in least or ms < least[kernel][1]:
                least[kernel] = (kind, ms)
    return least


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a_report")
    parser.add_argument("a_profile")
    parser.add_argument("b_report")
    parser.add_argument("b_profile")
    parser.add_argument("--step", default="micro_step")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()

    rows_a = report_rows(args.a_report, args.step)
    rows_b = report_rows(args.b_report, args.step)
    times_a = least_times(args.a_profile, args.step)
    times_b = least_times(args.b_profile, args.step)
    if not rows_a or not rows_b:
        sys.exit(f"compare_kernels: no 'cpu {args.step}:' table in a report")
    if not times_a or not times_b:
        sys.exit("compare_kernels: no kernel times in a profile (run the "
                 "trainer with TRAINCC_SLOWEST_KERNELS=0)")

    matcher = difflib.SequenceMatcher(
        a=[row[1] for row in rows_a], b=[row[1] for row in rows_b],
        autojunk=False)
    moved, only_a, only_b = [], [], []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(a0, a1), range(b0, b1)):
                ka, kb = rows_a[i][0], rows_b[j][0]
                if ka in times_a and kb in times_b:
                    moved.append((times_b[kb][1] - times_a[ka][1], ka, kb,
                                  rows_a[i][1], times_a[ka][1],
                                  times_b[kb][1]))
            continue
        only_a += [(rows_a[i], times_a.get(rows_a[i][0])) for i in
                   range(a0, a1)]
        only_b += [(rows_b[j], times_b.get(rows_b[j][0])) for j in
                   range(b0, b1)]

    def classes(times):
        totals = {}
        for kernel_class, ms in times.values():
            totals[kernel_class] = totals.get(kernel_class, 0.0) + ms
        return totals

    print(f"{args.step}: {len(rows_a)} kernels in A, {len(rows_b)} in B, "
          f"{len(moved)} matched")
    moved.sort()
    for title, part in (("faster in B", moved[:args.top]),
                        ("slower in B", moved[::-1][:args.top])):
        print(f"\n{title} (ms per call: A -> B, kernel numbers A/B)")
        for delta, ka, kb, what, ms_a, ms_b in part:
            print(f"  {delta:+9.3f}  {ka:5d}/{kb:<5d} {what:60s} "
                  f"{ms_a:9.3f} -> {ms_b:9.3f}")
    for title, part in (("only in A", only_a), ("only in B", only_b)):
        if part:
            print(f"\n{title}")
            for (number, what), time in part:
                ms = f"{time[1]:9.3f} ms" if time else "   not timed"
                print(f"  {number:5d}  {what:60s} {ms}")
    class_a, class_b = classes(times_a), classes(times_b)
    print("\nby class (ms per call): A, B, B - A")
    for name in sorted(set(class_a) | set(class_b)):
        a, b = class_a.get(name, 0.0), class_b.get(name, 0.0)
        print(f"  {name:22s} {a:10.3f} {b:10.3f} {b - a:+10.3f}")


if __name__ == "__main__":
    main()
