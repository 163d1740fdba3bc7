//! The lowest layer of the engine's pretty-printer, replaced: instead of
//! bytes it keeps lines, and for each line the p-code ops its tokens came
//! from, so every line can be mapped to instruction addresses while the
//! analysis is still alive. Type tokens are spelled as standard C here, and
//! characters a reader cannot see are written as `\uXXXX` escapes, whether
//! they come from a name in the file or from a string literal.

use std::sync::{Arc, Mutex};

use ghidra_decompiler::error::Result;
use ghidra_decompiler::op::OpId;
use ghidra_decompiler::prettyprint::{
    BlockMark, Emit, EmitBase, FuncMark, OpMark, SymbolMark, SyntaxHighlight, TypeMark, VarnodeMark,
};
use ghidra_decompiler::space::SpaceRef;

use crate::decompiler::c_types;

/// The most characters one recording keeps; past it the text is cut and
/// the recording says so (a hostile function can print without end).
pub const MAX_RECORDED_CHARS: usize = 16 << 20;

/// What the printer wrote: lines, each with the ops of its tokens.
#[derive(Debug, Default)]
pub struct Recording {
    pub lines: Vec<(String, Vec<OpId>)>,
    current: String,
    ops: Vec<OpId>,
    chars: usize,
    pub cut: bool,
}

impl Recording {
    fn push(&mut self, text: &str) {
        if self.cut {
            return;
        }
        let count = text.chars().count();
        let room = MAX_RECORDED_CHARS - self.chars;
        let kept = if count > room {
            self.cut = true;
            let end = text.char_indices().nth(room).map_or(text.len(), |(i, _)| i);
            &text[..end]
        } else {
            text
        };
        self.chars += count.min(room);
        self.current
            .push_str(&crate::ground::hidden::escape_for_c(kept));
    }

    fn op(&mut self, op: Option<OpMark>) {
        if let Some(mark) = op {
            self.ops.push(mark.id);
        }
    }

    fn new_line(&mut self, indent: i32) {
        let text = std::mem::take(&mut self.current);
        let ops = std::mem::take(&mut self.ops);
        self.lines.push((text, ops));
        let indent = usize::try_from(indent).unwrap_or(0).min(400);
        self.current.push_str(&" ".repeat(indent));
    }

    /// The lines, the last one included, without leading or trailing blank
    /// lines.
    pub fn finish(&mut self) -> Vec<(String, Vec<OpId>)> {
        self.new_line(0);
        let mut lines = std::mem::take(&mut self.lines);
        for (text, _) in &mut lines {
            let kept = text.trim_end().len();
            text.truncate(kept);
        }
        while lines
            .last()
            .is_some_and(|(t, o)| t.is_empty() && o.is_empty())
        {
            lines.pop();
        }
        let blank = lines
            .iter()
            .take_while(|(t, o)| t.is_empty() && o.is_empty())
            .count();
        lines.drain(..blank);
        lines
    }
}

/// The [`Emit`] that fills a shared [`Recording`].
pub struct Recorder {
    base: EmitBase,
    recording: Arc<Mutex<Recording>>,
    /// Output the engine asks for as bytes (never used for C here).
    stream: Vec<u8>,
}

impl Recorder {
    pub fn new(recording: Arc<Mutex<Recording>>) -> Recorder {
        Recorder {
            base: EmitBase::new(),
            recording,
            stream: Vec::new(),
        }
    }

    fn with(&self, f: impl FnOnce(&mut Recording)) {
        let mut recording = self
            .recording
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut recording);
    }

    fn token(&mut self, text: &str, op: Option<OpMark>) -> Result<()> {
        self.with(|r| {
            r.push(text);
            r.op(op);
        });
        Ok(())
    }
}

impl Emit for Recorder {
    fn base(&self) -> &EmitBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut EmitBase {
        &mut self.base
    }

    fn as_dyn(&mut self) -> &mut dyn Emit {
        self
    }

    fn begin_document(&mut self) -> Result<i32> {
        Ok(0)
    }

    fn end_document(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn begin_function(&mut self, _fd: Option<&FuncMark>) -> Result<i32> {
        Ok(0)
    }

    fn end_function(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn begin_block(&mut self, _bl: Option<BlockMark>) -> Result<i32> {
        Ok(0)
    }

    fn end_block(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn tag_line(&mut self) -> Result<()> {
        let indent = self.base.indentlevel;
        self.with(|r| r.new_line(indent));
        Ok(())
    }

    fn tag_line_indent(&mut self, indent: i32) -> Result<()> {
        self.with(|r| r.new_line(indent));
        Ok(())
    }

    fn begin_return_type(&mut self, _vn: Option<VarnodeMark>) -> Result<i32> {
        Ok(0)
    }

    fn end_return_type(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn begin_var_decl(&mut self, _sym: Option<SymbolMark>) -> Result<i32> {
        Ok(0)
    }

    fn end_var_decl(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn begin_statement(&mut self, op: Option<OpMark>) -> Result<i32> {
        self.with(|r| r.op(op));
        Ok(0)
    }

    fn end_statement(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn begin_func_proto(&mut self) -> Result<i32> {
        Ok(0)
    }

    fn end_func_proto(&mut self, _id: i32) -> Result<()> {
        Ok(())
    }

    fn tag_variable(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _vn: Option<VarnodeMark>,
        op: Option<OpMark>,
    ) -> Result<()> {
        self.token(name, op)
    }

    fn tag_op(&mut self, name: &str, _hl: SyntaxHighlight, op: Option<OpMark>) -> Result<()> {
        self.token(name, op)
    }

    fn tag_func_name(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _fd: Option<&FuncMark>,
        op: Option<OpMark>,
    ) -> Result<()> {
        self.token(name, op)
    }

    fn tag_type(&mut self, name: &str, _hl: SyntaxHighlight, _ct: Option<&TypeMark>) -> Result<()> {
        self.token(&c_types::standard(name), None)
    }

    fn tag_field(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _ct: Option<&TypeMark>,
        _off: i32,
        op: Option<OpMark>,
    ) -> Result<()> {
        self.token(name, op)
    }

    fn tag_bit_field(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _ct: Option<&TypeMark>,
        _id: i32,
        op: Option<OpMark>,
    ) -> Result<()> {
        self.token(name, op)
    }

    fn tag_comment(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _spc: Option<&SpaceRef>,
        _off: u64,
    ) -> Result<()> {
        self.token(name, None)
    }

    fn tag_label(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        _spc: Option<&SpaceRef>,
        _off: u64,
    ) -> Result<()> {
        self.token(name, None)
    }

    fn tag_case_label(
        &mut self,
        name: &str,
        _hl: SyntaxHighlight,
        op: Option<OpMark>,
        _value: u64,
    ) -> Result<()> {
        self.token(name, op)
    }

    fn print(&mut self, data: &str, _hl: SyntaxHighlight) -> Result<()> {
        self.token(data, None)
    }

    fn open_paren(&mut self, paren: &str, id: i32) -> Result<i32> {
        self.base.parenlevel += 1;
        self.token(paren, None)?;
        Ok(id)
    }

    fn close_paren(&mut self, paren: &str, _id: i32) -> Result<()> {
        self.base.parenlevel -= 1;
        self.token(paren, None)
    }

    fn set_output_stream(&mut self, text: Vec<u8>) {
        self.stream = text;
    }

    fn get_output_stream(&mut self) -> &mut Vec<u8> {
        &mut self.stream
    }

    fn emits_markup(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_escaped_and_blank_edges_dropped() {
        let mut r = Recording::default();
        r.new_line(0);
        r.push("int32_t f\u{202e}(void)");
        r.new_line(2);
        r.push("{  ");
        r.new_line(0);
        let lines = r.finish();
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["int32_t f\\u202E(void)", "  {"]);
    }

    #[test]
    fn a_recording_that_runs_on_is_cut() {
        let mut r = Recording::default();
        let long = "x".repeat(1 << 20);
        for _ in 0..20 {
            r.push(&long);
        }
        assert!(r.cut);
        assert_eq!(r.finish()[0].0.len(), MAX_RECORDED_CHARS);
    }
}
