//! Per-file facts to nodes and edges: imports, IPC, exposed APIs,
//! protocols, shell calls, URLs, menus and the remote module.

use super::windows::{load, window};
use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) fn module_facts(
    g: &mut Graph,
    index: &FileIndex,
    input: &BuildInput<'_>,
    path: &str,
    from: &str,
    f: &ModuleFacts,
    in_page: bool,
) {
    imports(g, index, input, path, from, f, in_page);
    for w in &f.windows {
        window(g, index, path, from, w);
    }
    for l in &f.loose_loads {
        load(g, index, path, from, &l.method, &l.target, loc(path, l.pos));
    }
    for ipc in &f.ipc {
        let kind = match ipc.role {
            IpcRole::Handle => EdgeKind::IpcHandle,
            IpcRole::Send => EdgeKind::IpcSend,
            IpcRole::Listen => EdgeKind::IpcListen,
        };
        let at = loc(path, ipc.pos);
        let to = named_or_computed(
            g,
            NodeKind::IpcChannel,
            &ipc.channel,
            &at,
            from,
            "IPC channel",
        );
        g.edge(kind, from, to, Some(at), Some(ipc.api.clone()));
    }
    for e in &f.exposed {
        let at = loc(path, e.pos);
        let to = named_or_computed(
            g,
            NodeKind::ExposedApi,
            &e.key,
            &at,
            from,
            "exposed API key",
        );
        if let Ok(id) = &to {
            g.add_names(id, "members", &e.members);
        }
        g.edge(
            EdgeKind::ExposesApi,
            from,
            to,
            Some(at),
            Some("contextBridge.exposeInMainWorld".into()),
        );
    }
    for p in &f.protocols {
        let at = loc(path, p.pos);
        let to = named_or_computed(
            g,
            NodeKind::Protocol,
            &p.scheme,
            &at,
            from,
            "protocol scheme",
        );
        if let Ok(id) = &to {
            g.add_names(id, "methods", std::slice::from_ref(&p.method));
        }
        g.edge(
            EdgeKind::RegistersProtocol,
            from,
            to,
            Some(at),
            Some(format!("protocol.{}", p.method)),
        );
    }
    for o in &f.open_external {
        let at = loc(path, o.pos);
        let detail = Some(format!("shell.{}", o.method));
        match o
            .target
            .literal
            .as_deref()
            .filter(|l| url_scheme(l).is_some())
        {
            Some(url) => {
                let id = g.url(url, at.clone());
                if url_scheme(url).as_deref() == Some("http") {
                    g.insecure.push(Site {
                        node: Some(from.to_owned()),
                        location: at.clone(),
                        message: format!("{path} opens the plain http: URL {url}"),
                    });
                }
                g.edge(EdgeKind::OpensExternal, from, Ok(id), Some(at), detail);
            }
            None => {
                let what = o
                    .target
                    .literal
                    .clone()
                    .unwrap_or_else(|| o.target.excerpt.clone());
                let reason = if o.target.literal.is_some() {
                    format!("not a URL: {}", short(&what))
                } else {
                    format!("computed value: {}", short(&what))
                };
                if o.target.literal.is_none() {
                    g.open_dynamic.push(Site {
                        node: Some(from.to_owned()),
                        location: at.clone(),
                        message: format!(
                            "shell.{} of a computed value: {}",
                            o.method,
                            short(&what)
                        ),
                    });
                }
                g.edge(EdgeKind::OpensExternal, from, Err(reason), Some(at), detail);
            }
        }
    }
    for u in &f.urls {
        let at = loc(path, u.pos);
        let id = g.url(&u.url, at.clone());
        g.edge(EdgeKind::ReferencesUrl, from, Ok(id), Some(at), None);
    }
    for m in &f.menus {
        let at = loc(path, m.pos);
        let name = format!("{} {}:{}", m.kind, path, m.pos.line);
        let attrs = BTreeMap::from([
            ("menu_kind".to_owned(), json!(m.kind)),
            (
                "labels".to_owned(),
                json!(m.labels.iter().take(256).collect::<Vec<_>>()),
            ),
        ]);
        let id = g.node(
            NodeKind::Menu,
            json!({"location": at}),
            &name,
            at.clone(),
            attrs,
        );
        g.edge(
            EdgeKind::BuildsMenu,
            from,
            Ok(id),
            Some(at),
            Some(m.kind.clone()),
        );
    }
    for r in &f.remote {
        let at = loc(path, r.pos);
        let id = g.named(NodeKind::Builtin, "electron", at.clone());
        g.remote.push(Site {
            node: Some(from.to_owned()),
            location: at.clone(),
            message: format!("{path} uses the remote module ({})", short(&r.api)),
        });
        g.edge(
            EdgeKind::UsesRemote,
            from,
            Ok(id),
            Some(at),
            Some(r.api.clone()),
        );
    }
}

/// A named node for a static name, or the reason (and a ComputedName site).
fn named_or_computed(
    g: &mut Graph,
    kind: NodeKind,
    hint: &StringHint,
    at: &SourceLocation,
    from: &str,
    what: &str,
) -> Result<String, String> {
    match hint.literal.as_deref() {
        Some(name) if !name.is_empty() => Ok(g.named(kind, name, at.clone())),
        _ => {
            let reason = format!("computed {what}: {}", short(&hint.excerpt));
            g.computed.push(Site {
                node: Some(from.to_owned()),
                location: at.clone(),
                message: reason.clone(),
            });
            Err(reason)
        }
    }
}

fn imports(
    g: &mut Graph,
    index: &FileIndex,
    input: &BuildInput<'_>,
    path: &str,
    from: &str,
    f: &ModuleFacts,
    in_page: bool,
) {
    for imp in &f.imports {
        let at = loc(path, imp.pos);
        let Some(spec) = imp.specifier.literal.as_deref() else {
            let reason = format!("computed specifier: {}", short(&imp.specifier.excerpt));
            g.dynamic.push(Site {
                node: Some(from.to_owned()),
                location: at.clone(),
                message: format!("{path}: {reason}"),
            });
            let kind = if imp.kind == ImportKind::Bindings {
                EdgeKind::LoadsNative
            } else {
                EdgeKind::DynamicImport
            };
            g.edge(
                kind,
                from,
                Err(reason),
                Some(at),
                Some(short(&imp.specifier.excerpt)),
            );
            continue;
        };
        let detail = Some(spec.to_owned());
        if imp.kind == ImportKind::Bindings {
            let to = index.bindings(path, spec).map(|p| file_target(g, &p));
            g.edge(EdgeKind::LoadsNative, from, to, Some(at), detail);
            continue;
        }
        let mut kind = match imp.kind {
            ImportKind::DynamicImport => EdgeKind::DynamicImport,
            _ if in_page => EdgeKind::HtmlScript,
            _ => EdgeKind::Imports,
        };
        let mut target = index.import(path, spec);
        if in_page && matches!(target, Target::Unresolved(_)) {
            // A page's scripts run in the document that imports it; in
            // Electron apps that is usually the root page.
            let from_root = index.import_in("", spec);
            if matches!(from_root, Target::File(_)) {
                target = from_root;
            }
        }
        let to = match target {
            Target::File(p) => {
                if is_native(&p) {
                    kind = EdgeKind::LoadsNative;
                }
                Ok(file_target(g, &p))
            }
            Target::Builtin(name) => Ok(g.named(NodeKind::Builtin, &name, at.clone())),
            Target::Package { name, found } => {
                Ok(package_node(g, input.package, &name, found, at.clone()))
            }
            Target::Unresolved(reason) => {
                if crate::javascript::resolve::is_relative(spec) {
                    g.unresolved_imports.push(Site {
                        node: Some(from.to_owned()),
                        location: at.clone(),
                        message: format!("{path}: {spec}: {reason}"),
                    });
                }
                Err(reason)
            }
        };
        g.edge(kind, from, to, Some(at), detail);
    }
}
