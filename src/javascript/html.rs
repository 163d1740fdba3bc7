//! A small, tolerant HTML tag scanner: enough to see which scripts, pages
//! and webviews a renderer page pulls in, and whether it declares a
//! Content-Security-Policy. One linear pass; malformed markup degrades to
//! fewer facts, never to an error.

use super::facts::{Language, MAX_FACTS_PER_LIST, ModuleFacts, Pos};

/// What a page references.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RefKind {
    /// `<script src>`.
    Script,
    /// `<link rel="import" href>`.
    LinkImport,
    /// `<iframe src>`.
    Iframe,
    /// `<webview src>` (src may be absent).
    Webview,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRef {
    pub kind: RefKind,
    pub target: Option<String>,
    pub pos: Pos,
}

/// Everything read from one page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageFacts {
    pub refs: Vec<PageRef>,
    /// The facts of all inline scripts, positions in page coordinates.
    pub inline: ModuleFacts,
    pub inline_scripts: u32,
    /// A `<meta http-equiv="Content-Security-Policy">` is present.
    pub csp: bool,
}

/// Line/column lookup for byte offsets of one text.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    fn pos(&self, offset: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(0, |s| s.chars().count());
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }
}

/// Scans `text`, running `extract` on inline scripts.
pub fn scan(text: &str, extract: &dyn Fn(&str, Language) -> ModuleFacts) -> PageFacts {
    let lines = Lines::new(text);
    let lower = text.to_ascii_lowercase();
    let mut page = PageFacts::default();
    let mut at = 0;
    while let Some(rel) = lower.get(at..).and_then(|s| s.find('<')) {
        let start = at + rel;
        if lower[start..].starts_with("<!--") {
            at = lower[start..]
                .find("-->")
                .map_or(text.len(), |e| start + e + 3);
            continue;
        }
        let Some((name, attrs, end)) = tag(text, start) else {
            at = start + 1;
            continue;
        };
        at = end;
        let get = |key: &str| attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let pos = lines.pos(start);
        let mut push = |kind, target: Option<String>| {
            if page.refs.len() < MAX_FACTS_PER_LIST {
                page.refs.push(PageRef { kind, target, pos });
            }
        };
        match name.as_str() {
            "script" => {
                let close = lower[end..]
                    .find("</script")
                    .map_or(text.len(), |e| end + e);
                at = close;
                if let Some(src) = get("src") {
                    push(RefKind::Script, Some(src));
                    continue;
                }
                let ty = get("type").unwrap_or_default().to_ascii_lowercase();
                let language = match ty.as_str() {
                    "" | "text/javascript" | "application/javascript" => Language::JavaScript,
                    "module" => Language::Module,
                    _ => continue,
                };
                let body = &text[end..close];
                if body.trim().is_empty() {
                    continue;
                }
                let facts = extract(body, language);
                merge(
                    &mut page.inline,
                    facts,
                    lines.pos(end),
                    page.inline_scripts == 0,
                );
                page.inline_scripts += 1;
            }
            "link" => {
                let rel_import = get("rel").is_some_and(|r| r.eq_ignore_ascii_case("import"));
                if rel_import && let Some(href) = get("href") {
                    push(RefKind::LinkImport, Some(href));
                }
            }
            "iframe" => {
                if let Some(src) = get("src") {
                    push(RefKind::Iframe, Some(src));
                }
            }
            "webview" => push(RefKind::Webview, get("src")),
            "meta" => {
                let csp = get("http-equiv")
                    .is_some_and(|v| v.eq_ignore_ascii_case("content-security-policy"));
                page.csp |= csp;
            }
            _ => {}
        }
    }
    page
}

/// Attribute (lowercase name, value) pairs of one tag.
type Attributes = Vec<(String, String)>;

/// Reads the tag opening at `start`: (lowercase name, attributes with
/// lowercase names, offset after `>`). `None` for closing tags and text.
fn tag(text: &str, start: usize) -> Option<(String, Attributes, usize)> {
    let b = text.as_bytes();
    let mut i = start + 1;
    let name_start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-') {
        i += 1;
    }
    if i == name_start || !b[name_start].is_ascii_alphabetic() {
        return None;
    }
    let name = text[name_start..i].to_ascii_lowercase();
    let mut attrs = Vec::new();
    loop {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        if i >= b.len() {
            return Some((name, attrs, b.len()));
        }
        if b[i] == b'>' {
            return Some((name, attrs, i + 1));
        }
        let key_start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let key = text[key_start..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let quote = b[i];
                let v_start = i + 1;
                let v_end = b[v_start..]
                    .iter()
                    .position(|&c| c == quote)
                    .map_or(b.len(), |p| v_start + p);
                value = text[v_start..v_end].to_owned();
                i = (v_end + 1).min(b.len());
            } else {
                let v_start = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                    i += 1;
                }
                value = text[v_start..i].to_owned();
            }
        }
        if key.is_empty() {
            i += 1;
            continue;
        }
        if attrs.len() < 64 {
            let value: String = value.chars().take(super::model::EXCERPT_CHARS).collect();
            attrs.push((key, value));
        }
    }
}

/// Moves a position of a script body starting at `origin` into page coordinates.
fn shift(p: Pos, origin: Pos) -> Pos {
    if p.line <= 1 {
        Pos {
            line: origin.line,
            column: origin.column.saturating_add(p.column.saturating_sub(1)),
        }
    } else {
        Pos {
            line: origin.line.saturating_add(p.line - 1),
            column: p.column,
        }
    }
}

/// Appends one inline script's facts, shifted, to the page's.
fn merge(into: &mut ModuleFacts, mut f: ModuleFacts, origin: Pos, first: bool) {
    let s = |p: &mut Pos| *p = shift(*p, origin);
    f.imports.iter_mut().for_each(|x| s(&mut x.pos));
    for w in &mut f.windows {
        s(&mut w.pos);
        w.loads.iter_mut().for_each(|x| s(&mut x.pos));
    }
    f.loose_loads.iter_mut().for_each(|x| s(&mut x.pos));
    f.ipc.iter_mut().for_each(|x| s(&mut x.pos));
    f.exposed.iter_mut().for_each(|x| s(&mut x.pos));
    f.api_uses.iter_mut().for_each(|x| s(&mut x.pos));
    f.protocols.iter_mut().for_each(|x| s(&mut x.pos));
    f.open_external.iter_mut().for_each(|x| s(&mut x.pos));
    f.urls.iter_mut().for_each(|x| s(&mut x.pos));
    f.menus.iter_mut().for_each(|x| s(&mut x.pos));
    f.remote.iter_mut().for_each(|x| s(&mut x.pos));
    f.parse.diagnostics.iter_mut().for_each(|x| s(&mut x.pos));
    let p = &mut into.parse;
    p.parsed = if first {
        f.parse.parsed
    } else {
        p.parsed && f.parse.parsed
    };
    p.diagnostics
        .extend(f.parse.diagnostics.into_iter().take(8));
    p.diagnostics_total += f.parse.diagnostics_total;
    if p.not_parsed.is_none() {
        p.not_parsed = f.parse.not_parsed;
    }
    p.minified |= f.parse.minified;
    p.walk_truncated |= f.parse.walk_truncated;
    fn ext<T>(a: &mut Vec<T>, b: Vec<T>, omitted: &mut u64) {
        let room = MAX_FACTS_PER_LIST.saturating_sub(a.len());
        *omitted += b.len().saturating_sub(room) as u64;
        a.extend(b.into_iter().take(room));
    }
    let o = &mut into.facts_omitted;
    *o += f.facts_omitted;
    ext(&mut into.imports, f.imports, o);
    ext(&mut into.windows, f.windows, o);
    ext(&mut into.loose_loads, f.loose_loads, o);
    ext(&mut into.ipc, f.ipc, o);
    ext(&mut into.exposed, f.exposed, o);
    ext(&mut into.api_uses, f.api_uses, o);
    ext(&mut into.protocols, f.protocols, o);
    ext(&mut into.open_external, f.open_external, o);
    ext(&mut into.urls, f.urls, o);
    ext(&mut into.menus, f.menus, o);
    ext(&mut into.remote, f.remote, o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::javascript::facts::{ImportFact, ImportKind, StringHint};

    fn fake(body: &str, _: Language) -> ModuleFacts {
        let mut f = ModuleFacts::default();
        f.parse.parsed = true;
        if let Some(at) = body.find("require") {
            let line = body[..at].matches('\n').count() as u32 + 1;
            let col = body[..at].rsplit('\n').next().unwrap().chars().count() as u32 + 1;
            f.imports.push(ImportFact {
                kind: ImportKind::Require,
                specifier: StringHint {
                    literal: Some("./x".into()),
                    ..Default::default()
                },
                pos: Pos { line, column: col },
            });
        }
        f
    }

    #[test]
    fn finds_scripts_imports_frames_webviews_and_csp() {
        let page = "<!doctype html>\n<html><head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'\">\n<link rel=\"import\" href=\"sections/a.html\">\n<!-- <script src=\"hidden.js\"></script> -->\n<script src='./r.js'></script>\n<SCRIPT>\n  require('./x')\n</SCRIPT>\n<script type=\"text/template\">require('y')</script>\n<iframe src=https://e.com/ ></iframe><webview src=\"https://w.com\" nodeintegration></webview><webview>";
        let f = scan(page, &fake);
        assert!(f.csp);
        let refs: Vec<_> = f
            .refs
            .iter()
            .map(|r| (r.kind, r.target.as_deref(), r.pos.line))
            .collect();
        assert_eq!(
            refs,
            [
                (RefKind::LinkImport, Some("sections/a.html"), 4),
                (RefKind::Script, Some("./r.js"), 6),
                (RefKind::Iframe, Some("https://e.com/"), 11),
                (RefKind::Webview, Some("https://w.com"), 11),
                (RefKind::Webview, None, 11),
            ]
        );
        assert_eq!(f.inline_scripts, 1);
        assert_eq!(f.inline.imports[0].pos, Pos { line: 8, column: 3 });
    }

    #[test]
    fn tolerates_truncated_markup() {
        for page in [
            "<",
            "<script",
            "<a href='x",
            "<script>require('a')",
            "</",
            "<-x>",
            "<é>",
        ] {
            let f = scan(page, &fake);
            assert!(f.refs.len() <= 1);
        }
        assert!(!scan("<p>no csp</p>", &fake).csp);
    }
}
