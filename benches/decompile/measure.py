#!/usr/bin/env python3
"""Measure rea's decompiler on one binary, through `rea mcp` as an agent uses it.

Usage: python3 benches/decompile/measure.py REA FILE [--limit N] [--workers N]

Prints JSON: the first C after open_binary (s), the warm time per procedure
(one procedure per call, after the worker is loaded: median, p90, p99, max
in ms), outcomes by reason, the share of statement lines that carry an
address, the address map's bytes over the text's, every procedure again in
batches of 64 on a fresh server (s), and the server's and workers' peak RSS.
The figures in the README's tables come from this script.
"""

import json
import os
import statistics
import subprocess
import sys
import time

STATEMENT_STARTS = ("if ", "if(", "while", "for ", "for(", "switch", "} while")


def statement_lines(lines):
    """Mirrors rea::decompiler::view::statement_lines."""
    body = next((i + 1 for i, l in enumerate(lines) if l == "{"), 0)
    decl = 0
    while body + decl < len(lines) and lines[body + decl].strip():
        decl += 1
    if body + decl >= len(lines):
        decl = 0
    out = []
    for i in range(body + decl, len(lines)):
        t = lines[i].strip()
        if (t.endswith(";") and not t.startswith("/*")) or t.startswith(STATEMENT_STARTS):
            out.append(i)
    return out


class Server:
    def __init__(self, rea, args):
        self.p = subprocess.Popen([rea, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env={**os.environ, "REA_LOG": "error"})
        self.id = 0
        self.call_raw("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "bench", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def call_raw(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def tool(self, name, args):
        result = self.call_raw("tools/call", {"name": name, "arguments": args})["result"]
        if result.get("isError"):
            raise RuntimeError(json.dumps(result)[:500])
        return result["structuredContent"]

    def peak_rss_mib(self):
        return status_kib(self.p.pid, "VmHWM") / 1024

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def workers_peak_mib(parent):
    peak = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if ppid == parent and b"decompile-worker" in cmd:
            peak = max(peak, status_kib(int(pid), "VmHWM") / 1024)
    return peak


def procedures(server):
    found, offset = [], 0
    while True:
        page = server.tool("list_procedures", {"offset": offset, "limit": 500})["result"]
        for item in page["items"]:
            if item.get("found_by") != ["import"]:
                found.append(item["address"])
        if not page["has_more"]:
            return found
        offset += len(page["items"])


def main():
    rea, path = sys.argv[1], os.path.abspath(sys.argv[2])
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else 10 ** 9
    workers = sys.argv[sys.argv.index("--workers") + 1] if "--workers" in sys.argv else "2"
    args = ["--decompile-workers", workers]
    server = Server(rea, args)
    server.tool("open_binary", {"path": path, "provider_id": "native"})
    listed = procedures(server)[:limit]
    started = time.monotonic()
    server.tool("procedure_pseudo_code", {"procedures": [listed[0]], "limit": 1})
    first = time.monotonic() - started
    times, reasons, statements, mapped, map_bytes, text_bytes = [], {}, 0, 0, 0, 0
    for address in listed[1:]:
        t = time.monotonic()
        item = server.tool("procedure_pseudo_code", {"procedures": [address], "limit": 5000})["result"]["procedures"][0]
        times.append((time.monotonic() - t) * 1000)
        reason = item.get("reason", "complete")
        reasons[reason] = reasons.get(reason, 0) + 1
        if reason == "complete":
            lines = item["lines"]
            entries = item["address_map"].split(";")
            for i in statement_lines(lines):
                statements += 1
                mapped += bool(entries[i]) if i < len(entries) else 0
            map_bytes += len(item["address_map"])
            text_bytes += sum(len(l) + 1 for l in lines)
    serial_rss = server.peak_rss_mib()
    server.close()
    fresh = Server(rea, args)
    fresh.tool("open_binary", {"path": path, "provider_id": "native"})
    rss_before = status_kib(fresh.p.pid, "VmRSS") / 1024
    t = time.monotonic()
    worker_peak = 0
    for i in range(0, len(listed), 64):
        fresh.tool("procedure_pseudo_code", {"procedures": listed[i:i + 64], "limit": 1})
        worker_peak = max(worker_peak, workers_peak_mib(fresh.p.pid))
    batch = time.monotonic() - t
    rss_after = status_kib(fresh.p.pid, "VmRSS") / 1024
    fresh.close()
    times.sort()

    def pct(p):
        return round(times[min(len(times) - 1, int(len(times) * p))], 1) if times else None

    print(json.dumps({
        "file": os.path.basename(path),
        "procedures": len(listed),
        "first_c_after_open_s": round(first, 3),
        "warm_ms": {"median": round(statistics.median(times), 1) if times else None,
                    "p90": pct(0.90), "p99": pct(0.99), "max": round(times[-1], 1) if times else None},
        "outcomes": reasons,
        "statement_lines_with_address": round(mapped / statements, 3) if statements else None,
        "map_bytes_over_text_bytes": round(map_bytes / text_bytes, 3) if text_bytes else None,
        "batch_all_s": round(batch, 1),
        "batch_workers": int(workers),
        "server_rss_mib_before_after_batch": [round(rss_before), round(rss_after)],
        "server_peak_rss_mib_serial": round(serial_rss),
        "worker_peak_rss_mib": round(worker_peak),
    }, indent=1))


if __name__ == "__main__":
    main()
