#!/usr/bin/env bash
# Fuzzes targets for a while each, with the limits that make a finding of everything the
# readers must not do: a panic or abort, a single allocation over 512 MB (-malloc_limit_mb:
# an allocation sized by a number in the input), more than 2 GB in all, or an input that takes
# more than 10 s (a hang). Inputs that reach new code are added to fuzz/corpus/<target>; a
# finding is written to fuzz/libfuzzer/artifacts/<target>/ and stops that target's run.
#
#   bash fuzz/run.sh SECONDS [TARGET...]     (every target when none is named)
#
# Needs cargo-fuzz and a nightly toolchain (fuzz/README.md).
set -euo pipefail
fuzz=$(cd "$(dirname "$0")" && pwd)
seconds=${1:?usage: run.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir "$fuzz/libfuzzer")
cargo +nightly fuzz build --fuzz-dir "$fuzz/libfuzzer" -O -a
for target in "${targets[@]}"; do
    mkdir -p "$fuzz/corpus/$target"
    echo "== $target: $seconds s"
    cargo +nightly fuzz run --fuzz-dir "$fuzz/libfuzzer" -O -a "$target" "$fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=10 \
        -max_len=32768 -print_final_stats=1 || echo "== $target: finding (see above)"
done
