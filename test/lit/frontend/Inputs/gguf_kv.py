"""A GGUF file's metadata, walked as the bad-GGUF test scripts need it:
entries(b) yields (key, value type, offset of the value) in order, and
end_of_metadata(b) is the offset where the tensor infos start."""
import struct

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def skip(b, off, t):
    """The offset after a value of type t at off."""
    if t in SIZES:
        return off + SIZES[t]
    if t == 8:
        return off + 8 + struct.unpack_from("<Q", b, off)[0]
    if t == 9:
        et, n = struct.unpack_from("<IQ", b, off)
        off += 12
        for _ in range(n):
            off = skip(b, off, et)
        return off
    raise SystemExit(f"unknown GGUF value type {t}")


def entries(b):
    assert b[:4] == b"GGUF"
    off = 24
    for _ in range(struct.unpack_from("<Q", b, 16)[0]):
        klen = struct.unpack_from("<Q", b, off)[0]
        key = bytes(b[off + 8:off + 8 + klen])
        off += 8 + klen
        t = struct.unpack_from("<I", b, off)[0]
        yield key, t, off + 4
        off = skip(b, off + 4, t)


def end_of_metadata(b):
    end = 24
    for _, t, value in entries(b):
        end = skip(b, value, t)
    return end
