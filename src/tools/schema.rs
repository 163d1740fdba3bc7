//! Input schemas as `tools/list` serves them: what schemars derives from
//! the typed inputs, less what a model pays to read and no client needs —
//! the `$schema` URI, the Rust type's title and doc, `null` defaults and
//! nullable types (an omitted member is the same as `null`), integer
//! formats, and enums spelled as `oneOf` constants (kept as `enum`, their
//! value descriptions folded into one line). Validation is unchanged: the
//! typed input still rejects what it rejected.

use serde_json::{Map, Value};

/// The served form of a derived schema.
pub fn lean(schema: Map<String, Value>) -> Map<String, Value> {
    let mut schema = Value::Object(schema);
    if let Value::Object(top) = &mut schema {
        for noise in ["$schema", "title", "description"] {
            top.remove(noise);
        }
    }
    simplify(&mut schema);
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Simplifies one schema object and every schema inside it.
fn simplify(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::String(format)) = map.get("format")
        && matches!(
            format.as_str(),
            "uint" | "uint8" | "uint16" | "uint32" | "uint64"
        )
    {
        map.remove("format");
        if map.get("minimum") == Some(&Value::from(0)) {
            map.remove("minimum");
        }
    }
    if let Some(Value::Array(types)) = map.get("type")
        && types.len() == 2
        && types.contains(&Value::from("null"))
        && let Some(other) = types.iter().find(|t| *t != "null").cloned()
    {
        map.insert("type".into(), other);
    }
    if let Some(Value::Array(choices)) = map.get("anyOf")
        && choices.len() == 2
        && let Some(null) = choices
            .iter()
            .position(|c| c.get("type") == Some(&Value::from("null")))
        && let Value::Object(other) = choices[1 - null].clone()
    {
        map.remove("anyOf");
        for (k, v) in other {
            map.entry(k).or_insert(v);
        }
    }
    fold_constants(map);
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(simplify);
        }
    }
    // A shared object type's Rust doc repeats what the property that uses
    // it says.
    if let Some(Value::Object(definitions)) = map.get_mut("$defs") {
        for definition in definitions.values_mut() {
            if definition.get("type") == Some(&Value::from("object"))
                && let Value::Object(definition) = definition
            {
                definition.remove("description");
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            simplify(child);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(simplify);
        }
    }
}

/// `oneOf` of string constants becomes `enum`, the constants' descriptions
/// one line: `a: what a means; b: what b means`.
fn fold_constants(map: &mut Map<String, Value>) {
    let Some(Value::Array(choices)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut meanings = Vec::new();
    for choice in choices {
        let Some(constant) = choice.get("const").and_then(Value::as_str) else {
            return;
        };
        values.push(Value::from(constant));
        if let Some(meaning) = choice.get("description").and_then(Value::as_str) {
            meanings.push(format!("{constant}: {}", meaning.trim_end_matches('.')));
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), Value::from("string"));
    map.insert("enum".into(), Value::Array(values));
    if !meanings.is_empty() {
        let line = meanings.join("; ");
        let description = match map.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own} {line}."),
            None => format!("{line}."),
        };
        map.insert("description".into(), Value::from(description));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lean_of(value: Value) -> Value {
        Value::Object(lean(value.as_object().unwrap().clone()))
    }

    #[test]
    fn noise_goes_and_meaning_stays() {
        let derived = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "SearchInput", "description": "Rust doc", "type": "object",
            "additionalProperties": false, "required": ["pattern"],
            "$defs": {"SearchMode": {"oneOf": [
                {"const": "literal", "description": "Plain text.", "type": "string"},
                {"const": "regex", "description": "A regular expression.", "type": "string"}]}},
            "properties": {
                "pattern": {"type": "string", "description": "Text to find."},
                "limit": {"default": null, "format": "uint32", "minimum": 1, "maximum": 100,
                          "type": ["integer", "null"]},
                "offset": {"default": null, "format": "uint64", "minimum": 0, "type": ["integer", "null"]},
                "mode": {"anyOf": [{"$ref": "#/$defs/SearchMode"}, {"type": "null"}],
                         "default": null, "description": "How to match."},
                "format": {"type": "string", "description": "a property named like a keyword"},
                "approved": {"default": false, "type": "boolean"}
            }
        });
        assert_eq!(
            lean_of(derived),
            json!({
                "type": "object", "additionalProperties": false, "required": ["pattern"],
                "$defs": {"SearchMode": {"type": "string", "enum": ["literal", "regex"],
                          "description": "literal: Plain text; regex: A regular expression."}},
                "properties": {
                    "pattern": {"type": "string", "description": "Text to find."},
                    "limit": {"minimum": 1, "maximum": 100, "type": "integer"},
                    "offset": {"type": "integer"},
                    "mode": {"$ref": "#/$defs/SearchMode", "description": "How to match."},
                    "format": {"type": "string", "description": "a property named like a keyword"},
                    "approved": {"default": false, "type": "boolean"}
                }
            })
        );
    }
}
