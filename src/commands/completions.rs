//! `solve2048 completions SHELL`: a completion script for a shell, made by
//! `clap_complete` from the same command definition as the parser.

use clap::CommandFactory;

/// Arguments of `completions`.
#[derive(clap::Args)]
pub struct Args {
    /// The shell: bash, elvish, fish, powershell or zsh.
    shell: clap_complete::Shell,
}

/// Run `completions`: the script on stdout.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut crate::Cli::command(),
        "solve2048",
        &mut script,
    );
    crate::human::print_out(&String::from_utf8(script)?);
    Ok(())
}
