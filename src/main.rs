//! The `solve2048` command line: thin glue over the coordinator and worker
//! libraries. `main` parses arguments, sets up logging and calls a library
//! function per subcommand.

mod cli;
mod cluster;
mod plot;
mod progress;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("SOLVE2048_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,usvg=error"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if args.log_format == "json" {
        logs.json().init();
    } else {
        logs.init();
    }
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
