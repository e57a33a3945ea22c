//! Reads a Chrome trace as `torch.profiler` writes it (`export_chrome_trace`, or one
//! `*.pt.trace.json[.gz]` per worker from `tensorboard_trace_handler`) into the few kinds of
//! events the join needs. Events are deserialized one at a time from the file's bytes and kept
//! only when they matter: no tree of the whole document is ever built, and no one string,
//! number or nesting costs more than the bounds of [`bounded`](super::bounded). Timestamps no
//! profiler writes leave their event out, and absurd durations are clamped, each counted for
//! the trace's warnings.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::bounded::{Bounded, Cuts};

/// The `visit_*` methods of a visitor for every JSON scalar it does not read: each gives
/// `$value` (the visitor's own `visit_str`, where it reads text, comes first and wins).
macro_rules! other_scalars_are {
    ($ty:ty, $value:expr) => {
        fn visit_i64<E>(self, _: i64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_bool<E>(self, _: bool) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_unit<E>(self) -> Result<$ty, E> {
            Ok($value)
        }
    };
}

/// Nanoseconds on the trace's clock (the file has microseconds with three decimals).
pub(crate) type Nanos = i64;

/// The latest timestamp believed: 2^62 ns, past the year 2116 on an epoch clock. Every sum of
/// a believed timestamp and a believed duration fits in a `Nanos`.
pub(crate) const LATEST: Nanos = 1 << 62;
/// The longest duration believed: a day (the profiler keeps every event of its window in
/// memory; its windows last seconds).
pub(crate) const LONGEST: Nanos = 24 * 3600 * 1_000_000_000;

/// One trace file's events of interest.
pub struct Trace {
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
    /// Strings and numbers cut to the reader's bounds.
    pub cuts: Cuts,
    /// Events left out, and durations clamped, for times no profiler writes.
    pub absurd: Absurd,
}

/// How many of a trace's times were beyond belief.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Absurd {
    /// Events whose timestamp is negative or past [`LATEST`], left out.
    pub timestamps: usize,
    /// Durations that were negative (the event ends before it starts) or over [`LONGEST`],
    /// clamped to that range.
    pub durations: usize,
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
pub struct Flow {
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
            ReadError::Json(error) if error.is_eof() && error.line() == 1 && error.column() == 0 => {
                f.write_str("the file is empty")
            }
            ReadError::Json(error) if error.is_eof() => {
                write!(f, "the JSON ends early ({error}): the trace is truncated")
            }
            // Well-formed JSON of another shape (`"traceEvents": null`).
            ReadError::Json(error) if error.is_data() => write!(f, "not a Chrome trace: {error}"),
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
    let file = File::open(path).map_err(ReadError::Io)?;
    read_stream(path, BufReader::with_capacity(1 << 16, file))
}

/// Reads the trace that `bytes` hold, gzip-compressed or not, for `path`.
pub(crate) fn read_stream(path: &Path, mut bytes: impl BufRead) -> Result<Trace, ReadError> {
    let gzip = bytes.fill_buf().map_err(ReadError::Io)?.starts_with(&[0x1f, 0x8b]);
    if gzip {
        let plain = BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(bytes));
        parse_trace(path, plain)
    } else {
        parse_trace(path, bytes)
    }
}

/// Reads trace events from JSON text: an object with `traceEvents` or a bare array of events.
pub(crate) fn parse_trace(path: &Path, text: impl BufRead) -> Result<Trace, ReadError> {
    let mut builder = Builder::default();
    let mut bounded = Bounded::new(text);
    // serde_json reads a byte at a time: it reads them from a buffer.
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, &mut bounded));
    let found = TraceDocument { builder: &mut builder }
        .deserialize(&mut deserializer)
        .map_err(json_error)?;
    deserializer.end().map_err(json_error)?;
    if !found {
        return Err(ReadError::NotATrace);
    }
    Ok(builder.finish(path, bounded.cuts()))
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
    thread_ids: FxHashMap<(LabelKey, LabelKey), u32>,
    last_thread: Option<(LabelKey, LabelKey, u32)>,
    absurd: Absurd,
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

    fn thread(&mut self, pid: Label, tid: Label) -> u32 {
        // Most events are on the thread of the event before them: no hashing for those.
        if let Some((last_pid, last_tid, id)) = &self.last_thread
            && pid.matches(last_pid)
            && tid.matches(last_tid)
        {
            return *id;
        }
        let key = (pid.key(), tid.key());
        let id = match self.thread_ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.threads.len() as u32;
                self.threads.push(ThreadId {
                    pid: key.0.to_string(),
                    tid: key.1.to_string(),
                });
                self.thread_ids.insert(key.clone(), id);
                id
            }
        };
        self.last_thread = Some((key.0, key.1, id));
        id
    }

    fn add(&mut self, event: RawEvent) {
        let (Some(ph), Some(cat)) = (event.ph, event.cat) else {
            return;
        };
        let Some(ts) = event.ts.as_ref().and_then(Loose::number) else {
            return;
        };
        let start = nanos(ts);
        if !(0..=LATEST).contains(&start) {
            self.absurd.timestamps += 1;
            return;
        }
        let (pid, tid) = (label_of(&event.pid), label_of(&event.tid));
        let name = event.name.as_ref().and_then(Loose::text).unwrap_or("");
        match (ph, cat) {
            (Phase::Complete, Category::Host(kind)) => {
                let (name, thread) = (self.name(name), self.thread(pid, tid));
                let end = self.end_of(start, &event);
                self.spans.push(Span {
                    kind,
                    name,
                    thread,
                    start,
                    end,
                    correlation: event.args.and_then(|args| args.correlation),
                });
            }
            (Phase::Complete, Category::Device(kind)) => {
                let (name, stream) = (self.name(name), self.thread(pid, tid));
                let end = self.end_of(start, &event);
                self.gpu.push(GpuSpan {
                    kind,
                    name,
                    stream,
                    start,
                    end,
                    correlation: event.args.and_then(|args| args.correlation),
                });
            }
            (Phase::FlowStart | Phase::FlowEnd, Category::ForwardBackward) => {
                if let Some(Loose::Integer(id)) = event.id {
                    let thread = self.thread(pid, tid);
                    self.flows.push(Flow {
                        id: id as u64,
                        start: ph == Phase::FlowStart,
                        thread,
                        ts: start,
                    });
                }
            }
            _ => {}
        }
    }

    /// Where a complete event ends: its start plus its duration (none where it has no usable
    /// one), the duration clamped to what a profiler can record.
    fn end_of(&mut self, start: Nanos, event: &RawEvent) -> Nanos {
        let dur = event.dur.as_ref().and_then(Loose::number).map_or(0, nanos);
        let clamped = dur.clamp(0, LONGEST);
        if clamped != dur {
            self.absurd.durations += 1;
        }
        start + clamped
    }

    fn finish(self, path: &Path, cuts: Cuts) -> Trace {
        Trace {
            path: path.to_path_buf(),
            spans: self.spans,
            gpu: self.gpu,
            flows: self.flows,
            names: self.names,
            threads: self.threads,
            cuts,
            absurd: self.absurd,
        }
    }
}

fn label_of<'v>(value: &'v Option<Loose>) -> Label<'v> {
    value.as_ref().map_or(Label::Text(""), Loose::label)
}

/// Microseconds (as written) to whole nanoseconds, saturating (JSON numbers are finite).
fn nanos(micros: f64) -> Nanos {
    (micros * 1000.0).round() as Nanos
}

/// One event's fields the join reads. Everything is read loosely: a field of an unexpected
/// type (a list for a name, a string for a timestamp) drops the event, an element that is not
/// an object is skipped, a repeated key keeps its last value; never the whole trace.
#[derive(Default)]
struct RawEvent<'a> {
    ph: Option<Phase>,
    cat: Option<Category>,
    name: Option<Loose<'a>>,
    pid: Option<Loose<'a>>,
    tid: Option<Loose<'a>>,
    ts: Option<Loose<'a>>,
    dur: Option<Loose<'a>>,
    id: Option<Loose<'a>>,
    args: Option<RawArgs>,
}

/// An element of `traceEvents`: an event, or `None` for anything that is not an object.
struct MaybeEvent<'a>(Option<RawEvent<'a>>);

/// The keys of an event the join reads.
enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    Other,
}

impl Word for EventKey {
    fn from_word(word: &str) -> Self {
        match word {
            "ph" => EventKey::Ph,
            "cat" => EventKey::Cat,
            "name" => EventKey::Name,
            "pid" => EventKey::Pid,
            "tid" => EventKey::Tid,
            "ts" => EventKey::Ts,
            "dur" => EventKey::Dur,
            "id" => EventKey::Id,
            "args" => EventKey::Args,
            _ => EventKey::Other,
        }
    }
    fn other() -> Self {
        EventKey::Other
    }
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WordVisitor(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MaybeEvent<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = MaybeEvent<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut event = RawEvent::default();
        while let Some(key) = map.next_key::<EventKey>()? {
            match key {
                EventKey::Ph => event.ph = Some(map.next_value()?),
                EventKey::Cat => event.cat = Some(map.next_value()?),
                EventKey::Name => event.name = Some(map.next_value()?),
                EventKey::Pid => event.pid = Some(map.next_value()?),
                EventKey::Tid => event.tid = Some(map.next_value()?),
                EventKey::Ts => event.ts = Some(map.next_value()?),
                EventKey::Dur => event.dur = Some(map.next_value()?),
                EventKey::Id => event.id = Some(map.next_value()?),
                EventKey::Args => event.args = Some(map.next_value()?),
                EventKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(MaybeEvent(Some(event)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        LooseVisitor.visit_seq(seq).map(|_| MaybeEvent(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(MaybeEvent(None))
    }
    other_scalars_are!(Self::Value, MaybeEvent(None));
}

/// A `pid` or `tid` as read: looked up without allocating.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Label<'a> {
    Number(i64),
    Text(&'a str),
}

/// An owned [`Label`], the key of a known thread.
#[derive(Clone, PartialEq, Eq, Hash)]
enum LabelKey {
    Number(i64),
    Text(String),
}

impl Label<'_> {
    fn key(self) -> LabelKey {
        match self {
            Label::Number(n) => LabelKey::Number(n),
            Label::Text(text) => LabelKey::Text(text.to_string()),
        }
    }

    fn matches(self, key: &LabelKey) -> bool {
        match (self, key) {
            (Label::Number(a), LabelKey::Number(b)) => a == *b,
            (Label::Text(a), LabelKey::Text(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for LabelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabelKey::Number(n) => write!(f, "{n}"),
            LabelKey::Text(text) => f.write_str(text),
        }
    }
}

/// An event's `ph`, as far as the join cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Complete,
    FlowStart,
    FlowEnd,
    Other,
}

/// An event's `cat`, as far as the join cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Category {
    Host(SpanKind),
    Device(GpuKind),
    ForwardBackward,
    Other,
}

/// A field read as one of a few known words, without keeping the text; any other word or JSON
/// type is `other`.
trait Word: Sized {
    fn from_word(word: &str) -> Self;
    fn other() -> Self;
}

impl Word for Phase {
    fn from_word(word: &str) -> Self {
        match word {
            "X" => Phase::Complete,
            "s" => Phase::FlowStart,
            "f" => Phase::FlowEnd,
            _ => Phase::Other,
        }
    }
    fn other() -> Self {
        Phase::Other
    }
}

impl Word for Category {
    fn from_word(word: &str) -> Self {
        match word {
            "user_annotation" => Category::Host(SpanKind::Annotation),
            "python_function" => Category::Host(SpanKind::Python),
            "cpu_op" => Category::Host(SpanKind::Op),
            "cuda_runtime" | "cuda_driver" => Category::Host(SpanKind::Runtime),
            "kernel" => Category::Device(GpuKind::Kernel),
            "gpu_memcpy" => Category::Device(GpuKind::Memcpy),
            "gpu_memset" => Category::Device(GpuKind::Memset),
            "fwdbwd" => Category::ForwardBackward,
            _ => Category::Other,
        }
    }
    fn other() -> Self {
        Category::Other
    }
}

struct WordVisitor<W>(std::marker::PhantomData<W>);

impl<'de, W: Word> Visitor<'de> for WordVisitor<W> {
    type Value = W;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a word")
    }
    fn visit_str<E>(self, v: &str) -> Result<W, E> {
        Ok(W::from_word(v))
    }
    other_scalars_are!(W, W::other());
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<W, A::Error> {
        LooseVisitor.visit_seq(seq).map(|_| W::other())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<W, A::Error> {
        LooseVisitor.visit_map(map).map(|_| W::other())
    }
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WordVisitor(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Category {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WordVisitor(std::marker::PhantomData))
    }
}

/// A JSON value as far as the join cares: text, a number, or something else (skipped).
enum Loose<'a> {
    Text(Cow<'a, str>),
    Integer(i64),
    Number(f64),
    Other,
}

impl Loose<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Loose::Text(text) => Some(text),
            _ => None,
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Loose::Integer(n) => Some(*n as f64),
            Loose::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// A `pid` or `tid`: a number, or a string (Kineto names its own rows).
    fn label(&self) -> Label<'_> {
        match self {
            Loose::Text(text) => Label::Text(text),
            Loose::Integer(n) => Label::Number(*n),
            Loose::Number(n) => Label::Number(*n as i64),
            Loose::Other => Label::Text(""),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Loose<'de>, E> {
        Ok(Loose::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Loose<'de>, E> {
        Ok(Loose::Text(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Loose<'de>, E> {
        Ok(Loose::Text(Cow::Owned(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Loose<'de>, E> {
        Ok(Loose::Integer(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Loose<'de>, E> {
        Ok(i64::try_from(v).map_or(Loose::Number(v as f64), Loose::Integer))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Loose<'de>, E> {
        Ok(Loose::Number(v))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Loose<'de>, E> {
        Ok(Loose::Other)
    }
    fn visit_unit<E>(self) -> Result<Loose<'de>, E> {
        Ok(Loose::Other)
    }
    fn visit_none<E>(self) -> Result<Loose<'de>, E> {
        Ok(Loose::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loose<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loose<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
}

/// An event's `args`, of which the join reads the correlation id (what a runtime call launched);
/// anything else in it, or `args` of another type, is skipped.
struct RawArgs {
    correlation: Option<u64>,
}

impl<'de> Deserialize<'de> for RawArgs {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(ArgsVisitor)? {
            Some(Loose::Integer(n)) => Ok(RawArgs {
                correlation: u64::try_from(n).ok(),
            }),
            _ => Ok(RawArgs { correlation: None }),
        }
    }
}

/// Reads `args` as a loose value, keeping only its `correlation`.
struct ArgsVisitor;

impl<'de> Visitor<'de> for ArgsVisitor {
    type Value = Option<Loose<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of arguments")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut correlation = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "correlation" {
                correlation = Some(map.next_value::<Loose<'de>>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(correlation)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        LooseVisitor.visit_seq(seq).map(|_| None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    other_scalars_are!(Self::Value, None);
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
        while let Some(MaybeEvent(event)) = seq.next_element::<MaybeEvent<'de>>()? {
            if let Some(event) = event {
                self.builder.add(event);
            }
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
    fn an_odd_field_drops_its_event_not_the_trace() {
        let trace = parse(
            r#"{"traceEvents": [
              {"ph": "X", "cat": "cpu_op", "name": ["a list"], "pid": {"o": 1}, "tid": true, "ts": "soon", "dur": 1},
              {"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 1.5, "tid": null, "ts": 3, "dur": [1],
               "args": "none"},
              {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 4,
               "dur": 1, "args": {"correlation": -3, "nested": {"a": [1, 2]}}},
              {"ph": "s", "cat": "fwdbwd", "id": "x", "pid": 1, "tid": 1, "ts": 3}
            ]}"#,
        )
        .unwrap();
        assert_eq!(trace.spans.len(), 2, "the event with a string timestamp is dropped");
        assert_eq!(
            trace.spans[0].end, trace.spans[0].start,
            "a list for a duration is no duration"
        );
        assert_eq!(trace.threads[trace.spans[0].thread as usize].pid, "1");
        assert_eq!(trace.spans[1].correlation, None);
        assert!(trace.flows.is_empty(), "a flow needs a numeric id");
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
        let shape = parse(r#"{"traceEvents": null}"#).err().unwrap();
        assert!(shape.to_string().starts_with("not a Chrome trace"), "{shape}");
        let empty = parse("").err().unwrap();
        assert_eq!(empty.to_string(), "the file is empty");
    }

    /// One complete operator event named `name` (raw JSON text, quotes included).
    fn named(name: &str) -> String {
        format!(r#"[{{"ph": "X", "cat": "cpu_op", "name": {name}, "pid": 1, "tid": 1, "ts": 1, "dur": 1}}]"#)
    }

    #[test]
    fn a_huge_string_is_cut_between_characters() {
        let bound = crate::trace::bounded::MAX_STRING;
        // Plain text, a multi-byte character across the bound, escapes across it, and a
        // surrogate pair whose halves the bound falls between.
        for (fill, tail) in [
            ("a".repeat(bound + 10), ""),
            ("a".repeat(bound - 1), "é€😀 and more"),
            ("a".repeat(bound - 3), "\\n\\\"\\u00e9 and more"),
            ("a".repeat(bound - 6), "\\ud83d\\ude00 and more"),
        ] {
            let trace = parse(&named(&format!("\"{fill}{tail}\""))).unwrap();
            let name = &trace.names[trace.spans[0].name as usize];
            assert!(name.ends_with('…'), "{:?}", &name[name.len() - 20..]);
            assert!(name.len() <= bound + 8, "{}", name.len());
            assert!(name.starts_with(&fill[..100]));
            assert_eq!(trace.cuts.strings, 1);
        }
        let short = parse(&named(&format!("\"{}\"", "a".repeat(bound - 1)))).unwrap();
        assert_eq!(short.cuts.strings, 0);
        assert_eq!(short.names[0].len(), bound - 1);
    }

    #[test]
    fn a_cut_string_keeps_the_rest_of_the_trace() {
        // A huge key, a huge skipped value and a huge name, each followed by what matters.
        let huge = "x".repeat(300_000);
        let text = format!(
            r#"{{"{huge}": 1, "other": "{huge}", "traceEvents": [
              {{"ph": "X", "cat": "cpu_op", "name": "{huge}\"quoted\\", "args": {{"{huge}": "{huge}"}},
               "pid": 1, "tid": 1, "ts": 1, "dur": 1}},
              {{"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 1, "tid": 1, "ts": 5, "dur": 1}}
            ]}}"#
        );
        let trace = parse(&text).unwrap();
        assert_eq!(trace.spans.len(), 2);
        assert_eq!(trace.names[trace.spans[1].name as usize], "aten::item");
        assert_eq!(trace.cuts.strings, 5);
    }

    #[test]
    fn a_huge_number_is_shortened_and_deep_nesting_refused() {
        let digits = "7".repeat(200_000);
        let trace = parse(&format!(
            r#"[{{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "x": 0.{digits}}},
                {{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1{digits}, "dur": 1}},
                {{"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 9{digits}e+999, "dur": 1}},
                {{"ph": "X", "cat": "cpu_op", "name": "d", "pid": 1, "tid": 1, "ts": 2, "dur": 1e-99999}}]"#
        ))
        .unwrap();
        assert_eq!(trace.cuts.numbers, 5);
        let names: Vec<&str> = trace
            .spans
            .iter()
            .map(|s| trace.names[s.name as usize].as_str())
            .collect();
        assert_eq!(names, ["a", "d"], "the events past 10^200 µs are left out");
        assert_eq!(trace.absurd.timestamps, 2);
        // Deeper than serde_json's recursion limit where events are read, and than the
        // reader's bound where a value is skipped: errors, not a stack overflow.
        let deep = 100_000;
        let nested = |inner: &str| format!("{}{inner}{}", "[".repeat(deep), "]".repeat(deep));
        for text in [
            nested("1"),
            format!(r#"{{"traceEvents": [{}]}}"#, nested("1")),
            format!(r#"{{"traceEvents": [], "other": {}}}"#, nested("1")),
            format!(r#"[{{"ph": "X", "args": {}}}]"#, nested("{}")),
        ] {
            let error = parse(&text).err().expect("refused");
            let message = error.to_string();
            assert!(
                message.contains("recursion limit") || message.contains("levels deep"),
                "{message}"
            );
        }
    }

    #[test]
    fn absurd_times_are_left_out_or_clamped_and_counted() {
        let trace = parse(
            r#"[{"ph": "X", "cat": "cpu_op", "name": "negative", "pid": 1, "tid": 1, "ts": -5, "dur": 1},
                {"ph": "X", "cat": "cpu_op", "name": "far", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1},
                {"ph": "X", "cat": "cpu_op", "name": "backwards", "pid": 1, "tid": 1, "ts": 10, "dur": -3},
                {"ph": "X", "cat": "cpu_op", "name": "long", "pid": 1, "tid": 1, "ts": 10, "dur": 1e200},
                {"ph": "s", "cat": "fwdbwd", "id": 1, "pid": 1, "tid": 1, "ts": -1e-3},
                {"ph": "X", "cat": "cpu_op", "name": "fine", "pid": 1, "tid": 1, "ts": 4611686018427387.0, "dur": 0}]"#,
        )
        .unwrap();
        let names: Vec<&str> = trace
            .spans
            .iter()
            .map(|s| trace.names[s.name as usize].as_str())
            .collect();
        assert_eq!(names, ["backwards", "long", "fine"]);
        assert_eq!(trace.spans[0].end, trace.spans[0].start, "ends where it starts");
        assert_eq!(trace.spans[1].end - trace.spans[1].start, LONGEST);
        assert!(trace.flows.is_empty());
        assert_eq!(
            trace.absurd,
            Absurd {
                timestamps: 3,
                durations: 2
            }
        );
    }

    #[test]
    fn broken_bytes_are_errors() {
        let invalid = parse_trace(Path::new("t.json"), &b"[{\"name\": \"\xff\xfe\"}]"[..])
            .err()
            .unwrap();
        assert!(invalid.to_string().contains("not valid JSON"), "{invalid}");
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gzip, named("\"aten::item\"").repeat(50).as_bytes()).unwrap();
        let gzip = gzip.finish().unwrap();
        let cut = read_stream(Path::new("t.json.gz"), &gzip[..gzip.len() / 2])
            .err()
            .unwrap();
        assert!(cut.to_string().contains("truncated"), "{cut}");
        let mut corrupt = gzip.clone();
        corrupt[20] ^= 0xff;
        assert!(read_stream(Path::new("t.json.gz"), &corrupt[..]).is_err());
    }
}
