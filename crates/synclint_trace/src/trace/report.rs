//! The trace report for people (a table, most stall first) and for tools (JSON rows).

use std::io::{self, Write};

use serde::Serialize;

use super::TraceReport;
use super::join::{Row, Status};
use super::read::Nanos;
use crate::render::plural;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// A ranked table and a summary.
    Table,
    /// One JSON object per row, in a JSON array.
    Json,
}

/// Rows most stall first; findings no sync confirmed last, in file order.
fn ranked(report: &TraceReport) -> Vec<&Row> {
    let mut rows: Vec<&Row> = report.rows.iter().collect();
    rows.sort_by(|a, b| {
        b.stall
            .cmp(&a.stall)
            .then(a.status.cmp(&b.status))
            .then_with(|| (&a.path, a.row).cmp(&(&b.path, b.row)))
    });
    rows
}

pub fn render(out: &mut dyn Write, format: TraceFormat, report: &TraceReport) -> io::Result<()> {
    match format {
        TraceFormat::Table => table(out, report),
        TraceFormat::Json => json(out, report),
    }
}

/// Syncs per profiler step, for rows of syncs made inside the steps.
fn per_step(row: &Row, steps: usize) -> Option<f64> {
    let in_steps = matches!(row.status, Status::Confirmed | Status::RuntimeOnly);
    (in_steps && steps > 0).then(|| row.syncs as f64 / steps as f64)
}

fn millis(nanos: Nanos) -> String {
    format!("{:.3} ms", nanos as f64 / 1e6)
}

fn micros(nanos: Nanos) -> f64 {
    nanos as f64 / 1e3
}

fn location(row: &Row) -> String {
    let mut text = match (&row.path, row.row) {
        (Some(path), Some(line)) => format!("{path}:{line}"),
        (Some(path), None) => path.clone(),
        _ => "(no Python frames)".to_string(),
    };
    if let Some(function) = &row.function {
        text.push_str(&format!(" in {function}"));
    }
    text
}

fn table(out: &mut dyn Write, report: &TraceReport) -> io::Result<()> {
    let (syncs, traces) = (report.syncs, report.traces);
    writeln!(
        out,
        "{syncs} host sync{} in {traces} trace{} ({} profiler step{}): {} waiting for the GPU",
        plural(syncs),
        plural(traces),
        report.steps,
        plural(report.steps),
        millis(report.total_stall)
    )?;
    let rows = ranked(report);
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|row| {
            let ops = row.ops.join("; ");
            [
                if row.status == Status::StaticOnly {
                    "-".to_string()
                } else {
                    millis(row.stall)
                },
                row.syncs.to_string(),
                per_step(row, report.steps).map_or("-".to_string(), |n| format!("{n:.1}")),
                row.status.as_str().to_string(),
                location(row),
                row.rule.map_or("-".to_string(), |rule| rule.code().to_string()),
                if row.status == Status::StaticOnly {
                    row.message.clone().unwrap_or_default()
                } else {
                    ops
                },
            ]
        })
        .collect();
    let header = ["STALL", "SYNCS", "/STEP", "STATUS", "LOCATION", "CODE", "OPS / FINDING"];
    let mut widths = header.map(str::len);
    for cells in &cells {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    if !cells.is_empty() {
        writeln!(out)?;
        write_cells(out, &header.map(String::from), &widths)?;
        for cells in &cells {
            write_cells(out, cells, &widths)?;
        }
        writeln!(out)?;
    }
    let summary: Vec<String> = [
        Status::Confirmed,
        Status::RuntimeOnly,
        Status::OutsideLoop,
        Status::Profiler,
        Status::StaticOnly,
    ]
    .into_iter()
    .filter_map(|status| {
        let of: Vec<&&Row> = rows.iter().filter(|r| r.status == status).collect();
        if of.is_empty() {
            return None;
        }
        let syncs: usize = of.iter().map(|r| r.syncs).sum();
        let stall = of.iter().fold(0, |total: Nanos, r| total.saturating_add(r.stall));
        Some(match status {
            Status::Confirmed => format!(
                "{} finding{} confirmed ({syncs} syncs, {})",
                of.len(),
                plural(of.len()),
                millis(stall)
            ),
            Status::StaticOnly => format!("{} finding{} never synced", of.len(), plural(of.len())),
            _ => format!("{} {syncs} sync{} ({})", status.as_str(), plural(syncs), millis(stall)),
        })
    })
    .collect();
    if !summary.is_empty() {
        writeln!(out, "{}", summary.join("; "))?;
    }
    for warning in &report.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    Ok(())
}

fn write_cells(out: &mut dyn Write, cells: &[String; 7], widths: &[usize; 7]) -> io::Result<()> {
    let mut line = String::new();
    for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
        let pad = width.saturating_sub(cell.chars().count());
        // Numbers right-aligned, text left-aligned, the last column unpadded.
        if index < 3 {
            line.push_str(&" ".repeat(pad));
            line.push_str(cell);
        } else if index == cells.len() - 1 {
            line.push_str(cell);
        } else {
            line.push_str(cell);
            line.push_str(&" ".repeat(pad));
        }
        line.push_str("  ");
    }
    writeln!(out, "{}", line.trim_end())
}

#[derive(Serialize)]
struct JsonRow<'r> {
    filename: Option<&'r str>,
    location: Option<JsonLocation>,
    code: Option<&'static str>,
    status: &'static str,
    function: Option<&'r str>,
    message: Option<&'r str>,
    syncs: usize,
    syncs_per_step: Option<f64>,
    backward_syncs: usize,
    stall_us: f64,
    gpu_idle_us: f64,
    ops: &'r [String],
}

#[derive(Serialize)]
struct JsonLocation {
    row: usize,
    column: Option<usize>,
}

fn json(out: &mut dyn Write, report: &TraceReport) -> io::Result<()> {
    let rows: Vec<JsonRow> = ranked(report)
        .into_iter()
        .map(|row| JsonRow {
            filename: row.path.as_deref(),
            location: row.row.map(|line| JsonLocation {
                row: line,
                column: row.column,
            }),
            code: row.rule.map(|rule| rule.code()),
            status: row.status.as_str(),
            function: row.function.as_deref(),
            message: row.message.as_deref(),
            syncs: row.syncs,
            syncs_per_step: per_step(row, report.steps).map(|n| (n * 1000.0).round() / 1000.0),
            backward_syncs: row.backward,
            stall_us: micros(row.stall),
            gpu_idle_us: micros(row.gpu_idle),
            ops: &row.ops,
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &rows).map_err(io::Error::other)?;
    writeln!(out)
}
