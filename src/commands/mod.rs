//! The subcommands, one file each: its arguments, its body and its
//! rendering (as cargo keeps `commands/<name>.rs`).

use clap::Subcommand;

pub mod chunks;
pub mod completions;
pub mod coordinator;
pub mod evaluate;
pub mod export;
pub mod export_policy;
pub mod man;
pub mod occupancy;
pub mod plan;
pub mod play;
pub mod plot;
pub mod query;
pub mod serve;
pub mod solve;
pub mod status;
pub mod train;
pub mod verify;
pub mod worker;

/// Every subcommand.
#[derive(Subcommand)]
pub enum Command {
    /// Enumerate every reachable state and solve the game, on this machine.
    Solve(solve::Args),
    /// Run a job's coordinator: plan, lease tasks to workers, record results.
    Coordinator(coordinator::Args),
    /// The exact win probability of a player, beside the optimal one, and
    /// where it loses the most (a job like the solve's, on this machine).
    Evaluate(evaluate::Args),
    /// Run a worker: pull tasks from a coordinator and run them.
    Worker(worker::Args),
    /// A job's progress: live from the coordinator, or from the store.
    Status(status::Args),
    /// List a job's chunk tasks with state, attempts, last error, objects.
    Chunks(chunks::Args),
    /// The value of a board and of each move, from a solved store.
    Query(query::Args),
    /// Serve a web page and a JSON API over a solved store (read-only).
    Serve(serve::Args),
    /// Play seeded games with a player (the optimal policy of a solved store,
    /// or a heuristic one): one move by move, or many and their summary.
    Play(play::Args),
    /// Train an n-tuple network by TD(0) for the player ntuple:FILE
    /// (seeded, resumable).
    Train(train::Args),
    /// Visit probabilities under optimal play: win/lose split, expected moves.
    Occupancy(occupancy::Args),
    /// Write the policy of the states visited with probability >= a threshold.
    ExportPolicy(export_policy::Args),
    /// Write the solution for analysts' tools: one Parquet file per layer,
    /// one row per state (board, cells, value, best move, each move's value).
    Export(export::Args),
    /// Draw the state space: states by tile sum per max tile, values by layer.
    Plot(plot::Args),
    /// Read back every solved chunk and check it against the job's summary.
    Verify(verify::Args),
    /// The resource plan of a job before it runs: states per layer, worker
    /// memory, store size and duration on a cluster.
    Plan(plan::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the manual page, or write one page per command with --out.
    Man(man::Args),
}

impl Command {
    /// Whether it is a service (a job's coordinator or worker, or the
    /// embedded solve): long-running, its output progress and logs.
    pub fn serves(&self) -> bool {
        matches!(
            self,
            Command::Solve(_) | Command::Coordinator(_) | Command::Worker(_) | Command::Evaluate(_)
        )
    }
}

/// Run one parsed command.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Solve(args) => solve::run(args),
        Command::Coordinator(args) => coordinator::run(args),
        Command::Evaluate(args) => evaluate::run(args),
        Command::Worker(args) => worker::run(args),
        Command::Status(args) => status::run(args),
        Command::Chunks(args) => chunks::run(args),
        Command::Query(args) => query::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Play(args) => play::run(args),
        Command::Train(args) => train::run(args),
        Command::Occupancy(args) => occupancy::run(args),
        Command::ExportPolicy(args) => export_policy::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Export(args) => export::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    }
}
