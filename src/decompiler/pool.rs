//! Workers shared by every session of the process, and the results they
//! produced. Workers are kept idle per (document, knowledge) so the next
//! request skips the load; a batch runs on up to `workers` of them at once;
//! a worker is recycled after [`RECYCLE_AFTER`] calls or [`RECYCLE_RESIDENT`]
//! bytes (the engine keeps growing inside one load). Results are cached by
//! (document, knowledge digest, address) under [`CACHE_BYTES`]; the
//! document key holds the file's sha256, the document and the engine
//! version, so a repeat is instant and never stale.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::client::{Limits, Worker, WorkerFailure};
use super::knowledge::Knowledge;
use super::protocol::Decompiled;

/// Calls one worker serves before it is replaced.
pub const RECYCLE_AFTER: u32 = 64;
/// Resident memory past which a worker is replaced after its call.
pub const RECYCLE_RESIDENT: u64 = 1536 << 20;
/// Bytes of results kept.
pub const CACHE_BYTES: usize = 64 << 20;
/// Idle workers kept over all documents.
pub const MAX_IDLE: usize = 4;

/// What a batch decompiles from: one document and what rea knows of it.
pub struct Source<'a> {
    /// Unique per (file sha256, document index).
    pub document_key: String,
    pub bytes: &'a [u8],
    pub knowledge: Arc<Knowledge>,
    pub digest: String,
}

/// One procedure's result.
pub type Outcome = Result<Arc<Decompiled>, WorkerFailure>;

type WorkerKey = (String, String);
type ResultKey = (String, String, u64);

pub struct Pool {
    program: Mutex<Option<PathBuf>>,
    limits: Mutex<Limits>,
    workers: AtomicUsize,
    idle: Mutex<VecDeque<(WorkerKey, Worker)>>,
    cache: Mutex<Cache>,
    /// Workers started (for tests and benches: proof of reuse).
    started: AtomicUsize,
    /// Procedures being decompiled now, over every call, and the signal
    /// that one slot was freed.
    busy: Mutex<usize>,
    freed: Condvar,
    /// The knowledge of recently used documents, with its digest.
    knowledge: Mutex<VecDeque<(String, Arc<Knowledge>, String)>>,
}

/// Documents whose knowledge is kept ready.
const KNOWLEDGE_KEPT: usize = 8;

#[derive(Default)]
struct Cache {
    entries: HashMap<ResultKey, Arc<Decompiled>>,
    order: VecDeque<ResultKey>,
    bytes: usize,
}

impl Cache {
    fn get(&self, key: &ResultKey) -> Option<Arc<Decompiled>> {
        self.entries.get(key).cloned()
    }

    fn put(&mut self, key: ResultKey, value: Arc<Decompiled>) {
        let size = weight(&value);
        if size > CACHE_BYTES || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + size > CACHE_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.entries.remove(&old) {
                self.bytes -= weight(&gone);
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.entries.insert(key, value);
    }
}

fn weight(done: &Decompiled) -> usize {
    done.lines
        .iter()
        .map(|l| l.text.len() + 8 * l.addresses.len() + 48)
        .sum::<usize>()
        + done
            .callees
            .iter()
            .map(|c| c.name.len() + 48)
            .sum::<usize>()
        + 8 * done.strings.len()
}

impl Pool {
    pub fn new() -> Pool {
        Pool {
            program: Mutex::new(None),
            limits: Mutex::new(Limits::default()),
            workers: AtomicUsize::new(
                std::thread::available_parallelism()
                    .map(usize::from)
                    .unwrap_or(1),
            ),
            idle: Mutex::new(VecDeque::new()),
            cache: Mutex::new(Cache::default()),
            started: AtomicUsize::new(0),
            knowledge: Mutex::new(VecDeque::new()),
            busy: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// The `rea` binary that serves `decompile-worker` (default: this one),
    /// the limits, and how many workers a batch may use at once.
    pub fn configure(&self, program: Option<PathBuf>, limits: Limits, workers: usize) {
        *lock(&self.program) = program;
        *lock(&self.limits) = limits;
        self.workers.store(workers.max(1), Ordering::Relaxed);
        lock(&self.idle).clear();
    }

    pub fn limits(&self) -> Limits {
        *lock(&self.limits)
    }

    /// Workers started since the process began.
    pub fn workers_started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }

    /// The knowledge of `document_key` and its digest: made by `gather` the
    /// first time, then kept for the most recent documents.
    pub fn knowledge<E>(
        &self,
        document_key: &str,
        gather: impl FnOnce() -> Result<Knowledge, E>,
    ) -> Result<(Arc<Knowledge>, String), E> {
        if let Some((_, knowledge, digest)) = lock(&self.knowledge)
            .iter()
            .find(|(key, _, _)| key == document_key)
        {
            return Ok((Arc::clone(knowledge), digest.clone()));
        }
        let knowledge = Arc::new(gather()?);
        let digest = knowledge.digest();
        let mut kept = lock(&self.knowledge);
        kept.push_back((
            document_key.to_string(),
            Arc::clone(&knowledge),
            digest.clone(),
        ));
        while kept.len() > KNOWLEDGE_KEPT {
            kept.pop_front();
        }
        Ok((knowledge, digest))
    }

    /// Every address of `addresses`, in order, each with its outcome. Runs on
    /// up to the configured number of workers; cached results come back
    /// without one.
    pub fn decompile_all(
        &self,
        source: &Source<'_>,
        addresses: &[u64],
        interrupted: &(dyn Fn() -> bool + Sync),
    ) -> Vec<Outcome> {
        let mut outcomes: Vec<Option<Outcome>> = addresses
            .iter()
            .map(|&a| self.cached(source, a).map(Ok))
            .collect();
        let todo: Vec<usize> = (0..addresses.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        if !todo.is_empty() {
            let next = AtomicUsize::new(0);
            let results = Mutex::new(Vec::new());
            let failed_start = Mutex::new(None);
            let lanes = self.workers.load(Ordering::Relaxed).min(todo.len()).max(1);
            std::thread::scope(|scope| {
                for _ in 0..lanes {
                    scope.spawn(|| {
                        let mut worker: Option<Worker> = None;
                        loop {
                            // One procedure at a time per permit: calls of
                            // every session share the cores fairly.
                            let Some(_permit) = self.permit(interrupted) else {
                                break;
                            };
                            let n = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&index) = todo.get(n) else { break };
                            let outcome = self.run_one(
                                source,
                                addresses[index],
                                &mut worker,
                                &failed_start,
                                interrupted,
                            );
                            lock(&results).push((index, outcome));
                        }
                        if let Some(worker) = worker {
                            self.put_back(source, worker);
                        }
                    });
                }
            });
            for (index, outcome) in results.into_inner().unwrap_or_else(|p| p.into_inner()) {
                outcomes[index] = Some(outcome);
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or(Err(WorkerFailure::Cancelled)))
            .collect()
    }

    /// Waits for one of the process's `workers` decompile slots, or `None`
    /// once `interrupted` says stop.
    fn permit(&self, interrupted: &dyn Fn() -> bool) -> Option<Permit<'_>> {
        let mut busy = lock(&self.busy);
        loop {
            if interrupted() {
                return None;
            }
            if *busy < self.workers.load(Ordering::Relaxed) {
                *busy += 1;
                return Some(Permit(self));
            }
            busy = self
                .freed
                .wait_timeout(busy, crate::ground::child::POLL)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }

    fn cached(&self, source: &Source<'_>, address: u64) -> Option<Arc<Decompiled>> {
        lock(&self.cache).get(&(source.document_key.clone(), source.digest.clone(), address))
    }

    fn run_one(
        &self,
        source: &Source<'_>,
        address: u64,
        worker: &mut Option<Worker>,
        failed_start: &Mutex<Option<WorkerFailure>>,
        interrupted: &dyn Fn() -> bool,
    ) -> Outcome {
        if interrupted() {
            return Err(WorkerFailure::Cancelled);
        }
        let limits = self.limits();
        if worker.is_none() {
            // A document the engine could not load once in this batch is
            // not loaded again for each of its procedures.
            if let Some(failure) = lock(failed_start).clone() {
                return Err(failure);
            }
            match self.take_or_start(source, &limits, interrupted) {
                Ok(started) => *worker = Some(started),
                Err(failure) => {
                    if failure != WorkerFailure::Cancelled {
                        *lock(failed_start) = Some(failure.clone());
                    }
                    return Err(failure);
                }
            }
        }
        let Some(current) = worker.as_mut() else {
            return Err(WorkerFailure::Cancelled);
        };
        let result = current.decompile(address, &limits, interrupted);
        let worn = current.calls() >= RECYCLE_AFTER
            || current
                .resident_bytes()
                .is_some_and(|b| b > RECYCLE_RESIDENT);
        match &result {
            Err(failure) if !failure.keeps_worker() => *worker = None,
            _ if worn => *worker = None,
            _ => {}
        }
        let done = Arc::new(result?);
        lock(&self.cache).put(
            (source.document_key.clone(), source.digest.clone(), address),
            Arc::clone(&done),
        );
        Ok(done)
    }

    fn take_or_start(
        &self,
        source: &Source<'_>,
        limits: &Limits,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Worker, WorkerFailure> {
        let key = (source.document_key.clone(), source.digest.clone());
        {
            let mut idle = lock(&self.idle);
            if let Some(at) = idle.iter().position(|(k, _)| *k == key)
                && let Some((_, worker)) = idle.remove(at)
            {
                return Ok(worker);
            }
        }
        let program = match lock(&self.program).clone() {
            Some(program) => program,
            None => std::env::current_exe().map_err(|e| WorkerFailure::Start(e.to_string()))?,
        };
        let sealed =
            super::sealed_copy(source.bytes).map_err(|e| WorkerFailure::Start(e.to_string()))?;
        self.started.fetch_add(1, Ordering::Relaxed);
        Worker::start(&program, &sealed, &source.knowledge, limits, interrupted)
    }

    fn put_back(&self, source: &Source<'_>, worker: Worker) {
        let mut idle = lock(&self.idle);
        idle.push_back(((source.document_key.clone(), source.digest.clone()), worker));
        while idle.len() > MAX_IDLE.max(self.workers.load(Ordering::Relaxed)) {
            idle.pop_front();
        }
    }
}

/// One decompile slot, given back when dropped.
struct Permit<'a>(&'a Pool);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *lock(&self.0.busy) -= 1;
        self.0.freed.notify_one();
    }
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::new()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompiler::protocol::Line;
    use std::time::{Duration, Instant};

    #[test]
    fn slots_are_shared_and_a_waiter_can_stop() {
        let pool = Pool::new();
        pool.configure(None, Limits::default(), 1);
        let held = pool.permit(&|| false).expect("a free slot");
        let asked = Instant::now();
        let stop = || asked.elapsed() > Duration::from_millis(100);
        assert!(pool.permit(&stop).is_none(), "the one slot is taken");
        drop(held);
        assert!(pool.permit(&|| false).is_some(), "given back on drop");
    }

    #[test]
    fn the_cache_keeps_within_its_bytes_oldest_out_first() {
        let mut cache = Cache::default();
        let big = Arc::new(Decompiled {
            lines: vec![Line {
                text: "x".repeat(CACHE_BYTES / 3),
                addresses: vec![],
            }],
            ..Decompiled::default()
        });
        let key = |a| ("doc".to_string(), "kn".to_string(), a);
        for address in 0..4 {
            cache.put(key(address), Arc::clone(&big));
        }
        assert!(cache.bytes <= CACHE_BYTES);
        assert!(cache.get(&key(0)).is_none(), "the oldest went first");
        assert!(cache.get(&key(3)).is_some());
    }
}
