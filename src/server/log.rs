//! Where the server's log lines go: stderr, with every session id taken
//! out (round-3 finding R3-3). A legacy HTTP session id is a bearer
//! capability: whoever holds it with a valid token could once act in the
//! session, so no log may carry it at any level. The MCP library puts ids
//! in its own events and spans (a session's span names it on every event
//! inside it); rather than chase each, every line is scrubbed of anything
//! shaped like one (a UUID) before it is written.

use std::io::Write;

/// What stands in for a session id in a log line.
const REDACTED: &[u8] = b"[session id]";
/// `8-4-4-4-12` hex digits.
const UUID_LEN: usize = 36;

/// A `MakeWriter` for `tracing_subscriber::fmt`: each event is buffered
/// whole, scrubbed, then written to stderr in one piece.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScrubbedStderr;

/// One event's bytes on their way to stderr.
pub struct ScrubbedLine(Vec<u8>);

impl Write for ScrubbedLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ScrubbedLine {
    fn drop(&mut self) {
        // A closed stderr must not stop the server.
        let _ = std::io::stderr().write_all(&scrub(&self.0));
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for ScrubbedStderr {
    type Writer = ScrubbedLine;

    fn make_writer(&'a self) -> ScrubbedLine {
        ScrubbedLine(Vec::new())
    }
}

/// `text` with every UUID-shaped run replaced by [`REDACTED`].
pub fn scrub(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if is_uuid_at(text, i) {
            out.extend_from_slice(REDACTED);
            i += UUID_LEN;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

fn is_uuid_at(text: &[u8], at: usize) -> bool {
    let Some(window) = text.get(at..at + UUID_LEN) else {
        return false;
    };
    window.iter().enumerate().all(|(k, b)| match k {
        8 | 13 | 18 | 23 => *b == b'-',
        _ => b.is_ascii_hexdigit(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_taken_out_and_nothing_else() {
        let line = b"create new session session_id=\"1b4e28ba-2fa1-11d2-883f-0016d3cca427\" x=1\n";
        assert_eq!(
            scrub(line),
            b"create new session session_id=\"[session id]\" x=1\n".to_vec()
        );
        let plain = b"tools/call connection=3 tool=open_binary 1b4e28ba-2fa1\n";
        assert_eq!(scrub(plain), plain.to_vec());
        let upper = b"{id=1B4E28BA-2FA1-11D2-883F-0016D3CCA427}";
        assert_eq!(scrub(upper), b"{id=[session id]}".to_vec());
    }

    proptest::proptest! {
        #[test]
        fn no_uuid_survives(prefix in "[ -~]{0,40}", id in "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", suffix in "[ -~]{0,40}") {
            let line = format!("{prefix}{id}{suffix}");
            let scrubbed = String::from_utf8(scrub(line.as_bytes())).unwrap();
            proptest::prop_assert!(!scrubbed.contains(&id));
        }
    }
}
