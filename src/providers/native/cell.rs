//! One document's lazily computed value, shared by every call.
//!
//! Like a `OnceLock`, the first caller computes while later ones wait, and
//! an error is kept too (it is a pure function of the immutable mapped
//! bytes). Unlike one, work that its call interrupted is not kept: the
//! value was stopped short, not computed, so the next caller computes it
//! again (see [`crate::providers::interrupt`]).

use std::sync::{Arc, Mutex, PoisonError};

use crate::providers::{ProviderError, interrupt};

pub(super) struct Cell<T>(Mutex<Option<Result<Arc<T>, ProviderError>>>);

impl<T> Default for Cell<T> {
    fn default() -> Self {
        Cell(Mutex::new(None))
    }
}

impl<T> Cell<T> {
    /// The value, computed by `init` unless an earlier call did. A panic
    /// in `init` leaves the cell empty.
    pub(super) fn get_or_init(
        &self,
        init: impl FnOnce() -> Result<Arc<T>, ProviderError>,
    ) -> Result<Arc<T>, ProviderError> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(done) = slot.as_ref() {
            return done.clone();
        }
        let value = init();
        if matches!(value, Err(ProviderError::Interrupted)) || interrupt::interrupted() {
            return Err(ProviderError::Interrupted);
        }
        *slot = Some(value.clone());
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_work_is_not_kept_and_finished_work_is() {
        let cell: Cell<u32> = Cell::default();
        let stop: interrupt::Check = Arc::new(|| true);
        let stopped = interrupt::with_check(Some(stop), || cell.get_or_init(|| Ok(Arc::new(1))));
        assert_eq!(stopped, Err(ProviderError::Interrupted));
        assert_eq!(cell.get_or_init(|| Ok(Arc::new(2))), Ok(Arc::new(2)));
        assert_eq!(
            cell.get_or_init(|| Ok(Arc::new(3))),
            Ok(Arc::new(2)),
            "kept"
        );
    }
}
