#!/usr/bin/env python3
"""compare.py GOT.f32 WANT.f32 TOL: max |got - want| over raw float32 files
must be <= TOL (and the argmax must agree). Prints the difference."""
import struct
import sys

got, want, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
a = open(got, "rb").read()
b = open(want, "rb").read()
if len(a) != len(b):
    sys.exit(f"{got}: {len(a)} bytes, reference {len(b)}")
n = len(a) // 4
x = struct.unpack("<%df" % n, a)
y = struct.unpack("<%df" % n, b)
diff = max(abs(p - q) for p, q in zip(x, y))
same = max(range(n), key=x.__getitem__) == max(range(n), key=y.__getitem__)
print(f"max |diff| {diff:.3g} (tolerance {tol}), argmax {'same' if same else 'DIFFERENT'}")
sys.exit(0 if diff <= tol and same else 1)
