use std::process::ExitCode;

fn main() -> ExitCode {
    synclint::cli::main()
}
