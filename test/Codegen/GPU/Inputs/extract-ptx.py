"""Prints the PTX (assembly) of the first gpu.object in MLIR text read from stdin.

The GPU codegen pipeline embeds the PTX as an MLIR string attribute, whose
printer escapes quotes, backslashes and non-printable bytes (\\XX in hex).
"""
import re
import sys

text = sys.stdin.read()
match = re.search(r'#gpu\.object<.*?assembly = "((?:[^"\\]|\\.)*)"', text, re.S)
if not match:
    sys.exit("no gpu.object with a string payload in the input")
escape = re.compile(r'\\([0-9A-Fa-f]{2}|.)')
sys.stdout.write(escape.sub(
    lambda m: chr(int(m.group(1), 16)) if len(m.group(1)) == 2 else m.group(1),
    match.group(1)))
