//! The `solve2048` command line: thin glue over the libraries. `main` parses
//! arguments, sets up logging and runs one command (`commands/`, one file
//! each).

mod advice;
mod args;
mod commands;
mod embedded;
mod human;
mod progress;
mod report;
mod runtime;

use clap::Parser;

/// Large buffers in huge pages of their own ([`solve2048_core::kernel::huge_pages`]).
#[global_allocator]
static ALLOC: solve2048_core::kernel::allocator::HugePageAlloc =
    solve2048_core::kernel::allocator::HugePageAlloc;

/// Provably optimal 2048 policies by exhaustive enumeration and backward induction.
#[derive(Parser)]
#[command(name = "solve2048", version, about)]
struct Cli {
    #[command(subcommand)]
    command: commands::Command,
    /// Log format on stderr: human or json (level: SOLVE2048_LOG, e.g. info).
    #[arg(long, global = true, default_value = "human", value_parser = ["human", "json"])]
    log_format: String,
}

fn main() -> std::process::ExitCode {
    runtime::limit_malloc_arenas();
    let args = match Cli::try_parse() {
        Ok(args) => args,
        // --help and --version print and succeed; a bad argument is an error
        // like any other: exit status 1.
        Err(e) => {
            use clap::error::ErrorKind;
            // A value that does not parse (`--board 5x2`, `--target abc`)
            // is one line, what is wrong with it; other errors (a missing
            // or unknown flag) keep clap's usage hint.
            if e.kind() == ErrorKind::ValueValidation {
                let text = e.render().to_string();
                eprintln!("{}", text.lines().next().unwrap_or_default());
            } else {
                let _ = e.print();
            }
            return if e.use_stderr() {
                std::process::ExitCode::FAILURE
            } else {
                std::process::ExitCode::SUCCESS
            };
        }
    };
    if !args.command.serves() {
        // A command that prints a result and exits ends quietly when its
        // reader goes away (`play ... | head`), as Unix tools do. Services
        // keep ignoring SIGPIPE: their output is progress and logs, written
        // without panicking (a closed log pipe must not stop a job).
        runtime::default_sigpipe();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("SOLVE2048_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,usvg=error"));
    // Colours only for a person at a terminal: a file, journald or `kubectl
    // logs` would show the escape codes.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .log_internal_errors(false)
        .with_writer(std::io::stderr);
    if args.log_format == "json" {
        logs.json().init();
    } else {
        logs.init();
    }
    match commands::run(args.command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // Stopped by Ctrl-C or SIGTERM: one line, and the shell's status
        // for a command ended by SIGINT.
        Err(e) if interrupted(&e) => {
            human::eprint_line("interrupted; rerun the same command to resume");
            std::process::ExitCode::from(130)
        }
        Err(e) => {
            human::eprint_line(&format!("error: {}", human::error_chain(&e)));
            std::process::ExitCode::FAILURE
        }
    }
}

/// Whether a command stopped because it was told to (Ctrl-C, SIGTERM).
fn interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<solve2048_coordinator::CoordinatorError>(),
            Some(solve2048_coordinator::CoordinatorError::Interrupted)
        )
    })
}
