//! Which code bytes recovery has already given to a procedure: one bit per
//! byte of each executable region, so memory is an eighth of the code.

use super::super::code_map::CodeMap;

/// Claimed bytes of every region of one [`CodeMap`].
pub(super) struct Claims {
    /// `(region start, region end, bits)`, sorted by start.
    regions: Vec<(u64, u64, Vec<u64>)>,
}

impl Claims {
    pub(super) fn new(code: &CodeMap<'_>) -> Claims {
        let regions = code
            .regions()
            .iter()
            .map(|region| {
                let len = region.bytes.len();
                (
                    region.address,
                    region.address + len as u64,
                    vec![0u64; len.div_ceil(64)],
                )
            })
            .collect();
        Claims { regions }
    }

    /// The region holding `address` and the address's bit offset in it.
    fn locate(&self, address: u64) -> Option<(usize, usize)> {
        let index = self
            .regions
            .partition_point(|&(start, _, _)| start <= address)
            .checked_sub(1)?;
        let (start, end, _) = self.regions[index];
        (address < end).then(|| (index, (address - start) as usize))
    }

    pub(super) fn is_claimed(&self, address: u64) -> bool {
        self.locate(address)
            .is_some_and(|(region, bit)| self.regions[region].2[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Claims `[start, end)` in every region it overlaps.
    pub(super) fn claim_span(&mut self, start: u64, end: u64) {
        let first = self
            .regions
            .partition_point(|&(_, region_end, _)| region_end <= start);
        for index in first..self.regions.len() {
            let (region_start, region_end, _) = self.regions[index];
            if region_start >= end {
                break;
            }
            self.claim(start.max(region_start), end.min(region_end));
        }
    }

    /// Claims `[start, end)`, clipped to the region holding `start`.
    pub(super) fn claim(&mut self, start: u64, end: u64) {
        let Some((region, first)) = self.locate(start) else {
            return;
        };
        let (region_start, region_end, bits) = &mut self.regions[region];
        let last = (end.min(*region_end).max(start) - *region_start) as usize;
        set_bits(bits, first, last);
    }

    /// The first unclaimed address at or after `address` within its
    /// region, or the region's end.
    pub(super) fn next_unclaimed(&self, address: u64) -> Option<u64> {
        let (region, mut bit) = self.locate(address)?;
        let (start, end, bits) = &self.regions[region];
        let len = (end - start) as usize;
        while bit < len {
            let within = bit % 64;
            let ones = (bits[bit / 64] >> within).trailing_ones() as usize;
            if ones < 64 - within {
                bit += ones;
                break;
            }
            // The rest of this word is claimed: go on with the next one.
            bit += 64 - within;
        }
        Some(start + bit.min(len) as u64)
    }
}

/// Sets bits `[first, last)` of `bits`, a word at a time.
fn set_bits(bits: &mut [u64], first: usize, last: usize) {
    let mut bit = first;
    while bit < last {
        let within = bit % 64;
        let count = (64 - within).min(last - bit);
        let mask = if count == 64 {
            u64::MAX
        } else {
            ((1u64 << count) - 1) << within
        };
        if let Some(word) = bits.get_mut(bit / 64) {
            *word |= mask;
        }
        bit += count;
    }
}

#[cfg(test)]
mod tests {
    use super::set_bits;

    #[test]
    fn word_wise_setting_is_bit_wise_setting() {
        for first in 0..200 {
            for last in first..200 {
                let mut fast = vec![0u64; 4];
                set_bits(&mut fast, first, last);
                let mut slow = vec![0u64; 4];
                for bit in first..last {
                    slow[bit / 64] |= 1 << (bit % 64);
                }
                assert_eq!(fast, slow, "[{first}, {last})");
            }
        }
    }
}
