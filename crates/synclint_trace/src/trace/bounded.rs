//! Bounds what any one JSON value in a trace can cost before serde_json reads it. serde_json
//! holds a whole string (and a whole run of digits) in memory before handing it over, and one
//! byte per level of a value it skips, and refuses a whole file for one number beyond a
//! double's range; so, as the bytes stream past, a string is cut after [`MAX_STRING`] bytes
//! (ending in `…`), a run of digits after [`MAX_DIGITS`] and an exponent after
//! [`MAX_EXPONENT_DIGITS`] (every number stays below 10^300), and nesting deeper than
//! [`MAX_DEPTH`] is an error. What it passes on is still valid JSON wherever the input was: a
//! string is cut only between two characters, never inside an escape or a surrogate pair.

use std::io::{self, BufRead, Read};

/// Longer strings are cut to this many bytes of their text (as written, escapes counted).
pub(crate) const MAX_STRING: usize = 64 * 1024;
/// A number with more digits than this (before or after its point) is beyond any time's range
/// or precision anyway.
pub(crate) const MAX_DIGITS: usize = 200;
/// An exponent of 100 or more is beyond any time's range too.
pub(crate) const MAX_EXPONENT_DIGITS: usize = 2;
/// A trace's events are a few levels deep; far deeper nesting is no trace.
pub(crate) const MAX_DEPTH: usize = 1000;

/// What was cut from a trace.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Cuts {
    pub strings: usize,
    pub numbers: usize,
}

/// Where the reader is in the JSON text.
#[derive(Clone, Copy)]
enum State {
    /// Between values; `digits` counts the run of digits just read, `exponent` says whether
    /// they follow an `e`.
    Between { digits: usize, exponent: bool },
    /// Inside a string, `kept` bytes of its text passed on.
    Text(Text),
    /// After a backslash in a string: `hex` digits of a `\u` escape still to come (`None` right
    /// after the backslash), and the escape's value so far.
    Escape { text: Text, hex: Option<u8>, value: u16 },
    /// Past the cut of a string, dropping bytes until it closes.
    Dropping { escaped: bool },
}

#[derive(Clone, Copy)]
struct Text {
    kept: usize,
    /// The last escape was a high surrogate, whose low half must stay with it.
    after_high_surrogate: bool,
}

/// A reader of JSON text that cuts what would cost serde_json more than the bounds above.
pub(crate) struct Bounded<R> {
    inner: R,
    lexer: Lexer,
}

/// Where the text read so far leaves off, and what was cut from it.
struct Lexer {
    state: State,
    depth: usize,
    cuts: Cuts,
    /// Bytes to write before reading on (the mark of a cut string).
    pending: &'static [u8],
}

const CUT_MARK: &[u8] = "…".as_bytes();

impl<R: BufRead> Bounded<R> {
    pub fn new(inner: R) -> Self {
        Bounded {
            inner,
            lexer: Lexer {
                state: State::Between {
                    digits: 0,
                    exponent: false,
                },
                depth: 0,
                cuts: Cuts::default(),
                pending: &[],
            },
        }
    }

    pub fn cuts(&self) -> Cuts {
        self.lexer.cuts
    }
}

impl Lexer {
    /// Passes bytes of `input` on into `out`: how many it read and how many it wrote.
    fn pass(&mut self, input: &[u8], out: &mut [u8]) -> io::Result<(usize, usize)> {
        let (mut read, mut written) = (0, 0);
        while read < input.len() && written < out.len() && self.pending.is_empty() {
            // What follows a cut is skipped up to the next quote or backslash.
            if let State::Dropping { escaped: false } = self.state {
                let skipped = memchr::memchr2(b'"', b'\\', &input[read..]).unwrap_or(input.len() - read);
                read += skipped;
                if skipped > 0 {
                    continue;
                }
            }
            let room = (input.len() - read).min(out.len() - written);
            let run = self.plain_run(&input[read..read + room]);
            if run > 0 {
                out[written..written + run].copy_from_slice(&input[read..read + run]);
                read += run;
                written += run;
                continue;
            }
            let byte = input[read];
            read += 1;
            if self.keep(byte)? {
                out[written] = byte;
                written += 1;
            }
        }
        Ok((read, written))
    }

    /// How many of `bytes` pass on as they are, the state moved past them: up to the first byte
    /// that [`keep`](Self::keep) must look at (an escape, a string's byte past the bound, a
    /// digit past the bound, a bracket past the deepest level). One tight loop, since every byte
    /// of the trace goes through it.
    fn plain_run(&mut self, bytes: &[u8]) -> usize {
        let (mut state, mut depth) = (self.state, self.depth);
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            match &mut state {
                State::Between { digits, exponent } => match byte {
                    b'0'..=b'9' => {
                        if *digits >= digit_bound(*exponent) {
                            break;
                        }
                        *digits += 1;
                    }
                    b'"' => {
                        state = State::Text(Text {
                            kept: 0,
                            after_high_surrogate: false,
                        })
                    }
                    b'[' | b'{' if depth == MAX_DEPTH => break,
                    b'[' | b'{' => {
                        depth += 1;
                        (*digits, *exponent) = (0, false);
                    }
                    b']' | b'}' => {
                        depth = depth.saturating_sub(1);
                        (*digits, *exponent) = (0, false);
                    }
                    b'e' | b'E' => (*digits, *exponent) = (0, true),
                    b'+' | b'-' => *digits = 0,
                    _ => (*digits, *exponent) = (0, false),
                },
                State::Text(text) => match byte {
                    b'"' => {
                        state = State::Between {
                            digits: 0,
                            exponent: false,
                        }
                    }
                    b'\\' => break,
                    _ if text.kept >= MAX_STRING => break,
                    _ => {
                        text.kept += 1;
                        text.after_high_surrogate = false;
                    }
                },
                State::Escape { .. } | State::Dropping { .. } => break,
            }
            at += 1;
        }
        (self.state, self.depth) = (state, depth);
        at
    }

    /// Moves past one byte where a plain run stopped: whether it is passed on. It sees a digit
    /// past its run's bound, a bracket past the deepest level, a backslash or a byte past the
    /// bound in a string, and every byte of an escape and of a cut string's rest.
    fn keep(&mut self, byte: u8) -> io::Result<bool> {
        match self.state {
            State::Between { digits, exponent } if byte.is_ascii_digit() => {
                if digits == digit_bound(exponent) {
                    self.cuts.numbers += 1;
                }
                self.state = State::Between {
                    digits: digits.saturating_add(1),
                    exponent,
                };
                return Ok(false);
            }
            // Between values, only a bracket opening past the deepest level stops a run.
            State::Between { .. } => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("it nests arrays and objects more than {MAX_DEPTH} levels deep"),
                ));
            }
            State::Text(text) => {
                // A continuation byte stays with its character; past a few of them the text is
                // not UTF-8, and serde_json says so wherever it is cut.
                let continues = byte & 0xC0 == 0x80 && text.kept < MAX_STRING + 4;
                if text.kept >= MAX_STRING && !text.after_high_surrogate && !continues {
                    self.cuts.strings += 1;
                    self.pending = CUT_MARK;
                    self.state = State::Dropping { escaped: false };
                    return self.keep(byte).map(|_| false);
                }
                let text = Text {
                    kept: text.kept + 1,
                    ..text
                };
                self.state = if byte == b'\\' {
                    State::Escape {
                        text,
                        hex: None,
                        value: 0,
                    }
                } else {
                    State::Text(Text {
                        after_high_surrogate: false,
                        ..text
                    })
                };
            }
            State::Escape { text, hex, value } => {
                let kept = text.kept + 1;
                self.state = match hex {
                    None if byte == b'u' => State::Escape {
                        text: Text { kept, ..text },
                        hex: Some(4),
                        value: 0,
                    },
                    Some(left) if left > 1 => State::Escape {
                        text: Text { kept, ..text },
                        hex: Some(left - 1),
                        value: value << 4 | hex_value(byte),
                    },
                    Some(_) => {
                        let value = value << 4 | hex_value(byte);
                        State::Text(Text {
                            kept,
                            after_high_surrogate: (0xD800..0xDC00).contains(&value),
                        })
                    }
                    None => State::Text(Text {
                        kept,
                        after_high_surrogate: false,
                    }),
                };
            }
            State::Dropping { escaped: true } => {
                self.state = State::Dropping { escaped: false };
                return Ok(false);
            }
            State::Dropping { escaped: false } => match byte {
                b'\\' => {
                    self.state = State::Dropping { escaped: true };
                    return Ok(false);
                }
                // The closing quote is passed on, after the mark.
                b'"' => {
                    self.state = State::Between {
                        digits: 0,
                        exponent: false,
                    }
                }
                _ => return Ok(false),
            },
        }
        Ok(true)
    }
}

/// The most digits a run keeps: of an exponent, or of the rest of a number.
fn digit_bound(exponent: bool) -> usize {
    if exponent { MAX_EXPONENT_DIGITS } else { MAX_DIGITS }
}

/// A hex digit's value (anything else is serde_json's to reject).
fn hex_value(byte: u8) -> u16 {
    (byte as char).to_digit(16).map_or(0, |digit| digit as u16)
}

impl<R: BufRead> Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while written < out.len() {
            let lexer = &mut self.lexer;
            if !lexer.pending.is_empty() {
                let count = lexer.pending.len().min(out.len() - written);
                out[written..written + count].copy_from_slice(&lexer.pending[..count]);
                lexer.pending = &lexer.pending[count..];
                written += count;
                continue;
            }
            let input = self.inner.fill_buf()?;
            if input.is_empty() {
                break;
            }
            let (read, wrote) = lexer.pass(input, &mut out[written..])?;
            self.inner.consume(read);
            written += wrote;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    /// `input` through the lexer, read `chunk` bytes at a time from a buffer that small.
    fn through(input: &[u8], chunk: usize) -> (Vec<u8>, Cuts) {
        let mut bounded = Bounded::new(BufReader::with_capacity(chunk, input));
        let (mut out, mut buffer) = (Vec::new(), vec![0; chunk]);
        loop {
            let read = bounded.read(&mut buffer).expect("in memory");
            if read == 0 {
                return (out, bounded.cuts());
            }
            out.extend_from_slice(&buffer[..read]);
        }
    }

    #[test]
    fn a_trace_within_the_bounds_passes_unchanged() {
        let repo = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let mut real = Vec::new();
        let file = std::fs::File::open(repo.join("fixtures/trace/train_step.pt.trace.json.gz")).unwrap();
        flate2::read::GzDecoder::new(file).read_to_end(&mut real).unwrap();
        let synthetic = std::fs::read(repo.join("fixtures/trace/synthetic/three_step.json")).unwrap();
        for text in [&real, &synthetic] {
            for chunk in [1, 7, 1 << 16] {
                let (out, cuts) = through(text, chunk);
                assert!(out == *text, "chunks of {chunk}");
                assert_eq!(cuts, Cuts::default());
            }
        }
    }

    #[test]
    fn a_cut_is_the_same_whatever_the_chunks() {
        let text = format!(
            r#"{{"a": "{}é\u00e9\ud83d\ude00\"{}", "b": 1{}e-12345, "c": "short"}}"#,
            "x".repeat(MAX_STRING - 2),
            "y".repeat(10_000),
            "9".repeat(300)
        );
        let (whole, cuts) = through(text.as_bytes(), 1 << 16);
        assert_eq!(cuts, Cuts { strings: 1, numbers: 2 });
        let value: serde_json::Value = serde_json::from_slice(&whole).expect("still JSON");
        let a = value["a"].as_str().unwrap();
        assert!(a.ends_with("xxé…"), "{}", &a[a.len() - 10..]);
        assert_eq!(value["c"], "short");
        for chunk in [1, 2, 3, 5, 4096] {
            assert!(through(text.as_bytes(), chunk).0 == whole, "chunks of {chunk}");
        }
    }
}
