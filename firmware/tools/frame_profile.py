#!/usr/bin/env python3
"""Where the firmware's per-frame instructions go, frame by frame.

Reads a QEMU log of the firmware run with `-d exec,nochain,in_asm` (every translation
block as it is translated, `IN:`, and every block as it runs, `Trace`), cuts it into
calls of `loxo_firmware::feed` (the code the device's per-frame cost histogram
measures) and attributes each call's instructions to the functions they ran in. It
prints the distribution (which matches the firmware's `epoch_cost:` lines), the frames
over a budget by kind — which of the costly steps (an eviction from the candidates, a
push, a new-flow filing, a participants' offer) they took — and the functions those
frames spent their instructions in.

    LOXO_QEMU_ARGS="-d exec,nochain,in_asm -D /tmp/q.log" \\
        cargo xtask demo --summary --icount --pcap CAPTURE.pcap
    python3 firmware/tools/frame_profile.py /tmp/q.log \\
        firmware/target/thumbv7em-none-eabihf/release/loxo-firmware [--budget 1129] [--epoch N]

The log is about 30 KB per frame (16 384 frames: 0.5 GB); the ELF gives `feed`'s
address (`llvm-nm`, from the Rust toolchain's `llvm-tools` component).
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys

TRACE = re.compile(r'^Trace \d+: (0x[0-9a-f]+) \[[0-9a-f]+/([0-9a-f]+)/[0-9a-f]+/[0-9a-f]+\] (\S+)')
# The costly steps a frame may take, by a fragment of their (mangled) symbol.
STEPS = [('evict', 'replace_min'), ('push', '4push'), ('file', 'first_frame'), ('offer', 'offered')]


def nm():
    found = glob.glob(os.path.expanduser('~/.rustup/toolchains/*/lib/rustlib/*/bin/llvm-nm'))
    return found[0] if found else 'llvm-nm'


def feed_address(elf):
    out = subprocess.run([nm(), elf], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if 'loxo_firmware4feed' in line:
            return int(line.split()[0], 16) & ~1
    sys.exit('no loxo_firmware::feed in ' + elf)


def demangle(sym):
    """The last two path segments of a mangled Rust symbol."""
    if not sym.startswith('_ZN'):
        return sym
    parts, i, s = [], 0, sym[3:]
    while i < len(s) and s[i].isdigit():
        j = i
        while s[j].isdigit():
            j += 1
        n = int(s[i:j])
        parts.append(s[j:j + n])
        i = j + n
    parts = [p for p in parts if not re.fullmatch(r'h[0-9a-f]{16}', p)]
    return '::'.join(parts[-2:]).replace('$LT$', '<').replace('$GT$', '>').replace('$C$', ',').replace('$u20$', ' ')


def calls(log, feed):
    """Yields each call of feed as the blocks it ran, in order: (symbol, guest addresses
    of the block's instructions) each.

    A block is keyed by its translation (the host address a `Trace` line names), not
    by its guest address: under `-icount` QEMU also translates shorter blocks at the
    same address (cut at the instruction budget left before the next timer event),
    and keyed by address such a block's size would be taken for every later run of
    the full one (at `shift=7` that undercounted a frame by 50-70 instructions on
    average). A call ends at the first block back in its caller's symbol.
    """
    blocks, block, pcs, pending = {}, None, [], None
    cur, caller, last = None, None, None
    with open(log, errors='replace') as f:
        for line in f:
            if line.startswith('IN: '):
                block, pcs = line[4:].strip(), []
                continue
            if block is not None:
                if line.startswith('0x'):
                    pcs.append(int(line[:10], 16))
                    continue
                if pcs:
                    # The block just translated runs next: its `Trace` line names it.
                    pending = tuple(pcs)
                block = None
            if not line.startswith('Trace'):
                continue
            m = TRACE.match(line)
            if not m:
                continue
            host, pc, sym = m.group(1), int(m.group(2), 16), m.group(3)
            if pending is not None:
                blocks[host], pending = pending, None
            ran = blocks.get(host, ())
            if cur is None:
                if pc == feed:
                    cur, caller = [(sym, ran)], last
            elif sym == caller:
                yield cur
                cur = None
            else:
                cur.append((sym, ran))
            last = sym


def frames(log, feed):
    """Yields each call of feed as (instructions, Counter(symbol -> instructions))."""
    for blocks in calls(log, feed):
        c = collections.Counter()
        for sym, ran in blocks:
            c[sym] += len(ran)
        yield sum(c.values()), c


def pct(xs, q):
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('log')
    ap.add_argument('elf')
    ap.add_argument('--budget', type=int, default=1129)
    ap.add_argument('--epoch', type=int, help='only this epoch (16 384 frames each)')
    a = ap.parse_args()
    fr = list(frames(a.log, feed_address(a.elf)))
    if a.epoch is not None:
        fr = fr[a.epoch * 16384:(a.epoch + 1) * 16384]
    tot = sorted(t for t, _ in fr)
    print(f'{len(fr)} frames: mean {sum(tot) / len(tot):.0f}, p50 {pct(tot, .5)}, p99 {pct(tot, .99)}, '
          f'p99.9 {pct(tot, .999)}, max {tot[-1]}; over {a.budget}: '
          f'{sum(t > a.budget for t in tot)} (p99.9 allows {len(tot) // 1000})')
    kinds = collections.defaultdict(list)
    for t, c in fr:
        syms = ' '.join(c)
        kinds[tuple(name for name, frag in STEPS if frag in syms)].append(t)
    print(f"\n{'steps':28s} {'frames':>7s} {'mean':>6s} {'p50':>6s} {'p90':>6s} {'max':>6s} {'over':>6s}")
    for k, ts in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        ts.sort()
        print(f"{'+'.join(k) or '(none)':28s} {len(ts):7d} {sum(ts) / len(ts):6.0f} {pct(ts, .5):6d} "
              f"{pct(ts, .9):6d} {ts[-1]:6d} {sum(t > a.budget for t in ts):6d}")
    over, every = collections.Counter(), collections.Counter()
    n_over, n_every = collections.Counter(), collections.Counter()
    for t, c in fr:
        for s, v in c.items():
            d = demangle(s)
            every[d] += v
            n_every[d] += 1
            if t > a.budget:
                over[d] += v
                n_over[d] += 1
    print(f"\n{'function (frames over the budget)':56s} {'frames':>7s} {'mean':>6s} | {'all frames':>10s} {'mean':>6s}")
    for d, v in over.most_common(15):
        print(f'{d[:56]:56s} {n_over[d]:7d} {v / n_over[d]:6.0f} | {n_every[d]:10d} {every[d] / n_every[d]:6.0f}')


if __name__ == '__main__':
    main()
