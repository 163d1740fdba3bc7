//! serde models of the radare2 5.7.4 JSON rea reads. Every field is
//! optional and lenient: a missing field or one of an unexpected type reads
//! as `None`, and a list item that is not an object is skipped, so odd
//! output degrades the answer instead of failing it (and never panics).
//! Only output that is not JSON at all is an error.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::Radare2Error;

/// radare2's "no address" (`UT64_MAX`), used for absent jump targets.
const NO_ADDRESS: u64 = u64::MAX;

/// Reads `T` from `value`, or `None` when the value has another shape.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}

/// An address field: absent, mistyped and `UT64_MAX` all read as `None`.
fn address<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(lenient::<D, u64>(d)?.filter(|&a| a != NO_ADDRESS))
}

/// A list field whose odd items are skipped.
fn items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(d)?;
    Ok(match value {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// Parses a command answer that should be a JSON array. Blank output (what
/// radare2 prints when it has nothing to say) is an empty list.
pub(crate) fn parse_list<T: DeserializeOwned>(
    command: &str,
    text: &str,
) -> Result<Vec<T>, Radare2Error> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    match parse_value(command, text)? {
        Value::Array(items) => Ok(items
            .into_iter()
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect()),
        other => Err(bad_output(
            command,
            format!("expected a JSON array, got {}", kind_of(&other)),
        )),
    }
}

/// Parses a command answer that should be one JSON object.
pub(crate) fn parse_object<T: DeserializeOwned>(
    command: &str,
    text: &str,
) -> Result<T, Radare2Error> {
    let value = parse_value(command, text)?;
    if !value.is_object() {
        return Err(bad_output(
            command,
            format!("expected a JSON object, got {}", kind_of(&value)),
        ));
    }
    serde_json::from_value(value).map_err(|e| bad_output(command, e.to_string()))
}

fn parse_value(command: &str, text: &str) -> Result<Value, Radare2Error> {
    serde_json::from_str(text.trim()).map_err(|e| bad_output(command, format!("not JSON: {e}")))
}

fn bad_output(command: &str, reason: String) -> Radare2Error {
    Radare2Error::BadOutput {
        command: command.to_string(),
        reason,
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `?Vj`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct VersionJson {
    #[serde(default, deserialize_with = "lenient")]
    pub version: Option<String>,
}

/// One item of `aflj` / `afij`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct FunctionJson {
    #[serde(default, deserialize_with = "address")]
    pub offset: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    /// `maxbound - minbound`: spans unrelated code when blocks are far apart.
    #[serde(default, deserialize_with = "lenient")]
    pub size: Option<u64>,
    /// Sum of the basic blocks' sizes.
    #[serde(default, deserialize_with = "lenient")]
    pub realsz: Option<u64>,
}

/// One item of `isj`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct SymbolJson {
    #[serde(default, deserialize_with = "address")]
    pub vaddr: Option<u64>,
    /// The symbol as the file spells it (with `bin.demangle=false`).
    #[serde(default, deserialize_with = "lenient")]
    pub realname: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub is_imported: Option<bool>,
}

/// One item of `afbj`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct BlockJson {
    #[serde(default, deserialize_with = "address")]
    pub addr: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub size: Option<u64>,
    /// Taken branch, or the next block when the block just falls through.
    #[serde(default, deserialize_with = "address")]
    pub jump: Option<u64>,
    /// The not-taken side of a conditional branch.
    #[serde(default, deserialize_with = "address")]
    pub fail: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub ninstr: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub switch_op: Option<SwitchJson>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct SwitchJson {
    #[serde(default, deserialize_with = "items")]
    pub cases: Vec<CaseJson>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct CaseJson {
    #[serde(default, deserialize_with = "address")]
    pub jump: Option<u64>,
}

/// One instruction of `pdj`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct OpJson {
    #[serde(default, deserialize_with = "address")]
    pub offset: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub size: Option<u64>,
    /// Hex of the instruction bytes.
    #[serde(default, deserialize_with = "lenient")]
    pub bytes: Option<String>,
    /// The instruction text with plain numbers (`disasm` has flag names).
    #[serde(default, deserialize_with = "lenient")]
    pub opcode: Option<String>,
    /// radare2's operation type: `call`, `cjmp`, `ircall`, `ret`, `lea`, …
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "address")]
    pub jump: Option<u64>,
    #[serde(default, deserialize_with = "items")]
    pub refs: Vec<RefJson>,
}

/// One reference of a `pdj` instruction.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct RefJson {
    #[serde(default, deserialize_with = "address")]
    pub addr: Option<u64>,
    /// `CODE`, `CALL`, `DATA`, `STRING`.
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// `r--`, `-w-`, `--x`.
    #[serde(default, deserialize_with = "lenient")]
    pub perm: Option<String>,
}

/// One item of `iSj`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct SectionJson {
    #[serde(default, deserialize_with = "address")]
    pub vaddr: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub vsize: Option<u64>,
    /// `-r-x`; `----` for sections that are not loaded (`.comment`).
    #[serde(default, deserialize_with = "lenient")]
    pub perm: Option<String>,
}

/// One item of `axtj`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct XrefJson {
    #[serde(default, deserialize_with = "address")]
    pub from: Option<u64>,
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub perm: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub opcode: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_fields_and_items_degrade_instead_of_failing() {
        let text = r#"[
            {"offset": 4096, "name": "sym.a", "size": "big", "realsz": -3},
            {"offset": 18446744073709551615, "name": 7},
            "not an object",
            {"offset": 1e300},
            {}
        ]"#;
        let fns: Vec<FunctionJson> = parse_list("aflj", text).unwrap();
        assert_eq!(fns.len(), 4);
        assert_eq!(fns[0].offset, Some(4096));
        assert_eq!(fns[0].name.as_deref(), Some("sym.a"));
        assert_eq!((fns[0].size, fns[0].realsz), (None, None));
        assert_eq!((fns[1].offset, fns[1].name.as_deref()), (None, None));
        assert_eq!(fns[2].offset, None);
    }

    #[test]
    fn blank_is_empty_and_garbage_is_a_typed_error() {
        assert!(
            parse_list::<FunctionJson>("aflj", " \n")
                .unwrap()
                .is_empty()
        );
        let err = parse_list::<FunctionJson>("aflj", "ERROR: no").unwrap_err();
        assert!(matches!(err, Radare2Error::BadOutput { .. }));
        let err = parse_list::<FunctionJson>("aflj", "{}").unwrap_err();
        assert!(err.to_string().contains("expected a JSON array"), "{err}");
        assert!(parse_object::<VersionJson>("?Vj", "[]").is_err());
        let v: VersionJson = parse_object("?Vj", r#"{"version": 5}"#).unwrap();
        assert_eq!(v.version, None);
    }

    #[test]
    fn nested_lists_skip_odd_items() {
        let ops: Vec<OpJson> = parse_list(
            "pdj",
            r#"[{"offset": 1, "refs": [{"addr": 2, "type": "DATA"}, 5, {"addr": "x"}]},
                {"offset": 2, "refs": "none", "jump": 18446744073709551615}]"#,
        )
        .unwrap();
        assert_eq!(ops[0].refs.len(), 2);
        assert_eq!(ops[0].refs[0].addr, Some(2));
        assert_eq!(ops[0].refs[1].addr, None);
        assert!(ops[1].refs.is_empty());
        assert_eq!(ops[1].jump, None);
    }
}
