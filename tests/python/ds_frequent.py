#!/usr/bin/env python3
"""Apache DataSketches side of loxo's frequent items interop test.

Run by tests/tests/datasketches_frequent.rs with the `datasketches` PyPI package.

    ds_frequent.py QUERIES THRESHOLD MERGED_OUT IMAGE...

Deserializes every loxo-made IMAGE as a `frequent_strings_sketch`, merges them all
into a copy of the first (DataSketches' own merge: weights and offsets add, the map
purges when it overflows) and writes the merged sketch's serialization to
MERGED_OUT. Prints, tab-separated (items contain spaces):

  meta  LABEL  num_active_items  total_weight  is_empty
  q     LABEL  ITEM  estimate  lower_bound  upper_bound      (every line of QUERIES)
  nfn   ITEM  estimate  lower_bound  upper_bound   (merged, NO_FALSE_NEGATIVES > THRESHOLD)
  nfp   ITEM  estimate  lower_bound  upper_bound   (merged, NO_FALSE_POSITIVES > THRESHOLD)

LABEL is the image's index from 0, or M for the merge.
"""

import sys

import datasketches as ds


def main():
    queries_path, threshold, merged_out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(queries_path, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()]
    sketches = []
    for path in sys.argv[4:]:
        with open(path, "rb") as f:
            sketches.append(ds.frequent_strings_sketch.deserialize(f.read()))
    merged = ds.frequent_strings_sketch.deserialize(sketches[0].serialize())
    for s in sketches[1:]:
        merged.merge(s)
    with open(merged_out, "wb") as f:
        f.write(merged.serialize())
    out = []
    labelled = [(str(i), s) for i, s in enumerate(sketches)] + [("M", merged)]
    for label, s in labelled:
        out.append(f"meta\t{label}\t{s.num_active_items}\t{s.total_weight}\t{int(s.is_empty())}")
        for q in queries:
            out.append(
                f"q\t{label}\t{q}\t{s.get_estimate(q)}\t{s.get_lower_bound(q)}\t{s.get_upper_bound(q)}"
            )
    for tag, err in [
        ("nfn", ds.frequent_items_error_type.NO_FALSE_NEGATIVES),
        ("nfp", ds.frequent_items_error_type.NO_FALSE_POSITIVES),
    ]:
        for item, est, lb, ub in merged.get_frequent_items(err, threshold):
            out.append(f"{tag}\t{item}\t{est}\t{lb}\t{ub}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
