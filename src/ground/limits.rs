//! The one rule every set of caller-chosen limits follows: each value is at
//! least 1 and at most its hard maximum, and a value outside is refused,
//! never clamped.

/// The first `(field, value, max)` whose value is zero or over its maximum.
pub fn out_of_range(
    fields: impl IntoIterator<Item = (&'static str, u64, u64)>,
) -> Option<(&'static str, u64, u64)> {
    fields
        .into_iter()
        .find(|&(_, value, max)| value == 0 || value > max)
}

#[cfg(test)]
mod tests {
    use super::out_of_range;

    #[test]
    fn zero_and_over_the_maximum_are_out_of_range() {
        assert_eq!(out_of_range([("a", 1, 1), ("b", 5, 9)]), None);
        assert_eq!(out_of_range([("a", 1, 1), ("b", 0, 9)]), Some(("b", 0, 9)));
        assert_eq!(out_of_range([("a", 2, 1), ("b", 0, 9)]), Some(("a", 2, 1)));
    }
}
