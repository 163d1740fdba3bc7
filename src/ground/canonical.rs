//! RFC 8785 (JCS) canonical JSON for content-addressed Evidence IDs.
//!
//! rea's Evidence holds no floats (times are integer milliseconds), so the
//! canonical form is: object members sorted by the UTF-16 code units of their
//! names, no insignificant whitespace, strings escaped as ECMAScript does
//! (which is what `serde_json` writes: `\b \f \n \r \t`, other controls as
//! lowercase `\u00xx`, everything else literal), integers in plain decimal.
//!
//! Used for Evidence IDs (`ev_`), residual-unknown IDs (`unk_`) and revision
//! digests, and as the byte form of exported evidence bundles, so equal
//! content always has one spelling whatever order members arrived in.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    #[error(
        "Evidence may not contain floating-point numbers ({0}); record times as integer milliseconds"
    )]
    Float(String),
}

/// `value` with every object member whose value is `null` removed, at
/// every depth (array elements stay where they are, nulls included). An
/// absent member and a `null` one mean the same to every reader, and the
/// shorter spelling is what an answer carries.
pub fn without_null_members(value: Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_null_members(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_null_members).collect()),
        other => other,
    }
}

/// The canonical serialization of `value`.
pub fn to_canonical(value: &Value) -> Result<String, CanonicalError> {
    let mut out = String::new();
    write(value, &mut out)?;
    Ok(out)
}

fn write(value: &Value, out: &mut String) -> Result<(), CanonicalError> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
        Value::Number(n) => {
            if n.is_f64() {
                return Err(CanonicalError::Float(n.to_string()));
            }
            out.push_str(&n.to_string());
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                write(member, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// Whether `json` nests arrays and objects deeper than `max` (outside
/// strings, escapes included), found without parsing: checked before any
/// recursive parser sees untrusted JSON.
pub fn nests_deeper_than(json: &[u8], max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn sorts_members_by_utf16_code_units() {
        // U+1F600 sorts after U+FF21 by code point but before it in UTF-16 (D83D < FF21).
        let v = json!({"b": 1, "a": [true, null, "x\n\u{1}"], "\u{1F600}": 2, "\u{FF21}": 3});
        assert_eq!(
            to_canonical(&v).unwrap(),
            "{\"a\":[true,null,\"x\\n\\u0001\"],\"b\":1,\"\u{1F600}\":2,\"\u{FF21}\":3}"
        );
    }

    /// JSON without floats, nested a few levels.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            "\\PC{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("\\PC{0,6}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Serializes with each object's members rotated by `shift`, so the
    /// text carries the same members in another order.
    fn reordered(value: &Value, shift: usize) -> String {
        match value {
            Value::Array(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|i| reordered(i, shift))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Value::Object(map) => {
                let mut members: Vec<String> = map
                    .iter()
                    .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), reordered(v, shift)))
                    .collect();
                if !members.is_empty() {
                    let n = members.len();
                    members.rotate_left(shift % n);
                    members.reverse();
                }
                format!("{{{}}}", members.join(","))
            }
            other => other.to_string(),
        }
    }

    proptest! {
        #[test]
        fn canonical_form_is_stable_under_member_reordering(value in json_value(), shift in 0usize..7) {
            let canonical = to_canonical(&value).unwrap();
            let text = reordered(&value, shift);
            let reparsed: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(&to_canonical(&reparsed).unwrap(), &canonical);
            // Canonical text is a fixed point and means the same value.
            let back: Value = serde_json::from_str(&canonical).unwrap();
            prop_assert_eq!(&back, &value);
            prop_assert_eq!(to_canonical(&back).unwrap(), canonical);
        }
    }

    #[test]
    fn rejects_floats() {
        assert!(to_canonical(&json!({"t": 1.5})).is_err());
        assert_eq!(to_canonical(&json!(-7)).unwrap(), "-7");
    }
}
