#!/usr/bin/env bash
# Prints the size in bytes of every rendered prompt, once with only its
# required arguments and once with every argument, each value being
# "example <name>" (as in tests/prompt_snapshots.rs), with no session facts.
#
#   bash scripts/prompt-sizes.sh [REA_BINARY]
#
# The binary defaults to target/release/rea (built when missing). The
# README's table of prompt sizes comes from this script.
set -euo pipefail
cd "$(dirname "$0")/.."
rea=${1:-target/release/rea}
if [ ! -x "$rea" ]; then
  cargo build --release --quiet
fi
printf '%-34s %10s %10s\n' prompt required every
"$rea" prompts list | while read -r name _; do
  spec=$("$rea" prompts list | grep "^$name " | sed 's/.*(\(.*\))$/\1/')
  required=() every=()
  IFS=',' read -ra arguments <<<"$spec"
  for argument in "${arguments[@]}"; do
    argument=${argument// /}
    case $argument in
      \[*\]) argument=${argument#[}; argument=${argument%]} ;;
      *) required+=(--arg "$argument=example $argument") ;;
    esac
    every+=(--arg "$argument=example $argument")
  done
  printf '%-34s %10s %10s\n' "$name" \
    "$("$rea" prompts render "$name" "${required[@]}" | wc -c)" \
    "$("$rea" prompts render "$name" "${every[@]}" | wc -c)"
done
