//! Imported functions that never return. A call to one ends its path, so
//! the bytes after it (often the next function) are not read as the
//! caller's.

/// C library, C++ runtime and unwinder functions documented not to return
/// (glibc, musl, macOS libSystem, the Itanium C++ ABI, MSVC's CRT).
const NAMES: &[&str] = &[
    "abort",
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert_rtn",
    "__stack_chk_fail",
    "__stack_chk_fail_local",
    "__fortify_fail",
    "__chk_fail",
    "__libc_fatal",
    "err",
    "errx",
    "verr",
    "verrx",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "pthread_exit",
    "thrd_exit",
    "__cxa_throw",
    "__cxa_rethrow",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length",
    "__cxa_pure_virtual",
    "__cxa_deleted_virtual",
    "_Unwind_Resume",
    "_ZSt9terminatev",
    "ExitProcess",
    "ExitThread",
    "FatalExit",
    "RaiseFailFastException",
    "_invalid_parameter_noinfo_noreturn",
    "__fastfail",
    "_CxxThrowException",
    "__assert",
    "_assert",
    "_wassert",
    "FatalAppExitA",
    "FatalAppExitW",
    "RtlExitUserThread",
    "RtlExitUserProcess",
    "__report_gsfailure",
];

/// Whether an import of this name never returns. Mach-O's leading `_` and
/// ELF version suffixes (`exit@GLIBC_2.2.5`) are ignored, and the C++
/// runtime's `std::__throw_*` helpers (`_ZSt19__throw_logic_errorPKc`)
/// count too.
///
/// Demangled spellings count as well (`std::terminate()`,
/// `std::__throw_logic_error(char const*)`): the decompiler asks with the
/// names it prints.
pub fn never_returns(name: &str) -> bool {
    let name = name.split('@').next().unwrap_or(name);
    let bare = name.strip_prefix('_').filter(|rest| NAMES.contains(rest));
    NAMES.contains(&name)
        || bare.is_some()
        || is_cxx_throw_helper(name)
        || name == "std::terminate()"
        || name.starts_with("std::__throw_")
}

/// `_ZSt<n>__throw_<what>...`: libstdc++'s exception helpers.
fn is_cxx_throw_helper(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix("_ZSt")
        .or_else(|| name.strip_prefix("__ZSt"))
    else {
        return false;
    };
    rest.trim_start_matches(|c: char| c.is_ascii_digit())
        .starts_with("__throw_")
}

#[cfg(test)]
mod tests {
    use super::never_returns;

    #[test]
    fn demangled_and_decompiler_spellings() {
        assert!(never_returns("exit"));
        assert!(never_returns("__stack_chk_fail@plt"));
        assert!(never_returns("std::terminate()"));
        assert!(never_returns("std::__throw_logic_error(char const*)"));
        assert!(!never_returns("exit_handler"));
        assert!(!never_returns("atexit"));
    }

    #[test]
    fn names_and_their_spellings() {
        for name in [
            "abort",
            "_abort",
            "exit@GLIBC_2.2.5",
            "__stack_chk_fail",
            "_ZSt20__throw_length_errorPKc",
        ] {
            assert!(never_returns(name), "{name}");
        }
        for name in ["malloc", "exit_group_handler", "_ZSt4cout", "printf"] {
            assert!(!never_returns(name), "{name}");
        }
    }
}
