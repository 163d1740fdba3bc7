//! The few `/proc` facts capture needs: who a process's parent is (to
//! find descendants re-parented to the subreaper, or everything under a
//! host that must be killed), the module map of a crashed process, and the
//! host's own peak RSS.

use super::types::Mapping;

/// Module-map entries kept for one crash.
pub const MAX_MAPPINGS: usize = 4096;

/// The state letter and parent pid from the text of `/proc/PID/stat`.
/// The command name (field 2) may contain spaces and parentheses, so
/// parsing starts after the last `)`.
pub fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

/// The file-backed mappings of `/proc/PID/maps` text (anonymous, `[heap]`
/// and other bracketed pseudo-mappings are skipped), at most
/// [`MAX_MAPPINGS`]; the flag says whether some were left out.
pub fn parse_maps(text: &str) -> (Vec<Mapping>, bool) {
    let mut out = Vec::new();
    let mut truncated = false;
    for line in text.lines() {
        let mut parts = line.splitn(6, ' ');
        let (Some(range), Some(perms), Some(offset), Some(_dev), Some(_inode)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        let path = parts.next().unwrap_or("").trim_start();
        if !path.starts_with('/') {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let hex = |s: &str| u64::from_str_radix(s, 16).ok().map(|v| format!("{v:#x}"));
        let (Some(start), Some(end), Some(offset)) = (hex(start), hex(end), hex(offset)) else {
            continue;
        };
        if out.len() == MAX_MAPPINGS {
            truncated = true;
            break;
        }
        out.push(Mapping {
            path: path.to_string(),
            start,
            end,
            offset,
            perms: perms.to_string(),
        });
    }
    (out, truncated)
}

/// `VmHWM` of `/proc/self/status`, in KiB.
pub fn own_peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Every process (zombies included) whose parent is `parent`, with its
/// state letter.
pub fn children_of(parent: i32) -> Vec<(i32, char)> {
    processes()
        .filter(|&(_, _, ppid)| ppid == parent)
        .map(|(pid, state, _)| (pid, state))
        .collect()
}

/// A process found below another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descendant {
    pub pid: i32,
    pub parent: i32,
    pub state: char,
}

/// Every process below `root` (children, their children...), from one
/// scan of `/proc`.
pub fn descendants_of(root: i32) -> Vec<Descendant> {
    let all: Vec<(i32, char, i32)> = processes().collect();
    let mut found: Vec<Descendant> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, state, ppid) in &all {
            // Each pid is taken once, so even a cycle read from a racing
            // scan cannot grow this without end.
            if ppid == parent && pid != root && !found.iter().any(|d| d.pid == pid) {
                found.push(Descendant { pid, parent, state });
                frontier.push(pid);
            }
        }
    }
    found
}

/// The parent of `pid` now, if it still exists.
pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat).map(|(_, ppid)| ppid)
}

/// `(pid, state, ppid)` of every process `/proc` lists now.
fn processes() -> impl Iterator<Item = (i32, char, i32)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (state, ppid) = parse_stat(&stat)?;
            Some((pid, state, ppid))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppid_survives_odd_command_names() {
        assert_eq!(parse_stat("42 (a) b) (c) S 17 42 42 0"), Some(('S', 17)));
        assert_eq!(parse_stat("42 (sleep) Z 1 42"), Some(('Z', 1)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn maps_keep_file_backed_entries() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 123 /usr/bin/x y
55d0c0a01000-55d0c0a02000 r-xp 00001000 08:01 123 /usr/bin/x y
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
bad line
";
        let (maps, truncated) = parse_maps(text);
        assert!(!truncated);
        assert_eq!(maps.len(), 2);
        assert_eq!(maps[1].path, "/usr/bin/x y");
        assert_eq!(maps[1].start, "0x55d0c0a01000");
        assert_eq!(maps[1].offset, "0x1000");
        assert_eq!(maps[1].perms, "r-xp");
    }

    #[test]
    fn own_rss_is_read() {
        assert!(own_peak_rss_kib().is_some_and(|k| k > 0));
    }
}
