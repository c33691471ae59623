#!/usr/bin/env python3
"""Parse a 32-byte firmware header."""
import argparse
import struct
import sys
import zlib

HDR = struct.Struct("<4sBBBBIII12s")


def parse(buf: bytes) -> None:
    if len(buf) < HDR.size:
        sys.exit(f"only {len(buf)} bytes; header needs {HDR.size}")
    magic, major, minor, patch, flags, load, size, crc, build = HDR.unpack_from(buf)
    print(f"magic      {magic!r} {'ok' if magic == b'FWHD' else 'BAD'}")
    print(f"version    {major}.{minor}.{patch}  flags=0x{flags:02x}")
    print(f"load addr  0x{load:08x}")
    body = buf[HDR.size:HDR.size + size]
    print(f"size       {size} bytes (have {len(buf) - HDR.size})")
    build_id = build.rstrip(b"\0").decode("ascii", "replace")
    print(f"build id   {build_id}")
    if len(body) == size:
        actual = zlib.crc32(body) & 0xFFFFFFFF
        print(f"crc32      0x{crc:08x} {'ok' if actual == crc else f'BAD (body is 0x{actual:08x})'}")
    else:
        print("crc32      not checked: image body incomplete")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--hex")
    a = ap.parse_args()
    if a.hex:
        buf = bytes.fromhex(a.hex.replace("0x", "").replace(",", " "))
    elif a.file:
        with open(a.file, "rb") as fh:
            buf = fh.read(16 * 1024 * 1024)
    else:
        ap.error("give a file or --hex")
    parse(buf)


if __name__ == "__main__":
    main()
