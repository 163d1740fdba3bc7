# Peak RSS of `rea mcp` through open_binary, list_procedures and two searches over one file.
# Usage: python3 mcp_peak_rss.py PATH-TO-REA FILE
import json, subprocess, sys, time, os
rea, path = sys.argv[1], sys.argv[2]
d = os.path.dirname(os.path.abspath(path))
p = subprocess.Popen([rea, "mcp", "--read-root", d], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
i = 0
def call(method, params):
    global i; i += 1
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode()); p.stdin.flush()
    while True:
        line = p.stdout.readline()
        m = json.loads(line)
        if m.get("id") == i: return m
def hwm():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith(("VmHWM", "VmRSS")): print("  ", l.strip())
call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "m", "version": "0"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
for name, args in [("open_binary", {"path": os.path.abspath(path)}), ("list_procedures", {}), ("search_procedures", {"pattern": "abc"}), ("search_procedures", {"pattern": "zz"})]:
    t = time.time(); r = call("tools/call", {"name": name, "arguments": args})
    body = json.dumps(r)
    print(name, f"{time.time()-t:.1f}s", len(body), "bytes", "error" if r.get("result", {}).get("isError") else "")
    hwm()
p.kill()
