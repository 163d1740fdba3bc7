//! A bounded alignment of two sequences into hunks of differences.
//!
//! The common prefix and suffix are matched first; the middle is aligned
//! by longest common subsequence only when it is small enough
//! ([`MAX_CELLS`]), otherwise it is reported as one hunk and the result says
//! the alignment was not refined. Time and memory stay bounded for any
//! listing `analyze_function` can produce.

/// Largest middle (left × right elements) aligned exactly: 4 MiB of u16.
pub const MAX_CELLS: usize = 2 << 20;

/// One run of differences: `left[left_start..left_start + left_len]` was
/// replaced by `right[right_start..right_start + right_len]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub left_start: usize,
    pub left_len: usize,
    pub right_start: usize,
    pub right_len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alignment {
    pub hunks: Vec<Hunk>,
    /// Elements matched on both sides.
    pub matched: usize,
    /// False when the middle was too large to align exactly.
    pub refined: bool,
}

/// Aligns `left` with `right`.
pub fn align<T: PartialEq>(left: &[T], right: &[T]) -> Alignment {
    let prefix = left.iter().zip(right).take_while(|(a, b)| a == b).count();
    let suffix = left[prefix..]
        .iter()
        .rev()
        .zip(right[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let l = &left[prefix..left.len() - suffix];
    let r = &right[prefix..right.len() - suffix];
    let mut alignment = Alignment {
        hunks: Vec::new(),
        matched: prefix + suffix,
        refined: true,
    };
    if l.is_empty() && r.is_empty() {
        return alignment;
    }
    let fits = l.len() < usize::from(u16::MAX)
        && r.len() < usize::from(u16::MAX)
        && l.len().saturating_mul(r.len()) <= MAX_CELLS;
    if l.is_empty() || r.is_empty() || !fits {
        alignment.refined = fits || l.is_empty() || r.is_empty();
        alignment.hunks.push(Hunk {
            left_start: prefix,
            left_len: l.len(),
            right_start: prefix,
            right_len: r.len(),
        });
        return alignment;
    }
    let (hunks, matched) = lcs_hunks(l, r);
    alignment.matched += matched;
    alignment.hunks = hunks
        .into_iter()
        .map(|h| Hunk {
            left_start: h.left_start + prefix,
            right_start: h.right_start + prefix,
            ..h
        })
        .collect();
    alignment
}

/// Exact LCS alignment of two short sequences.
fn lcs_hunks<T: PartialEq>(l: &[T], r: &[T]) -> (Vec<Hunk>, usize) {
    let width = r.len() + 1;
    // table[i * width + j]: LCS length of l[i..] and r[j..].
    let mut table = vec![0u16; (l.len() + 1) * width];
    for i in (0..l.len()).rev() {
        for j in (0..r.len()).rev() {
            table[i * width + j] = if l[i] == r[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j, mut matched) = (0, 0, 0);
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut open: Option<Hunk> = None;
    while i < l.len() || j < r.len() {
        if i < l.len() && j < r.len() && l[i] == r[j] {
            hunks.extend(open.take());
            matched += 1;
            i += 1;
            j += 1;
            continue;
        }
        let hunk = open.get_or_insert(Hunk {
            left_start: i,
            left_len: 0,
            right_start: j,
            right_len: 0,
        });
        let take_left =
            j == r.len() || (i < l.len() && table[(i + 1) * width + j] >= table[i * width + j + 1]);
        if take_left {
            hunk.left_len += 1;
            i += 1;
        } else {
            hunk.right_len += 1;
            j += 1;
        }
    }
    hunks.extend(open);
    (hunks, matched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hunk(left_start: usize, left_len: usize, right_start: usize, right_len: usize) -> Hunk {
        Hunk {
            left_start,
            left_len,
            right_start,
            right_len,
        }
    }

    #[test]
    fn equal_sequences_have_no_hunks() {
        let a = align(&[1, 2, 3], &[1, 2, 3]);
        assert_eq!((a.hunks.len(), a.matched, a.refined), (0, 3, true));
    }

    #[test]
    fn insertions_replacements_and_deletions_become_hunks() {
        let a = align(&[1, 2, 3, 4, 5], &[1, 9, 3, 4, 7, 5, 6]);
        assert_eq!(
            a.hunks,
            [hunk(1, 1, 1, 1), hunk(4, 0, 4, 1), hunk(5, 0, 6, 1)]
        );
        assert_eq!(a.matched, 4);
        let b = align(&[1, 2, 3], &[1]);
        assert_eq!(b.hunks, [hunk(1, 2, 1, 0)]);
    }

    #[test]
    fn a_huge_middle_is_one_unrefined_hunk() {
        let n = 3000;
        let left: Vec<u32> = (0..n).collect();
        let right: Vec<u32> = (0..n).map(|i| i + n).collect();
        let a = align(&left, &right);
        assert_eq!(a.hunks, [hunk(0, 3000, 0, 3000)]);
        assert!(!a.refined);
    }

    proptest! {
        /// Hunks never overlap, cover exactly the unmatched elements, and
        /// what lies between them is equal on both sides.
        #[test]
        fn hunks_account_for_every_element(
            left in proptest::collection::vec(0u8..4, 0..40),
            right in proptest::collection::vec(0u8..4, 0..40),
        ) {
            let a = align(&left, &right);
            let (mut i, mut j) = (0, 0);
            for h in &a.hunks {
                prop_assert!(h.left_start >= i && h.right_start >= j);
                prop_assert_eq!(h.left_start - i, h.right_start - j);
                prop_assert_eq!(&left[i..h.left_start], &right[j..h.right_start]);
                prop_assert!(h.left_len + h.right_len > 0);
                i = h.left_start + h.left_len;
                j = h.right_start + h.right_len;
            }
            prop_assert_eq!(&left[i..], &right[j..]);
            let unmatched: usize = a.hunks.iter().map(|h| h.left_len).sum();
            prop_assert_eq!(a.matched + unmatched, left.len());
            prop_assert_eq!(a.hunks.is_empty(), left == right);
        }
    }
}
