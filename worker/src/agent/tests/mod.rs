//! The agent against a fake coordinator (a real gRPC server on 127.0.0.1)
//! and a fake runner: reconnecting after the coordinator was away, giving
//! up on one away too long, refused results, and a stop that drains
//! running tasks or hands their leases back. The tests wait on what the
//! fakes report, not on sleeps.

mod fake;

use std::collections::HashMap;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use solve2048_core::task::JobSpec;
use solve2048_proto as pb;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::{run_with, AgentConfig, AgentError, CallError};
use fake::{finished, lease, serve, until, Event, Events, FakeCoordinator, FakeRunner};

/// A worker of one slot for the coordinator at `addr`.
fn config(addr: SocketAddr) -> AgentConfig {
    AgentConfig {
        coordinator: format!("http://{addr}"),
        token: "secret".into(),
        tls_ca: None,
        threads: 1,
        slots: 1,
        name: "test".into(),
        cache: None,
        give_up_after: Duration::from_secs(30),
        drain: Duration::from_secs(60),
        task_budget: 1 << 30,
        store: None,
    }
}

/// Opens a fake runner with `gate`, telling `events`.
fn runner(
    gate: Option<Arc<Semaphore>>,
    events: &mpsc::UnboundedSender<Event>,
) -> impl Fn(&AgentConfig, &str, &JobSpec) -> Result<FakeRunner, AgentError> {
    let events = events.clone();
    move |_, _, _| {
        Ok(FakeRunner {
            gate: gate.clone(),
            events: events.clone(),
        })
    }
}

/// A listener on a free port of 127.0.0.1.
async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.unwrap()
}

/// The events reported so far.
fn so_far(events: &mut Events) -> Vec<Event> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

/// A result the coordinator refuses, saying whether to delete its outputs.
fn refusal(delete_outputs: bool) -> pb::CompleteReply {
    pb::CompleteReply {
        accepted: false,
        reason: "stale lease".into(),
        delete_outputs,
    }
}

#[tokio::test]
async fn reconnects_when_the_coordinator_is_back_and_registers_again() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let listener = bind().await;
    let addr = listener.local_addr().unwrap();
    let (stop_first, stopped) = oneshot::channel::<()>();
    let first = FakeCoordinator::new(Vec::new(), HashMap::new(), tx.clone());
    let first = serve(listener, first, async {
        let _ = stopped.await;
    });
    let agent = tokio::spawn(run_with(
        config(addr),
        std::future::pending(),
        runner(None, &tx),
    ));
    until(&mut events, |e| matches!(e, Event::Registered(_))).await;
    until(&mut events, |e| *e == Event::LeaseAsked).await;
    // The coordinator goes away; what answers at its address next drops
    // the worker's connection, which the worker retries.
    stop_first.send(()).unwrap();
    first.await.unwrap();
    let nobody = TcpListener::bind(addr).await.unwrap();
    drop(nobody.accept().await.unwrap());
    drop(nobody);
    // A coordinator back at the address does not know the worker, which
    // registers again and runs to the job's end.
    let second = FakeCoordinator::new(vec![finished()], HashMap::new(), tx.clone());
    let listener = TcpListener::bind(addr).await.unwrap();
    let second = serve(listener, second, std::future::pending());
    let report = agent.await.unwrap().unwrap();
    assert_eq!(report.registrations, 2, "{report:?}");
    assert!(
        so_far(&mut events)
            .iter()
            .any(|e| matches!(e, Event::Registered(_))),
        "the worker did not register with the second coordinator"
    );
    second.abort();
}

#[tokio::test]
async fn gives_up_on_a_coordinator_unreachable_for_too_long() {
    let (tx, _events) = mpsc::unbounded_channel();
    // A port nobody listens on.
    let addr = bind().await.local_addr().unwrap();
    let mut config = config(addr);
    config.give_up_after = Duration::from_millis(300);
    let e = run_with(config, std::future::pending(), runner(None, &tx))
        .await
        .unwrap_err();
    assert!(matches!(e, AgentError::Unreachable { .. }), "{e}");
    // The last failed call is the source, not part of the message.
    let last = e.source().expect("the last call as source");
    assert!(last.downcast_ref::<CallError>().is_some(), "{last:?}");
    assert!(!e.to_string().contains(&last.to_string()), "{e}");
}

#[tokio::test]
async fn refused_results_are_counted_and_deleted_only_when_the_coordinator_says_so() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let listener = bind().await;
    let addr = listener.local_addr().unwrap();
    let leases = vec![lease(1), lease(2), lease(3), finished()];
    let results = HashMap::from([(1, refusal(true)), (2, refusal(false))]);
    let coordinator = FakeCoordinator::new(leases, results, tx.clone());
    let server = serve(listener, coordinator, std::future::pending());
    let report = run_with(config(addr), std::future::pending(), runner(None, &tx))
        .await
        .unwrap();
    assert_eq!(
        (report.completed, report.abandoned, report.failed),
        (1, 2, 0),
        "{report:?}"
    );
    let seen = so_far(&mut events);
    for id in 1..=3 {
        assert!(seen.contains(&Event::Completed(id)), "{id}: {seen:?}");
    }
    let discarded: Vec<&Event> = seen
        .iter()
        .filter(|e| matches!(e, Event::Discarded(_)))
        .collect();
    assert_eq!(discarded, [&Event::Discarded(1)], "{seen:?}");
    server.abort();
}

#[tokio::test]
async fn a_stop_hands_back_the_leases_still_running_after_the_drain() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let listener = bind().await;
    let addr = listener.local_addr().unwrap();
    let coordinator = FakeCoordinator::new(vec![lease(7)], HashMap::new(), tx.clone());
    let server = serve(listener, coordinator, std::future::pending());
    let mut config = config(addr);
    config.drain = Duration::from_millis(100);
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    // A task that never ends.
    let gate = Some(Arc::new(Semaphore::new(0)));
    let agent = tokio::spawn(run_with(config, shutdown, runner(gate, &tx)));
    until(&mut events, |e| *e == Event::Started(7)).await;
    // Its lease is renewed while it runs.
    until(&mut events, |e| *e == Event::Heartbeat(vec![7])).await;
    stop.send(()).unwrap();
    let report = agent.await.unwrap().unwrap();
    assert_eq!((report.released, report.completed), (1, 0), "{report:?}");
    let seen = so_far(&mut events);
    assert!(seen.contains(&Event::Released(7)), "{seen:?}");
    assert!(!seen.contains(&Event::Completed(7)), "{seen:?}");
    server.abort();
}

#[tokio::test]
async fn a_stop_lets_running_tasks_finish_and_leases_nothing_more() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let listener = bind().await;
    let addr = listener.local_addr().unwrap();
    let leases = vec![lease(7), lease(8)];
    let coordinator = FakeCoordinator::new(leases, HashMap::new(), tx.clone());
    let server = serve(listener, coordinator, std::future::pending());
    let (stop, stopped) = oneshot::channel::<()>();
    let (began, stopping) = oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
        began.send(()).unwrap();
    };
    let gate = Arc::new(Semaphore::new(0));
    let agent = tokio::spawn(run_with(
        config(addr),
        shutdown,
        runner(Some(gate.clone()), &tx),
    ));
    until(&mut events, |e| *e == Event::Started(7)).await;
    stop.send(()).unwrap();
    stopping.await.unwrap();
    // The stop has begun (this runtime has one thread: it got as far as
    // waiting for the running task) and waits for the task.
    assert!(!agent.is_finished());
    gate.add_permits(1);
    let report = agent.await.unwrap().unwrap();
    assert_eq!((report.completed, report.released), (1, 0), "{report:?}");
    let seen = so_far(&mut events);
    assert!(seen.contains(&Event::Completed(7)), "{seen:?}");
    assert!(!seen.contains(&Event::Leased(8)), "{seen:?}");
    server.abort();
}

#[tokio::test]
async fn a_stop_with_no_task_running_ends_at_once() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let listener = bind().await;
    let addr = listener.local_addr().unwrap();
    let coordinator = FakeCoordinator::new(Vec::new(), HashMap::new(), tx.clone());
    let server = serve(listener, coordinator, std::future::pending());
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    let agent = tokio::spawn(run_with(config(addr), shutdown, runner(None, &tx)));
    until(&mut events, |e| *e == Event::LeaseAsked).await;
    stop.send(()).unwrap();
    let report = agent.await.unwrap().unwrap();
    assert_eq!(report.registrations, 1, "{report:?}");
    assert_eq!(report.released + report.completed, 0, "{report:?}");
    server.abort();
}
