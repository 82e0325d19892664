#!/usr/bin/env python3
"""Failure handling of data-parallel runs: a replica that dies or hangs
must make the others stop with a clear error, never wait forever.

  faults.py SCENARIO --trainer TRAINER --workdir DIR

Scenarios (2 replicas of TRAINER training on generated data for a long
time; once rank 0 has logged a step, rank 1 is hit):
  env-kill     torchrun-style launch, rank 1 killed (SIGKILL)
  env-stop     torchrun-style launch, rank 1 stopped (SIGSTOP): rank 0's
               collective times out (--dist-timeout 2)
  env-alone    WORLD_SIZE=2 but rank 1 never starts: the rendezvous times
               out
  env-seed     the replicas disagree on --seed: both refuse to start
  mpi-kill     mpirun, rank 1 killed: mpirun ends the job
  mpi-stop     mpirun, rank 1 stopped: rank 0 times out and aborts the job
  env-term     torchrun-style launch, SIGTERM to rank 0 only: the replicas
               agree to stop after the same step, rank 0 writes
               interrupted.ckpt, both exit with status 143
Prints what happened (exit codes, seconds, the error lines) and exits 1 when
a process hangs past its limit or the error is missing.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime"))
import make_data  # noqa: E402
from rendezvous_port import free_port  # noqa: E402

LIMIT = 30  # seconds any process may take to stop after the fault


def wait_for_step(log, procs, limit=30):
    """Waits until rank 0's log has a step line (training is under way)."""
    end = time.time() + limit
    while time.time() < end:
        if os.path.exists(log) and '"step"' in open(log).read():
            return True
        if any(p.poll() is not None for p in procs):
            return False
        time.sleep(0.05)
    return False


def finish(procs, limit):
    """Waits for every process; kills the ones still running after
    `limit` seconds. Returns (exit codes, seconds, outputs)."""
    start = time.time()
    outputs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(0.1, limit -
                                               (time.time() - start)))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += "\n<killed by faults.py: still running after the limit>"
        outputs.append(out)
    return [p.returncode for p in procs], time.time() - start, outputs


def error_lines(text):
    # Ours, and mpirun's account of the job.
    return [line for line in text.splitlines()
            if "error" in line.lower() or "exited on signal" in line]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=["env-kill", "env-stop",
                                             "env-alone", "env-seed",
                                             "env-term",
                                             "mpi-kill", "mpi-stop"])
    parser.add_argument("--trainer", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    work = args.workdir
    os.makedirs(work, exist_ok=True)
    sys.argv = ["make_data.py", work, "256"]
    make_data.main()
    log = os.path.join(work, "rank0.jsonl")
    if os.path.exists(log):
        os.remove(log)
    common = ["train", "--train-x", os.path.join(work, "x.npy"),
              "--train-y", os.path.join(work, "y.npy"), "--epochs", "100000",
              "--threads", "1", "--dist-timeout", "2", "--log", log,
              "--checkpoint-dir", os.path.join(work, "ckpt")]
    kind, fault = args.scenario.split("-")
    procs = []
    victim = None
    if kind == "env":
        port = str(free_port())
        ranks = [0] if fault == "alone" else [0, 1]
        for rank in ranks:
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            extra = ["--seed", str(rank)] if fault == "seed" else []
            procs.append(subprocess.Popen(
                [args.trainer] + common + extra, env=env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        if fault in ("kill", "stop"):
            victim = procs[1].pid
        if fault == "term":
            victim = procs[0].pid
    else:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        pidfile = os.path.join(work, "rank1.pid")
        if os.path.exists(pidfile):
            os.remove(pidfile)
        quoted = " ".join("'" + a + "'" for a in [args.trainer] + common)
        procs.append(subprocess.Popen(
            ["mpirun", "--allow-run-as-root", "--oversubscribe",
             "--bind-to", "none", "-np", "1", args.trainer] + common +
            [":", "-np", "1", "sh", "-c",
             f"echo $$ > '{pidfile}'; exec {quoted}"],
            env=env, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT))

    if fault in ("kill", "stop", "term"):
        if not wait_for_step(log, procs):
            codes, _, outputs = finish(procs, 5)
            print("training did not start:", codes, "\n".join(outputs))
            return 1
        if victim is None:
            victim = int(open(pidfile).read())
        if fault == "term":
            os.kill(victim, signal.SIGTERM)
            print("rank 0 sent SIGTERM")
        else:
            os.kill(victim,
                    signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
            print(f"rank 1 {'killed' if fault == 'kill' else 'stopped'}")
    # Rank 0 (or mpirun) first: a stopped rank 1 only ends when killed.
    codes, seconds, outputs = finish(procs[:1], LIMIT)
    if fault == "stop" and kind == "env":
        os.kill(victim, signal.SIGKILL)
    more = finish(procs[1:], LIMIT)
    codes += more[0]
    outputs += more[2]
    print(f"{args.scenario}: exit codes {codes} after {seconds:.1f} s")
    for line in error_lines(outputs[0]):
        print("rank 0 |", line.strip())
    for out in outputs[1:]:
        for line in error_lines(out):
            print("rank 1 |", line.strip())
    hung = any("still running after the limit" in o for o in outputs)
    if fault == "term":
        for line in outputs[0].splitlines():
            if line.startswith("interrupted by"):
                print("rank 0 |", line)
        written = sorted(os.listdir(os.path.join(work, "ckpt")))
        print("checkpoints:", " ".join(w for w in written if "interrupted" in w))
        return 1 if hung or codes != [143, 143] else 0
    return 1 if hung or codes[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
