//! JSON-RPC over stdin and stdout, framed by `Content-Length` headers. A reader thread turns
//! stdin into messages, and what is not a message into the error response it deserves (so that
//! bad input never stops the server); a writer thread frames what the server sends.

use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::{ErrorCode, Message};
use serde::Deserialize;
use serde_json::{Value, json};

/// What the reader read.
pub enum Incoming {
    Message(Message),
    /// Input that is no message: the error response to send back.
    Invalid(String),
}

pub struct Transport {
    pub incoming: Receiver<Incoming>,
    pub outgoing: Sender<String>,
    writer: JoinHandle<()>,
}

impl Transport {
    pub fn stdio() -> io::Result<Transport> {
        let (incoming_sender, incoming) = unbounded();
        let (outgoing, outgoing_receiver) = unbounded::<String>();
        std::thread::Builder::new().name("lsp-reader".into()).spawn(move || {
            let mut stdin = io::stdin().lock();
            // Ends at the end of input, or when the server stops listening.
            while let Ok(Some(frame)) = read_frame(&mut stdin) {
                if incoming_sender.send(parse(frame)).is_err() {
                    break;
                }
            }
        })?;
        let writer = std::thread::Builder::new().name("lsp-writer".into()).spawn(move || {
            let mut stdout = io::stdout().lock();
            for text in outgoing_receiver {
                if write_frame(&mut stdout, &text).is_err() {
                    break;
                }
            }
        })?;
        Ok(Transport {
            incoming,
            outgoing,
            writer,
        })
    }

    /// Waits until everything sent is written.
    pub fn finish(self) {
        drop(self.outgoing);
        let _ = self.writer.join();
    }
}

/// `message` as JSON-RPC text.
pub fn to_text(message: &Message) -> String {
    let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
    if let Value::Object(object) = &mut value {
        object.insert("jsonrpc".into(), "2.0".into());
    }
    value.to_string()
}

/// An error response to `id` (`null` where the request's id could not be read).
pub fn error_text(id: Value, code: ErrorCode, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code as i32, "message": message}}).to_string()
}

/// The next frame's body, or why it has none; `None` at the end of input. Header lines other
/// than `Content-Length` are skipped; a `Content-Length` is found anywhere in a line, so that
/// the frame after a broken one is still read.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, String>>> {
    let mut length = None;
    let mut headers = false;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_ascii();
        if line.is_empty() {
            if headers {
                break;
            }
            continue;
        }
        headers = true;
        let lower = line.to_ascii_lowercase();
        if let Some(at) = memchr::memmem::find(&lower, b"content-length:") {
            let value = std::str::from_utf8(&line[at + b"content-length:".len()..]).unwrap_or_default();
            length = value.trim().parse::<usize>().ok();
        }
    }
    let Some(length) = length else {
        return Ok(Some(Err("a message without a valid Content-Length header".into())));
    };
    let mut body = Vec::new();
    input.take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(None);
    }
    Ok(Some(Ok(body)))
}

fn parse(frame: Result<Vec<u8>, String>) -> Incoming {
    let body = match frame {
        Ok(body) => body,
        Err(problem) => return Incoming::Invalid(error_text(Value::Null, ErrorCode::ParseError, &problem)),
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(error) => {
            let message = format!("not JSON: {error}");
            return Incoming::Invalid(error_text(Value::Null, ErrorCode::ParseError, &message));
        }
    };
    match Message::deserialize(&value) {
        Ok(message) => Incoming::Message(message),
        Err(error) => {
            let id = value
                .get("id")
                .filter(|id| id.is_number() || id.is_string())
                .cloned()
                .unwrap_or(Value::Null);
            let message = format!("not a JSON-RPC request, response or notification: {error}");
            Incoming::Invalid(error_text(id, ErrorCode::InvalidRequest, &message))
        }
    }
}

fn write_frame(out: &mut impl Write, text: &str) -> io::Result<()> {
    write!(out, "Content-Length: {}\r\n\r\n", text.len())?;
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<Result<String, String>> {
        let mut reader = io::Cursor::new(input.as_bytes().to_vec());
        let mut frames = Vec::new();
        while let Some(frame) = read_frame(&mut reader).unwrap() {
            frames.push(frame.map(|body| String::from_utf8(body).unwrap()));
        }
        frames
    }

    #[test]
    fn frames_are_read_past_broken_ones() {
        let input = "Content-Length: 2\r\n\r\n{}\
                     Content-Type: x\r\ncontent-length:  3\r\n\r\n[1]\
                     Bogus: 1\r\n\r\n{\"a\": 1}\
                     Content-Length: 4\r\n\r\nnull\
                     Content-Length: 99\r\n\r\ncut";
        assert_eq!(
            frames(input),
            vec![
                Ok("{}".to_string()),
                Ok("[1]".to_string()),
                Err("a message without a valid Content-Length header".to_string()),
                // The broken frame's body runs into the next header line, which is still read.
                Ok("null".to_string()),
            ]
        );
    }

    #[test]
    fn what_is_no_message_gets_an_error_response() {
        let invalid = |body: &str| match parse(Ok(body.as_bytes().to_vec())) {
            Incoming::Invalid(text) => serde_json::from_str::<Value>(&text).unwrap(),
            Incoming::Message(message) => panic!("parsed {message:?}"),
        };
        let response = invalid("{not json");
        assert_eq!(response["id"], Value::Null);
        assert_eq!(response["error"]["code"], ErrorCode::ParseError as i32);
        let response = invalid(r#"{"jsonrpc": "2.0", "id": 7, "method": 3}"#);
        assert_eq!(response["id"], 7);
        assert_eq!(response["error"]["code"], ErrorCode::InvalidRequest as i32);
        assert!(matches!(
            parse(Ok(br#"{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}"#.to_vec())),
            Incoming::Message(Message::Request(_))
        ));
    }
}
