//! Specifies TLS end to end, with a CA and a server certificate the test
//! makes (rcgen): a coordinator serving `--tls-cert`/`--tls-key` is reached
//! over `https://` by `status` and by a worker that trusts the CA
//! (`--tls-ca`), which runs the job to the end with the embedded run's
//! digest; a worker trusting another CA and a plain-HTTP worker are refused
//! with a message that says why, instead of retrying.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::cli::{bin, free_port};
use crate::reference::solved;

const TOKEN: &str = "tls-test-token-0123456789";
const GAME: [&str; 6] = ["--board", "3", "--target", "64", "--chunk-size", "2000"];

/// A CA certificate and its key, called `name`.
fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(p, KeyPair::generate().unwrap()).unwrap()
}

/// `solve2048 ARGS` with the token, its output in files under `dir`.
fn spawn(dir: &Path, name: &str, args: &[&str]) -> Child {
    bin()
        .args(args)
        .env("SOLVE2048_TOKEN", TOKEN)
        .env_remove("SOLVE2048_LOG")
        .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).unwrap())
        .stderr(std::fs::File::create(dir.join(format!("{name}.err"))).unwrap())
        .spawn()
        .unwrap()
}

/// Wait for `child` (at most `limit`, then kill it and fail); its exit
/// status and stderr.
fn wait(dir: &Path, name: &str, mut child: Child, limit: Duration) -> (bool, String) {
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "{name} still running after {limit:?}: {}",
                std::fs::read_to_string(dir.join(format!("{name}.err"))).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(dir.join(format!("{name}.err"))).unwrap();
    (status.success(), err)
}

#[test]
fn tls_workers_and_status_with_the_right_ca_and_refused_without() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let authority = ca("solve2048 test CA");
    let stranger = ca("some other CA");
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &authority)
        .unwrap();
    std::fs::write(d.join("ca.pem"), authority.pem()).unwrap();
    std::fs::write(d.join("other-ca.pem"), stranger.pem()).unwrap();
    std::fs::write(d.join("server.pem"), cert.pem()).unwrap();
    std::fs::write(d.join("server.key"), key.serialize_pem()).unwrap();
    let (ca_pem, other_pem) = (d.join("ca.pem"), d.join("other-ca.pem"));
    let path = |p: &Path| p.to_str().unwrap().to_string();

    let port = free_port();
    let https = format!("https://localhost:{port}");
    let store = d.join("store");
    let mut args = vec!["coordinator", "--listen"];
    let listen = format!("127.0.0.1:{port}");
    args.push(&listen);
    args.extend(GAME);
    let (cert_file, key_file, store_dir) = (
        path(&d.join("server.pem")),
        path(&d.join("server.key")),
        path(&store),
    );
    args.extend([
        "--tls-cert",
        &cert_file,
        "--tls-key",
        &key_file,
        "--store",
        &store_dir,
    ]);
    args.extend(["--json"]);
    let coordinator = spawn(d, "coordinator", &args);
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the coordinator never served"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // status over https with the CA.
    let out = Command::new(env!("CARGO_BIN_EXE_solve2048"))
        .args([
            "status",
            "--json",
            "--coordinator",
            &https,
            "--tls-ca",
            &path(&ca_pem),
        ])
        .env("SOLVE2048_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["game"], "3x3-to-64");

    let worker = |name: &str, url: &str, ca: Option<&Path>| {
        let mut a = vec![
            "worker",
            "--coordinator",
            url,
            "--threads",
            "1",
            "--give-up-after",
            "60",
        ];
        let ca = ca.map(path);
        if let Some(ca) = &ca {
            a.extend(["--tls-ca", ca.as_str()]);
        }
        spawn(d, name, &a)
    };
    // A worker that does not trust the CA stops, saying why.
    let (ok, err) = wait(
        d,
        "untrusting",
        worker("untrusting", &https, Some(&other_pem)),
        Duration::from_secs(60),
    );
    assert!(!ok, "a worker that does not trust the CA ran");
    assert!(
        err.contains("certificate") && err.contains("--tls-ca"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // A plain-HTTP worker is refused too.
    let (ok, err) = wait(
        d,
        "plain",
        worker("plain", &format!("http://127.0.0.1:{port}"), None),
        Duration::from_secs(60),
    );
    assert!(!ok, "a plain-HTTP worker ran against a TLS coordinator");
    assert!(err.contains("https://"), "{err}");
    // A worker with the CA runs the job to the end.
    let (ok, err) = wait(
        d,
        "trusting",
        worker("trusting", &https, Some(&ca_pem)),
        Duration::from_secs(300),
    );
    assert!(ok, "{err}");
    let (ok, err) = wait(d, "coordinator", coordinator, Duration::from_secs(60));
    assert!(ok, "{err}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("coordinator.out")).unwrap()).unwrap();
    assert_eq!(summary["digest"], solved(&GAME).summary["digest"]);
}
