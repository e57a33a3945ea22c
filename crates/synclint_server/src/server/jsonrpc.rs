//! JSON-RPC 2.0 messages as the server reads and writes them. A frame's body becomes a request,
//! a notification, a response to one of the server's own requests, or the error response that
//! JSON-RPC 2.0 prescribes for it. A request's id is kept as the client wrote it (any number,
//! however large, a float, or a string) and echoed byte for byte in its response, so that no
//! request goes unanswered for want of an id the server can represent.

use lsp_server::ErrorCode;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request's id, exactly as the client wrote it: a JSON number or string.
#[derive(Debug)]
pub struct RequestId(Box<RawValue>);

impl RequestId {
    /// The id in `raw`, where it is one JSON-RPC allows: a number or a string (`null` is only
    /// the id of a response to a request whose id could not be read).
    fn read(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get();
        let valid = text.starts_with(|c: char| c == '"' || c == '-' || c.is_ascii_digit());
        valid.then(|| RequestId(raw.to_owned()))
    }
}

/// What a frame's body is.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        /// `null` where the request has none.
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to one of the server's own requests: nothing waits for it.
    Response,
    /// Valid JSON that is no message: the error response it gets.
    Invalid(String),
}

/// A body that is no JSON: why.
pub struct NotJson(pub String);

/// The members of a message, each as written; `Some` wherever the member is present, `null`
/// included.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present, whatever its value (`Option`'s own deserialisation reads `null`
/// as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// Reads a frame's body: a message, or (as `Incoming::Invalid`) the error response to valid
/// JSON that is none; `Err` where the body is no JSON at all.
pub fn parse(body: &[u8]) -> Result<Incoming, NotJson> {
    let raw: &RawValue = serde_json::from_slice(body).map_err(|error| NotJson(format!("not JSON: {error}")))?;
    // A struct also deserialises from an array; a message is an object.
    if !raw.get().starts_with('{') {
        let problem = if raw.get().starts_with('[') {
            "a batch: the Language Server Protocol sends one message a frame"
        } else {
            "not a JSON-RPC message: not an object"
        };
        return Ok(invalid(None, problem));
    }
    let members: Members = match serde_json::from_str(raw.get()) {
        Ok(members) => members,
        Err(error) => return Ok(invalid(None, &format!("not a JSON-RPC message: {error}"))),
    };
    Ok(message(&members))
}

fn message(members: &Members) -> Incoming {
    let id = members.id.map(|raw| RequestId::read(raw).ok_or(raw));
    let Some(method) = members.method else {
        // A response (to one of the server's requests) is never answered.
        if id.is_some() && (members.result.is_some() || members.error.is_some()) {
            return Incoming::Response;
        }
        return invalid(id.and_then(Result::ok), "not a JSON-RPC message: no `method`");
    };
    let id = match id {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(raw)) => {
            let problem = format!("a request's id must be a number or a string, not `{}`", raw.get());
            return invalid(None, &problem);
        }
    };
    if members
        .jsonrpc
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        .as_deref()
        != Some("2.0")
    {
        return invalid(id, "not a JSON-RPC 2.0 message: `jsonrpc` must be \"2.0\"");
    }
    let Ok(method) = serde_json::from_str::<String>(method.get()) else {
        return invalid(id, "not a JSON-RPC message: `method` must be a string");
    };
    // `null` params are read as none, as many clients send them.
    let params = match members.params.map(RawValue::get) {
        None | Some("null") => Value::Null,
        Some(text) if text.starts_with(['{', '[']) => match serde_json::from_str(text) {
            Ok(params) => params,
            Err(error) => return invalid(id, &format!("`params` cannot be read: {error}")),
        },
        Some(_) => return invalid(id, "not a JSON-RPC message: `params` must be an object or an array"),
    };
    match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    }
}

fn invalid(id: Option<RequestId>, problem: &str) -> Incoming {
    Incoming::Invalid(error_response(id.as_ref(), ErrorCode::InvalidRequest, problem))
}

#[derive(Serialize)]
struct Response<'a> {
    jsonrpc: &'static str,
    /// `None` is written as `null`.
    id: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObject<'a>>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i32,
    message: &'a str,
}

/// The response to request `id`: its result, or an error.
pub fn response(id: &RequestId, result: Result<Value, (ErrorCode, String)>) -> String {
    match result {
        Ok(result) => to_text(&Response {
            jsonrpc: "2.0",
            id: Some(&id.0),
            result: Some(&result),
            error: None,
        }),
        Err((code, message)) => error_response(Some(id), code, &message),
    }
}

/// An error response to `id`; `None` (written as `null`) where the id could not be read.
pub fn error_response(id: Option<&RequestId>, code: ErrorCode, message: &str) -> String {
    to_text(&Response {
        jsonrpc: "2.0",
        id: id.map(|id| &*id.0),
        result: None,
        error: Some(ErrorObject {
            code: code as i32,
            message,
        }),
    })
}

/// A notification from the server.
pub fn notification(method: &str, params: &Value) -> String {
    #[derive(Serialize)]
    struct Notification<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a Value,
    }
    to_text(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
}

/// A request from the server, with an id of its own.
pub fn request(id: &str, method: &str, params: &Value) -> String {
    #[derive(Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: &'a str,
        method: &'a str,
        params: &'a Value,
    }
    to_text(&Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// `message` as JSON text. The messages above hold strings, numbers, raw JSON and `Value`s
/// only, none of which fails to serialise (only a map with keys that are no strings can).
fn to_text(message: &impl Serialize) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &str) -> Value {
        match parse(body.as_bytes()) {
            Ok(Incoming::Invalid(text)) => serde_json::from_str(&text).unwrap(),
            Ok(other) => panic!("{body}: read as {other:?}"),
            Err(NotJson(problem)) => panic!("{body}: {problem}"),
        }
    }

    fn echoed_id(body: &str) -> String {
        let Ok(Incoming::Request { id, .. }) = parse(body.as_bytes()) else {
            panic!("{body}: no request");
        };
        let text = response(&id, Ok(Value::Null));
        let start = text.find(r#""id":"#).unwrap() + 5;
        let end = text.find(r#","result""#).unwrap();
        text[start..end].to_string()
    }

    #[test]
    fn ids_are_echoed_as_written() {
        for id in [
            "1",
            "2147483648",
            "-7",
            "1.0",
            "1e3",
            "123456789012345678901234567890",
            r#""a\u0062c""#,
            r#""""#,
        ] {
            let body = format!(r#"{{"jsonrpc": "2.0", "id": {id}, "method": "shutdown"}}"#);
            assert_eq!(echoed_id(&body), id);
        }
    }

    #[test]
    fn what_is_no_request_gets_invalid_request() {
        for (body, id) in [
            (r#"{"jsonrpc": "2.0", "id": null, "method": "shutdown"}"#, Value::Null),
            (
                r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc": "2.0", "id": [1], "method": "shutdown"}"#, Value::Null),
            (r#"{"jsonrpc": "2.0", "id": true, "method": "shutdown"}"#, Value::Null),
            (r#"{"jsonrpc": "2.0", "id": 3}"#, Value::from(3)),
            (r#"{"jsonrpc": "1.0", "id": 4, "method": "shutdown"}"#, Value::from(4)),
            (r#"{"id": 5, "method": "shutdown"}"#, Value::from(5)),
            (r#"{"jsonrpc": "2.0", "id": 6, "method": 6}"#, Value::from(6)),
            (
                r#"{"jsonrpc": "2.0", "id": 7, "method": "m", "params": 7}"#,
                Value::from(7),
            ),
            (r#"{"jsonrpc": "2.0", "method": "m", "params": "x"}"#, Value::Null),
            (
                r#"{"jsonrpc": "2.0", "id": 8, "method": "m", "params": [1e999]}"#,
                Value::from(8),
            ),
            (r#"{"jsonrpc": "2.0", "id": 9, "id": 9, "method": "m"}"#, Value::Null),
            ("[]", Value::Null),
            (r#"[{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}]"#, Value::Null),
            ("3", Value::Null),
            ("null", Value::Null),
        ] {
            let response = answer(body);
            assert_eq!(response["error"]["code"], ErrorCode::InvalidRequest as i32, "{body}");
            assert_eq!(response["id"], id, "{body}");
            assert_eq!(response["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn messages_are_told_apart() {
        assert!(matches!(
            parse(br#"{"jsonrpc": "2.0", "method": "exit"}"#),
            Ok(Incoming::Notification {
                params: Value::Null,
                ..
            })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": null}"#),
            Ok(Incoming::Request {
                params: Value::Null,
                ..
            })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc": "2.0", "id": "synclint-1", "result": null}"#),
            Ok(Incoming::Response)
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc": "2.0", "id": "synclint-2", "error": {"code": 1, "message": "no"}}"#),
            Ok(Incoming::Response)
        ));
        // Spaces around a body, and around an id, are no part of them.
        assert!(matches!(
            parse(b" \r\n{\"jsonrpc\": \"2.0\", \"method\": \"exit\"} \n"),
            Ok(Incoming::Notification { .. })
        ));
        assert_eq!(
            echoed_id(r#"{"jsonrpc": "2.0", "id" :  42 , "method": "shutdown"}"#),
            "42"
        );
        assert!(parse(b"{not json").is_err());
        assert!(parse(b"\xff\xfe").is_err());
        assert!(parse(b"").is_err());
    }

    #[test]
    fn errors_name_their_code() {
        let id = RequestId(RawValue::from_string("12345678901234567890".into()).unwrap());
        let text = response(&id, Err((ErrorCode::MethodNotFound, "unknown method `x`".into())));
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32601,"message":"unknown method `x`"}}"#
        );
    }
}
