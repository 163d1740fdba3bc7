//! The walk state every reader feeds: occurrences, nodes, edges, findings
//! and the limit accounting. Readers describe entries; this module hashes,
//! classifies, recurses into nested containers and enforces the limits.

use crate::ground::confined::{ConfinedDir, ConfinedFile};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use super::classify::{self, NativeFacts};
use super::findings::FindingsAcc;
use super::model::*;
use super::{ar, asar_walk, fat, zip};
use crate::ground::digest::sha256_hex;

/// Where new entries go: the enclosing container occurrence.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    pub id: String,
    /// Logical paths from the root to this container (the sort key prefix).
    pub key: Vec<String>,
    /// Nesting depth of archives (the root is 0).
    pub depth: u64,
    /// Where natives inside resolve libraries: a universal binary's slices
    /// live where the universal binary lives.
    pub location: (Option<String>, String),
    /// Display path of the container, for findings.
    pub display: String,
}

/// What a reader knows about one entry.
pub(crate) struct Entry<'b> {
    pub logical_path: String,
    pub kind: EntryKind,
    pub declared_size: u64,
    pub compressed_size: Option<u64>,
    pub content: Content<'b>,
    pub executable: bool,
    pub encrypted: bool,
    pub symlink_target: Option<String>,
    pub limitations: Vec<String>,
}

impl<'b> Entry<'b> {
    pub fn new(logical_path: String, kind: EntryKind, content: Content<'b>) -> Self {
        Entry {
            logical_path,
            kind,
            declared_size: 0,
            compressed_size: None,
            content,
            executable: false,
            encrypted: false,
            symlink_target: None,
            limitations: Vec::new(),
        }
    }
}

pub(crate) enum Content<'b> {
    /// All the bytes, read; `mismatched` when the container's own integrity
    /// record (CRC, asar hash) disagrees.
    Bytes { bytes: &'b [u8], mismatched: bool },
    /// Not read; the status says why.
    Absent(HashStatus),
}

pub(crate) struct PendingPlist {
    pub occurrence_id: String,
    pub container: String,
    pub logical_path: String,
    pub executable: Option<String>,
}

/// Wall-clock budget for reading the layouts of native members. Each layout
/// is bounded on its own (list caps and its own time limit), but an archive
/// of thousands of crafted binaries could still add up; past this budget the
/// remaining binaries are listed and hashed without their libraries, and the
/// coverage is partial. (Only such pathological inputs ever reach it, and
/// only they can see an inventory that depends on timing.)
const LAYOUT_BUDGET: Duration = Duration::from_secs(30);

pub(crate) struct Walk {
    pub limits: Limits,
    /// When reading native layouts stops (see [`LAYOUT_BUDGET`]).
    layout_deadline: Instant,
    layout_budget_spent: bool,
    /// (sort key, occurrence)
    pub occurrences: Vec<(Vec<String>, Occurrence)>,
    pub nodes: BTreeMap<String, Node>,
    pub edges: BTreeMap<(EdgeKind, String, String, Option<String>), ()>,
    pub findings: FindingsAcc,
    pub natives: Vec<NativeFacts>,
    pub plists: Vec<PendingPlist>,
    pub entries_seen: u64,
    pub bytes_read: u64,
    pub limits_hit: BTreeSet<&'static str>,
    pub truncated: bool,
    pub partial: bool,
    pub limitations: Vec<String>,
    /// `<archive>.asar.unpacked` next to a root asar read from disk.
    pub asar_unpacked: Option<ConfinedDir>,
    used_paths: HashSet<(String, String)>,
}

impl Walk {
    pub fn new(limits: Limits) -> Walk {
        Walk {
            limits,
            layout_deadline: Instant::now() + LAYOUT_BUDGET,
            layout_budget_spent: false,
            occurrences: Vec::new(),
            nodes: BTreeMap::new(),
            edges: BTreeMap::new(),
            findings: FindingsAcc::default(),
            natives: Vec::new(),
            plists: Vec::new(),
            entries_seen: 0,
            bytes_read: 0,
            limits_hit: BTreeSet::new(),
            truncated: false,
            partial: false,
            limitations: Vec::new(),
            asar_unpacked: None,
            used_paths: HashSet::new(),
        }
    }

    /// True once a count or byte limit stopped the walk.
    pub fn stopped(&self) -> bool {
        self.truncated
    }

    /// Stops the walk because `limit` ran out while reading `container`.
    pub fn stop(&mut self, limit: &'static str, container: &Container) {
        self.limits_hit.insert(limit);
        if !self.truncated {
            self.truncated = true;
            self.findings.unexplored(UnexploredBranch {
                occurrence_id: Some(container.id.clone()),
                logical_path: container.display.clone(),
                reason: UnexploredReason::Limit,
                detail: format!("{limit} reached; the rest of the artifact was not walked"),
            });
        }
    }

    /// Counts one more entry met in a container (listed, refused or
    /// skipped); false (and the walk stops) past `max_entries`, so refused
    /// entries cannot make the walk unbounded either.
    pub fn see(&mut self, container: &Container) -> bool {
        if self.entries_seen >= self.limits.max_entries {
            self.stop("max_entries", container);
            return false;
        }
        self.entries_seen += 1;
        true
    }

    /// Charges `n` read bytes to `max_total_bytes`; false (and the walk
    /// stops) when they do not fit.
    pub fn charge(&mut self, n: u64, container: &Container) -> bool {
        match self.bytes_read.checked_add(n) {
            Some(total) if total <= self.limits.max_total_bytes => {
                self.bytes_read = total;
                true
            }
            _ => {
                self.stop("max_total_bytes", container);
                false
            }
        }
    }

    /// Bytes still allowed by `max_total_bytes`.
    pub fn budget(&self) -> u64 {
        self.limits.max_total_bytes.saturating_sub(self.bytes_read)
    }

    pub fn refuse(&mut self, raw: &[u8], reason: RefusalReason, detail: impl Into<String>) {
        self.partial = true;
        self.findings.refused(RefusedEntry {
            raw_path: super::paths::escape_raw(raw),
            reason,
            detail: detail.into(),
        });
    }

    pub fn unexplored(
        &mut self,
        occurrence_id: Option<String>,
        logical_path: String,
        reason: UnexploredReason,
        detail: impl Into<String>,
    ) {
        self.partial = true;
        self.findings.unexplored(UnexploredBranch {
            occurrence_id,
            logical_path,
            reason,
            detail: detail.into(),
        });
    }

    /// Lists the root occurrence. `bytes` is `None` for a directory root.
    /// It is named by its role, never by its file name: the same bytes must
    /// give the same findings wherever they live.
    pub fn add_root(&mut self, bytes: Option<&[u8]>, kind: EntryKind) -> Container {
        self.entries_seen += 1;
        let (sha, node_id, architecture) = match bytes {
            Some(b) => {
                let (sha, node_id, arch) =
                    self.add_node(b, "the root", Some((None, String::new())));
                (Some(sha), Some(node_id), arch)
            }
            None => (None, None, None),
        };
        let occurrence_id = occurrence_id(None, "", kind, sha.as_deref());
        let occ = Occurrence {
            occurrence_id: occurrence_id.clone(),
            parent_occurrence_id: None,
            node_id,
            logical_path: String::new(),
            entry_kind: kind,
            size: bytes.map_or(0, |b| b.len() as u64),
            compressed_size: None,
            hash_status: if bytes.is_some() {
                HashStatus::Verified
            } else {
                HashStatus::Unavailable
            },
            sha256: sha,
            executable: false,
            encrypted: false,
            symlink_target: None,
            architecture,
            limitations: Vec::new(),
        };
        self.occurrences.push((Vec::new(), occ));
        for facts in &mut self.natives {
            facts.occurrence_id = occurrence_id.clone();
        }
        Container {
            id: occurrence_id,
            key: Vec::new(),
            depth: 0,
            location: (None, String::new()),
            display: String::new(),
        }
    }

    /// Hashes and classifies bytes, records the node and, for a native
    /// binary, its layout facts (attached to an occurrence by the caller).
    /// Returns (sha256, node_id, architecture).
    fn add_node(
        &mut self,
        bytes: &[u8],
        name: &str,
        location: Option<(Option<String>, String)>,
    ) -> (String, String, Option<String>) {
        let sha = sha256_hex(bytes);
        let node_id = node_id(&sha);
        let format = classify::node_format(bytes);
        self.nodes.entry(node_id.clone()).or_insert(Node {
            node_id: node_id.clone(),
            sha256: sha.clone(),
            size: bytes.len() as u64,
            format,
        });
        let mut architecture = None;
        let native = matches!(format, NodeFormat::Elf | NodeFormat::Macho | NodeFormat::Pe);
        if native && Instant::now() >= self.layout_deadline {
            self.partial = true;
            if !self.layout_budget_spent {
                self.layout_budget_spent = true;
                self.limitations.push(format!(
                    "reading native layouts took over {} s; from {name} on, binaries are listed \
                     and hashed without their libraries, rpaths or architecture",
                    LAYOUT_BUDGET.as_secs()
                ));
            }
        } else if native {
            match classify::native_facts(bytes, name) {
                Ok(mut facts) => {
                    architecture = Some(facts.architecture.clone());
                    facts.location = location.unwrap_or_default();
                    self.natives.push(facts);
                }
                Err(reason) => self.findings.observe(Observation {
                    kind: ObservationKind::LayoutUnreadable,
                    occurrence_id: None,
                    message: format!("{name}: {reason}"),
                }),
            }
        }
        (sha, node_id, architecture)
    }

    /// Lists one entry of `container`; `None` when it was refused
    /// (duplicate) or the entry limit stopped the walk. Nested containers
    /// are walked before this returns.
    pub fn add(&mut self, container: &Container, entry: Entry<'_>) -> Option<String> {
        if self.truncated {
            return None;
        }
        let place = (container.id.clone(), entry.logical_path.clone());
        if self.used_paths.contains(&place) {
            self.refuse(
                entry.logical_path.as_bytes(),
                RefusalReason::Duplicate,
                format!(
                    "a second entry with this path in {}",
                    display_or_root(&container.display)
                ),
            );
            return None;
        }
        if self.occurrences.len() as u64 >= self.limits.max_entries {
            self.stop("max_entries", container);
            return None;
        }
        self.used_paths.insert(place);
        let location = if entry.kind == EntryKind::Slice {
            container.location.clone()
        } else {
            (Some(container.id.clone()), entry.logical_path.clone())
        };
        let natives_before = self.natives.len();
        let observations_before = self.findings.findings.observations.len();
        let (sha, node, status, size, architecture, nested) = match entry.content {
            Content::Bytes { bytes, mismatched } => {
                let name = super::paths::base_name(&entry.logical_path).to_owned();
                let (sha, node, arch) = self.add_node(bytes, &name, Some(location.clone()));
                let status = if mismatched {
                    HashStatus::Mismatched
                } else {
                    HashStatus::Verified
                };
                (
                    Some(sha),
                    Some(node),
                    status,
                    bytes.len() as u64,
                    arch,
                    Some(bytes),
                )
            }
            Content::Absent(status) => (None, None, status, entry.declared_size, None, None),
        };
        if matches!(entry.kind, EntryKind::File | EntryKind::Slice)
            && status != HashStatus::Verified
        {
            self.partial = true;
        }
        let id = occurrence_id(
            Some(&container.id),
            &entry.logical_path,
            entry.kind,
            sha.as_deref(),
        );
        for facts in &mut self.natives[natives_before..] {
            facts.occurrence_id = id.clone();
        }
        // add_node's observations (an unreadable layout) belong to this entry.
        for o in self.findings.findings.observations[observations_before..].iter_mut() {
            o.occurrence_id.get_or_insert_with(|| id.clone());
        }
        let mut key = container.key.clone();
        key.push(entry.logical_path.clone());
        let display = if container.display.is_empty() {
            entry.logical_path.clone()
        } else {
            format!("{}!/{}", container.display, entry.logical_path)
        };
        let occ = Occurrence {
            occurrence_id: id.clone(),
            parent_occurrence_id: Some(container.id.clone()),
            node_id: node,
            logical_path: entry.logical_path.clone(),
            entry_kind: entry.kind,
            size,
            compressed_size: entry.compressed_size,
            sha256: sha,
            hash_status: status,
            executable: entry.executable,
            encrypted: entry.encrypted,
            symlink_target: entry.symlink_target,
            architecture,
            limitations: entry.limitations,
        };
        self.occurrences.push((key.clone(), occ));
        self.edges.insert(
            (EdgeKind::Contains, container.id.clone(), id.clone(), None),
            (),
        );
        if let Some(bytes) = nested {
            if classify::is_info_plist_path(&entry.logical_path) {
                self.info_plist(&id, container, &entry.logical_path, bytes);
            }
            let child = Container {
                id: id.clone(),
                key,
                depth: container.depth + 1,
                location,
                display,
            };
            self.explore_nested(&child, bytes);
        }
        Some(id)
    }

    /// Lists an entry whose bytes are in memory: over `max_entry_bytes` it
    /// is listed unhashed, otherwise the bytes are charged and hashed.
    /// Returns false when the byte budget stopped the walk.
    pub fn add_in_memory<'b>(
        &mut self,
        c: &Container,
        mut e: Entry<'b>,
        bytes: &'b [u8],
        mismatched: bool,
    ) -> (Option<String>, bool) {
        if bytes.len() as u64 > self.limits.max_entry_bytes {
            self.limits_hit.insert("max_entry_bytes");
            e.content = Content::Absent(HashStatus::NotHashedLimit);
            e.limitations
                .push("over max_entry_bytes; not hashed".into());
            return (self.add(c, e), true);
        }
        if !self.charge(bytes.len() as u64, c) {
            return (None, false);
        }
        e.content = Content::Bytes { bytes, mismatched };
        (self.add(c, e), true)
    }

    /// Lists a regular file read from disk (`size` from its metadata):
    /// over `max_entry_bytes` it is listed unhashed without being read.
    /// Returns (id, false when the byte budget stopped the walk).
    pub fn add_from_disk(
        &mut self,
        c: &Container,
        mut e: Entry<'_>,
        file: &ConfinedFile,
        size: u64,
    ) -> std::io::Result<(Option<String>, bool)> {
        if size > self.limits.max_entry_bytes {
            self.limits_hit.insert("max_entry_bytes");
            e.content = Content::Absent(HashStatus::NotHashedLimit);
            e.limitations
                .push("over max_entry_bytes; not hashed".into());
            return Ok((self.add(c, e), true));
        }
        let bytes = file.prefix(self.limits.max_entry_bytes + 1)?;
        // A file that grew past the limit while read is listed unhashed.
        Ok(self.add_in_memory(c, e, &bytes, false))
    }

    /// Records Info.plist facts; the `loads` edge is resolved at the end.
    pub fn info_plist(&mut self, id: &str, container: &Container, path: &str, bytes: &[u8]) {
        match classify::info_plist_facts(bytes, id) {
            Ok(facts) => {
                self.plists.push(PendingPlist {
                    occurrence_id: id.to_owned(),
                    container: container.id.clone(),
                    logical_path: path.to_owned(),
                    executable: facts.executable.clone(),
                });
                self.findings.info_plist(facts);
            }
            Err(reason) => self.findings.observe(Observation {
                kind: ObservationKind::Note,
                occurrence_id: Some(id.to_owned()),
                message: format!("{path} is not a readable property list: {reason}"),
            }),
        }
    }

    /// Walks a nested container, if the bytes are one, within `max_depth`.
    fn explore_nested(&mut self, child: &Container, bytes: &[u8]) {
        let Some(format) = classify::container_format(bytes) else {
            return;
        };
        if child.depth > self.limits.max_depth {
            self.limits_hit.insert("max_depth");
            self.unexplored(
                Some(child.id.clone()),
                child.display.clone(),
                UnexploredReason::NestedDepth,
                format!(
                    "a nested {} deeper than max_depth {}",
                    format.as_str(),
                    self.limits.max_depth
                ),
            );
            return;
        }
        if let Err(error) = self.explore(child, format, bytes) {
            self.unexplored(
                Some(child.id.clone()),
                child.display.clone(),
                UnexploredReason::Malformed,
                error.to_string(),
            );
        }
    }

    /// Walks the entries of a container held in memory.
    pub fn explore(
        &mut self,
        container: &Container,
        format: ArtifactFormat,
        bytes: &[u8],
    ) -> Result<(), ArtifactError> {
        match format {
            ArtifactFormat::Zip => zip::walk(self, container, bytes),
            ArtifactFormat::Ar => ar::walk(self, container, bytes),
            ArtifactFormat::Asar => asar_walk::walk(self, container, bytes),
            ArtifactFormat::UniversalMacho => fat::walk(self, container, bytes),
            ArtifactFormat::File | ArtifactFormat::AppBundle => Ok(()),
        }
    }
}

pub(crate) fn display_or_root(display: &str) -> &str {
    if display.is_empty() {
        "the root"
    } else {
        display
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::native::fixtures::tiny_elf;

    #[test]
    fn native_layouts_stop_at_the_time_budget_and_say_so() {
        let elf = tiny_elf();
        let mut walk = Walk::new(Limits::default());
        let (_, _, architecture) = walk.add_node(&elf, "first.so", None);
        assert!(
            architecture.is_some(),
            "within the budget the layout is read"
        );
        assert!(!walk.partial);

        walk.layout_deadline = Instant::now() - Duration::from_secs(1);
        let (_, _, architecture) = walk.add_node(&elf, "late.so", None);
        assert_eq!(architecture, None, "past the budget no layout is read");
        assert!(walk.partial, "the coverage can no longer be complete");
        walk.add_node(&elf, "later.so", None);
        assert_eq!(
            walk.limitations.len(),
            1,
            "said once: {:?}",
            walk.limitations
        );
        assert!(walk.limitations[0].contains("late.so"));
        assert_eq!(walk.natives.len(), 1);
    }
}
