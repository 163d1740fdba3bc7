//! The artifact inventory data model: what `inspect` returns and what the
//! MCP layer pages, records as Evidence and compares.
//!
//! Everything here is content-addressed: ids are SHA-256 digests of RFC 8785
//! canonical JSON (`session::canonical`), so the same bytes give the same ids
//! wherever the artifact lives. No absolute path appears anywhere.
//!
//! List orders (stable, relied on by paging and by `graph_sha256`):
//! - `nodes`: by `node_id`;
//! - `occurrences`: by the chain of logical paths from the root (the root
//!   first, then each container's entries depth-first in byte order of
//!   their paths), ties by `occurrence_id`;
//! - `edges`: by (`kind`, `from`, `to`, `detail`);
//! - every findings list: in discovery order (which follows the occurrence
//!   walk order), capped at [`FINDINGS_CAP`] with the omitted count kept in
//!   [`Findings::omitted`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::ground::canonical::to_canonical;
use crate::ground::digest::sha256_hex;

/// Current `Inspection::schema_version`.
pub const SCHEMA_VERSION: u32 = 1;
/// How many items each findings list keeps; the rest are counted.
pub const FINDINGS_CAP: usize = 100;

/// What kind of target `inspect` walks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactFormat {
    /// A plain file (e.g. a thin ELF): one occurrence, no children.
    File,
    /// A macOS `*.app` directory.
    AppBundle,
    /// The zip family (zip, ipa, apk, jar, whl, ...).
    Zip,
    /// A Unix `ar` archive (`!<arch>\n`).
    Ar,
    /// An Electron asar archive.
    Asar,
    /// A Mach-O fat (universal) binary.
    UniversalMacho,
}

impl ArtifactFormat {
    /// The formats `inspect_bytes` reads (every one but a bundle directory).
    pub const IN_MEMORY: [ArtifactFormat; 5] = [
        ArtifactFormat::File,
        ArtifactFormat::Zip,
        ArtifactFormat::Ar,
        ArtifactFormat::Asar,
        ArtifactFormat::UniversalMacho,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactFormat::File => "file",
            ArtifactFormat::AppBundle => "app-bundle",
            ArtifactFormat::Zip => "zip",
            ArtifactFormat::Ar => "ar",
            ArtifactFormat::Asar => "asar",
            ArtifactFormat::UniversalMacho => "universal-macho",
        }
    }
}

/// Traversal limits. Every field is optional on input (defaults below) and
/// may not exceed its default, which is also its hard maximum, or be zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Most entries met (listed, refused or skipped, the root included),
    /// across all nesting levels. Default and maximum 10000.
    pub max_entries: u64,
    /// Most decompressed/read bytes in total. Default and maximum 1 GiB.
    pub max_total_bytes: u64,
    /// Most bytes read from one entry; larger entries are listed but not hashed. Default and maximum 256 MiB.
    pub max_entry_bytes: u64,
    /// Largest decompressed/compressed ratio before an entry is refused as a bomb. Default and maximum 1000.
    pub max_compression_ratio: u64,
    /// Deepest nesting of archives inside archives. Default and maximum 20.
    pub max_depth: u64,
    /// Longest entry path in bytes. Default and maximum 4096.
    pub max_path_bytes: u64,
}

impl Limits {
    pub const MAX: Limits = Limits {
        max_entries: 10_000,
        max_total_bytes: 1 << 30,
        max_entry_bytes: 256 << 20,
        max_compression_ratio: 1000,
        max_depth: 20,
        max_path_bytes: 4096,
    };

    /// Each field with its hard maximum, in declaration order.
    pub fn fields(&self) -> [(&'static str, u64, u64); 6] {
        let m = Limits::MAX;
        [
            ("max_entries", self.max_entries, m.max_entries),
            ("max_total_bytes", self.max_total_bytes, m.max_total_bytes),
            ("max_entry_bytes", self.max_entry_bytes, m.max_entry_bytes),
            (
                "max_compression_ratio",
                self.max_compression_ratio,
                m.max_compression_ratio,
            ),
            ("max_depth", self.max_depth, m.max_depth),
            ("max_path_bytes", self.max_path_bytes, m.max_path_bytes),
        ]
    }

    /// Zero or over-the-maximum values are refused, never clamped.
    pub fn validate(&self) -> Result<(), ArtifactError> {
        match crate::ground::limits::out_of_range(self.fields()) {
            Some((field, value, max)) => Err(ArtifactError::LimitOutOfRange { field, value, max }),
            None => Ok(()),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::MAX
    }
}

/// Typed failures of the artifact library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    #[error("limit {field} = {value} is out of range (1..={max})")]
    LimitOutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{format} artifact is malformed: {detail}")]
    Malformed {
        format: &'static str,
        detail: String,
    },
    #[error("{detail}")]
    FormatMismatch { detail: String },
    #[error("the inspection does not validate: {detail}")]
    Invalid { detail: String },
}

impl ArtifactError {
    pub fn malformed(format: &'static str, detail: impl Into<String>) -> Self {
        ArtifactError::Malformed {
            format,
            detail: detail.into(),
        }
    }

    fn invalid(detail: impl Into<String>) -> Self {
        ArtifactError::Invalid {
            detail: detail.into(),
        }
    }
}

/// The whole result of one inspection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inspection {
    pub schema_version: u32,
    pub manifest: Manifest,
    pub nodes: Vec<Node>,
    pub occurrences: Vec<Occurrence>,
    pub edges: Vec<Edge>,
    pub findings: Findings,
    pub coverage: Coverage,
    pub limits: Limits,
    pub limitations: Vec<String>,
}

/// Identity of the whole graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `agm_` + sha256(canonical {root_sha256, root_format, graph_sha256}).
    pub manifest_id: String,
    /// The file's sha256; for a directory, the sha256 of the canonical
    /// listing of its entries (see [`directory_listing_sha256`]). A
    /// directory root occurrence itself carries no sha256, so its entries'
    /// ids depend only on their own place and content.
    pub root_sha256: String,
    pub root_format: ArtifactFormat,
    /// sha256 of canonical {nodes, occurrences, edges} as listed.
    pub graph_sha256: String,
    pub node_count: u64,
    pub occurrence_count: u64,
    pub edge_count: u64,
}

/// What a node's bytes are, as far as the reader could tell from them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum NodeFormat {
    Elf,
    Macho,
    UniversalMacho,
    Pe,
    Zip,
    Ar,
    Asar,
    /// An XML or binary property list.
    Plist,
    /// UTF-8 text with no NUL bytes in its first 4 KiB.
    Text,
    /// Bytes with no recognised signature.
    Data,
    /// A recognised signature whose structure did not parse, or an empty file.
    Unknown,
}

/// One distinct file content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// `art_` + the content's sha256.
    pub node_id: String,
    pub sha256: String,
    pub size: u64,
    pub format: NodeFormat,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// One architecture of a universal Mach-O.
    Slice,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HashStatus {
    /// Every byte was read and hashed.
    Verified,
    /// Hashed, but the container's own integrity record disagrees.
    Mismatched,
    /// Not hashed because a limit stopped the read.
    NotHashedLimit,
    /// Not hashable: directories, symlinks, encrypted or unsupported entries.
    Unavailable,
}

/// One place a content occurs: the root, an archive entry, a bundle file, a slice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Occurrence {
    /// `occ_` + sha256(canonical {parent_occurrence_id, logical_path, entry_kind, sha256}).
    pub occurrence_id: String,
    /// The enclosing container (archive, bundle or universal binary); null for the root.
    pub parent_occurrence_id: Option<String>,
    /// The node holding this content, when it was hashed.
    pub node_id: Option<String>,
    /// Relative POSIX path inside the parent container (never absolute, never
    /// `..`); the root is "". A slice's path is `slice-<index>-<arch>`.
    pub logical_path: String,
    pub entry_kind: EntryKind,
    /// Real bytes read (for unhashed entries, the declared size).
    pub size: u64,
    pub compressed_size: Option<u64>,
    pub sha256: Option<String>,
    pub hash_status: HashStatus,
    pub executable: bool,
    pub encrypted: bool,
    pub symlink_target: Option<String>,
    pub architecture: Option<String>,
    pub limitations: Vec<String>,
}

impl Occurrence {
    /// The id this occurrence must have.
    pub fn expected_id(&self) -> String {
        occurrence_id(
            self.parent_occurrence_id.as_deref(),
            &self.logical_path,
            self.entry_kind,
            self.sha256.as_deref(),
        )
    }

    /// Depth-first key used for the stable occurrence order and for
    /// matching the "same place" across two artifacts (ignores content).
    pub fn is_root(&self) -> bool {
        self.parent_occurrence_id.is_none()
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// A container holds an entry.
    Contains,
    /// A native binary names a library that resolves to another occurrence.
    LinksTo,
    /// A bundle's Info.plist names its executable.
    Loads,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// `edge_` + sha256(canonical {kind, from, to, detail}).
    pub edge_id: String,
    pub kind: EdgeKind,
    /// Occurrence id.
    pub from: String,
    /// Occurrence id.
    pub to: String,
    /// E.g. the install name or DT_NEEDED string.
    pub detail: Option<String>,
}

impl Edge {
    pub fn new(kind: EdgeKind, from: String, to: String, detail: Option<String>) -> Edge {
        let edge_id = edge_id(kind, &from, &to, detail.as_deref());
        Edge {
            edge_id,
            kind,
            from,
            to,
            detail,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ObservationKind {
    /// An asar entry's integrity hash disagrees with its bytes.
    IntegrityMismatch,
    /// An asar entry was read from `<name>.asar.unpacked/`.
    UnpackedEntry,
    /// An asar unpacked entry that is not present next to the archive.
    UnpackedMissing,
    /// A native binary whose layout could not be read.
    LayoutUnreadable,
    /// An entry's declared size disagrees with the bytes actually read.
    SizeMismatch,
    /// Anything else worth telling the user.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    pub kind: ObservationKind,
    pub occurrence_id: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RelationshipKind {
    /// The bundle's Info.plist names this executable.
    BundleExecutable,
    /// A symlink resolves to this occurrence.
    SymlinkTarget,
    /// A library reference resolved through @rpath/@loader_path/$ORIGIN or a basename.
    LibraryResolution,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedRelationship {
    pub kind: RelationshipKind,
    pub from: String,
    pub to: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MissingLibrary {
    pub occurrence_id: String,
    pub library: String,
    pub reason: String,
}

/// A library the binary expects the system to provide (not shipped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalLibrary {
    pub occurrence_id: String,
    pub library: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeSignature {
    pub occurrence_id: String,
    pub signed: bool,
    pub facts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoPlistFacts {
    pub occurrence_id: String,
    pub bundle_identifier: Option<String>,
    pub executable: Option<String>,
    pub short_version: Option<String>,
    pub version: Option<String>,
    pub minimum_system_version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UnexploredReason {
    /// A traversal limit stopped the walk here.
    Limit,
    /// A nested archive deeper than `max_depth`.
    NestedDepth,
    /// A compression method or container rea does not read.
    UnsupportedFormat,
    /// Encrypted content.
    Encrypted,
    /// A nested container that did not parse.
    Malformed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnexploredBranch {
    pub occurrence_id: Option<String>,
    pub logical_path: String,
    pub reason: UnexploredReason,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalReason {
    PathTraversal,
    AbsolutePath,
    /// A backslash or drive-letter path (Windows-style).
    NonPosixPath,
    SymlinkEscape,
    PathTooLong,
    CompressionRatio,
    Duplicate,
    Overlapping,
    /// An entry whose data lies outside the archive.
    OutOfBounds,
    /// A name that is not valid UTF-8 or holds control characters.
    InvalidName,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedEntry {
    /// The entry name as stored, escaped (`escape_default`) and bounded to 256 chars.
    pub raw_path: String,
    pub reason: RefusalReason,
    pub detail: String,
}

/// How many items each findings list dropped past [`FINDINGS_CAP`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingsOmitted {
    pub observations: u64,
    pub derived_relationships: u64,
    pub missing_libraries: u64,
    pub external_libraries: u64,
    pub code_signature: u64,
    pub info_plist: u64,
    pub unexplored_branches: u64,
    pub refused_entries: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Findings {
    pub observations: Vec<Observation>,
    pub derived_relationships: Vec<DerivedRelationship>,
    pub missing_libraries: Vec<MissingLibrary>,
    pub external_libraries: Vec<ExternalLibrary>,
    pub code_signature: Vec<CodeSignature>,
    pub info_plist: Vec<InfoPlistFacts>,
    pub unexplored_branches: Vec<UnexploredBranch>,
    pub refused_entries: Vec<RefusedEntry>,
    pub omitted: FindingsOmitted,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CoverageStatus {
    /// Every entry was listed and hashed.
    Complete,
    /// Something was skipped, refused or left unhashed.
    Partial,
    /// A count or byte limit stopped the walk.
    Truncated,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub status: CoverageStatus,
    /// Entries encountered (listed, refused or skipped), the root included.
    pub entries_seen: u64,
    /// Entries that became occurrences (the root included).
    pub entries_listed: u64,
    /// Bytes actually read or decompressed, at every nesting level,
    /// including the work spent on entries then refused or left unhashed
    /// (all charged to `max_total_bytes`).
    pub bytes_read: u64,
    /// Names of the `Limits` fields that stopped or shortened the walk.
    pub limits_hit: Vec<String>,
}

// ---- ids --------------------------------------------------------------

/// sha256 of the canonical JSON of `value` (which holds no floats).
pub(crate) fn canonical_sha256(value: &Value) -> String {
    // Our values are built from strings, integers, bools and nulls only.
    let text = to_canonical(value).unwrap_or_default();
    sha256_hex(text.as_bytes())
}

pub fn node_id(sha256: &str) -> String {
    format!("art_{sha256}")
}

pub fn occurrence_id(
    parent: Option<&str>,
    logical_path: &str,
    entry_kind: EntryKind,
    sha256: Option<&str>,
) -> String {
    let v = json!({
        "parent_occurrence_id": parent,
        "logical_path": logical_path,
        "entry_kind": entry_kind,
        "sha256": sha256,
    });
    format!("occ_{}", canonical_sha256(&v))
}

pub fn edge_id(kind: EdgeKind, from: &str, to: &str, detail: Option<&str>) -> String {
    let v = json!({"kind": kind, "from": from, "to": to, "detail": detail});
    format!("edge_{}", canonical_sha256(&v))
}

/// sha256 of canonical {nodes, occurrences, edges}.
pub fn graph_sha256(nodes: &[Node], occurrences: &[Occurrence], edges: &[Edge]) -> String {
    let v = json!({"nodes": nodes, "occurrences": occurrences, "edges": edges});
    canonical_sha256(&v)
}

pub fn manifest_id(root_sha256: &str, root_format: ArtifactFormat, graph_sha256: &str) -> String {
    let v = json!({
        "root_sha256": root_sha256,
        "root_format": root_format,
        "graph_sha256": graph_sha256,
    });
    format!("agm_{}", canonical_sha256(&v))
}

/// Root digest of a directory: sha256 of the canonical array of
/// `{logical_path, entry_kind, sha256, symlink_target, executable}` of the
/// root's direct entries, sorted by logical path. Ids are left out so the
/// root occurrence can carry this digest without a cycle.
pub fn directory_listing_sha256<'a>(entries: impl Iterator<Item = &'a Occurrence>) -> String {
    let mut rows: Vec<(&str, Value)> = entries
        .map(|o| {
            (
                o.logical_path.as_str(),
                json!({
                    "logical_path": o.logical_path,
                    "entry_kind": o.entry_kind,
                    "sha256": o.sha256,
                    "symlink_target": o.symlink_target,
                    "executable": o.executable,
                }),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    canonical_sha256(&Value::Array(rows.into_iter().map(|r| r.1).collect()))
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

// ---- validation ---------------------------------------------------------

impl Inspection {
    /// Recompute every id and digest and check every reference.
    pub fn validate(&self) -> Result<(), ArtifactError> {
        use std::collections::HashSet;
        if self.schema_version != SCHEMA_VERSION {
            return Err(ArtifactError::invalid(format!(
                "schema_version {} is not {SCHEMA_VERSION}",
                self.schema_version
            )));
        }
        self.limits.validate()?;
        let mut node_ids = HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !is_hex64(&n.sha256) || n.node_id != node_id(&n.sha256) {
                return Err(ArtifactError::invalid(format!(
                    "node {} does not match its sha256",
                    n.node_id
                )));
            }
            if i > 0 && self.nodes[i - 1].node_id >= n.node_id {
                return Err(ArtifactError::invalid("nodes are not sorted by node_id"));
            }
            node_ids.insert(n.node_id.as_str());
        }
        let mut occ_ids = HashSet::new();
        let mut roots = 0;
        for o in &self.occurrences {
            if o.occurrence_id != o.expected_id() {
                return Err(ArtifactError::invalid(format!(
                    "occurrence {} does not match its content",
                    o.occurrence_id
                )));
            }
            if !occ_ids.insert(o.occurrence_id.as_str()) {
                return Err(ArtifactError::invalid(format!(
                    "occurrence {} is listed twice",
                    o.occurrence_id
                )));
            }
            check_logical_path(o)?;
            if o.is_root() {
                roots += 1;
            }
            match (&o.node_id, &o.sha256) {
                (Some(id), Some(sha)) if *id == node_id(sha) && node_ids.contains(id.as_str()) => {}
                (None, _) => {}
                _ => {
                    return Err(ArtifactError::invalid(format!(
                        "occurrence {} names a node that is not listed or not its content",
                        o.occurrence_id
                    )));
                }
            }
        }
        if roots != 1 || self.occurrences.first().is_none_or(|o| !o.is_root()) {
            return Err(ArtifactError::invalid(
                "there must be exactly one root occurrence, listed first",
            ));
        }
        for o in &self.occurrences {
            if let Some(p) = &o.parent_occurrence_id
                && !occ_ids.contains(p.as_str())
            {
                return Err(ArtifactError::invalid(format!(
                    "occurrence {} has an unknown parent",
                    o.occurrence_id
                )));
            }
        }
        for (i, e) in self.edges.iter().enumerate() {
            if e.edge_id != edge_id(e.kind, &e.from, &e.to, e.detail.as_deref()) {
                return Err(ArtifactError::invalid(format!(
                    "edge {} does not match its content",
                    e.edge_id
                )));
            }
            if !occ_ids.contains(e.from.as_str()) || !occ_ids.contains(e.to.as_str()) {
                return Err(ArtifactError::invalid(format!(
                    "edge {} names an unknown occurrence",
                    e.edge_id
                )));
            }
            if i > 0 && edge_key(&self.edges[i - 1]) >= edge_key(e) {
                return Err(ArtifactError::invalid(
                    "edges are not in their stable order",
                ));
            }
        }
        self.check_findings(&occ_ids)?;
        let referenced: HashSet<&str> = self
            .occurrences
            .iter()
            .filter_map(|o| o.node_id.as_deref())
            .collect();
        if referenced.len() != node_ids.len() {
            return Err(ArtifactError::invalid(
                "a node is listed that no occurrence holds",
            ));
        }
        if self.coverage.entries_listed != self.occurrences.len() as u64 {
            return Err(ArtifactError::invalid(
                "coverage.entries_listed does not match the occurrences",
            ));
        }
        let m = &self.manifest;
        if m.node_count != self.nodes.len() as u64
            || m.occurrence_count != self.occurrences.len() as u64
            || m.edge_count != self.edges.len() as u64
        {
            return Err(ArtifactError::invalid(
                "manifest counts do not match the lists",
            ));
        }
        let root = &self.occurrences[0];
        if m.root_format == ArtifactFormat::AppBundle {
            let listing = directory_listing_sha256(
                self.occurrences
                    .iter()
                    .filter(|o| o.parent_occurrence_id.as_deref() == Some(&root.occurrence_id)),
            );
            if root.sha256.is_some() || listing != m.root_sha256 {
                return Err(ArtifactError::invalid(
                    "root_sha256 does not match the bundle's listing",
                ));
            }
        } else if root.sha256.as_deref() != Some(m.root_sha256.as_str()) {
            return Err(ArtifactError::invalid(
                "manifest root_sha256 is not the root occurrence's sha256",
            ));
        }
        let graph = graph_sha256(&self.nodes, &self.occurrences, &self.edges);
        if graph != m.graph_sha256 {
            return Err(ArtifactError::invalid(
                "graph_sha256 does not match the lists",
            ));
        }
        if m.manifest_id != manifest_id(&m.root_sha256, m.root_format, &m.graph_sha256) {
            return Err(ArtifactError::invalid("manifest_id does not match"));
        }
        Ok(())
    }

    /// Every occurrence id a finding names must be listed.
    fn check_findings(&self, ids: &std::collections::HashSet<&str>) -> Result<(), ArtifactError> {
        let f = &self.findings;
        let named = f
            .observations
            .iter()
            .filter_map(|o| o.occurrence_id.as_deref())
            .chain(
                f.unexplored_branches
                    .iter()
                    .filter_map(|u| u.occurrence_id.as_deref()),
            )
            .chain(
                f.derived_relationships
                    .iter()
                    .flat_map(|r| [r.from.as_str(), r.to.as_str()]),
            )
            .chain(f.missing_libraries.iter().map(|x| x.occurrence_id.as_str()))
            .chain(
                f.external_libraries
                    .iter()
                    .map(|x| x.occurrence_id.as_str()),
            )
            .chain(f.code_signature.iter().map(|x| x.occurrence_id.as_str()))
            .chain(f.info_plist.iter().map(|x| x.occurrence_id.as_str()));
        for id in named {
            if !ids.contains(id) {
                return Err(ArtifactError::invalid(format!(
                    "a finding names {id}, which is not listed"
                )));
            }
        }
        Ok(())
    }

    /// Display paths of all occurrences, in list order (see [`Self::display_path`]);
    /// linear in the number of occurrences times the nesting depth.
    pub fn display_paths(&self) -> Vec<String> {
        let by_id: std::collections::HashMap<&str, &Occurrence> = self
            .occurrences
            .iter()
            .map(|o| (o.occurrence_id.as_str(), o))
            .collect();
        self.occurrences
            .iter()
            .map(|o| self.path_chain(o, |id| by_id.get(id).copied()))
            .collect()
    }

    /// The occurrence with this id.
    pub fn occurrence(&self, id: &str) -> Option<&Occurrence> {
        self.occurrences.iter().find(|o| o.occurrence_id == id)
    }

    /// Display path from the root: logical paths joined with `!/`
    /// (e.g. `lib/inner.zip!/a.so`); the root is "". Stable across
    /// artifacts, so comparisons can match "the same place".
    pub fn display_path(&self, occurrence: &Occurrence) -> String {
        self.path_chain(occurrence, |id| self.occurrence(id))
    }

    /// Joins the logical paths from the root down to `o`; bounded by the
    /// occurrence count, so a parent cycle cannot loop forever.
    fn path_chain<'a>(
        &'a self,
        o: &'a Occurrence,
        parent: impl Fn(&str) -> Option<&'a Occurrence>,
    ) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(o);
        for _ in 0..=self.occurrences.len() {
            let Some(c) = cur else { break };
            if !c.logical_path.is_empty() {
                parts.push(c.logical_path.as_str());
            }
            cur = c.parent_occurrence_id.as_deref().and_then(&parent);
        }
        parts.reverse();
        parts.join("!/")
    }
}

pub(crate) fn edge_key(e: &Edge) -> (EdgeKind, &str, &str, Option<&str>) {
    (e.kind, &e.from, &e.to, e.detail.as_deref())
}

fn check_logical_path(o: &Occurrence) -> Result<(), ArtifactError> {
    let p = &o.logical_path;
    let bad = if o.is_root() {
        !p.is_empty()
    } else {
        p.is_empty()
            || p.starts_with('/')
            || p.contains('\\')
            || p.split('/').any(|c| c == ".." || c == "." || c.is_empty())
    };
    if bad {
        return Err(ArtifactError::invalid(format!(
            "occurrence {} has an invalid logical path",
            o.occurrence_id
        )));
    }
    Ok(())
}
