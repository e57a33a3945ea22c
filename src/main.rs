use std::process::ExitCode;

/// Parsing allocates a node per expression; mimalloc makes that (and freeing whole ASTs)
/// markedly cheaper than the system allocator, as it does for Ruff.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    synclint::cli::main()
}
