#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs the
# whole suite with none of it skipped.
#
#   bash scripts/test.sh [cargo test arguments...]
#
# It installs (each only when missing, into target/ except system tools):
#   - system tools through apt-get when absent: llvm (llvm-nm/llvm-objdump,
#     the test oracles), gcc (cc builds sample binaries), MinGW-w64 gcc
#     (Windows executables), python3 + venv, node + npm (it says so before
#     installing);
#   - the pinned, checksummed fixtures (tests/fixtures/fetch.sh -> target/fixtures);
#   - the Python MCP SDK (target/ci/venv), r2libr 5.7.4 (target/ci/r2venv),
#     the npm MCP SDK (target/ci/npm).
# Then it runs `cargo test` with REA_REQUIRE_EXTERNALS=1, so a test whose
# external is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export REA_REQUIRE_EXTERNALS=1 CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}" INSTA_UPDATE=no
ci="$root/target/ci"
mkdir -p "$ci"

step() {
  local name=$1
  shift
  echo "::: $name"
  local start=$SECONDS
  "$@"
  echo "::: $name took $((SECONDS - start))s"
}

system_tools() {
  # llvm-nm / llvm-objdump are the test oracles, cc builds test binaries,
  # python3 and node run the external MCP clients.
  local missing=()
  command -v llvm-nm >/dev/null || missing+=(llvm)
  command -v cc >/dev/null || missing+=(gcc)
  command -v python3 >/dev/null || missing+=(python3 python3-venv)
  command -v node >/dev/null || missing+=(nodejs npm)
  # MinGW-w64 builds the Windows executables whose `main` is checked.
  command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
  if ((${#missing[@]})); then
    echo "installing missing system tools with apt-get: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
  fi
  rustc --version; cargo --version; llvm-nm --version | head -n 2; python3 --version; node --version
}

python_client() {
  # The Python MCP SDK (legacy ClientSession and modern Client).
  if ! "$ci/venv/bin/python" -c 'import mcp.client.client' 2>/dev/null; then
    python3 -m venv "$ci/venv"
    "$ci/venv/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0'
  fi
  "$ci/venv/bin/python" -c 'import importlib.metadata as m; print("python mcp", m.version("mcp"))'
}

radare2_libr() {
  # radare2 5.7.4 as shared libraries (PyPI r2libr, no `r2` executable): the
  # radare2 tests run them through `rea radare2-host`, found through
  # REA_RADARE2_LIBR, which stays exported for the test phase.
  if ! "$ci/r2venv/bin/python" -c 'import importlib.metadata as m; assert m.version("r2libr") == "5.7.4"' 2>/dev/null; then
    python3 -m venv "$ci/r2venv"
    "$ci/r2venv/bin/pip" install --quiet --disable-pip-version-check 'r2libr==5.7.4'
  fi
  local core
  core=$(find "$ci/r2venv" \( -name libr_core.so -o -name libr_core.dylib \) -print -quit)
  if [ -z "$core" ]; then
    echo "r2libr installed no libr_core library under $ci/r2venv" >&2
    return 1
  fi
  REA_RADARE2_LIBR=$(dirname "$core")
  export REA_RADARE2_LIBR
  echo "radare2 libr $REA_RADARE2_LIBR"
}

npm_client() {
  # The TypeScript MCP SDK, in a scratch folder.
  if [ ! -f "$ci/npm/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
    mkdir -p "$ci/npm"
    (cd "$ci/npm" && { [ -f package.json ] || npm init -y >/dev/null; } \
      && npm install --silent --no-audit --no-fund '@modelcontextprotocol/sdk@1.32.2')
  fi
  node -e 'console.log("npm sdk", require(process.argv[1]).version)' \
    "$ci/npm/node_modules/@modelcontextprotocol/sdk/package.json"
}

step "system tools" system_tools
step "fixtures" bash tests/fixtures/fetch.sh
step "python mcp client" python_client
step "radare2 libr" radare2_libr
step "npm mcp client" npm_client
# The suite; its per-target summaries are added up at the end.
step "cargo test" bash -c 'set -o pipefail; cargo test "$@" 2>&1 | tee "$0"' "$ci/cargo-test.log" "$@"
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "cargo test: %d passed, %d failed, %d skipped\n", p, f, s }' "$ci/cargo-test.log" \
  | tee "$ci/test-summary.txt"
if grep -q '^SKIPPED ' "$ci/cargo-test.log"; then
  echo "some tests skipped although every external was installed:" >&2
  grep '^SKIPPED ' "$ci/cargo-test.log" >&2
  exit 1
fi
