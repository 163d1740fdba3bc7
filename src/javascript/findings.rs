//! Findings derived from the built graph: which process each module runs
//! in, the risky settings and surfaces (observations), the joins across
//! files (relationships) and what static reading could not see (unknowns).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::json;

use super::facts::PrefValue;
use super::graph::{Graph, Parsed, Site, loc};
use super::model::*;
use super::source::Listing;

/// Marks each module's `process` and `process_basis`.
pub fn assign_processes(g: &mut Graph, facts: &BTreeMap<String, &Parsed>) {
    let mut adjacency: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &g.edges {
        let follow = matches!(
            e.kind,
            EdgeKind::Imports
                | EdgeKind::DynamicImport
                | EdgeKind::HtmlScript
                | EdgeKind::HtmlImport
        );
        if let (true, Some(to)) = (follow, e.to.as_deref()) {
            adjacency.entry(e.from.as_str()).or_default().push(to);
        }
    }
    let starts = |kind: EntryKind| -> Vec<String> {
        g.entry_points
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.node_id.clone())
            .collect()
    };
    let mut role: BTreeMap<String, &'static str> = BTreeMap::new();
    for (kind, name) in [
        (EntryKind::Main, "main"),
        (EntryKind::Preload, "preload"),
        (EntryKind::RendererPage, "renderer"),
    ] {
        let mut queue: VecDeque<String> = starts(kind).into();
        let mut seen: BTreeSet<String> = queue.iter().cloned().collect();
        while let Some(id) = queue.pop_front() {
            role.entry(id.clone()).or_insert(name);
            for next in adjacency.get(id.as_str()).into_iter().flatten() {
                if seen.insert((*next).to_owned()) {
                    queue.push_back((*next).to_owned());
                }
            }
        }
    }
    for node in g.nodes.values_mut() {
        if node.kind != NodeKind::Module {
            continue;
        }
        let (process, basis) = match role.get(&node.node_id) {
            Some(r) => (*r, "reachable"),
            None => match facts.get(&node.name).and_then(|p| infer(p)) {
                Some(r) => (r, "inferred"),
                None => ("unknown", "none"),
            },
        };
        node.attributes.insert("process".into(), json!(process));
        node.attributes.insert("process_basis".into(), json!(basis));
    }
}

/// The process a file's API use suggests.
fn infer(p: &Parsed) -> Option<&'static str> {
    let Parsed::Module(f) = p else { return None };
    if !f.exposed.is_empty() {
        return Some("preload");
    }
    let main = !f.windows.is_empty()
        || !f.protocols.is_empty()
        || f.ipc.iter().any(|i| i.api.starts_with("ipcMain"));
    if main {
        return Some("main");
    }
    let renderer = f.ipc.iter().any(|i| i.api.starts_with("ipcRenderer"))
        || f.api_uses
            .iter()
            .any(|u| u.object == "document" || u.object == "window");
    renderer.then_some("renderer")
}

/// Uses of exposed APIs: module → exposed-api edges for objects whose name
/// a preload exposes.
pub fn api_uses(g: &mut Graph, facts: &BTreeMap<String, &Parsed>) {
    let exposed: BTreeMap<String, String> = g
        .nodes
        .values()
        .filter(|n| n.kind == NodeKind::ExposedApi)
        .map(|n| (n.name.clone(), n.node_id.clone()))
        .collect();
    if exposed.is_empty() {
        return;
    }
    let mut new = Vec::new();
    for (path, parsed) in facts {
        let uses = match parsed {
            Parsed::Module(f) => &f.api_uses,
            Parsed::Page(p) => &p.inline.api_uses,
            Parsed::NotParsed(_) => continue,
        };
        let Some(from) = g.file_nodes.get(path) else {
            continue;
        };
        for u in uses {
            let Some(api) = exposed.get(&u.object) else {
                continue;
            };
            let detail = match &u.member {
                Some(m) => format!("{}.{m}", u.object),
                None => u.object.clone(),
            };
            new.push(Edge::new(
                EdgeKind::UsesApi,
                from.clone(),
                Some(api.clone()),
                Some(loc(path, u.pos)),
                Some(detail.chars().take(EXCERPT_CHARS).collect()),
                None,
            ));
        }
    }
    g.edges.extend(new);
}

fn obs(kind: ObservationKind, severity: Severity, s: &Site) -> Observation {
    Observation {
        kind,
        severity,
        node_id: s.node.clone(),
        location: Some(s.location.clone()),
        message: s.message.clone(),
    }
}

/// Observations about windows, surfaces and files.
pub fn observations(g: &Graph, listing: &Listing) -> Vec<Observation> {
    let mut out = Vec::new();
    for w in &g.windows {
        let site = |message: String| Site {
            node: Some(w.node.clone()),
            location: w.location.clone(),
            message,
        };
        let how = |pref: &str| match w.fact.web_preferences.get(pref) {
            Some(_) => "set explicitly".to_owned(),
            None => match g.electron_major {
                Some(m) => format!("the default of Electron {m}"),
                None => "the default".to_owned(),
            },
        };
        let c = &w.fact.constructor;
        if w.effective.get("node_integration") == Some(&json!(true)) {
            let s = site(format!(
                "{c} runs with nodeIntegration on ({})",
                how("nodeIntegration")
            ));
            out.push(obs(
                ObservationKind::NodeIntegrationEnabled,
                Severity::High,
                &s,
            ));
        }
        if w.effective.get("context_isolation") == Some(&json!(false)) {
            let s = site(format!(
                "{c} runs with contextIsolation off ({})",
                how("contextIsolation")
            ));
            out.push(obs(
                ObservationKind::ContextIsolationDisabled,
                Severity::High,
                &s,
            ));
        }
        if w.effective.get("sandbox") == Some(&json!(false)) {
            let s = site(format!("{c} runs unsandboxed ({})", how("sandbox")));
            out.push(obs(ObservationKind::SandboxDisabled, Severity::Medium, &s));
        }
        let prefs = &w.fact.web_preferences;
        if matches!(prefs.get("webSecurity"), Some(PrefValue::Bool(false))) {
            let s = site(format!("{c} sets webSecurity: false"));
            out.push(obs(
                ObservationKind::WebSecurityDisabled,
                Severity::High,
                &s,
            ));
        }
        if matches!(
            prefs.get("allowRunningInsecureContent"),
            Some(PrefValue::Bool(true))
        ) {
            let s = site(format!("{c} sets allowRunningInsecureContent: true"));
            out.push(obs(
                ObservationKind::WebSecurityDisabled,
                Severity::High,
                &s,
            ));
        }
        if matches!(prefs.get("webviewTag"), Some(PrefValue::Bool(true))) {
            let s = site(format!("{c} enables the <webview> tag"));
            out.push(obs(ObservationKind::WebviewEnabled, Severity::Medium, &s));
        }
    }
    for s in &g.webviews {
        out.push(obs(ObservationKind::WebviewEnabled, Severity::Medium, s));
    }
    for s in &g.remote {
        out.push(obs(ObservationKind::RemoteModule, Severity::Medium, s));
    }
    for s in &g.open_dynamic {
        out.push(obs(
            ObservationKind::OpenExternalDynamic,
            Severity::Medium,
            s,
        ));
    }
    for s in &g.insecure {
        out.push(obs(ObservationKind::InsecureUrl, Severity::Medium, s));
    }
    for n in g.nodes.values() {
        let (kind, message) = match n.kind {
            NodeKind::Protocol => (
                ObservationKind::CustomProtocol,
                format!(
                    "the custom protocol {}: is registered or privileged",
                    n.name
                ),
            ),
            NodeKind::NativeModule => (
                ObservationKind::NativeModule,
                format!(
                    "the native addon {} ships with the application; open it with open_binary",
                    n.name
                ),
            ),
            _ => continue,
        };
        out.push(Observation {
            kind,
            severity: Severity::Info,
            node_id: Some(n.node_id.clone()),
            location: Some(n.location.clone()),
            message,
        });
    }
    for f in &listing.files {
        if let Some(reason) = &f.integrity_mismatch {
            out.push(Observation {
                kind: ObservationKind::IntegrityMismatch,
                severity: Severity::High,
                node_id: g.file_nodes.get(&f.path).cloned(),
                location: Some(SourceLocation::file_start(&f.path)),
                message: format!("{}: {reason}", f.path),
            });
        }
    }
    for page in renderer_pages(g) {
        let Some(n) = g.nodes.get(&page) else {
            continue;
        };
        if n.attributes.get("csp") == Some(&json!(false)) {
            out.push(Observation {
                kind: ObservationKind::NoContentSecurityPolicy,
                severity: Severity::Low,
                node_id: Some(page.clone()),
                location: Some(n.location.clone()),
                message: format!(
                    "{} is loaded in a window without a Content-Security-Policy meta tag",
                    n.name
                ),
            });
        }
    }
    out
}

/// Pages windows load, and the pages those import.
fn renderer_pages(g: &Graph) -> BTreeSet<String> {
    let imports = targets_by_source(g, EdgeKind::HtmlImport);
    let mut pages: BTreeSet<String> = g
        .entry_points
        .iter()
        .filter(|e| e.kind == EntryKind::RendererPage)
        .map(|e| e.node_id.clone())
        .collect();
    let mut queue: Vec<String> = pages.iter().cloned().collect();
    while let Some(p) = queue.pop() {
        for to in imports.get(p.as_str()).into_iter().flatten() {
            let page = g
                .nodes
                .get(*to)
                .is_some_and(|n| n.kind == NodeKind::HtmlPage);
            if page && pages.insert((*to).to_owned()) {
                queue.push((*to).to_owned());
            }
        }
    }
    pages
}

/// Resolved targets of `kind` edges by their source node.
fn targets_by_source(g: &Graph, kind: EdgeKind) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in g.edges.iter().filter(|e| e.kind == kind) {
        if let Some(to) = e.to.as_deref() {
            out.entry(e.from.as_str()).or_default().push(to);
        }
    }
    out
}

/// Most relationships derived before the rest are only counted (a
/// channel with thousands of senders and handlers must not make millions).
const MAX_RELATIONSHIPS: usize = 20 * FINDINGS_CAP;

type RelKey = (RelationshipKind, String, String, Option<String>, String);

/// Relationships collected up to [`MAX_RELATIONSHIPS`], the rest counted.
#[derive(Default)]
struct Rels {
    set: BTreeSet<RelKey>,
    omitted: u64,
}

impl Rels {
    fn add(
        &mut self,
        kind: RelationshipKind,
        from: &str,
        to: &str,
        via: Option<&str>,
        message: impl FnOnce() -> String,
    ) {
        if self.set.len() >= MAX_RELATIONSHIPS {
            self.omitted += 1;
            return;
        }
        self.set.insert((
            kind,
            from.to_owned(),
            to.to_owned(),
            via.map(str::to_owned),
            message(),
        ));
    }

    /// Counts `n` more without building them.
    fn full(&mut self, n: usize) -> bool {
        if self.set.len() >= MAX_RELATIONSHIPS {
            self.omitted += n as u64;
            return true;
        }
        false
    }
}

fn name(g: &Graph, id: &str) -> String {
    g.nodes
        .get(id)
        .map_or_else(|| id.to_owned(), |n| n.name.clone())
}

/// Relationships (and how many more were only counted) and
/// unpaired-channel unknowns.
pub fn relationships(g: &Graph) -> (Vec<Relationship>, u64, Vec<Unknown>) {
    let mut rels = Rels::default();
    let mut unknowns = Vec::new();
    // channel → (renderer senders, main senders, handlers, listeners)
    type Ends<'a> = [BTreeSet<&'a str>; 4];
    let mut channels: BTreeMap<&str, Ends<'_>> = BTreeMap::new();
    for e in &g.edges {
        let Some(ch) = e.to.as_deref() else { continue };
        let slot = match (e.kind, e.detail.as_deref().unwrap_or_default()) {
            (EdgeKind::IpcSend, api) if api.starts_with("ipcRenderer") => 0,
            (EdgeKind::IpcSend, _) => 1,
            (EdgeKind::IpcHandle, _) => 2,
            (EdgeKind::IpcListen, _) => 3,
            _ => continue,
        };
        channels.entry(ch).or_default()[slot].insert(e.from.as_str());
    }
    for (ch, [rs, ms, hs, ls]) in &channels {
        let chn = name(g, ch);
        for (senders, receivers, kind, dir) in [
            (rs, hs, RelationshipKind::RendererToMain, "handles"),
            (ms, ls, RelationshipKind::MainToRenderer, "listens to"),
        ] {
            for s in senders {
                if rels.full(receivers.len()) {
                    continue;
                }
                for r in receivers {
                    rels.add(kind, s, r, Some(ch), || {
                        format!("{} sends on \"{chn}\"; {} {dir} it", name(g, s), name(g, r))
                    });
                }
            }
        }
        let unpaired = [
            (
                !rs.is_empty() && hs.is_empty(),
                "a renderer sends on it but no main-process handler was found",
            ),
            (
                rs.is_empty() && !hs.is_empty(),
                "the main process handles it but no renderer sender was found",
            ),
            (
                !ms.is_empty() && ls.is_empty(),
                "the main process sends on it but no renderer listener was found",
            ),
            (
                ms.is_empty() && !ls.is_empty(),
                "a renderer listens to it but no main-process sender was found",
            ),
        ];
        for (hit, why) in unpaired {
            if hit {
                unknowns.push(Unknown {
                    kind: UnknownKind::UnpairedChannel,
                    node_id: Some((*ch).to_owned()),
                    location: g.nodes.get(*ch).map(|n| n.location.clone()),
                    message: format!("IPC channel \"{chn}\": {why}"),
                });
            }
        }
    }
    // Renderer → preload through exposed APIs.
    let mut exposers: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in g.edges.iter().filter(|e| e.kind == EdgeKind::ExposesApi) {
        if let Some(api) = e.to.as_deref() {
            exposers.entry(api).or_default().insert(e.from.as_str());
        }
    }
    for e in g.edges.iter().filter(|e| e.kind == EdgeKind::UsesApi) {
        let Some(api) = e.to.as_deref() else { continue };
        // A preload reading its own API is not a renderer using it.
        let others = exposers
            .get(api)
            .into_iter()
            .flatten()
            .filter(|p| **p != e.from);
        for p in others {
            rels.add(
                RelationshipKind::RendererToPreload,
                &e.from,
                p,
                Some(api),
                || {
                    format!(
                        "{} uses window.{}, which {} exposes",
                        name(g, &e.from),
                        name(g, api),
                        name(g, p)
                    )
                },
            );
        }
    }
    // Window → preload and page.
    let preloads = targets_by_source(g, EdgeKind::Preload);
    let loads = targets_by_source(g, EdgeKind::LoadsPage);
    for w in &g.windows {
        let node = w.node.as_str();
        let pages = loads.get(node).map_or(&[][..], Vec::as_slice);
        for pre in preloads.get(node).into_iter().flatten() {
            for page in pages {
                rels.add(
                    RelationshipKind::WindowPreloadPage,
                    pre,
                    page,
                    Some(node),
                    || {
                        format!(
                            "{} runs preload {} before page {}",
                            name(g, node),
                            name(g, pre),
                            name(g, page)
                        )
                    },
                );
            }
        }
    }
    let omitted = rels.omitted;
    let rels = rels
        .set
        .into_iter()
        .map(|(kind, from, to, via, message)| Relationship {
            kind,
            from,
            to,
            via,
            message,
        })
        .collect();
    (rels, omitted, unknowns)
}

fn unknown(kind: UnknownKind, s: &Site) -> Unknown {
    Unknown {
        kind,
        node_id: s.node.clone(),
        location: Some(s.location.clone()),
        message: s.message.clone(),
    }
}

/// Unknowns from sites, parse outcomes and the listing.
pub fn unknowns(
    g: &Graph,
    listing: &Listing,
    parsed: &BTreeMap<usize, Parsed>,
    read_source_maps: bool,
) -> Vec<Unknown> {
    let mut out: Vec<Unknown> = Vec::new();
    out.extend(
        g.dynamic
            .iter()
            .map(|s| unknown(UnknownKind::DynamicRequire, s)),
    );
    out.extend(
        g.computed
            .iter()
            .map(|s| unknown(UnknownKind::ComputedName, s)),
    );
    out.extend(
        g.unresolved_imports
            .iter()
            .map(|s| unknown(UnknownKind::UnresolvedImport, s)),
    );
    for (i, f) in listing.files.iter().enumerate() {
        let node = g.file_nodes.get(&f.path).cloned();
        let at = Some(SourceLocation::file_start(&f.path));
        let mut push = |kind, message: String| {
            out.push(Unknown {
                kind,
                node_id: node.clone(),
                location: at.clone(),
                message,
            })
        };
        match parsed.get(&i) {
            Some(Parsed::NotParsed(why)) => push(
                UnknownKind::NotParsed,
                format!("{} was not parsed: {why}", f.path),
            ),
            Some(Parsed::Module(m)) => {
                if m.facts_omitted > 0 || m.parse.walk_truncated {
                    push(
                        UnknownKind::LimitReached,
                        format!(
                            "{}: {} fact(s) past the per-list cap were dropped{}",
                            f.path,
                            m.facts_omitted,
                            if m.parse.walk_truncated {
                                "; part of the syntax tree nests too deeply to be walked"
                            } else {
                                ""
                            }
                        ),
                    );
                }
                if let Some(why) = &m.parse.not_parsed {
                    push(
                        UnknownKind::NotParsed,
                        format!("{} was not parsed: {why}", f.path),
                    );
                } else if m.parse.diagnostics_total > 0 || !m.parse.parsed {
                    let first = m.parse.diagnostics.first().map(|d| {
                        format!(
                            "; first at {}:{}: {}",
                            d.pos.line,
                            d.pos.column,
                            d.message.chars().take(EXCERPT_CHARS).collect::<String>()
                        )
                    });
                    push(
                        UnknownKind::ParseError,
                        format!(
                            "{}: {} parser diagnostic(s){}",
                            f.path,
                            m.parse.diagnostics_total,
                            first.unwrap_or_default()
                        ),
                    );
                }
                let mapped = node
                    .as_ref()
                    .and_then(|n| g.nodes.get(n))
                    .is_some_and(|n| n.attributes.contains_key("source_map_sources"));
                if m.parse.minified && !mapped {
                    let why = match (&m.parse.source_map_url, read_source_maps) {
                        (None, _) => "it names no source map".to_owned(),
                        (Some(_), false) => {
                            "source maps were not read (opt-in: read_source_maps)".to_owned()
                        }
                        (Some(u), true) => format!(
                            "its source map {} is not a readable file of the application",
                            u.chars().take(EXCERPT_CHARS).collect::<String>()
                        ),
                    };
                    push(
                        UnknownKind::MinifiedWithoutSourceMap,
                        format!("{} is minified and {why}", f.path),
                    );
                }
            }
            Some(Parsed::Page(p)) => {
                if p.inline.parse.diagnostics_total > 0 || p.inline.parse.not_parsed.is_some() {
                    push(
                        UnknownKind::ParseError,
                        format!(
                            "{}: {} parser diagnostic(s) in inline scripts",
                            f.path, p.inline.parse.diagnostics_total
                        ),
                    );
                }
            }
            None => {
                let source = super::facts::Language::of_path(&f.path).is_some()
                    || f.path.to_ascii_lowercase().ends_with(".html")
                    || f.path.to_ascii_lowercase().ends_with(".htm");
                if let (true, Some(why)) = (source, &f.not_read) {
                    push(
                        UnknownKind::NotParsed,
                        format!("{} was not read: {why}", f.path),
                    );
                }
            }
        }
    }
    for r in &listing.refused {
        out.push(Unknown {
            kind: UnknownKind::NotParsed,
            node_id: None,
            location: None,
            message: format!("entry {} was refused: {}", r.path, r.reason),
        });
    }
    out
}

/// Sorts a findings list by its key and keeps [`FINDINGS_CAP`].
pub fn cap<T, K: Ord>(mut items: Vec<T>, key: impl Fn(&T) -> K) -> (Vec<T>, u64) {
    items.sort_by_key(|a| key(a));
    let omitted = items.len().saturating_sub(FINDINGS_CAP) as u64;
    items.truncate(FINDINGS_CAP);
    (items, omitted)
}
