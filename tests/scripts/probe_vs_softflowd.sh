#!/usr/bin/env bash
# loxo probe beside softflowd on the same live replays (issue 32 items 3 and 5).
#
# Two network namespaces joined by a veth pair; `loxo gen` writes an ordinary trace and
# a 90 % one-off flood (200 000 frames each, with the generator's per-frame truth);
# tcpreplay sends each into one end, paced (PPS, default 50 000 frames/s); on the other
# end `loxo probe` (epochs of 16 384 frames, θ = 1 % of IP bytes) and softflowd 1.1
# (IPFIX, default 8 192-flow table) capture the same frames at once, both exporting to
# nfcapd (one each) on the namespace's loopback, where dumpcap records the export.
# Printed per trace: records and messages exported, bytes on the wire, peak memory
# (VmHWM) and CPU time of each probe (read from /proc just before it is stopped; the
# exit flush is not counted), the drops each reported (softflowd's from `softflowctl
# statistics`, which it does not export; loxo's kernel drops, which it does), and the
# capture's five largest
# flows (truth, from OUT.truth.csv) against softflowd's records and byte sums and
# loxo's summed bounds.
#
# Then the throughput bench: the flood replayed at full speed (tcpreplay --topspeed,
# LOOPS times) into a 64 MiB ring, loxo probe pinned to one core: frames per second of
# CPU time, and from the probe's own `--timing` figures the frames per second while
# busy and the monitor's share of the frame loop (the rest: reading the ring's
# blocks and copying each frame to put a VLAN tag back).
#
# Needs root, softflowd, nfdump (nfcapd), tcpreplay, tshark (dumpcap, capinfos),
# python3. Usage: sudo tests/scripts/probe_vs_softflowd.sh [LOXO_BINARY]
# (default: a release build in $CARGO_TARGET_DIR or target/).
set -euo pipefail
cd "$(dirname "$0")/../.."
loxo="${1:-${CARGO_TARGET_DIR:-target}/release/loxo}"
[ -x "$loxo" ] || { echo "no loxo binary at $loxo: cargo build --release -p loxo-cli" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (namespaces, veth)" >&2; exit 1; }
softflowd=$(command -v softflowd || echo /usr/sbin/softflowd)
pps="${PPS:-50000}"
loops="${LOOPS:-5}"
seed=00112233445566778899aabbccddeeff
work=$(mktemp -d /tmp/loxo-vs-softflowd.XXXXXX)
tx=loxo-vs-tx-$$
rx=loxo-vs-rx-$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    ip netns del "$tx" 2>/dev/null || true
    ip netns del "$rx" 2>/dev/null || true
}
trap cleanup EXIT

for ns in "$tx" "$rx"; do
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
done
ip netns exec "$rx" sysctl -qw net.core.rmem_max=33554432 net.core.rmem_default=33554432 2>/dev/null || true
ip link add lxtx netns "$tx" type veth peer name lxrx netns "$rx"
ip -n "$tx" link set lxtx mtu 9000 up
ip -n "$rx" link set lxrx mtu 9000 up
ip -n "$rx" link set lo up

# CPU seconds (user + system) and peak resident memory (KiB) of a running process.
usage() {
    local hz; hz=$(getconf CLK_TCK)
    awk -v hz="$hz" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"
    printf ' '
    awk '/^VmHWM/ {print $2}' "/proc/$1/status"
}

# The five largest flows of a truth file (IP bytes): key fields and bytes.
largest() {
    awk -F, 'NR > 1 && $4 == "flow" {b[$9 " " $10 " " $11 " " $12 " " $13] += $3}
             END {for (k in b) print b[k], k}' "$1" | sort -rn | head -5
}

side_by_side() {
    local name=$1 pcap=$2 d="$work/$1"
    mkdir -p "$d/nf-soft" "$d/nf-loxo"
    # Background processes through `ip netns exec` itself (not a shell function), so
    # that $! is the process (ip execs it).
    ip netns exec "$rx" nfcapd -b 127.0.0.1 -p 9995 -w "$d/nf-soft" -t 3600 -B 16000000 >/dev/null 2>&1 & pids+=($!)
    ip netns exec "$rx" nfcapd -b 127.0.0.1 -p 9996 -w "$d/nf-loxo" -t 3600 -B 16000000 >/dev/null 2>&1 & pids+=($!)
    ip netns exec "$rx" dumpcap -q -i lo -B 64 -f "udp port 9995 or udp port 9996" -w "$d/export.pcapng" >/dev/null 2>&1 & local dump=$!
    pids+=($dump)
    sleep 1
    ip netns exec "$rx" "$softflowd" -d -i lxrx -v 10 -n 127.0.0.1:9995 -B 16777216 -c "$d/softflowd.ctl" -p "$d/softflowd.pid" >"$d/softflowd.log" 2>&1 & local soft=$!
    pids+=($soft)
    ip netns exec "$rx" "$loxo" probe -i lxrx --frames 16384 --theta 1% --seed "$seed" --json --ring-mib 16 \
        --ipfix 127.0.0.1:9996 >"$d/probe.jsonl" 2>"$d/probe.err" & local probe=$!
    pids+=($probe)
    until grep -q "capturing on" "$d/probe.err" 2>/dev/null; do sleep 0.1; done
    sleep 1
    ip netns exec "$tx" tcpreplay -q -i lxtx --pps "$pps" "$pcap" >"$d/tcpreplay.log" 2>&1
    sleep 1
    local su pu
    su=$(usage "$soft"); pu=$(usage "$probe")
    # softflowd expires and exports every flow on `softflowctl shutdown` (SIGTERM
    # makes it exit at once); its statistics first (libpcap's drops among them).
    ip netns exec "$rx" softflowctl -c "$d/softflowd.ctl" statistics >"$d/softflowd.stats" 2>&1 || true
    ip netns exec "$rx" softflowctl -c "$d/softflowd.ctl" shutdown >/dev/null 2>&1 || true
    kill -TERM "$probe"; wait "$soft" "$probe" || true
    sleep 1
    kill -TERM "$dump"; wait "$dump" || true
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pids=()
    local sent; sent=$(awk -F: '/Successful packets/ {gsub(/ /, "", $2); print $2}' "$d/tcpreplay.log")
    echo
    echo "== $name: $(basename "$pcap"), $sent frames replayed at $pps frames/s"
    printf '| exporter | flow records | IPFIX messages | bytes exported | peak memory | CPU time | drops reported |\n|---|---:|---:|---:|---:|---:|---:|\n'
    for who in soft loxo; do
        local port=9995 cpu mem recs msgs bytes drops
        [ $who = loxo ] && port=9996
        recs=$(nfdump -R "$d/nf-$who" -I 2>/dev/null | awk '/^Flows:/ {print $2}')
        read -r msgs bytes < <(tshark -r "$d/export.pcapng" -Y "udp.dstport == $port" -T fields -e udp.length 2>/dev/null |
            awk '{n++; b += $1 - 8} END {print n + 0, b + 0}')
        if [ $who = soft ]; then
            read -r cpu mem <<<"$su"
            drops="$(awk '/[Dd]ropped/ {print $NF; exit}' "$d/softflowd.stats") (not exported)"
            echo -n "| softflowd 1.1, 8 192 flows "
        else
            read -r cpu mem <<<"$pu"
            drops=$(python3 -c 'import json,sys; print(sum(json.loads(l)["kernel"]["dropped"] for l in open(sys.argv[1])))' "$d/probe.jsonl")
            echo -n "| loxo probe, $(wc -l <"$d/probe.jsonl") epochs "
        fi
        echo "| $recs | $msgs | $bytes | $((mem / 1024)) MiB | $cpu s | $drops |"
    done
    echo
    echo "largest flows (IP bytes): truth | softflowd records, sum | loxo epochs listed, [sum of lower, sum of upper]"
    nfdump -R "$d/nf-soft" -q -N -o "fmt:%sa %da %sp %dp %pr %byt" 2>/dev/null >"$d/soft.txt"
    nfdump -R "$d/nf-loxo" -q -N -o "fmt:%sa %da %sp %dp %pr %byt" 2>/dev/null >"$d/loxo-nf.txt"
    largest "${pcap%.pcap}.truth.csv" >"$d/largest.txt" || true
    while read -r bytes sa da sp dp pr; do
        local s l
        s=$(awk -v k="$sa $da $sp $dp $pr" '{key = $1 " " $2 " " $3 " " $4 " " $5} key == k {n++; b += $6} END {print n + 0, b + 0}' "$d/soft.txt")
        l=$(python3 - "$d/probe.jsonl" "$sa" "$da" "$sp" "$dp" "$pr" <<'PY'
import json, sys
f, sa, da, sp, dp, pr = sys.argv[1:]
key = f"{sa}:{sp} -> {da}:{dp} proto {pr}" if ":" not in sa else f"[{sa}]:{sp} -> [{da}]:{dp} proto {pr}"
n = lo = up = 0
for line in open(f):
    for e in json.loads(line)["elephants"]:
        if e["key"] == key:
            n += 1; lo += e["bytes"]["lower"]; up += e["bytes"]["upper"]
print(n, lo, up)
PY
)
        echo "  $pr $sa:$sp -> $da:$dp | $bytes | softflowd $s | loxo $l"
    done <"$d/largest.txt"
}

bench() {
    local pcap=$1 d="$work/bench"
    mkdir -p "$d"
    ip netns exec "$rx" taskset -c 1 "$loxo" probe -i lxrx --frames 65536 --ring-mib 64 --seed "$seed" --json --timing \
        >"$d/probe.jsonl" 2>"$d/probe.err" & local probe=$!
    pids+=($probe)
    until grep -q "capturing on" "$d/probe.err" 2>/dev/null; do sleep 0.1; done
    local before; before=$(usage "$probe")
    ip netns exec "$tx" tcpreplay -q -i lxtx --topspeed --loop "$loops" "$pcap" >"$d/tcpreplay.log" 2>&1
    sleep 1
    local after; after=$(usage "$probe")
    kill -TERM "$probe"; wait "$probe" || true
    pids=()
    local frames drops
    frames=$(python3 -c 'import json,sys; print(sum(json.loads(l)["frames"] for l in open(sys.argv[1])))' "$d/probe.jsonl")
    drops=$(python3 -c 'import json,sys; print(sum(json.loads(l)["kernel"]["dropped"] for l in open(sys.argv[1])))' "$d/probe.jsonl")
    echo
    echo "== throughput: $(basename "$pcap") x $loops at full speed, loxo probe on one core (taskset -c 1), 64 MiB ring"
    grep -E "Actual|Rated" "$d/tcpreplay.log" | sed 's/^/  tcpreplay: /'
    awk -v b="${before%% *}" -v a="${after%% *}" -v f="$frames" -v dr="$drops" \
        'BEGIN {c = a - b; printf "  probe: %d frames seen, %d dropped by the kernel, %.2f s CPU: %.0f frames per CPU second\n", f, dr, c, f / (c > 0 ? c : 1)}'
    grep "busy" "$d/probe.err" | sed 's/^/  /'
}

echo "loxo: $("$loxo" --version); softflowd: $("$softflowd" -h 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1); work dir $work"
"$loxo" gen -o "$work/normal.pcap" -n 200000 -f 10000 --seed 7 >/dev/null
"$loxo" gen -o "$work/flood.pcap" -n 200000 -f 10000 --flood 0.9 --seed 7 >/dev/null
side_by_side ordinary "$work/normal.pcap"
side_by_side flood "$work/flood.pcap"
bench "$work/flood.pcap"
