"""A MASTER_PORT for the tests' replicas.

A port the kernel hands out for bind(0) comes from the ephemeral range,
the same range it takes the local ports of outgoing connections from: in
the time between this process closing its probe socket and rank 0
listening, a connection of a test running alongside can take it (seen:
"cannot listen on port 41625: Address already in use"). So the port is
drawn at random below that range, and kept only if it binds now.
"""
import random
import socket


def ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            return int(ports.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    low, high = 10000, ephemeral_start() - 1
    for _ in range(100):
        port = random.randint(low, high)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port between {low} and {high}")
