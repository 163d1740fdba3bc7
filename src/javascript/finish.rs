//! Turns the built graph into an [`Analysis`]: dedup and sort in the
//! documented orders, apply the node and edge limits, derive findings,
//! count coverage and statistics, compute the ids; and the reverse check
//! ([`Analysis::validate`]) for Evidence read back from a ledger.

use std::collections::{BTreeMap, BTreeSet};

use super::findings;
use super::graph::{BuildInput, Graph, Parsed, build};
use super::model::*;
use super::source::Listing;

/// Builds the whole analysis from a listing and the parsed facts.
pub fn analysis(
    listing: &Listing,
    parsed: &BTreeMap<usize, Parsed>,
    package: Option<&PackageInfo>,
    options: &Options,
) -> Analysis {
    let limits = options.limits;
    let input = BuildInput {
        listing,
        parsed,
        package,
        read_source_maps: options.read_source_maps,
    };
    let mut g = build(&input);
    let by_path: BTreeMap<String, &Parsed> = parsed
        .iter()
        .filter_map(|(i, p)| Some((listing.files.get(*i)?.path.clone(), p)))
        .collect();
    findings::api_uses(&mut g, &by_path);
    findings::assign_processes(&mut g, &by_path);
    let mut limitations = listing.limitations.clone();
    let mut stopped_by = listing.stopped_by.map(str::to_owned);
    let mut limit_unknowns = Vec::new();
    if let Some(limit) = &stopped_by {
        limit_unknowns.push(limit_unknown(format!(
            "the {limit} limit stopped the listing; the graph covers only the files listed"
        )));
    }
    apply_graph_limits(
        &mut g,
        &limits,
        &mut stopped_by,
        &mut limitations,
        &mut limit_unknowns,
    );

    let mut observations = findings::observations(&g, listing);
    let (relationships, counted_only, mut unknowns) = findings::relationships(&g);
    unknowns.extend(findings::unknowns(
        &g,
        listing,
        parsed,
        options.read_source_maps,
    ));
    unknowns.extend(limit_unknowns);
    let known = |id: &Option<String>| id.as_ref().is_none_or(|i| g.nodes.contains_key(i));
    observations.retain(|o| known(&o.node_id));
    unknowns.retain(|u| known(&u.node_id));

    let coverage = coverage(listing, parsed, &g, stopped_by);
    let mut nodes: Vec<Node> = sorted_nodes(&g);
    nodes.iter_mut().for_each(Node::drop_null_attributes);
    let edges = std::mem::take(&mut g.edges);
    let statistics = statistics(&nodes, &edges, listing);
    let mut entry_points = std::mem::take(&mut g.entry_points);
    entry_points.retain(|e| g.nodes.contains_key(&e.node_id));
    entry_points.sort_by(|a, b| (a.kind, &a.path, &a.node_id).cmp(&(b.kind, &b.path, &b.node_id)));
    entry_points.dedup();

    let (observations, o_omitted) = findings::cap(observations, |o| {
        (o.kind, o.location.clone(), o.message.clone())
    });
    let (relationships, r_omitted) = findings::cap(relationships, |r| {
        (r.kind, r.message.clone(), r.from.clone(), r.to.clone())
    });
    let (unknowns, u_omitted) = findings::cap(unknowns, |u| {
        (u.kind, u.location.clone(), u.message.clone())
    });
    let graph = graph_sha256(&nodes, &edges);
    Analysis {
        schema_version: SCHEMA_VERSION,
        analysis_id: analysis_id(listing.format, &listing.root_sha256, &graph),
        format: listing.format,
        root_sha256: listing.root_sha256.clone(),
        graph_sha256: graph,
        package: package.cloned(),
        entry_points,
        nodes,
        edges,
        findings: Findings {
            observations,
            relationships,
            unknowns,
            omitted: FindingsOmitted {
                observations: o_omitted,
                relationships: r_omitted + counted_only,
                unknowns: u_omitted,
            },
        },
        coverage,
        statistics,
        limits,
        limitations,
    }
}

fn limit_unknown(message: String) -> Unknown {
    Unknown {
        kind: UnknownKind::LimitReached,
        node_id: None,
        location: None,
        message,
    }
}

fn sorted_nodes(g: &Graph) -> Vec<Node> {
    let mut nodes: Vec<Node> = g.nodes.values().cloned().collect();
    nodes.sort_by(Node::list_order);
    nodes
}

/// Dedups and sorts edges, then keeps at most `max_nodes` nodes (in list
/// order) and `max_edges` edges, dropping edges to dropped nodes.
fn apply_graph_limits(
    g: &mut Graph,
    limits: &Limits,
    stopped_by: &mut Option<String>,
    limitations: &mut Vec<String>,
    unknowns: &mut Vec<Unknown>,
) {
    let mut seen = BTreeSet::new();
    g.edges.retain(|e| seen.insert(e.edge_id.clone()));
    g.edges.sort_by(Edge::list_order);
    let mut hit = |name: &str, total: usize, max: u64, stopped_by: &mut Option<String>| {
        let text = format!("{name} ({max}) reached: {total} found, the rest were dropped");
        stopped_by.get_or_insert_with(|| name.to_owned());
        limitations.push(text.clone());
        unknowns.push(limit_unknown(text));
    };
    let max_nodes = usize::try_from(limits.max_nodes).unwrap_or(usize::MAX);
    if g.nodes.len() > max_nodes {
        let keep: BTreeSet<String> = sorted_nodes(g)
            .into_iter()
            .take(max_nodes)
            .map(|n| n.node_id)
            .collect();
        hit("max_nodes", g.nodes.len(), limits.max_nodes, stopped_by);
        g.nodes.retain(|id, _| keep.contains(id));
        g.edges
            .retain(|e| keep.contains(&e.from) && e.to.as_ref().is_none_or(|t| keep.contains(t)));
    }
    let max_edges = usize::try_from(limits.max_edges).unwrap_or(usize::MAX);
    if g.edges.len() > max_edges {
        hit("max_edges", g.edges.len(), limits.max_edges, stopped_by);
        g.edges.truncate(max_edges);
    }
}

fn is_source(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    super::facts::Language::of_path(path).is_some()
        || lower.ends_with(".html")
        || lower.ends_with(".htm")
}

fn coverage(
    listing: &Listing,
    parsed: &BTreeMap<usize, Parsed>,
    g: &Graph,
    stopped_by: Option<String>,
) -> Coverage {
    let mut c = Coverage {
        status: CoverageStatus::Complete,
        files_seen: listing.files.len() as u64,
        files_parsed: 0,
        files_not_parsed: 0,
        files_with_errors: 0,
        bytes_read: listing.bytes_read,
        entries_refused: listing.refused.len() as u64,
        stopped_by,
    };
    // Facts dropped past a cap, or a tree not walked in full.
    let mut skipped = false;
    for (i, f) in listing.files.iter().enumerate() {
        if !is_source(&f.path) {
            continue;
        }
        // A file refused reading (a limit, an unsafe place) is a refusal,
        // not a parse outcome.
        if f.not_read.is_some() {
            c.entries_refused += 1;
            continue;
        }
        let (ok, errors) = match parsed.get(&i) {
            Some(Parsed::Module(m)) => {
                skipped |= m.facts_omitted > 0 || m.parse.walk_truncated;
                (
                    m.parse.parsed && m.parse.not_parsed.is_none(),
                    m.parse.diagnostics_total > 0,
                )
            }
            Some(Parsed::Page(p)) => (true, p.inline.parse.diagnostics_total > 0),
            _ => (false, false),
        };
        if ok {
            c.files_parsed += 1;
        } else {
            c.files_not_parsed += 1;
        }
        c.files_with_errors += u64::from(errors);
    }
    let incomplete = skipped
        || c.files_not_parsed > 0
        || c.files_with_errors > 0
        || c.entries_refused > 0
        || !g.unresolved_imports.is_empty();
    c.status = if c.stopped_by.is_some() {
        CoverageStatus::Truncated
    } else if incomplete {
        CoverageStatus::Partial
    } else {
        CoverageStatus::Complete
    };
    c
}

fn statistics(nodes: &[Node], edges: &[Edge], listing: &Listing) -> Statistics {
    let mut s = Statistics::default();
    for n in nodes {
        *s.nodes_by_kind
            .entry(n.kind.as_str().to_owned())
            .or_default() += 1;
    }
    for e in edges {
        *s.edges_by_kind
            .entry(e.kind.as_str().to_owned())
            .or_default() += 1;
        s.unresolved_edges += u64::from(e.to.is_none());
    }
    s.source_bytes = listing
        .files
        .iter()
        .filter(|f| is_source(&f.path) && f.bytes.is_some())
        .map(|f| f.size)
        .sum();
    s
}

fn invalid(detail: impl Into<String>) -> JsError {
    JsError::Invalid {
        detail: detail.into(),
    }
}

impl Analysis {
    /// Checks an analysis read back from a ledger: edge ids, graph and
    /// analysis ids recomputed; every edge endpoint, entry point and
    /// finding node exists; counts within the recorded limits.
    pub fn validate(&self) -> Result<(), JsError> {
        self.limits.validate()?;
        if self.schema_version != SCHEMA_VERSION {
            return Err(invalid(format!(
                "schema_version {} is not {SCHEMA_VERSION}",
                self.schema_version
            )));
        }
        if self.nodes.len() as u64 > self.limits.max_nodes
            || self.edges.len() as u64 > self.limits.max_edges
        {
            return Err(invalid(
                "more nodes or edges than the recorded limits allow",
            ));
        }
        let ids: BTreeSet<&str> = self.nodes.iter().map(|n| n.node_id.as_str()).collect();
        if ids.len() != self.nodes.len()
            || self.nodes.iter().any(|n| !n.node_id.starts_with("jsn_"))
        {
            return Err(invalid("node ids are duplicated or malformed"));
        }
        for e in &self.edges {
            let want = edge_id(
                e.kind,
                &e.from,
                e.to.as_deref(),
                e.location.as_ref(),
                e.detail.as_deref(),
            );
            if want != e.edge_id {
                return Err(invalid(format!(
                    "edge {} does not match its content",
                    e.edge_id
                )));
            }
            let dangling =
                !ids.contains(e.from.as_str()) || e.to.as_deref().is_some_and(|t| !ids.contains(t));
            if dangling {
                return Err(invalid(format!(
                    "edge {} names a node that is not in the graph",
                    e.edge_id
                )));
            }
        }
        if graph_sha256(&self.nodes, &self.edges) != self.graph_sha256 {
            return Err(invalid("graph_sha256 does not match the nodes and edges"));
        }
        if analysis_id(self.format, &self.root_sha256, &self.graph_sha256) != self.analysis_id {
            return Err(invalid("analysis_id does not match"));
        }
        let f = &self.findings;
        let finding_nodes = f
            .observations
            .iter()
            .filter_map(|o| o.node_id.as_deref())
            .chain(f.unknowns.iter().filter_map(|u| u.node_id.as_deref()))
            .chain(
                f.relationships
                    .iter()
                    .flat_map(|r| [Some(r.from.as_str()), Some(r.to.as_str()), r.via.as_deref()])
                    .flatten(),
            )
            .chain(self.entry_points.iter().map(|e| e.node_id.as_str()));
        for id in finding_nodes {
            if !ids.contains(id) {
                return Err(invalid(format!(
                    "a finding or entry point names {id}, which is not in the graph"
                )));
            }
        }
        let over = [
            f.observations.len(),
            f.relationships.len(),
            f.unknowns.len(),
        ]
        .iter()
        .any(|&n| n > FINDINGS_CAP);
        if over {
            return Err(invalid(format!(
                "a findings list holds more than {FINDINGS_CAP} items"
            )));
        }
        Ok(())
    }
}
