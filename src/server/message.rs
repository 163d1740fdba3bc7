//! A JSON-RPC message as a client sent it, checked before the MCP library
//! sees it (hostile-input finding F9). The library leaves some malformed
//! input unanswered or answers it misleadingly ("method not found" for a
//! field of the wrong type, "session ID is required" for an `initialize`
//! it could not read); both transports answer these here instead: the
//! stdio guard ([`super::stdio`]) and the HTTP front ([`super::http`]).

use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::session::evidence::schema_error;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// The methods rea answers: "method not found" for one of them means the
/// request did not fit the method's schema.
pub const SERVED: [&str; 9] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "subscriptions/listen",
];

/// A JSON-RPC error answer.
pub fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The message in `bytes`, or the error that answers it: not JSON
/// (`-32700`, id null), not one message object (`-32600`, id null),
/// `params` that is not an object (`-32600` with the request's id), or
/// `params` that do not fit a method rea serves (`-32602` with the id).
/// Messages quote nothing of the input.
pub fn check(bytes: &[u8]) -> Result<Value, Value> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        error(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: {}", schema_error(&e)),
        )
    })?;
    if !value.is_object() {
        return Err(error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid request: send one JSON-RPC message (an object) at a time; MCP has no batches"
                .to_owned(),
        ));
    }
    envelope(bytes, &value)?;
    let (Some(method), Some(id)) = (value.get("method").and_then(Value::as_str), value.get("id"))
    else {
        return Ok(value);
    };
    // `null` is taken as no params, as the MCP library takes it.
    let Some(params) = value.get("params").filter(|p| !p.is_null()) else {
        return Ok(value);
    };
    if !params.is_object() {
        return Err(error(
            id.clone(),
            INVALID_REQUEST,
            format!("Invalid request: `params` of {method} must be an object"),
        ));
    }
    let fits = match method {
        "initialize" => fits::<InitializeRequestParams>(params),
        "tools/call" => fits::<CallToolRequestParams>(params),
        "prompts/get" => fits::<GetPromptRequestParams>(params),
        "completion/complete" => fits::<CompleteRequestParams>(params),
        _ => Ok(()),
    };
    match fits {
        Ok(()) => Ok(value),
        Err(why) => Err(error(
            id.clone(),
            INVALID_PARAMS,
            format!("Invalid params for {method}: {why} (see the method's schema)"),
        )),
    }
}

/// The members every JSON-RPC 2.0 message has, each at most once (a
/// duplicated member makes the message ambiguous; the MCP library refuses
/// it without saying which request it was).
#[derive(serde::Deserialize)]
#[allow(dead_code)] // read only for their presence and uniqueness
struct Envelope {
    jsonrpc: Option<serde::de::IgnoredAny>,
    id: Option<serde::de::IgnoredAny>,
    method: Option<serde::de::IgnoredAny>,
    params: Option<serde::de::IgnoredAny>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

/// Whether `value` (read from `bytes`) is a JSON-RPC 2.0 request,
/// notification or response; if not, the `-32600` that answers it, with the
/// message's id whenever one can be read (a string or a number), so a
/// waiting client is answered.
fn envelope(bytes: &[u8], value: &Value) -> Result<(), Value> {
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let invalid = |why: &str| {
        Err(error(
            id.clone(),
            INVALID_REQUEST,
            format!("Invalid request: {why}"),
        ))
    };
    if serde_json::from_slice::<Envelope>(bytes).is_err() {
        return invalid("a member (jsonrpc, id, method, params, result or error) is given twice");
    }
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    match value.get("method") {
        Some(method) if !method.is_string() => invalid("`method` must be a string"),
        Some(_) => match value.get("id") {
            Some(id) if !(id.is_string() || id.is_number()) => {
                invalid("a request's `id` must be a string or a number")
            }
            _ => Ok(()),
        },
        None if value.get("id").is_none() => {
            invalid("a message without `method` is a response, and a response has an `id`")
        }
        None if value.get("result").is_some() == value.get("error").is_some() => {
            invalid("a response has exactly one of `result` and `error`")
        }
        None => Ok(()),
    }
}

/// Whether `params` reads as `T`; if not, what is wrong, quoting nothing.
fn fits<T: DeserializeOwned>(params: &Value) -> Result<(), String> {
    T::deserialize(params)
        .map(|_| ())
        .map_err(|e| schema_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<(Value, i64)> {
        check(text.as_bytes())
            .err()
            .map(|e| (e["id"].clone(), e["error"]["code"].as_i64().unwrap()))
    }

    #[test]
    fn malformed_messages_get_the_error_that_names_the_problem() {
        assert_eq!(code("not json"), Some((Value::Null, PARSE_ERROR)));
        assert_eq!(code("{\"truncated\":"), Some((Value::Null, PARSE_ERROR)));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Some((Value::Null, INVALID_REQUEST))
        );
        assert_eq!(code("5"), Some((Value::Null, INVALID_REQUEST)));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}"#),
            Some((json!(7), INVALID_REQUEST))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#),
            Some((json!(3), INVALID_PARAMS))
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":5}}"#
            ),
            Some((json!("i"), INVALID_PARAMS))
        );
    }

    #[test]
    fn an_invalid_message_with_an_id_is_answered_with_that_id() {
        for text in [
            r#"{"jsonrpc":"1.0","id":11,"method":"ping"}"#,
            r#"{"id":11,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":11}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":null}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":10,"id":11,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":11,"result":{},"error":{"code":1,"message":"m"}}"#,
        ] {
            assert_eq!(code(text), Some((json!(11), INVALID_REQUEST)), "{text}");
        }
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":"a","method":5}"#),
            Some((json!("a"), INVALID_REQUEST))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            Some((Value::Null, INVALID_REQUEST)),
            "an id that is not a string or number is not echoed"
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":"notifications/initialized","jsonrpc":"2.0"}"#),
            Some((Value::Null, INVALID_REQUEST))
        );
    }

    #[test]
    fn well_formed_messages_pass_whole() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"binary_session","arguments":{},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"trace_crash","arguments":{"crash_signal":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"trace_crash"},"argument":{"name":"document","value":""}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"resources/list","params":{"anything":1}}"#,
        ] {
            let checked = check(text.as_bytes());
            assert!(checked.is_ok(), "{text}: {checked:?}");
        }
    }

    #[test]
    fn answers_quote_nothing_of_the_input() {
        let secret = "s3cr3t-in-a-wrong-place";
        for text in [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":["{secret}"]}}}}"#
            ),
            format!(r#"{{"{secret}""#),
        ] {
            let answer = check(text.as_bytes()).expect_err("refused").to_string();
            assert!(!answer.contains(secret), "{answer}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_pass_as_an_object_or_get_a_bounded_error(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            match check(&bytes) {
                Ok(value) => proptest::prop_assert!(value.is_object()),
                Err(answer) => {
                    let message = answer["error"]["message"].as_str().unwrap_or_default();
                    proptest::prop_assert!(!message.is_empty() && message.len() < 512);
                }
            }
        }

        #[test]
        fn a_misplaced_value_is_never_quoted(value in "[a-z]{12,40}") {
            for text in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":["{value}"]}}}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":{{"{value}":1}}}}}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{{"name":"{value}","arguments":["{value}"]}}}}"#),
            ] {
                let answer = check(text.as_bytes()).expect_err("refused").to_string();
                proptest::prop_assert!(!answer.contains(&value), "{}", answer);
            }
        }
    }
}
