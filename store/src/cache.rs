//! A bounded local cache of chunk objects fetched from the store
//! (`worker --cache-dir`), so a worker that restarts, or solves many chunks
//! against the same next layers, does not fetch them again.
//!
//! Only states, values and policy chunks are cached (values are read
//! beside their states and policy): their names carry the attempt
//! that wrote them, so an object under a given name never changes and a
//! cached copy is never stale. Entries are written to a temporary file and
//! renamed into place; a damaged entry fails verification, is dropped, and
//! the object is fetched again. When the cache grows past its budget the
//! least recently used entries go first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The cache directory and its budget.
pub struct ChunkCache {
    dir: PathBuf,
    max_bytes: u64,
    // std Mutex: held only for bookkeeping, never across an await.
    index: Mutex<Index>,
}

#[derive(Default)]
struct Index {
    /// object -> (size, last use tick)
    entries: BTreeMap<String, (u64, u64)>,
    total: u64,
    tick: u64,
}

/// Whether an object is immutable and worth caching.
pub fn cacheable(object: &str) -> bool {
    ["states/", "values/", "policy/"]
        .iter()
        .any(|kind| object.starts_with(kind))
        && object.ends_with(".chunk")
}

impl ChunkCache {
    /// Open (and create) a cache in `dir` holding at most `max_bytes`;
    /// entries already there are kept, oldest first in line for eviction.
    pub fn open(dir: &Path, max_bytes: u64) -> std::io::Result<ChunkCache> {
        std::fs::create_dir_all(dir)?;
        let mut found: Vec<(SystemTime, String, u64)> = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d)? {
                let e = e?;
                let meta = e.metadata()?;
                if meta.is_dir() {
                    stack.push(e.path());
                } else if let Ok(rel) = e.path().strip_prefix(dir) {
                    let name = rel.to_string_lossy().replace('\\', "/");
                    if cacheable(&name) {
                        let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        found.push((used, name, meta.len()));
                    } else {
                        // Leftover temporary files of an interrupted write.
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        }
        found.sort();
        let mut index = Index::default();
        for (_, name, size) in found {
            index.tick += 1;
            index.total += size;
            index.entries.insert(name, (size, index.tick));
        }
        let cache = ChunkCache {
            dir: dir.to_path_buf(),
            max_bytes,
            index: Mutex::new(index),
        };
        cache.evict();
        Ok(cache)
    }

    fn path(&self, object: &str) -> PathBuf {
        self.dir.join(object)
    }

    /// The cached bytes of `object`, if any.
    pub fn get(&self, object: &str) -> Option<Vec<u8>> {
        let mut idx = self.index.lock().unwrap();
        idx.tick += 1;
        let tick = idx.tick;
        let entry = idx.entries.get_mut(object)?;
        entry.1 = tick;
        drop(idx);
        std::fs::read(self.path(object)).ok()
    }

    /// Keep a copy of `object` (best effort: a full disk only costs a refetch).
    pub fn put(&self, object: &str, bytes: &[u8]) {
        let path = self.path(object);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&tmp, bytes))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        let mut idx = self.index.lock().unwrap();
        idx.tick += 1;
        let tick = idx.tick;
        if let Some((old, _)) = idx
            .entries
            .insert(object.to_string(), (bytes.len() as u64, tick))
        {
            idx.total -= old;
        }
        idx.total += bytes.len() as u64;
        drop(idx);
        self.evict();
    }

    /// Drop a damaged entry.
    pub fn remove(&self, object: &str) {
        let mut idx = self.index.lock().unwrap();
        if let Some((size, _)) = idx.entries.remove(object) {
            idx.total -= size;
        }
        let _ = std::fs::remove_file(self.path(object));
    }

    /// Bytes held.
    pub fn total_bytes(&self) -> u64 {
        self.index.lock().unwrap().total
    }

    fn evict(&self) {
        let mut idx = self.index.lock().unwrap();
        while idx.total > self.max_bytes {
            let Some((name, size)) = idx
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(n, (s, _))| (n.clone(), *s))
            else {
                break;
            };
            idx.entries.remove(&name);
            idx.total -= size;
            let _ = std::fs::remove_file(self.path(&name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_recent_entries_within_budget_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let c = ChunkCache::open(dir.path(), 250).unwrap();
        c.put("states/a-a1.chunk", &[1; 100]);
        c.put("states/b-a1.chunk", &[2; 100]);
        assert_eq!(c.get("states/a-a1.chunk"), Some(vec![1; 100])); // a is now recent
        c.put("values/c-a1.chunk", &[3; 100]); // over budget: b goes
        assert_eq!(c.get("states/b-a1.chunk"), None);
        assert!(!dir.path().join("states/b-a1.chunk").exists());
        assert_eq!(c.total_bytes(), 200);
        c.remove("values/c-a1.chunk");
        assert_eq!(c.get("values/c-a1.chunk"), None);
        drop(c);
        let again = ChunkCache::open(dir.path(), 250).unwrap();
        assert_eq!(again.total_bytes(), 100);
        assert_eq!(again.get("states/a-a1.chunk"), Some(vec![1; 100]));
        assert!(!cacheable("runs/x.run") && !cacheable("commits/x.json"));
        assert!(cacheable("policy/s00004/m01/g0000-c0000-a1.chunk"));
    }
}
