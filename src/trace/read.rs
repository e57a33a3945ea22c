//! Reads a Chrome trace as `torch.profiler` writes it (`export_chrome_trace`, or one
//! `*.pt.trace.json[.gz]` per worker from `tensorboard_trace_handler`) into the few kinds of
//! events the join needs. Events are deserialized one at a time from the file's bytes and kept
//! only when they matter: no tree of the whole document is ever built.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Nanoseconds on the trace's clock (the file has microseconds with three decimals).
pub(crate) type Nanos = i64;

/// One trace file's events of interest.
pub(crate) struct Trace {
    pub path: PathBuf,
    /// Host-side complete events: operators, annotations, Python frames, CUDA runtime calls.
    pub spans: Vec<Span>,
    /// What ran on a GPU.
    pub gpu: Vec<GpuSpan>,
    /// Forward-to-backward links (`fwdbwd` flow events).
    pub flows: Vec<Flow>,
    /// Names of spans, interned: `spans[i].name` indexes this.
    pub names: Vec<String>,
    /// Each thread's (or GPU stream's) `pid`/`tid` as the file spells them.
    pub threads: Vec<ThreadId>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub(crate) enum SpanKind {
    /// `user_annotation`: `ProfilerStep#N`, `Optimizer.step#...`, `record_function` blocks.
    Annotation,
    /// `python_function`, present when profiled `with_stack=True`.
    Python,
    /// `cpu_op`: an aten operator or autograd node.
    Op,
    /// `cuda_runtime` / `cuda_driver`: a call into CUDA.
    Runtime,
}

pub(crate) struct Span {
    pub kind: SpanKind,
    pub name: u32,
    pub thread: u32,
    pub start: Nanos,
    pub end: Nanos,
    /// Links a runtime call to what it launched on the GPU.
    pub correlation: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GpuKind {
    Kernel,
    Memcpy,
    Memset,
}

pub(crate) struct GpuSpan {
    pub kind: GpuKind,
    pub name: u32,
    /// The device and stream, as a thread of the trace.
    pub stream: u32,
    pub start: Nanos,
    pub end: Nanos,
    pub correlation: Option<u64>,
}

/// A `fwdbwd` flow event: `start` on the forward operator that made an autograd node, its end
/// on the backward operator that runs it; both at the operator's own timestamp.
pub(crate) struct Flow {
    pub id: u64,
    pub start: bool,
    pub thread: u32,
    pub ts: Nanos,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct ThreadId {
    pub pid: String,
    pub tid: String,
}

/// Why a file could not be read as a trace.
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(std::io::Error),
    /// Not JSON, or cut short.
    Json(serde_json::Error),
    /// JSON, but no `traceEvents`.
    NotATrace,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                write!(f, "the compressed stream ends early ({error}): the trace is truncated")
            }
            ReadError::Io(error) => write!(f, "cannot read it: {error}"),
            ReadError::Json(error) if error.is_eof() => {
                write!(f, "the JSON ends early ({error}): the trace is truncated")
            }
            ReadError::Json(error) => write!(f, "not valid JSON: {error}"),
            ReadError::NotATrace => f.write_str(
                "valid JSON but not a Chrome trace: it has no `traceEvents` array (export one with \
                 `prof.export_chrome_trace(path)` or `tensorboard_trace_handler`)",
            ),
        }
    }
}

/// Reads the trace at `path`, gzip-compressed or not, as a stream: memory holds the events kept,
/// not the file.
pub(crate) fn read_trace(path: &Path) -> Result<Trace, ReadError> {
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(ReadError::Io)?);
    let gzip = file.fill_buf().map_err(ReadError::Io)?.starts_with(&[0x1f, 0x8b]);
    if gzip {
        let plain = BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(file));
        parse_trace(path, plain)
    } else {
        parse_trace(path, file)
    }
}

/// Reads trace events from JSON text: an object with `traceEvents` or a bare array of events.
pub(crate) fn parse_trace(path: &Path, text: impl Read) -> Result<Trace, ReadError> {
    let mut builder = Builder::default();
    let mut deserializer = serde_json::Deserializer::from_reader(text);
    let found = TraceDocument { builder: &mut builder }
        .deserialize(&mut deserializer)
        .map_err(json_error)?;
    deserializer.end().map_err(json_error)?;
    if !found {
        return Err(ReadError::NotATrace);
    }
    Ok(builder.finish(path))
}

/// A read error met while parsing (a truncated gzip stream, say) is an I/O error, not bad JSON.
fn json_error(error: serde_json::Error) -> ReadError {
    if error.is_io() {
        ReadError::Io(error.into())
    } else {
        ReadError::Json(error)
    }
}

#[derive(Default)]
struct Builder {
    spans: Vec<Span>,
    gpu: Vec<GpuSpan>,
    flows: Vec<Flow>,
    names: Vec<String>,
    name_ids: FxHashMap<String, u32>,
    threads: Vec<ThreadId>,
    thread_ids: FxHashMap<ThreadId, u32>,
}

impl Builder {
    fn name(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_ids.insert(name.to_string(), id);
        id
    }

    fn thread(&mut self, pid: &Label, tid: &Label) -> u32 {
        let key = ThreadId {
            pid: pid.to_string(),
            tid: tid.to_string(),
        };
        if let Some(&id) = self.thread_ids.get(&key) {
            return id;
        }
        let id = self.threads.len() as u32;
        self.threads.push(key.clone());
        self.thread_ids.insert(key, id);
        id
    }

    fn add(&mut self, event: RawEvent) {
        let (Some(ph), Some(cat), Some(ts)) = (event.ph.as_deref(), event.cat.as_deref(), event.ts) else {
            return;
        };
        let pid = event.pid.unwrap_or(Label::Missing);
        let tid = event.tid.unwrap_or(Label::Missing);
        let start = nanos(ts);
        match ph {
            "X" => {
                let end = start + nanos(event.dur.unwrap_or(0.0)).max(0);
                let correlation = event.args.and_then(|args| args.correlation);
                let host = match cat {
                    "user_annotation" => Some(SpanKind::Annotation),
                    "python_function" => Some(SpanKind::Python),
                    "cpu_op" => Some(SpanKind::Op),
                    "cuda_runtime" | "cuda_driver" => Some(SpanKind::Runtime),
                    _ => None,
                };
                let device = match cat {
                    "kernel" => Some(GpuKind::Kernel),
                    "gpu_memcpy" => Some(GpuKind::Memcpy),
                    "gpu_memset" => Some(GpuKind::Memset),
                    _ => None,
                };
                let name = event.name.as_deref().unwrap_or("");
                if let Some(kind) = host {
                    let (name, thread) = (self.name(name), self.thread(&pid, &tid));
                    self.spans.push(Span {
                        kind,
                        name,
                        thread,
                        start,
                        end,
                        correlation,
                    });
                } else if let Some(kind) = device {
                    let (name, stream) = (self.name(name), self.thread(&pid, &tid));
                    self.gpu.push(GpuSpan {
                        kind,
                        name,
                        stream,
                        start,
                        end,
                        correlation,
                    });
                }
            }
            "s" | "f" if cat == "fwdbwd" => {
                if let Some(Label::Number(id)) = event.id {
                    let thread = self.thread(&pid, &tid);
                    self.flows.push(Flow {
                        id: id as u64,
                        start: ph == "s",
                        thread,
                        ts: start,
                    });
                }
            }
            _ => {}
        }
    }

    fn finish(self, path: &Path) -> Trace {
        Trace {
            path: path.to_path_buf(),
            spans: self.spans,
            gpu: self.gpu,
            flows: self.flows,
            names: self.names,
            threads: self.threads,
        }
    }
}

/// Microseconds (as written) to whole nanoseconds.
fn nanos(micros: f64) -> Nanos {
    if micros.is_finite() {
        (micros * 1000.0).round() as Nanos
    } else {
        0
    }
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    pid: Option<Label>,
    #[serde(default)]
    tid: Option<Label>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default)]
    id: Option<Label>,
    #[serde(default)]
    args: Option<RawArgs>,
}

#[derive(Deserialize)]
struct RawArgs {
    #[serde(default)]
    correlation: Option<u64>,
}

/// A `pid`, `tid` or flow `id`: a number, or a string (Kineto names its own rows).
enum Label {
    Number(i64),
    Text(String),
    Missing,
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Number(n) => write!(f, "{n}"),
            Label::Text(text) => f.write_str(text),
            Label::Missing => Ok(()),
        }
    }
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LabelVisitor;
        impl Visitor<'_> for LabelVisitor {
            type Value = Label;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Label, E> {
                Ok(Label::Number(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Label, E> {
                Ok(Label::Number(v as i64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Label, E> {
                Ok(Label::Number(v as i64))
            }
            fn visit_str<E>(self, v: &str) -> Result<Label, E> {
                Ok(Label::Text(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Label, E> {
                Ok(Label::Missing)
            }
        }
        deserializer.deserialize_any(LabelVisitor)
    }
}

/// The whole file: `{"traceEvents": [...], ...}` or `[...]`; true when events were found.
struct TraceDocument<'b> {
    builder: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for TraceDocument<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TraceDocument<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: an object with `traceEvents`, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events { builder: self.builder })?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        Events { builder: self.builder }.visit_seq(seq)?;
        Ok(true)
    }
}

/// The `traceEvents` array, each element handed to the builder as it is read.
struct Events<'b> {
    builder: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<RawEvent<'de>>()? {
            self.builder.add(event);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Trace, ReadError> {
        parse_trace(Path::new("t.json"), text.as_bytes())
    }

    #[test]
    fn keeps_the_events_the_join_needs() {
        let trace = parse(
            r#"{"schemaVersion": 1, "traceEvents": [
              {"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 7, "tid": 7, "ts": 10.5, "dur": 2.25},
              {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 7, "tid": 7,
               "ts": 11.0, "dur": 1.0, "args": {"correlation": 42, "External id": 3}},
              {"ph": "X", "cat": "kernel", "name": "k<float>", "pid": 0, "tid": 7, "ts": 9.0, "dur": 1.5},
              {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 3, "pid": 7, "tid": 7, "ts": 10.5},
              {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 99},
              {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python3"}}
            ], "traceName": "x"}"#,
        )
        .unwrap();
        assert_eq!(trace.spans.len(), 2);
        assert_eq!(trace.spans[0].start, 10_500);
        assert_eq!(trace.spans[0].end, 12_750);
        assert_eq!(trace.names[trace.spans[1].name as usize], "cudaStreamSynchronize");
        assert_eq!(trace.spans[1].correlation, Some(42));
        assert_eq!(trace.gpu.len(), 1);
        assert_eq!(trace.threads[trace.gpu[0].stream as usize].pid, "0");
        assert_eq!(trace.flows.len(), 1);
        assert!(trace.flows[0].start);
    }

    #[test]
    fn reads_a_bare_array_of_events() {
        let trace =
            parse(r#"[{"ph": "X", "cat": "cpu_op", "name": "aten::nonzero", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]"#);
        assert_eq!(trace.unwrap().spans.len(), 1);
    }

    #[test]
    fn says_why_a_file_is_not_a_trace() {
        let truncated = parse(r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "#)
            .err()
            .unwrap();
        assert!(truncated.to_string().contains("truncated"), "{truncated}");
        let other = parse(r#"{"name": "package.json"}"#).err().unwrap();
        assert!(other.to_string().contains("no `traceEvents`"), "{other}");
        let garbage = parse("not json").err().unwrap();
        assert!(garbage.to_string().contains("not valid JSON"), "{garbage}");
    }
}
