//! Every radare2 command rea sends. A [`Command`] can only be built by the
//! constructors below, from constant command names, counts and `0x…`
//! addresses formatted from integers, so no caller text can reach radare2's
//! command parser (where `;`, `|`, `` ` ``, `@`, `~` and `!` are operators).

/// How deeply radare2 analyses the file once it is loaded: the operator's
/// choice (`REA_RADARE2_ANALYSIS`), named in the provider's Evidence.
/// Deeper levels find more functions and cost more time (`aaa` is
/// radare2's own "analyse everything"; `aaaa` adds experimental passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnalysisDepth {
    /// `aa`: symbols and the entry point, then calls from them.
    #[default]
    Aa,
    /// `aaa`: also function calls, references, types and more.
    Aaa,
    /// `aaaa`: also the experimental passes.
    Aaaa,
}

impl AnalysisDepth {
    pub fn as_str(self) -> &'static str {
        match self {
            AnalysisDepth::Aa => "aa",
            AnalysisDepth::Aaa => "aaa",
            AnalysisDepth::Aaaa => "aaaa",
        }
    }

    pub(crate) fn parse(value: &str) -> Option<AnalysisDepth> {
        match value.trim() {
            "aa" => Some(AnalysisDepth::Aa),
            "aaa" => Some(AnalysisDepth::Aaa),
            "aaaa" => Some(AnalysisDepth::Aaaa),
            _ => None,
        }
    }
}

/// How long a command may take: analysis passes get the long timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Analysis,
    Query,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    text: String,
    kind: Kind,
}

impl Command {
    fn new(name: &'static str, kind: Kind) -> Command {
        Command {
            text: name.to_string(),
            kind,
        }
    }

    fn at(name: &'static str, address: u64, kind: Kind) -> Command {
        Command {
            text: format!("{name} @ {address:#x}"),
            kind,
        }
    }

    /// `?Vj`: the radare2 version as JSON.
    pub fn version() -> Command {
        Command::new("?Vj", Kind::Query)
    }

    /// `aa`, `aaa` or `aaaa`: the whole-file analysis at the operator's
    /// depth.
    pub fn analyze_all(depth: AnalysisDepth) -> Command {
        Command::new(depth.as_str(), Kind::Analysis)
    }

    /// `aflj`: every known function.
    pub fn functions() -> Command {
        Command::new("aflj", Kind::Query)
    }

    /// `isj`: the symbol table, for raw (untruncated) symbol names.
    pub fn symbols() -> Command {
        Command::new("isj", Kind::Query)
    }

    /// `iSj`: the sections, to check data reference targets.
    pub fn sections() -> Command {
        Command::new("iSj", Kind::Query)
    }

    /// `afij @ A`: the function containing `A`.
    pub fn function_info(address: u64) -> Command {
        Command::at("afij", address, Kind::Query)
    }

    /// `af @ A`: define a function at `A`.
    pub fn define_function(address: u64) -> Command {
        Command::at("af", address, Kind::Analysis)
    }

    /// `afbj @ A`: the basic blocks of the function containing `A`.
    pub fn blocks(address: u64) -> Command {
        Command::at("afbj", address, Kind::Query)
    }

    /// `pdj N @ A`: `N` instructions decoded linearly from `A`.
    pub fn disassemble(count: usize, address: u64) -> Command {
        Command {
            text: format!("pdj {count} @ {address:#x}"),
            kind: Kind::Query,
        }
    }

    /// `axtj @ A`: references to `A`.
    pub fn xrefs_to(address: u64) -> Command {
        Command::at("axtj", address, Kind::Query)
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole command language rea speaks: a name, an optional decimal
    /// count, an optional `@ 0x…` address. Nothing else.
    fn well_formed(text: &str) -> bool {
        let mut words = text.split(' ');
        let name_ok = words.next().is_some_and(|n| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphabetic() || b == b'?')
        });
        let rest: Vec<&str> = words.collect();
        let tail_ok = match rest.as_slice() {
            [] => true,
            ["@", a] => is_hex(a),
            [n, "@", a] => n.bytes().all(|b| b.is_ascii_digit()) && is_hex(a),
            _ => false,
        };
        name_ok && tail_ok
    }

    fn is_hex(a: &str) -> bool {
        a.strip_prefix("0x").is_some_and(|h| {
            !h.is_empty() && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
    }

    #[test]
    fn every_command_is_in_the_closed_language() {
        for address in [0, 1, 0x1000, 0xdead_beef, u64::MAX] {
            for command in [
                Command::version(),
                Command::analyze_all(AnalysisDepth::Aa),
                Command::functions(),
                Command::symbols(),
                Command::sections(),
                Command::function_info(address),
                Command::define_function(address),
                Command::blocks(address),
                Command::disassemble(usize::MAX, address),
                Command::disassemble(0, address),
                Command::xrefs_to(address),
            ] {
                let text = command.text();
                assert!(well_formed(text), "{text:?}");
                assert!(
                    !text.contains(['\n', ';', '|', '`', '~', '!', '>', '"']),
                    "{text:?}"
                );
            }
        }
        assert_eq!(
            Command::blocks(u64::MAX).text(),
            "afbj @ 0xffffffffffffffff"
        );
        assert_eq!(Command::disassemble(7, 0x38330).text(), "pdj 7 @ 0x38330");
    }

    #[test]
    fn the_checker_rejects_injection_shapes() {
        for bad in [
            "aa;!id",
            "afij @ 0x10;aa",
            "pdj 1 @ sym.main",
            "axtj @ 0x1`?e x`",
            "aa | cat",
        ] {
            assert!(!well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn analysis_commands_get_the_long_timeout() {
        assert_eq!(
            Command::analyze_all(AnalysisDepth::Aa).kind(),
            Kind::Analysis
        );
        for depth in [AnalysisDepth::Aa, AnalysisDepth::Aaa, AnalysisDepth::Aaaa] {
            assert_eq!(Command::analyze_all(depth).text(), depth.as_str());
        }
        assert_eq!(Command::define_function(1).kind(), Kind::Analysis);
        assert_eq!(Command::functions().kind(), Kind::Query);
    }
}
