#!/usr/bin/env python3
"""Apache DataSketches side of loxo's DataSketches HLL interop tests.

Run by tests/tests/datasketches_interop.rs with the `datasketches` PyPI package.
Keys are given as a spec the Rust side expands identically:
  str:PREFIX:START:END  -> the strings PREFIX + str(i) for START <= i < END (UTF-8)
  int:START:END         -> the Python ints START <= i < END (DataSketches hashes the
                           8 little-endian bytes of the int64)

Commands (results on stdout as "name value" lines; floats as repr, exact):
  build LGK TYPE KEYS OUT MODE
      Build a DataSketches sketch (TYPE = HLL_4 | HLL_6 | HLL_8) from KEYS and write
      it to OUT; MODE = compact | updatable | full (start_full_size, compact).
  check LGK IMAGE KEYS OTHER
      Deserialize the loxo-made IMAGE; build DataSketches' own HLL_8 sketch of KEYS
      (start_full_size, so its HIP estimate starts from the same empty state as
      loxo's) and a default sketch of OTHER; print the estimates of the image and of
      the own sketch, whether their registers agree after a union (alone, and with
      the OTHER sketch), and the union estimates.
  info LGK IMAGE
      Deserialize IMAGE; print its lgK, whether it is empty, and its estimate.
"""

import sys

import datasketches as ds


def keys(spec):
    parts = spec.split(":")
    if parts[0] == "str":
        prefix, start, end = parts[1], int(parts[2]), int(parts[3])
        return [prefix + str(i) for i in range(start, end)]
    if parts[0] == "int":
        return list(range(int(parts[1]), int(parts[2])))
    raise SystemExit(f"bad key spec {spec!r}")


def sketch(lgk, tgt, key_spec, full):
    s = ds.hll_sketch(lgk, tgt, full)
    for k in keys(key_spec):
        s.update(k)
    return s


def union_hll8(lgk, *sketches):
    u = ds.hll_union(lgk)
    for s in sketches:
        u.update(s)
    return u.get_result(ds.tgt_hll_type.HLL_8)


def registers(lgk, s):
    """The k HLL_8 registers of a sketch in HLL mode, as hex."""
    img = s.serialize_updatable()
    if img[7] & 3 != 2:
        raise SystemExit("union result is not in HLL mode")
    return img[40 : 40 + (1 << lgk)].hex()


def main(argv):
    cmd = argv[1]
    lgk = int(argv[2])
    if cmd == "build":
        tgt = getattr(ds.tgt_hll_type, argv[3])
        mode = argv[6]
        s = sketch(lgk, tgt, argv[4], mode == "full")
        img = s.serialize_updatable() if mode == "updatable" else s.serialize_compact()
        with open(argv[5], "wb") as f:
            f.write(img)
        print("estimate", repr(s.get_estimate()))
        print("mode", img[7] & 3)
    elif cmd == "check":
        with open(argv[3], "rb") as f:
            image = ds.hll_sketch.deserialize(f.read())
        own = sketch(lgk, ds.tgt_hll_type.HLL_8, argv[4], True)
        other = sketch(lgk, ds.tgt_hll_type.HLL_4, argv[5], False)
        print("image_lg_k", image.lg_config_k)
        print("image_estimate", repr(image.get_estimate()))
        print("own_estimate", repr(own.get_estimate()))
        ui, uo = union_hll8(lgk, image), union_hll8(lgk, own)
        print("union_registers_equal", int(registers(lgk, ui) == registers(lgk, uo)))
        print("union_image_estimate", repr(ui.get_estimate()))
        print("union_own_estimate", repr(uo.get_estimate()))
        ci, co = union_hll8(lgk, image, other), union_hll8(lgk, own, other)
        print("cross_registers_equal", int(registers(lgk, ci) == registers(lgk, co)))
        print("cross_image_estimate", repr(ci.get_estimate()))
        print("cross_own_estimate", repr(co.get_estimate()))
    elif cmd == "info":
        with open(argv[3], "rb") as f:
            image = ds.hll_sketch.deserialize(f.read())
        print("image_lg_k", image.lg_config_k)
        print("is_empty", int(image.is_empty()))
        print("image_estimate", repr(image.get_estimate()))
    else:
        raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    main(sys.argv)
