//! The one way to write a tool: a type that implements [`Tool`].
//!
//! `build.rs` generates the registry (`registry.rs`) from `catalog.toml`:
//! for every entry it names the type of the same name in CamelCase
//! (`open_binary` → `OpenBinary`, re-exported by `tools/mod.rs`), serves
//! that type's `Input` schema in `tools/list`, parses arguments into that
//! same `Input` and runs it. A catalog entry without an implementation, an
//! implementation whose `NAME` is another entry's, or a schema other than
//! the parsed type cannot compile.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{HandlerResult, ToolError, ToolName, inputs, schema};
use crate::catalog::spec::Effect;
use crate::providers::interrupt;
use crate::providers::native::Progress;
use crate::session::{Interruption, Session, Watch};

/// A tool of the catalog.
pub trait Tool {
    /// The catalog entry this type implements.
    const NAME: ToolName;
    /// Whether a call first builds the document's code index and procedure
    /// inventory (seconds on a large binary). The registry builds it before
    /// `run`, without holding the session, so other requests are answered
    /// meanwhile.
    const BUILDS_INDEX: bool = false;
    /// The typed arguments. Its JSON Schema is what `tools/list` serves and
    /// the arguments of a call are parsed into it, so the two cannot differ.
    type Input: DeserializeOwned + JsonSchema + 'static;

    /// Parses a call's arguments. Override only to scrub what serde's
    /// message would quote (secret values).
    fn parse(arguments: JsonObject) -> Result<Self::Input, ToolError> {
        inputs::parse(arguments)
    }

    /// Runs one call. A tool takes the session with [`Call::session`] for
    /// as long as it needs it; long work (opening, reading an application,
    /// running a program) holds it only to take what it needs and to
    /// record what it found.
    fn run(input: Self::Input, call: &Call<'_>) -> HandlerResult;

    /// What the tool may do beyond reading the target, as the catalog
    /// declares it (policy and annotations are derived from these).
    fn effects() -> &'static [Effect] {
        super::spec(Self::NAME).map_or(&[], |s| s.effects.as_slice())
    }
}

/// Whether a call should stop: `Some` once the client cancelled or the
/// operator's deadline passed. Shared, because the provider walks a call
/// starts ask it too (see [`crate::providers::interrupt`]).
pub type Interrupted = Arc<dyn Fn() -> Option<Interruption> + Send + Sync>;

/// What a call runs with: the shared session, where to report progress and
/// whether to stop.
pub struct Call<'a> {
    session: &'a Mutex<Session>,
    /// `(done, total)` while long work runs.
    pub progress: Progress<'a>,
    /// `Some` once the client cancelled or the operator's deadline passed.
    pub interrupted: Interrupted,
}

impl<'a> Call<'a> {
    pub fn new(
        session: &'a Mutex<Session>,
        progress: Progress<'a>,
        interrupted: Interrupted,
    ) -> Self {
        Call {
            session,
            progress,
            interrupted,
        }
    }

    /// The session, held until the guard drops. A panic in another call
    /// does not make it unusable.
    pub fn session(&self) -> MutexGuard<'a, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Progress and interruption as a long open takes them.
    pub fn watch(&self) -> Watch<'_> {
        Watch {
            progress: self.progress,
            interrupted: &*self.interrupted,
        }
    }

    /// Runs `work` on what `take` copies out of the session without holding
    /// the session meanwhile, then `record`s what it drafted with the
    /// session held again: for tools whose work is long.
    pub fn without_lock<T, D>(
        &self,
        take: impl FnOnce(&Session) -> T,
        work: impl FnOnce(T) -> Result<D, ToolError>,
        record: impl FnOnce(&mut Session, D) -> HandlerResult,
    ) -> HandlerResult {
        let taken = take(&self.session());
        let draft = work(taken)?;
        record(&mut self.session(), draft)
    }
}

impl Call<'static> {
    /// Runs `f` with a call on `session` that reports nowhere and is never
    /// interrupted (unit tests drive tools this way).
    #[cfg(test)]
    pub(crate) fn on<R>(session: &mut Session, f: impl FnOnce(&Call<'_>) -> R) -> R {
        let shared = Mutex::new(std::mem::take(session));
        let outcome = f(&Call::new(&shared, &|_, _| {}, Arc::new(|| None)));
        *session = shared.into_inner().unwrap_or_else(|p| p.into_inner());
        outcome
    }
}

/// The schema `tools/list` serves for `T`.
pub(super) fn schema_of<T: Tool>() -> Arc<JsonObject> {
    let derived = rmcp::handler::server::tool::schema_for_type::<T::Input>();
    Arc::new(schema::lean(derived.as_ref().clone()))
}

/// Parses and runs one call of `T`, with the call's interruption check
/// installed for the provider work it starts. Provider work that stopped
/// for it fails as the interruption says (cancelled, or past the deadline).
pub(super) fn run_tool<T: Tool>(arguments: JsonObject, call: &Call<'_>) -> HandlerResult {
    let stop = call.interrupted.clone();
    let check: interrupt::Check = Arc::new(move || stop().is_some());
    let outcome = interrupt::with_check(Some(check), || {
        if T::BUILDS_INDEX {
            build_index(&arguments, call);
            if let Some(reason) = (call.interrupted)() {
                return Err(crate::session::SessionError::Interrupted(reason).into());
            }
        }
        T::run(T::parse(arguments)?, call)
    });
    match (outcome, (call.interrupted)()) {
        (Err(error), Some(reason)) if error.code == super::ErrorCode::Cancelled => {
            Err(crate::session::SessionError::Interrupted(reason).into())
        }
        (outcome, _) => outcome,
    }
}

/// Builds the code index and procedure inventory of the document a call
/// names (cached on the target) without holding the session; the tool,
/// run next, finds it built. Anything that goes wrong here is left for the
/// tool itself to report.
fn build_index(arguments: &JsonObject, call: &Call<'_>) {
    let document = arguments.get("document").and_then(Value::as_str);
    let (target, index) = {
        let session = call.session();
        match (session.target().cloned(), session.document_index(document)) {
            (Some(target), Ok(index)) => (target, index),
            _ => return,
        }
    };
    let _ = target.procedure_index_with_progress(index, call.progress);
}
