//! How radare2's function names relate to raw symbol names.
//!
//! rea runs radare2 with `bin.demangle=false`, so a function radare2 found
//! through the symbol table is named `sym.<symbol>` with the symbol as the
//! file spells it (`sym._ZN4BSER6encodeERSo`, Mach-O `sym.__Z4InitN4Napi3EnvE…`),
//! which is what the native provider reports. Other prefixes are radare2's
//! own names: `sym.imp.<name>` is an import stub (PLT/stubs entry), not a
//! definition of `<name>`; `fcn.<hex>`, `loc.`, `entry0`, `reloc.`, `obj.`,
//! `method.`, … name code radare2 found or derived without a defining symbol.
//!
//! A flag name is not always the whole symbol: radare2 cuts long flag names
//! (about 128 characters: long C++ names lose their tail), replaces
//! characters outside its flag alphabet with `_`, and names PE exports
//! `sym.<dll>_<export>`. So the provider also reports the raw symbols
//! radare2 lists (`isj` `realname`) at each function address as the
//! procedure's aliases; comparisons should prefer those. radare2 5.7.4 cuts
//! even those at 254 bytes, so such a symbol is not reported at all.

/// The raw symbol radare2 kept in `r2_name`: the part after `sym.`, unless
/// the name is an import stub (`sym.imp.…`) or radare2's own (`fcn.…`,
/// `entry0`, …). See the module docs for when it is not the whole symbol.
pub fn symbol_name(r2_name: &str) -> Option<&str> {
    let rest = r2_name.strip_prefix("sym.")?;
    if rest.is_empty() || rest.starts_with("imp.") {
        None
    } else {
        Some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_symbol_table_names_map_back() {
        assert_eq!(
            symbol_name("sym._ZN4BSER6encodeERSo"),
            Some("_ZN4BSER6encodeERSo")
        );
        assert_eq!(
            symbol_name("sym.__Z10getBackendN4Napi3EnvENS_5ValueE"),
            Some("__Z10getBackendN4Napi3EnvENS_5ValueE")
        );
        assert_eq!(symbol_name("sym.main"), Some("main"));
        assert_eq!(symbol_name("sym.imp.memcpy"), None);
        assert_eq!(symbol_name("fcn.0001e670"), None);
        assert_eq!(symbol_name("entry0"), None);
        assert_eq!(symbol_name("reloc._ZN7Watcher5unrefEv"), None);
        assert_eq!(symbol_name("sym."), None);
        assert_eq!(symbol_name("symbol"), None);
    }
}
