#!/usr/bin/env bash
# Proves that `cargo build` fails with a precise file:line:col message when a
# prompt template names a tool that is not in the tool catalog. Builds a copy
# of the crate with one template edited; the copy shares target/ so only the
# build script runs again.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
copy="$root/target/ci/drift"
rm -rf "$copy"
mkdir -p "$copy"
cp -r Cargo.toml Cargo.lock build.rs src prompts benches "$copy/"
template="$copy/prompts/trace_crash.md.j2"
grep -q 'tool("binary_overview")' "$template"
sed -i '0,/tool("binary_overview")/s//tool("binary_overveiw")/' "$template"
line=$(grep -n 'binary_overveiw' "$template" | head -n 1 | cut -d: -f1)

set +e
output=$(CARGO_TARGET_DIR="$root/target" cargo build --quiet --manifest-path "$copy/Cargo.toml" 2>&1)
status=$?
set -e
if [ $status -eq 0 ]; then
  echo "drift check FAILED: the build succeeded although a template names an unknown tool"
  exit 1
fi
expected="prompts/trace_crash.md.j2:$line:"
if ! grep -q "$expected[0-9]*: error: .*tool \`binary_overveiw\` is not in the tool catalog.*did you mean \`binary_overview\`" <<<"$output"; then
  echo "drift check FAILED: the build failed without the expected diagnostic ($expected...)"
  echo "$output" | tail -n 30
  exit 1
fi
grep "binary_overveiw" <<<"$output" | head -n 1
echo "drift check ok: cargo build refuses a prompt that names an unknown tool"
rm -rf "$copy"
