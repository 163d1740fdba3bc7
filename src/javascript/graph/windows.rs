//! Windows (their settings under Electron's defaults, preloads and
//! loads) and the scripts, pages and webviews an HTML page references.

use super::*;

/// Effective security settings of a window under Electron's defaults.
pub fn effective(w: &WindowFact, major: Option<u64>) -> BTreeMap<&'static str, Value> {
    let explicit = |name: &str| match w.web_preferences.get(name) {
        Some(PrefValue::Bool(b)) => Some(json!(b)),
        Some(_) => Some(json!("unknown")),
        None if !w.options_read => Some(json!("unknown")),
        None => None,
    };
    let default = |since: u64, before: bool| match major {
        Some(m) => json!(if m >= since { !before } else { before }),
        None => json!("unknown"),
    };
    let node = explicit("nodeIntegration").unwrap_or_else(|| default(5, true));
    let isolation = explicit("contextIsolation").unwrap_or_else(|| default(12, false));
    let sandbox = explicit("sandbox").unwrap_or_else(|| {
        // Since 20 renderers are sandboxed unless nodeIntegration is on.
        match (default(20, false), &node) {
            (Value::Bool(true), Value::Bool(true)) => json!(false),
            (Value::Bool(true), Value::String(_)) => json!("unknown"),
            (d, _) => d,
        }
    });
    BTreeMap::from([
        ("node_integration", node),
        ("context_isolation", isolation),
        ("sandbox", sandbox),
    ])
}

fn pref_json(v: &PrefValue) -> Value {
    match v {
        PrefValue::Bool(b) => json!(b),
        PrefValue::Text(h) => match &h.literal {
            Some(l) => json!(l),
            None => json!({"computed": h.excerpt}),
        },
        PrefValue::Computed(e) => json!({"computed": e}),
    }
}

pub(super) fn window(g: &mut Graph, index: &FileIndex, path: &str, from: &str, w: &WindowFact) {
    let at = loc(path, w.pos);
    let effective = effective(w, g.electron_major);
    let prefs: serde_json::Map<String, Value> = w
        .web_preferences
        .iter()
        .map(|(k, v)| (k.clone(), pref_json(v)))
        .collect();
    let attrs = BTreeMap::from([
        ("constructor".to_owned(), json!(w.constructor)),
        ("binding".to_owned(), json!(w.binding)),
        ("options_read".to_owned(), json!(w.options_read)),
        ("web_preferences".to_owned(), Value::Object(prefs)),
        ("effective".to_owned(), json!(effective)),
        ("electron_major".to_owned(), json!(g.electron_major)),
    ]);
    let name = format!("{} {}:{}:{}", w.constructor, path, at.line, at.column);
    let id = g.node(
        NodeKind::Window,
        json!({"location": at}),
        &name,
        at.clone(),
        attrs,
    );
    g.edge(
        EdgeKind::CreatesWindow,
        from,
        Ok(id.clone()),
        Some(at.clone()),
        Some(w.constructor.clone()),
    );
    match w.web_preferences.get("preload") {
        Some(PrefValue::Text(h)) => {
            let to = index.hint(path, h).map(|p| file_target(g, &p));
            if let Ok(node) = &to {
                let p = g.nodes[node].name.clone();
                g.entry_points.push(EntryPoint {
                    kind: EntryKind::Preload,
                    node_id: node.clone(),
                    path: p,
                });
            }
            g.edge(
                EdgeKind::Preload,
                &id,
                to,
                Some(at.clone()),
                Some(short(&h.excerpt)),
            );
        }
        Some(PrefValue::Computed(e)) => {
            g.edge(
                EdgeKind::Preload,
                &id,
                Err(format!("computed preload path: {}", short(e))),
                Some(at.clone()),
                Some(short(e)),
            );
        }
        _ => {}
    }
    if matches!(
        w.web_preferences.get("webviewTag"),
        Some(PrefValue::Bool(true))
    ) {
        let wv = g.node(
            NodeKind::Webview,
            json!({"location": at}),
            &format!("webviewTag {}:{}", path, at.line),
            at.clone(),
            BTreeMap::from([("src".to_owned(), Value::Null)]),
        );
        g.edge(
            EdgeKind::EmbedsWebview,
            &id,
            Ok(wv),
            Some(at.clone()),
            Some("webviewTag".into()),
        );
    }
    for l in &w.loads {
        load(g, index, path, &id, &l.method, &l.target, loc(path, l.pos));
    }
    g.windows.push(WindowInfo {
        node: id,
        location: at,
        fact: w.clone(),
        effective,
    });
}

#[allow(clippy::too_many_arguments)]
pub(super) fn load(
    g: &mut Graph,
    index: &FileIndex,
    path: &str,
    from: &str,
    method: &str,
    target: &StringHint,
    at: SourceLocation,
) {
    let detail = Some(method.to_owned());
    let scheme = target.literal.as_deref().and_then(url_scheme);
    if let (Some(url), Some(scheme)) = (target.literal.as_deref(), scheme.as_deref())
        && scheme != "file"
    {
        let id = g.url(url, at.clone());
        if scheme == "http" {
            g.insecure.push(Site {
                node: Some(from.to_owned()),
                location: at.clone(),
                message: format!("{path} loads the plain http: URL {url}"),
            });
        }
        g.edge(EdgeKind::LoadsPage, from, Ok(id), Some(at), detail);
        return;
    }
    let to = index.hint(path, target).map(|p| file_target(g, &p));
    if let Ok(node) = &to
        && g.nodes[node].kind == NodeKind::HtmlPage
    {
        let p = g.nodes[node].name.clone();
        g.entry_points.push(EntryPoint {
            kind: EntryKind::RendererPage,
            node_id: node.clone(),
            path: p,
        });
    }
    g.edge(EdgeKind::LoadsPage, from, to, Some(at), detail);
}

pub(super) fn page_refs(
    g: &mut Graph,
    index: &FileIndex,
    path: &str,
    from: &str,
    page: &PageFacts,
) {
    for r in &page.refs {
        let at = loc(path, r.pos);
        if r.kind == RefKind::Webview {
            let wv = g.node(
                NodeKind::Webview,
                json!({"location": at}),
                &format!("<webview> {}:{}", path, at.line),
                at.clone(),
                BTreeMap::from([("src".to_owned(), json!(r.target))]),
            );
            g.webviews.push(Site {
                node: Some(wv.clone()),
                location: at.clone(),
                message: format!("{path} embeds a <webview>"),
            });
            g.edge(
                EdgeKind::EmbedsWebview,
                from,
                Ok(wv),
                Some(at),
                r.target.clone(),
            );
            continue;
        }
        let kind = if r.kind == RefKind::Script {
            EdgeKind::HtmlScript
        } else {
            EdgeKind::HtmlImport
        };
        let Some(target) = r.target.as_deref() else {
            continue;
        };
        let scheme = url_scheme(target);
        let to = if scheme.as_deref().is_some_and(|s| s != "file") {
            if scheme.as_deref() == Some("http") {
                g.insecure.push(Site {
                    node: Some(from.to_owned()),
                    location: at.clone(),
                    message: format!("{path} loads the plain http: URL {target}"),
                });
            }
            Ok(g.url(target, at.clone()))
        } else {
            let cut = target.split(['?', '#']).next().unwrap_or_default();
            let cut = cut.strip_prefix("file://").unwrap_or(cut);
            match join_inside(parent_dir(path), cut) {
                Some(p) if index.contains(&p) => Ok(file_target(g, &p)),
                Some(p) => Err(format!("no file of the application at {p}")),
                None => Err("the path leaves the application root".to_owned()),
            }
        };
        g.edge(kind, from, to, Some(at), Some(target.to_owned()));
    }
}
