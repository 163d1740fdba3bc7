//! Where a node runs: the Electron process layer of a graph node.

use serde::Serialize;

use crate::javascript::{Node, NodeKind};

/// Where a node runs: the Electron process layer, or outside the
/// application's own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Renderer,
    Preload,
    Main,
    Native,
    External,
    Unknown,
}

impl Layer {
    /// A module's layer is its `process` attribute; pages render; windows,
    /// menus and protocols are main-process objects; exposed APIs live in
    /// the preload; packages, built-ins and URLs are outside the
    /// application's code. A channel joins layers and belongs to none.
    pub fn of(node: &Node) -> Layer {
        match node.kind {
            NodeKind::Module => match node.attributes.get("process").and_then(|v| v.as_str()) {
                Some("main") => Layer::Main,
                Some("preload") => Layer::Preload,
                Some("renderer") => Layer::Renderer,
                _ => Layer::Unknown,
            },
            NodeKind::HtmlPage | NodeKind::Webview => Layer::Renderer,
            NodeKind::NativeModule => Layer::Native,
            NodeKind::Window | NodeKind::Menu | NodeKind::Protocol => Layer::Main,
            NodeKind::ExposedApi => Layer::Preload,
            NodeKind::Package | NodeKind::Builtin | NodeKind::Url => Layer::External,
            NodeKind::IpcChannel => Layer::Unknown,
        }
    }
}
