# ELF x86-64 with N JUMP_SLOT imports whose names are distinct 2-4 KiB suffixes of 4 KiB runs (review round 3, R3-5).
# Usage: python3 elf_import_names.py OUT [N=400000]
import struct, random, sys
N = int(sys.argv[2]) if len(sys.argv) > 2 else 400_000
random.seed(5)
runs = []
strtab = bytearray(b"\0")
offs = []
while len(offs) < N:
    run = bytes(random.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(4096)) + b"\0"
    base = len(strtab); strtab += run
    for k in range(2048):
        if len(offs) == N: break
        offs.append(base + k)
dynsym = bytearray(24)
for o in offs:
    dynsym += struct.pack("<IBBHQQ", o, 0x12, 0, 0, 0, 0)  # GLOBAL FUNC UND
GOT = 0x800000
rela = bytearray()
for i in range(N):
    rela += struct.pack("<QQq", GOT + 8 * i, ((i + 1) << 32) | 7, 0)
text = b"\xc3" * 16
shstr = b"\0.text\0.dynstr\0.dynsym\0.rela.plt\0.got.plt\0.shstrtab\0"
def n(s): return shstr.index(s.encode() + b"\0")
secs = []  # name, type, flags, addr, data, link, info, entsize
secs.append((".text", 1, 6, 0x401000, text, 0, 0, 0))
secs.append((".dynstr", 3, 2, 0x410000, bytes(strtab), 0, 0, 0))
secs.append((".dynsym", 11, 2, 0x10000000, bytes(dynsym), 2, 1, 24))
secs.append((".rela.plt", 4, 2, 0x20000000, bytes(rela), 3, 0, 24))
secs.append((".got.plt", 1, 3, GOT, bytes(8 * N), 0, 0, 0))
secs.append((".shstrtab", 3, 0, 0, shstr, 0, 0, 0))
out = bytearray(64)
placed = []
for s in secs:
    while len(out) % 16: out += b"\0"
    placed.append(len(out)); out += s[4]
while len(out) % 8: out += b"\0"
shoff = len(out)
out += bytes(64)
for s, off in zip(secs, placed):
    out += struct.pack("<IIQQQQIIQQ", n(s[0]), s[1], s[2], s[3], off, len(s[4]), s[5], s[6], 8, s[7])
hdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 2, 62, 1, 0x401000, 0, shoff, 0, 64, 56, 0, 64, len(secs) + 1, len(secs))
out[:64] = hdr
open(sys.argv[1], "wb").write(out)
print(len(out))
