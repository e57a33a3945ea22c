//! JSON-RPC over stdin and stdout. A reader thread turns stdin's frames (see [`super::framing`])
//! into messages (see [`super::jsonrpc`]), and what is no message into the error response it
//! deserves, so that no input stops the server; a writer thread frames what the server sends.

use std::io::{self, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::ErrorCode;

use super::framing::{Frame, Frames};
use super::jsonrpc::{self, Incoming, NotJson};

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
            let mut frames = Frames::new(io::stdin().lock());
            // Ends at the end of input, or when the server stops listening.
            while let Ok(Some(frame)) = frames.next_frame() {
                if incoming_sender.send(read(frame)).is_err() {
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

/// The message a frame holds, or the parse error response it gets.
fn read(frame: Frame) -> Incoming {
    let problem = match frame.map(|body| jsonrpc::parse(&body)) {
        Ok(Ok(message)) => return message,
        Ok(Err(NotJson(problem))) | Err(problem) => problem,
    };
    Incoming::Invalid(jsonrpc::error_response(None, ErrorCode::ParseError, &problem))
}

fn write_frame(out: &mut impl Write, text: &str) -> io::Result<()> {
    write!(out, "Content-Length: {}\r\n\r\n", text.len())?;
    out.write_all(text.as_bytes())?;
    out.flush()
}
