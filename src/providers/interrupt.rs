//! Whether the call that asked for provider work still wants it.
//!
//! Provider work is long (a code sweep, an import walk over a hostile
//! table) and shared: its results are cached on the image for every later
//! call. The call that runs it may be cancelled, or pass the operator's
//! deadline, while it runs. The tool layer installs the call's check for
//! the thread that runs the call ([`with_check`]); the walks over file data
//! ask it every few thousand steps ([`Checkpoint`]) and stop early; the
//! image's caches then keep nothing of the stopped work (a partial result
//! is never cached) and answer [`super::ProviderError::Interrupted`].
//!
//! The check travels with the thread rather than through every signature,
//! so every walk is covered however deep it is called from; work that
//! spawns threads carries it over with [`current`].

use std::cell::RefCell;
use std::sync::Arc;

/// Asks whether the work should stop (cancelled or past its deadline).
/// Once it answers `true` it keeps answering `true`.
pub type Check = Arc<dyn Fn() -> bool + Send + Sync>;

/// Steps between two asks of the check in a [`Checkpoint`].
pub const CHECK_EVERY: u32 = 4096;

thread_local! {
    static CURRENT: RefCell<Option<Check>> = const { RefCell::new(None) };
}

/// Runs `work` with `check` as this thread's check; the previous one is
/// back afterwards, even if `work` panics.
pub fn with_check<R>(check: Option<Check>, work: impl FnOnce() -> R) -> R {
    struct Restore(Option<Check>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|current| current.replace(check));
    let _restore = Restore(previous);
    work()
}

/// This thread's check, to install in a thread the work spawns.
pub fn current() -> Option<Check> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Whether this thread's work should stop now.
pub fn interrupted() -> bool {
    CURRENT.with(|current| current.borrow().as_ref().is_some_and(|check| check()))
}

/// Counts the steps of a loop over file data and asks the check every
/// [`CHECK_EVERY`] steps, so asking costs nothing measurable.
#[derive(Debug, Default)]
pub struct Checkpoint {
    steps: u32,
    stopped: bool,
}

impl Checkpoint {
    pub fn new() -> Checkpoint {
        Checkpoint::default()
    }

    /// One step; `true` when the loop should stop.
    pub fn stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.steps += 1;
        if self.steps >= CHECK_EVERY {
            self.steps = 0;
            self.stopped = interrupted();
        }
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_checkpoint_asks_every_few_thousand_steps_and_stays_stopped() {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let check: Check = Arc::new(move || counter.fetch_add(1, Ordering::Relaxed) >= 2);
        let steps = with_check(Some(check), || {
            let mut checkpoint = Checkpoint::new();
            let mut steps = 0u32;
            while !checkpoint.stop() {
                steps += 1;
            }
            assert!(checkpoint.stop(), "stopped for good");
            steps
        });
        assert_eq!(asked.load(Ordering::Relaxed), 3);
        assert_eq!(steps, 3 * CHECK_EVERY - 1);
    }

    #[test]
    fn the_check_is_the_threads_and_restored_after_the_work() {
        assert!(!interrupted());
        let stop: Check = Arc::new(|| true);
        with_check(Some(stop), || {
            assert!(interrupted());
            let carried = current();
            std::thread::scope(|scope| {
                scope.spawn(|| assert!(!interrupted(), "a new thread has none"));
                scope.spawn(|| with_check(carried, || assert!(interrupted())));
            });
            with_check(None, || assert!(!interrupted()));
            assert!(interrupted());
        });
        assert!(!interrupted());
    }
}
