#!/usr/bin/env python3
# Runs a trainer and sends it a signal in the middle of training, without
# depending on timing: the trainer's --log is a FIFO this script reads, so
# the trainer blocks once the pipe is full and cannot finish the run before
# the signal arrives. The log lines are copied to LOG.
#   signal_run.py TERM|INT N LOG -- TRAINER ARGS...
# Sends the signal after the N-th step line, prints the trainer's output,
# then "exit status S" (S < 0: killed by signal -S).
import os
import signal
import subprocess
import sys
import tempfile
import threading


def main():
    name, count, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    command = sys.argv[sys.argv.index("--") + 1:]
    folder = tempfile.mkdtemp()
    fifo = os.path.join(folder, "log.fifo")
    os.mkfifo(fifo)
    process = subprocess.Popen(command + ["--log", fifo])

    def unblock():
        # A trainer that fails before opening its log would leave the open()
        # below waiting forever: once it has exited, open the FIFO for
        # writing so the reader sees end of file.
        process.wait()
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # the reader is gone already

    threading.Thread(target=unblock, daemon=True).start()
    steps = 0
    with open(fifo) as lines, open(log, "w") as out:
        for line in lines:
            out.write(line)
            if '"event":"step"' in line:
                steps += 1
                if steps == count:
                    process.send_signal(getattr(signal, "SIG" + name))
    status = process.wait()
    os.unlink(fifo)
    os.rmdir(folder)
    sys.stdout.flush()
    print("exit status %d" % status)


if __name__ == "__main__":
    main()
