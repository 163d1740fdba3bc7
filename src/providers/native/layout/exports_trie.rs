//! The Mach-O exports trie (`LC_DYLD_EXPORTS_TRIE` or the `LC_DYLD_INFO`
//! export data), walked here with explicit bounds because `object` walks it
//! without bounding its work. Separate from `macho.rs`: it is a
//! self-contained byte-level parser with its own hostile-input rules.

use super::notes::{Capped, Notes};
use super::object_tables::note_without_address;
use super::{LayoutExport, MAX_ENTRY_ERRORS, MAX_NAME_BYTES, MAX_TRIE_DEPTH, MAX_TRIE_NODES};
use crate::providers::format_address;

/// Export flags of a trie terminal (`<mach-o/loader.h>`).
const EXPORT_KIND_MASK: u64 = 0x03;
const EXPORT_KIND_ABSOLUTE: u64 = 0x02;
const EXPORT_REEXPORT: u64 = 0x08;
const EXPORT_STUB_AND_RESOLVER: u64 = 0x10;

/// A trie node being walked: where its next edge is, how many edges are
/// left and how long the name was when it was entered.
struct Frame {
    offset: usize,
    cursor: usize,
    children: u8,
    name_len: usize,
}

/// Walks a Mach-O exports trie depth first (the order `llvm-objdump
/// --exports-trie` prints), visiting at most [`MAX_TRIE_NODES`] nodes, so
/// that a trie whose edges share nodes (a DAG with exponentially many
/// paths) cannot hang the walk. Cycles (an edge back to a node on the
/// current path) are skipped, names are capped at [`MAX_NAME_BYTES`].
pub(super) fn trie_exports(trie: &[u8], base: u64, notes: &mut Notes) -> Vec<LayoutExport> {
    let mut exports = Capped::new();
    let mut without_address = 0usize;
    let mut errors = 0usize;
    let mut first_error: Option<String> = None;
    let mut error = |message: String| {
        errors += 1;
        first_error.get_or_insert(message);
        errors < MAX_ENTRY_ERRORS
    };
    let mut name: Vec<u8> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending = Some(0usize);
    let mut visited = 0usize;
    let mut stopped = None;
    loop {
        if let Some(offset) = pending.take() {
            visited += 1;
            if visited > MAX_TRIE_NODES {
                stopped = Some(format!("after visiting {MAX_TRIE_NODES} trie nodes"));
                break;
            }
            match trie_node(trie, offset) {
                Ok((terminal, children, cursor)) => {
                    if let Some(terminal) = terminal {
                        match trie_terminal(terminal) {
                            Ok(Some(address)) => {
                                let export = LayoutExport {
                                    name: String::from_utf8_lossy(&name).into_owned(),
                                    address: format_address(base.wrapping_add(address)),
                                };
                                if !exports.push(export) {
                                    break;
                                }
                            }
                            Ok(None) => without_address += 1,
                            Err(message) => {
                                if !error(format!("node at offset {offset}: {message}")) {
                                    break;
                                }
                            }
                        }
                    }
                    if children > 0 {
                        if stack.len() >= MAX_TRIE_DEPTH {
                            if !error(format!("the trie is deeper than {MAX_TRIE_DEPTH} nodes")) {
                                break;
                            }
                        } else {
                            stack.push(Frame {
                                offset,
                                cursor,
                                children,
                                name_len: name.len(),
                            });
                        }
                    }
                }
                Err(message) => {
                    if !error(format!("node at offset {offset}: {message}")) {
                        break;
                    }
                }
            }
        }
        let Some(frame) = stack.last_mut() else {
            break;
        };
        name.truncate(frame.name_len);
        if frame.children == 0 {
            stack.pop();
            continue;
        }
        frame.children -= 1;
        let edge = trie_edge(
            trie,
            frame.cursor,
            MAX_NAME_BYTES.saturating_sub(name.len()),
        );
        let (label, child) = match edge {
            Ok((label, child, next)) => {
                frame.cursor = next;
                (label, child)
            }
            Err(message) => {
                // The rest of this node's edges cannot be located.
                let offset = frame.offset;
                frame.children = 0;
                if !error(format!("node at offset {offset}: {message}")) {
                    break;
                }
                continue;
            }
        };
        if stack.iter().any(|frame| frame.offset == child) {
            if !error(format!("an edge loops back to the node at offset {child}")) {
                break;
            }
            continue;
        }
        name.extend_from_slice(label);
        pending = Some(child);
    }
    if let Some(reason) = stopped {
        notes.note(format!("exports: the exports trie walk stopped {reason}"));
    }
    if errors > 0 {
        notes.note(format!(
            "exports: {errors} exports trie entries could not be read (first error: {})",
            first_error.unwrap_or_default()
        ));
    }
    note_without_address(without_address, notes);
    exports.finish("exports", notes)
}

/// Parses the trie node at `offset`: its terminal data (if any), its edge
/// count and the offset of its first edge.
fn trie_node(trie: &[u8], offset: usize) -> Result<(Option<&[u8]>, u8, usize), &'static str> {
    let mut rest = trie.get(offset..).ok_or("offset outside the trie")?;
    let size = usize::try_from(uleb128(&mut rest)?).map_err(|_| "terminal size too large")?;
    let terminal = rest.get(..size).ok_or("terminal data runs past the trie")?;
    let after = rest.get(size..).ok_or("terminal data runs past the trie")?;
    let (&children, edges) = after.split_first().ok_or("missing edge count")?;
    let cursor = trie.len() - edges.len();
    Ok(((size > 0).then_some(terminal), children, cursor))
}

/// Reads the edge at `cursor`: its label (at most `max_label` bytes), the
/// child's offset and where the next edge starts.
fn trie_edge(
    trie: &[u8],
    cursor: usize,
    max_label: usize,
) -> Result<(&[u8], usize, usize), &'static str> {
    let rest = trie.get(cursor..).ok_or("edge outside the trie")?;
    let window = rest.get(..=max_label).unwrap_or(rest);
    let end = window
        .iter()
        .position(|&byte| byte == 0)
        .ok_or("edge label unterminated or longer than the name limit")?;
    let label = rest.get(..end).ok_or("edge outside the trie")?;
    let mut after = rest.get(end + 1..).ok_or("edge outside the trie")?;
    let child = usize::try_from(uleb128(&mut after)?).map_err(|_| "child offset too large")?;
    Ok((label, child, trie.len() - after.len()))
}

/// The address (offset from `__TEXT`) of a terminal; `None` for exports
/// without one (re-exports, absolute symbols).
fn trie_terminal(mut terminal: &[u8]) -> Result<Option<u64>, &'static str> {
    let flags = uleb128(&mut terminal)?;
    if flags & EXPORT_REEXPORT != 0 {
        return Ok(None);
    }
    if flags & EXPORT_STUB_AND_RESOLVER != 0 {
        let stub = uleb128(&mut terminal)?;
        uleb128(&mut terminal)?;
        return Ok(Some(stub));
    }
    let address = uleb128(&mut terminal)?;
    match flags & EXPORT_KIND_MASK {
        EXPORT_KIND_ABSOLUTE => Ok(None),
        // Regular and thread-local (the address of the TLV descriptor).
        0 | 1 => Ok(Some(address)),
        _ => Err("unknown export kind"),
    }
}

/// Reads an unsigned LEB128 value of at most 64 bits (10 bytes).
pub(super) fn uleb128(bytes: &mut &[u8]) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().enumerate().take(10) {
        let low = u64::from(byte & 0x7f);
        let shift = 7 * index as u32;
        if shift == 63 && low > 1 {
            return Err("ULEB128 value overflows 64 bits");
        }
        value |= low << shift;
        if byte & 0x80 == 0 {
            *bytes = bytes.get(index + 1..).unwrap_or(&[]);
            return Ok(value);
        }
    }
    Err("ULEB128 value truncated or longer than 10 bytes")
}
