#!/usr/bin/env python3
"""Where one epoch's per-frame instructions go, by inlined call chain.

`frame_profile.py` attributes a frame's instructions to the functions the symbol
table names, but most of the per-frame path is inlined into `feed`. This tool counts
every instruction executed inside `feed` in one epoch by its guest address (from the
same QEMU log of `-d exec,nochain,in_asm`), then asks `llvm-symbolizer` for each
address's inlined call chain (the release build carries line tables) and prints the
instructions per frame by the chain's outer frames (`feed > ... > count >
hash_and_source`) and by innermost function.

    LOXO_QEMU_ARGS="-d exec,nochain,in_asm -D /tmp/q.log" \\
        cargo xtask demo --summary --icount --pcap CAPTURE.pcap
    python3 firmware/tools/line_profile.py /tmp/q.log \\
        firmware/target/thumbv7em-none-eabihf/release/loxo-firmware --epoch 1 [--depth 4]

Needs `llvm-symbolizer` on the PATH (Debian: the `llvm` package).
"""
import argparse
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frame_profile as fp  # noqa: E402

EPOCH = 16384


def counts(log, feed, epoch):
    """Executions of each guest instruction inside `feed` during `epoch`, and the
    number of frames seen there."""
    count = collections.Counter()
    lo, hi = epoch * EPOCH, (epoch + 1) * EPOCH
    n = 0
    for blocks in fp.calls(log, feed):
        if n >= hi:
            break
        if n >= lo:
            for _, ran in blocks:
                count.update(ran)
        n += 1
    return count, min(n, hi) - lo


def short(name):
    """A symbolizer frame's function, without path, generics or hash."""
    name = re.sub(r'::h[0-9a-f]{16}$', '', name)
    for esc, c in (('$u7b$', '{'), ('$u7d$', '}'), ('$LT$', '<'), ('$GT$', '>'),
                   ('$C$', ','), ('$u20$', ' '), ('$RF$', '&')):
        name = name.replace(esc, c)
    name = name.replace('_{{closure}}', '{{closure}}')
    name = re.sub(r'<[^<>]*>', '', re.sub(r'<[^<>]*>', '', name))
    parts = [p for p in name.split('::') if p]
    if parts and parts[-1] == '{{closure}}' and len(parts) > 1:
        return parts[-2] + '::{{closure}}'
    return parts[-1] if parts else name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('log')
    ap.add_argument('elf')
    ap.add_argument('--epoch', type=int, default=0, help='epoch (16 384 frames each)')
    ap.add_argument('--depth', type=int, default=4, help='outer frames of a chain shown')
    ap.add_argument('--top', type=int, default=40)
    a = ap.parse_args()
    count, frames = counts(a.log, fp.feed_address(a.elf), a.epoch)
    if frames <= 0:
        sys.exit('no frame of that epoch in the log')
    addrs = sorted(count)
    out = subprocess.run(['llvm-symbolizer', '--obj=' + a.elf, '--inlining', '--demangle'],
                         input=''.join(f'{x:#x}\n' for x in addrs),
                         capture_output=True, text=True, check=True).stdout
    chains, inner = collections.Counter(), collections.Counter()
    for addr, chunk in zip(addrs, out.strip('\n').split('\n\n')):
        names = [short(n) for n in chunk.split('\n')[0::2]]
        outer = list(reversed(names))
        chains[' > '.join(outer[:a.depth])] += count[addr]
        inner[names[0]] += count[addr]
    total = sum(count.values())
    print(f'{frames} frames, {total / frames:.1f} instructions per frame in feed')
    print(f'\n{"per frame":>9s}  chain (outermost first, {a.depth} frames)')
    for k, v in chains.most_common(a.top):
        print(f'{v / frames:9.1f}  {k}')
    print(f'\n{"per frame":>9s}  innermost function')
    for k, v in inner.most_common(a.top):
        print(f'{v / frames:9.1f}  {k}')


if __name__ == '__main__':
    main()
