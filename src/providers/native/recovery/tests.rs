use super::super::code_map::{CodeMap, CodeRegion};
use super::claims::Claims;

fn map(bytes: &[u8]) -> CodeMap<'_> {
    CodeMap::from_regions(vec![CodeRegion {
        address: 0x1000,
        end: 0x1000 + bytes.len() as u64,
        bytes,
        section: ".text",
    }])
}

#[test]
fn claims_find_the_next_unclaimed_byte_across_words() {
    let bytes = [0u8; 300];
    let code = map(&bytes);
    let mut claims = Claims::new(&code);
    assert_eq!(claims.next_unclaimed(0x1000), Some(0x1000));
    claims.claim_span(0x1000, 0x1000 + 130);
    assert!(claims.is_claimed(0x1000 + 129));
    assert!(!claims.is_claimed(0x1000 + 130));
    assert_eq!(claims.next_unclaimed(0x1000), Some(0x1000 + 130));
    claims.claim_span(0x1000 + 130, 0x1000 + 300);
    assert_eq!(claims.next_unclaimed(0x1005), Some(0x1000 + 300));
    assert_eq!(claims.next_unclaimed(0x2000), None);
    // A span past the region is clipped, never out of bounds.
    claims.claim_span(0x0f00, 0x9000);
}
