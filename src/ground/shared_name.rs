//! A procedure name held once, however many views of the file name it.
//!
//! An import's name lives in the import table as one `Arc<str>`; the
//! inventory's procedure, its Mach-O C-spelling alias (the same name without
//! its leading `_`) and the completion index all point into that allocation
//! rather than copying it. A hostile file with 400,000 imports of 2 KiB names
//! therefore costs its names once, not once per view (R3-5).

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A name: a shared allocation and the byte offset where this name starts
/// in it (a suffix, so it ends where the allocation ends).
#[derive(Clone)]
pub struct SharedName {
    text: Arc<str>,
    start: u32,
}

impl SharedName {
    /// The whole of `text`, sharing it.
    pub fn new(text: Arc<str>) -> SharedName {
        SharedName { text, start: 0 }
    }

    /// The name from byte `start` on, sharing the allocation; `None` when
    /// `start` is not a character boundary inside the name.
    pub fn suffix(&self, start: usize) -> Option<SharedName> {
        let start = self.start as usize + start;
        self.text.is_char_boundary(start).then_some(())?;
        Some(SharedName {
            text: Arc::clone(&self.text),
            start: u32::try_from(start).ok()?,
        })
    }

    /// Whether both names are views of one allocation (for tests that check
    /// nothing was copied).
    pub fn shares_allocation_with(&self, other: &Arc<str>) -> bool {
        Arc::ptr_eq(&self.text, other)
    }

    pub fn as_str(&self) -> &str {
        // `start` is a checked char boundary within `text` by construction.
        self.text.get(self.start as usize..).unwrap_or_default()
    }
}

impl Deref for SharedName {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for SharedName {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for SharedName {
    fn from(text: &str) -> SharedName {
        SharedName::new(Arc::from(text))
    }
}

impl From<String> for SharedName {
    fn from(text: String) -> SharedName {
        SharedName::new(Arc::from(text))
    }
}

impl From<SharedName> for Arc<str> {
    /// The allocation itself when the name is all of it, else a copy.
    fn from(name: SharedName) -> Arc<str> {
        if name.start == 0 {
            name.text
        } else {
            Arc::from(name.as_str())
        }
    }
}

impl PartialEq for SharedName {
    fn eq(&self, other: &SharedName) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedName {}

impl PartialEq<str> for SharedName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedName {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for SharedName {
    fn partial_cmp(&self, other: &SharedName) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedName {
    fn cmp(&self, other: &SharedName) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for SharedName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for SharedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for SharedName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suffix_shares_the_allocation_and_reads_as_its_text() {
        let text: Arc<str> = Arc::from("_open");
        let name = SharedName::new(Arc::clone(&text));
        let c_name = name.suffix(1).expect("a boundary");
        assert_eq!(c_name, "open");
        assert!(c_name.shares_allocation_with(&text));
        assert_eq!(name.suffix(5).unwrap(), "");
        assert!(name.suffix(6).is_none());
    }

    #[test]
    fn a_suffix_never_splits_a_character() {
        let name = SharedName::from("_é");
        assert!(name.suffix(2).is_none());
        assert_eq!(name.suffix(1).unwrap(), "é");
    }

    #[test]
    fn comparison_and_hashing_follow_the_text() {
        use std::collections::HashSet;
        let a = SharedName::from("xopen").suffix(1).unwrap();
        let b = SharedName::from("open");
        assert_eq!(a, b);
        let set: HashSet<SharedName> = [a, b].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert!(set.contains("open"));
        let whole: Arc<str> = SharedName::from("whole").into();
        assert_eq!(&*whole, "whole");
    }
}
