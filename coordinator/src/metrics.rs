//! The Prometheus metrics endpoint: `GET /metrics` on its own listener, in
//! the text exposition format. It carries counts and rates only (no token,
//! no store credentials), so it needs no authentication.

use std::fmt::Write;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::scheduler::{Counters, Scheduler, Snapshot, TaskState};

/// The metrics text for the scheduler's state now.
pub fn render(scheduler: &Scheduler) -> String {
    let snap = scheduler.snapshot();
    let mut out = Text::default();
    progress(&mut out, scheduler, &snap);
    store_traffic(&mut out, &snap.counters);
    task_counters(&mut out, &snap.counters);
    out.0
}

/// Metrics text being written.
#[derive(Default)]
struct Text(String);

impl Text {
    /// One metric: its help and type lines, then a line per sample
    /// (labels, value).
    fn metric(&mut self, name: &str, kind: &str, help: &str, samples: &[(&str, f64)]) {
        let _ = writeln!(
            self.0,
            "# HELP solve2048_{name} {help}\n# TYPE solve2048_{name} {kind}"
        );
        for (labels, v) in samples {
            let _ = writeln!(self.0, "solve2048_{name}{labels} {v}");
        }
    }
}

/// The job's tasks by state, its progress, rate and live workers.
fn progress(out: &mut Text, scheduler: &Scheduler, snap: &Snapshot) {
    let mut by_state = [0u64; 4];
    for t in &snap.tasks {
        by_state[match t.state {
            TaskState::Pending => 0,
            TaskState::Leased { .. } => 1,
            TaskState::Done => 2,
            TaskState::Failed => 3,
        }] += 1;
    }
    out.metric(
        "tasks",
        "gauge",
        "Tasks planned so far, by state.",
        &[
            ("{state=\"pending\"}", by_state[0] as f64),
            ("{state=\"leased\"}", by_state[1] as f64),
            ("{state=\"done\"}", by_state[2] as f64),
            ("{state=\"failed\"}", by_state[3] as f64),
        ],
    );
    let overall = scheduler.overall();
    if overall.total > 0 {
        out.metric(
            "progress_ratio",
            "gauge",
            "Share of the whole job done (states enumerated and solved, each weighted by its pass's measured cost, over all the job's, estimated for layers not enumerated yet; never decreasing).",
            &[("", overall.percent.unwrap_or(0.0) / 100.0)],
        );
        out.metric(
            "work_states_total",
            "gauge",
            "The whole job's work: twice its states, estimated for layers not enumerated yet.",
            &[("", overall.total as f64)],
        );
        if let Some(eta) = overall.eta_seconds(snap.work_per_second) {
            out.metric(
                "eta_seconds",
                "gauge",
                "Seconds left at the rate of the last minute (absent while unknown).",
                &[("", eta)],
            );
        }
    }
    out.metric(
        "states_per_second",
        "gauge",
        "States enumerated or solved per second over the last minute.",
        &[("", snap.states_per_second)],
    );
    let alive = snap.workers.iter().filter(|w| w.alive).count();
    out.metric(
        "workers_alive",
        "gauge",
        "Workers heard from within the lease ttl.",
        &[("", alive as f64)],
    );
}

/// Bytes and requests between the job and its store.
fn store_traffic(out: &mut Text, c: &Counters) {
    out.metric(
        "bytes_written_total",
        "counter",
        "Bytes workers wrote to the store.",
        &[("", c.bytes_written as f64)],
    );
    out.metric(
        "bytes_read_total",
        "counter",
        "Bytes workers read from the store (not from their caches).",
        &[("", c.bytes_read as f64)],
    );
    let r = &c.store_requests;
    out.metric(
        "store_requests_total",
        "counter",
        "Store requests (retries included) of the tasks and the coordinator, by operation.",
        &[
            ("{op=\"get\"}", r.requests.get as f64),
            ("{op=\"put\"}", r.requests.put as f64),
            ("{op=\"list\"}", r.requests.list as f64),
            ("{op=\"delete\"}", r.requests.delete as f64),
            ("{op=\"head\"}", r.requests.head as f64),
        ],
    );
    out.metric(
        "store_retries_total",
        "counter",
        "Store requests retried, by cause.",
        &[
            ("{cause=\"slow_down\"}", r.causes.slow_down as f64),
            ("{cause=\"server_error\"}", r.causes.server_error as f64),
            ("{cause=\"reset\"}", r.causes.reset as f64),
            ("{cause=\"timeout\"}", r.causes.timeout as f64),
            ("{cause=\"short_body\"}", r.causes.short_body as f64),
        ],
    );
    out.metric(
        "store_backoff_seconds_total",
        "counter",
        "Seconds spent waiting between attempts at store requests.",
        &[("", r.backoff_seconds)],
    );
}

/// Counts of states done, tasks run and attempts that went wrong.
fn task_counters(out: &mut Text, c: &Counters) {
    out.metric(
        "states_done_total",
        "counter",
        "States of committed enumerate and solve tasks.",
        &[("", c.states_done as f64)],
    );
    out.metric(
        "tasks_run_total",
        "counter",
        "Tasks run and committed.",
        &[("", c.tasks_run as f64)],
    );
    out.metric(
        "attempts_failed_total",
        "counter",
        "Attempts that failed.",
        &[("", c.attempts_failed as f64)],
    );
    out.metric(
        "leases_expired_total",
        "counter",
        "Leases that lapsed.",
        &[("", c.leases_expired as f64)],
    );
    out.metric(
        "results_discarded_total",
        "counter",
        "Results refused because their lease was not current.",
        &[("", c.results_discarded as f64)],
    );
}

/// Serve `GET /metrics` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, scheduler: Arc<Scheduler>) {
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            continue;
        };
        let scheduler = scheduler.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            let n = conn.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let (status, body) = if request.starts_with("GET /metrics") {
                ("200 OK", render(&scheduler))
            } else {
                ("404 Not Found", "try GET /metrics\n".to_string())
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
        });
    }
}
