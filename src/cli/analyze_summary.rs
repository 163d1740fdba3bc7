//! The readable summary `rea analyze` prints: what an analyst looks at
//! first (entry points, windows and their security settings, IPC channels,
//! exposed APIs, native modules, risky observations, unknowns). Every name
//! comes from the analysed application, so it is untrusted: control and
//! invisible characters are shown escaped, never written to the terminal.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use rea::ground::hidden::is_hidden;
use rea::javascript::{Analysis, Edge, EdgeKind, Node, NodeKind, SourceLocation};
use serde_json::Value;

/// Rows shown per section before "… and N more".
const ROWS: usize = 20;

pub fn write_summary(out: &mut impl Write, a: &Analysis, shown_path: &str) -> io::Result<()> {
    let nodes: HashMap<&str, &Node> = a.nodes.iter().map(|n| (n.node_id.as_str(), n)).collect();
    header(out, a, shown_path)?;
    entry_points(out, a)?;
    windows(out, a, &nodes)?;
    channels(out, a, &nodes)?;
    named_list(
        out,
        a,
        NodeKind::ExposedApi,
        "Exposed APIs (contextBridge)",
        "members",
    )?;
    named_list(out, a, NodeKind::Menu, "Menus and trays", "labels")?;
    native_modules(out, a)?;
    named_list(out, a, NodeKind::Protocol, "Custom protocols", "methods")?;
    observations(out, a)?;
    unknowns(out, a)
}

fn header(out: &mut impl Write, a: &Analysis, shown_path: &str) -> io::Result<()> {
    let package = a.package.as_ref();
    let name = package
        .and_then(|p| p.product_name.as_deref().or(p.name.as_deref()))
        .unwrap_or("(no package.json name)");
    let version = package.and_then(|p| p.version.as_deref()).unwrap_or("?");
    writeln!(
        out,
        "{} {} — {} ({})",
        safe(name),
        safe(version),
        safe(shown_path),
        a.format.as_str()
    )?;
    writeln!(out, "analysis {}", a.analysis_id)?;
    let unresolved = a.statistics.unresolved_edges;
    writeln!(
        out,
        "graph: {} nodes, {} edges ({unresolved} unresolved); graph_sha256 {}",
        a.nodes.len(),
        a.edges.len(),
        a.graph_sha256
    )?;
    let c = &a.coverage;
    writeln!(
        out,
        "coverage: {:?} — {} files seen, {} parsed, {} not parsed, {} with parse errors, {} refused{}",
        c.status,
        c.files_seen,
        c.files_parsed,
        c.files_not_parsed,
        c.files_with_errors,
        c.entries_refused,
        c.stopped_by
            .as_deref()
            .map(|l| format!(", stopped by {l}"))
            .unwrap_or_default()
    )
    .map(|_| ())?;
    if let Some(p) = package
        && let Some(main) = &p.main
    {
        writeln!(out, "package.json main: {}", safe(main))?;
    }
    Ok(())
}

fn entry_points(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    section(out, "Entry points", a.entry_points.len())?;
    for e in a.entry_points.iter().take(ROWS) {
        let kind = serde_json::to_value(e.kind).unwrap_or(Value::Null);
        writeln!(
            out,
            "  {:<14} {}",
            kind.as_str().unwrap_or("?"),
            safe(&e.path)
        )?;
    }
    more(out, a.entry_points.len(), 0)
}

fn windows(out: &mut impl Write, a: &Analysis, nodes: &HashMap<&str, &Node>) -> io::Result<()> {
    let windows: Vec<&Node> = of_kind(a, NodeKind::Window).collect();
    section(out, "Windows", windows.len())?;
    for w in windows.iter().take(ROWS) {
        let targets = |kind: EdgeKind| -> Vec<String> {
            outgoing(a, &w.node_id, kind)
                .map(|e| target_name(e, nodes))
                .collect()
        };
        let constructor = w
            .attributes
            .get("constructor")
            .and_then(Value::as_str)
            .unwrap_or("BrowserWindow");
        writeln!(out, "  {} {}", at(&w.location), safe(constructor))?;
        let effective = w.attributes.get("effective");
        let setting = |name: &str| {
            effective
                .and_then(|e| e.get(name))
                .map(render_value)
                .unwrap_or_else(|| "unknown".into())
        };
        writeln!(
            out,
            "      nodeIntegration={} contextIsolation={} sandbox={}",
            setting("node_integration"),
            setting("context_isolation"),
            setting("sandbox")
        )?;
        for (label, kind) in [
            ("loads", EdgeKind::LoadsPage),
            ("preload", EdgeKind::Preload),
        ] {
            let t = targets(kind);
            if !t.is_empty() {
                writeln!(out, "      {label}: {}", t.join(", "))?;
            }
        }
    }
    more(out, windows.len(), 0)
}

fn channels(out: &mut impl Write, a: &Analysis, nodes: &HashMap<&str, &Node>) -> io::Result<()> {
    let channels: Vec<&Node> = of_kind(a, NodeKind::IpcChannel).collect();
    section(out, "IPC channels", channels.len())?;
    let mut sites: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
    for e in &a.edges {
        if matches!(
            e.kind,
            EdgeKind::IpcHandle | EdgeKind::IpcSend | EdgeKind::IpcListen
        ) && let Some(to) = &e.to
        {
            sites.entry(to.as_str()).or_default().push(e);
        }
    }
    for c in channels.iter().take(ROWS) {
        writeln!(out, "  {}", safe(&c.name))?;
        for e in sites
            .get(c.node_id.as_str())
            .into_iter()
            .flatten()
            .take(ROWS)
        {
            let site = e.location.as_ref().map(at).unwrap_or_else(|| {
                nodes
                    .get(e.from.as_str())
                    .map(|n| safe(&n.name))
                    .unwrap_or_default()
            });
            let api = e.detail.as_deref().unwrap_or(e.kind.as_str());
            writeln!(out, "      {:<22} {site}", safe(api))?;
        }
    }
    more(out, channels.len(), 0)
}

/// A section listing nodes of one kind with one list attribute.
fn named_list(
    out: &mut impl Write,
    a: &Analysis,
    kind: NodeKind,
    title: &str,
    attribute: &str,
) -> io::Result<()> {
    let items: Vec<&Node> = of_kind(a, kind).collect();
    if items.is_empty() {
        return Ok(());
    }
    section(out, title, items.len())?;
    for n in items.iter().take(ROWS) {
        let list = n
            .attributes
            .get(attribute)
            .map(render_value)
            .unwrap_or_default();
        writeln!(out, "  {} {} {list}", safe(&n.name), at(&n.location))?;
    }
    more(out, items.len(), 0)
}

fn native_modules(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let items: Vec<&Node> = of_kind(a, NodeKind::NativeModule).collect();
    section(
        out,
        "Native modules (open each with open_binary)",
        items.len(),
    )?;
    for n in items.iter().take(ROWS) {
        let attr = |k: &str| n.attributes.get(k).map(render_value).unwrap_or_default();
        writeln!(
            out,
            "  {}  {} {}  {} exports",
            safe(&n.name),
            attr("format"),
            attr("architectures"),
            attr("exports_total")
        )?;
    }
    more(out, items.len(), 0)
}

fn observations(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let mut items: Vec<_> = a.findings.observations.iter().collect();
    items.sort_by_key(|o| o.severity);
    let omitted = a.findings.omitted.observations;
    let total = items.len() as u64 + omitted;
    section(out, "Observations", total as usize)?;
    for o in items.iter().take(ROWS) {
        let severity = serde_json::to_value(o.severity).unwrap_or(Value::Null);
        let place = o.location.as_ref().map(at).unwrap_or_default();
        writeln!(
            out,
            "  [{}] {} {place}",
            severity.as_str().unwrap_or("?"),
            safe(&o.message)
        )?;
    }
    more(out, items.len(), omitted)
}

fn unknowns(out: &mut impl Write, a: &Analysis) -> io::Result<()> {
    let items = &a.findings.unknowns;
    let omitted = a.findings.omitted.unknowns;
    let total = items.len() as u64 + omitted;
    section(out, "Unknowns", total as usize)?;
    let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
    for u in items {
        let kind = serde_json::to_value(u.kind).unwrap_or(Value::Null);
        *by_kind
            .entry(kind.as_str().unwrap_or("?").to_owned())
            .or_default() += 1;
    }
    if !by_kind.is_empty() {
        let counts: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        writeln!(out, "  by kind (listed): {}", counts.join(", "))?;
    }
    for u in items.iter().take(ROWS) {
        let place = u.location.as_ref().map(at).unwrap_or_default();
        writeln!(out, "  {} {place}", safe(&u.message))?;
    }
    more(out, items.len(), omitted)?;
    for l in &a.limitations {
        writeln!(out, "limitation: {}", safe(l))?;
    }
    Ok(())
}

fn section(out: &mut impl Write, title: &str, count: usize) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{title} ({count}):")
}

/// What the summary did not show of a list the analysis holds `listed`
/// entries of, with `omitted` more counted but not kept: `--json` holds
/// the listed ones only, and the line says exactly that.
fn more(out: &mut impl Write, listed: usize, omitted: u64) -> io::Result<()> {
    const MAX_LISTED: usize = rea::javascript::FINDINGS_CAP;
    let hidden = listed.saturating_sub(ROWS) as u64;
    match (hidden, omitted) {
        (0, 0) => Ok(()),
        (hidden, 0) => writeln!(out, "  … and {hidden} more (rea analyze --json lists them)"),
        (0, omitted) => writeln!(
            out,
            "  … and {omitted} more, counted but not kept (the analysis keeps at most {MAX_LISTED} per list)"
        ),
        (hidden, omitted) => writeln!(
            out,
            "  … and {} more: rea analyze --json lists {hidden} of them; {omitted} were counted but not kept (the analysis keeps at most {MAX_LISTED} per list)",
            hidden + omitted
        ),
    }
}

fn of_kind(a: &Analysis, kind: NodeKind) -> impl Iterator<Item = &Node> {
    a.nodes.iter().filter(move |n| n.kind == kind)
}

fn outgoing<'a>(a: &'a Analysis, from: &'a str, kind: EdgeKind) -> impl Iterator<Item = &'a Edge> {
    a.edges
        .iter()
        .filter(move |e| e.kind == kind && e.from == from)
}

/// The edge's target name, or why it has none.
fn target_name(e: &Edge, nodes: &HashMap<&str, &Node>) -> String {
    match e.to.as_deref().and_then(|t| nodes.get(t)) {
        Some(n) => safe(&n.name),
        None => format!(
            "unresolved ({})",
            safe(e.unresolved.as_deref().unwrap_or("no target"))
        ),
    }
}

fn at(l: &SourceLocation) -> String {
    format!("{}:{}:{}", safe(&l.file), l.line, l.column)
}

/// A JSON attribute as short text (strings unquoted, lists comma-joined).
fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => safe(s),
        Value::Array(items) => {
            let shown: Vec<String> = items.iter().take(8).map(render_value).collect();
            let rest = items.len().saturating_sub(8);
            if rest > 0 {
                format!("[{} … +{rest}]", shown.join(", "))
            } else {
                format!("[{}]", shown.join(", "))
            }
        }
        other => safe(&other.to_string()),
    }
}

/// Untrusted text made safe for a terminal: control and invisible
/// characters (escape sequences, bidi overrides) are shown as `\u{..}`.
pub fn safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_escapes_controls_and_invisibles() {
        assert_eq!(safe("plain name"), "plain name");
        assert_eq!(safe("a\u{1b}[31mred"), "a\\u{1b}[31mred");
        assert_eq!(safe("x\u{202e}y\u{200b}"), "x\\u{202e}y\\u{200b}");
        assert_eq!(safe("line\nbreak"), "line\\u{a}break");
    }

    fn more_text(listed: usize, omitted: u64) -> String {
        let mut out = Vec::new();
        more(&mut out, listed, omitted).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The summary's count of what it did not show agrees with `--json`:
    /// what the JSON lists, and what was only counted.
    #[test]
    fn the_rest_is_described_as_the_json_holds_it() {
        assert_eq!(more_text(ROWS, 0), "");
        assert_eq!(
            more_text(ROWS + 5, 0),
            "  … and 5 more (rea analyze --json lists them)\n"
        );
        let both = more_text(200, 177);
        assert!(both.contains("and 357 more"), "{both}");
        assert!(both.contains("--json lists 180 of them"), "{both}");
        assert!(both.contains("177 were counted but not kept"), "{both}");
        let counted = more_text(3, 4);
        assert!(
            counted.contains("and 4 more, counted but not kept"),
            "{counted}"
        );
    }
}
