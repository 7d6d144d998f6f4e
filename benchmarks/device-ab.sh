#!/usr/bin/env bash
# Two or more builds of the harness on a lent GPU (the device tool's `run`), alternated in one
# lease: every build runs each suite once a round, so clock and thermal drift falls on all of
# them alike (single dispatches never reach steady clocks: BENCHMARKS.md). Nothing is built
# there; the builds travel in .devbin/ (ignored), the Vulkan loaders in .gl/ (ignored; the
# device README says how to fetch them).
#
# Here, once per build (a commit checked out, or the working tree):
#   cargo build --release --features literal --example gpu_vs_cpu
#   mkdir -p .devbin && cp target/release/examples/gpu_vs_cpu .devbin/NAME
# There (not yet run on a real GPU; on lavapipe here one round of both suites at REPS=1 took
# about 30 s a build):
#   run(command="bash benchmarks/device-ab.sh", carry=[".gl", ".devbin"], timeout_s=540)
# What comes back: $OUT/device-ab.tar.gz: every report as JSON and its table as text, named
# BUILD-SUITE-ROUND, and the harness's comparison of each build with the first,
# compare-FIRST-BUILD-SUITE-ROUND.txt, whose counts are printed. Knobs: ROUNDS (2), REPS (11),
# SUITES ("default engine"), BUILDS (every executable in .devbin, in name order; the first is
# the baseline), CASE_LIMIT (seconds one build's suite may take, 240).
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
read -r -a builds <<< "${BUILDS:-$(find .devbin -maxdepth 1 -type f -perm -u+x ! -name '*.sh' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')}"
if (( ${#builds[@]} == 0 )); then
    echo "device-ab: no builds in .devbin (see this script's header)" >&2
    exit 1
fi
rounds=${ROUNDS:-2}
reps=${REPS:-11}
read -r -a suites <<< "${SUITES:-default engine}"

start=$SECONDS
for round in $(seq "$rounds"); do
    for suite in "${suites[@]}"; do
        for build in "${builds[@]}"; do
            name="$build-$suite-$round"
            echo "--- $name ($((SECONDS - start)) s)"
            timeout "${CASE_LIMIT:-240}" "./.devbin/$build" --suite "$suite" --reps "$reps" --json "$work/$name.json" \
                > "$work/$name.txt" 2>&1 \
                || { echo "device-ab: $name failed:" >&2; tail -5 "$work/$name.txt" >&2; exit 1; }
            head -2 "$work/$name.txt"
        done
    done
done

# The harness's comparison of each build with the first, round by round.
base=${builds[0]}
for build in "${builds[@]:1}"; do
    for round in $(seq "$rounds"); do
        for suite in "${suites[@]}"; do
            name="compare-$base-$build-$suite-$round"
            "./.devbin/$build" --compare "$work/$base-$suite-$round.json" "$work/$build-$suite-$round.json" \
                > "$work/$name.txt"
            echo "--- $name: $(grep -c "gpu_kernel_ms .*FASTER" "$work/$name.txt") kernels FASTER," \
                "$(grep -c "gpu_kernel_ms .*SLOWER" "$work/$name.txt") SLOWER; all figures: $(tail -1 "$work/$name.txt")"
        done
    done
done
tar -czf "$out/device-ab.tar.gz" -C "$work" .
rm -rf "$work"
echo "device-ab: $out/device-ab.tar.gz ($((SECONDS - start)) s)"
