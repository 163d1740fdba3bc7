//! Joins the per-file facts into the content-addressed graph: one node per
//! file, package, built-in, window, channel, API, protocol, URL, menu and
//! webview; one edge per site. Node keys follow `model::NodeKind`'s docs.
//! Findings are derived afterwards (`findings.rs`) from the finished graph.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::facts::{
    ImportKind, IpcRole, Language, ModuleFacts, Pos, PrefValue, StringHint, WindowFact,
};
use super::html::{PageFacts, RefKind};
use super::model::*;
use super::native;
use super::package::{self, package_of};
use super::resolve::{FileIndex, Target, url_scheme};
use super::source::{Listing, SourceFile};
use crate::artifacts::paths::{join_inside, parent_dir};

mod sites;
mod windows;

use sites::module_facts;
pub use windows::effective;
use windows::page_refs;

/// What the extraction thread produced for one listed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Module(ModuleFacts),
    Page(PageFacts),
    /// A source file or page that was not parsed; why.
    NotParsed(String),
}

/// A window as the builder keeps it for findings.
#[derive(Debug, Clone)]
pub struct WindowInfo {
    pub node: String,
    pub location: SourceLocation,
    pub fact: WindowFact,
    pub effective: BTreeMap<&'static str, Value>,
}

/// A site whose value rea could not see (for unknowns).
#[derive(Debug, Clone)]
pub struct Site {
    pub node: Option<String>,
    pub location: SourceLocation,
    pub message: String,
}

/// The graph under construction plus what findings need.
#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: BTreeMap<String, Node>,
    pub edges: Vec<Edge>,
    pub entry_points: Vec<EntryPoint>,
    pub windows: Vec<WindowInfo>,
    /// path → node id for file nodes.
    pub file_nodes: BTreeMap<String, String>,
    pub dynamic: Vec<Site>,
    pub computed: Vec<Site>,
    pub unresolved_imports: Vec<Site>,
    pub insecure: Vec<Site>,
    pub open_dynamic: Vec<Site>,
    pub remote: Vec<Site>,
    pub webviews: Vec<Site>,
    pub electron_major: Option<u64>,
    /// path → (size, sha256) of every listed file.
    pub meta: BTreeMap<String, (u64, Option<String>)>,
}

pub fn loc(file: &str, p: Pos) -> SourceLocation {
    SourceLocation {
        file: file.to_owned(),
        line: p.line.max(1),
        column: p.column.max(1),
    }
}

fn short(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}

fn language_name(l: Language) -> &'static str {
    match l {
        Language::JavaScript => "javascript",
        Language::Module => "module",
        Language::Jsx => "jsx",
        Language::TypeScript => "typescript",
        Language::Tsx => "tsx",
    }
}

fn is_page(path: &str) -> bool {
    let l = path.to_ascii_lowercase();
    l.ends_with(".html") || l.ends_with(".htm")
}

fn is_native(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".node")
}

impl Graph {
    /// Adds (or widens) a node; named nodes keep their first site.
    fn node(
        &mut self,
        kind: NodeKind,
        key: Value,
        name: &str,
        location: SourceLocation,
        attributes: BTreeMap<String, Value>,
    ) -> String {
        let id = node_id(kind, &key);
        match self.nodes.get_mut(&id) {
            Some(n) => {
                if location < n.location {
                    n.location = location;
                }
            }
            None => {
                self.nodes.insert(
                    id.clone(),
                    Node {
                        node_id: id.clone(),
                        kind,
                        name: short(name),
                        location,
                        attributes,
                    },
                );
            }
        }
        id
    }

    fn named(&mut self, kind: NodeKind, name: &str, at: SourceLocation) -> String {
        self.node(kind, json!({"name": name}), name, at, BTreeMap::new())
    }

    fn attr(&mut self, id: &str, key: &str, value: Value) {
        if let Some(n) = self.nodes.get_mut(id) {
            n.attributes.insert(key.to_owned(), value);
        }
    }

    /// Adds names to a sorted, deduplicated, capped list attribute.
    fn add_names(&mut self, id: &str, key: &str, names: &[String]) {
        let Some(n) = self.nodes.get_mut(id) else {
            return;
        };
        let mut list: Vec<String> = n
            .attributes
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        list.extend(names.iter().cloned());
        list.sort();
        list.dedup();
        list.truncate(256);
        n.attributes.insert(key.to_owned(), json!(list));
    }

    fn edge(
        &mut self,
        kind: EdgeKind,
        from: &str,
        to: Result<String, String>,
        location: Option<SourceLocation>,
        detail: Option<String>,
    ) {
        let (to, unresolved) = match to {
            Ok(id) => (Some(id), None),
            Err(reason) => (None, Some(short(&reason))),
        };
        self.edges.push(Edge::new(
            kind,
            from.to_owned(),
            to,
            location,
            detail.map(|d| short(&d)),
            unresolved,
        ));
    }

    /// A URL node with its scheme and host.
    fn url(&mut self, url: &str, at: SourceLocation) -> String {
        let id = self.named(NodeKind::Url, url, at);
        let scheme = url_scheme(url).unwrap_or_default();
        self.attr(&id, "scheme", json!(scheme));
        self.attr(&id, "host", json!(host_of(url)));
        id
    }
}

/// The host of a URL (`https://user@h:1/x` → `h`), or null.
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let auth = rest.split(['/', '?', '#']).next()?;
    let host = auth.rsplit('@').next()?;
    let host = if host.starts_with('[') {
        host.split(']').next().map(|h| format!("{h}]"))?
    } else {
        host.split(':').next()?.to_owned()
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Input of [`build`].
pub struct BuildInput<'a> {
    pub listing: &'a Listing,
    /// Facts by index into `listing.files`.
    pub parsed: &'a BTreeMap<usize, Parsed>,
    pub package: Option<&'a PackageInfo>,
    pub read_source_maps: bool,
}

/// Builds the graph (nodes, edges, entry points, windows and sites).
pub fn build(input: &BuildInput<'_>) -> Graph {
    let mut g = Graph {
        electron_major: input.package.and_then(PackageInfo::electron_major),
        ..Graph::default()
    };
    let files = &input.listing.files;
    let mut index = FileIndex::new(files.iter().map(|f| f.path.clone()));
    let mut versions: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
    for f in files.iter().filter(|f| f.path.ends_with("package.json")) {
        let Some(info) = f.bytes.as_deref().and_then(|b| package::parse(&f.path, b)) else {
            continue;
        };
        let dir = parent_dir(&f.path);
        if let Some(main) = &info.main {
            index.set_main(dir, main);
        }
        if let Some((name, root)) = package_of(&f.path)
            && root == dir
        {
            // The shallowest copy of a package wins.
            let replace = versions
                .get(&name)
                .is_none_or(|(_, r)| r.len() > root.len());
            if replace {
                versions.insert(name, (info.version.clone(), root));
            }
        }
    }
    g.meta = files
        .iter()
        .map(|f| (f.path.clone(), (f.size, f.sha256.clone())))
        .collect();
    file_nodes(&mut g, input);
    for (i, parsed) in input.parsed {
        let Some(file) = files.get(*i) else { continue };
        let Some(from) = g.file_nodes.get(&file.path).cloned() else {
            continue;
        };
        match parsed {
            Parsed::Module(facts) => {
                module_facts(&mut g, &index, input, &file.path, &from, facts, false)
            }
            Parsed::Page(page) => {
                page_refs(&mut g, &index, &file.path, &from, page);
                module_facts(&mut g, &index, input, &file.path, &from, &page.inline, true);
            }
            Parsed::NotParsed(_) => {}
        }
    }
    shipped_natives(&mut g, input.package, &versions);
    entry_main(&mut g, &index, input.package);
    g
}

fn file_nodes(g: &mut Graph, input: &BuildInput<'_>) {
    let by_path: BTreeMap<&str, &SourceFile> = input
        .listing
        .files
        .iter()
        .map(|f| (f.path.as_str(), f))
        .collect();
    for (i, f) in input.listing.files.iter().enumerate() {
        let at = SourceLocation::file_start(&f.path);
        let key = json!({"path": f.path, "sha256": f.sha256});
        let base = BTreeMap::from([
            ("sha256".to_owned(), json!(f.sha256)),
            ("size".to_owned(), json!(f.size)),
        ]);
        let parsed = input.parsed.get(&i);
        if let Some(language) = Language::of_path(&f.path) {
            let mut attrs = base;
            let facts = match parsed {
                Some(Parsed::Module(m)) => Some(m),
                _ => None,
            };
            let parse = match facts {
                Some(m) if m.parse.parsed && m.parse.diagnostics_total == 0 => "ok",
                Some(m) if m.parse.parsed => "errors",
                _ => "not-parsed",
            };
            attrs.insert("language".into(), json!(language_name(language)));
            attrs.insert("parse".into(), json!(parse));
            attrs.insert(
                "minified".into(),
                json!(facts.is_some_and(|m| m.parse.minified)),
            );
            attrs.insert(
                "source_map".into(),
                json!(facts.and_then(|m| m.parse.source_map_url.as_deref().map(short))),
            );
            attrs.insert("process".into(), json!("unknown"));
            attrs.insert("process_basis".into(), json!("none"));
            if input.read_source_maps
                && let Some(m) = facts
                && let Some(sources) = source_map_sources(&by_path, &f.path, m)
            {
                attrs.insert("source_map_sources".into(), json!(sources));
            }
            let id = g.node(NodeKind::Module, key, &f.path, at, attrs);
            g.file_nodes.insert(f.path.clone(), id);
        } else if is_page(&f.path) {
            let mut attrs = base;
            attrs.insert("process".into(), json!("renderer"));
            // Unknown (null) when the page could not be read.
            let csp = match parsed {
                Some(Parsed::Page(p)) => json!(p.csp),
                _ => Value::Null,
            };
            attrs.insert("csp".into(), csp);
            let id = g.node(NodeKind::HtmlPage, key, &f.path, at, attrs);
            g.file_nodes.insert(f.path.clone(), id);
        } else if is_native(&f.path) {
            let mut attrs = base;
            let info = f.bytes.as_deref().map(native::describe).unwrap_or_default();
            attrs.insert(
                "format".into(),
                json!(if f.bytes.is_some() {
                    info.format
                } else {
                    "unknown"
                }),
            );
            attrs.insert("architectures".into(), json!(info.architectures));
            attrs.insert("exports".into(), json!(info.exports));
            attrs.insert("exports_total".into(), json!(info.exports_total));
            attrs.insert("unpacked".into(), json!(f.unpacked));
            attrs.insert("package".into(), json!(package_of(&f.path).map(|p| p.0)));
            let id = g.node(NodeKind::NativeModule, key, &f.path, at, attrs);
            g.file_nodes.insert(f.path.clone(), id);
        }
    }
}

/// The `sources` of a minified module's relative `.map` file, when present.
fn source_map_sources(
    listing: &BTreeMap<&str, &SourceFile>,
    path: &str,
    m: &ModuleFacts,
) -> Option<Vec<String>> {
    let url = m.parse.source_map_url.as_deref()?;
    if url_scheme(url).is_some() || url.starts_with('/') {
        return None;
    }
    let target = join_inside(parent_dir(path), url)?;
    let file = listing.get(target.as_str())?;
    let v = package::bounded_json(file.bytes.as_deref()?)?;
    let sources = v.get("sources")?.as_array()?;
    Some(
        sources
            .iter()
            .filter_map(Value::as_str)
            .take(256)
            .map(short)
            .collect(),
    )
}

/// The node a resolved file path leads to; data files get a module node.
fn file_target(g: &mut Graph, path: &str) -> String {
    if let Some(id) = g.file_nodes.get(path) {
        return id.clone();
    }
    let (size, sha) = g.meta.get(path).cloned().unwrap_or((0, None));
    let language = if path.to_ascii_lowercase().ends_with(".json") {
        "json"
    } else {
        "other"
    };
    let attrs = BTreeMap::from([
        ("sha256".to_owned(), json!(sha)),
        ("size".to_owned(), json!(size)),
        ("language".to_owned(), json!(language)),
        ("parse".to_owned(), json!("data")),
        ("minified".to_owned(), json!(false)),
        ("source_map".to_owned(), Value::Null),
        ("process".to_owned(), json!("unknown")),
        ("process_basis".to_owned(), json!("none")),
    ]);
    let id = g.node(
        NodeKind::Module,
        json!({"path": path, "sha256": sha}),
        path,
        SourceLocation::file_start(path),
        attrs,
    );
    g.file_nodes.insert(path.to_owned(), id.clone());
    id
}

fn package_node(
    g: &mut Graph,
    pkg: Option<&PackageInfo>,
    name: &str,
    found: bool,
    at: SourceLocation,
) -> String {
    let id = g.named(NodeKind::Package, name, at);
    let (declared, kind) = pkg.map_or((None, "undeclared"), |p| p.declared(name));
    let declared = declared.map(str::to_owned);
    g.attr(&id, "declared", json!(declared));
    g.attr(&id, "dependency_type", json!(kind));
    let was = g.nodes[&id]
        .attributes
        .get("resolved")
        .and_then(Value::as_bool);
    g.attr(&id, "resolved", json!(found || was == Some(true)));
    if !g.nodes[&id].attributes.contains_key("version") {
        g.attr(&id, "version", Value::Null);
    }
    id
}

/// Packages shipping `.node` files: a package → native-module edge.
fn shipped_natives(
    g: &mut Graph,
    pkg: Option<&PackageInfo>,
    versions: &BTreeMap<String, (Option<String>, String)>,
) {
    let natives: Vec<(String, String)> = g
        .nodes
        .values()
        .filter(|n| n.kind == NodeKind::NativeModule)
        .map(|n| (n.node_id.clone(), n.name.clone()))
        .collect();
    for (id, path) in natives {
        let Some((name, root)) = package_of(&path) else {
            continue;
        };
        let at = SourceLocation::file_start(&format!("{root}/package.json"));
        let p = package_node(g, pkg, &name, true, at);
        g.edge(EdgeKind::LoadsNative, &p, Ok(id), None, None);
    }
    let packages: Vec<(String, String)> = g
        .nodes
        .values()
        .filter(|n| n.kind == NodeKind::Package)
        .map(|n| (n.node_id.clone(), n.name.clone()))
        .collect();
    for (id, name) in packages {
        if let Some((version, _)) = versions.get(&name) {
            g.attr(&id, "version", json!(version));
        }
    }
}

fn entry_main(g: &mut Graph, index: &FileIndex, pkg: Option<&PackageInfo>) {
    let main = pkg
        .and_then(|p| p.main.clone())
        .unwrap_or_else(|| "index.js".into());
    let Some(path) = join_inside("", &main).and_then(|p| index.file_like(&p)) else {
        // Only a declared main is worth an unknown; a directory without
        // one may simply be a library or a set of pages.
        if pkg.is_some_and(|p| p.main.is_some()) {
            g.unresolved_imports.push(Site {
                node: None,
                location: SourceLocation::file_start("package.json"),
                message: format!(
                    "package.json: main {} names no file of the application",
                    short(&main)
                ),
            });
        }
        return;
    };
    if let Some(id) = g.file_nodes.get(&path).cloned() {
        g.entry_points.push(EntryPoint {
            kind: EntryKind::Main,
            node_id: id,
            path,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_the_authority() {
        assert_eq!(
            host_of("https://User@Example.com:8080/x?y").as_deref(),
            Some("example.com")
        );
        assert_eq!(host_of("http://[::1]:80/").as_deref(), Some("[::1]"));
        assert_eq!(host_of("file:///etc/x"), None);
        assert_eq!(host_of("mailto:a@b"), None);
    }
}
