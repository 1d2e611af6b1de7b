//! MLIR bytecode (version 6, as StableHLO writes portable artifacts) for a
//! tree of ops: the inverse of `container.rs` and `ir.rs`. Attributes and
//! types are written as text entries, which MLIR's reader parses with the
//! dialect's own parser; VHLO ops store their inherent attributes as
//! properties in the order of the op table, as StableHLO's writer does.

use std::collections::HashMap;

use super::VhloError;
use super::op_attributes::op_attributes;
use super::sdy::sdy_op_attributes;
use super::text::{Op, Region};

const VERSION: u64 = 6;
const STRING: u8 = 0;
const DIALECT: u8 = 1;
const ATTR_TYPE: u8 = 2;
const ATTR_TYPE_OFFSET: u8 = 3;
const IR: u8 = 4;
const PROPERTIES: u8 = 8;

const HAS_ATTRS: u8 = 0x01;
const HAS_RESULTS: u8 = 0x02;
const HAS_OPERANDS: u8 = 0x04;
const HAS_INLINE_REGIONS: u8 = 0x10;
const HAS_PROPERTIES: u8 = 0x40;

/// The builtin attribute code of `loc(unknown)` (`BuiltinDialectBytecode.td`).
const UNKNOWN_LOC: u64 = 15;

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// Bytes in MLIR bytecode's encodings.
#[derive(Default)]
struct Emitter {
    bytes: Vec<u8>,
}

impl Emitter {
    /// MLIR's prefix varint: the count of trailing zero bits of the first
    /// byte says how many bytes follow.
    fn varint(&mut self, value: u64) {
        for n in 1..=8u32 {
            if value < 1u64 << (7 * n) {
                let encoded = (value << n) | (1 << (n - 1));
                self.bytes
                    .extend_from_slice(&encoded.to_le_bytes()[..n as usize]);
                return;
            }
        }
        self.bytes.push(0);
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn varint_with_flag(&mut self, value: u64, flag: bool) {
        self.varint((value << 1) | u64::from(flag));
    }

    fn index(&mut self, value: usize) {
        self.varint(value as u64);
    }

    fn section(&mut self, id: u8, data: &[u8]) {
        self.bytes.push(id);
        self.index(data.len());
        self.bytes.extend_from_slice(data);
    }
}

/// The dialect of an attribute or type written as text.
fn text_dialect(text: &str) -> &str {
    let body = text.trim_start_matches(['#', '!']);
    if text.starts_with(['#', '!']) {
        let end = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        &body[..end]
    } else {
        "builtin"
    }
}

/// One attribute or type entry: its dialect and bytes.
struct TableEntry {
    dialect: usize,
    custom: bool,
    data: Vec<u8>,
}

/// Items numbered in the order they were first asked for, found by a key.
struct Interner<T> {
    items: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T> Interner<T> {
    fn find(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    fn insert(&mut self, key: &str, item: T) -> usize {
        self.items.push(item);
        self.index.insert(key.to_string(), self.items.len() - 1);
        self.items.len() - 1
    }
}

/// The deduplicated tables the IR refers to by index.
#[derive(Default)]
struct Tables {
    strings: Interner<String>,
    /// Each dialect's name, as a string index.
    dialects: Interner<usize>,
    /// Each op name's (dialect, name string).
    op_names: Interner<(usize, usize)>,
    attrs: Interner<TableEntry>,
    types: Interner<TableEntry>,
    properties: Vec<Vec<u8>>,
}

impl Tables {
    fn string(&mut self, s: &str) -> usize {
        match self.strings.find(s) {
            Some(i) => i,
            None => self.strings.insert(s, s.to_string()),
        }
    }

    fn dialect(&mut self, name: &str) -> usize {
        if let Some(i) = self.dialects.find(name) {
            return i;
        }
        let s = self.string(name);
        self.dialects.insert(name, s)
    }

    fn op_name(&mut self, full: &str) -> Result<usize, VhloError> {
        if let Some(i) = self.op_names.find(full) {
            return Ok(i);
        }
        let (dialect, name) = full
            .split_once('.')
            .ok_or_else(|| bad(format!("op name {full} has no dialect")))?;
        let entry = (self.dialect(dialect), self.string(name));
        Ok(self.op_names.insert(full, entry))
    }

    fn text_entry(&mut self, text: &str) -> TableEntry {
        let mut data = text.as_bytes().to_vec();
        data.push(0);
        TableEntry {
            dialect: self.dialect(text_dialect(text)),
            custom: false,
            data,
        }
    }

    fn attr(&mut self, text: &str) -> usize {
        if let Some(i) = self.attrs.find(text) {
            return i;
        }
        let entry = self.text_entry(text);
        self.attrs.insert(text, entry)
    }

    /// `loc(unknown)`, in the builtin dialect's own encoding.
    fn unknown_location(&mut self) -> usize {
        const KEY: &str = "\0loc(unknown)";
        if let Some(i) = self.attrs.find(KEY) {
            return i;
        }
        let mut e = Emitter::default();
        e.varint(UNKNOWN_LOC);
        let entry = TableEntry {
            dialect: self.dialect("builtin"),
            custom: true,
            data: e.bytes,
        };
        self.attrs.insert(KEY, entry)
    }

    fn ty(&mut self, text: &str) -> usize {
        if let Some(i) = self.types.find(text) {
            return i;
        }
        let entry = self.text_entry(text);
        self.types.insert(text, entry)
    }
}

/// The values of one isolated-from-above scope: a map per open region.
#[derive(Default)]
struct Scope {
    regions: Vec<HashMap<String, usize>>,
    reserved: usize,
}

/// Writes `ops` (the top level of a module, normally one `builtin.module`)
/// as MLIR bytecode whose producer is `producer`.
pub(crate) fn write(ops: &[Op], producer: &str) -> Result<Vec<u8>, VhloError> {
    let mut writer = Writer {
        tables: Tables::default(),
        scopes: vec![Scope::default()],
    };
    let mut ir = Emitter::default();
    ir.varint_with_flag(ops.len() as u64, false);
    writer.scope().regions.push(HashMap::new());
    for op in ops {
        writer.define(&op.results)?;
    }
    for op in ops {
        writer.op(op, &mut ir)?;
    }
    let tables = writer.tables;

    let mut out = Emitter::default();
    out.bytes.extend_from_slice(b"ML\xefR");
    out.varint(VERSION);
    out.bytes.extend_from_slice(producer.as_bytes());
    out.bytes.push(0);

    let mut strings = Emitter::default();
    strings.index(tables.strings.items.len());
    for s in tables.strings.items.iter().rev() {
        strings.index(s.len() + 1);
    }
    for s in &tables.strings.items {
        strings.bytes.extend_from_slice(s.as_bytes());
        strings.bytes.push(0);
    }
    out.section(STRING, &strings.bytes);

    let mut dialects = Emitter::default();
    dialects.index(tables.dialects.items.len());
    for &name in &tables.dialects.items {
        dialects.varint_with_flag(name as u64, false);
    }
    dialects.index(tables.op_names.items.len());
    for group in group_by(&tables.op_names.items, |&(d, _)| d) {
        dialects.index(group[0].0);
        dialects.index(group.len());
        for &(_, name) in group {
            dialects.varint_with_flag(name as u64, true);
        }
    }
    out.section(DIALECT, &dialects.bytes);

    let mut data = Emitter::default();
    let mut offsets = Emitter::default();
    offsets.index(tables.attrs.items.len());
    offsets.index(tables.types.items.len());
    for entries in [&tables.attrs.items, &tables.types.items] {
        for group in group_by(entries, |e| e.dialect) {
            offsets.index(group[0].dialect);
            offsets.index(group.len());
            for entry in group {
                offsets.varint_with_flag(entry.data.len() as u64, entry.custom);
                data.bytes.extend_from_slice(&entry.data);
            }
        }
    }
    out.section(ATTR_TYPE, &data.bytes);
    out.section(ATTR_TYPE_OFFSET, &offsets.bytes);
    out.section(IR, &ir.bytes);

    let mut properties = Emitter::default();
    properties.index(tables.properties.len());
    for blob in &tables.properties {
        properties.index(blob.len());
        properties.bytes.extend_from_slice(blob);
    }
    out.section(PROPERTIES, &properties.bytes);
    Ok(out.bytes)
}

/// Runs of consecutive items with the same key.
fn group_by<T, K: PartialEq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<&[T]> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=items.len() {
        if i == items.len() || key(&items[i]) != key(&items[start]) {
            if i > start {
                groups.push(&items[start..i]);
            }
            start = i;
        }
    }
    groups
}

/// Ops whose regions are isolated from above (their own value scope).
fn is_isolated(name: &str) -> bool {
    matches!(name, "builtin.module" | "vhlo.func_v1" | "func.func")
}

struct Writer {
    tables: Tables,
    scopes: Vec<Scope>,
}

impl Writer {
    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().expect("a scope is open")
    }

    /// Gives `names` the next value numbers of the innermost region.
    fn define(&mut self, names: &[String]) -> Result<(), VhloError> {
        let scope = self.scope();
        for name in names {
            let slot = scope.reserved;
            scope.reserved += 1;
            let region = scope.regions.last_mut().expect("a region is open");
            if region.insert(name.clone(), slot).is_some() {
                return Err(bad(format!("the value {name} is defined twice")));
            }
        }
        Ok(())
    }

    fn value(&mut self, name: &str) -> Result<usize, VhloError> {
        let scope = self.scope();
        scope
            .regions
            .iter()
            .rev()
            .find_map(|r| r.get(name).copied())
            .ok_or_else(|| bad(format!("the value {name} is used but not defined")))
    }

    fn properties(&mut self, op: &Op) -> Result<Option<Vec<u8>>, VhloError> {
        let lookup = |name: &str| op.properties.iter().find(|(n, _)| n == name);
        let table = if let Some(short) = op.name.strip_prefix("vhlo.") {
            Some(
                op_attributes(short)
                    .ok_or_else(|| bad(format!("{} is not a VHLO op oxla knows", op.name)))?,
            )
        } else {
            // Shardy ops oxla knows store their attributes as properties
            // too (when the text has them in its dictionary, MLIR moves
            // them on reading).
            op.name
                .strip_prefix("sdy.")
                .and_then(sdy_op_attributes)
                .filter(|_| !op.properties.is_empty())
        };
        if let Some(names) = table {
            if let Some((extra, _)) = op
                .properties
                .iter()
                .find(|(n, _)| !names.contains(&n.as_str()))
            {
                return Err(bad(format!("{} has no attribute {extra}", op.name)));
            }
            if names.is_empty() {
                return Ok(None);
            }
            let mut e = Emitter::default();
            for name in names {
                let (_, value) = lookup(name)
                    .ok_or_else(|| bad(format!("{} lacks its attribute {name}", op.name)))?;
                let index = self.tables.attr(value);
                e.index(index);
            }
            return Ok(Some(e.bytes));
        }
        if op.name == "builtin.module" {
            let mut e = Emitter::default();
            for name in ["sym_name", "sym_visibility"] {
                match lookup(name) {
                    Some((_, value)) => {
                        let index = self.tables.attr(value);
                        e.varint_with_flag(index as u64, true);
                    }
                    None => e.varint_with_flag(0, false),
                }
            }
            return Ok(Some(e.bytes));
        }
        Ok(None)
    }

    fn op(&mut self, op: &Op, out: &mut Emitter) -> Result<(), VhloError> {
        let name = self.tables.op_name(&op.name)?;
        let location = self.tables.unknown_location();
        let properties = self.properties(op)?;
        // Ops without a properties encoding keep every attribute in their
        // dictionary (MLIR moves inherent ones into properties on reading).
        let mut attributes = op.attributes.clone();
        if properties.is_none() {
            attributes.extend(op.properties.iter().cloned());
        }
        let mut mask = 0;
        if !attributes.is_empty() {
            mask |= HAS_ATTRS;
        }
        if properties.is_some() {
            mask |= HAS_PROPERTIES;
        }
        if !op.results.is_empty() {
            mask |= HAS_RESULTS;
        }
        if !op.operands.is_empty() {
            mask |= HAS_OPERANDS;
        }
        if !op.regions.is_empty() {
            mask |= HAS_INLINE_REGIONS;
        }
        out.index(name);
        out.bytes.push(mask);
        out.index(location);
        if !attributes.is_empty() {
            let entries: Vec<String> = attributes
                .iter()
                .map(|(k, v)| {
                    if v == "unit" {
                        k.clone()
                    } else {
                        format!("{k} = {v}")
                    }
                })
                .collect();
            let index = self.tables.attr(&format!("{{{}}}", entries.join(", ")));
            out.index(index);
        }
        if let Some(blob) = properties {
            self.tables.properties.push(blob);
            out.index(self.tables.properties.len() - 1);
        }
        if !op.results.is_empty() {
            out.index(op.result_types.len());
            for ty in &op.result_types {
                let index = self.tables.ty(ty);
                out.index(index);
            }
        }
        if !op.operands.is_empty() {
            out.index(op.operands.len());
            for operand in &op.operands {
                let slot = self.value(operand)?;
                out.index(slot);
            }
        }
        if op.regions.is_empty() {
            return Ok(());
        }
        let isolated = is_isolated(&op.name);
        out.varint_with_flag(op.regions.len() as u64, isolated);
        if isolated {
            self.scopes.push(Scope::default());
            let mut section = Emitter::default();
            for region in &op.regions {
                self.region(region, &mut section)?;
            }
            self.scopes.pop();
            out.section(IR, &section.bytes);
        } else {
            for region in &op.regions {
                self.region(region, out)?;
            }
        }
        Ok(())
    }

    fn region(&mut self, region: &Region, out: &mut Emitter) -> Result<(), VhloError> {
        out.index(region.blocks.len());
        if region.blocks.is_empty() {
            return Ok(());
        }
        let num_values: usize = region
            .blocks
            .iter()
            .map(|b| b.arguments.len() + b.ops.iter().map(|o| o.results.len()).sum::<usize>())
            .sum();
        out.index(num_values);
        let saved = self.scope().reserved;
        self.scope().regions.push(HashMap::new());
        for block in &region.blocks {
            let names: Vec<String> = block.arguments.iter().map(|(n, _)| n.clone()).collect();
            self.define(&names)?;
            for op in &block.ops {
                self.define(&op.results)?;
            }
        }
        for block in &region.blocks {
            out.varint_with_flag(block.ops.len() as u64, !block.arguments.is_empty());
            if !block.arguments.is_empty() {
                out.index(block.arguments.len());
                for (_, ty) in &block.arguments {
                    let index = self.tables.ty(ty);
                    out.varint_with_flag(index as u64, false);
                }
                out.bytes.push(0);
            }
            for op in &block.ops {
                self.op(op, out)?;
            }
        }
        self.scope().regions.pop();
        self.scope().reserved = saved;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vhlo::encoding::Reader;

    #[test]
    fn varints_round_trip_through_the_reader() {
        let values = [
            0u64,
            1,
            63,
            127,
            128,
            300,
            1 << 20,
            (1 << 56) - 1,
            1 << 56,
            u64::MAX,
        ];
        let mut e = Emitter::default();
        for v in values {
            e.varint(v);
        }
        let mut r = Reader::new(&e.bytes);
        for v in values {
            assert_eq!(r.varint().unwrap(), v);
        }
        assert!(r.at_end());
    }

    #[test]
    fn dialects_of_text_entries() {
        assert_eq!(text_dialect("#vhlo.integer_v1<1 : i64>"), "vhlo");
        assert_eq!(text_dialect("#vhlo<precision_v1 DEFAULT>"), "vhlo");
        assert_eq!(text_dialect("!vhlo.tensor_v1<2x!vhlo.f32_v1>"), "vhlo");
        assert_eq!(text_dialect("{a = 1 : i32}"), "builtin");
        assert_eq!(text_dialect("\"main\""), "builtin");
    }
}
