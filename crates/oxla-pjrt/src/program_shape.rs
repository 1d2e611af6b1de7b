//! The entry signature of a compiled program, read from the optimized
//! `HloModuleProto` the plugin returns (the C API has no call for parameter
//! types, so this is how oxla learns what an executable takes).

use std::fmt;

use prost::Message;

use crate::element_type::ElementType;
use crate::element_type::ElementTypeTags;
use crate::error::{Error, Result};
use crate::proto;
use crate::sharding::HloSharding;

/// The type of one parameter or result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A dense array.
    Array {
        /// Element type.
        element_type: ElementType,
        /// Dimensions.
        dims: Vec<i64>,
    },
    /// A tuple of shapes.
    Tuple(Vec<Shape>),
    /// A token (ordering of side effects).
    Token,
    /// An element type oxla cannot hold on the host (fp8, int4, opaque).
    Unsupported(String),
}

impl Shape {
    fn from_proto(p: &proto::ShapeProto) -> Shape {
        use proto::PrimitiveType as P;
        let primitive = P::try_from(p.element_type).ok();
        match primitive {
            Some(P::Tuple) => Shape::Tuple(p.tuple_shapes.iter().map(Shape::from_proto).collect()),
            Some(P::Token) => Shape::Token,
            Some(prim) => match ElementType::from_primitive_type(prim) {
                Some(element_type) => Shape::Array {
                    element_type,
                    dims: p.dimensions.clone(),
                },
                None => Shape::Unsupported(prim.as_str_name().to_ascii_lowercase()),
            },
            None => Shape::Unsupported(format!("primitive type {}", p.element_type)),
        }
    }

    /// The array's element type and dims, if this is an array.
    pub fn as_array(&self) -> Option<(ElementType, &[i64])> {
        match self {
            Shape::Array { element_type, dims } => Some((*element_type, dims)),
            Shape::Tuple(_) | Shape::Token | Shape::Unsupported(_) => None,
        }
    }
}

impl fmt::Display for Shape {
    /// JAX's notation: `f32[2,3]`, `(f32[], i32[4])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array { element_type, dims } => {
                let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
                write!(f, "{element_type}[{}]", dims.join(","))
            }
            Shape::Tuple(items) => {
                let items: Vec<String> = items.iter().map(Shape::to_string).collect();
                write!(f, "({})", items.join(", "))
            }
            Shape::Token => f.write_str("token"),
            Shape::Unsupported(name) => f.write_str(name),
        }
    }
}

/// Parameters and result of a program's entry computation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramShape {
    /// One shape per parameter, in order (per partition for SPMD programs).
    pub parameters: Vec<Shape>,
    /// The result (a tuple when the program returns several values).
    pub result: Shape,
    /// For SPMD-partitioned programs: how each parameter is split over the
    /// partitions.
    pub parameter_shardings: Option<Vec<HloSharding>>,
    /// For SPMD-partitioned programs: how each output is split.
    pub output_shardings: Option<Vec<HloSharding>>,
}

impl ProgramShape {
    /// Reads the entry signature of an optimized program: a serialized
    /// `HloModuleProto` (format "hlo") or `HloModuleProtoWithConfig`
    /// (format "hlo_with_config").
    pub fn from_optimized_program(format: &str, bytes: &[u8]) -> Result<ProgramShape> {
        let decode_error = |e: prost::DecodeError| {
            Error::Protocol(format!("the optimized program is not {format}: {e}"))
        };
        let module = match format {
            "hlo" => proto::HloModuleProto::decode(bytes).map_err(decode_error)?,
            "hlo_with_config" => proto::HloModuleProtoWithConfig::decode(bytes)
                .map_err(decode_error)?
                .hlo_module
                .ok_or_else(|| Error::Protocol("the optimized program has no module".into()))?,
            other => {
                return Err(Error::Protocol(format!(
                    "the optimized program has format {other:?}, not hlo or hlo_with_config"
                )));
            }
        };
        let entry_shape = module
            .computations
            .iter()
            .find(|c| {
                c.id == module.entry_computation_id || c.name == module.entry_computation_name
            })
            .and_then(|c| c.program_shape.as_ref())
            .or(module.host_program_shape.as_ref())
            .ok_or_else(|| {
                Error::Protocol("the optimized program has no entry signature".into())
            })?;
        let parameter_shardings = if module.spmd_parameters_shardings.is_empty() {
            None
        } else {
            Some(
                module
                    .spmd_parameters_shardings
                    .iter()
                    .map(HloSharding::from_proto)
                    .collect::<Result<Vec<_>>>()?,
            )
        };
        let output_shardings = module
            .spmd_output_sharding
            .as_ref()
            .map(HloSharding::from_proto_leaves)
            .transpose()?;
        Ok(ProgramShape {
            parameter_shardings,
            output_shardings,
            parameters: entry_shape
                .parameters
                .iter()
                .map(Shape::from_proto)
                .collect(),
            result: entry_shape
                .result
                .as_ref()
                .map_or(Shape::Tuple(Vec::new()), Shape::from_proto),
        })
    }
}
