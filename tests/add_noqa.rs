//! `synclint check --add-noqa`, end to end: which lines get a directive, what the files hold
//! afterwards, byte for byte, and that the next run passes.

mod common;

use common::{Project, exit_code, stderr, stdout};

const TRAIN: &str = r#"import torch


def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(loss.nonzero(), loss.item())   	
        total = loss.item()  # noqa: E501 a reason
        v = loss.item()  # keep this
        msg = f"""
        loss {loss.item()}
        done"""
        w = torch.stack([
            loss.item(),
        ])
        u = loss.item() + \
            1
        quiet = loss.item()  # noqa
"#;

/// Each line with a finding gets one directive with its codes sorted, at the end of the line
/// where a `# noqa` is read: after the multi-line f-string and the backslash continuation, not
/// inside them; an existing list gets the new code after its own, before its trailing words.
const TRAIN_WITH_NOQA: &str = r#"import torch


def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(loss.nonzero(), loss.item())  # noqa: SYNC101, SYNC106
        total = loss.item()  # noqa: E501, SYNC101 a reason
        v = loss.item()  # keep this  # noqa: SYNC101
        msg = f"""
        loss {loss.item()}
        done"""  # noqa: SYNC101
        w = torch.stack([
            loss.item(),  # noqa: SYNC101
        ])
        u = loss.item() + \
            1  # noqa: SYNC101
        quiet = loss.item()  # noqa
"#;

/// CRLF line endings, a byte-order mark, tabs and no final line ending.
const EVAL: &str = "\u{feff}import torch\r\n\r\ndef evaluate(model, loader):\r\n\tfor x in loader:\r\n\t\tout = model(x)\r\n\t\tprint(out.item())";

fn project() -> Project {
    let project = Project::new();
    project.write("pkg/train.py", TRAIN).write("pkg/eval_loop.py", EVAL);
    project
}

fn read(project: &Project, relative: &str) -> String {
    std::fs::read_to_string(project.path().join(relative)).expect("read a project file")
}

#[test]
fn directives_make_the_next_check_pass_and_keep_every_other_byte() {
    let project = project();
    let before = project.run(&["check", "--no-cache", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&before), 1, "{}", stdout(&before));

    let added = project.run(&["check", "--no-cache", "--add-noqa", "."]);
    assert_eq!(exit_code(&added), 0, "{}{}", stdout(&added), stderr(&added));
    assert_eq!(stdout(&added), "Added 7 noqa directives.\n");
    assert_eq!(read(&project, "pkg/train.py"), TRAIN_WITH_NOQA);
    assert_eq!(
        read(&project, "pkg/eval_loop.py"),
        "\u{feff}import torch\r\n\r\ndef evaluate(model, loader):\r\n\tfor x in loader:\r\n\t\tout = model(x)\r\n\t\tprint(out.item())  # noqa: SYNC101"
    );

    // Every file still parses: a syntax error would make `check` exit 2.
    let after = project.run(&["check", "--no-cache", "."]);
    assert_eq!(exit_code(&after), 0, "{}{}", stdout(&after), stderr(&after));
    assert_eq!(stdout(&after), "All checks passed!\n");

    let again = project.run(&["check", "--no-cache", "--add-noqa", "."]);
    assert_eq!(exit_code(&again), 0, "{}", stderr(&again));
    assert_eq!(stdout(&again), "Added 0 noqa directives.\n");
    assert_eq!(read(&project, "pkg/train.py"), TRAIN_WITH_NOQA);
}

#[test]
fn only_the_selected_rules_get_directives() {
    let project = project();
    let added = project.run(&[
        "check",
        "--no-cache",
        "--add-noqa",
        "--select",
        "SYNC106",
        "pkg/train.py",
    ]);
    assert_eq!(stdout(&added), "Added 1 noqa directive.\n", "{}", stderr(&added));
    let train = read(&project, "pkg/train.py");
    assert!(
        train.contains("print(loss.nonzero(), loss.item())  # noqa: SYNC106\n"),
        "{train}"
    );
    assert_eq!(train.matches("# noqa").count(), TRAIN.matches("# noqa").count() + 1);
    assert_eq!(
        read(&project, "pkg/eval_loop.py"),
        EVAL,
        "a file not named is left alone"
    );
    // SYNC101 still fires on that line: the directive lists SYNC106 alone.
    let check = project.run(&["check", "--no-cache", "--output-format", "concise", "pkg/train.py"]);
    assert!(
        stdout(&check).contains("pkg/train.py:9:31: SYNC101"),
        "{}",
        stdout(&check)
    );
}

#[test]
fn conflicts_with_fixing_and_stdin() {
    let project = project();
    for flag in ["--fix", "--diff", "--fix-only"] {
        let output = project.run(&["check", "--add-noqa", flag, "."]);
        assert_eq!(exit_code(&output), 2, "{flag}");
        assert!(
            stderr(&output).contains("cannot be used with"),
            "{flag}: {}",
            stderr(&output)
        );
    }
    let output = project.run_stdin(&["check", "--add-noqa", "-"], TRAIN);
    assert_eq!(exit_code(&output), 2);
    assert!(stderr(&output).contains("--add-noqa"), "{}", stderr(&output));
    assert_eq!(read(&project, "pkg/train.py"), TRAIN);
}

#[test]
fn an_unwritable_file_is_an_error_and_stays_as_it_was() {
    use std::os::unix::fs::PermissionsExt;

    let project = project();
    let locked = project.path().join("pkg/train.py");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let output = project.run(&["check", "--no-cache", "--add-noqa", "."]);
    assert_eq!(exit_code(&output), 2);
    assert!(
        stderr(&output).contains("pkg/train.py: cannot write it"),
        "{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output), "Added 1 noqa directive.\n");
    assert_eq!(read(&project, "pkg/train.py"), TRAIN);
}

#[test]
fn json_noqa_row_is_where_the_directive_goes() {
    let project = project();
    let output = project.run(&["check", "--no-cache", "--output-format", "json", "pkg/train.py"]);
    let rows: Vec<(u64, u64)> = common::json(&output)
        .as_array()
        .expect("an array")
        .iter()
        .map(|finding| {
            let row = finding["location"]["row"].as_u64().expect("a row");
            (row, finding["noqa_row"].as_u64().expect("a noqa row"))
        })
        .collect();
    // The f-string's finding on row 13 and the continued line's on row 18 are read where the
    // string and the continuation end.
    assert_eq!(rows, [(9, 9), (9, 9), (10, 10), (11, 11), (13, 14), (16, 16), (18, 19)]);
}
