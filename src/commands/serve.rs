//! `solve2048 serve`: a web page and a JSON API over a solved store, local
//! or S3, read-only (the server is [`solve2048_serve`]).

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use solve2048_serve::config::DEFAULT_PLAYERS;
use solve2048_serve::{AppState, Config, Limits};
use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime, shutdown_signal};

/// Arguments of `serve`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Address to listen on (port 0: any free port, printed). Loopback
    /// unless told otherwise: put a proxy with TLS in front to expose it.
    #[arg(long, default_value = "127.0.0.1:8048")]
    listen: String,
    /// A player the page and POST /api/play offer besides optimal (repeat
    /// for several; spec strings as in the players crate: random,
    /// order:LDRU, greedy, schain, mc:N, expectimax:D, ntuple:FILE)
    /// [default: random, order:LDRU, greedy, schain, expectimax:2].
    #[arg(long = "player", value_name = "SPEC")]
    players: Vec<String>,
    /// Requests per second one client address may make on average (0: no
    /// limit).
    #[arg(long, default_value_t = Limits::default().rate)]
    rate: f64,
    /// Requests one client address may make at once after being idle.
    #[arg(long, default_value_t = Limits::default().burst)]
    burst: u32,
    /// Requests handled at once; more wait for a slot.
    #[arg(long, default_value_t = Limits::default().in_flight)]
    max_in_flight: usize,
    /// Seconds a request may take, waiting included.
    #[arg(long, default_value_t = Limits::default().timeout.as_secs_f64())]
    timeout_seconds: f64,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = Limits::default().body_bytes)]
    max_body_bytes: usize,
}

/// Run `serve`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.timeout_seconds.is_finite() && args.timeout_seconds > 0.0,
        "--timeout-seconds must be positive"
    );
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let n = solution.game().shape;
    let players: Vec<String> = if args.players.is_empty() {
        DEFAULT_PLAYERS.iter().map(|p| p.to_string()).collect()
    } else {
        args.players.clone()
    };
    let limits = Limits {
        body_bytes: args.max_body_bytes,
        rate: args.rate,
        burst: args.burst,
        in_flight: args.max_in_flight,
        timeout: Duration::from_secs_f64(args.timeout_seconds),
        ..Limits::default()
    };
    let config = Config::new(&players, limits, n)?;
    let game = solution.game().name();
    let state = AppState::new(solution, config);
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        let addr = listener.local_addr()?;
        // Tests and scripts read the address from this line.
        println!("serving {game} on http://{addr}/");
        std::io::stdout().flush()?;
        solve2048_serve::run(listener, state, shutdown_signal())
            .await
            .context("serving")
    })
}
