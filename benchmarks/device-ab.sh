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
#   cargo build --release --features literal --example gpu_vs_cpu
#   mkdir -p .devbin && cp target/release/examples/gpu_vs_cpu .devbin/NAME
# and, to measure the fused pad too (issue 54; its output is fused.txt):
#   cargo build --release --example fused_conv && cp target/release/examples/fused_conv .devbin/fused_conv.example
# There:
#   run(command="bash benchmarks/device-ab.sh", carry=[".gl", ".devbin"], timeout_s=600)
# What comes back: $OUT/device-ab.tar.gz: every report as JSON and its table as text, named
# RUN-SUITE-ROUND where a run is BUILD@VARIANT; torch-SUITE.json and .txt; table-RUN-SUITE.md
# (ours, torch, roofline); compare-FIRST-RUN-SUITE-ROUND.txt (the harness's verdicts against
# the first run: the first build in the default variant).
# Knobs: ROUNDS (1), REPS (7), SUITES ("default engine"), BUILDS (every executable in .devbin,
# in name order; the first is the baseline), VARIANTS ("default reference wide-loads-first
# narrow-pairs"; a build without --kernel-variant runs the default only), CASE_LIMIT (seconds
# one run's suite may take, 200), TORCH (1; 0 skips torch).
# Time: on lavapipe here each run's two suites at REPS=1 take minutes; on an H200 the
# estimate is about 80 s a run and 40 s for torch (not yet run there): one build in four
# variants wants timeout_s=600, or two calls (VARIANTS="default reference", then
# VARIANTS="default wide-loads-first narrow-pairs").
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
read -r -a variants <<< "${VARIANTS:-default reference wide-loads-first narrow-pairs}"
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
for round in $(seq "$rounds"); do
    for suite in "${suites[@]}"; do
        for run in "${runs[@]}"; do
            build=${run%@*} variant=${run#*@}
            flags=()
            [[ $variant == default ]] || flags=(--kernel-variant "$variant")
            name="$run-$suite-$round"
            echo "--- $name ($((SECONDS - start)) s)"
            timeout "${CASE_LIMIT:-200}" "./.devbin/$build" "${flags[@]}" --suite "$suite" --reps "$reps" --json "$work/$name.json" \
                > "$work/$name.txt" 2>&1 \
                || { echo "device-ab: $name failed:" >&2; tail -5 "$work/$name.txt" >&2; exit 1; }
            head -2 "$work/$name.txt"
        done
    done
done

# PyTorch on the first run's cases (every run has the same ones), then one table per run
# and suite (its last round) of ours, torch and the rooflines.
base=${runs[0]}
if [[ ${TORCH:-1} == 1 ]]; then
    for suite in "${suites[@]}"; do
        echo "--- torch, $suite ($((SECONDS - start)) s)"
        python3 benchmarks/torch_pad.py "$work/$base-$suite-1.json" --json "$work/torch-$suite.json" --reps "${REPS_TORCH:-11}" \
            > "$work/torch-$suite.txt" 2>&1 \
            || { echo "device-ab: torch on $suite failed:" >&2; tail -5 "$work/torch-$suite.txt" >&2; exit 1; }
        for run in "${runs[@]}"; do
            echo "--- $run, $suite: ours, torch and the rooflines"
            python3 benchmarks/torch_table.py "$work/$run-$suite-$rounds.json" "$work/torch-$suite.json" \
                --markdown "$work/table-$run-$suite.md"
        done
    done
fi

# The harness's comparison of each run with the first, round by round.
for run in "${runs[@]:1}"; do
    for round in $(seq "$rounds"); do
        for suite in "${suites[@]}"; do
            name="compare-$base-$run-$suite-$round"
            "./.devbin/${builds[0]}" --compare "$work/$base-$suite-$round.json" "$work/$run-$suite-$round.json" \
                > "$work/$name.txt" || true
            echo "--- $name: $(grep -c "gpu_kernel_batch_ms .*FASTER" "$work/$name.txt") kernel batches FASTER," \
                "$(grep -c "gpu_kernel_batch_ms .*SLOWER" "$work/$name.txt") SLOWER; all figures: $(tail -1 "$work/$name.txt")"
        done
    done
done
# The fused pad against pad + conv, where its example was carried.
if [[ -x .devbin/fused_conv.example ]]; then
    echo "--- the fused pad ($((SECONDS - start)) s)"
    timeout "${CASE_LIMIT:-200}" ./.devbin/fused_conv.example > "$work/fused.txt" 2>&1 \
        || echo "device-ab: fused_conv failed (fused.txt)" >&2
    cat "$work/fused.txt"
fi
tar -czf "$out/device-ab.tar.gz" -C "$work" .
rm -rf "$work"
echo "device-ab: $out/device-ab.tar.gz ($((SECONDS - start)) s)"
