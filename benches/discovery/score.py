#!/usr/bin/env python3
"""Score function-start discovery against the unstripped symbol table.

For each ELF given (default: every file in target/discovery-corpus/bin),
the truth is what `readelf -sW` lists in the *unstripped* file: FUNC
symbols with size > 0 in executable sections other than the PLT ones, one
per address. A start found where only size-0 FUNC symbols are (crt's
`_init`, `frame_dummy`, `deregister_tm_clones`: real functions the
assembler gave no size) is neither a hit nor an extra; the totals say how
many there were and the precision with them counted as extras. Each binary is scored in two variants:

  stripped  `strip --strip-all` (unwind tables kept);
  no-eh     stripped, then `.eh_frame` and `.eh_frame_hdr` overwritten
            with zeros, so no unwind table helps.

rea's answer is `rea procedures FILE` (addresses in executable sections,
PLT sections left out as for the truth). With --radare2 LIBDIR (a directory
holding libr_core.so, e.g. from PyPI r2libr), radare2 `aaa` + `aflj` runs
on the stripped file through ctypes and is scored beside (radare2 ignores
`.eh_frame`, so one run serves both variants).

Prints one Markdown table row per binary and variant, then the totals.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLT = re.compile(r"^\.plt(\..*)?$|^\.iplt$")


def sections(path):
    """(name, addr, offset, size, flags) of every section, from readelf."""
    out = subprocess.run(["readelf", "-SW", path], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S*)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if m:
            name, _type, addr, off, size, flags = m.groups()
            rows.append((name, int(addr, 16), int(off, 16), int(size, 16), flags))
    return rows


def code_ranges(path):
    """Executable, allocated, non-PLT section ranges."""
    return [(a, a + s) for (n, a, _o, s, f) in sections(path) if "X" in f and "A" in f and not PLT.match(n) and s > 0]


def inside(addr, ranges):
    return any(lo <= addr < hi for lo, hi in ranges)


def truth(path):
    """FUNC symbols in executable non-PLT sections, one per address: those
    with size > 0 (the truth), and the addresses only size-0 ones name
    (crt's `_init`, `frame_dummy`: functions, but unsized)."""
    out = subprocess.run(["readelf", "-sW", path], check=True, capture_output=True, text=True).stdout
    ranges = code_ranges(path)
    starts, unsized = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            addr, size = int(f[1], 16), int(f[2], 0)
            if inside(addr, ranges):
                (starts if size > 0 else unsized).add(addr)
    return starts, unsized - starts


def strip_tool(path):
    head = open(path, "rb").read(20)
    machine = struct.unpack_from("<H", head, 18)[0]
    if machine == 183 and shutil.which("aarch64-linux-gnu-strip"):
        return "aarch64-linux-gnu-strip"
    return "strip"


def zero_unwind_tables(path):
    """Overwrite `.eh_frame` and `.eh_frame_hdr` with zeros (their file ranges)."""
    with open(path, "r+b") as f:
        for name, _addr, off, size, _flags in sections(path):
            if name in (".eh_frame", ".eh_frame_hdr"):
                f.seek(off)
                f.write(b"\0" * size)


def rea_starts(rea, path, ranges):
    """{start: how rea found it} for the starts in `ranges`."""
    out = subprocess.run([rea, "procedures", "--found-by", path], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        addr = int(fields[0], 16)
        if inside(addr, ranges):
            how = fields[1] if len(fields) > 1 else "?"
            if len(fields) > 2 and fields[2].startswith("fragment_of="):
                how += "+part"
            found[addr] = how
    return found


def by_source(starts, how):
    """'source: count' for `starts`, most common first."""
    counts = {}
    for addr in starts:
        counts[how[addr]] = counts.get(how[addr], 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


class Radare2:
    def __init__(self, libdir):
        self.lib = ctypes.CDLL(os.path.join(libdir, "libr_core.so"))
        self.lib.r_core_new.restype = ctypes.c_void_p
        self.lib.r_core_free.argtypes = [ctypes.c_void_p]
        self.lib.r_core_cmd_str.restype = ctypes.c_void_p
        self.lib.r_core_cmd_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        util = ctypes.CDLL(os.path.join(libdir, "libr_util.so"))
        self.free = util.r_mem_free if hasattr(util, "r_mem_free") else ctypes.CDLL(None).free
        self.free.argtypes = [ctypes.c_void_p]

    def starts(self, path, ranges):
        core = self.lib.r_core_new()
        try:
            for cmd in ("e scr.color=0", "e scr.interactive=false", "e scr.progressbar=false", "e bin.relocs.apply=true", "o " + path, "ob", "aaa"):
                self._cmd(core, cmd)
            funcs = json.loads(self._cmd(core, "aflj") or "[]")
        finally:
            self.lib.r_core_free(core)
        return {f["offset"] for f in funcs if inside(f["offset"], ranges)}

    def _cmd(self, core, cmd):
        ptr = self.lib.r_core_cmd_str(core, cmd.encode())
        if not ptr:
            return ""
        text = ctypes.string_at(ptr).decode("utf-8", "replace")
        self.free(ptr)
        return text


def score(found, true):
    tp = len(found & true)
    p = tp / len(found) if found else 0.0
    r = tp / len(true) if true else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f1, tp


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--rea", default=os.path.join(REPO, "target", "release", "rea"))
    ap.add_argument("--radare2", metavar="LIBDIR", help="directory with libr_core.so (r2libr)")
    ap.add_argument("--misses", type=int, default=0, help="print this many missed and extra starts per row")
    args = ap.parse_args()
    files = args.files or sorted(
        os.path.join(d, n) for d in [os.path.join(REPO, "target", "discovery-corpus", "bin")] for n in os.listdir(d)
    )
    r2 = Radare2(args.radare2) if args.radare2 else None
    cols = "| binary | variant | functions | rea P | rea R | rea F1 |" + (" r2 aaa P | r2 aaa R | r2 aaa F1 |" if r2 else "")
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            true, unsized = truth(path)
            ranges = code_ranges(path)
            stripped = os.path.join(tmp, os.path.basename(path))
            subprocess.run([strip_tool(path), "--strip-all", "-o", stripped, path], check=True)
            noeh = stripped + ".no-eh"
            shutil.copyfile(stripped, noeh)
            zero_unwind_tables(noeh)
            r2row = None
            if r2:
                r2row = score(r2.starts(stripped, ranges) - unsized, true)
            for variant, file in (("stripped", stripped), ("no-eh", noeh)):
                how = rea_starts(args.rea, file, ranges)
                # A start at an unsized FUNC symbol is right, but outside
                # the truth: neither a hit nor an extra (counted apart).
                found = set(how) - unsized
                p, r, f1, tp = score(found, true)
                t = totals.setdefault(variant, [0, 0, 0, 0, 0])
                t[0] += len(true); t[1] += len(found); t[2] += tp; t[4] += len(set(how) & unsized)
                row = f"| {os.path.basename(path)} | {variant} | {len(true)} | {p:.3f} | {r:.3f} | {f1:.3f} |"
                if r2row:
                    row += f" {r2row[0]:.3f} | {r2row[1]:.3f} | {r2row[2]:.3f} |"
                    t[3] += r2row[3]
                print(row, flush=True)
                if args.misses:
                    print("  missed:", " ".join(hex(a) for a in sorted(true - found)[: args.misses]))
                    print("  extra: ", " ".join(hex(a) for a in sorted(found - true)[: args.misses]))
                    print("  extra by source:", by_source(found - true, how))
    for variant, (nt, nf, tp, _r2tp, unsized_found) in totals.items():
        p, r = (tp / nf if nf else 0), (tp / nt if nt else 0)
        strict = tp / (nf + unsized_found) if nf + unsized_found else 0
        print(
            f"total {variant}: {nt} functions, P {p:.3f} R {r:.3f} F1 {2*p*r/(p+r) if p+r else 0:.3f}"
            f" ({unsized_found} starts at size-0 FUNC symbols not counted; counted as extras, P {strict:.3f})"
        )


if __name__ == "__main__":
    sys.exit(main())
