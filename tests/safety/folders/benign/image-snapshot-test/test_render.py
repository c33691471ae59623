"""Snapshot test for a rendered PNG, stored as a base64 data URI."""
import base64
import os
import struct
import zlib
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def render_badge(width: int = 4, height: int = 2, rgb=(46, 160, 67)) -> bytes:
    """Tiny solid-colour PNG, standing in for the user's renderer."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def as_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def check_snapshot(name: str, png: bytes) -> None:
    golden = FIXTURES / f"{name}.b64"
    actual = as_data_uri(png)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not golden.exists():
        FIXTURES.mkdir(exist_ok=True)
        golden.write_text(actual + "\n")
        return
    expected = golden.read_text().strip()
    assert actual == expected, f"{name} changed; rerun with UPDATE_SNAPSHOTS=1 if intended"


def test_badge_snapshot():
    check_snapshot("badge-green", render_badge())
