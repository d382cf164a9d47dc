//! What every command's body stands on: the async runtime, the kernel
//! threads, the shutdown signal, and opening stores and files.

use std::path::Path;

use anyhow::Context;
use solve2048_store::{Access, Store};

/// The async runtime of a command (kernels run on rayon, not here).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    runtime_of(2)
}

/// The async runtime of a command that runs a job's tasks on
/// `kernel_threads` rayon threads (`solve`, `worker`, `evaluate`): one
/// async thread per [`KERNEL_THREADS_PER_ASYNC`] of them. Its threads only
/// hand kernels to rayon, decode what is read and talk to the store and
/// the coordinator; on 2 cores a second one cost 3x3 to 1024 about 6% more
/// core time, in thread switches.
pub fn job_runtime(kernel_threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    runtime_of(kernel_threads.div_ceil(KERNEL_THREADS_PER_ASYNC).max(1))
}

/// Kernel threads a job's async thread serves.
const KERNEL_THREADS_PER_ASYNC: usize = 8;

/// An async runtime of `threads` worker threads.
fn runtime_of(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        // Blocking threads run file I/O and hand kernels to rayon; each keeps
        // its own buffers (zstd contexts, allocator caches), so a pool that
        // grows to hundreds in a burst holds memory a worker's budget does
        // not count. Kernels and local I/O are bounded by the cores anyway.
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Most blocking threads of a command's runtime.
const BLOCKING_THREADS: usize = 16;

/// Start the global kernel thread pool; returns its size.
pub fn start_threads(threads: Option<usize>) -> anyhow::Result<usize> {
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    anyhow::ensure!(threads >= 1, "--threads must be at least 1");
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting threads")?;
    Ok(threads)
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Open a store that must already exist, read-only (reading never creates
/// or writes anything, so a store on a read-only share can be read).
pub fn open_existing(location: &str) -> anyhow::Result<Store> {
    Ok(Store::open(location, Access::ReadOnly)?)
}

/// Read a whole file, naming it on failure.
pub fn read_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// This process, for people: host and pid.
pub fn process_name() -> String {
    format!(
        "{}:{}",
        solve2048_coordinator::lock::host_name(),
        std::process::id()
    )
}

/// Write `bytes` to `path` through a temporary file beside it, so that a
/// crash never leaves half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Keep glibc's malloc to two arenas. By default it makes one per thread up
/// to 8 per core, and the tokio blocking threads that run kernels and file
/// I/O each keep their own arena's freed memory: a 4x4-to-16 solve peaked at
/// 747 MB resident that way and at 173 MB with two arenas, in the same time
/// (8.3 s; one arena: 155 MB, 9.1 s). A worker's `--memory` budget counts on
/// freed memory being reusable. `MALLOC_ARENA_MAX` in the environment still
/// wins.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes allocator tuning; called before any
        // thread is started.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Let SIGPIPE end the process, as it ends other Unix tools: a write into a
/// pipe whose reader is gone (`play | head`) then stops the command quietly
/// instead of failing (Rust ignores SIGPIPE, and `println!` panics on the
/// error). Sockets are unaffected: their writes never raise SIGPIPE.
pub fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: resetting a signal's disposition to its default, before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_job_runtime_has_one_async_thread_per_eight_kernel_threads() {
        for (kernel, expected) in [(1, 1), (2, 1), (8, 1), (9, 2), (16, 2), (64, 8)] {
            let rt = super::job_runtime(kernel).unwrap();
            assert_eq!(
                rt.metrics().num_workers(),
                expected,
                "{kernel} kernel threads"
            );
        }
        assert_eq!(super::runtime().unwrap().metrics().num_workers(), 2);
    }
}
