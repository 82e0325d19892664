#!/usr/bin/env python3
# Runs a command with its stdout on a pseudo-terminal (so isatty(stdout) is
# true) and prints what it wrote with the terminal controls made visible:
# '\r' as <CR>, ESC[K as <EL>, each '\n' kept. Exits with the command's
# status. Stderr goes to this script's stderr.
#   run_in_pty.py CMD [ARGS...]
import errno
import os
import subprocess
import sys


def main():
    master, slave = os.openpty()
    child = subprocess.Popen(sys.argv[1:], stdout=slave,
                             stdin=subprocess.DEVNULL)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError as e:  # EIO: the child closed the terminal
            if e.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    status = child.wait()
    # The terminal turns '\n' into '\r\n' (onlcr); undo that first.
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    text = text.replace("\r", "<CR>").replace("\x1b[K", "<EL>")
    sys.stdout.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
