#!/usr/bin/env python3
"""Apache DataSketches side of loxo's DataSketches theta interop tests.

Run by tests/tests/datasketches_theta.rs with the `datasketches` PyPI package.
Results on stdout as "name value" lines; floats as repr (exact).

Commands:
  setops SEED A B OUT
      Deserialize the compact theta images A and B with SEED (a loxo seed's
      fingerprint, or 9001 for DataSketches' own images); compute
      theta_union(lg_k=20, seed) (large enough never to trim), theta_intersection
      and theta_a_not_b; print each input's and result's estimate, retained count,
      theta64, emptiness and 2-sigma bounds, and write the results' images to
      OUT.union, OUT.inter, OUT.anotb.
  build LGK SPEC OUT ORDERED COMPRESS
      update_theta_sketch(LGK) fed the Python ints START <= i < END (SPEC =
      START:END; DataSketches hashes each int's 8 little-endian bytes), then
      compact(ORDERED == 1).serialize(compress=COMPRESS == 1) to OUT; print the
      compact sketch's figures.
  seedcheck SEED IMAGE
      Try to deserialize IMAGE with SEED; print "ok 1" or "ok 0".
"""

import sys

import datasketches as ds


def load(path, seed):
    with open(path, "rb") as f:
        return ds.compact_theta_sketch.deserialize(f.read(), seed)


def show(name, s):
    print(f"{name}_estimate {s.get_estimate()!r}")
    print(f"{name}_retained {s.num_retained}")
    print(f"{name}_theta64 {s.theta64}")
    print(f"{name}_empty {int(s.is_empty())}")
    print(f"{name}_lower2 {s.get_lower_bound(2)!r}")
    print(f"{name}_upper2 {s.get_upper_bound(2)!r}")


def save(path, s):
    with open(path, "wb") as f:
        f.write(s.serialize())


def main(argv):
    cmd = argv[1]
    if cmd == "setops":
        seed = int(argv[2])
        a, b = load(argv[3], seed), load(argv[4], seed)
        show("a", a)
        show("b", b)
        u = ds.theta_union(20, 1.0, seed)
        u.update(a)
        u.update(b)
        union = u.get_result()
        i = ds.theta_intersection(seed)
        i.update(a)
        i.update(b)
        inter = i.get_result()
        anotb = ds.theta_a_not_b(seed).compute(a, b)
        for name, s in (("union", union), ("inter", inter), ("anotb", anotb)):
            show(name, s)
            save(f"{argv[5]}.{name}", s)
    elif cmd == "build":
        lgk = int(argv[2])
        start, end = (int(x) for x in argv[3].split(":"))
        s = ds.update_theta_sketch(lgk)
        for k in range(start, end):
            s.update(k)
        c = s.compact(argv[5] == "1")
        with open(argv[4], "wb") as f:
            f.write(c.serialize(argv[6] == "1"))
        show("image", c)
        print(f"image_ordered {int(c.is_ordered())}")
    elif cmd == "seedcheck":
        try:
            load(argv[3], int(argv[2]))
            print("ok 1")
        except Exception:  # DataSketches raises on a seed hash mismatch
            print("ok 0")
    else:
        raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    main(sys.argv)
