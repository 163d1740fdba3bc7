//! Hand-encoded instructions (checked with `llvm-mc -show-encoding`) for
//! every flow and data-reference rule, the text of `disassemble`, and
//! robustness properties on arbitrary bytes and addresses.

use proptest::prelude::*;

use super::super::fixtures;
use super::{BAD_MNEMONIC, Decoded, arch_of, disassemble, sweep};
use crate::providers::code::{Arch, DataReference, Flow, RefKind};

// ---------------------------------------------------------------- support

fn decode(arch: Arch, bytes: &[u8], address: u64) -> Vec<Decoded> {
    let mut all = Vec::new();
    sweep(arch, bytes, address, |decoded| all.push(decoded));
    all
}

/// The one instruction `bytes` encode, which must cover all of them.
fn single(arch: Arch, bytes: &[u8], address: u64) -> Decoded {
    let all = decode(arch, bytes, address);
    assert_eq!(all.len(), 1, "{bytes:02x?} is one instruction: {all:?}");
    assert_eq!(usize::from(all[0].len), bytes.len(), "{all:?}");
    assert_eq!(all[0].address, address);
    all[0]
}

/// Little-endian bytes of AArch64 instruction words.
fn words(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le_bytes()).collect()
}

fn read(target: u64) -> Option<DataReference> {
    Some(DataReference {
        target,
        kind: RefKind::Read,
    })
}

fn write(target: u64) -> Option<DataReference> {
    Some(DataReference {
        target,
        kind: RefKind::Write,
    })
}

fn through(kind: RefKind, target: u64) -> Option<DataReference> {
    Some(DataReference { target, kind })
}

fn address(target: u64) -> Option<DataReference> {
    Some(DataReference {
        target,
        kind: RefKind::Address,
    })
}

/// Data references of a sweep, in order.
fn data_of(arch: Arch, bytes: &[u8], base: u64) -> Vec<Option<DataReference>> {
    decode(arch, bytes, base)
        .iter()
        .map(|decoded| decoded.data)
        .collect()
}

// ---------------------------------------------------------------- x86

const X64: u64 = 0x1000;

#[test]
fn x86_64_flow_of_each_kind() {
    let cases: &[(&[u8], Flow)] = &[
        (
            &[0xe9, 0x00, 0x01, 0x00, 0x00],
            Flow::Jump { target: 0x1105 },
        ),
        (&[0xeb, 0xfe], Flow::Jump { target: X64 }),
        (&[0x74, 0x05], Flow::ConditionalJump { target: 0x1007 }),
        (
            &[0x0f, 0x85, 0x00, 0x01, 0x00, 0x00],
            Flow::ConditionalJump { target: 0x1106 },
        ),
        (&[0xe2, 0xfe], Flow::ConditionalJump { target: X64 }), // loop
        (&[0xe3, 0x00], Flow::ConditionalJump { target: 0x1002 }), // jrcxz
        (
            &[0xe8, 0x00, 0x01, 0x00, 0x00],
            Flow::Call { target: 0x1105 },
        ),
        (&[0xff, 0xd0], Flow::IndirectCall), // call rax
        (&[0xff, 0x15, 0x10, 0, 0, 0], Flow::IndirectCall), // call [rip + 0x10]
        (&[0xff, 0xe0], Flow::IndirectJump), // jmp rax
        (&[0xff, 0x25, 0x20, 0, 0, 0], Flow::IndirectJump), // jmp [rip + 0x20]
        (&[0xc3], Flow::Return),
        (&[0xc2, 0x08, 0x00], Flow::Return), // ret 8
        (&[0xf4], Flow::Stop),               // hlt
        (&[0x0f, 0x0b], Flow::Stop),         // ud2
        (&[0x0f, 0xb9, 0xc0], Flow::Stop),   // ud1 eax, eax
        (&[0x0f, 0xff, 0xc0], Flow::Stop),   // ud0 eax, eax
        (&[0xcc], Flow::Stop),               // int3
        (&[0xf1], Flow::Stop),               // int1
        (&[0xcd, 0x80], Flow::Sequential),   // int 0x80 returns
        (&[0x0f, 0x05], Flow::Sequential),   // syscall returns
        (&[0x90], Flow::Sequential),
    ];
    for (bytes, flow) in cases {
        assert_eq!(single(Arch::X86_64, bytes, X64).flow, *flow, "{bytes:02x?}");
    }
}

#[test]
fn x86_64_static_memory_operands_are_data_references() {
    let cases: &[(&[u8], Option<DataReference>)] = &[
        // lea rax, [rip + 0x100]
        (&[0x48, 0x8d, 0x05, 0x00, 0x01, 0, 0], address(0x1107)),
        // mov rax, qword ptr [rip + 0x100]
        (&[0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0], read(0x1107)),
        // mov dword ptr [rip + 0x100], eax
        (&[0x89, 0x05, 0x00, 0x01, 0, 0], write(0x1106)),
        // add dword ptr [rip + 0x40], 1: read-modify-write
        (&[0x83, 0x05, 0x40, 0, 0, 0, 0x01], write(0x1047)),
        // lock cmpxchg dword ptr [rip + 0x10], esi: conditional write
        (&[0xf0, 0x0f, 0xb1, 0x35, 0x10, 0, 0, 0], write(0x1018)),
        // cmp byte ptr [rip + 0x10], 0
        (&[0x80, 0x3d, 0x10, 0, 0, 0, 0x00], read(0x1017)),
        // push qword ptr [rip + 0x10]: the stack write is not the operand
        (&[0xff, 0x35, 0x10, 0, 0, 0], read(0x1016)),
        // call / jmp through a pointer slot go through it
        (&[0xff, 0x15, 0x10, 0, 0, 0], through(RefKind::Call, 0x1016)),
        (&[0xff, 0x25, 0x20, 0, 0, 0], through(RefKind::Jump, 0x1026)),
        // mov eax, dword ptr [0x601040]: absolute
        (&[0x8b, 0x04, 0x25, 0x40, 0x10, 0x60, 0x00], read(0x60_1040)),
        // mov rax, qword ptr fs:[-8]: thread-local, not an address
        (
            &[0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff],
            None,
        ),
        // mov eax, dword ptr [rbx + 8]
        (&[0x8b, 0x43, 0x08], None),
        // direct branches have no memory operand
        (&[0xe8, 0x00, 0x01, 0x00, 0x00], None),
    ];
    for (bytes, data) in cases {
        assert_eq!(single(Arch::X86_64, bytes, X64).data, *data, "{bytes:02x?}");
    }
}

const X86: u64 = 0x0804_8000;

#[test]
fn x86_absolute_operands_and_far_branches() {
    let cases: &[(&[u8], Flow, Option<DataReference>)] = &[
        // mov eax, dword ptr [0x8049000] / mov dword ptr [0x8049000], eax
        (
            &[0xa1, 0x00, 0x90, 0x04, 0x08],
            Flow::Sequential,
            read(0x0804_9000),
        ),
        (
            &[0xa3, 0x00, 0x90, 0x04, 0x08],
            Flow::Sequential,
            write(0x0804_9000),
        ),
        // lea eax, [0x1000]
        (
            &[0x8d, 0x05, 0x00, 0x10, 0, 0],
            Flow::Sequential,
            address(0x1000),
        ),
        // mov eax, dword ptr gs:[0x14]: the stack protector's TLS slot
        (&[0x65, 0xa1, 0x14, 0, 0, 0], Flow::Sequential, None),
        // call dword ptr [0x8049000]
        (
            &[0xff, 0x15, 0x00, 0x90, 0x04, 0x08],
            Flow::IndirectCall,
            through(RefKind::Call, 0x0804_9000),
        ),
        // jmp far 0x10:0x1000 and call far 0x10:0x1000: segment:offset
        (
            &[0xea, 0x00, 0x10, 0, 0, 0x10, 0x00],
            Flow::IndirectJump,
            None,
        ),
        (
            &[0x9a, 0x00, 0x10, 0, 0, 0x10, 0x00],
            Flow::IndirectCall,
            None,
        ),
        // push es: valid in 32-bit code only
        (&[0x06], Flow::Sequential, None),
    ];
    for (bytes, flow, data) in cases {
        let decoded = single(Arch::X86, bytes, X86);
        assert_eq!((decoded.flow, decoded.data), (*flow, *data), "{bytes:02x?}");
    }
}

#[test]
fn x86_targets_wrap_in_32_bits() {
    // call +0x10000000 from 0xfffffff0 lands at 0x0ffffff5.
    let call = single(Arch::X86, &[0xe8, 0x00, 0x00, 0x00, 0x10], 0xffff_fff0);
    assert_eq!(
        call.flow,
        Flow::Call {
            target: 0x0fff_fff5
        }
    );
    let jump = single(Arch::X86, &[0xeb, 0x7f], 0xffff_ff90);
    assert_eq!(jump.flow, Flow::Jump { target: 0x11 });
}

#[test]
fn x86_64_targets_and_addresses_wrap_in_64_bits() {
    let jump = single(Arch::X86_64, &[0xeb, 0x10], u64::MAX - 1);
    assert_eq!(jump.flow, Flow::Jump { target: 0x10 });
    let addresses: Vec<u64> = decode(Arch::X86_64, &[0x90; 4], u64::MAX - 1)
        .iter()
        .map(|decoded| decoded.address)
        .collect();
    assert_eq!(addresses, [u64::MAX - 1, u64::MAX, 0, 1]);
}

#[test]
fn x86_undecodable_bytes_stop_one_byte_at_a_time() {
    // push es does not exist in 64-bit code; decoding resumes at the ret.
    let all = decode(Arch::X86_64, &[0x06, 0x06, 0xc3], X64);
    let summary: Vec<(u64, u8, Flow)> = all.iter().map(|d| (d.address, d.len, d.flow)).collect();
    assert_eq!(
        summary,
        [
            (X64, 1, Flow::Stop),
            (X64 + 1, 1, Flow::Stop),
            (X64 + 2, 1, Flow::Return)
        ]
    );
    assert!(all.iter().all(|decoded| decoded.data.is_none()));
}

#[test]
fn x86_trailing_partial_instruction_is_one_stop() {
    // nop, then the first two bytes of a five-byte call.
    let all = decode(Arch::X86_64, &[0x90, 0xe8, 0x00], X64);
    let summary: Vec<(u64, u8, Flow)> = all.iter().map(|d| (d.address, d.len, d.flow)).collect();
    assert_eq!(
        summary,
        [(X64, 1, Flow::Sequential), (X64 + 1, 2, Flow::Stop)]
    );
}

#[test]
fn x86_64_text_reads_like_llvm_objdump() {
    let bytes = [
        0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00, // lea rax, [rip + 0x100]
        0x48, 0x8b, 0x44, 0xcb, 0xf8, // mov rax, qword ptr [rbx + 8*rcx - 8]
        0xe8, 0x00, 0x01, 0x00, 0x00, // call
        0x06, // (bad)
        0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // movabs
        0x66, 0x90, // nop
        0x48, 0x83, 0xe4, 0xf0, // and rsp, -0x10
        0xf0, 0x0f, 0xb1, 0x35, 0x10, 0x00, 0x00, 0x00, // lock cmpxchg
    ];
    let listing = disassemble(Arch::X86_64, &bytes, X64, usize::MAX);
    let text: Vec<(&str, &str)> = listing
        .iter()
        .map(|line| (line.mnemonic.as_str(), line.operands.as_str()))
        .collect();
    assert_eq!(
        text,
        [
            ("lea", "rax, [rip + 0x100]"),
            ("mov", "rax, qword ptr [rbx + 8*rcx - 0x8]"),
            ("call", "0x1111"),
            (BAD_MNEMONIC, ""),
            ("movabs", "rax, 0x1122334455667788"),
            ("nop", ""),
            ("and", "rsp, -0x10"),
            ("lock", "cmpxchg dword ptr [rip + 0x10], esi"),
        ]
    );
    assert_eq!(listing[0].bytes, bytes[..7]);
    assert_eq!(listing[3].bytes, [0x06]);
    assert_eq!(listing[3].flow, Flow::Stop);
    assert_eq!(listing[0].data, address(0x1107));
}

// ---------------------------------------------------------------- AArch64

const A64: u64 = 0x1_0000;

#[test]
fn arm64_flow_of_each_kind() {
    let cases: &[(u32, Flow)] = &[
        (0x1400_0002, Flow::Jump { target: A64 + 8 }), // b
        (0x17ff_ffff, Flow::Jump { target: A64 - 4 }), // b backwards
        (0x9400_0002, Flow::Call { target: A64 + 8 }), // bl
        (0x5400_0040, Flow::ConditionalJump { target: A64 + 8 }), // b.eq
        (0x5400_004e, Flow::Jump { target: A64 + 8 }), // b.al always branches
        (0x5400_004f, Flow::Jump { target: A64 + 8 }), // b.nv too
        (0xb400_0040, Flow::ConditionalJump { target: A64 + 8 }), // cbz x0
        (0x3500_0041, Flow::ConditionalJump { target: A64 + 8 }), // cbnz w1
        (0x3618_0040, Flow::ConditionalJump { target: A64 + 8 }), // tbz w0, #3
        (0xb740_0045, Flow::ConditionalJump { target: A64 + 8 }), // tbnz x5, #40
        (0xd61f_0200, Flow::IndirectJump),             // br x16
        (0xd71f_0a11, Flow::IndirectJump),             // braa x16, x17
        (0xd61f_087f, Flow::IndirectJump),             // braaz x3
        (0xd63f_0100, Flow::IndirectCall),             // blr x8
        (0xd73f_0909, Flow::IndirectCall),             // blraa x8, x9
        (0xd65f_03c0, Flow::Return),                   // ret
        (0xd65f_0bff, Flow::Return),                   // retaa
        (0xd69f_03e0, Flow::Return),                   // eret
        (0xd420_0000, Flow::Stop),                     // brk #0
        (0x0000_0000, Flow::Stop),                     // udf #0
        (0xd440_0000, Flow::Stop),                     // hlt #0
        (0xd400_0001, Flow::Sequential),               // svc #0
        (0xd503_201f, Flow::Sequential),               // nop
    ];
    for (word, flow) in cases {
        let decoded = single(Arch::Aarch64, &words(&[*word]), A64);
        assert_eq!(decoded.flow, *flow, "{word:#010x}");
    }
}

#[test]
fn arm64_pc_relative_data_references() {
    let cases: &[(u32, Option<DataReference>)] = &[
        (0x1000_0080, address(A64 + 16)), // adr x0, #16
        (0x5800_0080, read(A64 + 16)),    // ldr x0, #16
        (0x98ff_ffc1, read(A64 - 8)),     // ldrsw x1, #-8
        (0xb000_0008, None),              // adrp x8 alone: nothing
    ];
    for (word, data) in cases {
        let decoded = single(Arch::Aarch64, &words(&[*word]), A64);
        assert_eq!(decoded.data, *data, "{word:#010x}");
    }
}

/// `adrp x8, #0x1000` at `PAIRED`: the page of `PAIRED + 0x1000`.
const ADRP_X8: u32 = 0xb000_0008;
/// Not page aligned, so the page computation is visible.
const PAIRED: u64 = 0x1_0004;
const PAGE: u64 = 0x1_1000;

#[test]
fn arm64_adrp_pairs_with_the_next_use_of_its_register() {
    let cases: &[(u32, Option<DataReference>)] = &[
        (0x9100_4108, address(PAGE + 0x10)),   // add x8, x8, #0x10
        (0x9140_0500, address(PAGE + 0x1000)), // add x0, x8, #1, lsl #12
        (0xf940_0d00, read(PAGE + 0x18)),      // ldr x0, [x8, #0x18]
        (0x3940_0d00, read(PAGE + 3)),         // ldrb w0, [x8, #3]
        (0xb85f_c100, read(PAGE - 4)),         // ldur w0, [x8, #-4]
        (0xa941_0500, read(PAGE + 0x10)),      // ldp x0, x1, [x8, #16]
        (0xf841_0500, read(PAGE)),             // ldr x0, [x8], #16: post-index
        (0xf900_0500, write(PAGE + 8)),        // str x0, [x8, #8]
        (0xa901_0500, write(PAGE + 0x10)),     // stp x0, x1, [x8, #16]
        (0xf829_010a, write(PAGE)),            // ldadd x9, x10, [x8]
        (0x1100_0500, None),                   // add w0, w8, #1: truncates
    ];
    for (word, data) in cases {
        let all = data_of(Arch::Aarch64, &words(&[ADRP_X8, *word]), PAIRED);
        assert_eq!(all, [None, *data], "{word:#010x}");
    }
}

#[test]
fn arm64_adrp_pairing_stops_where_the_register_changes() {
    let add_x0_x8_1 = 0x9100_0500;
    let add_x1_x8_2 = 0x9100_0901;
    let p = |offset: u64| address(PAGE + offset);
    let cases: &[(&[u32], &[Option<DataReference>])] = &[
        // Two uses of one page.
        (&[ADRP_X8, add_x0_x8_1, add_x1_x8_2], &[None, p(1), p(2)]),
        // add x8, x8, #0x10 replaces the page with an address.
        (&[ADRP_X8, 0x9100_4108, add_x0_x8_1], &[None, p(0x10), None]),
        // mov x8, x0
        (&[ADRP_X8, 0xaa00_03e8, add_x0_x8_1], &[None, None, None]),
        // ldr x8, [x8, #16] loads over the page.
        (
            &[ADRP_X8, 0xf940_0908, add_x0_x8_1],
            &[None, read(PAGE + 16), None],
        ),
        // ldr x0, [x8, #16]! writes the base back.
        (
            &[ADRP_X8, 0xf841_0d00, add_x0_x8_1],
            &[None, read(PAGE + 16), None],
        ),
        // b.eq ends the block.
        (&[ADRP_X8, 0x5400_0040, add_x0_x8_1], &[None, None, None]),
        // An undecodable word forgets everything too.
        (&[ADRP_X8, 0x0200_0000, add_x0_x8_1], &[None, None, None]),
        // adrp xzr remembers nothing (and add x0, sp, #1 reads sp).
        (&[0xb000_001f, 0x9100_07e0], &[None, None]),
    ];
    for (sequence, data) in cases {
        assert_eq!(
            data_of(Arch::Aarch64, &words(sequence), PAIRED),
            *data,
            "{sequence:08x?}"
        );
    }
}

#[test]
fn arm64_calls_clobber_only_caller_saved_pages() {
    let bl = 0x9400_0002;
    // adrp x0; bl; add x1, x0, #1: x0 is the call's result.
    let x0 = data_of(
        Arch::Aarch64,
        &words(&[0xb000_0000, bl, 0x9100_0401]),
        PAIRED,
    );
    assert_eq!(x0, [None, None, None]);
    // adrp x19; bl; add x1, x19, #1: x19 survives calls.
    let x19 = data_of(
        Arch::Aarch64,
        &words(&[0xb000_0013, bl, 0x9100_0661]),
        PAIRED,
    );
    assert_eq!(x19, [None, None, address(PAGE + 1)]);
}

#[test]
fn arm64_pages_wrap_near_the_top_of_the_address_space() {
    // adrp x8, #0x1000 at the last page wraps to page 0.
    let all = data_of(
        Arch::Aarch64,
        &words(&[ADRP_X8, 0x9100_4108]),
        u64::MAX - 0xfff,
    );
    assert_eq!(all, [None, address(0x10)]);
    let branch = single(Arch::Aarch64, &words(&[0x1400_0002]), u64::MAX - 3);
    assert_eq!(branch.flow, Flow::Jump { target: 4 });
}

#[test]
fn arm64_undecodable_and_partial_words_stop() {
    // An unallocated word, a reserved-space word yaxpeax calls udf, a
    // nop, then half a word.
    let mut bytes = words(&[0x0200_0000, 0x2000_0028, 0xd503_201f]);
    bytes.extend_from_slice(&[0x1f, 0x20]);
    let all = decode(Arch::Aarch64, &bytes, A64);
    let summary: Vec<(u64, u8, Flow)> = all.iter().map(|d| (d.address, d.len, d.flow)).collect();
    assert_eq!(
        summary,
        [
            (A64, 4, Flow::Stop),
            (A64 + 4, 4, Flow::Stop),
            (A64 + 8, 4, Flow::Sequential),
            (A64 + 12, 2, Flow::Stop),
        ]
    );
    let listing = disassemble(Arch::Aarch64, &bytes, A64, usize::MAX);
    let mnemonics: Vec<&str> = listing.iter().map(|line| line.mnemonic.as_str()).collect();
    assert_eq!(mnemonics, [BAD_MNEMONIC, BAD_MNEMONIC, "nop", BAD_MNEMONIC]);
    assert_eq!(listing[3].bytes, [0x1f, 0x20]);
}

/// yaxpeax 0.5.0 answers `Ok` for `0x2ee85800` without setting an
/// opcode; after a `csneg` its `Display` used to panic on the stale
/// opcode (found by `disassemble_agrees_with_sweep`).
#[test]
fn arm64_words_without_an_opcode_are_bad_whatever_came_before() {
    let bytes = words(&[0xda80_9400, 0x2ee8_5800]); // cneg x0, x0, hi; ???
    let listing = disassemble(Arch::Aarch64, &bytes, A64, usize::MAX);
    let text: Vec<(&str, Flow)> = listing
        .iter()
        .map(|line| (line.mnemonic.as_str(), line.flow))
        .collect();
    assert_eq!(
        text,
        [("cneg", Flow::Sequential), (BAD_MNEMONIC, Flow::Stop)]
    );
}

#[test]
fn arm64_text_reads_like_llvm_objdump() {
    let bytes = words(&[
        0x1400_0002, // b
        ADRP_X8,
        0x1000_0080, // adr x0, #16
        0x5800_0080, // ldr x0, #16
        0x8b28_4509, // add x9, x8, w8, uxtw #1
        0xd51b_42bf, // msr s3_3_c4_c2_5, xzr
        0xb276_03e4, // orr x4, xzr, #0x400
        0x4e04_0671, // dup v17.4s, v19.s[0]
        0xf940_0d00, // ldr x0, [x8, #0x18]
    ]);
    let listing = disassemble(Arch::Aarch64, &bytes, A64, usize::MAX);
    let text: Vec<(&str, &str)> = listing
        .iter()
        .map(|line| (line.mnemonic.as_str(), line.operands.as_str()))
        .collect();
    assert_eq!(
        text,
        [
            ("b", "0x10008"),
            ("adrp", "x8, 0x11000"),
            ("adr", "x0, 0x10018"),
            ("ldr", "x0, 0x1001c"),
            ("add", "x9, x8, w8, uxtw #1"),
            ("msr", "s3_3_c4_c2_5, xzr"),
            ("orr", "x4, xzr, #0x400"),
            ("dup", "v17.4s, v19.s[0]"),
            ("ldr", "x0, [x8, #0x18]"),
        ]
    );
    assert_eq!(listing[8].data, read(0x11018));
}

// ---------------------------------------------------------------- API

#[test]
fn disassemble_caps_its_listing() {
    let nops = words(&[0xd503_201f; 5]);
    assert_eq!(disassemble(Arch::Aarch64, &nops, A64, 2).len(), 2);
    assert_eq!(disassemble(Arch::Aarch64, &nops, A64, 0).len(), 0);
    assert_eq!(
        disassemble(Arch::X86_64, &[0x90; 3], X64, usize::MAX).len(),
        3
    );
    assert!(disassemble(Arch::X86, &[], X86, usize::MAX).is_empty());
    assert!(decode(Arch::Aarch64, &[], A64).is_empty());
}

#[test]
fn arch_of_supported_documents() {
    let parse = |bytes: &[u8]| arch_of(&object::File::parse(bytes).expect("a valid fixture"));
    assert_eq!(parse(&fixtures::tiny_elf()), Some(Arch::X86_64));
    assert_eq!(parse(&fixtures::tiny_pe()), Some(Arch::X86_64));
    let arm = fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64);
    assert_eq!(parse(&arm), Some(Arch::Aarch64));
    // e_machine is at offset 18 of an ELF header.
    let mut elf = fixtures::tiny_elf();
    elf[18..20].copy_from_slice(&3u16.to_le_bytes()); // EM_386
    assert_eq!(parse(&elf), Some(Arch::X86));
    elf[18..20].copy_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    assert_eq!(parse(&elf), None);
}

/// `ud0 ecx, [rip + 0x10]` traps: its memory operand is never accessed.
#[test]
fn x86_64_trapping_instructions_carry_no_data_reference() {
    let bytes = [0x0f, 0xff, 0x0d, 0x10, 0x00, 0x00, 0x00];
    let decoded = decode(Arch::X86_64, &bytes, 0x1000);
    assert_eq!(decoded.len(), 1, "{decoded:?}");
    assert_eq!(decoded[0].flow, Flow::Stop);
    assert_eq!(decoded[0].data, None);
}

// ---------------------------------------------------------------- properties

fn any_arch() -> impl Strategy<Value = Arch> {
    prop_oneof![Just(Arch::X86), Just(Arch::X86_64), Just(Arch::Aarch64)]
}

fn any_address() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), (u64::MAX - 64)..=u64::MAX, 0u64..64]
}

proptest! {
    /// A sweep tiles the input exactly: consecutive, non-empty entries
    /// whose lengths sum to the input length, at strictly increasing
    /// offsets (addresses increase modulo 2^64).
    #[test]
    fn sweep_tiles_any_input(
        arch in any_arch(),
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        base in any_address(),
    ) {
        let mut offset = 0u64;
        for decoded in decode(arch, &bytes, base) {
            prop_assert_eq!(decoded.address.wrapping_sub(base), offset);
            prop_assert!(decoded.len >= 1);
            prop_assert!(usize::from(decoded.len) <= arch.max_instruction_len());
            if decoded.flow == Flow::Stop && decoded.data.is_some() {
                prop_assert!(false, "a Stop with data: {:?}", decoded);
            }
            offset += u64::from(decoded.len);
        }
        prop_assert_eq!(offset, bytes.len() as u64);
    }

    /// `disassemble` reports exactly the facts of the sweep, at most
    /// `max` of them, with the bytes each instruction covers.
    #[test]
    fn disassemble_agrees_with_sweep(
        arch in any_arch(),
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        base in any_address(),
        max in prop_oneof![0usize..50, Just(usize::MAX)],
    ) {
        let swept = decode(arch, &bytes, base);
        let listing = disassemble(arch, &bytes, base, max);
        prop_assert_eq!(listing.len(), swept.len().min(max));
        let mut offset = 0usize;
        for (line, decoded) in listing.iter().zip(&swept) {
            prop_assert_eq!(line.address, decoded.address);
            prop_assert_eq!(line.flow, decoded.flow);
            prop_assert_eq!(line.data, decoded.data);
            let end = offset + usize::from(decoded.len);
            prop_assert_eq!(&line.bytes[..], &bytes[offset..end]);
            offset = end;
            prop_assert!(!line.mnemonic.is_empty());
            if line.mnemonic == BAD_MNEMONIC {
                // An SVE word, unnamed, goes on; anything else stops.
                let sve = arch == Arch::Aarch64 && line.flow == Flow::Sequential;
                prop_assert!(line.flow == Flow::Stop || sve, "{:?}", line);
                prop_assert!(line.operands.is_empty());
            }
        }
    }
}

/// The [`super::shape::Inherited`] of each instruction of `bytes`.
fn each_inherited(arch: Arch, bytes: &[u8]) -> Vec<super::shape::Inherited> {
    let mut walker = super::Walker::new(arch, bytes, 0x1000);
    let mut out = Vec::new();
    let mut next = walker.decode_at(0x1000);
    while next.is_some() {
        out.push(walker.inherited());
        next = walker.decode_next();
    }
    out
}

/// The inherited reads, writes and saves of each instruction of `bytes`.
fn inherited(arch: Arch, bytes: &[u8]) -> Vec<(u32, u32, u32)> {
    let each = each_inherited(arch, bytes).into_iter();
    each.map(|access| (access.reads, access.writes, access.saves))
        .collect()
}

#[test]
fn x86_64_inherited_registers_tell_a_landing_pad_from_an_entry() {
    // A call moves the stack pointer (it pushes), as `push` and `sub` do.
    // sub rsp, 8; nop
    let moves: Vec<bool> = each_inherited(Arch::X86_64, &[0x48, 0x83, 0xec, 0x08, 0x90])
        .iter()
        .map(|access| access.moves_stack)
        .collect();
    assert_eq!(moves, [true, false]);
    const RBX: u32 = 1 << 3;
    const RAX: u32 = 1;
    let got = inherited(
        Arch::X86_64,
        &[
            0x48, 0x89, 0xc3, // mov rbx, rax: a landing pad's first move
            0x53, // push rbx: saving is no read
            0x48, 0x89, 0x5c, 0x24, 0x08, // mov [rsp + 8], rbx: nor is this
            0x84, 0xc0, // test al, al: variadic entry, not the exception pointer
            0x31, 0xdb, // xor ebx, ebx: a write only
            0x48, 0x8b, 0x7b, 0x10, // mov rdi, [rbx + 0x10]: reads rbx
        ],
    );
    assert_eq!(
        got,
        [
            (RAX, RBX, 0),
            (0, 0, RBX),
            (0, 0, RBX),
            (0, 0, 0),
            (0, RBX, 0),
            (RBX, 0, 0)
        ]
    );
}

/// Every general register each instruction of `bytes` writes.
fn clobbers(arch: Arch, bytes: &[u8]) -> Vec<u32> {
    let each = each_inherited(arch, bytes).into_iter();
    each.map(|access| access.clobbers).collect()
}

#[test]
fn clobbers_are_every_general_register_written() {
    let x86 = clobbers(
        Arch::X86_64,
        &[
            0x8b, 0x08, // mov ecx, [rax]: rcx
            0x4c, 0x8b, 0xc7, // mov r8, rdi: r8
            0x48, 0x83, 0xec, 0x28, // sub rsp, 0x28: the stack pointer is not counted
            0x48, 0x89, 0x5c, 0x24, 0x08, // mov [rsp + 8], rbx: a store writes none
            0x87, 0xd3, // xchg ebx, edx: both
        ],
    );
    assert_eq!(x86, [1 << 1, 1 << 8, 0, 0, (1 << 2) | (1 << 3)]);
    let arm64 = clobbers(
        Arch::Aarch64,
        &words(&[
            0xb9400000, // ldr w0, [x0]: x0
            0xf8408441, // ldr x1, [x2], #8: x1 and the written-back x2
            0xf9000be1, // str x1, [sp, #16]: none
            0x94000010, // bl: the link register
        ]),
    );
    assert_eq!(arm64, [1, (1 << 1) | (1 << 2), 0, 1 << 30]);
}

#[test]
fn arm64_inherited_registers_tell_a_cleanup_from_an_entry() {
    const X19: u32 = 1 << 19;
    const X29: u32 = 1 << 29;
    let got = inherited(
        Arch::Aarch64,
        &words(&[
            0xa9bf7bfd, // stp x29, x30, [sp, #-16]!: saving
            0x910003fd, // mov x29, sp: a write
            0xaa1303e0, // mov x0, x19: reads x19
            0xaa0003f3, // mov x19, x0: writes x19
            0xf9400ba0, // ldr x0, [x29, #16]: reads x29
        ]),
    );
    assert_eq!(
        got,
        [
            (0, 0, X29),
            (0, X29, 0),
            (X19, 0, 0),
            (0, X19, 0),
            (X29, 0, 0)
        ]
    );
}

/// glibc's `__memcpy_a64fx` opens with SVE (`cntb x7`; `whilelo`), which
/// the decoder cannot name: such words go on to the next instruction, so
/// recursive descent reads the whole function; other undecodable words
/// still stop.
#[test]
fn arm64_sve_words_fall_through_and_other_undecodable_words_stop() {
    let bytes = words(&[
        0x0420e3e7, // cntb x7 (SVE)
        0xeb07045f, // cmp x2, x7, lsl #1
        0x25221ce1, // whilelo p1.b, x7, x2 (SVE)
        0x00000001, // udf #1 with a nonzero field: unallocated, no SVE
    ]);
    let flows: Vec<Flow> = {
        let mut out = Vec::new();
        sweep(Arch::Aarch64, &bytes, 0x1000, |decoded| {
            out.push(decoded.flow)
        });
        out
    };
    assert_eq!(
        flows,
        [
            Flow::Sequential,
            Flow::Sequential,
            Flow::Sequential,
            Flow::Stop
        ]
    );
    let mut walker = super::Walker::new(Arch::Aarch64, &bytes, 0x1000);
    let (_, shape) = walker.decode_at(0x1000).expect("a word");
    assert_eq!(shape, super::shape::Shape::Other);
    assert_eq!(walker.inherited().clobbers, (1 << 31) - 1);
    let listing = disassemble(Arch::Aarch64, &bytes, 0x1000, 4);
    assert_eq!(listing[0].mnemonic, BAD_MNEMONIC);
    assert_eq!(listing[1].mnemonic, "cmp");
}
