//! Lookup indexes over one analysis graph: nodes by id, edges by their
//! source and by their target. Built once per call, in list order, so
//! everything read through them is deterministic.

use std::collections::HashMap;

use crate::javascript::{Analysis, Edge, EdgeKind, Node};

pub struct Graph<'a> {
    pub analysis: &'a Analysis,
    by_id: HashMap<&'a str, usize>,
    outgoing: HashMap<&'a str, Vec<usize>>,
    incoming: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Graph<'a> {
    pub fn new(analysis: &'a Analysis) -> Graph<'a> {
        let mut by_id = HashMap::new();
        for (i, node) in analysis.nodes.iter().enumerate() {
            by_id.entry(node.node_id.as_str()).or_insert(i);
        }
        let mut outgoing: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut incoming: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, edge) in analysis.edges.iter().enumerate() {
            outgoing.entry(edge.from.as_str()).or_default().push(i);
            if let Some(to) = &edge.to {
                incoming.entry(to.as_str()).or_default().push(i);
            }
        }
        Graph {
            analysis,
            by_id,
            outgoing,
            incoming,
        }
    }

    pub fn node(&self, id: &str) -> Option<&'a Node> {
        self.by_id.get(id).map(|&i| &self.analysis.nodes[i])
    }

    /// The position of a node in the node list (its order everywhere).
    pub fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Edges leaving `id` (unresolved ones included), in edge order.
    pub fn outgoing(&self, id: &str) -> impl Iterator<Item = &'a Edge> + '_ {
        let edges = &self.analysis.edges;
        self.outgoing
            .get(id)
            .into_iter()
            .flatten()
            .map(move |&i| &edges[i])
    }

    /// Edges arriving at `id`, in edge order.
    pub fn incoming(&self, id: &str) -> impl Iterator<Item = &'a Edge> + '_ {
        let edges = &self.analysis.edges;
        self.incoming
            .get(id)
            .into_iter()
            .flatten()
            .map(move |&i| &edges[i])
    }

    /// The nodes `kind` edges from `id` lead to, in edge order.
    pub fn targets(&self, id: &str, kind: EdgeKind) -> Vec<&'a Node> {
        self.outgoing(id)
            .filter(|e| e.kind == kind)
            .filter_map(|e| e.to.as_deref().and_then(|to| self.node(to)))
            .collect()
    }

    /// The nodes whose `kind` edges arrive at `id`, in edge order.
    pub fn sources(&self, id: &str, kind: EdgeKind) -> Vec<&'a Node> {
        self.incoming(id)
            .filter(|e| e.kind == kind)
            .filter_map(|e| self.node(&e.from))
            .collect()
    }
}

/// A string attribute of a node.
pub fn attr_str<'n>(node: &'n Node, name: &str) -> Option<&'n str> {
    node.attributes.get(name).and_then(|v| v.as_str())
}

/// A list-of-strings attribute of a node (non-strings skipped).
pub fn attr_strings<'n>(node: &'n Node, name: &str) -> Vec<&'n str> {
    node.attributes
        .get(name)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}
