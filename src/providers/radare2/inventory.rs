//! radare2's function list (`aflj`) and symbols (`isj`) as an [`Inventory`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::super::{Inventory, Procedure, SharedName, Source, Sources};
use super::json::{FunctionJson, SymbolJson};

/// radare2 5.7.4 keeps at most this many bytes of a symbol name; a longer
/// symbol arrives cut to exactly this length.
const MAX_SYMBOL_BYTES: usize = 254;

/// The inventory of `aflj` functions, named as radare2 names them. The
/// aliases are the raw symbol-table names `isj` lists at each address
/// (defined functions only, not imports), plus any further radare2 name at
/// the same address; see [`super::names`]. A symbol of [`MAX_SYMBOL_BYTES`]
/// is left out: radare2 may have cut it, and a prefix is not a name.
/// `size` is radare2's `realsz`, the bytes of the function's blocks: its
/// `size` is `maxbound - minbound`, which spans unrelated code when radare2
/// attributes a far block (a shared tail, a PLT stub) to the function.
pub(crate) fn inventory(
    functions: Vec<FunctionJson>,
    symbols: &[SymbolJson],
    cap: usize,
) -> Inventory {
    let mut raw: HashMap<u64, BTreeSet<&str>> = HashMap::new();
    for s in symbols {
        let is_function = matches!(s.kind.as_deref(), Some("FUNC" | "IFUNC"));
        let name = s.realname.as_deref().or(s.name.as_deref());
        if let (true, false, Some(address), Some(name)) =
            (is_function, s.is_imported.unwrap_or(false), s.vaddr, name)
            && !name.is_empty()
            && name.len() < MAX_SYMBOL_BYTES
        {
            raw.entry(address).or_default().insert(name);
        }
    }
    let mut non_utf8_names = 0;
    let mut by_address: BTreeMap<u64, Procedure> = BTreeMap::new();
    for f in functions {
        let Some(address) = f.offset else { continue };
        let mut name = f.name.filter(|n| !n.is_empty());
        // Output bytes that were not UTF-8 arrive as U+FFFD.
        if name.as_deref().is_some_and(|n| n.contains('\u{fffd}')) {
            non_utf8_names += 1;
            name = None;
        }
        let size = f.realsz.or(f.size).filter(|&s| s > 0);
        match by_address.get_mut(&address) {
            None => {
                by_address.insert(
                    address,
                    Procedure {
                        address,
                        name: name.map(SharedName::from),
                        aliases: Vec::new(),
                        size,
                        sources: Sources::of(Source::Radare2),
                        library: None,
                        part_of: None,
                    },
                );
            }
            Some(p) => match (&p.name, name) {
                (None, n) => p.name = n.map(SharedName::from),
                (Some(_), Some(n)) => p.aliases.push(SharedName::from(n)),
                (Some(_), None) => {}
            },
        }
    }
    let truncated = by_address.len() > cap;
    let procedures = by_address
        .into_values()
        .take(cap)
        .map(|mut p| {
            if let Some(symbols) = raw.get(&p.address) {
                p.aliases
                    .extend(symbols.iter().map(|s| SharedName::from(*s)));
            }
            p.aliases.retain(|a| Some(a) != p.name.as_ref());
            p.aliases.sort();
            p.aliases.dedup();
            p
        })
        .collect();
    Inventory {
        procedures,
        truncated,
        non_utf8_names,
        limitations: Vec::new(),
    }
}
