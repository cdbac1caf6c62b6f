"""yarn_table.py THETA DIM FACTOR ORIGINAL BETA_FAST BETA_SLOW TRUNCATE < inspect
output: checks the values `llmc inspect --weight` printed ("first: ...") of a
rope table against transformers' _compute_yarn_parameters, computed here
from its source (float32 tensors emulated by rounding every tensor op to
float32). Prints the table and exits 1 on a mismatch beyond 2e-7 relative."""
import math
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


theta, dim, factor, original, beta_fast, beta_slow = (float(a) for a in sys.argv[1:7])
dim = int(dim)
truncate = sys.argv[7] == "true"


def correction_dim(rotations):
    return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))


low, high = correction_dim(beta_fast), correction_dim(beta_slow)
if truncate:
    low, high = math.floor(low), math.ceil(high)
low, high = max(low, 0), min(high, dim - 1)
if low == high:
    high += 0.001
want = []
for i in range(dim // 2):
    pos = f32(theta ** f32(f32(2 * i) / f32(dim)))
    extrap = f32(1.0 / pos)
    interp = f32(1.0 / f32(f32(factor) * pos))
    ramp = min(max(f32(f32(f32(i) - f32(low)) / f32(high - low)), 0.0), 1.0)
    extrap_factor = f32(1.0 - ramp)
    want.append(f32(f32(interp * f32(1.0 - extrap_factor)) + f32(extrap * extrap_factor)))
got = None
for line in sys.stdin:
    if line.strip().startswith("first:"):
        got = [float(v) for v in line.split()[1:]]
if not got:
    sys.exit("no 'first:' line in the input")
print("low %.6f high %.6f" % (low, high))
bad = False
for i, g in enumerate(got):
    ok = abs(g - want[i]) <= 2e-7 * abs(want[i])
    bad |= not ok
    print("inv_freq[%d] llmc %.9g transformers %.9g %s" % (i, g, want[i], "ok" if ok else "MISMATCH"))
sys.exit(1 if bad else 0)
