//! What rea knows of common library functions, whatever binary calls them.
//! So far: which never return. Without it the engine lets control run on
//! past `__stack_chk_fail()` or `exit()` into whatever code follows, and
//! prints that as part of the procedure.

/// Functions of the C library, POSIX, the C++ runtime and Win32 that never
/// return, by their C names (Mach-O's leading underscore removed).
pub const NO_RETURN: &[&str] = &[
    "abort",
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "__stack_chk_fail",
    "__stack_chk_fail_local",
    "__chk_fail",
    "__fortify_fail",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert_rtn",
    "__assert",
    "_assert",
    "_wassert",
    "__libc_fatal",
    "err",
    "errx",
    "verr",
    "verrx",
    "error_exit",
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
    "_Unwind_Resume",
    "std::terminate()",
    "std::__throw_bad_alloc()",
    "std::__throw_length_error(char const*)",
    "std::__throw_logic_error(char const*)",
    "std::__throw_out_of_range(char const*)",
    "std::__throw_out_of_range_fmt(char const*, ...)",
    "std::__throw_invalid_argument(char const*)",
    "std::__throw_bad_array_new_length()",
    "std::__throw_system_error(int)",
    "std::__throw_bad_function_call()",
    "ExitProcess",
    "ExitThread",
    "FatalExit",
    "FatalAppExitA",
    "FatalAppExitW",
    "RtlExitUserThread",
    "RtlExitUserProcess",
    "_invalid_parameter_noinfo_noreturn",
    "_CxxThrowException",
    "__report_gsfailure",
    "__fastfail",
];

/// Whether the function a name stands for never returns (`exit@plt` too).
pub fn never_returns(name: &str) -> bool {
    let name = name.strip_suffix("@plt").unwrap_or(name);
    NO_RETURN.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_whole() {
        assert!(never_returns("exit"));
        assert!(never_returns("__stack_chk_fail@plt"));
        assert!(never_returns("std::terminate()"));
        assert!(!never_returns("exit_handler"));
        assert!(!never_returns("atexit"));
    }
}
