//! Specifier resolution the way Node.js would do it, but over the listed
//! files only (nothing is executed and nothing outside the application is
//! looked at): relative files with extensions and `index.*`, directory
//! `package.json` mains, `node_modules` packages walked up from the
//! importer, Node built-ins and `electron`. Also the looser resolution of
//! paths handed to `loadFile`/`loadURL` and `preload`.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::StringHint;
use super::package::package_of;
use crate::artifacts::paths::{base_name, join_inside, parent_dir};

/// Extensions tried after a relative specifier, in Node's order plus TS.
const EXTENSIONS: [&str; 8] = [
    ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".json", ".node",
];

/// Node.js core modules (without the `node:` prefix).
const BUILTINS: &[&str] = &[
    "assert",
    "assert/strict",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "dns/promises",
    "domain",
    "events",
    "fs",
    "fs/promises",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "path/posix",
    "path/win32",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "readline/promises",
    "repl",
    "stream",
    "stream/consumers",
    "stream/promises",
    "stream/web",
    "string_decoder",
    "sys",
    "timers",
    "timers/promises",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "util/types",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
    "test",
    "sqlite",
    "sea",
];

/// Electron's own modules.
const ELECTRON: &[&str] = &[
    "electron",
    "electron/main",
    "electron/renderer",
    "electron/common",
];

/// The listed files, for lookups.
#[derive(Debug, Default)]
pub struct FileIndex {
    files: BTreeSet<String>,
    /// Last path component → paths, for suffix matches.
    by_base: BTreeMap<String, Vec<String>>,
    /// Directory → `main` of its `package.json`.
    mains: BTreeMap<String, String>,
}

/// Where a specifier leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file of the application.
    File(String),
    /// A Node.js built-in or an Electron module (name without `node:`).
    Builtin(String),
    /// A package by name; `found` when its directory is in `node_modules`.
    Package { name: String, found: bool },
    /// Nothing; the reason.
    Unresolved(String),
}

impl FileIndex {
    pub fn new(files: impl IntoIterator<Item = String>) -> FileIndex {
        let files: BTreeSet<String> = files.into_iter().collect();
        let mut by_base: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for f in &files {
            by_base
                .entry(base_name(f).to_owned())
                .or_default()
                .push(f.clone());
        }
        FileIndex {
            files,
            by_base,
            mains: BTreeMap::new(),
        }
    }

    /// Records the `main` of the `package.json` in `dir`.
    pub fn set_main(&mut self, dir: &str, main: &str) {
        self.mains.insert(dir.to_owned(), main.to_owned());
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Files under `dir` (`""` = all).
    fn under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.files
            .range(prefix.clone()..)
            .take_while(move |f| f.starts_with(&prefix))
    }

    /// A file, `file + ext`, or a directory's main / `index + ext`.
    pub fn file_like(&self, path: &str) -> Option<String> {
        self.file_like_at(path, 0)
    }

    fn file_like_at(&self, path: &str, depth: u8) -> Option<String> {
        if self.files.contains(path) {
            return Some(path.to_owned());
        }
        for ext in EXTENSIONS {
            let p = format!("{path}{ext}");
            if self.files.contains(&p) {
                return Some(p);
            }
        }
        if depth == 0
            && let Some(main) = self.mains.get(path)
            && let Some(joined) = join_inside(path, main)
            && joined != path
            && let Some(found) = self.file_like_at(&joined, 1)
        {
            return Some(found);
        }
        let base = if path.is_empty() {
            "index".to_owned()
        } else {
            format!("{path}/index")
        };
        EXTENSIONS
            .iter()
            .map(|ext| format!("{base}{ext}"))
            .find(|p| self.files.contains(p))
    }

    /// Resolves an import/require specifier from `importer`.
    pub fn import(&self, importer: &str, spec: &str) -> Target {
        self.import_in(parent_dir(importer), spec)
    }

    /// Resolves a specifier as if required from a file in `dir`.
    pub fn import_in(&self, dir: &str, spec: &str) -> Target {
        if spec.is_empty() {
            return Target::Unresolved("empty specifier".into());
        }
        if is_relative(spec) {
            return match join_inside(dir, spec) {
                None => Target::Unresolved("the path leaves the application root".into()),
                Some(path) => match self.file_like(&path) {
                    Some(file) => Target::File(file),
                    None => Target::Unresolved(format!("no file of the application at {path}")),
                },
            };
        }
        if spec.starts_with('/') || spec.contains(":\\") {
            return Target::Unresolved("an absolute path outside the application".into());
        }
        if let Some(scheme) = url_scheme(spec)
            && scheme != "node"
        {
            return Target::Unresolved(format!("a {scheme}: URL"));
        }
        let bare = spec.strip_prefix("node:").unwrap_or(spec);
        if BUILTINS.contains(&bare) || ELECTRON.contains(&bare) {
            return Target::Builtin(bare.to_owned());
        }
        let name = package_name(bare);
        let found = ancestors(dir).any(|dir| {
            let root = if dir.is_empty() {
                format!("node_modules/{name}")
            } else {
                format!("{dir}/node_modules/{name}")
            };
            self.under(&root).next().is_some()
        });
        Target::Package { name, found }
    }

    /// Resolves a path given to `loadFile`/`loadURL`/`preload`: relative to
    /// the module's directory, then to the root, then by a unique suffix.
    pub fn hint(&self, importer: &str, hint: &StringHint) -> Result<String, String> {
        let raw = match &hint.literal {
            Some(l) => l.clone(),
            None if hint.parts.is_empty() => {
                return Err(format!("computed value: {}", hint.excerpt));
            }
            None => hint.parts.join("/"),
        };
        let cut = raw.find(['?', '#']).map_or(raw.as_str(), |i| &raw[..i]);
        let cut = cut.strip_prefix("file://").unwrap_or(cut);
        let cand = cut.trim_start_matches('/');
        if cand.is_empty() {
            return Err(format!("no file name in {}", hint.excerpt));
        }
        for dir in [parent_dir(importer), ""] {
            if let Some(p) = join_inside(dir, cand)
                && self.files.contains(&p)
            {
                return Ok(p);
            }
        }
        let Some(norm) = join_inside("", cand).filter(|n| !n.is_empty()) else {
            return Err(format!("{cand} leaves the application root"));
        };
        let suffix = format!("/{norm}");
        let matches: Vec<&String> = self
            .by_base
            .get(base_name(&norm))
            .into_iter()
            .flatten()
            .filter(|f| **f == norm || f.ends_with(&suffix))
            .take(2)
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(format!("no file of the application matches {norm}")),
            _ => Err(format!("several files of the application match {norm}")),
        }
    }

    /// `bindings('name')`: the unique `name.node` under the importer's
    /// package (or the application), preferring `build/Release`.
    pub fn bindings(&self, importer: &str, name: &str) -> Result<String, String> {
        let file = if name.ends_with(".node") {
            name.to_owned()
        } else {
            format!("{name}.node")
        };
        let root = package_of(importer)
            .map(|(_, root)| root)
            .unwrap_or_default();
        let suffix = format!("/{file}");
        let found: Vec<&String> = self
            .under(&root)
            .filter(|f| f.ends_with(&suffix) || **f == file)
            .filter(|f| {
                // Not inside a nested package of the importer's package.
                !f[root.len()..]
                    .trim_start_matches('/')
                    .contains("node_modules/")
            })
            .take(64)
            .collect();
        let release: Vec<&String> = found
            .iter()
            .copied()
            .filter(|f| f.contains("build/Release/"))
            .collect();
        match (found.as_slice(), release.as_slice()) {
            ([one], _) | (_, [one]) => Ok((*one).to_string()),
            ([], _) => Err(format!("no {file} in the package")),
            _ => Err(format!("several files named {file} in the package")),
        }
    }
}

/// `./x`, `../x`, `.` and `..`.
pub fn is_relative(spec: &str) -> bool {
    spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../")
}

/// The scheme of `text` when it starts like a URL (`x:`, two letters or more).
pub fn url_scheme(text: &str) -> Option<String> {
    let (scheme, _) = text.split_once(':')?;
    let ok = scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then(|| scheme.to_ascii_lowercase())
}

/// `@scope/name/sub` → `@scope/name`; `name/sub` → `name`.
pub fn package_name(spec: &str) -> String {
    let mut parts = spec.split('/');
    let first = parts.next().unwrap_or_default();
    match (first.starts_with('@'), parts.next()) {
        (true, Some(second)) => format!("{first}/{second}"),
        _ => first.to_owned(),
    }
}

/// `a/b/c` → `a/b/c`, `a/b`, `a`, `` (skipping `node_modules` dirs themselves).
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let cur = next?;
        next = if cur.is_empty() {
            None
        } else {
            Some(parent_dir(cur))
        };
        Some(cur)
    })
    .filter(|d| !d.ends_with("node_modules"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> FileIndex {
        let mut i = FileIndex::new(
            [
                "main.js",
                "lib/a.js",
                "lib/b/index.js",
                "lib/c.json",
                "pkgdir/package.json",
                "pkgdir/src/entry.js",
                "node_modules/dep/index.js",
                "node_modules/@s/p/lib.js",
                "node_modules/nat/build/Release/nat.node",
                "node_modules/nat/build/Debug/nat.node",
                "renderer/index.html",
                "a/page.html",
                "b/page.html",
            ]
            .map(String::from),
        );
        i.set_main("pkgdir", "./src/entry");
        i
    }

    #[test]
    fn resolves_like_node() {
        let i = index();
        let f = |s: &str| i.import("lib/x.js", s);
        assert_eq!(f("./a"), Target::File("lib/a.js".into()));
        assert_eq!(f("./b"), Target::File("lib/b/index.js".into()));
        assert_eq!(f("./c.json"), Target::File("lib/c.json".into()));
        assert_eq!(f("../main"), Target::File("main.js".into()));
        assert_eq!(f("../pkgdir"), Target::File("pkgdir/src/entry.js".into()));
        assert!(matches!(f("./nope"), Target::Unresolved(_)));
        assert!(matches!(f("../../x"), Target::Unresolved(_)));
        assert_eq!(f("node:fs"), Target::Builtin("fs".into()));
        assert_eq!(f("fs/promises"), Target::Builtin("fs/promises".into()));
        assert_eq!(f("electron"), Target::Builtin("electron".into()));
        assert_eq!(
            f("dep/sub"),
            Target::Package {
                name: "dep".into(),
                found: true
            }
        );
        assert_eq!(
            f("@s/p"),
            Target::Package {
                name: "@s/p".into(),
                found: true
            }
        );
        assert_eq!(
            f("missing"),
            Target::Package {
                name: "missing".into(),
                found: false
            }
        );
        assert!(matches!(f("https://x/y.js"), Target::Unresolved(_)));
        assert!(matches!(f("/etc/passwd"), Target::Unresolved(_)));
    }

    #[test]
    fn resolves_load_paths_and_bindings() {
        let i = index();
        let lit = |s: &str| StringHint {
            literal: Some(s.into()),
            ..Default::default()
        };
        let parts = |p: &[&str]| StringHint {
            parts: p.iter().map(|s| s.to_string()).collect(),
            excerpt: "x".into(),
            ..Default::default()
        };
        assert_eq!(
            i.hint("main.js", &lit("renderer/index.html")),
            Ok("renderer/index.html".into())
        );
        assert_eq!(
            i.hint("main.js", &parts(&["file://", "/renderer/index.html"])),
            Ok("renderer/index.html".into())
        );
        assert_eq!(
            i.hint("lib/a.js", &parts(&["..", "main.js"])),
            Ok("main.js".into())
        );
        assert_eq!(
            i.hint("x.js", &lit("index.html")),
            Ok("renderer/index.html".into())
        );
        assert!(
            i.hint("x.js", &lit("page.html"))
                .unwrap_err()
                .contains("several")
        );
        assert!(
            i.hint("x.js", &parts(&[]))
                .unwrap_err()
                .contains("computed")
        );
        assert_eq!(
            i.bindings("node_modules/nat/index.js", "nat"),
            Ok("node_modules/nat/build/Release/nat.node".into())
        );
        assert!(i.bindings("main.js", "zzz").is_err());
    }
}
