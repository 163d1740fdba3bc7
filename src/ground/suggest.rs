//! "Did you mean" for near misses. Shared with build.rs.

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn closest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let length = word.chars().count();
    candidates
        .into_iter()
        // The distance is at least the length difference, so a word far
        // longer than every candidate (hostile input) is never compared:
        // the edit-distance table is as large as both lengths multiplied.
        .filter(|c| length.abs_diff(c.chars().count()) <= threshold(c))
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|&(d, c)| d > 0 && d <= threshold(c))
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// How many edits still make `candidate` a likely typo.
fn threshold(candidate: &str) -> usize {
    (candidate.chars().count() / 3).max(2)
}

/// `"; did you mean `x`?"` or an empty string.
pub fn hint<'a, I>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    match closest(word, candidates) {
        Some(c) => format!("; did you mean `{c}`?"),
        None => String::new(),
    }
}
