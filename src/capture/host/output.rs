//! One captured stream: keep a bounded prefix, count (and drop) the rest,
//! so a flood costs time, never memory.

use sha2::{Digest, Sha256};

use crate::capture::redact::Secrets;
use crate::capture::types::Stream;
use crate::ground::digest::hex;

#[derive(Debug)]
pub struct Collector {
    kept: Vec<u8>,
    total: u64,
    limit: usize,
}

impl Collector {
    pub fn new(limit: u64) -> Self {
        Self {
            kept: Vec::new(),
            total: 0,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..room.min(data.len())]);
        self.total += data.len() as u64;
    }

    /// The stream as recorded. When truncated, a kept tail that could be
    /// the start of a secret is dropped too, so a secret cut by the limit
    /// does not leak its prefix.
    pub fn finish(mut self, secrets: &Secrets) -> Stream {
        if self.total > self.kept.len() as u64 {
            let cut = secrets.longest_prefix_tail(&self.kept);
            self.kept.truncate(self.kept.len() - cut);
        }
        let redacted = secrets.redact(&self.kept);
        Stream {
            sha256: hex(&Sha256::digest(&redacted)),
            text: String::from_utf8_lossy(&redacted).into_owned(),
            stored_bytes: self.kept.len() as u64,
            total_bytes: self.total,
            truncated: self.total > self.kept.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_prefix_and_counts_the_rest() {
        let mut c = Collector::new(4);
        c.push(b"ab");
        c.push(b"cdef");
        c.push(b"gh");
        let s = c.finish(&Secrets::default());
        assert_eq!(s.text, "abcd");
        assert_eq!(s.stored_bytes, 4);
        assert_eq!(s.total_bytes, 8);
        assert!(s.truncated);
    }

    #[test]
    fn a_secret_cut_by_the_limit_leaves_no_prefix() {
        let scenario: crate::capture::Scenario = serde_json::from_value(serde_json::json!({
            "executable": "/bin/true",
            "working_directory": "/tmp",
            "environment": [{"name": "TOKEN", "value": "hunter2", "secret": true}],
        }))
        .expect("scenario");
        let secrets = Secrets::of(&scenario);
        let mut c = Collector::new(9);
        c.push(b"key=hunter2 and hunter2");
        let s = c.finish(&secrets);
        assert_eq!(s.text, "key=");
        assert_eq!(s.stored_bytes, 4);
        assert!(s.truncated);
        let mut whole = Collector::new(64);
        whole.push(b"key=hunter2");
        assert_eq!(whole.finish(&secrets).text, "key=[redacted:TOKEN]");
    }

    #[test]
    fn untruncated_stream_is_whole() {
        let mut c = Collector::new(10);
        c.push(b"hi\xff");
        let s = c.finish(&Secrets::default());
        assert_eq!(s.text, "hi\u{fffd}");
        assert!(!s.truncated);
        assert_eq!(s.sha256, hex(&Sha256::digest(b"hi\xff")));
    }
}
