#!/usr/bin/env bash
# Our CPU pad (criterion, `pad_into`) against ONNX Runtime's (`ort bound`, one thread, as
# ours is below 4 MiB), alternating case by case and mode by mode for several rounds, because
# these machines' speed drifts within minutes and figures taken minutes apart do not compare.
#
#   bash benchmarks/cpu_vs_ort.sh [rounds]     (the harness's default suite; needs onnxruntime)
#   ORT_THREADS=2 bash benchmarks/cpu_vs_ort.sh   (ORT at two threads)
#   CASES="u8_1x1024x1024x3" bash benchmarks/cpu_vs_ort.sh   (some cases: benches/cpu_pad.rs's names)
#
# Prints one line per round, case and mode: ours, memcpy (criterion, the same run), ORT,
# ORT/ours (above 1: ours is faster).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
cargo bench --bench cpu_pad --no-run 2>/dev/null
bench=$(ls -t target/release/deps/cpu_pad-* | grep -v '\.d$' | head -1)
crit() { # median µs of one criterion benchmark, run briefly
    "$bench" --bench --warm-up-time 0.5 --measurement-time 1.5 --sample-size 20 --noplot "^$1\$" 2>/dev/null |
        awk '/time:/ && !done { for (i = 1; $i != "time:"; i++); v = $(i + 3); u = $(i + 4); done = 1 }
            END { if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v }'
}
read -r -a cases <<< "${CASES:-f32_1x64x512x512 u8_1x1024x1024x3 f16_8x4096x256 i64_2x3x8x8 f32_1x3x224x224}"
echo "round case mode ours_us memcpy_us ort_us ort/ours"
for round in $(seq "$rounds"); do
    for case in "${cases[@]}"; do
        for mode in constant reflect edge wrap; do
            ours=$(crit "$case/pad_into/$mode")
            memcpy=$(crit "$case/memcpy")
            ort=$(python3 benchmarks/ort_pad.py --case "$case" --mode "$mode" --threads "${ORT_THREADS:-1}" --reps 101 |
                awk -v c="$case" '$1 == c { print $(NF - 3) * 1000 }')
            awk -v r="$round" -v k="$case" -v m="$mode" -v o="$ours" -v c="$memcpy" -v t="$ort" \
                'BEGIN { printf "%s %s %s %.2f %.2f %.2f %.2f\n", r, k, m, o, c, t, t / o }'
        done
    done
done
