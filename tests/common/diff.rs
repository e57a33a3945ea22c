//! Reading the unified diffs `check --diff` prints, and applying them: the harnesses check that
//! a diff is well formed and that it makes exactly the file `--fix` writes.

/// One file's (or one notebook cell's) part of a diff: the path its headers name, its hunks.
pub struct FileDiff {
    pub path: String,
    pub hunks: Vec<Hunk>,
}

/// `@@ -old_start,old_len +new_start,new_len @@` and its lines, each `(tag, text)` with the
/// tag ` `, `-` or `+` and the text with its line end (none where the diff says the file has
/// no newline at its end).
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<(char, String)>,
}

/// Reads a unified diff: each file's `---` and `+++` headers (naming the same path), hunks whose
/// line counts are those their headers give.
pub fn parse(diff: &str) -> Result<Vec<FileDiff>, String> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut lines = diff.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let Some(old) = line.strip_prefix("--- ") else {
            return Err(format!("expected a `--- ` header, found {line:?}"));
        };
        let new = lines
            .next()
            .and_then(|line| line.strip_prefix("+++ "))
            .ok_or_else(|| format!("`--- {}` without its `+++ ` header", old.trim_end()))?;
        if old != new {
            return Err(format!("headers name two paths: {old:?} and {new:?}"));
        }
        let mut file = FileDiff {
            path: old.trim_end_matches('\n').to_string(),
            hunks: Vec::new(),
        };
        while let Some(header) = lines.next_if(|line| line.starts_with("@@ ")) {
            let mut hunk = hunk_header(header)?;
            let (mut old_seen, mut new_seen) = (0, 0);
            while old_seen < hunk.old_len || new_seen < hunk.new_len {
                let line = lines
                    .next()
                    .ok_or_else(|| format!("{}: a hunk ends early: {header:?}", file.path))?;
                let tag = line.chars().next().unwrap_or('?');
                match tag {
                    ' ' => (old_seen, new_seen) = (old_seen + 1, new_seen + 1),
                    '-' => old_seen += 1,
                    '+' => new_seen += 1,
                    _ => return Err(format!("{}: a hunk line {line:?} in {header:?}", file.path)),
                }
                if old_seen > hunk.old_len || new_seen > hunk.new_len {
                    return Err(format!("{}: more lines than {header:?} counts", file.path));
                }
                hunk.lines.push((tag, line[1..].to_string()));
                if let Some(marker) = lines.next_if(|line| line.starts_with('\\')) {
                    if marker != "\\ No newline at end of file\n" {
                        return Err(format!("{}: {marker:?}", file.path));
                    }
                    let last = hunk.lines.last_mut().expect("the line the marker is about");
                    if last.1.pop() != Some('\n') {
                        return Err(format!("{}: a line without its newline before {marker:?}", file.path));
                    }
                }
            }
            file.hunks.push(hunk);
        }
        if file.hunks.is_empty() {
            return Err(format!("{}: headers without a hunk", file.path));
        }
        files.push(file);
    }
    Ok(files)
}

fn hunk_header(line: &str) -> Result<Hunk, String> {
    let bad = || format!("a hunk header {line:?}");
    let ranges = line
        .strip_prefix("@@ -")
        .and_then(|rest| rest.trim_end_matches('\n').strip_suffix(" @@"))
        .ok_or_else(bad)?;
    let (old, new) = ranges.split_once(" +").ok_or_else(bad)?;
    let range = |text: &str| -> Result<(usize, usize), String> {
        let (start, len) = text.split_once(',').unwrap_or((text, "1"));
        Ok((start.parse().map_err(|_| bad())?, len.parse().map_err(|_| bad())?))
    };
    let ((old_start, old_len), (new_start, new_len)) = (range(old)?, range(new)?);
    Ok(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        lines: Vec::new(),
    })
}

/// `original` with `hunks` applied; every context and removed line must be the original's
/// line there, byte for byte (its line end included).
pub fn apply(original: &str, hunks: &[Hunk]) -> Result<String, String> {
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let mut out = String::with_capacity(original.len());
    let mut next = 0;
    for hunk in hunks {
        // A hunk that only adds lines names the line it adds them after.
        let start = match hunk.old_len {
            0 => Some(hunk.old_start),
            _ => hunk.old_start.checked_sub(1),
        };
        let Some(start) = start.filter(|&start| start >= next && start <= lines.len()) else {
            return Err(format!(
                "a hunk at line {} is out of order or past the end",
                hunk.old_start
            ));
        };
        out.extend(lines[next..start].iter().copied());
        next = start;
        for (tag, text) in &hunk.lines {
            if *tag != '+' {
                match lines.get(next) {
                    Some(line) if line == text => next += 1,
                    found => {
                        return Err(format!("line {} is {found:?}, the diff says {text:?}", next + 1));
                    }
                }
            }
            if *tag != '-' {
                out.push_str(text);
            }
        }
    }
    out.extend(lines[next..].iter().copied());
    Ok(out)
}
