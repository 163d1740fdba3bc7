//! Range-minimum queries over a fixed array of ranks, and the `k` smallest
//! values of a range in `O(k log n)`.
//!
//! Completion needs the first hundred matches in code-point order, while the
//! matches form a contiguous range in key order. Walking either order can
//! touch millions of entries (every `0x…` address sorts before `G…`, so the
//! matches of `g` start a million ranks in); this tree answers in a few
//! thousand steps whatever the distribution.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A bottom-up segment tree of positions, each node holding the position of
/// the minimum value in its span.
#[derive(Debug, Default)]
pub struct MinTree {
    values: Vec<u32>,
    /// `nodes[n + i] = i`; `nodes[p]` = argmin of its two children.
    nodes: Vec<u32>,
}

impl MinTree {
    pub fn new(values: Vec<u32>) -> MinTree {
        let n = values.len();
        let mut nodes = vec![0u32; 2 * n];
        for (i, node) in nodes[n..].iter_mut().enumerate() {
            *node = i as u32;
        }
        for p in (1..n).rev() {
            nodes[p] = Self::pick(&values, nodes[2 * p], nodes[2 * p + 1]);
        }
        MinTree { values, nodes }
    }

    fn pick(values: &[u32], a: u32, b: u32) -> u32 {
        if values[b as usize] < values[a as usize] {
            b
        } else {
            a
        }
    }

    /// Position of the minimum in `lo..hi` (non-empty).
    fn argmin(&self, lo: usize, hi: usize) -> u32 {
        let n = self.values.len();
        let (mut l, mut r) = (lo + n, hi + n);
        let mut best = lo as u32;
        while l < r {
            if l & 1 == 1 {
                best = Self::pick(&self.values, best, self.nodes[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = Self::pick(&self.values, best, self.nodes[r]);
            }
            l >>= 1;
            r >>= 1;
        }
        best
    }

    /// The `k` smallest values in `lo..hi`, ascending.
    pub fn smallest(&self, lo: usize, hi: usize, k: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(k.min(hi.saturating_sub(lo)));
        let mut heap = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<_>, lo: usize, hi: usize| {
            if lo < hi {
                let at = self.argmin(lo, hi);
                heap.push(Reverse((self.values[at as usize], at as usize, lo, hi)));
            }
        };
        push(&mut heap, lo, hi);
        while out.len() < k {
            let Some(Reverse((value, at, lo, hi))) = heap.pop() else {
                break;
            };
            out.push(value);
            push(&mut heap, lo, at);
            push(&mut heap, at + 1, hi);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn smallest_agrees_with_sorting(
            values in proptest::collection::vec(any::<u32>(), 1..300),
            a in any::<usize>(),
            b in any::<usize>(),
            k in 0usize..120,
        ) {
            let n = values.len();
            let (lo, hi) = { let (x, y) = (a % (n + 1), b % (n + 1)); (x.min(y), x.max(y)) };
            let tree = MinTree::new(values.clone());
            let mut expected = values[lo..hi].to_vec();
            expected.sort_unstable();
            expected.truncate(k);
            prop_assert_eq!(tree.smallest(lo, hi, k), expected);
        }
    }
}
