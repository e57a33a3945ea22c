//! Draws one profiler step as an SVG timeline: a lane per host thread and per GPU stream, with
//! every host-side stall (the host waiting for the GPU) painted red and labelled with the source
//! line that caused it, so the picture a trace viewer shows comes with its explanation.
//!
//! The caller reduces a trace to a plain [`Timeline`]; this module only lays it out and writes a
//! standalone SVG 1.1 document. The same timeline always gives the same bytes.

use crate::render::xml::escape;
use std::borrow::Cow;
use std::fmt::{self, Write};

/// What to draw, as plain data built by the caller.
pub struct Timeline {
    /// Title drawn at the top, e.g. "ProfilerStep#3 of train_step.pt.trace.json".
    pub title: String,
    /// The window drawn, in nanoseconds on the trace's clock.
    pub start_ns: i64,
    pub end_ns: i64,
    pub lanes: Vec<Lane>,
}

/// One row of the picture: a host thread or a GPU stream.
pub struct Lane {
    /// e.g. "host thread 489", "host thread 515 (autograd)", "GPU 0 stream 7".
    pub label: String,
    pub blocks: Vec<Block>,
}

/// One span of time in a lane.
pub struct Block {
    /// A block whose end precedes its start is drawn as if the two were swapped.
    pub start_ns: i64,
    pub end_ns: i64,
    pub kind: BlockKind,
    /// Shown on hover (an SVG <title> child) for every block; for Stall blocks also drawn as a
    /// text label above the block, e.g. "train_step.py:27 SYNC203 aten::nonzero 0.93 ms".
    pub label: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BlockKind {
    /// A top-level host operator (grey).
    Op,
    /// The host waiting on the GPU (red), labelled.
    Stall,
    /// A GPU kernel (blue).
    Kernel,
    /// A GPU memory copy (green).
    Memcpy,
    /// A GPU memset (light green).
    Memset,
}

/// Wide enough that a millisecond-scale step still shows individual kernels.
const WIDTH: f64 = 1400.0;
/// Everything left of this is room for lane labels.
const PLOT_LEFT: f64 = 220.0;
const PLOT_RIGHT: f64 = WIDTH - 20.0;
const PLOT_WIDTH: f64 = PLOT_RIGHT - PLOT_LEFT;

const TITLE_BASELINE: f64 = 24.0;
const LEGEND_TOP: f64 = 38.0;
const AXIS_Y: f64 = 84.0;
const LANES_TOP: f64 = 96.0;
const BOTTOM_MARGIN: f64 = 12.0;

const BAR_HEIGHT: f64 = 28.0;
const LANE_GAP: f64 = 8.0;
const LABEL_ROW_HEIGHT: f64 = 14.0;
/// Keeps the lowest label off the bar, so even its connector line shows.
const LABEL_BAR_SPACING: f64 = 6.0;
/// More rows would make a lane taller than its labels are worth; a stall whose label finds no
/// free row keeps its red block and hover text.
const MAX_LABEL_ROWS: usize = 4;
/// Stall labels are monospace so that this width estimate holds without font metrics.
const LABEL_CHAR_WIDTH: f64 = 6.6;
const LABEL_GAP: f64 = 8.0;
const MAX_LABEL_CHARS: usize = 64;
const MAX_LANE_LABEL_CHARS: usize = 30;
const MAX_TITLE_CHARS: usize = 160;
/// Hover text is cut too, well above real names (a templated kernel's can be 5,000 characters)
/// but below what a trace may hold (64 KiB), since the drawing has a rectangle for each block.
const MAX_HOVER_CHARS: usize = 16 * 1024;
/// A 5 µs stall in a 100 ms window must still show.
const MIN_BLOCK_PX: f64 = 1.0;
/// Float pixel edges of a widened block differ from exactly one pixel by rounding only.
const PX_EPSILON: f64 = 1e-6;
const TARGET_TICKS: usize = 9;

const TITLE_STYLE: &str = r##"font-size="16" font-weight="bold" fill="#222""##;
const NOTE_STYLE: &str = r##"font-size="13" fill="#555""##;
const LEGEND_STYLE: &str = r##"font-size="12" fill="#333""##;
const TICK_STYLE: &str = r##"font-size="11" fill="#555" text-anchor="middle""##;
const LANE_LABEL_STYLE: &str = r##"font-size="12" fill="#222""##;
const STALL_LABEL_STYLE: &str = r##"font-family="monospace" font-size="11" fill="#b71c1c""##;
const STALL_RED: &str = "#d62728";

impl BlockKind {
    const LEGEND_ORDER: [BlockKind; 5] = [Self::Op, Self::Stall, Self::Kernel, Self::Memcpy, Self::Memset];

    fn fill(self) -> &'static str {
        match self {
            Self::Op => "#9e9e9e",
            Self::Stall => STALL_RED,
            Self::Kernel => "#1f77b4",
            Self::Memcpy => "#2ca02c",
            Self::Memset => "#98df8a",
        }
    }

    fn legend_name(self) -> &'static str {
        match self {
            Self::Op => "Op (host operator)",
            Self::Stall => "Stall (host waits for GPU)",
            Self::Kernel => "Kernel",
            Self::Memcpy => "Memcpy",
            Self::Memset => "Memset",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Self::Op => "ops",
            Self::Stall => "stalls",
            Self::Kernel => "kernels",
            Self::Memcpy => "memcpys",
            Self::Memset => "memsets",
        }
    }
}

/// Writes the whole SVG document for `timeline` into a String.
pub fn render(timeline: &Timeline) -> String {
    let Some(scale) = Scale::of(timeline).filter(|_| !timeline.lanes.is_empty()) else {
        return render_empty(&timeline.title);
    };
    let (lanes, lanes_bottom) = lay_out_lanes(&timeline.lanes, &scale);
    let mut svg = Svg::begin(lanes_bottom + BOTTOM_MARGIN, &timeline.title);
    draw_legend(&mut svg);
    // Each lane's band goes under the grid lines, which go under the blocks.
    for lane in &lanes {
        svg.rect(
            &Extent::new(PLOT_LEFT, PLOT_RIGHT),
            lane.bar_top,
            BAR_HEIGHT,
            "#f3f3f3",
            None,
        );
    }
    draw_axis(&mut svg, &scale, lanes_bottom);
    for lane in &lanes {
        draw_lane(&mut svg, lane);
    }
    svg.finish()
}

fn render_empty(title: &str) -> String {
    let mut svg = Svg::begin(70.0, title);
    svg.text(8.0, 52.0, NOTE_STYLE, "nothing to draw", None);
    svg.finish()
}

/// Maps trace time onto the drawing area.
struct Scale {
    start_ns: i64,
    end_ns: i64,
}

/// A horizontal pixel span, already clipped to the drawing area.
struct Extent {
    left: f64,
    right: f64,
}

impl Scale {
    fn of(timeline: &Timeline) -> Option<Self> {
        (timeline.end_ns > timeline.start_ns).then_some(Self {
            start_ns: timeline.start_ns,
            end_ns: timeline.end_ns,
        })
    }

    /// In i128 so that a window spanning all of i64 neither overflows nor loses its sign.
    fn span_ns(&self) -> f64 {
        (i128::from(self.end_ns) - i128::from(self.start_ns)) as f64
    }

    fn span_ms(&self) -> f64 {
        self.span_ns() / 1e6
    }

    fn x(&self, ns: i64) -> f64 {
        let offset = (i128::from(ns) - i128::from(self.start_ns)) as f64;
        PLOT_LEFT + offset / self.span_ns() * PLOT_WIDTH
    }

    /// Where a block is drawn: clipped to the window and at least [`MIN_BLOCK_PX`] wide, or
    /// `None` when none of it lies inside. An instant (start == end) counts if it lies in the
    /// window; a longer block must overlap it, so one that merely ends at the window's start is
    /// not drawn as a sliver on the edge.
    fn extent(&self, start_ns: i64, end_ns: i64) -> Option<Extent> {
        let (low, high) = (start_ns.min(end_ns), start_ns.max(end_ns));
        let visible = if low == high {
            (self.start_ns..=self.end_ns).contains(&low)
        } else {
            low < self.end_ns && high > self.start_ns
        };
        if !visible {
            return None;
        }
        let left = self.x(low.max(self.start_ns)).min(PLOT_RIGHT - MIN_BLOCK_PX);
        let right = self.x(high.min(self.end_ns)).max(left + MIN_BLOCK_PX);
        Some(Extent::new(left, right))
    }
}

impl Extent {
    fn new(left: f64, right: f64) -> Self {
        Self { left, right }
    }

    fn width(&self) -> f64 {
        self.right - self.left
    }

    fn center(&self) -> f64 {
        (self.left + self.right) / 2.0
    }

    fn is_sliver(&self) -> bool {
        self.width() <= MIN_BLOCK_PX + PX_EPSILON
    }
}

/// One rectangle to draw: a block, or a run of consecutive sub-pixel blocks of one kind that
/// share pixel columns and so would paint the same pixels as separate rectangles anyway.
struct Bar<'a> {
    kind: BlockKind,
    extent: Extent,
    /// The label of the run's first block.
    label: &'a str,
    count: usize,
}

impl Bar<'_> {
    /// Only slivers merge: a block wide enough to see keeps its own hover text, and stalls are
    /// never merged because each one gets its own label.
    fn absorbs(&self, kind: BlockKind, next: &Extent) -> bool {
        let is_sliver_run = self.count > 1 || self.extent.is_sliver();
        kind == self.kind
            && kind != BlockKind::Stall
            && is_sliver_run
            && next.is_sliver()
            && next.left.floor() < self.extent.right.ceil()
    }

    fn hover(&self) -> Cow<'_, str> {
        if self.count == 1 {
            Cow::Borrowed(self.label)
        } else {
            Cow::Owned(format!(
                "{} {} merged; first: {}",
                self.count,
                self.kind.plural(),
                self.label
            ))
        }
    }
}

/// A lane's bars left to right, stalls last so that they land on top of the host operator they
/// interrupt. Runs merge in time order, so a memcpy among thousands of kernels ends their run
/// and still shows.
fn lane_bars<'a>(lane: &'a Lane, scale: &Scale) -> Vec<Bar<'a>> {
    let is_stall = |block: &&Block| block.kind == BlockKind::Stall;
    let mut bars = merged_bars(lane.blocks.iter().filter(|block| !is_stall(block)), scale);
    bars.extend(merged_bars(lane.blocks.iter().filter(is_stall), scale));
    bars
}

fn merged_bars<'a>(blocks: impl Iterator<Item = &'a Block>, scale: &Scale) -> Vec<Bar<'a>> {
    let mut pieces: Vec<(Extent, &Block)> = blocks
        .filter_map(|block| Some((scale.extent(block.start_ns, block.end_ns)?, block)))
        .collect();
    pieces.sort_by(|a, b| a.0.left.total_cmp(&b.0.left));
    let mut bars: Vec<Bar<'a>> = Vec::new();
    for (extent, block) in pieces {
        match bars.last_mut() {
            Some(last) if last.absorbs(block.kind, &extent) => {
                last.extent.right = last.extent.right.max(extent.right);
                last.count += 1;
            }
            _ => bars.push(Bar {
                kind: block.kind,
                extent,
                label: &block.label,
                count: 1,
            }),
        }
    }
    bars
}

/// A stall's label, placed in a row above the lane's bar; row 0 is the one nearest the bar.
struct StallLabel<'a> {
    text: String,
    full: &'a str,
    left: f64,
    row: usize,
    /// Where the connector line meets the stall's block.
    anchor_x: f64,
}

impl StallLabel<'_> {
    fn row_bottom(&self, bar_top: f64) -> f64 {
        bar_top - LABEL_BAR_SPACING - self.row as f64 * LABEL_ROW_HEIGHT
    }
}

/// Puts each stall's label in the lowest row where it overprints no earlier label. Labels start
/// at their block, shifted left only where they would run off the right edge.
fn place_stall_labels<'a>(bars: &[Bar<'a>]) -> Vec<StallLabel<'a>> {
    let mut row_ends: Vec<f64> = Vec::new();
    let mut placed = Vec::new();
    let stalls = bars
        .iter()
        .filter(|bar| bar.kind == BlockKind::Stall && !bar.label.trim().is_empty());
    for stall in stalls {
        let text = truncate(stall.label, MAX_LABEL_CHARS).into_owned();
        let width = text.chars().count() as f64 * LABEL_CHAR_WIDTH;
        let left = stall.extent.left.min(PLOT_RIGHT - width).max(PLOT_LEFT);
        let Some(row) = free_row(&mut row_ends, left) else {
            continue;
        };
        row_ends[row] = left + width;
        placed.push(StallLabel {
            text,
            full: stall.label,
            left,
            row,
            anchor_x: stall.extent.center(),
        });
    }
    placed
}

/// The lowest row whose last label ends before `left`, opening a new row if none does and the
/// lane may still grow.
fn free_row(row_ends: &mut Vec<f64>, left: f64) -> Option<usize> {
    if let Some(row) = row_ends.iter().position(|&end| end + LABEL_GAP <= left) {
        return Some(row);
    }
    if row_ends.len() == MAX_LABEL_ROWS {
        return None;
    }
    row_ends.push(f64::NEG_INFINITY);
    Some(row_ends.len() - 1)
}

/// Where one lane sits and what it draws, worked out before anything is written because the
/// grid lines and the document height need the total height first.
struct LaneLayout<'a> {
    label: &'a str,
    bar_top: f64,
    bars: Vec<Bar<'a>>,
    stall_labels: Vec<StallLabel<'a>>,
}

/// Stacks the lanes from [`LANES_TOP`] down, each as tall as its stall labels need; returns
/// them with the y where the last one ends.
fn lay_out_lanes<'a>(lanes: &'a [Lane], scale: &Scale) -> (Vec<LaneLayout<'a>>, f64) {
    let mut top = LANES_TOP;
    let mut layouts = Vec::with_capacity(lanes.len());
    for lane in lanes {
        let bars = lane_bars(lane, scale);
        let stall_labels = place_stall_labels(&bars);
        let rows = stall_labels.iter().map(|label| label.row + 1).max().unwrap_or(0);
        let bar_top = top + label_band_height(rows);
        layouts.push(LaneLayout {
            label: &lane.label,
            bar_top,
            bars,
            stall_labels,
        });
        top = bar_top + BAR_HEIGHT + LANE_GAP;
    }
    (layouts, top)
}

fn label_band_height(rows: usize) -> f64 {
    if rows == 0 {
        0.0
    } else {
        rows as f64 * LABEL_ROW_HEIGHT + LABEL_BAR_SPACING
    }
}

fn draw_lane(svg: &mut Svg, lane: &LaneLayout<'_>) {
    let shown = truncate(lane.label, MAX_LANE_LABEL_CHARS);
    svg.text(
        8.0,
        lane.bar_top + BAR_HEIGHT / 2.0 + 4.0,
        LANE_LABEL_STYLE,
        &shown,
        Some(lane.label),
    );
    for bar in &lane.bars {
        svg.rect(
            &bar.extent,
            lane.bar_top,
            BAR_HEIGHT,
            bar.kind.fill(),
            Some(&bar.hover()),
        );
    }
    // Connectors go under the labels: one from a higher row may cross a lower row's text.
    for label in &lane.stall_labels {
        svg.line(
            (label.anchor_x, label.row_bottom(lane.bar_top)),
            (label.anchor_x, lane.bar_top),
            STALL_RED,
        );
    }
    for label in &lane.stall_labels {
        // Lifted by about a descender, so that letters like "p" and "y" clear the row below.
        let baseline = label.row_bottom(lane.bar_top) - 3.0;
        svg.text(label.left, baseline, STALL_LABEL_STYLE, &label.text, Some(label.full));
    }
}

fn draw_legend(svg: &mut Svg) {
    let mut x = PLOT_LEFT;
    for kind in BlockKind::LEGEND_ORDER {
        svg.rect(&Extent::new(x, x + 12.0), LEGEND_TOP, 12.0, kind.fill(), None);
        svg.text(x + 16.0, LEGEND_TOP + 10.0, LEGEND_STYLE, kind.legend_name(), None);
        x += 16.0 + kind.legend_name().len() as f64 * 6.5 + 18.0;
    }
}

/// Tick marks and labels along the top, with faint grid lines down through every lane.
fn draw_axis(svg: &mut Svg, scale: &Scale, lanes_bottom: f64) {
    let span_ms = scale.span_ms();
    let step = TickStep::for_span(span_ms);
    for index in 0..step.count(span_ms) {
        let x = PLOT_LEFT + index as f64 * step.ms() / span_ms * PLOT_WIDTH;
        svg.line((x, AXIS_Y), (x, lanes_bottom), "#e2e2e2");
        svg.line((x, AXIS_Y - 4.0), (x, AXIS_Y), "#888");
        svg.text(x, AXIS_Y - 7.0, TICK_STYLE, &step.label(index), None);
    }
    svg.line((PLOT_LEFT, AXIS_Y), (PLOT_RIGHT, AXIS_Y), "#888");
}

/// A tick step of `mantissa` × 10^`exponent` milliseconds, the mantissa 1, 2 or 5, so that tick
/// labels are round numbers.
#[derive(Clone, Copy, Debug)]
struct TickStep {
    mantissa: u8,
    exponent: i32,
}

impl TickStep {
    /// The round step whose tick count is nearest [`TARGET_TICKS`] by ratio, so that 13 ticks
    /// beat 5 although both are 4 away.
    fn for_span(span_ms: f64) -> Self {
        let base = (span_ms / TARGET_TICKS as f64).log10().floor() as i32;
        let distance = |step: &Self| (step.count(span_ms) as f64 / TARGET_TICKS as f64).ln().abs();
        (base - 1..=base + 1)
            .flat_map(|exponent| [1, 2, 5].map(|mantissa| Self { mantissa, exponent }))
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .unwrap_or(Self {
                mantissa: 1,
                exponent: 0,
            })
    }

    fn ms(self) -> f64 {
        f64::from(self.mantissa) * 10f64.powi(self.exponent)
    }

    /// Ticks from 0 up to the window's end inclusive; the slack keeps an end that is an exact
    /// multiple of the step from losing its tick to rounding.
    fn count(self, span_ms: f64) -> usize {
        (span_ms / self.ms() * (1.0 + 1e-9)).floor() as usize + 1
    }

    /// Steps under 0.01 ms switch to µs (then ns) so that no label needs more than two decimals.
    fn unit(self) -> (&'static str, i32) {
        if self.exponent >= -2 {
            ("ms", 0)
        } else if self.exponent >= -5 {
            ("µs", 3)
        } else {
            ("ns", 6)
        }
    }

    fn label(self, index: usize) -> String {
        let (unit, shift) = self.unit();
        let exponent = self.exponent + shift;
        let value = index as f64 * f64::from(self.mantissa) * 10f64.powi(exponent);
        let decimals = usize::try_from(-exponent).unwrap_or(0);
        format!("{} {unit}", trim_decimals(&format!("{value:.decimals$}")))
    }
}

fn trim_decimals(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

/// A coordinate or size, written with at most two decimals.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{:.2}", self.0);
        match trim_decimals(&text) {
            "-0" => f.write_str("0"),
            trimmed => f.write_str(trimmed),
        }
    }
}

fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.chars().count() <= max_chars {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().take(max_chars - 1).chain(['…']).collect())
    }
}

/// The document being written; every caller-supplied string goes through [`escape`].
struct Svg {
    out: String,
}

impl Svg {
    fn begin(height: f64, title: &str) -> Self {
        let mut svg = Self { out: String::new() };
        let (width, height) = (Num(WIDTH), Num(height));
        let escaped_title = escape(title);
        svg.push(format_args!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\">\n\
             <title>{escaped_title}</title>\n\
             <rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n"
        ));
        svg.text(
            8.0,
            TITLE_BASELINE,
            TITLE_STYLE,
            &truncate(title, MAX_TITLE_CHARS),
            None,
        );
        svg
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }

    /// Writing into a String cannot fail, so the Result carries nothing worth handling.
    fn push(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }

    fn rect(&mut self, extent: &Extent, top: f64, height: f64, fill: &str, hover: Option<&str>) {
        let (x, y, w, h) = (Num(extent.left), Num(top), Num(extent.width()), Num(height));
        match hover {
            None => self.push(format_args!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{fill}\"/>\n"
            )),
            Some(hover) => self.push(format_args!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{fill}\"><title>{}</title></rect>\n",
                escape(&truncate(hover, MAX_HOVER_CHARS))
            )),
        }
    }

    fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str) {
        let (x1, y1, x2, y2) = (Num(from.0), Num(from.1), Num(to.0), Num(to.1));
        self.push(format_args!(
            "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"{stroke}\" stroke-width=\"1\"/>\n"
        ));
    }

    /// `style` is one of this module's constant attribute lists; `content` is escaped here.
    fn text(&mut self, x: f64, y: f64, style: &str, content: &str, hover: Option<&str>) {
        let (x, y, content) = (Num(x), Num(y), escape(content));
        let hover = hover
            .map(|hover| format!("<title>{}</title>", escape(&truncate(hover, MAX_HOVER_CHARS))))
            .unwrap_or_default();
        self.push(format_args!(
            "<text x=\"{x}\" y=\"{y}\" {style}>{hover}{content}</text>\n"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn block(start_ns: i64, end_ns: i64, kind: BlockKind, label: &str) -> Block {
        Block {
            start_ns,
            end_ns,
            kind,
            label: label.to_owned(),
        }
    }

    fn lane(label: &str, blocks: Vec<Block>) -> Lane {
        Lane {
            label: label.to_owned(),
            blocks,
        }
    }

    fn timeline(start_ns: i64, end_ns: i64, lanes: Vec<Lane>) -> Timeline {
        Timeline {
            title: "ProfilerStep#3 of train_step.pt.trace.json".to_owned(),
            start_ns,
            end_ns,
            lanes,
        }
    }

    fn one_ms_window() -> Scale {
        Scale {
            start_ns: 0,
            end_ns: MS,
        }
    }

    /// Rejects what an XML parser would reject in this module's output: crossed or unclosed
    /// tags, a raw `<` or unbalanced quote inside a tag, an `&` that starts no entity, a raw `>`
    /// in text, a character XML 1.0 forbids, more or less than one root element.
    fn assert_well_formed(doc: &str) {
        let mut rest = doc
            .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            .expect("XML declaration");
        assert!(
            rest.trim_start()
                .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "root is not svg"
        );
        let mut open: Vec<&str> = Vec::new();
        let mut roots = 0;
        while let Some(lt) = rest.find('<') {
            assert_text_well_formed(&rest[..lt], !open.is_empty());
            let after = &rest[lt + 1..];
            let gt = after.find('>').expect("unterminated tag");
            let tag = &after[..gt];
            assert!(!tag.contains('<'), "raw < inside tag: {tag}");
            assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes in tag: {tag}");
            assert_entities_known(tag);
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(name), "closing tag </{name}> does not match");
            } else {
                if open.is_empty() {
                    roots += 1;
                }
                if !tag.ends_with('/') {
                    open.push(tag.split_whitespace().next().expect("tag name"));
                }
            }
            rest = &after[gt + 1..];
        }
        assert_text_well_formed(rest, false);
        assert!(open.is_empty(), "unclosed tags: {open:?}");
        assert_eq!(roots, 1, "expected one root element");
    }

    fn assert_text_well_formed(text: &str, inside_root: bool) {
        assert!(
            inside_root || text.trim().is_empty(),
            "text outside the root element: {text:?}"
        );
        assert!(!text.contains('>'), "raw > in text: {text:?}");
        assert_entities_known(text);
        for c in text.chars() {
            let forbidden = (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}');
            assert!(!forbidden, "character XML forbids: {:?}", c);
        }
    }

    fn assert_entities_known(text: &str) {
        for (at, _) in text.match_indices('&') {
            let entity = &text[at..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|known| entity.starts_with(known)),
                "unescaped &: {entity:.20}"
            );
        }
    }

    fn count(doc: &str, needle: &str) -> usize {
        doc.matches(needle).count()
    }

    #[test]
    fn hostile_labels_leave_the_document_well_formed() {
        let nasty = "void at::native::<lambda>(\"x\") & 'y' \u{1} \u{1b}[0m ]]> <!-- </svg>";
        let doc = render(&Timeline {
            title: nasty.to_owned(),
            start_ns: 0,
            end_ns: 2 * MS,
            lanes: vec![
                lane(
                    nasty,
                    vec![
                        block(0, MS, BlockKind::Op, nasty),
                        block(MS / 2, MS, BlockKind::Stall, nasty),
                    ],
                ),
                lane("GPU 0 stream 7", vec![block(0, MS, BlockKind::Kernel, nasty)]),
            ],
        });
        assert_well_formed(&doc);
        assert!(!doc.contains('\u{1}'));
        assert!(doc.contains("at::native::&lt;lambda&gt;(&quot;x&quot;) &amp; &apos;y&apos; \u{FFFD}"));
    }

    #[test]
    fn the_checker_rejects_broken_documents() {
        let header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">";
        for broken in [
            "<text>a & b</text></svg>",
            "<text>a</rect></svg>",
            "<text>a > b</text></svg>",
            "<g>",
        ] {
            let doc = format!("{header}{broken}");
            assert!(
                std::panic::catch_unwind(|| assert_well_formed(&doc)).is_err(),
                "accepted {broken}"
            );
        }
    }

    #[test]
    fn stall_label_is_escaped_and_drawn_above_its_block() {
        let label = "train_step.py:27 SYNC203 aten::nonzero<int> 0.93 ms";
        let doc = render(&timeline(
            0,
            10 * MS,
            vec![lane(
                "host thread 489",
                vec![
                    block(0, 4 * MS, BlockKind::Op, "aten::nonzero"),
                    block(3 * MS, 4 * MS, BlockKind::Stall, label),
                ],
            )],
        ));
        assert_well_formed(&doc);
        let escaped = "train_step.py:27 SYNC203 aten::nonzero&lt;int&gt; 0.93 ms";
        let shown = format!("<title>{escaped}</title>{escaped}</text>");
        let text_line = doc
            .lines()
            .find(|line| line.contains(&shown))
            .expect("stall label drawn");
        let stall_line = doc
            .lines()
            .find(|line| line.contains(&format!("fill=\"{STALL_RED}\"><title>")))
            .unwrap();
        let y_of = |line: &str| -> f64 {
            let from = line.find(" y=\"").unwrap() + 4;
            line[from..].split('"').next().unwrap().parse().unwrap()
        };
        assert!(y_of(text_line) < y_of(stall_line), "label is not above its block");
        assert!(
            doc.contains(&format!("<line x1=\"{}\"", Num(PLOT_LEFT + 0.35 * PLOT_WIDTH))),
            "no connector"
        );
    }

    #[test]
    fn blocks_are_clipped_to_the_window() {
        let scale = one_ms_window();
        let partly = scale.extent(-MS / 2, MS / 2).unwrap();
        assert_eq!((partly.left, partly.right), (PLOT_LEFT, PLOT_LEFT + PLOT_WIDTH / 2.0));
        let across = scale.extent(i64::MIN, i64::MAX).unwrap();
        assert_eq!((across.left, across.right), (PLOT_LEFT, PLOT_RIGHT));
        let inverted = scale.extent(MS / 2, -MS / 2).unwrap();
        assert_eq!((inverted.left, inverted.right), (partly.left, partly.right));
        assert!(scale.extent(-2 * MS, -MS).is_none());
        assert!(scale.extent(2 * MS, 3 * MS).is_none());
        assert!(
            scale.extent(-MS, 0).is_none(),
            "a block ending where the window starts is outside"
        );
        assert!(scale.extent(i64::MIN, i64::MIN).is_none());
    }

    #[test]
    fn narrow_blocks_are_one_pixel_wide_and_stay_inside() {
        let scale = Scale {
            start_ns: 0,
            end_ns: 100 * MS,
        };
        let stall = scale.extent(50 * MS, 50 * MS + 5_000).unwrap();
        assert!((stall.width() - MIN_BLOCK_PX).abs() < PX_EPSILON);
        let at_end = scale.extent(100 * MS, 100 * MS).unwrap();
        assert!((at_end.right - PLOT_RIGHT).abs() < PX_EPSILON && (at_end.width() - MIN_BLOCK_PX).abs() < PX_EPSILON);
    }

    #[test]
    fn extreme_windows_and_times_do_not_panic() {
        let blocks = || {
            vec![
                block(i64::MIN, i64::MAX, BlockKind::Op, "all"),
                block(i64::MAX, i64::MIN, BlockKind::Stall, "inverted"),
                block(0, 0, BlockKind::Kernel, "instant"),
                block(-5, -1, BlockKind::Memset, "negative"),
            ]
        };
        for (start, end) in [(i64::MIN, i64::MAX), (i64::MAX - 1, i64::MAX), (-3, -1), (0, 1)] {
            let doc = render(&timeline(start, end, vec![lane("host thread 1", blocks())]));
            assert_well_formed(&doc);
            assert!(!doc.contains("NaN") && !doc.contains("inf"), "{doc}");
        }
    }

    #[test]
    fn slivers_sharing_pixels_merge_but_stalls_stay_separate() {
        let kernels = (0..1000).map(|i| block(i * 10, i * 10 + 1, BlockKind::Kernel, "k"));
        let stalls = (0..50).map(|i| block(i * 10, i * 10 + 1, BlockKind::Stall, "s"));
        let doc = render(&timeline(
            0,
            100 * MS,
            vec![lane("GPU 0 stream 7", kernels.chain(stalls).collect())],
        ));
        assert_well_formed(&doc);
        assert_eq!(count(&doc, "fill=\"#1f77b4\"><title>"), 1);
        assert!(doc.contains("<title>1000 kernels merged; first: k</title>"));
        assert_eq!(count(&doc, &format!("fill=\"{STALL_RED}\"><title>")), 50);
    }

    #[test]
    fn visible_blocks_and_distant_slivers_do_not_merge() {
        let back_to_back = vec![
            block(0, MS / 10, BlockKind::Kernel, "first"),
            block(MS / 10, MS / 5, BlockKind::Kernel, "second"),
            block(MS / 2, MS / 2 + 1, BlockKind::Kernel, "sliver"),
            block(
                MS / 2 + MS / 100,
                MS / 2 + MS / 100 + 1,
                BlockKind::Kernel,
                "distant sliver",
            ),
        ];
        let gpu = lane("GPU 0 stream 7", back_to_back);
        let bars = lane_bars(&gpu, &one_ms_window());
        let labels: Vec<&str> = bars.iter().map(|bar| bar.label).collect();
        assert_eq!(labels, ["first", "second", "sliver", "distant sliver"]);
    }

    #[test]
    fn a_block_of_another_kind_ends_a_sliver_run() {
        let mut blocks: Vec<Block> = (0..20)
            .map(|i| block(i * 10, i * 10 + 1, BlockKind::Kernel, "k"))
            .collect();
        blocks.push(block(95, 96, BlockKind::Memcpy, "copy"));
        let gpu = lane("GPU 0 stream 7", blocks);
        let kinds: Vec<BlockKind> = lane_bars(&gpu, &one_ms_window()).iter().map(|bar| bar.kind).collect();
        assert_eq!(kinds, [BlockKind::Kernel, BlockKind::Memcpy, BlockKind::Kernel]);
    }

    #[test]
    fn close_stall_labels_take_separate_rows_and_grow_the_lane() {
        let stalls: Vec<Block> = (0..3)
            .map(|i| block(i * 1_000, i * 1_000 + 500, BlockKind::Stall, &format!("stall {i}")))
            .collect();
        let host = lane("host thread 489", stalls);
        let bars = lane_bars(&host, &one_ms_window());
        let rows: Vec<usize> = place_stall_labels(&bars).iter().map(|label| label.row).collect();
        assert_eq!(rows, [0, 1, 2]);

        let far_apart: Vec<Block> = (0..3)
            .map(|i| block(i * MS / 3, i * MS / 3 + 500, BlockKind::Stall, "stall"))
            .collect();
        let spread = lane("host thread 489", far_apart);
        let bars = lane_bars(&spread, &one_ms_window());
        let rows: Vec<usize> = place_stall_labels(&bars).iter().map(|label| label.row).collect();
        assert_eq!(rows, [0, 0, 0]);

        let lanes = [host, spread, lane("GPU 0 stream 7", Vec::new())];
        let (layouts, _) = lay_out_lanes(&lanes, &one_ms_window());
        let heights: Vec<f64> = layouts
            .windows(2)
            .map(|pair| pair[1].bar_top - pair[0].bar_top)
            .collect();
        assert_eq!(
            heights,
            [label_band_height(1) + BAR_HEIGHT + LANE_GAP, BAR_HEIGHT + LANE_GAP]
        );
        assert_eq!(layouts[0].bar_top, LANES_TOP + label_band_height(3));
    }

    #[test]
    fn labels_beyond_the_last_row_are_left_to_hover() {
        let stalls: Vec<Block> = (0..10).map(|i| block(i, i + 1, BlockKind::Stall, "stall")).collect();
        let host = lane("host thread 489", stalls);
        let bars = lane_bars(&host, &one_ms_window());
        assert_eq!(bars.len(), 10);
        assert_eq!(place_stall_labels(&bars).len(), MAX_LABEL_ROWS);
    }

    #[test]
    fn tick_labels_are_round_numbers() {
        let labels = |span_ms: f64| {
            let step = TickStep::for_span(span_ms);
            (0..step.count(span_ms))
                .map(|index| step.label(index))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            labels(3.7),
            ["0 ms", "0.5 ms", "1 ms", "1.5 ms", "2 ms", "2.5 ms", "3 ms", "3.5 ms"]
        );
        assert_eq!(
            labels(10.0),
            [
                "0 ms", "1 ms", "2 ms", "3 ms", "4 ms", "5 ms", "6 ms", "7 ms", "8 ms", "9 ms", "10 ms"
            ]
        );
        assert_eq!(labels(0.16)[1..3], ["0.02 ms", "0.04 ms"]);
        assert_eq!(labels(0.05)[1..3], ["5 µs", "10 µs"]);
        assert_eq!(labels(1e-5)[1..3], ["1 ns", "2 ns"]);
    }

    #[test]
    fn tick_steps_are_nice_and_about_nine_per_window() {
        let mut span_ms = 1e-6;
        while span_ms < 2e13 {
            let step = TickStep::for_span(span_ms);
            assert!([1, 2, 5].contains(&step.mantissa), "{step:?}");
            let ticks = step.count(span_ms);
            assert!((6..=13).contains(&ticks), "{ticks} ticks for {span_ms} ms");
            let last = step.label(ticks - 1);
            let decimals = last.split(' ').next().unwrap().split('.').nth(1).map_or(0, str::len);
            assert!(decimals <= 2, "{last}");
            span_ms *= 1.37;
        }
    }

    #[test]
    fn numbers_have_at_most_two_decimals() {
        let blocks = (0..200)
            .map(|i| block(i * 7_919, i * 7_919 + 3_001, BlockKind::Kernel, "k"))
            .collect();
        let doc = render(&timeline(13, 1_234_567, vec![lane("GPU 0 stream 7", blocks)]));
        for value in doc.split('"').filter(|value| value.parse::<f64>().is_ok()) {
            assert!(
                value.split('.').nth(1).is_none_or(|decimals| decimals.len() <= 2),
                "{value}"
            );
        }
    }

    #[test]
    fn empty_timelines_render_a_note() {
        for empty in [
            timeline(0, MS, Vec::new()),
            timeline(MS, MS, vec![lane("host thread 1", Vec::new())]),
        ] {
            let doc = render(&empty);
            assert_well_formed(&doc);
            assert!(doc.contains(">nothing to draw</text>"));
            assert!(doc.contains(">ProfilerStep#3 of train_step.pt.trace.json</text>"));
        }
        assert!(!render(&timeline(0, MS, vec![lane("host thread 1", Vec::new())])).contains("nothing to draw"));
    }

    #[test]
    fn legend_and_lane_labels_are_drawn() {
        let doc = render(&timeline(0, MS, vec![lane("host thread 515 (autograd)", Vec::new())]));
        for kind in BlockKind::LEGEND_ORDER {
            assert!(
                doc.contains(&format!(">{}</text>", escape(kind.legend_name()))),
                "{kind:?}"
            );
        }
        assert!(doc.contains(">host thread 515 (autograd)</text>"));
    }

    #[test]
    fn hover_text_is_cut() {
        let name = "k".repeat(64 * 1024);
        let doc = render(&timeline(
            0,
            MS,
            vec![lane(&name, vec![block(0, MS / 2, BlockKind::Kernel, &name)])],
        ));
        assert_well_formed(&doc);
        assert!(doc.len() < 3 * MAX_HOVER_CHARS, "{} bytes", doc.len());
        assert!(doc.contains(&format!("<title>{}…</title>", "k".repeat(MAX_HOVER_CHARS - 1))));
    }

    #[test]
    fn output_is_deterministic() {
        let make = || {
            timeline(
                0,
                MS,
                vec![lane(
                    "host thread 489",
                    vec![block(10, 20_000, BlockKind::Stall, "x.py:1 SYNC101")],
                )],
            )
        };
        assert_eq!(render(&make()), render(&make()));
    }
}
