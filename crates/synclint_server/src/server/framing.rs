//! Frames of the base protocol: header lines, a blank line, then a body of `Content-Length`
//! bytes. Read defensively, so that no input stops the server, hangs it or makes it allocate
//! more than it reads:
//!
//! - a body longer than [`MAX_BODY`] is refused unread, and nothing is allocated for what a
//!   header claims before the bytes arrive;
//! - a header line longer than [`MAX_HEADER_LINE`] is no header: it is skipped;
//! - after a frame without a valid length, reading goes on at the next `Content-Length` header;
//! - a body in which a whole `Content-Length` header line appears is cut there, and reading
//!   goes on at that header. Such a body is no JSON (outside strings JSON has no letters, and
//!   inside them no raw line breaks), so this cuts only frames whose length was too long: one
//!   sent without its body, say, whose length would otherwise swallow the frames after it.

use std::io::{self, Read};

/// The largest body read: a 60 MB document, JSON-escaped, fits.
const MAX_BODY: usize = 64 << 20;
/// The longest header line read.
const MAX_HEADER_LINE: usize = 1024;
/// How far back from a line break a header is looked for when cutting a body or skipping to
/// the next frame: the name, its value and some spaces.
const HEADER_WINDOW: usize = 64;
/// The header that says a body's length (compared ignoring case).
const CONTENT_LENGTH: &[u8] = b"content-length:";
/// How much is read from the input at a time.
const CHUNK: usize = 64 << 10;

/// A frame read: its body, or why it has none that can be read.
pub type Frame = Result<Vec<u8>, String>;

/// Reads frames off `input`.
pub struct Frames<R> {
    input: R,
    /// Bytes read and not yet taken: `buffer[taken..]`.
    buffer: Vec<u8>,
    taken: usize,
    ended: bool,
}

enum Line {
    Text(Vec<u8>),
    /// Longer than [`MAX_HEADER_LINE`]; nothing of it is taken.
    Overlong,
    /// The input ended.
    End,
}

enum Body {
    Whole(Vec<u8>),
    /// The next frame's header came first; reading goes on there.
    Cut,
    /// The input ended.
    End,
}

impl<R: Read> Frames<R> {
    pub fn new(input: R) -> Self {
        Frames {
            input,
            buffer: Vec::new(),
            taken: 0,
            ended: false,
        }
    }

    /// The next frame, or `None` at the end of input (also inside a frame). Header lines other
    /// than `Content-Length` are skipped; a `Content-Length` is found anywhere in a line, so
    /// that the frame after one whose body was cut short is still read.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut length = None;
        let mut headers = false;
        loop {
            match self.line()? {
                Line::End => return Ok(None),
                Line::Overlong => {
                    self.skip_to_header()?;
                    if headers {
                        return Ok(Some(Err(format!("a header line longer than {MAX_HEADER_LINE} bytes"))));
                    }
                }
                Line::Text(line) => {
                    if line.trim_ascii().is_empty() {
                        if headers {
                            break;
                        }
                        continue;
                    }
                    headers = true;
                    if let Some(value) = content_length(&line) {
                        length = Some(value);
                    }
                }
            }
        }
        let problem = match length {
            Some(Ok(length)) if length <= MAX_BODY => {
                return Ok(match self.body(length)? {
                    Body::Whole(body) => Some(Ok(body)),
                    Body::Cut => Some(Err(format!(
                        "a message shorter than its Content-Length ({length} bytes): the next message began"
                    ))),
                    Body::End => None,
                });
            }
            Some(Ok(length)) => format!("a message of {length} bytes: the server reads messages of up to {MAX_BODY}"),
            Some(Err(problem)) => problem,
            None => "a message without a Content-Length header".into(),
        };
        // Whatever body follows has no length to be read by: the next frame begins at the next
        // header.
        self.skip_to_header()?;
        Ok(Some(Err(problem)))
    }

    /// Reads more input onto the buffer; `false` at the end of input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        self.buffer.drain(..self.taken);
        self.taken = 0;
        // A body given back may have grown the buffer: keep no more than a chunk's room.
        if self.buffer.capacity() > 4 * CHUNK && self.buffer.len() < CHUNK {
            self.buffer.shrink_to(2 * CHUNK);
        }
        let kept = self.buffer.len();
        self.buffer.resize(kept + CHUNK, 0);
        let read = loop {
            match self.input.read(&mut self.buffer[kept..]) {
                Ok(read) => break read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    self.buffer.truncate(kept);
                    return Err(error);
                }
            }
        };
        self.buffer.truncate(kept + read);
        self.ended = read == 0;
        Ok(!self.ended)
    }

    fn line(&mut self) -> io::Result<Line> {
        let mut searched = 0;
        loop {
            let pending = &self.buffer[self.taken..];
            if let Some(at) = memchr::memchr(b'\n', &pending[searched..]) {
                let end = searched + at + 1;
                if end > MAX_HEADER_LINE {
                    return Ok(Line::Overlong);
                }
                let line = pending[..end].to_vec();
                self.taken += end;
                return Ok(Line::Text(line));
            }
            if pending.len() > MAX_HEADER_LINE {
                return Ok(Line::Overlong);
            }
            searched = pending.len();
            // A last line without a line break ends no header: nothing follows it.
            if !self.fill()? {
                return Ok(Line::End);
            }
        }
    }

    /// Takes a body of `length` bytes, as they arrive.
    fn body(&mut self, length: usize) -> io::Result<Body> {
        let mut body = Vec::new();
        loop {
            let checked = body.len();
            let pending = &self.buffer[self.taken..];
            let taken = (length - body.len()).min(pending.len());
            body.extend_from_slice(&pending[..taken]);
            self.taken += taken;
            if let Some(header) = next_header(&body, checked) {
                // Read again from the header on.
                self.buffer.splice(self.taken..self.taken, body.drain(header..));
                return Ok(Body::Cut);
            }
            if body.len() == length {
                return Ok(Body::Whole(body));
            }
            if !self.fill()? {
                return Ok(Body::End);
            }
        }
    }

    /// Skips input up to the next `Content-Length` header line, or to the end of input.
    fn skip_to_header(&mut self) -> io::Result<()> {
        loop {
            let pending = &self.buffer[self.taken..];
            if let Some(header) = next_header(pending, 0) {
                self.taken += header;
                return Ok(());
            }
            // Keep what may be a header line whose line break is still to come.
            self.taken += pending.len().saturating_sub(HEADER_WINDOW);
            if !self.fill()? {
                self.taken = self.buffer.len();
                return Ok(());
            }
        }
    }
}

/// The value of a `Content-Length` header in `line`, or why it is none.
fn content_length(line: &[u8]) -> Option<Result<usize, String>> {
    let at = (0..line.len()).find(|&at| starts_with_header(&line[at..]))?;
    let value = line[at + CONTENT_LENGTH.len()..].trim_ascii();
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        let value = String::from_utf8_lossy(value);
        return Some(Err(format!("a message with an invalid Content-Length `{value}`")));
    }
    // Digits only: too many of them to parse is a length too large.
    let length = std::str::from_utf8(value)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(usize::MAX);
    Some(Ok(length))
}

fn starts_with_header(bytes: &[u8]) -> bool {
    bytes
        .get(..CONTENT_LENGTH.len())
        .is_some_and(|name| name.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// Where the first whole `Content-Length` header line (`Content-Length:`, spaces, digits,
/// spaces, a line break) whose line break lies at or after `from` in `bytes` starts.
fn next_header(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr_iter(b'\n', &bytes[from..]).find_map(|at| header_ending_at(bytes, from + at))
}

/// Where the `Content-Length` header whose line breaks at `newline` starts, where it is one.
/// Looks back a few bytes at most, so that scanning a body stays linear.
fn header_ending_at(bytes: &[u8], newline: usize) -> Option<usize> {
    let start = newline.saturating_sub(HEADER_WINDOW);
    let line = &bytes[start..newline];
    let spaces = |text: &[u8]| {
        text.iter()
            .rev()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\r'))
            .count()
    };
    let value_end = line.len() - spaces(line);
    let digits = line[..value_end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let name_end = value_end - digits - spaces(&line[..value_end - digits]);
    let name_start = name_end.checked_sub(CONTENT_LENGTH.len())?;
    starts_with_header(&line[name_start..]).then_some(start + name_start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads every frame of `input`, given to the reader `step` bytes at a time.
    fn frames_in_steps(input: &[u8], step: usize) -> Vec<Result<String, String>> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(out.len()).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = Frames::new(Trickle(input, step));
        let mut frames = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            frames.push(frame.map(|body| String::from_utf8(body).unwrap()));
        }
        frames
    }

    /// The same frames whether the input comes at once or a byte at a time.
    fn frames(input: &str) -> Vec<Result<String, String>> {
        let at_once = frames_in_steps(input.as_bytes(), usize::MAX);
        assert_eq!(frames_in_steps(input.as_bytes(), 1), at_once);
        at_once
    }

    #[test]
    fn frames_are_read_past_broken_ones() {
        let input = "Content-Length: 2\r\n\r\n{}\
                     Content-Type: x\r\ncontent-length:  3\r\n\r\n[1]\
                     Bogus: 1\r\n\r\n{\"a\": 1}\
                     Content-Length: 4\r\n\r\nnull\
                     Content-Length: x1\r\n\r\n{}\
                     Content-Length: 2\n\n{}\
                     Content-Length: 99\r\n\r\ncut";
        assert_eq!(
            frames(input),
            vec![
                Ok("{}".to_string()),
                Ok("[1]".to_string()),
                Err("a message without a Content-Length header".to_string()),
                Ok("null".to_string()),
                Err("a message with an invalid Content-Length `x1`".to_string()),
                Ok("{}".to_string()),
            ]
        );
    }

    #[test]
    fn a_header_without_its_body_does_not_swallow_the_next_message() {
        let input = "Content-Length: 500\r\n\r\nContent-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\ntrue";
        assert_eq!(
            frames(input),
            vec![
                Err("a message shorter than its Content-Length (500 bytes): the next message began".to_string()),
                Ok("{}".to_string()),
                Ok("true".to_string()),
            ]
        );
        // A length too short leaves the rest of the body before the next header.
        let input = "Content-Length: 3\r\n\r\n{\"a\": 1}Content-Length: 2\r\n\r\n[]";
        assert_eq!(frames(input), vec![Ok("{\"a".to_string()), Ok("[]".to_string())]);
    }

    #[test]
    fn a_huge_length_is_refused_unread() {
        let body = format!("[{}]", "1,".repeat(100) + "1");
        let input = format!(
            "Content-Length: 99999999999999999999999\r\n\r\n{body}\
             Content-Length: {}\r\n\r\n{body}Content-Length: 1e9\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(
            frames(&input),
            vec![
                Err(format!(
                    "a message of {} bytes: the server reads messages of up to {MAX_BODY}",
                    usize::MAX
                )),
                Ok(body.clone()),
                Err("a message with an invalid Content-Length `1e9`".to_string()),
            ]
        );
    }

    #[test]
    fn overlong_lines_are_skipped() {
        let noise = "x".repeat(5 * MAX_HEADER_LINE);
        let input = format!(
            "{noise}Content-Length: 2\r\n\r\n{{}}Content-Length: 2\r\n{noise}\r\n\r\n{{}}\
             Content-Length: 2\r\n\r\n[]"
        );
        assert_eq!(
            frames(&input),
            vec![
                Ok("{}".to_string()),
                Err(format!("a header line longer than {MAX_HEADER_LINE} bytes")),
                Ok("[]".to_string()),
            ]
        );
    }

    #[test]
    fn a_header_inside_a_json_string_is_no_header() {
        // Escaped line breaks, as JSON writes them: the body is read whole.
        let body = r#"{"text": "Content-Length: 12\r\n\r\n"}"#;
        let input = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        assert_eq!(frames(&input), vec![Ok(body.to_string())]);
    }

    #[test]
    fn headers_are_found_only_where_a_line_ends() {
        assert_eq!(next_header(b"xx content-length: 12 \r\n", 0), Some(3));
        assert_eq!(next_header(b"Content-Length:12\n", 0), Some(0));
        assert_eq!(next_header(b"Content-Length: 12", 0), None);
        assert_eq!(next_header(b"Content-Length: \r\n", 0), None);
        assert_eq!(next_header(b"Content-Length: x2\r\n", 0), None);
        assert_eq!(next_header(b"ength: 2\r\n", 0), None);
        assert_eq!(next_header(b"\n\n\n", 0), None);
    }
}
