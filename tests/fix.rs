//! `--fix` end to end: the binary on files in temporary folders. A before/after snapshot per fix,
//! every fixture fixed twice (the result parses with CPython, the second pass changes nothing),
//! bytes outside the edits kept, imports, permissions, `--diff`, `--fix-only`, `--show-fixes`,
//! config keys and stdin; and writes that lose nothing: edits made while `--fix` runs, a run
//! killed mid-write, links out of the folder, hard links, owners, files that cannot be written.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{exit_code, repo, run, run_stdin, stderr, stdout};

const FIX: [&str; 5] = ["check", "--isolated", "--fix", "--unsafe-fixes", "--quiet"];

/// The start of every snapshot input: torch imported, a CUDA device.
const HEADER: &str = "import torch\nimport torch.nn.functional as F\n\ndevice = torch.device(\"cuda\")\n\n";

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// Writes `source` to `dir/name` and runs synclint with `args` and the file's name.
fn run_on(dir: &Path, name: &str, source: &[u8], args: &[&str]) -> (Vec<u8>, Output) {
    let path = dir.join(name);
    fs::write(&path, source).unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.push(name);
    let output = run(dir, &all);
    (fs::read(&path).unwrap(), output)
}

/// `check --isolated --fix --unsafe-fixes` on `source`: the fixed bytes.
fn fix_bytes(source: &[u8]) -> Vec<u8> {
    let dir = temp_dir();
    let (fixed, output) = run_on(dir.path(), "train.py", source, &FIX);
    assert_ne!(exit_code(&output), 2, "synclint failed:\n{}", stderr(&output));
    fixed
}

/// Does CPython parse the file? `Err` with its message when not.
fn python_parses(path: &Path) -> Result<(), String> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import ast,sys; ast.parse(open(sys.argv[1], encoding='utf-8').read())",
        ])
        .arg(path)
        .output()
        .expect("python3 runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Fixes `body` (after [`HEADER`]) and snapshots the input and the result. Also checks that
/// something changed, that the result parses, and that a second `--fix` changes nothing.
fn snapshot_fix(name: &str, body: &str) {
    let source = format!("{HEADER}{body}");
    let dir = temp_dir();
    let (fixed, output) = run_on(dir.path(), "train.py", source.as_bytes(), &FIX);
    assert_ne!(exit_code(&output), 2, "{name}: synclint failed:\n{}", stderr(&output));
    let fixed = String::from_utf8(fixed).unwrap();
    assert_ne!(fixed, source, "{name}: nothing was fixed\n{}", stdout(&output));
    python_parses(&dir.path().join("train.py"))
        .unwrap_or_else(|e| panic!("{name}: the fixed file does not parse:\n{e}\n{fixed}"));
    let (again, _) = run_on(dir.path(), "train.py", fixed.as_bytes(), &FIX);
    assert_eq!(
        String::from_utf8(again).unwrap(),
        fixed,
        "{name}: a second --fix changed the file"
    );
    let snapshot = format!("# ---- before ----\n{source}\n# ---- after `--fix --unsafe-fixes` ----\n{fixed}");
    insta::with_settings!({ omit_expression => true }, {
        insta::assert_snapshot!(name, snapshot);
    });
}

// ---- 1. One snapshot per fix ----------------------------------------------------------------

#[test]
fn sync401_tensor_of_a_literal_becomes_full() {
    snapshot_fix(
        "SYNC401_full",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        scale = torch.tensor(0.5, device=device)
        step = torch.tensor(3, device=device, dtype=torch.int32)
        flag = torch.as_tensor(True, device="cuda")
        neg = torch.tensor(-2.0, device=device, requires_grad=True)
        table = torch.tensor([1, 2, 3], device=device)  # a list: no fix
        loss = model(batch) * scale * step * flag * neg * table
"#,
    );
}

#[test]
fn sync401_loader_batches_copy_non_blocking() {
    snapshot_fix(
        "SYNC401_non_blocking",
        r#"from torch.utils.data import DataLoader


def train(model, dataset):
    loader = DataLoader(dataset, batch_size=32, pin_memory=True)
    for images, labels in loader:
        images = images.to(device)
        labels = labels.cuda()
        model(images, labels)
    for step, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=False)
        labels = labels.to(
            device,
        )
        model(images, labels)
"#,
    );
}

#[test]
fn sync203_masked_sum_keeps_the_shape() {
    snapshot_fix(
        "SYNC203_sum",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        x = model(batch)
        loss = F.mse_loss(x, batch, reduction="none")
        rows = torch.rand(x.shape[0], device=device) > 0.5
        positive = x[x > 0].sum()
        finite = loss[torch.isfinite(loss)].sum()
        kept = x[~torch.isnan(x) & (x < 10)].sum()
        row_sum = x[rows].sum()  # a row mask: no fix
        (positive + finite + kept + row_sum).backward()
"#,
    );
}

#[test]
fn sync203_masked_mean_divides_by_the_count() {
    snapshot_fix(
        "SYNC203_mean",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        errors = model(batch)
        valid = errors < 10
        avg = errors[errors > 0].mean()
        avg_valid = errors[valid].mean()
        (avg + avg_valid).backward()
"#,
    );
}

#[test]
fn sync204_masked_assignment_becomes_where() {
    snapshot_fix(
        "SYNC204_assign",
        r#"
def train(model, loader, ema):
    cap = torch.ones((), device=device)
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        x = model(batch)
        target = batch.float()
        keep = target >= 0
        x[x > 1] = cap
        x[torch.isnan(x)] = x.mean()
        target[keep] = x[keep].detach()
        target[keep] = x[x > 0]  # another mask: one value per selected element, no fix
"#,
    );
}

#[test]
fn sync204_masked_update_becomes_an_in_place_op() {
    snapshot_fix(
        "SYNC204_update",
        r#"
def train(model, loader):
    bonus = torch.ones((), device=device)
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        x = model(batch)
        x[x > 0] += bonus
        x[x < 0] -= 2 * x[x < 0]
        x[x > 10] *= bonus
        x[x > 20] /= bonus  # no in-place method with a neutral value: no fix
"#,
    );
}

#[test]
fn sync201_write_through_nonzero_becomes_masked_fill() {
    snapshot_fix(
        "SYNC201_masked_fill",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        x = model(batch)
        x[torch.nonzero(x < 0, as_tuple=True)] = 0.0
        x[torch.where(torch.isnan(x))] = 0.0
        x[(x > 1).nonzero(as_tuple=True)] = 1.0
        rows = torch.rand(x.shape[0], device=device) > 0.5
        x[torch.where(rows)] = 0.0  # a row mask: no fix
"#,
    );
}

#[test]
fn sync202_count_of_unique_stays_on_the_device() {
    snapshot_fix(
        "SYNC202_count",
        r#"
def train(model, loader):
    for tokens in loader:
        tokens = tokens.to(device, non_blocking=True)
        a = len(torch.unique(tokens))
        b = torch.unique(tokens).numel()
        c = torch.numel(torch.unique(tokens))
        d = len(torch.unique_consecutive(tokens))
        e = len(torch.unique(tokens + 1))
        f = len(torch.unique(tokens, return_counts=True))  # a tuple: no fix
        g = len(torch.unique(tokens, True, True))  # a tuple too: no fix
        model(tokens, a, b, c, d, e, f, g)
"#,
    );
}

#[test]
fn sync301_masked_loss_uses_ignore_index() {
    snapshot_fix(
        "SYNC301_ignore_index",
        r#"
criterion = torch.nn.CrossEntropyLoss()


def train(model, loader):
    for tokens, tags in loader:
        tokens = tokens.to(device, non_blocking=True)
        tags = tags.to(device, non_blocking=True)
        logits = model(tokens)
        keep = tags != -100
        loss = F.cross_entropy(logits[keep], tags[keep])
        lp = F.log_softmax(logits, dim=-1)
        loss = loss + F.nll_loss(lp[keep], tags[keep], reduction="sum")
        rare = tags >= 10
        loss = loss + F.cross_entropy(logits[rare], tags[rare], label_smoothing=0.1)
        loss = loss + criterion(logits[keep], tags[keep])  # a module: no fix
        loss.backward()
"#,
    );
}

#[test]
fn sync301_masked_loss_module_built_in_init() {
    // The mask, the permute and the masked reads go through locals; the loss module is built in
    // `__init__`: `ignore_index=` goes there, the call reads the full tensors, and the locals
    // nothing else reads go.
    snapshot_fix(
        "SYNC301_module_in_init",
        r#"
class SegmentationLoss(torch.nn.Module):
    def __init__(self, void=255, n_classes=21):
        super().__init__()
        self.void = void
        self.n_classes = n_classes
        self.ce = torch.nn.CrossEntropyLoss()

    def forward(self, scores, target):
        valid = target != self.void
        per_pixel = scores.permute(0, 2, 3, 1)
        picked = per_pixel[valid.unsqueeze(-1).expand(-1, -1, -1, self.n_classes)]
        return self.ce(picked.reshape(-1, self.n_classes), target[valid])


class TokenLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.nll = torch.nn.NLLLoss(reduction="sum")

    def forward(self, log_probs, tokens, pad):
        real = tokens != pad
        rows = log_probs[real]
        return self.nll(rows, tokens[real])


class SharedLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ce = torch.nn.CrossEntropyLoss()

    def forward(self, scores, target, aux):
        valid = target != 255
        main = self.ce(scores[valid], target[valid])
        return main + self.ce(aux, target)  # the module serves another call: no fix


class KeptMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ce = torch.nn.CrossEntropyLoss()

    def forward(self, scores, target):
        valid = target != 255
        loss = self.ce(scores[valid], target[valid])
        return loss, valid.sum()  # `valid` is read again: it stays


def branch_only(scores, target, flag):
    valid = target != 255
    if flag:
        picked = scores[valid]
    return F.cross_entropy(picked, target[valid])  # deleting `picked` would empty the block: no fix
"#,
    );
}

#[test]
fn sync201_indices_bound_to_a_name_become_masked_fill() {
    snapshot_fix(
        "SYNC201_through_a_name",
        r#"
def train(model, loader):
    for images, labels in loader:
        labels = labels.to(device, non_blocking=True)
        background = torch.nonzero(labels == 0, as_tuple=True)
        labels[background] = -1
        rare = torch.where(labels > 90)
        n = len(rare[0])  # the indices are read again: no fix
        labels[rare] = 90
        edge = torch.nonzero(labels == 5, as_tuple=True)
        labels = labels.clone()  # the mask's tensor changes before the write: no fix
        labels[edge] = 0
        loss = model(images, labels)
        loss.backward()
"#,
    );
}

#[test]
fn sync105_assigning_branches_become_where() {
    snapshot_fix(
        "SYNC105_where",
        r#"
def train(model, loader, opt):
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        loss = model(x, y)
        skip = torch.isnan(loss)
        if skip:
            loss = torch.zeros_like(loss)
            scale = torch.zeros_like(x)
        else:
            scale = torch.ones_like(x)
        if skip:
            loss = torch.zeros_like(loss)
            scale = torch.ones_like(loss)  # reads what the branch assigned: no fix
        if loss > 100:
            loss = loss / 100
        if skip:
            status = "nan"  # not a tensor: no fix
        if skip:
            loss = 0.0 * loss
            total = loss + 1  # reads what the branch assigned: no fix
        if skip:  # kept
            loss = loss * 0
        (loss * scale).backward()
        opt.step()
"#,
    );
}

#[test]
fn sync401_pinned_batches_from_a_list_copy_non_blocking() {
    snapshot_fix(
        "SYNC401_pinned_list",
        r#"
def train(model, opt, steps):
    batches = [torch.randint(0, 1000, (8, 129)).pin_memory() for _ in range(steps)]
    staging = torch.empty(8, 129, dtype=torch.long).pin_memory()
    for step in range(steps):
        batch = batches[step].to(device)
        staging.copy_(batches[0])
        again = staging.to(device)  # a buffer the host fills again: unsafe fix
        loss = model(batch) + model(again)
        loss.backward()
        opt.step()
    for batch in batches:
        batch = batch.cuda()
        model(batch).backward()
        opt.step()
"#,
    );
}

#[test]
fn sync101_running_total_sums_on_the_device() {
    snapshot_fix(
        "SYNC101_running_total",
        r#"
def train(model, loader, opt):
    total = 0.0
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        loss = model(x, y)
        loss.backward()
        opt.step()
        total += loss.item() * x.shape[0]
        last = loss.item()  # a value read as a number: no fix
    return total
"#,
    );
}

#[test]
fn sync203_counts_and_summed_losses_over_a_mask_keep_the_shape() {
    snapshot_fix(
        "SYNC203_counts_and_losses",
        r#"
def train(model, loader, anchors):
    for tokens, targets, boxes in loader:
        tokens = tokens.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        logits, deltas = model(tokens)
        real = targets != 0
        correct = (logits.argmax(-1)[real] == targets[real]).sum()
        positive = deltas.norm(dim=-1) > 1
        box_loss = F.smooth_l1_loss(deltas[positive], boxes[positive], reduction="sum")
        mean_loss = F.l1_loss(deltas[positive], boxes[positive])  # a mean: no fix
        other = (logits.argmax(-1)[real] == tokens[positive]).sum()  # two masks: no fix
        (box_loss + mean_loss).backward()
"#,
    );
}

#[test]
fn sync101_bounded_count_stays_on_the_device() {
    snapshot_fix(
        "SYNC101_bounded",
        r#"
def train(model, loader):
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        scores = model(x)
        positive = scores > 0
        num_pos = max(positive.sum().item(), 1)
        cap = min(1.0, scores.max().item())
        loss = (scores * positive).sum() / num_pos * cap
        loss.backward()
"#,
    );
}

#[test]
fn sync302_adam_becomes_fused() {
    snapshot_fix(
        "SYNC302_fused",
        r#"
def train(model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    opt2 = torch.optim.Adam(
        model.parameters(),
        lr=1e-3,
    )
    opt3 = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=False)
    opt4 = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)  # fused would raise: no fix
    scaler = torch.amp.GradScaler()
    for batch in loader:
        loss = model(batch)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.step(opt2)
        scaler.step(opt3)
        scaler.step(opt4)
        scaler.update()
"#,
    );
}

#[test]
fn sync303_checked_linalg_becomes_ex() {
    snapshot_fix(
        "SYNC303_ex",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        a = model(batch)
        b = torch.linalg.inv(a)
        c = torch.inverse(a)
        d = torch.linalg.cholesky(a, upper=True)
        e = torch.linalg.solve(a, b, left=False)
        w = torch.linalg.eigh(a)  # no _ex variant: no fix
        model(b, c, d, e, w)
"#,
    );
}

#[test]
fn sync304_distributions_skip_validation() {
    snapshot_fix(
        "SYNC304_validate_args",
        r#"
def train(policy, loader):
    for obs in loader:
        obs = obs.to(device, non_blocking=True)
        mu, sigma = policy(obs)
        dist = torch.distributions.Normal(mu, sigma)
        cat = torch.distributions.Categorical(
            logits=mu,
        )
        beta = torch.distributions.Beta(mu.exp(), (sigma))  # after the parentheses
        (dist.rsample() + cat.sample() + beta.rsample()).sum().backward()
"#,
    );
}

#[test]
fn sync305_clip_grad_norm_drops_the_check() {
    snapshot_fix(
        "SYNC305_clip",
        r#"
def train(model, loader, opt):
    for batch in loader:
        model(batch).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        torch.nn.utils.clip_grad_norm_(
            model.parameters(),
            max_norm=1.0,  # the usual
            error_if_nonfinite=True,
        )
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, 2.0, True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), (1.0), error_if_nonfinite=True)
        opt.step()
"#,
    );
}

#[test]
fn sync105_assert_becomes_assert_async() {
    snapshot_fix(
        "SYNC105_assert",
        r#"
def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        loss = model(batch)
        assert torch.isfinite(loss).all()
        assert loss > 0, "loss must be positive"
        assert loss < 1e6, f"loss exploded: {loss}"  # a computed message: no fix
        loss.backward()
"#,
    );
}

#[test]
fn fixes_keep_comments() {
    // Removing an argument keeps the comments around it; `torch.full` is written into the call
    // in place; an `assert` with a comment inside its test gets no fix.
    snapshot_fix(
        "comments",
        r#"
def train(model, loader, opt):
    for batch in loader:
        model(batch).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), error_if_nonfinite=True, foreach=None)
        torch.nn.utils.clip_grad_norm_(
            model.parameters(),
            1.0,  # max norm
            error_if_nonfinite=True,  # strict
            foreach=None,
        )
        torch.nn.utils.clip_grad_norm_(
            model.parameters(),
            1.0,  # max norm
            error_if_nonfinite=True
        )
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True,)
        s = torch.tensor(  # the scale
            0.5,
            device=device,  # on the GPU
        )
        t = torch.tensor((2), device=device)
        assert (s > 0  # positive
                ), "bad"
        opt.step()
"#,
    );
}

// ---- 2. Every fixture, fixed twice ----------------------------------------------------------

#[test]
fn fixtures_fix_to_parsing_code_and_settle() {
    let dir = temp_dir();
    let mut names = Vec::new();
    for entry in fs::read_dir(repo().join("fixtures")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if (name.starts_with("SYNC") || name == "facts.py") && name.ends_with(".py") {
            fs::copy(&path, dir.path().join(&name)).unwrap();
            names.push(name);
        }
    }
    names.sort();
    assert!(names.len() >= 26, "fixtures: {names:?}");
    let before: Vec<Vec<u8>> = names.iter().map(|n| fs::read(dir.path().join(n)).unwrap()).collect();

    let output = run(
        dir.path(),
        &[
            "check",
            "--isolated",
            "--fix",
            "--unsafe-fixes",
            "--exit-zero",
            "--quiet",
            ".",
        ],
    );
    assert_eq!(exit_code(&output), 0, "first pass:\n{}", stderr(&output));
    let mut changed = 0;
    let mut failures = Vec::new();
    for (name, original) in names.iter().zip(&before) {
        let path = dir.path().join(name);
        if fs::read(&path).unwrap() != *original {
            changed += 1;
        }
        if let Err(error) = python_parses(&path) {
            failures.push(format!("{name}: {error}"));
        }
    }
    assert!(
        failures.is_empty(),
        "fixed fixtures that do not parse:\n{}",
        failures.join("\n")
    );
    assert!(changed >= 10, "only {changed} fixtures changed");

    let fixed: Vec<Vec<u8>> = names.iter().map(|n| fs::read(dir.path().join(n)).unwrap()).collect();
    let output = run(
        dir.path(),
        &[
            "check",
            "--isolated",
            "--fix",
            "--unsafe-fixes",
            "--exit-zero",
            "--quiet",
            "--show-fixes",
            ".",
        ],
    );
    assert_eq!(exit_code(&output), 0, "second pass:\n{}", stderr(&output));
    assert!(
        !stdout(&output).contains("Fixed"),
        "the second pass fixed more:\n{}",
        stdout(&output)
    );
    for (name, first) in names.iter().zip(&fixed) {
        assert_eq!(
            fs::read(dir.path().join(name)).unwrap(),
            *first,
            "{name} changed on the second pass"
        );
    }
}

// ---- 3. Bytes, imports, permissions, modes --------------------------------------------------

/// A loop body line that SYNC401 fixes, and its fixed form.
const FIXABLE: &str = "s = torch.tensor(0.5, device=device)";
const FIXED: &str = "s = torch.full((), 0.5, device=device)";

/// A file with `line_end` line endings, `indent` indentation, and whether it ends with a newline.
fn shaped(line_end: &str, indent: &str, final_newline: bool, fixed: bool) -> Vec<u8> {
    let line = if fixed { FIXED } else { FIXABLE };
    let lines = [
        "import torch".to_string(),
        String::new(),
        "device = torch.device(\"cuda\")  # trailing spaces after this comment   ".to_string(),
        "for step in range(10):".to_string(),
        format!("{indent}{line}"),
        format!("{indent}if step:"),
        format!("{indent}{indent}x = 'ünïcödé'\t# tab before this comment"),
    ];
    let mut text = lines.join(line_end);
    if final_newline {
        text.push_str(line_end);
    }
    text.into_bytes()
}

#[test]
fn crlf_tabs_and_no_final_newline_are_kept() {
    for (line_end, indent, final_newline) in [
        ("\r\n", "    ", true),
        ("\n", "\t", true),
        ("\n", "    ", false),
        ("\r\n", "\t", false),
        ("\r", "  ", true),
    ] {
        let source = shaped(line_end, indent, final_newline, false);
        let expected = shaped(line_end, indent, final_newline, true);
        assert_eq!(
            fix_bytes(&source),
            expected,
            "line end {line_end:?}, indent {indent:?}, final newline {final_newline}"
        );
    }
}

#[test]
fn byte_order_mark_is_kept() {
    let mut source = "\u{feff}".as_bytes().to_vec();
    source.extend(shaped("\r\n", "    ", true, false));
    let mut expected = "\u{feff}".as_bytes().to_vec();
    expected.extend(shaped("\r\n", "    ", true, true));
    assert_eq!(fix_bytes(&source), expected);
}

#[test]
fn missing_torch_import_is_added_once_in_the_import_block() {
    // Three fixes need the name `torch`; the file only imports names from it.
    let source = "\"\"\"Training.\"\"\"\r\nfrom __future__ import annotations\r\n\r\nimport os\r\nfrom torch import randn, tensor\r\n\r\n\r\ndef train(loader):\r\n    for batch in loader:\r\n        x = randn(8, device=\"cuda\")\r\n        assert x.sum() > 0\r\n        y = x[x > 0].sum()\r\n        z = tensor(1.0, device=\"cuda\")\r\n";
    let expected = "\"\"\"Training.\"\"\"\r\nfrom __future__ import annotations\r\n\r\nimport torch\r\nimport os\r\nfrom torch import randn, tensor\r\n\r\n\r\ndef train(loader):\r\n    for batch in loader:\r\n        x = randn(8, device=\"cuda\")\r\n        torch._assert_async(x.sum() > 0)\r\n        y = torch.where(x > 0, x, 0).sum()\r\n        z = torch.full((), 1.0, device=\"cuda\")\r\n";
    assert_eq!(String::from_utf8(fix_bytes(source.as_bytes())).unwrap(), expected);
}

#[test]
fn import_goes_after_header_comments_when_there_is_no_import_block() {
    // No import statement at all: `import torch` goes after the shebang, the encoding line and
    // the comments that head the file, before the first statement.
    let source = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# Licence.\n\ndef train_step(x: Tensor):\n    assert x.sum() > 0";
    let expected = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# Licence.\n\nimport torch\ndef train_step(x: Tensor):\n    torch._assert_async(x.sum() > 0)";
    assert_eq!(String::from_utf8(fix_bytes(source.as_bytes())).unwrap(), expected);
}

#[test]
fn an_existing_alias_is_used_instead_of_a_new_import() {
    let source =
        "import torch as th\n\nfor step in range(3):\n    x = th.randn(8, device=\"cuda\")\n    assert x.sum() > 0\n";
    let expected = "import torch as th\n\nfor step in range(3):\n    x = th.randn(8, device=\"cuda\")\n    th._assert_async(x.sum() > 0)\n";
    assert_eq!(String::from_utf8(fix_bytes(source.as_bytes())).unwrap(), expected);
}

fn fixable_file(dir: &Path) -> PathBuf {
    let path = dir.join("train.py");
    fs::write(&path, shaped("\n", "    ", true, false)).unwrap();
    path
}

#[test]
fn read_only_file_is_an_error_and_unchanged() {
    let dir = temp_dir();
    let path = fixable_file(dir.path());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--fix", "train.py"]);
    assert_eq!(
        exit_code(&output),
        2,
        "stdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(stderr(&output).contains("train.py"), "{}", stderr(&output));
    assert!(stderr(&output).contains("read-only"), "{}", stderr(&output));
    assert_eq!(fs::read(&path).unwrap(), shaped("\n", "    ", true, false));
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o444);
}

#[test]
fn permissions_are_kept() {
    let dir = temp_dir();
    let path = fixable_file(dir.path());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--fix", "train.py"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert_eq!(fs::read(&path).unwrap(), shaped("\n", "    ", true, true));
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
    // Nothing but the file (and the cache) is left in the folder: no temporary file.
    let left = fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != ".synclint_cache");
    assert_eq!(left.count(), 1);
}

#[test]
fn a_symbolic_link_stays_a_link() {
    let dir = temp_dir();
    let target = fixable_file(dir.path());
    let link = dir.path().join("link.py");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--fix", "link.py"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(&target).unwrap(), shaped("\n", "    ", true, true));
}

#[test]
fn diff_prints_and_writes_nothing() {
    let dir = temp_dir();
    let path = fixable_file(dir.path());
    let output = run(dir.path(), &["check", "--isolated", "--diff", "train.py"]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    let diff = stdout(&output);
    assert!(diff.contains("--- train.py\n+++ train.py\n"), "{diff}");
    assert!(diff.contains(&format!("\n-    {FIXABLE}\n+    {FIXED}\n")), "{diff}");
    assert_eq!(fs::read(&path).unwrap(), shaped("\n", "    ", true, false));

    // Nothing to fix (a finding without a fix is not a change): exit 0, no output.
    fs::write(
        &path,
        "import torch\nfor step in range(3):\n    x = torch.randn(3, device=\"cuda\")\n    print(x.item())\n",
    )
    .unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--diff", "train.py"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output), "");
}

#[test]
fn diff_needs_unsafe_fixes_for_unsafe_ones() {
    let dir = temp_dir();
    let source =
        "import torch\nfor step in range(3):\n    x = torch.randn(3, device=\"cuda\")\n    assert x.sum() > 0\n";
    let (after, output) = run_on(
        dir.path(),
        "train.py",
        source.as_bytes(),
        &["check", "--isolated", "--diff"],
    );
    assert_eq!(exit_code(&output), 0, "{}", stdout(&output));
    let (_, output) = run_on(
        dir.path(),
        "train.py",
        &after,
        &["check", "--isolated", "--diff", "--unsafe-fixes"],
    );
    assert_eq!(exit_code(&output), 1);
    assert!(
        stdout(&output).contains("+    torch._assert_async(x.sum() > 0)"),
        "{}",
        stdout(&output)
    );
    assert_eq!(fs::read(dir.path().join("train.py")).unwrap(), source.as_bytes());
}

#[test]
fn safe_fixes_only_without_unsafe_fixes() {
    let source = "import torch\nfor step in range(3):\n    x = torch.randn(3, device=\"cuda\")\n    s = torch.tensor(2, device=\"cuda\")\n    assert x.sum() > 0\n";
    let dir = temp_dir();
    let (fixed, output) = run_on(
        dir.path(),
        "train.py",
        source.as_bytes(),
        &["check", "--isolated", "--fix"],
    );
    assert_eq!(exit_code(&output), 1, "the unsafe finding remains: {}", stdout(&output));
    assert_eq!(
        String::from_utf8(fixed).unwrap(),
        "import torch\nfor step in range(3):\n    x = torch.randn(3, device=\"cuda\")\n    s = torch.full((), 2, device=\"cuda\")\n    assert x.sum() > 0\n"
    );
    assert!(stdout(&output).contains("--unsafe-fixes"), "{}", stdout(&output));
}

#[test]
fn fix_only_exits_zero_with_unfixable_findings_left() {
    let dir = temp_dir();
    let source = format!(
        "{}    print(s.item())\n",
        String::from_utf8(shaped("\n", "    ", true, false)).unwrap()
    );
    let (fixed, output) = run_on(
        dir.path(),
        "train.py",
        source.as_bytes(),
        &["check", "--isolated", "--fix-only"],
    );
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert!(
        !stdout(&output).contains("SYNC101"),
        "--fix-only reports nothing:\n{}",
        stdout(&output)
    );
    assert!(String::from_utf8(fixed).unwrap().contains(FIXED));
    // Without --fix-only the remaining finding makes the exit code 1.
    let (_, output) = run_on(
        dir.path(),
        "train.py",
        source.as_bytes(),
        &["check", "--isolated", "--fix"],
    );
    assert_eq!(exit_code(&output), 1, "{}", stdout(&output));
    assert!(stdout(&output).contains("SYNC101"), "{}", stdout(&output));
}

#[test]
fn show_fixes_lists_what_was_fixed() {
    let dir = temp_dir();
    let source = "import torch\nfor step in range(3):\n    a = torch.tensor(1.0, device=\"cuda\")\n    b = torch.tensor(2.0, device=\"cuda\")\n    assert a > 0\n";
    let (_, output) = run_on(
        dir.path(),
        "train.py",
        source.as_bytes(),
        &["check", "--isolated", "--fix", "--unsafe-fixes", "--show-fixes"],
    );
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("Fixed 3 findings"), "{out}");
    assert!(out.contains("train.py"), "{out}");
    assert!(out.contains("2 × SYNC401 (blocking-host-to-device)"), "{out}");
    assert!(out.contains("1 × SYNC105 (tensor-truthiness)"), "{out}");
}

#[test]
fn config_keys_fix_and_unsafe_fixes() {
    let dir = temp_dir();
    let source = "import torch\nfor step in range(3):\n    a = torch.tensor(1.0, device=\"cuda\")\n    assert a > 0\n";
    fs::write(dir.path().join("synclint.toml"), "fix = true\n").unwrap();
    let (fixed, output) = run_on(dir.path(), "train.py", source.as_bytes(), &["check"]);
    let fixed = String::from_utf8(fixed).unwrap();
    assert!(
        fixed.contains("torch.full((), 1.0"),
        "fix = true applies safe fixes:\n{fixed}\n{}",
        stderr(&output)
    );
    assert!(fixed.contains("assert a > 0"), "but not unsafe ones:\n{fixed}");

    fs::write(dir.path().join("synclint.toml"), "fix = true\nunsafe-fixes = true\n").unwrap();
    let (fixed, output) = run_on(dir.path(), "train.py", source.as_bytes(), &["check"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let fixed = String::from_utf8(fixed).unwrap();
    assert!(
        fixed.contains("torch._assert_async(a > 0)"),
        "unsafe-fixes = true:\n{fixed}"
    );

    // The command line wins over the config.
    let (fixed, _) = run_on(dir.path(), "train.py", source.as_bytes(), &["check", "--no-fix"]);
    assert_eq!(fixed, source.as_bytes());
}

#[test]
fn stdin_prints_the_fixed_source() {
    let source = String::from_utf8(shaped("\r\n", "\t", false, false)).unwrap();
    let output = run_stdin(
        &["check", "--isolated", "--fix", "--stdin-filename", "x.py", "-"],
        &source,
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    assert_eq!(output.stdout, shaped("\r\n", "\t", false, true));

    // --diff on stdin: the diff, exit 1.
    let output = run_stdin(
        &["check", "--isolated", "--diff", "--stdin-filename", "x.py", "-"],
        &source,
    );
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("+\ts = torch.full((), 0.5, device=device)"),
        "{}",
        stdout(&output)
    );

    // Nothing to fix: the source unchanged.
    let clean = "import torch\nx = 1\n";
    let output = run_stdin(
        &["check", "--isolated", "--fix", "--stdin-filename", "x.py", "-"],
        clean,
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), clean);
}

#[test]
fn a_file_with_a_syntax_error_is_left_alone() {
    let dir = temp_dir();
    let source = "import torch\nfor step in range(3):\n    a = torch.tensor(1.0, device=\"cuda\")\n    b = (\n";
    let (fixed, output) = run_on(
        dir.path(),
        "broken.py",
        source.as_bytes(),
        &["check", "--isolated", "--fix"],
    );
    assert_eq!(exit_code(&output), 2, "{}", stderr(&output));
    assert_eq!(fixed, source.as_bytes());
    assert!(
        stderr(&output).contains("broken.py: the file has syntax errors, so its fixes were not applied"),
        "asked to fix, it says why it did not: {}",
        stderr(&output)
    );
    // Not asked to fix: no word about fixing.
    let (_, output) = run_on(dir.path(), "broken.py", source.as_bytes(), &["check", "--isolated"]);
    assert!(!stderr(&output).contains("were not applied"), "{}", stderr(&output));
}

/// `fix = true` in one folder's config fixes that folder's files, not the files beside it.
#[test]
fn fix_setting_applies_per_folder() {
    let dir = temp_dir();
    let source =
        "import torch\ndev = torch.device(\"cuda\")\nfor step in range(3):\n    v = torch.tensor(1.0, device=dev)\n";
    for folder in ["plain", "fixing"] {
        fs::create_dir(dir.path().join(folder)).unwrap();
        fs::write(dir.path().join(folder).join("train.py"), source).unwrap();
    }
    fs::write(dir.path().join("fixing/synclint.toml"), "fix = true\n").unwrap();
    run(dir.path(), &["check", "plain", "fixing"]);
    let plain = fs::read_to_string(dir.path().join("plain/train.py")).unwrap();
    let fixed = fs::read_to_string(dir.path().join("fixing/train.py")).unwrap();
    assert_eq!(plain, source, "the folder without `fix = true` is left alone");
    assert!(fixed.contains("torch.full((), 1.0, device=dev)"), "{fixed}");
}

// ---- 4. SYNC900: unused `# noqa` codes -------------------------------------------------------

/// A file with a BOM, CRLF line endings, tab indentation and no final newline, whose `# noqa`
/// directives are used, stale, another tool's or unknown.
const DIRECTIVES: &str = "\u{feff}import torch\r\n\
    \r\n\
    device = torch.device(\"cuda\")\r\n\
    x = torch.randn(8, device=device)\r\n\
    for step in range(10):\r\n\
    \tused = x.sum().item()\t# noqa: SYNC101, SYNC203\r\n\
    \tstale = x.sum()  # noqa: E501,SYNC101\r\n\
    \tafter_a_comment = x.sum()\t# type: ignore\t# noqa: SYNC1   \r\n\
    \tunknown = x.sum()  # noqa: SYNC999 why\r\n\
    \t# noqa: SYNC101\r\n\
    \ts = torch.tensor(0.5, device=device)  # noqa: SYNC101\r\n\
    \tlast = x.sum()  # noqa: SYNC101";

#[test]
fn sync900_removes_exactly_the_unused_codes_and_keeps_every_other_byte() {
    let expected = "\u{feff}import torch\r\n\
        \r\n\
        device = torch.device(\"cuda\")\r\n\
        x = torch.randn(8, device=device)\r\n\
        for step in range(10):\r\n\
        \tused = x.sum().item()\t# noqa: SYNC101\r\n\
        \tstale = x.sum()  # noqa: E501\r\n\
        \tafter_a_comment = x.sum()\t# type: ignore\r\n\
        \tunknown = x.sum()  # why\r\n\
        \ts = torch.full((), 0.5, device=device)\r\n\
        \tlast = x.sum()";
    // `--select ALL` selects SYNC900 as `--extend-select` does; SYNC401's fix on the same line
    // applies in the same pass.
    for selection in [["--extend-select", "SYNC900"], ["--select", "ALL"]] {
        let dir = temp_dir();
        let args = [&["check", "--isolated", "--fix"][..], &selection].concat();
        let (fixed, output) = run_on(dir.path(), "train.py", DIRECTIVES.as_bytes(), &args);
        assert_eq!(exit_code(&output), 0, "{selection:?}: {}", stderr(&output));
        assert_eq!(String::from_utf8(fixed).unwrap(), expected, "{selection:?}");
        assert!(stdout(&output).contains("8 fixed, 0 remaining"), "{}", stdout(&output));
        let (again, output) = run_on(dir.path(), "train.py", expected.as_bytes(), &args);
        assert_eq!(String::from_utf8(again).unwrap(), expected, "a second run changed it");
        assert_eq!(exit_code(&output), 0);
        assert!(stdout(&output).contains("All checks passed"), "{}", stdout(&output));
    }
}

/// Alone, SYNC900 judges no code of a rule that did not run: it removes only the unknown code,
/// not every directive (as Ruff's RUF100 does with codes of rules it does not run).
#[test]
fn sync900_alone_removes_only_unknown_codes() {
    let dir = temp_dir();
    let args = ["check", "--isolated", "--fix", "--select", "SYNC900"];
    let (fixed, output) = run_on(dir.path(), "train.py", DIRECTIVES.as_bytes(), &args);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let expected = DIRECTIVES.replace("# noqa: SYNC999 why", "# why");
    assert_eq!(String::from_utf8(fixed).unwrap(), expected);
}

/// Without SYNC900 selected, `--fix` leaves every directive alone.
#[test]
fn sync900_is_not_fixed_by_default() {
    let dir = temp_dir();
    let (fixed, output) = run_on(
        dir.path(),
        "train.py",
        DIRECTIVES.as_bytes(),
        &["check", "--isolated", "--fix"],
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let expected = DIRECTIVES.replace("torch.tensor(0.5, device=device)", "torch.full((), 0.5, device=device)");
    assert_eq!(String::from_utf8(fixed).unwrap(), expected);
}

// ---- 4. Writing only what is safe to write ------------------------------------------------

/// A module `--fix` fixes: `version` tells the user's edits apart, `fixed` gives the text
/// `--fix` makes of it.
fn module(version: usize, fixed: bool) -> String {
    let line = if fixed { FIXED } else { FIXABLE };
    format!(
        "import torch\n\n# version {version}\ndevice = torch.device(\"cuda\")\nfor step in range(10):\n    {line}\n"
    )
}

/// `count` modules in `dir/pkg`, `m000.py` on: module `i` is version `i`.
fn modules(dir: &Path, count: usize) -> Vec<PathBuf> {
    let pkg = dir.join("pkg");
    fs::create_dir_all(&pkg).unwrap();
    (0..count)
        .map(|i| {
            let path = pkg.join(format!("m{i:03}.py"));
            fs::write(&path, module(i, false)).unwrap();
            path
        })
        .collect()
}

/// The names in `folder` that hold "synclint" (temporary files, journals), sorted.
fn leftovers(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("synclint"))
        .collect();
    names.sort();
    names
}

/// Error messages as printed, each on one line (miette wraps them at 80 columns).
fn unwrapped(errors: &str) -> String {
    errors.replace("\n  │ ", " ")
}

/// `synclint` with `args` in `dir`, its stderr into `dir/stderr.txt` (a pipe left unread would
/// fill and stall it), started and not waited for.
fn spawn_in(dir: &Path, args: &[&str]) -> std::process::Child {
    common::synclint()
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .unwrap()
}

/// `--fix` over the package the concurrent-edit and kill tests make.
const FIX_PKG: [&str; 7] = [
    "check",
    "--isolated",
    "--no-cache",
    "--fix",
    "--quiet",
    "--exit-zero",
    "pkg",
];

/// The issue's measurement, as a test: while a project-wide `--fix` runs, every third file is
/// edited over and over, saved as editors save (a new file renamed over it) or rewritten in
/// place, in turn. No edit is lost: before each edit, and at the end, each edited file holds
/// the last edit or the fixed text of the last edit (read after it was made); each other file
/// ends fixed.
#[test]
fn edits_made_while_fix_runs_are_never_lost() {
    const FILES: usize = 200;
    let dir = temp_dir();
    let paths = modules(dir.path(), FILES);
    let args = FIX_PKG;
    let mut child = spawn_in(dir.path(), &args);
    // The version each file was last given.
    let mut last: Vec<usize> = (0..FILES).collect();
    let mut lost = Vec::new();
    let check = |i: usize, last: usize, lost: &mut Vec<String>| {
        let text = fs::read_to_string(&paths[i]).unwrap();
        if text != module(last, false) && text != module(last, true) {
            lost.push(format!("m{i:03}.py: last given version {last}, holds:\n{text}"));
        }
    };
    let mut version = FILES;
    let mut edits = 0;
    while child.try_wait().unwrap().is_none() {
        for i in (0..FILES).step_by(3) {
            check(i, last[i], &mut lost);
            version += 1;
            let text = module(version, false);
            if version.is_multiple_of(2) {
                let saved = dir.path().join("pkg").join(format!(".m{i:03}.py.save"));
                fs::write(&saved, &text).unwrap();
                fs::rename(&saved, &paths[i]).unwrap();
            } else {
                fs::write(&paths[i], &text).unwrap();
            }
            last[i] = version;
            edits += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let status = child.wait().unwrap();
    for (i, &version) in last.iter().enumerate() {
        check(i, version, &mut lost);
        if i % 3 != 0 {
            assert_eq!(fs::read_to_string(&paths[i]).unwrap(), module(i, true), "m{i:03}.py");
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {edits} edits lost:\n{}",
        lost.len(),
        lost.join("\n")
    );
    let errors = unwrapped(&fs::read_to_string(dir.path().join("stderr.txt")).unwrap());
    assert_eq!(status.code(), Some(2), "edited files are reported:\n{errors}");
    let changed = errors.matches("changed while synclint ran; not fixed").count();
    assert!(changed > 0, "no edit landed between a read and its write:\n{errors}");
    // A rewrite in place read half done may not parse: the only other report there may be.
    for line in errors.lines().filter(|line| line.contains(".py:")) {
        assert!(
            line.contains("changed while synclint ran; not fixed") || line.contains("syntax error"),
            "{errors}"
        );
    }
}

/// `--fix` killed (SIGKILL) at several points while it writes: every file is as it was or
/// fixed whole, never part written (a file with another hard link, written in place, may be
/// part way only with its journal beside it). The next `--fix` finishes, removes the stale
/// temporary files beside the files it writes, and leaves a live run's and other names alone.
#[test]
fn a_killed_fix_leaves_every_file_whole_and_the_next_run_cleans_up() {
    const FILES: usize = 200;
    /// A process id no process has: above Linux's largest (2^22).
    const DEAD: u32 = 4_194_400;
    let args = FIX_PKG;
    let mut killed_while_writing = 0;
    for delay in [0, 10, 100] {
        let dir = temp_dir();
        let paths = modules(dir.path(), FILES);
        let pkg = dir.path().join("pkg");
        // Written in place, with its journal: another name outside the folder linted.
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::hard_link(&paths[7], elsewhere.join("m007.py")).unwrap();
        let mut child = spawn_in(dir.path(), &args);
        // Files are written in path order: once the first is fixed, the writes have begun.
        while fs::read_to_string(&paths[0]).unwrap() != module(0, true) && child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _ = child.kill();
        child.wait().unwrap();

        let mut fixed = 0;
        for (i, path) in paths.iter().enumerate() {
            let text = fs::read_to_string(path).unwrap();
            if text == module(i, true) {
                fixed += 1;
            } else if text != module(i, false) {
                assert!(
                    i == 7 && pkg.join(".m007.py.synclint.journal").exists(),
                    "killed after {delay} ms: m{i:03}.py is part written:\n{text}"
                );
            }
        }
        if fixed > 0 && fixed < FILES {
            killed_while_writing += 1;
        }

        let live = format!(".m002.py.synclint-{}.tmp", std::process::id());
        let alike = [live.as_str(), ".m003.py.synclint-12x.tmp", "m004.py.synclint-1.tmp"];
        let dead = format!(".m001.py.synclint-{DEAD}.tmp");
        for name in alike.into_iter().chain([dead.as_str()]) {
            fs::write(pkg.join(name), "partial").unwrap();
        }
        // Something left to write in the folder, should the killed run have finished.
        fs::write(pkg.join("zzz.py"), module(FILES, false)).unwrap();
        let output = run(dir.path(), &args);
        assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
        for (i, path) in paths.iter().enumerate() {
            assert_eq!(fs::read_to_string(path).unwrap(), module(i, true), "m{i:03}.py");
        }
        assert_eq!(fs::read_to_string(elsewhere.join("m007.py")).unwrap(), module(7, true));
        let mut kept: Vec<String> = alike.iter().map(|name| name.to_string()).collect();
        kept.sort();
        assert_eq!(leftovers(&pkg), kept, "killed after {delay} ms");
    }
    assert!(killed_while_writing > 0, "no kill landed while the files were written");
}

/// A write in place (of a file with another hard link) cut short by a kill leaves the file part
/// written and its journal beside it: `--diff` writes nothing, the next `--fix` finishes the
/// write and removes the journal.
#[test]
fn a_write_in_place_cut_short_is_finished_by_the_next_fix() {
    use std::os::unix::fs::MetadataExt;

    let dir = temp_dir();
    let paths = modules(dir.path(), 1);
    let (before, after) = (module(0, false), module(0, true));
    let cut = before.find("tensor").unwrap() + 3;
    let part_written = format!("{}{}", &after[..cut], &before[cut..]);
    fs::write(&paths[0], &part_written).unwrap();
    fs::create_dir(dir.path().join("elsewhere")).unwrap();
    fs::hard_link(&paths[0], dir.path().join("elsewhere/m000.py")).unwrap();
    let journal = dir.path().join("pkg/.m000.py.synclint.journal");
    // As `--fix` writes it, for a process long gone: above Linux's largest id (2^22).
    let header = format!(
        "synclint journal 1\npid=4194400 before={} after={}\n",
        before.len(),
        after.len()
    );
    fs::write(&journal, format!("{header}{before}{after}")).unwrap();

    let output = run(dir.path(), &["check", "--isolated", "--no-cache", "--diff", "pkg"]);
    assert_ne!(exit_code(&output), 2, "{}", stderr(&output));
    assert_eq!(fs::read_to_string(&paths[0]).unwrap(), part_written);
    assert!(journal.exists());

    let output = run(dir.path(), &["check", "--isolated", "--no-cache", "--fix", "pkg"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert_eq!(fs::read_to_string(&paths[0]).unwrap(), after);
    let inode = |path: &Path| fs::metadata(path).unwrap().ino();
    assert_eq!(inode(&paths[0]), inode(&dir.path().join("elsewhere/m000.py")));
    assert!(!journal.exists());
}

/// The fixable file of [`shaped`] at `dir/name`, its findings as `check` reports them (JSON,
/// without fixing) with the path shown as `display`.
fn findings_unfixed(dir: &Path, display: &str) -> Vec<(String, String, u64, u64)> {
    let output = run(
        dir,
        &["check", "--isolated", "--no-cache", "--output-format", "json", display],
    );
    common::json_locations(&output)
}

#[test]
fn a_link_to_a_file_outside_the_folders_linted_is_not_written() {
    let dir = temp_dir();
    let outside = temp_dir();
    let shared = outside.path().join("shared.py");
    fs::write(&shared, shaped("\n", "    ", true, false)).unwrap();
    fs::create_dir(dir.path().join("pkg")).unwrap();
    fs::write(dir.path().join("pkg/own.py"), shaped("\n", "    ", true, false)).unwrap();
    std::os::unix::fs::symlink(&shared, dir.path().join("pkg/link.py")).unwrap();
    let expected = findings_unfixed(dir.path(), "pkg/link.py");
    assert!(!expected.is_empty());
    // Named as a folder, and named itself (its folder counts, not its target's).
    for named in ["pkg", "pkg/link.py"] {
        let output = run(
            dir.path(),
            &[
                "check",
                "--isolated",
                "--no-cache",
                "--fix",
                "--output-format",
                "json",
                named,
            ],
        );
        assert_eq!(exit_code(&output), 2, "{named}: {}", stderr(&output));
        let message = format!(
            "pkg/link.py: is a symbolic link to {}, outside the folders being linted; not fixed",
            fs::canonicalize(&shared).unwrap().display()
        );
        assert!(
            unwrapped(&stderr(&output)).contains(&message),
            "{named}: {}",
            stderr(&output)
        );
        assert_eq!(fs::read(&shared).unwrap(), shaped("\n", "    ", true, false), "{named}");
        assert!(
            fs::symlink_metadata(dir.path().join("pkg/link.py"))
                .unwrap()
                .is_symlink()
        );
        let reported: Vec<_> = common::json_locations(&output)
            .into_iter()
            .filter(|(_, path, _, _)| path == "pkg/link.py")
            .collect();
        assert_eq!(reported, expected, "{named}: the findings of the file as it is");
    }
    assert_eq!(
        fs::read(dir.path().join("pkg/own.py")).unwrap(),
        shaped("\n", "    ", true, true)
    );
}

/// A link and its target both in the folder: the target is fixed once, the link kept, and
/// nothing is reported as changed (the second name finds the fix the first wrote).
#[test]
fn a_link_inside_the_folder_has_its_target_fixed() {
    let dir = temp_dir();
    fs::create_dir(dir.path().join("pkg")).unwrap();
    fs::write(dir.path().join("pkg/real.py"), shaped("\n", "    ", true, false)).unwrap();
    std::os::unix::fs::symlink("real.py", dir.path().join("pkg/link.py")).unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--no-cache", "--fix", "pkg"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert!(
        fs::symlink_metadata(dir.path().join("pkg/link.py"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(
        fs::read(dir.path().join("pkg/real.py")).unwrap(),
        shaped("\n", "    ", true, true)
    );
    assert_eq!(leftovers(&dir.path().join("pkg")), Vec::<String>::new());
}

#[test]
fn hard_links_still_share_the_fixed_file() {
    use std::os::unix::fs::MetadataExt;

    let dir = temp_dir();
    let pkg = dir.path().join("pkg");
    fs::create_dir_all(&pkg).unwrap();
    fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    let names = [pkg.join("a.py"), pkg.join("b.py"), dir.path().join("elsewhere/c.py")];
    fs::write(&names[0], shaped("\n", "    ", true, false)).unwrap();
    for name in &names[1..] {
        fs::hard_link(&names[0], name).unwrap();
    }
    let inode = fs::metadata(&names[0]).unwrap().ino();
    let output = run(dir.path(), &["check", "--isolated", "--no-cache", "--fix", "pkg"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    for name in &names {
        assert_eq!(fs::metadata(name).unwrap().ino(), inode, "{}", name.display());
        assert_eq!(
            fs::read(name).unwrap(),
            shaped("\n", "    ", true, true),
            "{}",
            name.display()
        );
    }
    assert_eq!(leftovers(&pkg), Vec::<String>::new(), "no journal is left");
}

/// Run as root (as the test suite may be), a file of another owner keeps its owner and group
/// and its mode, set-group-id bit included. Not root, this process cannot make such a file.
#[test]
fn owner_group_and_mode_are_kept() {
    use std::os::unix::fs::MetadataExt;

    let dir = temp_dir();
    let path = fixable_file(dir.path());
    if std::os::unix::fs::chown(&path, Some(65534), Some(65534)).is_err() {
        return;
    }
    fs::set_permissions(&path, fs::Permissions::from_mode(0o2754)).unwrap();
    let output = run(dir.path(), &["check", "--isolated", "--no-cache", "--fix", "train.py"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let metadata = fs::metadata(&path).unwrap();
    assert_eq!((metadata.uid(), metadata.gid()), (65534, 65534));
    assert_eq!(metadata.permissions().mode() & 0o7777, 0o2754);
    assert_eq!(fs::read(&path).unwrap(), shaped("\n", "    ", true, true));
}

/// Whether this process runs as root: a file it makes in `dir` is root's.
fn running_as_root(dir: &Path) -> bool {
    let probe = dir.join("probe");
    fs::write(&probe, "").unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&fs::metadata(&probe).unwrap());
    fs::remove_file(&probe).unwrap();
    owner == 0
}

/// A file that cannot be written (read-only; in a folder no file can be created in) is
/// reported, shows the findings of the text on disk, and is not counted as fixed.
#[test]
fn a_file_that_cannot_be_written_reports_its_findings_as_they_are() {
    let read_only = temp_dir();
    let path = fixable_file(read_only.path());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let locked = temp_dir();
    let folder = locked.path().join("pkg");
    fs::create_dir(&folder).unwrap();
    fixable_file(&folder);
    // Root may create files anywhere: its run there is made as another user, who may read the
    // folders and write the file.
    let as_nobody = running_as_root(locked.path());
    fs::set_permissions(locked.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(folder.join("train.py"), fs::Permissions::from_mode(0o666)).unwrap();
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
    for (dir, name, why, as_nobody) in [
        (
            read_only.path(),
            "train.py",
            "cannot write it: the file is read-only; not fixed",
            false,
        ),
        (locked.path(), "pkg/train.py", "beside it: Permission denied", as_nobody),
    ] {
        let expected = findings_unfixed(dir, name);
        assert!(!expected.is_empty());
        for format in ["json", "concise"] {
            let mut command = common::synclint();
            command.current_dir(dir).args([
                "check",
                "--isolated",
                "--no-cache",
                "--fix",
                "--show-fixes",
                "--output-format",
                format,
                name,
            ]);
            if as_nobody {
                std::os::unix::process::CommandExt::uid(&mut command, 65534);
                std::os::unix::process::CommandExt::gid(&mut command, 65534);
            }
            let output = command.output().unwrap();
            assert_eq!(exit_code(&output), 2, "{name}: {}", stderr(&output));
            assert!(stderr(&output).contains(&format!("{name}: ")), "{}", stderr(&output));
            assert!(unwrapped(&stderr(&output)).contains(why), "{name}: {}", stderr(&output));
            assert!(!stdout(&output).contains("Fixed"), "{name}: {}", stdout(&output));
            if format == "json" {
                assert_eq!(common::json_locations(&output), expected, "{name}");
            } else {
                let summary = format!("Found {} finding", expected.len());
                assert!(stdout(&output).contains(&summary), "{name}: {}", stdout(&output));
                assert!(!stdout(&output).contains("fixed"), "{name}: {}", stdout(&output));
            }
        }
        assert_eq!(fs::read(dir.join(name)).unwrap(), shaped("\n", "    ", true, false));
    }
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(leftovers(&folder), Vec::<String>::new());
}
