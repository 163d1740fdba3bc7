//! The document a call reads: every tool that reads one document of the
//! active target opens it here, so "no target", "no such document" and the
//! name the answer carries are the same everywhere.

use std::sync::Arc;

use serde_json::Value;

use crate::session::{ActiveTarget, Session, Subject};
use crate::tools::{HandlerResult, ToolError, ToolName};

/// The active target, the chosen document's position in it, and its name.
pub(crate) struct Document {
    pub target: Arc<ActiveTarget>,
    pub index: usize,
    pub name: String,
}

impl Document {
    /// `document` of the active target (its current document when `None`).
    pub fn open(session: &Session, document: Option<&str>) -> Result<Document, ToolError> {
        let target = session.require_target()?.clone();
        let index = session.document_index(document)?;
        let name = target.image.documents()[index].name.clone();
        Ok(Document {
            target,
            index,
            name,
        })
    }

    /// The document as an Evidence subject.
    pub fn subject(&self) -> Subject {
        self.target.document_subject(self.index)
    }

    /// Records what rea's own file reader (not the bound provider) read
    /// from this document, and returns the result with its Evidence.
    pub fn observe_file(
        &self,
        session: &mut Session,
        tool: ToolName,
        parameters: Value,
        result: Value,
        limitations: Vec<String>,
    ) -> HandlerResult {
        let draft = self.target.file_observation(
            tool.as_str(),
            self.subject(),
            parameters,
            result,
            limitations,
        );
        crate::tools::recorded(session, draft)
    }
}
