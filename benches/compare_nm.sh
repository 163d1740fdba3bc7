#!/usr/bin/env bash
# compare_nm.sh: process-level comparison of `rea procedures FILE` against
# GNU `nm --defined-only FILE`, both writing to /dev/null.
#
# Usage:
#   benches/compare_nm.sh [FILE]        (run from anywhere inside the repo)
#
#   FILE defaults to the active Rust toolchain's librustc_driver-*.so
#   (`$(rustc --print sysroot)/lib/librustc_driver-*.so`, ~150 MB ELF; ~166k
#   .symtab + ~21k .dynsym entries, of which nm --defined-only lists ~164k).
#
# Environment:
#   RUNS=N      timed runs per command (default 10)
#   WARMUP=N    untimed warm-up runs per command, with hyperfine (default 2)
#   REA=PATH    use this rea binary instead of building target/release/rea
#   NO_HYPERFINE=1  time with the /usr/bin/time loop even if hyperfine exists
#
# Prerequisites:
#   - cargo / rustc (to build rea in release, and to find the default FILE);
#   - GNU binutils `nm` (Debian/Ubuntu: apt-get install binutils);
#   - GNU time as /usr/bin/time, for peak RSS (apt-get install time);
#   - optional: hyperfine for wall times (apt-get install hyperfine); without
#     it, wall times come from a loop of RUNS runs of /usr/bin/time -f %e.
#
# What it prints: median wall time (and hyperfine's mean ± σ when available),
# median peak RSS over RUNS runs, and the line count of each command's output.
# The two outputs are not the same listing: `nm --defined-only` prints every
# defined symbol (data, locals, section symbols too), sorted by name; `rea
# procedures` prints the procedures (defined function symbols of .symtab and
# .dynsym, one per address and name), sorted by address. The comparison is of
# the cost of producing each tool's answer.
set -euo pipefail

die() {
    echo "compare_nm.sh: $*" >&2
    exit 1
}

RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer (got '$RUNS')"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer (got '$WARMUP')"

# --- Prerequisites -----------------------------------------------------------
command -v nm >/dev/null || die "nm not found; install GNU binutils (apt-get install binutils)"
nm --version 2>/dev/null | grep -q 'GNU nm' || die "nm is not GNU binutils nm ($(command -v nm))"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found; install it (apt-get install time)"
/usr/bin/time -f %M true 2>/dev/null || die "/usr/bin/time is not GNU time (needs -f %M)"
HYPERFINE=$(command -v hyperfine || true)
[[ -n ${NO_HYPERFINE:-} ]] && HYPERFINE=

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# --- Target file ---------------------------------------------------------------
if [[ $# -ge 1 ]]; then
    FILE=$1
    [[ -f $FILE ]] || die "no such file: $FILE"
else
    command -v rustc >/dev/null || die "rustc not found; pass FILE or install Rust (https://rustup.rs)"
    SYSROOT=$(cd "$REPO" && rustc --print sysroot) || die "rustc --print sysroot failed"
    shopt -s nullglob
    candidates=("$SYSROOT"/lib/librustc_driver-*.so)
    shopt -u nullglob
    [[ ${#candidates[@]} -ge 1 ]] ||
        die "no librustc_driver-*.so under $SYSROOT/lib; pass a FILE explicitly"
    FILE=${candidates[0]}
fi

# --- rea binary ------------------------------------------------------------------
if [[ -n ${REA:-} ]]; then
    [[ -x $REA ]] || die "REA=$REA is not an executable"
else
    command -v cargo >/dev/null || die "cargo not found; install Rust (https://rustup.rs) or set REA="
    echo "building rea (release)..." >&2
    (cd "$REPO" && cargo build --release --quiet --bin rea) || die "cargo build --release failed"
    REA=$REPO/target/release/rea
    [[ -x $REA ]] || die "build finished but $REA is missing"
fi

# Each command must succeed once before it is timed.
"$REA" procedures --symbols-only "$FILE" >/dev/null || die "'rea procedures --symbols-only $FILE' failed"
nm --defined-only "$FILE" >/dev/null || die "'nm --defined-only $FILE' failed"

REA_CMD=("$REA" procedures --symbols-only "$FILE")
NM_CMD=(nm --defined-only "$FILE")

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

SCRATCH=$(mktemp)
JSON=$(mktemp)
trap 'rm -f "$SCRATCH" "$JSON"' EXIT

# Runs the command "$@" RUNS times under GNU time; sets LOOP_WALL (median
# seconds, 10 ms resolution) and LOOP_RSS (median peak RSS, KiB).
time_loop() {
    local out i walls=() rss=()
    for ((i = 0; i < RUNS; i++)); do
        # -o: the command's own stderr is discarded, time's report is kept.
        /usr/bin/time -f '%e %M' -o "$SCRATCH" "$@" >/dev/null 2>/dev/null ||
            die "command failed under /usr/bin/time: $*"
        out=$(tail -n 1 "$SCRATCH")
        walls+=("${out%% *}")
        rss+=("${out##* }")
    done
    LOOP_WALL=$(printf '%s\n' "${walls[@]}" | median)
    LOOP_RSS=$(printf '%s\n' "${rss[@]}" | median)
}

echo "file:     $FILE ($(du -h "$FILE" | cut -f1))"
echo "machine:  $(nproc) cores, $(uname -sr)"
echo "rea:      $REA ($("$REA" --version 2>/dev/null || echo 'version unknown'))"
echo "nm:       $(nm --version | head -n 1)"
echo "runs:     $RUNS"
echo

declare -A WALL RSS LINES
time_loop "${REA_CMD[@]}"
WALL[rea]=$LOOP_WALL RSS[rea]=$LOOP_RSS
time_loop "${NM_CMD[@]}"
WALL[nm]=$LOOP_WALL RSS[nm]=$LOOP_RSS
LINES[rea]=$("${REA_CMD[@]}" | wc -l)
LINES[nm]=$("${NM_CMD[@]}" | wc -l)

if [[ -n $HYPERFINE ]]; then
    "$HYPERFINE" --shell=none --warmup "$WARMUP" --runs "$RUNS" --output=null \
        --export-json "$JSON" \
        -n rea "$(printf '%q ' "${REA_CMD[@]}")" -n nm "$(printf '%q ' "${NM_CMD[@]}")" >&2
    # Median of each command from the JSON export (no jq needed).
    mapfile -t medians < <(grep -o '"median": *[0-9.e+-]*' "$JSON" | grep -o '[0-9.e+-]*$')
    mapfile -t means < <(grep -o '"mean": *[0-9.e+-]*' "$JSON" | grep -o '[0-9.e+-]*$')
    mapfile -t stddevs < <(grep -o '"stddev": *[0-9.e+-]*' "$JSON" | grep -o '[0-9.e+-]*$')
    WALL[rea]=${medians[0]}
    WALL[nm]=${medians[1]}
    SOURCE="hyperfine $("$HYPERFINE" --version | cut -d' ' -f2), $RUNS runs, $WARMUP warm-up"
    printf 'hyperfine mean ± σ: rea %.3f s ± %.3f, nm %.3f s ± %.3f\n' \
        "${means[0]}" "${stddevs[0]}" "${means[1]}" "${stddevs[1]}"
else
    SOURCE="/usr/bin/time -f %e, median of $RUNS runs (10 ms resolution; no hyperfine)"
fi

echo
echo "wall time: $SOURCE; peak RSS: /usr/bin/time -f %M, median of $RUNS runs"
printf '| %-34s | %12s | %13s | %12s |\n' command 'median wall' 'peak RSS' 'output lines'
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..14})" \
    "$(printf -- '-%.0s' {1..15})" "$(printf -- '-%.0s' {1..14})"
printf '| %-34s | %10.3f s | %9.1f MiB | %12s |\n' \
    '`rea procedures --symbols-only FILE`' "${WALL[rea]}" "$(awk "BEGIN { print ${RSS[rea]} / 1024 }")" "${LINES[rea]}"
printf '| %-34s | %10.3f s | %9.1f MiB | %12s |\n' \
    '`nm --defined-only FILE`' "${WALL[nm]}" "$(awk "BEGIN { print ${RSS[nm]} / 1024 }")" "${LINES[nm]}"
echo
awk -v r="${WALL[rea]}" -v n="${WALL[nm]}" 'BEGIN {
    printf "rea / nm wall-time ratio: %.2f (%s)\n", r / n, (r <= n ? "rea no slower than nm" : "rea SLOWER than nm")
}'
