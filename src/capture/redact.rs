//! Secret redaction: the values of environment entries marked `secret`
//! are replaced before anything leaves the capture host, so they reach no
//! result, Evidence, export or log.

use super::types::Scenario;

/// The secret values of one scenario, longest first so that a secret that
/// contains another is replaced whole.
#[derive(Debug)]
pub struct Secrets {
    items: Vec<(String, Vec<u8>)>,
    first: [bool; 256],
}

impl Default for Secrets {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            first: [false; 256],
        }
    }
}

impl Secrets {
    pub fn of(scenario: &Scenario) -> Self {
        let mut items: Vec<(String, Vec<u8>)> = scenario
            .environment
            .iter()
            .filter(|e| e.secret && !e.value.is_empty())
            .map(|e| (e.name.clone(), e.value.as_bytes().to_vec()))
            .collect();
        items.sort_by_key(|item| std::cmp::Reverse(item.1.len()));
        let mut first = [false; 256];
        for (_, v) in &items {
            first[usize::from(v[0])] = true;
        }
        Self { items, first }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `bytes` with every occurrence of a secret value replaced by
    /// `[redacted:NAME]`.
    pub fn redact(&self, bytes: &[u8]) -> Vec<u8> {
        if self.items.is_empty() {
            return bytes.to_vec();
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        'outer: while i < bytes.len() {
            if self.first[usize::from(bytes[i])] {
                for (name, value) in &self.items {
                    if bytes[i..].starts_with(value) {
                        out.extend_from_slice(b"[redacted:");
                        out.extend_from_slice(name.as_bytes());
                        out.push(b']');
                        i += value.len();
                        continue 'outer;
                    }
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        out
    }

    /// How many trailing bytes of `bytes` are a proper prefix of some
    /// secret (the most such bytes), 0 when none.
    pub fn longest_prefix_tail(&self, bytes: &[u8]) -> usize {
        let mut best = 0;
        for (_, value) in &self.items {
            for k in (best + 1..value.len()).rev() {
                if bytes.ends_with(&value[..k]) {
                    best = k;
                    break;
                }
            }
        }
        best
    }

    pub fn redact_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.redact(text.as_bytes())).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::types::EnvVar;

    fn scenario(env: &[(&str, &str, bool)]) -> Scenario {
        serde_json::from_value::<Scenario>(serde_json::json!({
            "executable": "/bin/true",
            "working_directory": "/tmp",
            "environment": env.iter().map(|(n, v, s)| EnvVar {
                name: n.to_string(), value: v.to_string(), secret: *s
            }).collect::<Vec<_>>(),
        }))
        .expect("scenario")
    }

    #[test]
    fn replaces_every_occurrence_longest_first() {
        let s = Secrets::of(&scenario(&[
            ("SHORT", "abc", true),
            ("LONG", "abcdef", true),
            ("PLAIN", "xyz", false),
        ]));
        assert_eq!(
            s.redact(b"1abcdef2abc3xyz"),
            b"1[redacted:LONG]2[redacted:SHORT]3xyz".to_vec()
        );
    }

    #[test]
    fn cut_secret_prefix_is_found() {
        let s = Secrets::of(&scenario(&[("TOKEN", "hunter2", true)]));
        assert_eq!(s.longest_prefix_tail(b"xx hunt"), 4);
        assert_eq!(s.longest_prefix_tail(b"xx hunter2"), 0);
        assert_eq!(s.longest_prefix_tail(b"xx"), 0);
    }

    #[test]
    fn empty_secret_changes_nothing() {
        let s = Secrets::of(&scenario(&[("EMPTY", "", true)]));
        assert!(s.is_empty());
        assert_eq!(s.redact(b"abc"), b"abc".to_vec());
    }

    #[test]
    fn scenario_echo_hides_values() {
        let mut sc = scenario(&[("TOKEN", "hunter2", true), ("MODE", "fast", false)]);
        sc.arguments = vec!["--key=hunter2".into()];
        sc.stdin = Some("hunter2\n".into());
        let r = sc.redacted();
        let text = serde_json::to_string(&r).expect("json");
        assert!(!text.contains("hunter2"));
        assert!(text.contains("fast"));
        assert_eq!(r.arguments, ["--key=[redacted:TOKEN]"]);
        assert_eq!(r.environment[0].value, "[redacted]");
    }
}
