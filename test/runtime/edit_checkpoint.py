#!/usr/bin/env python3
# Reads and damages trainer checkpoints (format in
# runtime/include/traincc/runtime/loop/Checkpoint.h) for
# test/runtime/*.test.
#   edit_checkpoint.py info CKPT
#       parses the file as documented (header, sections, CRC-32 trailer)
#       and prints the section tags and sizes.
#   edit_checkpoint.py truncate CKPT OUT N     OUT = CKPT without its last N bytes
#   edit_checkpoint.py flip CKPT OUT OFFSET    one bit flipped at OFFSET (< 0:
#                                              from the end)
#   edit_checkpoint.py set-shape CKPT OUT NAME DIM0
#       changes the first dimension of state tensor NAME in the MODL
#       fingerprint and writes a valid CRC: a checkpoint of another layout.
import struct
import sys
import zlib


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def parse(data):
    if data[:8] != b"TCCCKP01":
        fail("bad magic")
    version, count, size, reserved = struct.unpack_from("<IIQQ", data, 8)
    if version != 1 or size != len(data) or reserved != 0:
        fail("bad header %r" % ((version, count, size, reserved),))
    crc, = struct.unpack_from("<I", data, len(data) - 8)
    if data[-4:] != b"TEND" or crc != zlib.crc32(data[:-8]):
        fail("bad trailer")
    sections, at = [], 32
    for _ in range(count):
        tag = data[at:at + 4].decode()
        length, = struct.unpack_from("<Q", data, at + 8)
        sections.append((tag, at + 16, length))
        at += 16 + (length + 7) // 8 * 8
    if at != len(data) - 8:
        fail("sections end at %d, the trailer starts at %d" %
             (at, len(data) - 8))
    return sections


def with_crc(body):
    return body + struct.pack("<I", zlib.crc32(body)) + b"TEND"


def set_shape(data, name, dim0):
    for tag, start, length in parse(data):
        if tag != "MODL":
            continue
        at = start + 4
        n, = struct.unpack_from("<I", data, at)
        at += 4 + n + 8 + 4 + 4 + 8
        count, = struct.unpack_from("<I", data, at)
        at += 4
        for _ in range(count):
            n, = struct.unpack_from("<I", data, at)
            tensor = data[at + 4:at + 4 + n].decode()
            at += 4 + n + 4 + 4
            rank, = struct.unpack_from("<i", data, at)
            at += 4
            if tensor == name:
                out = bytearray(data)
                struct.pack_into("<q", out, at, dim0)
                return with_crc(bytes(out[:-8]))
            at += 8 * rank + 8 + 8 + 4
    fail("no state tensor " + name)


def main():
    args = sys.argv[1:]
    with open(args[1], "rb") as f:
        data = f.read()
    if args[0] == "info":
        for tag, _, length in parse(data):
            print("%s %d" % (tag, length))
        return
    if args[0] == "truncate":
        out = data[:len(data) - int(args[3])]
    elif args[0] == "flip":
        out = bytearray(data)
        out[int(args[3])] ^= 0x10
        out = bytes(out)
    elif args[0] == "set-shape":
        out = set_shape(data, args[3], int(args[4]))
    else:
        fail("unknown command " + args[0])
    with open(args[2], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
