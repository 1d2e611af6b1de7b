//! `PJRT_NamedValue`: the typed key-value pairs of client create options,
//! device attributes, plugin attributes and cost analyses.

use std::fmt;

use crate::api::c_string;
use crate::args::PjrtArgs;
use crate::ffi;

/// The value of a [`NamedValue`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string.
    String(String),
    /// A 64-bit integer.
    Int64(i64),
    /// A list of 64-bit integers.
    Int64List(Vec<i64>),
    /// A 32-bit float.
    Float(f32),
    /// A boolean.
    Bool(bool),
    /// A value type this version of oxla does not know (its raw type tag).
    Unknown(u32),
}

impl Value {
    /// The name of the value's type: "string", "int64", "int64 list",
    /// "float", "bool" or "unknown".
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::String(_) => "string",
            Value::Int64(_) => "int64",
            Value::Int64List(_) => "int64 list",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Unknown(_) => "unknown",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::String(s) => write!(f, "{s:?}"),
            Value::Int64(v) => write!(f, "{v}"),
            Value::Int64List(v) => write!(f, "{v:?}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Unknown(tag) => write!(f, "<value of unknown type {tag}>"),
        }
    }
}

/// A name and a typed value.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedValue {
    /// The name.
    pub name: String,
    /// The value.
    pub value: Value,
}

impl NamedValue {
    /// A named value.
    pub fn new(name: impl Into<String>, value: Value) -> Self {
        Self {
            name: name.into(),
            value,
        }
    }
}

/// Copies `count` named values owned by the plugin.
///
/// # Safety
/// `values` must be null (with `count` 0) or point at `count` valid values.
pub(crate) unsafe fn read_named_values(
    values: *const ffi::PJRT_NamedValue,
    count: usize,
) -> Vec<NamedValue> {
    if values.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: guaranteed by the caller.
    let raw = unsafe { std::slice::from_raw_parts(values, count) };
    raw.iter()
        .map(|v| {
            // SAFETY: each field is read as the type its tag names.
            unsafe {
                let name = c_string(v.name, v.name_size);
                let u = &v.value;
                let value = match v.type_ {
                    ffi::PJRT_NamedValue_kString => {
                        Value::String(c_string(u.string_value, v.value_size))
                    }
                    ffi::PJRT_NamedValue_kInt64 => Value::Int64(u.int64_value),
                    ffi::PJRT_NamedValue_kInt64List => {
                        let list = if u.int64_array_value.is_null() {
                            Vec::new()
                        } else {
                            std::slice::from_raw_parts(u.int64_array_value, v.value_size).to_vec()
                        };
                        Value::Int64List(list)
                    }
                    ffi::PJRT_NamedValue_kFloat => Value::Float(u.float_value),
                    ffi::PJRT_NamedValue_kBool => Value::Bool(u.bool_value),
                    other => Value::Unknown(other),
                };
                NamedValue { name, value }
            }
        })
        .collect()
}

/// `PJRT_NamedValue`s that borrow their names and values from `NamedValue`s.
pub(crate) struct RawNamedValues<'a> {
    raw: Vec<ffi::PJRT_NamedValue>,
    _borrow: std::marker::PhantomData<&'a [NamedValue]>,
}

impl<'a> RawNamedValues<'a> {
    /// Borrows `values` for as long as the raw array lives. Values of
    /// [`Value::Unknown`] cannot be sent and are refused.
    pub(crate) fn new(values: &'a [NamedValue]) -> crate::Result<Self> {
        let raw = values
            .iter()
            .map(|v| {
                let mut r = ffi::PJRT_NamedValue::new();
                r.name = v.name.as_ptr().cast();
                r.name_size = v.name.len();
                match &v.value {
                    Value::String(s) => {
                        r.type_ = ffi::PJRT_NamedValue_kString;
                        r.value.string_value = s.as_ptr().cast();
                        r.value_size = s.len();
                    }
                    Value::Int64(i) => {
                        r.type_ = ffi::PJRT_NamedValue_kInt64;
                        r.value.int64_value = *i;
                        r.value_size = 1;
                    }
                    Value::Int64List(list) => {
                        r.type_ = ffi::PJRT_NamedValue_kInt64List;
                        r.value.int64_array_value = list.as_ptr();
                        r.value_size = list.len();
                    }
                    Value::Float(x) => {
                        r.type_ = ffi::PJRT_NamedValue_kFloat;
                        r.value.float_value = *x;
                        r.value_size = 1;
                    }
                    Value::Bool(b) => {
                        r.type_ = ffi::PJRT_NamedValue_kBool;
                        r.value.bool_value = *b;
                        r.value_size = 1;
                    }
                    Value::Unknown(tag) => {
                        return Err(crate::Error::InvalidArgument(format!(
                            "option {:?} has a value of unknown type {tag}",
                            v.name
                        )));
                    }
                }
                Ok(r)
            })
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(Self {
            raw,
            _borrow: std::marker::PhantomData,
        })
    }

    pub(crate) fn as_ptr(&self) -> *const ffi::PJRT_NamedValue {
        self.raw.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.raw.len()
    }
}
