//! Sentences about what an analysis could not do, folded by kind.
//!
//! A hostile file can make one kind of problem happen once per section,
//! table entry or symbol: 200,000 executable sections past the code budget
//! must not become 200,000 sentences in every answer that carries the
//! inventory. [`Limitations`] keeps each kind once, with how often it
//! happened and its first instance, and at most [`MAX_KINDS`] kinds (then
//! one sentence counts the rest). Identical sentences fold the same way, so
//! a reader that still says one sentence per occurrence is bounded too.
//!
//! Every limitation list the native provider hands out passes through
//! here, so its length is bounded by the number of kinds, not by the file.

/// Distinct kinds (or sentences) kept; the rest are only counted.
pub const MAX_KINDS: usize = 32;

/// Most characters of an instance description kept (it may quote a name
/// from the file, already excerpted by the caller; this bounds the rest).
const MAX_INSTANCE_CHARS: usize = 240;

/// Limitations, each kind once.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Limitations {
    kinds: Vec<Kind>,
    /// Occurrences of kinds past [`MAX_KINDS`].
    omitted: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Kind {
    /// What happened, phrased for any count ("executable section(s) past
    /// the code budget were not swept"), or a whole sentence said once.
    what: String,
    /// The first occurrence's details; `None` for a plain sentence.
    first: Option<String>,
    count: usize,
}

impl Limitations {
    pub fn new() -> Limitations {
        Limitations::default()
    }

    /// One occurrence of a kind that may repeat. `instance` describes this
    /// occurrence and is only built for the first one.
    pub fn occurrence(&mut self, what: &str, instance: impl FnOnce() -> String) {
        self.count_or_add(what, true, || {
            Some(crate::ground::text::excerpt(
                &instance(),
                MAX_INSTANCE_CHARS,
            ))
        });
    }

    /// A sentence; the same sentence again only counts.
    pub fn note(&mut self, sentence: impl Into<String>) {
        let sentence = sentence.into();
        self.count_or_add(&sentence, false, || None);
    }

    /// Counts one more of the kind `what` (one with a first instance, or a
    /// plain sentence), or adds it with `first` while there is room.
    fn count_or_add(
        &mut self,
        what: &str,
        instanced: bool,
        first: impl FnOnce() -> Option<String>,
    ) {
        if let Some(kind) = self
            .kinds
            .iter_mut()
            .find(|kind| kind.first.is_some() == instanced && kind.what == what)
        {
            kind.count += 1;
            return;
        }
        if self.kinds.len() >= MAX_KINDS {
            self.omitted += 1;
            return;
        }
        self.kinds.push(Kind {
            what: what.to_owned(),
            first: first(),
            count: 1,
        });
    }

    /// Notes every sentence of `sentences` (see [`Limitations::note`]).
    pub fn extend(&mut self, sentences: impl IntoIterator<Item = String>) {
        for sentence in sentences {
            self.note(sentence);
        }
    }

    /// Adds another list's kinds (counts of the same kind add up).
    pub fn merge(&mut self, other: &Limitations) {
        for kind in &other.kinds {
            let existing = self.kinds.iter().position(|own| {
                own.first.is_some() == kind.first.is_some() && own.what == kind.what
            });
            match existing {
                Some(at) => self.kinds[at].count += kind.count,
                None if self.kinds.len() < MAX_KINDS => self.kinds.push(kind.clone()),
                None => self.omitted += kind.count,
            }
        }
        self.omitted += other.omitted;
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.omitted == 0
    }

    /// The sentences, one per kind, in the order kinds first occurred.
    pub fn sentences(&self) -> Vec<String> {
        let mut out: Vec<String> = self.kinds.iter().map(Kind::sentence).collect();
        if self.omitted > 0 {
            out.push(format!(
                "{} more limitation(s) of other kinds are not listed",
                self.omitted
            ));
        }
        out
    }
}

impl Kind {
    fn sentence(&self) -> String {
        match (&self.first, self.count) {
            (Some(first), 1) => format!("{}: {first}", self.what),
            (Some(first), count) => format!("{count} {}; first: {first}", self.what),
            (None, 1) => self.what.clone(),
            (None, count) => format!("{} ({count} times)", self.what),
        }
    }
}

impl FromIterator<String> for Limitations {
    fn from_iter<I: IntoIterator<Item = String>>(sentences: I) -> Self {
        let mut limitations = Limitations::new();
        limitations.extend(sentences);
        limitations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_kinds_fold_into_one_sentence_with_a_count() {
        let mut limitations = Limitations::new();
        for index in 0..200_000 {
            limitations.occurrence("executable section(s) were not swept", || {
                format!(".text{index}")
            });
        }
        limitations.note("the file has no `.eh_frame`");
        limitations.note("the file has no `.eh_frame`");
        assert_eq!(
            limitations.sentences(),
            [
                "200000 executable section(s) were not swept; first: .text0",
                "the file has no `.eh_frame` (2 times)",
            ]
        );
    }

    #[test]
    fn distinct_sentences_are_capped_and_counted() {
        let limitations: Limitations = (0..100).map(|i| format!("sentence {i}")).collect();
        let sentences = limitations.sentences();
        assert_eq!(sentences.len(), MAX_KINDS + 1);
        assert_eq!(
            sentences.last().map(String::as_str),
            Some("68 more limitation(s) of other kinds are not listed")
        );
    }

    #[test]
    fn a_single_occurrence_reads_as_a_sentence_and_instances_are_bounded() {
        let mut limitations = Limitations::new();
        limitations.occurrence("a table could not be read", || "x".repeat(10_000));
        let sentence = &limitations.sentences()[0];
        assert!(sentence.starts_with("a table could not be read: xxx"));
        assert!(sentence.chars().count() < 300, "{}", sentence.len());
    }

    #[test]
    fn merging_adds_counts_of_the_same_kind() {
        let mut left = Limitations::new();
        left.occurrence("kind", || "a".into());
        let mut right = Limitations::new();
        right.occurrence("kind", || "b".into());
        right.note("once");
        left.merge(&right);
        assert_eq!(left.sentences(), ["2 kind; first: a", "once"]);
    }
}
