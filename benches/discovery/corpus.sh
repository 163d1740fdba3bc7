#!/usr/bin/env bash
# corpus.sh: fetch and build the function-discovery benchmark corpus into
# <repo>/target/discovery-corpus/ (see benches/discovery/README.md).
#
# Real projects nobody here wrote, from package registries, each pinned to
# a version and checked against a hard-coded sha256 before it is unpacked:
#   - Debian bookworm source packages (the upstream tarballs Debian ships):
#     lua5.4 5.4.4 (C), libzstd 1.5.4 (C), ninja-build 1.11.1 (C++);
#   - crates.io: ripgrep 14.1.1 (Rust), built with its own Cargo.lock
#     (`--locked`: cargo checks every crate against the lock's checksum).
# C and C++ are built with gcc/g++ -O2 for x86-64 (PIE and static) and,
# with Debian's cross compilers (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu),
# for arm64 (PIE and static); Rust in cargo's release profile. Nothing is
# stripped here: the symbol tables are the truth the scorer reads.
#
# Idempotent: a binary already built is kept. Needs curl, tar, xz, make,
# gcc, g++, cargo; the arm64 builds are skipped (with a line saying so)
# when the cross compilers are not installed.
set -euo pipefail

REPO="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
OUT="$REPO/target/discovery-corpus"
SRC="$OUT/.src"
BIN="$OUT/bin"
mkdir -p "$SRC" "$BIN"
POOL=https://deb.debian.org/debian/pool/main
JOBS="$(nproc 2>/dev/null || echo 2)"

die() { echo "corpus.sh: $*" >&2; exit 1; }

# fetch URL SHA256 DEST: download once, verify always.
fetch() {
    local url="$1" sha="$2" dest="$3"
    if [[ ! -f "$dest" ]]; then
        curl -fsSL --retry 3 -o "$dest.part" "$url" || die "cannot download $url"
        mv -f "$dest.part" "$dest"
    fi
    local got
    got="$(sha256sum "$dest" | cut -d' ' -f1)"
    [[ "$got" == "$sha" ]] || { rm -f "$dest"; die "checksum mismatch for $url: expected $sha, got $got"; }
}

# unpack ARCHIVE DIR: a fresh copy of the sources, one directory level stripped.
unpack() {
    rm -rf "$2"; mkdir -p "$2"
    tar -xf "$1" -C "$2" --strip-components=1
}

have_cross() { command -v aarch64-linux-gnu-gcc >/dev/null && command -v aarch64-linux-gnu-g++ >/dev/null; }

# variants: "x86_64-pie x86_64-static" plus the arm64 ones when the cross compilers exist.
variants() {
    local v="x86_64-pie x86_64-static"
    if have_cross; then v="$v arm64-pie arm64-static"; fi
    echo "$v"
}
compiler_of() {  # compiler_of VARIANT gcc|g++
    case "$1" in arm64-*) echo "aarch64-linux-gnu-$2" ;; *) echo "$2" ;; esac
}
link_flags_of() {
    case "$1" in *-static) echo "-static" ;; *) echo "-pie" ;; esac
}

# --- Lua 5.4.4 (C): the interpreter, from Debian's lua5.4 source package.
build_lua() {
    local archive="$SRC/lua5.4_5.4.4.orig.tar.gz"
    fetch "$POOL/l/lua5.4/lua5.4_5.4.4.orig.tar.gz" \
        164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61 "$archive"
    for v in $(variants); do
        local dest="$BIN/lua-$v"
        [[ -f "$dest" ]] && continue
        local dir="$SRC/lua-$v"
        unpack "$archive" "$dir"
        local cc; cc="$(compiler_of "$v" gcc)"
        (cd "$dir/src" && $cc -O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $(link_flags_of "$v") \
            -o "$dest" $(ls ./*.c | grep -v -e luac.c) -lm -ldl) || die "lua $v did not build"
        echo "built lua-$v"
    done
}

# --- zstd 1.5.4 (C): the command-line program, from Debian's libzstd source package.
build_zstd() {
    local archive="$SRC/libzstd_1.5.4+dfsg2.orig.tar.xz"
    fetch "$POOL/libz/libzstd/libzstd_1.5.4+dfsg2.orig.tar.xz" \
        8cf4bbb65e77ec348d052c8d6230eba66d435bddf64c8b5be2fcb16880c19953 "$archive"
    for v in $(variants); do
        local dest="$BIN/zstd-$v"
        [[ -f "$dest" ]] && continue
        local dir="$SRC/zstd-$v"
        unpack "$archive" "$dir"
        local cc; cc="$(compiler_of "$v" gcc)"
        make -s -C "$dir/programs" -j"$JOBS" zstd CC="$cc" CFLAGS="-O2" \
            LDFLAGS="$(link_flags_of "$v")" HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0 >/dev/null ||
            die "zstd $v did not build"
        cp "$dir/programs/zstd" "$dest"
        echo "built zstd-$v"
    done
}

# --- ninja 1.11.1 (C++), from Debian's ninja-build source package.
build_ninja() {
    local archive="$SRC/ninja-build_1.11.1.orig.tar.gz"
    fetch "$POOL/n/ninja-build/ninja-build_1.11.1.orig.tar.gz" \
        31747ae633213f1eda3842686f83c2aa1412e0f5691d1c14dbbcc67fe7400cea "$archive"
    for v in $(variants); do
        local dest="$BIN/ninja-$v"
        [[ -f "$dest" ]] && continue
        local dir="$SRC/ninja-$v"
        unpack "$archive" "$dir"
        local cxx; cxx="$(compiler_of "$v" g++)"
        # The sources configure.py builds on Linux, without the tests,
        # the Windows files and the browse server (which needs Python).
        local files
        files="$(cd "$dir/src" && ls ./*.cc | grep -v -e _test.cc -e _perftest.cc \
            -e _bench.cc -e "\.in\.cc" -e win32 -e msvc -e minidump -e includes_normalize -e browse -e test.cc -e _main.cc)"
        (cd "$dir/src" && $cxx -O2 -DNDEBUG -D_FILE_OFFSET_BITS=64 \
            $(link_flags_of "$v") -o "$dest" $files) || die "ninja $v did not build"
        echo "built ninja-$v"
    done
}

# --- ripgrep 14.1.1 (Rust), cargo release profile, x86-64 only (the machine's one toolchain).
build_ripgrep() {
    local dest="$BIN/ripgrep-x86_64-pie"
    [[ -f "$dest" ]] && return 0
    CARGO_TARGET_DIR="$SRC/ripgrep-target" cargo install --quiet --locked --force \
        --root "$SRC/ripgrep-root" ripgrep --version 14.1.1 >/dev/null ||
        die "ripgrep did not build"
    cp "$SRC/ripgrep-root/bin/rg" "$dest"
    echo "built ripgrep-x86_64-pie"
}

have_cross || echo "corpus.sh: no aarch64-linux-gnu-gcc/g++; arm64 binaries skipped (apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu)" >&2
build_lua
build_zstd
build_ninja
build_ripgrep
ls -1 "$BIN"
