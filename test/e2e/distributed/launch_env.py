#!/usr/bin/env python3
"""Starts N replicas the way torchrun does, without torch: each process gets
RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT.

  launch_env.py [--rank-env R NAME=VALUE]... N COMMAND [ARGS...]

--rank-env sets NAME=VALUE for rank R only (a fault on one replica).

Prints rank 0's output as it is, then every other rank's lines prefixed
with "[rank R] ", and exits with the first non-zero exit code (0 when all
succeed). Replicas still running after 120 s are killed (exit 124).
"""
import os
import subprocess
import sys

from rendezvous_port import free_port


def main():
    args = sys.argv[1:]
    rank_env = {}
    while args[0] == "--rank-env":
        name, value = args[2].split("=", 1)
        rank_env.setdefault(int(args[1]), {})[name] = value
        args = args[3:]
    n = int(args[0])
    command = args[1:]
    port = str(free_port())
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, **rank_env.get(rank, {}))
        procs.append(subprocess.Popen(command, env=env, text=True,
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT))
    codes = []
    for rank, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            p.returncode = 124
        codes.append(p.returncode)
        for line in out.splitlines():
            print(line if rank == 0 else f"[rank {rank}] {line}")
    return next((c for c in codes if c != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
