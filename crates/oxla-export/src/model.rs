//! What an export holds, as plain Rust values.

use std::fmt;

use oxla_pjrt::ElementType;

/// Element types of JAX's export schema (`DType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// bool
    Bool,
    /// int8
    I8,
    /// int16
    I16,
    /// int32
    I32,
    /// int64
    I64,
    /// uint8
    U8,
    /// uint16
    U16,
    /// uint32
    U32,
    /// uint64
    U64,
    /// float16
    F16,
    /// float32
    F32,
    /// float64
    F64,
    /// complex64
    C64,
    /// complex128
    C128,
    /// bfloat16
    Bf16,
    /// int4
    I4,
    /// uint4
    U4,
    /// float8_e4m3b11fnuz
    F8E4M3B11Fnuz,
    /// float8_e4m3fn
    F8E4M3Fn,
    /// float8_e4m3fnuz
    F8E4M3Fnuz,
    /// float8_e5m2
    F8E5M2,
    /// float8_e5m2fnuz
    F8E5M2Fnuz,
    /// float0 (the tangent type of integers)
    F0,
    /// float8_e4m3
    F8E4M3,
    /// float8_e3m4
    F8E3M4,
    /// float8_e8m0fnu
    F8E8M0Fnu,
    /// float4_e2m1fn
    F4E2M1Fn,
    /// PRNG key (threefry)
    KeyFry,
    /// PRNG key (rbg)
    KeyRbg,
    /// PRNG key (unsafe rbg)
    KeyUnsafeRbg,
}

impl DType {
    /// The dtype of a schema tag; `None` for a tag this oxla does not know.
    pub fn from_tag(tag: i8) -> Option<DType> {
        use DType::*;
        Some(match tag {
            0 => Bool,
            1 => I8,
            2 => I16,
            3 => I32,
            4 => I64,
            5 => U8,
            6 => U16,
            7 => U32,
            8 => U64,
            9 => F16,
            10 => F32,
            11 => F64,
            12 => C64,
            13 => C128,
            14 => Bf16,
            15 => I4,
            16 => U4,
            17 => F8E4M3B11Fnuz,
            18 => F8E4M3Fn,
            19 => F8E4M3Fnuz,
            20 => F8E5M2,
            21 => F8E5M2Fnuz,
            22 => F0,
            23 => F8E4M3,
            24 => F8E3M4,
            25 => F8E8M0Fnu,
            26 => F4E2M1Fn,
            27 => KeyFry,
            28 => KeyRbg,
            29 => KeyUnsafeRbg,
            _ => return None,
        })
    }

    /// The schema tag of this dtype (the inverse of [`DType::from_tag`]).
    pub fn tag(self) -> i8 {
        use DType::*;
        match self {
            Bool => 0,
            I8 => 1,
            I16 => 2,
            I32 => 3,
            I64 => 4,
            U8 => 5,
            U16 => 6,
            U32 => 7,
            U64 => 8,
            F16 => 9,
            F32 => 10,
            F64 => 11,
            C64 => 12,
            C128 => 13,
            Bf16 => 14,
            I4 => 15,
            U4 => 16,
            F8E4M3B11Fnuz => 17,
            F8E4M3Fn => 18,
            F8E4M3Fnuz => 19,
            F8E5M2 => 20,
            F8E5M2Fnuz => 21,
            F0 => 22,
            F8E4M3 => 23,
            F8E3M4 => 24,
            F8E8M0Fnu => 25,
            F4E2M1Fn => 26,
            KeyFry => 27,
            KeyRbg => 28,
            KeyUnsafeRbg => 29,
        }
    }

    /// NumPy's name, as JAX prints it (`float32`, `bfloat16`).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            F16 => "float16",
            F32 => "float32",
            F64 => "float64",
            C64 => "complex64",
            C128 => "complex128",
            Bf16 => "bfloat16",
            I4 => "int4",
            U4 => "uint4",
            F8E4M3B11Fnuz => "float8_e4m3b11fnuz",
            F8E4M3Fn => "float8_e4m3fn",
            F8E4M3Fnuz => "float8_e4m3fnuz",
            F8E5M2 => "float8_e5m2",
            F8E5M2Fnuz => "float8_e5m2fnuz",
            F0 => "float0",
            F8E4M3 => "float8_e4m3",
            F8E3M4 => "float8_e3m4",
            F8E8M0Fnu => "float8_e8m0fnu",
            F4E2M1Fn => "float4_e2m1fn",
            KeyFry => "key<fry>",
            KeyRbg => "key<rbg>",
            KeyUnsafeRbg => "key<unsafe_rbg>",
        }
    }

    /// The device element type oxla moves this dtype as, if it has one.
    pub fn element_type(self) -> Option<ElementType> {
        use DType::*;
        match self {
            Bool => Some(ElementType::Pred),
            I8 => Some(ElementType::S8),
            I16 => Some(ElementType::S16),
            I32 => Some(ElementType::S32),
            I64 => Some(ElementType::S64),
            U8 => Some(ElementType::U8),
            U16 => Some(ElementType::U16),
            U32 => Some(ElementType::U32),
            U64 => Some(ElementType::U64),
            F16 => Some(ElementType::F16),
            F32 => Some(ElementType::F32),
            F64 => Some(ElementType::F64),
            C64 => Some(ElementType::C64),
            C128 => Some(ElementType::C128),
            Bf16 => Some(ElementType::Bf16),
            I4 | U4 | F8E4M3B11Fnuz | F8E4M3Fn | F8E4M3Fnuz | F8E5M2 | F8E5M2Fnuz | F0 | F8E4M3
            | F8E3M4 | F8E8M0Fnu | F4E2M1Fn | KeyFry | KeyRbg | KeyUnsafeRbg => None,
        }
    }
}

/// One dimension of an abstract value: a size, or a symbolic expression of
/// a shape-polymorphic export (`b`, `2*b + 1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A known size.
    Known(i64),
    /// A symbolic dimension expression.
    Symbolic(String),
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(d) => write!(f, "{d}"),
            Dim::Symbolic(s) => f.write_str(s),
        }
    }
}

/// Where a value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemorySpace {
    /// Not recorded (exports before 11/2025).
    Unspecified,
    /// Device memory.
    Device,
    /// Host memory.
    Host,
    /// Any memory.
    Any,
}

/// The type of one input or output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AbstractValue {
    /// Dimensions.
    pub shape: Vec<Dim>,
    /// Element type.
    pub dtype: DType,
    /// Memory space.
    pub memory_space: MemorySpace,
}

impl AbstractValue {
    /// The dims, if none is symbolic.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.shape
            .iter()
            .map(|d| match d {
                Dim::Known(v) => Some(*v),
                Dim::Symbolic(_) => None,
            })
            .collect()
    }

    /// The symbolic dimension expressions, in order of appearance.
    pub fn symbolic_dims(&self) -> Vec<&str> {
        self.shape
            .iter()
            .filter_map(|d| match d {
                Dim::Symbolic(s) => Some(s.as_str()),
                Dim::Known(_) => None,
            })
            .collect()
    }
}

impl fmt::Display for AbstractValue {
    /// JAX's short form: `float32[3,4]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(Dim::to_string).collect();
        write!(f, "{}[{}]", self.dtype.name(), dims.join(","))
    }
}

/// The structure of a pytree (JAX's `PyTreeDef`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyTreeDef {
    /// An array.
    Leaf,
    /// `None`.
    None,
    /// A tuple.
    Tuple(Vec<PyTreeDef>),
    /// A list.
    List(Vec<PyTreeDef>),
    /// A dict, with its keys in JAX's (sorted) order.
    Dict(Vec<(String, PyTreeDef)>),
    /// A registered custom node (namedtuple, dataclass, ...).
    Custom {
        /// The node's registered name.
        name: String,
        /// Its serialized auxiliary data.
        auxdata: Vec<u8>,
        /// Its children.
        children: Vec<PyTreeDef>,
    },
}

impl PyTreeDef {
    /// Number of leaves.
    pub fn num_leaves(&self) -> usize {
        match self {
            PyTreeDef::Leaf => 1,
            PyTreeDef::None => 0,
            PyTreeDef::Tuple(c) | PyTreeDef::List(c) | PyTreeDef::Custom { children: c, .. } => {
                c.iter().map(PyTreeDef::num_leaves).sum()
            }
            PyTreeDef::Dict(entries) => entries.iter().map(|(_, c)| c.num_leaves()).sum(),
        }
    }

    /// The path of each leaf in JAX's key-path notation (`[0]['w1']`).
    pub fn leaf_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_paths(String::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: String, out: &mut Vec<String>) {
        match self {
            PyTreeDef::Leaf => out.push(prefix),
            PyTreeDef::None => {}
            PyTreeDef::Tuple(c) | PyTreeDef::List(c) | PyTreeDef::Custom { children: c, .. } => {
                for (i, child) in c.iter().enumerate() {
                    child.collect_paths(format!("{prefix}[{i}]"), out);
                }
            }
            PyTreeDef::Dict(entries) => {
                for (key, child) in entries {
                    child.collect_paths(format!("{prefix}[{key:?}]").replace('"', "'"), out);
                }
            }
        }
    }

    /// JAX's `str(treedef)`: `PyTreeDef(((*, *), {}))`.
    pub fn to_jax_string(&self) -> String {
        format!("PyTreeDef({self})")
    }
}

impl fmt::Display for PyTreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |items: &[PyTreeDef]| {
            items
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            PyTreeDef::Leaf => f.write_str("*"),
            PyTreeDef::None => f.write_str("None"),
            PyTreeDef::Tuple(c) if c.len() == 1 => write!(f, "({},)", c[0]),
            PyTreeDef::Tuple(c) => write!(f, "({})", join(c)),
            PyTreeDef::List(c) => write!(f, "[{}]", join(c)),
            PyTreeDef::Dict(entries) => {
                let items: Vec<String> =
                    entries.iter().map(|(k, v)| format!("'{k}': {v}")).collect();
                write!(f, "{{{}}}", items.join(", "))
            }
            PyTreeDef::Custom { name, children, .. } => {
                write!(f, "CustomNode({name}, [{}])", join(children))
            }
        }
    }
}

/// How a mesh axis may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisType {
    /// Not recorded.
    Unspecified,
    /// Sharding decided by the compiler.
    Auto,
    /// Sharding explicit in types.
    Explicit,
    /// Manual (shard_map).
    Manual,
}

/// A device mesh without devices: named axes with sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbstractMesh {
    /// Axis names.
    pub axis_names: Vec<String>,
    /// Axis sizes.
    pub axis_sizes: Vec<u32>,
    /// Axis types.
    pub axis_types: Vec<AxisType>,
    /// The kind of device the mesh was made of, if recorded.
    pub device_kind: Option<String>,
    /// Cores per device, if recorded.
    pub num_cores: Option<u32>,
    /// The platform the mesh was made of, if recorded (v11).
    pub platform: Option<String>,
}

/// A sharding over a mesh: for each array dimension, the mesh axes it is
/// split over (JAX's `NamedSharding` with a `PartitionSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedSharding {
    /// The mesh.
    pub mesh: AbstractMesh,
    /// Per dimension: the mesh axes it is split over (empty: not split).
    pub spec: Vec<Vec<String>>,
    /// Axes over which the value is reduced.
    pub reduced: Vec<String>,
    /// Axes over which the value is not yet reduced.
    pub unreduced: Vec<String>,
    /// The memory kind, if recorded.
    pub memory_kind: Option<String>,
}

impl fmt::Display for NamedSharding {
    /// `P('x', None) over mesh {'x': 2, 'y': 2}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = oxla_core::sharding::spec_text(self.spec.iter().map(|axes| axes.iter()));
        let mesh: Vec<String> = self
            .mesh
            .axis_names
            .iter()
            .zip(&self.mesh.axis_sizes)
            .map(|(n, s)| format!("'{n}': {s}"))
            .collect();
        write!(f, "{spec} over mesh {{{}}}", mesh.join(", "))
    }
}

/// The sharding recorded for an input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharding {
    /// None recorded: the compiler decides.
    Unspecified,
    /// A named sharding over an abstract mesh.
    Named(NamedSharding),
    /// An `OpSharding` proto (exports before 3/2026).
    Hlo(Vec<u8>),
}

impl fmt::Display for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::Unspecified => f.write_str("unspecified"),
            Sharding::Named(n) => write!(f, "{n}"),
            Sharding::Hlo(bytes) => write!(f, "HLO sharding ({} bytes)", bytes.len()),
        }
    }
}

/// A safety check the exporter disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisabledCheck {
    /// The platform check.
    Platform,
    /// The check that a custom call target is stable.
    CustomCall(String),
    /// Shape assertions (unused).
    ShapeAssertions,
}

/// A function exported with `jax.export`, as read from `Exported.serialize()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The `serialization_version` field as stored (JAX writes 3 for
    /// compatibility with old readers even in newer formats).
    pub serialization_version: u16,
    /// The format the file's fields correspond to (9 to 12), inferred from
    /// which fields are present.
    pub format_version: u16,
    /// The function's name.
    pub function_name: String,
    /// The JAX version that exported it (format 12 and later).
    pub jax_version: Option<String>,
    /// Structure of the inputs: `(args, kwargs)`.
    pub in_tree: PyTreeDef,
    /// Type of each input leaf, in order.
    pub in_avals: Vec<AbstractValue>,
    /// Structure of the outputs.
    pub out_tree: PyTreeDef,
    /// Type of each output leaf, in order.
    pub out_avals: Vec<AbstractValue>,
    /// Sharding of each input leaf.
    pub in_shardings: Vec<Sharding>,
    /// Sharding of each output leaf.
    pub out_shardings: Vec<Sharding>,
    /// Number of devices the module was lowered for.
    pub nr_devices: u32,
    /// Platforms the module was lowered for (`cpu`, `cuda`, `rocm`, `tpu`).
    pub platforms: Vec<String>,
    /// Ordered effects (each takes a token in the calling convention).
    pub ordered_effects: Vec<String>,
    /// Unordered effects.
    pub unordered_effects: Vec<String>,
    /// Safety checks the exporter disabled.
    pub disabled_checks: Vec<DisabledCheck>,
    /// The StableHLO module (a portable artifact, MLIR bytecode).
    pub mlir_module: Vec<u8>,
    /// The module's calling convention version.
    pub calling_convention_version: u16,
    /// Which inputs the module keeps (the others are unused and not passed).
    pub module_kept_var_idx: Vec<usize>,
    /// Whether the module uses global constants (the platform index,
    /// dimension variables).
    pub uses_global_constants: bool,
    /// The export of the vector-Jacobian product, if it was serialized.
    pub vjp: Option<Box<Exported>>,
}
