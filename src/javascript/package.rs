//! `package.json` files read as data (never their scripts): the root
//! manifest and the `node_modules/<name>/package.json` of dependencies.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::PackageInfo;
use crate::ground::canonical::nests_deeper_than;

/// Largest JSON document read (package manifests, source maps' `sources`).
pub const MAX_JSON_BYTES: usize = 1 << 20;
/// Deepest JSON nesting read.
pub const MAX_JSON_NESTING: usize = 64;

/// Parses bounded JSON: `None` when too large, too deep or not JSON.
pub fn bounded_json(bytes: &[u8]) -> Option<Value> {
    if bytes.len() > MAX_JSON_BYTES || nests_deeper_than(bytes, MAX_JSON_NESTING) {
        return None;
    }
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice(text).ok()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(|s| s.chars().take(super::model::EXCERPT_CHARS).collect())
}

fn deps(v: &Value, key: &str) -> BTreeMap<String, String> {
    v.get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .take(10_000)
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// A manifest at logical `path`, or `None` when it cannot be read safely.
pub fn parse(path: &str, bytes: &[u8]) -> Option<PackageInfo> {
    let v = bounded_json(bytes)?;
    v.as_object()?;
    Some(PackageInfo {
        path: path.to_owned(),
        name: text(&v, "name"),
        product_name: text(&v, "productName"),
        version: text(&v, "version"),
        main: text(&v, "main"),
        dependencies: deps(&v, "dependencies"),
        dev_dependencies: deps(&v, "devDependencies"),
        optional_dependencies: deps(&v, "optionalDependencies"),
    })
}

impl PackageInfo {
    /// The declared range of `name` and which list declares it.
    pub fn declared(&self, name: &str) -> (Option<&str>, &'static str) {
        for (list, kind) in [
            (&self.dependencies, "dependencies"),
            (&self.dev_dependencies, "devDependencies"),
            (&self.optional_dependencies, "optionalDependencies"),
        ] {
            if let Some(range) = list.get(name) {
                return (Some(range.as_str()), kind);
            }
        }
        (None, "undeclared")
    }

    /// The major version of `electron` the manifest declares (first
    /// number of its range: `^12.0.1` → 12), if any.
    pub fn electron_major(&self) -> Option<u64> {
        let (range, _) = self.declared("electron");
        let range = range?;
        let digits: String = range
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }
}

/// The package a logical path belongs to under `node_modules/`
/// (`node_modules/@s/p/x.js` → `@s/p`), the innermost one.
pub fn package_of(path: &str) -> Option<(String, String)> {
    let idx = path.rfind("node_modules/")?;
    let rest = &path[idx + "node_modules/".len()..];
    let mut parts = rest.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') {
        format!("{first}/{}", parts.next()?)
    } else {
        first.to_owned()
    };
    let root = format!("{}{name}", &path[..idx + "node_modules/".len()]);
    Some((name, root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_manifest_fields_and_the_electron_major() {
        let json = br#"{"name":"app","version":"1.2.3","main":"main.js","devDependencies":{"electron":"~1.7.9"},"dependencies":{"x":"^2"}}"#;
        let p = parse("package.json", json).unwrap();
        assert_eq!(p.name.as_deref(), Some("app"));
        assert_eq!(p.main.as_deref(), Some("main.js"));
        assert_eq!(p.electron_major(), Some(1));
        assert_eq!(p.declared("x"), (Some("^2"), "dependencies"));
        assert_eq!(p.declared("y"), (None, "undeclared"));
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        assert!(parse("package.json", deep.as_bytes()).is_none());
        assert!(parse("package.json", b"not json").is_none());
    }

    #[test]
    fn finds_the_innermost_package() {
        assert_eq!(
            package_of("node_modules/@s/p/build/Release/a.node"),
            Some(("@s/p".into(), "node_modules/@s/p".into()))
        );
        assert_eq!(
            package_of("node_modules/a/node_modules/b/x.js"),
            Some(("b".into(), "node_modules/a/node_modules/b".into()))
        );
        assert_eq!(package_of("src/x.js"), None);
    }
}
