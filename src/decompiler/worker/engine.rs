//! One loaded document in the engine, with rea's knowledge applied once at
//! load (the engine keeps what it is given, so a recycled worker that loads
//! the same knowledge prints the same text).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use ghidra_decompiler::address::Address;
use ghidra_decompiler::architecture::Architecture;
use ghidra_decompiler::database::{Database, ScopeId, SymbolId};
use ghidra_decompiler::error::Error;
use ghidra_decompiler::funcdata::Funcdata;
use ghidra_decompiler::prettyprint::{Emit, EmitPrettyPrint};
use ghidra_decompiler::program::Program;

use super::recorder::{Recorder, Recording};
use crate::decompiler::knowledge::Knowledge;
use crate::decompiler::protocol::{Callee, Decompiled, Line};

/// Why the engine gave no C; the text is the engine's or ours, already
/// stripped of anything a reader cannot see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError(pub String);

impl From<Error> for EngineError {
    fn from(error: Error) -> EngineError {
        EngineError(describe(&error))
    }
}

/// The engine's message, bounded and escaped: it can quote a name from the
/// file.
fn describe(error: &Error) -> String {
    crate::ground::hidden::escape_for_c(&crate::ground::text::excerpt(error.explain(), 300))
        .into_owned()
}

pub struct Engine {
    program: Program,
    /// Addresses of the strings rea declared.
    strings: BTreeSet<u64>,
    /// The stand-in entry of each import called through a slot, to the slot.
    external_slots: HashMap<u64, u64>,
}

impl Engine {
    pub fn load(
        bytes: Vec<u8>,
        knowledge: &Knowledge,
        max_instructions: u32,
    ) -> Result<Engine, EngineError> {
        let mut program = Program::from_image("document", bytes, None)?;
        program.architecture().max_instructions = max_instructions;
        let mut engine = Engine {
            program,
            strings: BTreeSet::new(),
            external_slots: HashMap::new(),
        };
        engine.apply(knowledge)?;
        Ok(engine)
    }

    pub fn language(&self) -> String {
        self.program.language_id().to_string()
    }

    fn apply(&mut self, knowledge: &Knowledge) -> Result<(), EngineError> {
        for start in &knowledge.functions {
            // A name the engine refuses (taken elsewhere) still leaves the
            // start; an address it cannot take at all is skipped here and
            // refused when asked for.
            let named = start
                .name
                .as_deref()
                .is_some_and(|name| self.program.set_function_name(start.address, name).is_ok());
            if !named && self.function_starting_at(start.address)?.is_none() {
                let _ = self.program.set_function_name(start.address, "");
            }
        }
        for stub in &knowledge.import_stubs {
            let _ = self.program.set_function_name(stub.address, &stub.name);
        }
        self.add_import_slots(knowledge)?;
        for string in &knowledge.strings {
            if self
                .add_string(string.address, string.units, string.wide)
                .is_ok()
            {
                self.strings.insert(string.address);
            }
        }
        self.mark_no_return()
    }

    /// Calls to functions that never return end their path, as in the
    /// source (the names the native provider's recovery knows).
    fn mark_no_return(&mut self) -> Result<(), EngineError> {
        let ending: Vec<u64> = self
            .program
            .functions()?
            .into_iter()
            .filter(|f| {
                crate::providers::native::never_returns(&f.name)
                    || f.symbol
                        .as_deref()
                        .is_some_and(crate::providers::native::never_returns)
            })
            .map(|f| f.address)
            .collect();
        for address in ending {
            if let Some(sym) = self.function_starting_at(address)? {
                let _ = self
                    .program
                    .architecture()
                    .with_function(sym, |function, _| {
                        function.get_func_proto_mut().set_no_return(true);
                        Ok(())
                    });
            }
        }
        Ok(())
    }

    /// A call through an import slot names the import: the slot becomes an
    /// external reference to a stand-in function of that name, placed at
    /// the top of the code space where no image has code.
    fn add_import_slots(&mut self, knowledge: &Knowledge) -> Result<(), EngineError> {
        if knowledge.import_slots.is_empty() {
            return Ok(());
        }
        let arch = self.program.architecture();
        let scope = global_scope(arch)?;
        let code = code_space(arch)?;
        let data = data_space(arch)?;
        let count = knowledge.import_slots.len() as u64;
        let top = code.get_highest();
        let base = top.saturating_sub(16 * (count + 1)) & !0xf;
        for (i, slot) in knowledge.import_slots.iter().enumerate() {
            let stand_in = base + 16 * i as u64;
            let entry = Address::new(code.clone(), stand_in);
            let at = Address::new(data.clone(), slot.address);
            // The loader's own label for the slot (PE import names as data)
            // would print as `(*_CreateFileW)(…)`: the reference replaces it.
            if let Some(entry) = db(arch)?.scope_query_container(scope, &at, 1, &Address::invalid())
            {
                let db = arch.symboltab_mut()?;
                let symbol = db.entry(entry).get_symbol();
                db.scope_remove_symbol(scope, symbol);
            }
            if Database::scope_add_function(arch, scope, &entry, &slot.name).is_ok()
                && Database::scope_add_external_ref(arch, scope, &at, &entry, &slot.name).is_ok()
            {
                self.external_slots.insert(stand_in, slot.address);
            }
        }
        Ok(())
    }

    fn add_string(&mut self, address: u64, units: u32, wide: bool) -> Result<(), EngineError> {
        let arch = self.program.architecture();
        let scope = global_scope(arch)?;
        let at = Address::new(data_space(arch)?, address);
        if db(arch)?
            .scope_query_container(scope, &at, 1, &Address::invalid())
            .is_some()
        {
            return Err(EngineError("taken".into()));
        }
        let length =
            i32::try_from(units.saturating_add(1)).map_err(|_| EngineError("too long".into()))?;
        let types = arch.types_mut()?;
        let unit = types.get_type_char(if wide { 2 } else { 1 })?;
        let array = types.get_type_array(length, unit)?;
        Database::scope_add_symbol_at(
            arch,
            scope,
            &format!("s_{address:x}"),
            Some(array),
            &at,
            &Address::invalid(),
        )?;
        Ok(())
    }

    fn function_starting_at(&mut self, address: u64) -> Result<Option<SymbolId>, EngineError> {
        let arch = self.program.architecture();
        let scope = global_scope(arch)?;
        let code = code_space(arch)?;
        let db = db(arch)?;
        let Some(sym) = db.scope_query_function(scope, &Address::new(code, address)) else {
            return Ok(None);
        };
        let entry = db.symbol_get_first_whole_map(sym)?;
        Ok((db.entry(entry).get_addr().get_offset() == address).then_some(sym))
    }

    /// The procedure at `address` as C, its lines mapped to instructions.
    pub fn decompile(&mut self, address: u64) -> Result<Decompiled, EngineError> {
        let sym = match self.function_starting_at(address)? {
            Some(sym) => sym,
            None => {
                self.program.set_function_name(address, "")?;
                self.function_starting_at(address)?
                    .ok_or_else(|| EngineError(format!("no procedure can start at {address:#x}")))?
            }
        };
        let strings = &self.strings;
        let external_slots = &self.external_slots;
        let arch = self.program.architecture();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            arch.with_function(sym, |function, arch| {
                if function.has_no_code() {
                    return Err(Error::Lowlevel(
                        "the engine has no code for this procedure".into(),
                    ));
                }
                if function.is_proc_started() {
                    arch.clear_analysis(function);
                }
                let result = analyse_and_print(function, arch, strings, external_slots);
                arch.clear_analysis(function);
                result
            })
        }));
        match caught {
            Ok(result) => Ok(result?),
            Err(_) => Err(EngineError("the engine failed inside (a panic)".into())),
        }
    }
}

fn analyse_and_print(
    function: &mut Funcdata,
    arch: &mut Architecture,
    strings: &BTreeSet<u64>,
    external_slots: &HashMap<u64, u64>,
) -> ghidra_decompiler::error::Result<Decompiled> {
    arch.with_current_action(|action, arch| {
        action.reset(function, arch);
        action.perform(function, arch)
    })?;
    let recording = Arc::new(Mutex::new(Recording::default()));
    let shared = Arc::clone(&recording);
    arch.with_printer(Some(&mut *function), move |printer, context| {
        let original = &printer.base().emit;
        let mut pretty = EmitPrettyPrint::new();
        pretty.set_max_line_size(original.get_max_line_size().max(20))?;
        pretty.set_indent_increment(original.get_indent_increment());
        pretty.lowlevel = Box::new(Recorder::new(shared));
        let saved = std::mem::replace(&mut printer.base_mut().emit, Box::new(pretty));
        let printed = printer.doc_function(context);
        let mut used = std::mem::replace(&mut printer.base_mut().emit, saved);
        printed.and_then(|()| used.flush())
    })?;
    let lines = recording
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .finish();
    let mut lines: Vec<Line> = lines
        .into_iter()
        .map(|(text, ops)| {
            let mut addresses: Vec<u64> = ops
                .into_iter()
                .map(|op| function.op(op).get_addr().get_offset())
                .collect();
            addresses.sort_unstable();
            addresses.dedup();
            Line { text, addresses }
        })
        .collect();
    crate::decompiler::idioms::fold_stack_protector(&mut lines);
    let callees = function
        .qlst
        .iter()
        .map(|&spec| {
            let spec = function.call_spec(spec);
            let entry = spec.get_entry_address();
            let address = (!entry.is_invalid()).then(|| entry.get_offset());
            let address = address.map(|a| external_slots.get(&a).copied().unwrap_or(a));
            Callee {
                name: crate::ground::hidden::escape_for_c(&crate::ground::text::excerpt(
                    spec.get_name(),
                    512,
                ))
                .into_owned(),
                address,
                call_site: function.op(spec.get_op()).get_addr().get_offset(),
            }
        })
        .collect();
    let mut used = BTreeSet::new();
    for op in function.obank.alive_ops() {
        let op = function.op(op);
        for slot in 0..op.num_input() {
            let input = function.vn(op.get_in(slot));
            if input.is_constant() && strings.contains(&input.get_offset()) {
                used.insert(input.get_offset());
            }
        }
    }
    Ok(Decompiled {
        lines,
        callees,
        strings: used.into_iter().collect(),
    })
}

fn db(arch: &Architecture) -> Result<&Database, EngineError> {
    Ok(arch.symboltab_ref()?)
}

fn code_space(arch: &Architecture) -> Result<ghidra_decompiler::space::SpaceRef, EngineError> {
    arch.manager
        .get_default_code_space()
        .ok_or_else(|| EngineError("the engine has no code space".into()))
}

fn data_space(arch: &Architecture) -> Result<ghidra_decompiler::space::SpaceRef, EngineError> {
    arch.manager
        .get_default_data_space()
        .ok_or_else(|| EngineError("the engine has no data space".into()))
}

fn global_scope(arch: &Architecture) -> Result<ScopeId, EngineError> {
    db(arch)?
        .get_global_scope()
        .ok_or_else(|| EngineError("the engine has no global scope".into()))
}
