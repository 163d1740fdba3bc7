//! Turns a finished walk into an `Inspection`: derived relationships,
//! `links-to` and `loads` edges, code-signature facts, stable ordering,
//! ids, digests and coverage.

use std::collections::HashMap;

use super::links::{Index, Resolution, resolve};
use super::model::*;
use super::paths::{base_name, join_inside, parent_dir};
use super::walk::Walk;

pub(crate) fn finish(mut w: Walk, root_format: ArtifactFormat) -> Inspection {
    let occurrences = std::mem::take(&mut w.occurrences);
    let index = Index::new(&occurrences);
    symlinks(&mut w, &index);
    let exe_dirs = plists(&mut w, &index);
    natives(&mut w, &index, &exe_dirs);
    if root_format == ArtifactFormat::AppBundle {
        bundle_signature(&mut w, &index);
    }
    if index.exhausted() {
        w.partial = true;
        w.limitations.push(
            "resolving library references and symlinks exceeded its lookup budget; the \
             references left unresolved are not reported as missing or external"
                .into(),
        );
    }
    assemble(w, occurrences, root_format)
}

fn symlinks(w: &mut Walk, index: &Index<'_>) {
    for (_, o) in index.occurrences {
        let (Some(parent), Some(target), EntryKind::Symlink) = (
            o.parent_occurrence_id.as_deref(),
            o.symlink_target.as_deref(),
            o.entry_kind,
        ) else {
            continue;
        };
        let Some(path) = join_inside(parent_dir(&o.logical_path), target) else {
            continue;
        };
        let found = index.resolve(parent, &path);
        if index.exhausted() {
            return;
        }
        match found {
            Some(k) => w.findings.relationship(DerivedRelationship {
                kind: RelationshipKind::SymlinkTarget,
                from: o.occurrence_id.clone(),
                to: index.get(k).occurrence_id.clone(),
                detail: target.to_owned(),
            }),
            None => w.findings.observe(Observation {
                kind: ObservationKind::Note,
                occurrence_id: Some(o.occurrence_id.clone()),
                message: format!(
                    "{}: the symlink's target is not in the artifact",
                    o.logical_path
                ),
            }),
        }
    }
}

/// `loads` edges from Info.plist to CFBundleExecutable; returns the
/// executable directory of each container that has one.
fn plists(w: &mut Walk, index: &Index<'_>) -> HashMap<String, String> {
    let mut exe_dirs = HashMap::new();
    for p in std::mem::take(&mut w.plists) {
        let Some(exe) = p.executable else { continue };
        let dir = parent_dir(&p.logical_path);
        let exe_path = if base_name(dir) == "Contents" {
            join_inside(dir, &format!("MacOS/{exe}"))
        } else {
            join_inside(dir, &exe)
        };
        if let Some(path) = &exe_path {
            exe_dirs
                .entry(p.container.clone())
                .or_insert_with(|| parent_dir(path).to_owned());
        }
        match exe_path.and_then(|path| index.resolve(&p.container, &path)) {
            Some(k) => {
                let to = index.get(k).occurrence_id.clone();
                w.edges.insert(
                    (
                        EdgeKind::Loads,
                        p.occurrence_id.clone(),
                        to.clone(),
                        Some(exe.clone()),
                    ),
                    (),
                );
                w.findings.relationship(DerivedRelationship {
                    kind: RelationshipKind::BundleExecutable,
                    from: p.occurrence_id,
                    to,
                    detail: exe,
                });
            }
            None => w.findings.observe(Observation {
                kind: ObservationKind::Note,
                occurrence_id: Some(p.occurrence_id),
                message: format!("CFBundleExecutable {exe:?} is not present in the bundle"),
            }),
        }
    }
    exe_dirs
}

fn natives(w: &mut Walk, index: &Index<'_>, exe_dirs: &HashMap<String, String>) {
    for n in std::mem::take(&mut w.natives) {
        if n.occurrence_id.is_empty() {
            continue;
        }
        if n.macho {
            let signed = n.code_signature == Some(true);
            w.findings.signature(CodeSignature {
                occurrence_id: n.occurrence_id.clone(),
                signed,
                facts: vec![if signed {
                    "LC_CODE_SIGNATURE present".into()
                } else {
                    "no LC_CODE_SIGNATURE load command".into()
                }],
            });
        }
        let exe_dir = n
            .location
            .0
            .as_ref()
            .and_then(|c| exe_dirs.get(c))
            .map(String::as_str);
        for lib in &n.needed {
            let resolution = resolve(index, &n, lib, exe_dir);
            if index.exhausted() {
                // A spent budget answers "not found": claim nothing.
                return;
            }
            match resolution {
                Resolution::Found(k) => {
                    let to = index.get(k).occurrence_id.clone();
                    if to != n.occurrence_id {
                        w.edges.insert(
                            (
                                EdgeKind::LinksTo,
                                n.occurrence_id.clone(),
                                to.clone(),
                                Some(lib.clone()),
                            ),
                            (),
                        );
                        w.findings.relationship(DerivedRelationship {
                            kind: RelationshipKind::LibraryResolution,
                            from: n.occurrence_id.clone(),
                            to,
                            detail: lib.clone(),
                        });
                    }
                }
                Resolution::Missing(reason) => w.findings.missing(MissingLibrary {
                    occurrence_id: n.occurrence_id.clone(),
                    library: lib.clone(),
                    reason,
                }),
                Resolution::External => w.findings.external(ExternalLibrary {
                    occurrence_id: n.occurrence_id.clone(),
                    library: lib.clone(),
                }),
            }
        }
    }
}

fn bundle_signature(w: &mut Walk, index: &Index<'_>) {
    let Some((_, root)) = index.occurrences.first() else {
        return;
    };
    let present = index
        .resolve(&root.occurrence_id, "Contents/_CodeSignature/CodeResources")
        .is_some();
    w.findings.signature(CodeSignature {
        occurrence_id: root.occurrence_id.clone(),
        signed: present,
        facts: vec![if present {
            "Contents/_CodeSignature/CodeResources present".into()
        } else {
            "no Contents/_CodeSignature/CodeResources".into()
        }],
    });
}

fn assemble(
    w: Walk,
    mut occurrences: Vec<(Vec<String>, Occurrence)>,
    root_format: ArtifactFormat,
) -> Inspection {
    occurrences.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.occurrence_id.cmp(&b.1.occurrence_id))
    });
    let occurrences: Vec<Occurrence> = occurrences.into_iter().map(|(_, o)| o).collect();
    let nodes: Vec<Node> = w.nodes.into_values().collect();
    let edges: Vec<Edge> = w
        .edges
        .into_keys()
        .map(|(kind, from, to, detail)| Edge::new(kind, from, to, detail))
        .collect();
    let root = &occurrences[0];
    let root_sha256 = match &root.sha256 {
        Some(sha) => sha.clone(),
        None => directory_listing_sha256(
            occurrences
                .iter()
                .filter(|o| o.parent_occurrence_id.as_deref() == Some(&root.occurrence_id)),
        ),
    };
    let graph = graph_sha256(&nodes, &occurrences, &edges);
    let manifest = Manifest {
        manifest_id: manifest_id(&root_sha256, root_format, &graph),
        root_sha256,
        root_format,
        graph_sha256: graph,
        node_count: nodes.len() as u64,
        occurrence_count: occurrences.len() as u64,
        edge_count: edges.len() as u64,
    };
    let status = if w.truncated {
        CoverageStatus::Truncated
    } else if w.partial || !w.limits_hit.is_empty() {
        CoverageStatus::Partial
    } else {
        CoverageStatus::Complete
    };
    let coverage = Coverage {
        status,
        entries_seen: w.entries_seen,
        entries_listed: occurrences.len() as u64,
        bytes_read: w.bytes_read,
        limits_hit: w.limits_hit.iter().map(|s| (*s).to_owned()).collect(),
    };
    let mut limitations = w.limitations;
    limitations
        .push("Static inventory only: nothing was extracted to disk or executed.".to_owned());
    Inspection {
        schema_version: SCHEMA_VERSION,
        manifest,
        nodes,
        occurrences,
        edges,
        findings: w.findings.findings,
        coverage,
        limits: w.limits,
        limitations,
    }
}
