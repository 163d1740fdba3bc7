//! Demangling of Rust (legacy and v0), Itanium C++ and MSVC C++ names.
//!
//! Raw names stay the identity of a procedure; the demangled form is an
//! additional way to find it. Hostile names cannot make this expensive:
//! names over [`MAX_MANGLED_LEN`] are not demangled, and the C++ parser runs
//! with a recursion limit.

use std::fmt::Write;

/// Longest name we try to demangle.
pub const MAX_MANGLED_LEN: usize = 4096;

/// The readable form of `raw`, or `None` when it is not a mangled name this
/// module understands (plain C names included).
pub fn demangle(raw: &str) -> Option<String> {
    if raw.len() > MAX_MANGLED_LEN {
        return None;
    }
    // Mach-O prefixes every C symbol with `_`, so `__Z…` is Itanium `_Z…`
    // and `__R…` is Rust v0 `_R…`.
    let unprefixed = raw
        .strip_prefix('_')
        .filter(|r| r.starts_with("_Z") || r.starts_with("_R"));
    let name = unprefixed.unwrap_or(raw);
    if let Ok(rust) = rustc_demangle::try_demangle(name) {
        let mut out = String::new();
        // `{:#}` leaves out the legacy hash suffix.
        write!(out, "{rust:#}").ok()?;
        return Some(out);
    }
    if name.starts_with("_Z") {
        let options = cpp_demangle::ParseOptions::default().recursion_limit(256);
        let symbol = cpp_demangle::Symbol::new_with_options(name.as_bytes(), &options).ok()?;
        return symbol.demangle().ok().filter(|d| d != name);
    }
    if raw.starts_with('?') {
        return msvc_demangler::demangle(raw, msvc_demangler::DemangleFlags::llvm()).ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_each_scheme() {
        assert_eq!(demangle("_ZN3foo3barEv").as_deref(), Some("foo::bar()"));
        assert_eq!(
            demangle("__Z9subscribeRKN4Napi12CallbackInfoE").as_deref(),
            Some("subscribe(Napi::CallbackInfo const&)")
        );
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE").as_deref(),
            Some("core::fmt::write")
        );
        assert_eq!(
            demangle("_RNvCs1234_7mycrate3foo").as_deref(),
            Some("mycrate::foo")
        );
        assert_eq!(demangle("?x@@3HA").as_deref(), Some("int x"));
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("_start"), None);
    }

    #[test]
    fn hostile_names_are_bounded() {
        let deep = format!("_Z{}", "PPPPPPPPPP".repeat(400));
        let _ = demangle(&deep);
        assert_eq!(demangle(&"_Z".repeat(3000)), None);
    }
}
