#!/usr/bin/env bash
# The standing order on a lent GPU (the device tool's `run`), one command: every harness build
# carried in .devbin/, each in every kernel variant it has (--kernel-variant; src/gpu/variant.rs),
# over the default and engine suites at steady clocks (the harness's --warmup-ms and
# --batch-ms), PyTorch's F.pad and device copy on the same cases (benchmarks/torch_pad.py),
# and per build and variant one table of ours, torch and the rooflines
# (benchmarks/torch_table.py). Runs alternate within a round, so drift falls on all alike.
# Nothing is built there; the Vulkan loaders travel in .gl/ (ignored; the device README says
# how to fetch them).
#
# Here, once per build (a commit checked out, or the working tree), NAME sorting first for
# the baseline:
#   WGPU_PAD_BUILD_COMMIT=$(git rev-parse HEAD) cargo build --release --features literal,variants --example gpu_vs_cpu
# (a commit from before the variants feature: --features literal)
#   mkdir -p .devbin && cp target/release/examples/gpu_vs_cpu .devbin/NAME && strip .devbin/NAME
# (the commit the reports name: the device's checkout may be at another)
# and, to measure the fused pad too (issue 54; its output is fused.txt):
#   cargo build --release --example fused_conv && cp target/release/examples/fused_conv .devbin/fused_conv.example
# There:
#   run(command="bash benchmarks/device-ab.sh", carry=[".gl", ".devbin"], timeout_s=600)
# What comes back: $OUT/device-ab.tar.gz, rewritten after every step (a call killed at its
# limit returns what finished before): cold-BUILD.json and .txt (the cold start, the
# driver's shader cache empty); every report as JSON and its table as text, named
# RUN-SUITE-ROUND where a run is BUILD@VARIANT; torch-SUITE.json and .txt;
# table-RUN-SUITE-ROUND.md (ours, torch, roofline); compare-FIRST-RUN-SUITE-ROUND.txt (the
# harness's verdicts against the first run: the first build in the default variant);
# variants-SUITE-ROUND.md and .txt (every run of a suite side by side over the first:
# benchmarks/variant_table.py); failed.txt, the steps that failed (each passed over, its log
# kept).
# Knobs: ROUNDS (1), REPS (7), SUITES ("default engine"; "dram" adds outputs past 256 MiB;
# SUITE+backward is that suite's float cases' gradients, the harness's --backward, with torch's
# backward and whether torch could run it deterministically),
# BUILDS (every executable in .devbin, in name order; the first is the baseline), VARIANTS
# (every variant, those the next decision needs first: "default rows16 narrow-loads-first
# read-only-input device-grid device-grid-256 narrow-spread flat-u4 reference"; a build without
# --kernel-variant runs the default only), CASE_LIMIT (seconds one run's suite may take, 200),
# TORCH (1; 0 skips torch), STEADY_ONLY (1: the harness's --steady-only, the kernel, copy and
# roofline batches alone, where a build has the flag; 0: every figure, CPU and end to end too).
# Time, measured on an H100 (2026-11-27, REPS=5): a run of the default suite 45 s, of the
# engine suite 62 s, of the dram suite 53 s; torch 20 s a suite; a machine's start about 30 s.
# A lease has 15 minutes of device time, 10 a call: plan calls of at most 540 s, e.g. five
# runs of default and engine with torch (about 520 s), then what is left in a second call on
# the same warm machine (it stays warm 30 s; carry the same files). What finished comes back
# even from a call killed at its limit. Two plans in one call keep both archives:
#   OUT=$OUT/a SUITES=dram VARIANTS="default flat-u4" bash ...; OUT=$OUT/b SUITES=engine bash ...
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/device-ab}
work=$(mktemp -d)
mkdir -p "$out"

# The loaders, where carried (the device machine starts bare).
if compgen -G ".gl/*.deb" > /dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -e $icd && -z ${VK_DRIVER_FILES:-} ]]; then
    export VK_DRIVER_FILES=$icd
fi
export WGPU_BACKEND=${WGPU_BACKEND:-vulkan}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}

# The builds: BUILDS, else every executable in .devbin but scripts, in name order.
read -r -a builds <<< "${BUILDS:-$(find .devbin -maxdepth 1 -type f -perm -u+x ! -name '*.sh' ! -name '*.example' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')}"
if (( ${#builds[@]} == 0 )); then
    echo "device-ab: no builds in .devbin (see this script's header)" >&2
    exit 1
fi
# The runs: each build in each variant it has (an older build has no --kernel-variant).
read -r -a variants <<< "${VARIANTS:-default rows16 narrow-loads-first read-only-input device-grid device-grid-256 narrow-spread flat-u4 reference}"
runs=()
for build in "${builds[@]}"; do
    help=$("./.devbin/$build" --help 2>/dev/null || true)
    for variant in "${variants[@]}"; do
        if [[ $variant == default || $help == *--kernel-variant* ]]; then
            runs+=("$build@$variant")
        fi
    done
done
echo "device-ab: runs ${runs[*]}"
rounds=${ROUNDS:-1}
reps=${REPS:-7}
read -r -a suites <<< "${SUITES:-default engine}"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true

start=$SECONDS
# What finished is archived after every step (written aside, then renamed), so a run killed
# at the device tool's limit still returns every report before it. A step that fails is
# named in failed.txt with its log kept, and passed over.
archive() {
    tar -czf "$out/device-ab.tar.gz.part" -C "$work" . && mv "$out/device-ab.tar.gz.part" "$out/device-ab.tar.gz"
}
failed() {
    echo "device-ab: $1 failed ($2):" >&2
    tail -5 "$work/$2" >&2 || true
    echo "$1 ($2)" >> "$work/failed.txt"
}
torch=${TORCH:-1}
if [[ $torch == 1 ]] && ! python3 -c 'import torch' > "$work/torch-missing.txt" 2>&1; then
    echo "device-ab: no torch here (torch-missing.txt): the torch tables are skipped" >&2
    torch=0
fi
# The cold start per build, the driver's shader cache empty (a fresh directory): what an
# engine's first inference pays, pipelines compiled and their first-pass ms.
for build in "${builds[@]}"; do
    echo "--- cold start, $build ($((SECONDS - start)) s)"
    if __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) timeout "${CASE_LIMIT:-200}" "./.devbin/$build" --cold-start \
        --json "$work/cold-$build.json" > "$work/cold-$build.txt" 2>&1; then
        grep "cold start" "$work/cold-$build.txt" || true
    else
        failed "cold start $build" "cold-$build.txt"
    fi
done
archive
for round in $(seq "$rounds"); do
    for suite in "${suites[@]}"; do
        for run in "${runs[@]}"; do
            build=${run%@*} variant=${run#*@}
            flags=()
            [[ $variant == default ]] || flags=(--kernel-variant "$variant")
            [[ $suite == *+backward ]] && flags+=(--backward)
            if [[ ${STEADY_ONLY:-1} == 1 && $("./.devbin/$build" --help 2>/dev/null || true) == *--steady-only* ]]; then
                flags+=(--steady-only)
            fi
            name="$run-$suite-$round"
            echo "--- $name ($((SECONDS - start)) s)"
            if timeout "${CASE_LIMIT:-200}" "./.devbin/$build" "${flags[@]}" --suite "${suite%+backward}" --reps "$reps" \
                --json "$work/$name.json" > "$work/$name.txt" 2>&1; then
                head -2 "$work/$name.txt"
            else
                failed "$name" "$name.txt"
            fi
            archive
        done
        # PyTorch on the suite's cases (every run has the same ones: the first that finished),
        # once, then one table per run of ours, torch and the rooflines.
        first=$(for run in "${runs[@]}"; do [[ -s $work/$run-$suite-$round.json ]] && echo "$run" && break; done || true)
        if [[ $torch == 1 && $round == 1 && -n $first ]]; then
            echo "--- torch, $suite ($((SECONDS - start)) s)"
            timeout "${CASE_LIMIT:-200}" python3 benchmarks/torch_pad.py "$work/$first-$suite-1.json" \
                --json "$work/torch-$suite.json" --reps "${REPS_TORCH:-11}" > "$work/torch-$suite.txt" 2>&1 \
                || failed "torch $suite" "torch-$suite.txt"
            archive
        fi
        if [[ -s $work/torch-$suite.json ]]; then
            for run in "${runs[@]}"; do
                [[ -s $work/$run-$suite-$round.json ]] || continue
                echo "--- $run, $suite: ours, torch and the rooflines"
                python3 benchmarks/torch_table.py "$work/$run-$suite-$round.json" "$work/torch-$suite.json" \
                    --markdown "$work/table-$run-$suite-$round.md" > "$work/table-$run-$suite-$round.txt" 2>&1 \
                    || failed "table $run $suite" "table-$run-$suite-$round.txt"
            done
            archive
        fi
        # Every run of the suite side by side, over the baseline.
        python3 benchmarks/variant_table.py "$work" "$suite" --round "$round" \
            --markdown "$work/variants-$suite-$round.md" > "$work/variants-$suite-$round.txt" 2>&1 \
            || failed "variants $suite" "variants-$suite-$round.txt"
        archive
    done
done

# The harness's comparison of each run with the first, round by round.
base=${runs[0]}
for run in "${runs[@]:1}"; do
    for round in $(seq "$rounds"); do
        for suite in "${suites[@]}"; do
            name="compare-$base-$run-$suite-$round"
            [[ -s $work/$base-$suite-$round.json && -s $work/$run-$suite-$round.json ]] || continue
            "./.devbin/${builds[0]}" --compare "$work/$base-$suite-$round.json" "$work/$run-$suite-$round.json" \
                > "$work/$name.txt" || true
            echo "--- $name: $(grep -c "gpu_kernel_batch_ms .*FASTER" "$work/$name.txt") kernel batches FASTER," \
                "$(grep -c "gpu_kernel_batch_ms .*SLOWER" "$work/$name.txt") SLOWER; all figures: $(tail -1 "$work/$name.txt")"
        done
    done
done
archive
# The fused pad against pad + conv, where its example was carried.
if [[ -x .devbin/fused_conv.example ]]; then
    echo "--- the fused pad ($((SECONDS - start)) s)"
    timeout "${CASE_LIMIT:-200}" ./.devbin/fused_conv.example > "$work/fused.txt" 2>&1 \
        || failed "fused_conv" fused.txt
    cat "$work/fused.txt"
    archive
fi
[[ -s $work/failed.txt ]] && { echo "device-ab: failed steps:"; cat "$work/failed.txt"; }
rm -rf "$work"
echo "device-ab: $out/device-ab.tar.gz ($((SECONDS - start)) s)"
