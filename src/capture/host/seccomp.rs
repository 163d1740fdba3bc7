//! The seccomp filter that keeps an isolated capture off the host's Unix
//! sockets. A network namespace holds TCP, UDP and abstract Unix sockets
//! apart, but a path-based Unix socket is reached through the file system,
//! whatever the namespace: a world-writable one in the working root would
//! take the capture's connection. A filter cannot see the address behind
//! `connect`'s pointer, so it refuses what every such connection starts
//! from instead, for the target and everything it starts (filters are
//! inherited across fork and exec and cannot be removed):
//!
//! - `socket(AF_UNIX, ..)` fails with `EACCES`;
//! - `socketpair(AF_UNIX, ..)` fails with `EACCES` unless the pair is
//!   `SOCK_STREAM` or `SOCK_SEQPACKET`: a datagram socket, even a connected
//!   one, can `connect` or `sendto` a path again (and `SOCK_RAW` makes a
//!   datagram pair); a stream or seqpacket pair cannot (`EISCONN`), so
//!   those stay for the program's own IPC;
//! - the 32-bit `socketcall` multiplexer's `SOCKET` and `SOCKETPAIR` fail
//!   with `EACCES` whatever the family (their arguments are behind a
//!   pointer);
//! - `pidfd_getfd` fails with `EPERM` (it would copy another process's
//!   socket);
//! - io_uring fails with `ENOSYS`, as on a kernel without it (its socket
//!   and connect operations never pass through the filter);
//! - x32 system calls and any other architecture fail with `ENOSYS`.
//!
//! The program cannot make a Unix socket of its own either (not even an
//! abstract one, which its namespace already kept in). Everything else is
//! allowed. The program is a list of classic BPF instructions built before
//! the fork; [`Filter::install`] only hands it to the kernel.

/// `AUDIT_ARCH_*`: `seccomp_data.arch` of each system-call convention.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
/// x32 system calls are x86-64's numbers with this bit.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`: the call's number, its architecture,
/// and the low 32 bits of argument `i` (little-endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// The `socketcall` operations that make a socket.
const SYS_SOCKET: u32 = 1;
const SYS_SOCKETPAIR: u32 = 8;
/// `SOCK_TYPE_MASK`: the type without `SOCK_NONBLOCK`/`SOCK_CLOEXEC`.
const SOCK_TYPE_MASK: u32 = 0xf;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}
const REFUSE_SOCKET: u32 = errno(libc::EACCES);
const REFUSE_COPY: u32 = errno(libc::EPERM);
const ABSENT: u32 = errno(libc::ENOSYS);

/// One system-call convention's numbers.
struct Abi {
    arch: u32,
    socket: u32,
    socketpair: u32,
    socketcall: Option<u32>,
    /// Whether x32 numbers arrive under this `arch`.
    x32: bool,
}

/// `io_uring_setup`, `io_uring_enter`, `io_uring_register` and
/// `pidfd_getfd`: the same numbers in every convention.
const IO_URING: [u32; 3] = [425, 426, 427];
const PIDFD_GETFD: u32 = 438;

/// The native convention and the compat one the same process can switch
/// to (32-bit calls from a 64-bit process).
#[cfg(target_arch = "x86_64")]
const ABIS: Option<(Abi, Abi)> = Some((
    Abi {
        arch: AUDIT_ARCH_X86_64,
        socket: libc::SYS_socket as u32,
        socketpair: libc::SYS_socketpair as u32,
        socketcall: None,
        x32: true,
    },
    Abi {
        arch: AUDIT_ARCH_I386,
        socket: 359,
        socketpair: 360,
        socketcall: Some(102),
        x32: false,
    },
));
#[cfg(target_arch = "aarch64")]
const ABIS: Option<(Abi, Abi)> = Some((
    Abi {
        arch: AUDIT_ARCH_AARCH64,
        socket: libc::SYS_socket as u32,
        socketpair: libc::SYS_socketpair as u32,
        socketcall: None,
        x32: false,
    },
    Abi {
        arch: AUDIT_ARCH_ARM,
        socket: 281,
        socketpair: 288,
        socketcall: Some(102),
        x32: false,
    },
));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ABIS: Option<(Abi, Abi)> = None;

fn load(offset: u32) -> libc::sock_filter {
    statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(test: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | test | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn ret(action: u32) -> libc::sock_filter {
    statement(libc::BPF_RET | libc::BPF_K, action)
}

/// Returns `action` when the call's number is one of `numbers` (each block
/// starts by loading the number, so blocks follow one another freely).
fn refuse_numbers(out: &mut Vec<libc::sock_filter>, numbers: &[u32], action: u32) {
    out.push(load(NR));
    let last = numbers.len() - 1;
    for (i, &n) in numbers.iter().enumerate() {
        let (jt, jf) = if i == last {
            (0, 1)
        } else {
            ((last - i) as u8, 0)
        };
        out.push(jump(libc::BPF_JEQ, n, jt, jf));
    }
    out.push(ret(action));
}

/// The rules of one convention; the accumulator holds anything on entry.
fn rules(abi: &Abi, out: &mut Vec<libc::sock_filter>) {
    if abi.x32 {
        out.extend([
            load(NR),
            jump(libc::BPF_JGE, X32_SYSCALL_BIT, 0, 1),
            ret(ABSENT),
        ]);
    }
    let unix = libc::AF_UNIX as u32;
    // socket(AF_UNIX, ..)
    out.extend([
        load(NR),
        jump(libc::BPF_JEQ, abi.socket, 0, 3),
        load(arg(0)),
        jump(libc::BPF_JEQ, unix, 0, 1),
        ret(REFUSE_SOCKET),
    ]);
    // socketpair(AF_UNIX, ..) unless stream or seqpacket (flags aside)
    out.extend([
        load(NR),
        jump(libc::BPF_JEQ, abi.socketpair, 0, 7),
        load(arg(0)),
        jump(libc::BPF_JEQ, unix, 0, 5),
        load(arg(1)),
        statement(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, SOCK_TYPE_MASK),
        jump(libc::BPF_JEQ, libc::SOCK_STREAM as u32, 2, 0),
        jump(libc::BPF_JEQ, libc::SOCK_SEQPACKET as u32, 1, 0),
        ret(REFUSE_SOCKET),
    ]);
    if let Some(socketcall) = abi.socketcall {
        out.extend([
            load(NR),
            jump(libc::BPF_JEQ, socketcall, 0, 4),
            load(arg(0)),
            jump(libc::BPF_JEQ, SYS_SOCKET, 1, 0),
            jump(libc::BPF_JEQ, SYS_SOCKETPAIR, 0, 1),
            ret(REFUSE_SOCKET),
        ]);
    }
    refuse_numbers(out, &[PIDFD_GETFD], REFUSE_COPY);
    refuse_numbers(out, &IO_URING, ABSENT);
    out.push(ret(ALLOW));
}

/// The filter, ready to install.
pub struct Filter {
    program: Vec<libc::sock_filter>,
}

impl Filter {
    /// The filter for this architecture; `None` where rea has no table of
    /// its system calls (then an isolated capture does not run).
    pub fn new() -> Option<Filter> {
        let (native, compat) = ABIS?;
        let mut native_rules = Vec::new();
        rules(&native, &mut native_rules);
        // Past the native rules when the architecture differs.
        let skip = u8::try_from(native_rules.len()).ok()?;
        let mut program = vec![load(ARCH), jump(libc::BPF_JEQ, native.arch, 0, skip)];
        program.extend(native_rules);
        // The accumulator still holds the architecture here.
        program.extend([jump(libc::BPF_JEQ, compat.arch, 1, 0), ret(ABSENT)]);
        rules(&compat, &mut program);
        Some(Filter { program })
    }

    /// Installs the filter on the calling thread; `false` (with `errno`
    /// set) when the kernel refused it. It needs `PR_SET_NO_NEW_PRIVS`
    /// (or `CAP_SYS_ADMIN`) first.
    ///
    /// # Safety
    /// Async-signal-safe: one system call on memory prepared before the
    /// fork; call it in the child between fork and exec.
    pub unsafe fn install(&self) -> bool {
        let program = libc::sock_fprog {
            len: self.program.len() as libc::c_ushort,
            filter: self.program.as_ptr().cast_mut(),
        };
        // SAFETY: `program` points into a live, well-formed filter.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &program as *const libc::sock_fprog,
            ) == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `filter` as the kernel would on one call: the number, the
    /// architecture and the first arguments (full 64-bit values).
    fn decide(filter: &Filter, arch: u32, nr: u32, args: &[u64]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let insn = filter.program[pc];
            let code = u32::from(insn.code);
            pc += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let at = insn.k as usize;
                    acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                }
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => acc &= insn.k,
                c if c == libc::BPF_RET | libc::BPF_K => return insn.k,
                c if c & 0x07 == libc::BPF_JMP => {
                    let taken = match c & 0xf0 {
                        t if t == libc::BPF_JEQ => acc == insn.k,
                        t if t == libc::BPF_JGE => acc >= insn.k,
                        other => panic!("unexpected jump {other:#x}"),
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn unix_sockets_are_refused_in_every_convention_and_the_rest_allowed() {
        let Some(filter) = Filter::new() else {
            return;
        };
        let Some((native, compat)) = ABIS else {
            return;
        };
        let unix = libc::AF_UNIX as u64;
        let inet = libc::AF_INET as u64;
        let dgram = (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
        let stream = (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u64;
        let seqpacket = libc::SOCK_SEQPACKET as u64;
        for abi in [&native, &compat] {
            let at = |nr: u32, args: &[u64]| decide(&filter, abi.arch, nr, args);
            assert_eq!(at(abi.socket, &[unix, stream]), REFUSE_SOCKET);
            assert_eq!(at(abi.socket, &[unix, dgram]), REFUSE_SOCKET);
            // The kernel reads the family as an int: high bits change nothing.
            assert_eq!(at(abi.socket, &[unix | 1 << 40, stream]), REFUSE_SOCKET);
            assert_eq!(at(abi.socket, &[inet, stream]), ALLOW);
            assert_eq!(at(abi.socketpair, &[unix, dgram]), REFUSE_SOCKET);
            // AF_UNIX makes SOCK_RAW a datagram socket.
            let raw = libc::SOCK_RAW as u64;
            assert_eq!(at(abi.socketpair, &[unix, raw]), REFUSE_SOCKET);
            assert_eq!(at(abi.socketpair, &[unix, stream | 1 << 40]), ALLOW);
            assert_eq!(at(abi.socketpair, &[unix, stream]), ALLOW);
            assert_eq!(at(abi.socketpair, &[unix, seqpacket]), ALLOW);
            assert_eq!(at(PIDFD_GETFD, &[]), REFUSE_COPY);
            for nr in IO_URING {
                assert_eq!(at(nr, &[]), ABSENT);
            }
            // Ordinary calls (read, write, openat, connect) pass.
            for nr in [0, 1, 3, 42, 56, 203, 257] {
                if ![abi.socket, abi.socketpair].contains(&nr) && Some(nr) != abi.socketcall {
                    assert_eq!(at(nr, &[unix, dgram]), ALLOW, "call {nr}");
                }
            }
            if let Some(socketcall) = abi.socketcall {
                assert_eq!(at(socketcall, &[u64::from(SYS_SOCKET)]), REFUSE_SOCKET);
                assert_eq!(at(socketcall, &[u64::from(SYS_SOCKETPAIR)]), REFUSE_SOCKET);
                assert_eq!(at(socketcall, &[3]), ALLOW, "connect on an allowed socket");
            }
        }
        if native.x32 {
            let x32_socket = X32_SYSCALL_BIT | native.socket;
            assert_eq!(decide(&filter, native.arch, x32_socket, &[inet]), ABSENT);
        }
        assert_eq!(
            decide(&filter, 0x1234, 0, &[]),
            ABSENT,
            "unknown conventions"
        );
    }
}
