//! The IR section as MLIR text in generic form: ops with their operands,
//! properties (VHLO's inherent attributes, by the op table), regions,
//! discardable attributes and types, values named `%vN`. Locations are
//! dropped. Value numbering follows MLIR's reader: one scope per region
//! isolated from above, each region reserving its values after those of
//! the regions around it.

use std::fmt::Write;

use super::VhloError;
use super::attributes::{MAX_NESTING, Tables, Type};
use super::container::Bytecode;
use super::encoding::Reader;
use super::op_attributes::op_attributes;
use super::sdy::sdy_op_attributes;

const HAS_ATTRS: u8 = 0x01;
const HAS_RESULTS: u8 = 0x02;
const HAS_OPERANDS: u8 = 0x04;
const HAS_SUCCESSORS: u8 = 0x08;
const HAS_INLINE_REGIONS: u8 = 0x10;
const HAS_USE_LIST_ORDERS: u8 = 0x20;
const HAS_PROPERTIES: u8 = 0x40;

/// A value: its name and type (unknown until defined, for a forward use).
#[derive(Clone)]
struct Value {
    name: String,
    ty: Option<String>,
}

/// The values of one isolated-from-above scope.
#[derive(Default)]
struct Scope {
    /// Global value ids by slot.
    slots: Vec<Option<usize>>,
    /// The next slot to define in each open region.
    next: Vec<usize>,
}

pub(crate) struct Printer<'b, 'a> {
    bytecode: &'b Bytecode<'a>,
    tables: Tables<'b, 'a>,
    values: Vec<Value>,
    scopes: Vec<Scope>,
}

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// Moves past the use-list orders of `num_values` values (the order of
/// each value's uses, which the text form does not keep), as MLIR's
/// `parseUseListOrderForRange` reads them.
fn skip_use_list_orders(r: &mut Reader<'_>, num_values: usize) -> Result<(), VhloError> {
    let entries = if num_values > 1 { r.count()? } else { 1 };
    for _ in 0..entries {
        if num_values > 1 {
            r.index()?;
        }
        let (uses, _index_pairs) = r.varint_with_flag()?;
        let uses = usize::try_from(uses).map_err(|_| bad("a use-list order overflows"))?;
        if uses > r.remaining() {
            return Err(bad("a use-list order runs past its section"));
        }
        for _ in 0..uses {
            r.index()?;
        }
    }
    Ok(())
}

impl<'b, 'a> Printer<'b, 'a> {
    pub(crate) fn new(bytecode: &'b Bytecode<'a>) -> Self {
        Printer {
            bytecode,
            tables: Tables::new(bytecode),
            values: Vec::new(),
            scopes: Vec::new(),
        }
    }

    fn scope(&mut self) -> Result<&mut Scope, VhloError> {
        self.scopes.last_mut().ok_or_else(|| bad("no value scope"))
    }

    fn new_value(&mut self) -> usize {
        self.values.push(Value {
            name: format!("%v{}", self.values.len()),
            ty: None,
        });
        self.values.len() - 1
    }

    /// Defines the next values of the current region with types `types`.
    fn define(&mut self, types: &[String]) -> Result<Vec<usize>, VhloError> {
        let mut ids = Vec::with_capacity(types.len());
        for ty in types {
            let slot = {
                let scope = self.scope()?;
                let next = scope
                    .next
                    .last_mut()
                    .ok_or_else(|| bad("a value outside any region"))?;
                let slot = *next;
                *next += 1;
                if slot >= scope.slots.len() {
                    return Err(bad("more values than the region declares"));
                }
                slot
            };
            let id = match self.scope()?.slots[slot] {
                Some(id) => id,
                None => self.new_value(),
            };
            self.scope()?.slots[slot] = Some(id);
            self.values[id].ty = Some(ty.clone());
            ids.push(id);
        }
        Ok(ids)
    }

    fn operand(&mut self, slot: usize) -> Result<usize, VhloError> {
        let existing = *self
            .scope()?
            .slots
            .get(slot)
            .ok_or_else(|| bad(format!("value {slot} out of range")))?;
        match existing {
            Some(id) => Ok(id),
            None => {
                let id = self.new_value();
                self.scope()?.slots[slot] = Some(id);
                Ok(id)
            }
        }
    }

    /// The text of the whole IR: the ops of the top-level block.
    pub(crate) fn print(mut self) -> Result<String, VhloError> {
        let mut r = Reader::new(self.bytecode.ir);
        self.scopes.push(Scope::default());
        self.scope()?.next.push(0);
        let (count, has_args) = r.varint_with_flag()?;
        if has_args {
            return Err(bad("the top-level block has arguments"));
        }
        if count as usize > self.bytecode.ir.len() {
            return Err(bad("more top-level ops than bytes"));
        }
        let mut out = String::new();
        for _ in 0..count {
            self.op(&mut r, &mut out, 0)?;
        }
        Ok(out)
    }

    fn op(&mut self, r: &mut Reader<'a>, out: &mut String, depth: usize) -> Result<(), VhloError> {
        let name_index = r.index()?;
        let name = self
            .bytecode
            .op_names
            .get(name_index)
            .ok_or_else(|| bad(format!("op name {name_index} out of range")))?;
        let (full_name, dialect, short, registered) = (
            name.full(),
            name.dialect.clone(),
            name.name.clone(),
            name.registered,
        );
        let mask = r.byte()?;
        let _location = r.index()?;
        let attrs = if mask & HAS_ATTRS != 0 {
            Some(self.tables.attr(r.index()?)?)
        } else {
            None
        };
        let properties = if mask & HAS_PROPERTIES != 0 {
            let index = r.index()?;
            if registered {
                let data = *self
                    .bytecode
                    .properties
                    .get(index)
                    .ok_or_else(|| bad(format!("properties {index} out of range")))?;
                self.properties(&dialect, &short, data)?
            } else {
                Some(self.tables.attr(index)?)
            }
        } else {
            None
        };
        let result_types = if mask & HAS_RESULTS != 0 {
            self.tables.type_list(r)?
        } else {
            Vec::new()
        };
        let operands = if mask & HAS_OPERANDS != 0 {
            let n = r.count()?;
            (0..n)
                .map(|_| {
                    let slot = r.index()?;
                    self.operand(slot)
                })
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        if mask & HAS_SUCCESSORS != 0 {
            return Err(bad(format!("{full_name} has block successors")));
        }
        if mask & HAS_USE_LIST_ORDERS != 0 {
            skip_use_list_orders(r, result_types.len())?;
        }
        let regions = if mask & HAS_INLINE_REGIONS != 0 {
            Some(r.varint_with_flag()?)
        } else {
            None
        };
        let result_texts: Vec<String> = result_types.iter().map(Type::text).collect();
        let results = self.define(&result_texts)?;

        let mut region_text = String::new();
        if let Some((count, isolated)) = regions {
            let mut section_reader;
            let reader: &mut Reader<'a> = if isolated {
                let (id, data) = r.section()?;
                if id != 4 {
                    return Err(bad(format!(
                        "the regions of {full_name} are in section {id}"
                    )));
                }
                self.scopes.push(Scope::default());
                section_reader = Reader::new(data);
                &mut section_reader
            } else {
                r
            };
            let mut parts = Vec::new();
            for _ in 0..count {
                let mut text = String::new();
                self.region(reader, &mut text, depth + 1)?;
                parts.push(text);
            }
            if isolated {
                self.scopes.pop();
            }
            region_text = format!(" ({})", parts.join(", "));
        }

        let indent = "  ".repeat(depth);
        out.push_str(&indent);
        if !results.is_empty() {
            let names: Vec<&str> = results
                .iter()
                .map(|&id| self.values[id].name.as_str())
                .collect();
            let _ = write!(out, "{} = ", names.join(", "));
        }
        let operand_names: Vec<String> = operands
            .iter()
            .map(|&id| self.values[id].name.clone())
            .collect();
        let operand_types = operands
            .iter()
            .map(|&id| {
                self.values[id]
                    .ty
                    .clone()
                    .ok_or_else(|| bad(format!("{full_name} uses a value defined after it")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let _ = write!(out, "\"{full_name}\"({})", operand_names.join(", "));
        if let Some(properties) = properties {
            let _ = write!(out, " <{properties}>");
        }
        out.push_str(&region_text);
        if let Some(attrs) = attrs
            && attrs != "{}"
        {
            let _ = write!(out, " {attrs}");
        }
        let _ = writeln!(
            out,
            " : ({}) -> ({})",
            operand_types.join(", "),
            result_texts.join(", ")
        );
        Ok(())
    }

    /// The inherent attributes of a registered op, by its table.
    fn properties(
        &self,
        dialect: &str,
        name: &str,
        data: &[u8],
    ) -> Result<Option<String>, VhloError> {
        let mut r = Reader::new(data);
        let entries: Vec<(&str, Option<String>)> = match dialect {
            "vhlo" => {
                let names = op_attributes(name).ok_or_else(|| {
                    bad(format!(
                        "the op vhlo.{name} is newer than the VHLO ops oxla knows (StableHLO 1.20)"
                    ))
                })?;
                names
                    .iter()
                    .map(|n| Ok((*n, Some(self.tables.attr(r.index()?)?))))
                    .collect::<Result<_, VhloError>>()?
            }
            "builtin" if name == "module" => ["sym_name", "sym_visibility"]
                .iter()
                .map(|n| {
                    let (index, present) = r.varint_with_flag()?;
                    Ok((
                        *n,
                        if present {
                            Some(self.tables.attr(index as usize)?)
                        } else {
                            None
                        },
                    ))
                })
                .collect::<Result<_, VhloError>>()?,
            "sdy" => {
                let names = sdy_op_attributes(name)
                    .ok_or_else(|| bad(format!("the properties of sdy.{name} are not read")))?;
                names
                    .iter()
                    .map(|n| Ok((*n, Some(self.tables.attr(r.index()?)?))))
                    .collect::<Result<_, VhloError>>()?
            }
            other => {
                return Err(bad(format!(
                    "the properties of {other}.{name} are not read (only VHLO, Shardy ops and \
                     modules)"
                )));
            }
        };
        let present: Vec<String> = entries
            .into_iter()
            .filter_map(|(n, v)| v.map(|v| format!("{n} = {v}")))
            .collect();
        Ok((!present.is_empty()).then(|| format!("{{{}}}", present.join(", "))))
    }

    fn region(
        &mut self,
        r: &mut Reader<'a>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), VhloError> {
        if depth > MAX_NESTING {
            return Err(bad("regions nest too deeply"));
        }
        let blocks = r.count()?;
        out.push_str("{\n");
        if blocks == 0 {
            out.push_str(&"  ".repeat(depth.saturating_sub(1)));
            out.push('}');
            return Ok(());
        }
        let num_values = r.count()?;
        {
            let scope = self.scope()?;
            scope.next.push(scope.slots.len());
            let len = scope.slots.len();
            scope.slots.resize(len + num_values, None);
        }
        for block in 0..blocks {
            let (count, has_args) = r.varint_with_flag()?;
            if count as usize > self.bytecode.ir.len() {
                return Err(bad("more ops in a block than bytes"));
            }
            let mut args = Vec::new();
            if has_args {
                let n = r.count()?;
                let mut types = Vec::with_capacity(n);
                for _ in 0..n {
                    let (ty, has_location) = r.varint_with_flag()?;
                    if has_location {
                        r.index()?;
                    }
                    types.push(self.tables.ty(ty as usize)?.text());
                }
                if r.byte()? != 0 {
                    skip_use_list_orders(r, n)?;
                }
                let ids = self.define(&types)?;
                args = ids.into_iter().zip(types).collect();
            }
            if block > 0 || !args.is_empty() {
                let list: Vec<String> = args
                    .iter()
                    .map(|(id, ty)| format!("{}: {ty}", self.values[*id].name))
                    .collect();
                let _ = writeln!(
                    out,
                    "{}^bb{block}({}):",
                    "  ".repeat(depth),
                    list.join(", ")
                );
            }
            for _ in 0..count {
                self.op(r, out, depth + 1)?;
            }
        }
        let scope = self.scope()?;
        scope.next.pop();
        let len = scope.slots.len();
        scope.slots.truncate(len - num_values);
        out.push_str(&"  ".repeat(depth.saturating_sub(1)));
        out.push('}');
        Ok(())
    }
}
