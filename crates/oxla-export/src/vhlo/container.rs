//! The sections of an MLIR bytecode file: strings, dialects and op names,
//! the attribute and type table, op properties, and the IR.

use super::VhloError;
use super::encoding::Reader;

const STRING: u8 = 0;
const DIALECT: u8 = 1;
const ATTR_TYPE: u8 = 2;
const ATTR_TYPE_OFFSET: u8 = 3;
const IR: u8 = 4;
const RESOURCE: u8 = 5;
const RESOURCE_OFFSET: u8 = 6;
const DIALECT_VERSIONS: u8 = 7;
const PROPERTIES: u8 = 8;

/// The bytecode versions oxla reads (5 stores op properties natively).
const MIN_VERSION: u64 = 5;
const MAX_VERSION: u64 = 6;

/// An op name and whether its dialect was registered when written.
pub(crate) struct OpName {
    pub(crate) dialect: String,
    pub(crate) name: String,
    pub(crate) registered: bool,
}

impl OpName {
    pub(crate) fn full(&self) -> String {
        format!("{}.{}", self.dialect, self.name)
    }
}

/// One attribute or type of the table.
pub(crate) struct Entry<'a> {
    pub(crate) dialect: String,
    /// Written by the dialect's bytecode interface (else as text).
    pub(crate) custom: bool,
    pub(crate) data: &'a [u8],
}

/// A parsed bytecode file.
pub(crate) struct Bytecode<'a> {
    pub(crate) version: u64,
    pub(crate) strings: Vec<&'a str>,
    pub(crate) op_names: Vec<OpName>,
    pub(crate) attrs: Vec<Entry<'a>>,
    pub(crate) types: Vec<Entry<'a>>,
    pub(crate) properties: Vec<&'a [u8]>,
    pub(crate) ir: &'a [u8],
}

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

impl<'a> Bytecode<'a> {
    /// Splits `bytes` into its sections and reads the tables.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Bytecode<'a>, VhloError> {
        if !bytes.starts_with(b"ML\xefR") {
            return Err(bad("not MLIR bytecode"));
        }
        // Positions count from the file's start, as section alignment does.
        let mut r = Reader::new(bytes);
        r.bytes(4)?;
        let version = r.varint()?;
        if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
            return Err(bad(format!(
                "MLIR bytecode version {version} (oxla reads {MIN_VERSION} to {MAX_VERSION})"
            )));
        }
        let _producer = r.cstr()?;
        let mut sections: [Option<&'a [u8]>; 9] = [None; 9];
        while !r.at_end() {
            let (id, data) = r.section()?;
            let slot = sections
                .get_mut(usize::from(id))
                .ok_or_else(|| bad(format!("unknown section {id}")))?;
            *slot = Some(data);
        }
        let section =
            |id: u8| sections[usize::from(id)].ok_or_else(|| bad(format!("no section {id}")));
        let strings = read_strings(section(STRING)?)?;
        let string = |i: usize| {
            strings
                .get(i)
                .copied()
                .ok_or_else(|| bad(format!("string {i} out of range")))
        };
        let (dialects, op_names) = read_dialects(section(DIALECT)?, &string)?;
        let (attrs, types) =
            read_attr_types(section(ATTR_TYPE)?, section(ATTR_TYPE_OFFSET)?, &dialects)?;
        if let Some(resources) = sections[usize::from(RESOURCE_OFFSET)]
            && Reader::new(resources).varint()? != 0
        {
            return Err(bad(
                "the module holds external resources (dense_resource data)",
            ));
        }
        let _ = (RESOURCE, DIALECT_VERSIONS);
        let properties = match sections[usize::from(PROPERTIES)] {
            Some(data) => {
                let mut r = Reader::new(data);
                let count = r.index()?;
                (0..count)
                    .map(|_| r.blob())
                    .collect::<Result<Vec<_>, _>>()?
            }
            None => Vec::new(),
        };
        Ok(Bytecode {
            version,
            strings,
            op_names,
            attrs,
            types,
            properties,
            ir: section(IR)?,
        })
    }
}

/// Dialect `index` of the dialect section.
fn dialect_at(dialects: &[String], index: usize) -> Result<&String, VhloError> {
    dialects
        .get(index)
        .ok_or_else(|| bad(format!("dialect {index} out of range")))
}

fn read_strings(data: &[u8]) -> Result<Vec<&str>, VhloError> {
    let mut r = Reader::new(data);
    let count = r.count()?;
    let sizes = (0..count)
        .map(|_| r.index())
        .collect::<Result<Vec<_>, _>>()?;
    // Sizes are stored in reverse order; each string ends with a NUL.
    sizes
        .iter()
        .rev()
        .map(|&size| {
            let bytes = r.bytes(size)?;
            let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
            std::str::from_utf8(text).map_err(|_| bad("a string is not UTF-8"))
        })
        .collect()
}

#[allow(clippy::type_complexity)]
fn read_dialects<'a>(
    data: &'a [u8],
    string: &dyn Fn(usize) -> Result<&'a str, VhloError>,
) -> Result<(Vec<String>, Vec<OpName>), VhloError> {
    let mut r = Reader::new(data);
    let count = r.count()?;
    let mut dialects = Vec::with_capacity(count);
    for _ in 0..count {
        let (name, versioned) = r.varint_with_flag()?;
        dialects.push(string(name as usize)?.to_string());
        if versioned {
            r.blob()?;
        }
    }
    let _num_ops = r.index()?;
    let mut op_names = Vec::new();
    while !r.at_end() {
        let dialect = dialect_at(dialects.as_slice(), r.index()?)?;
        for _ in 0..r.count()? {
            let (name, registered) = r.varint_with_flag()?;
            op_names.push(OpName {
                dialect: dialect.clone(),
                name: string(name as usize)?.to_string(),
                registered,
            });
        }
    }
    Ok((dialects, op_names))
}

#[allow(clippy::type_complexity)]
fn read_attr_types<'a>(
    data: &'a [u8],
    offsets: &[u8],
    dialects: &[String],
) -> Result<(Vec<Entry<'a>>, Vec<Entry<'a>>), VhloError> {
    let mut r = Reader::new(offsets);
    let num_attrs = r.index()?;
    let num_types = r.index()?;
    let mut start = 0usize;
    let mut read = |count: usize, r: &mut Reader<'_>| -> Result<Vec<Entry<'a>>, VhloError> {
        let mut out = Vec::new();
        while out.len() < count {
            let dialect = dialect_at(dialects, r.index()?)?;
            for _ in 0..r.count()? {
                let (size, custom) = r.varint_with_flag()?;
                let end = start
                    .checked_add(size as usize)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(|| bad("an attribute or type runs past its section"))?;
                out.push(Entry {
                    dialect: dialect.clone(),
                    custom,
                    data: &data[start..end],
                });
                start = end;
            }
        }
        Ok(out)
    };
    let attrs = read(num_attrs, &mut r)?;
    let types = read(num_types, &mut r)?;
    Ok((attrs, types))
}
