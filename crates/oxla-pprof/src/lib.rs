//! The pprof profile format (github.com/google/pprof's `profile.proto`,
//! gzip-compressed), which JAX's `device_memory_profile` writes and
//! `pprof` reads: the messages oxla writes and reads (field numbers as the
//! proto's), and memory profiles laid out as JAX's: sample types
//! `allocations`/`count` and `space`/`bytes`, one sample per live array
//! whose location is the source line that made it, labels `kind`
//! (`buffer`) and `shape`.
#![warn(missing_docs)]

use std::collections::HashMap;
use std::io::Write;

use prost::Message;

/// One live array of a memory profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// The source file of the line that made it.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The column.
    pub column: u32,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its type (`f32[64,64]`).
    pub shape: String,
}

impl Allocation {
    /// `file:line:column`, the name of its location.
    pub fn place(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }
}

/// `perftools.profiles.Profile`.
#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    /// What each sample value counts.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// Code locations samples point to.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// Functions locations point to.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string the profile uses; entry 0 is "".
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// When the profile was taken (ns since the UNIX epoch).
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// A note for people (string table index).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
}

/// `ValueType`: a sample value's kind and unit (string table indices).
#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// The kind (`allocations`, `space`).
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// The unit (`count`, `bytes`).
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `Sample`: values at a stack of locations, with labels.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// The stack, innermost first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// `Label`: a key with a string value (string table indices).
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    /// The key.
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// The value.
    #[prost(int64, tag = "2")]
    pub str: i64,
}

/// `Location`: a place in the code.
#[derive(Clone, PartialEq, Message)]
pub struct Location {
    /// Its id (from 1).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The lines at it.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

/// `Line`: a function's line.
#[derive(Clone, PartialEq, Message)]
pub struct Line {
    /// The function's id.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// The line number.
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// The column.
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// `Function`.
#[derive(Clone, PartialEq, Message)]
pub struct Function {
    /// Its id (from 1).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its name (string table index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Its system name (string table index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Its source file (string table index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
}

/// Interns strings into a profile's string table.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut strings = Strings::default();
        strings.of("");
        strings
    }

    fn of(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// The profile of `live`: one sample per array, at the line that made it.
pub fn memory_profile(live: &[Allocation], time_nanos: i64) -> Profile {
    let mut strings = Strings::new();
    let sample_type = vec![
        ValueType {
            r#type: strings.of("allocations"),
            unit: strings.of("count"),
        },
        ValueType {
            r#type: strings.of("space"),
            unit: strings.of("bytes"),
        },
    ];
    let mut locations: HashMap<String, u64> = HashMap::new();
    let mut location = Vec::new();
    let mut function = Vec::new();
    let mut sample = Vec::new();
    let (kind, buffer, shape) = (
        strings.of("kind"),
        strings.of("buffer"),
        strings.of("shape"),
    );
    for array in live {
        let place = array.place();
        let id = match locations.get(&place) {
            Some(&id) => id,
            None => {
                let id = location.len() as u64 + 1;
                let name = strings.of(&place);
                function.push(Function {
                    id,
                    name,
                    system_name: name,
                    filename: strings.of(&array.file),
                });
                location.push(Location {
                    id,
                    line: vec![Line {
                        function_id: id,
                        line: i64::from(array.line),
                        column: i64::from(array.column),
                    }],
                });
                locations.insert(place, id);
                id
            }
        };
        sample.push(Sample {
            location_id: vec![id],
            value: vec![1, array.bytes as i64],
            label: vec![
                Label {
                    key: kind,
                    str: buffer,
                },
                Label {
                    key: shape,
                    str: strings.of(&array.shape),
                },
            ],
        });
    }
    let comment = vec![strings.of("oxla device memory profile: live arrays")];
    Profile {
        sample_type,
        sample,
        location,
        function,
        string_table: strings.table,
        time_nanos,
        comment,
    }
}

/// `profile` serialized and gzip-compressed, as pprof files are.
pub fn gzipped(profile: &Profile) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(&profile.encode_to_vec())
        .expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// The profile in pprof bytes (gzip-compressed or not).
pub fn read(bytes: &[u8]) -> Result<Profile, String> {
    let raw = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out)
            .map_err(|e| format!("not gzip: {e}"))?;
        out
    } else {
        bytes.to_vec()
    };
    Profile::decode(raw.as_slice()).map_err(|e| format!("not a pprof profile: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_profile_reads_back_with_shared_locations_and_strings() {
        let at = |line: u32, bytes: u64| Allocation {
            file: "a.rs".into(),
            line,
            column: 1,
            bytes,
            shape: "u8[4]".into(),
        };
        let profile = memory_profile(&[at(3, 4), at(3, 8), at(9, 16)], 42);
        let back = read(&gzipped(&profile)).unwrap();
        assert_eq!(back, profile);
        assert_eq!(read(&profile.encode_to_vec()).unwrap(), profile);
        // One location and function per source line, strings interned.
        assert_eq!(back.location.len(), 2);
        assert_eq!(back.function.len(), 2);
        assert_eq!(back.string_table[0], "");
        let unique: std::collections::HashSet<&String> = back.string_table.iter().collect();
        assert_eq!(unique.len(), back.string_table.len());
        assert_eq!(back.sample[1].location_id, back.sample[0].location_id);
        assert_eq!(back.sample[2].value, vec![1, 16]);
        assert!(read(b"\x1f\x8bnot gzip").unwrap_err().contains("not gzip"));
    }
}
