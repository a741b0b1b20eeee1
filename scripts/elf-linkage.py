#!/usr/bin/env python3
"""How a 64-bit ELF binary is linked, from its header: "static" or "dynamic" (a PT_INTERP
program header names a loader), then "PIE" or "non-PIE" (ET_DYN or ET_EXEC). Prints e.g.
"static, non-PIE" — the words `agent --version` uses — and exits 1 for a file that is not a
64-bit ELF. scripts/bench-launch.sh and scripts/release-smoke.sh ask it of the binary they
measure or installed.

    python3 scripts/elf-linkage.py BINARY
"""

import struct
import sys


def linkage(path):
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
            return None
        e_type, = struct.unpack_from("<H", head, 16)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    types = [struct.unpack_from("<I", table, i * phentsize)[0] for i in range(phnum)]
    linked = "dynamic" if 3 in types else "static"  # PT_INTERP
    pie = "PIE" if e_type == 3 else "non-PIE"  # ET_DYN / ET_EXEC
    return f"{linked}, {pie}"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    found = linkage(sys.argv[1])
    if found is None:
        sys.exit(f"elf-linkage: {sys.argv[1]} is not a 64-bit ELF file")
    print(found)
