"""Apache DataSketches' theta bounds for (retained n, theta on the 63-bit scale) pairs, one per
stdin line: prints n, theta, then lower and upper bound at 1, 2 and 3 standard deviations.

It deserializes a hand-made compact image (serial version 3, estimation mode) with n
placeholder values below theta: the bounds depend only on n and theta.
"""
import struct, sys
from datasketches import compact_theta_sketch

SEED_HASH = 0x93CC  # of DataSketches' default seed 9001

def image(n, theta):
    # serial v3 compact image, estimation mode: 3 preamble longs, ordered|compact|read-only
    head = struct.pack("<BBBBBBHIfQ", 3, 3, 3, 12, 0, 0x1A, SEED_HASH, n, 1.0, theta)
    return head + b"".join(struct.pack("<Q", v) for v in range(1, n + 1))

for line in sys.stdin:
    n, theta = map(int, line.split())
    s = compact_theta_sketch.deserialize(image(n, theta))
    print(n, theta, " ".join(repr(x) for sd in (1, 2, 3) for x in (s.get_lower_bound(sd), s.get_upper_bound(sd))))
