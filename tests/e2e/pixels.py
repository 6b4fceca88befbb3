"""Pixels of the browser's PNG screenshots, without an imaging library: chromium writes
8-bit RGB or RGBA, non-interlaced PNGs, which zlib and the five PNG row filters decode."""

from __future__ import annotations

import struct
import zlib


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of a PNG screenshot."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        offset = y * (stride + 1)
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                      else corner)) & 0xFF
        rows.append(bytes(line) if channels == 3 else bytes(
            b for i in range(0, stride, 4) for b in line[i:i + 3]))
        previous = line
    return width, height, rows


def ink(data: bytes, *, threshold: int = 128) -> list[tuple[int, int]]:
    """The dark pixels (x, y) of a screenshot of dark text on a light background."""
    _, _, rows = png_pixels(data)
    return [(x // 3, y) for y, row in enumerate(rows) for x in range(0, len(row), 3)
            if sum(row[x:x + 3]) < 3 * threshold]


def difference(a: bytes, b: bytes) -> float:
    """Share of the pixels that are ink in one screenshot and not in the other (the
    symmetric difference of their ink over their union)."""
    ink_a, ink_b = set(ink(a)), set(ink(b))
    union = ink_a | ink_b
    return len(ink_a ^ ink_b) / len(union) if union else 0.0
