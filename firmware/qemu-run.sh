#!/usr/bin/env bash
# Cargo runner: boots the firmware ELF ($1) on QEMU mps2-an386. QEMU's exit
# code is the firmware's semihosting exit code (0 ok, 1 panic/fault/mismatch).
# LOXO_QEMU_ARGS adds options (the NIC, -icount). stdout carries raw defmt
# frames: pipe them through `cargo run -p xtask -- decode ELF` (or
# `defmt-print -e ELF`), or run the whole demo with `cargo xtask demo`.
set -euo pipefail
elf="$1"; shift
# shellcheck disable=SC2086
exec qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic \
  -monitor none -serial null \
  -semihosting-config enable=on,target=native \
  ${LOXO_QEMU_ARGS:-} -kernel "$elf" "$@"
