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
