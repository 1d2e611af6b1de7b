//! Building generic StableHLO operations into a block.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use melior::Context;
use melior::ir::attribute::Attribute;
use melior::ir::operation::OperationBuilder;
use melior::ir::{Block, BlockLike, Identifier, Location, Region, RegionLike, Type, Value};
use oxla_core::{Atom, Aval, DType, ExportedFunction, Jaxpr, Scalar, Var};

use crate::attrs;

/// Why a jaxpr could not be lowered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LowerError {
    /// A primitive's lowering failed.
    #[error("{}lowering {primitive}: {message}", location.map(|l| format!("{l}: ")).unwrap_or_default())]
    Primitive {
        /// The primitive's name.
        primitive: String,
        /// What went wrong.
        message: String,
        /// The user's source line.
        location: Option<oxla_core::Location>,
    },
    /// MLIR refused something oxla built.
    #[error("MLIR: {0}")]
    Mlir(String),
    /// The program's shardings do not fit together.
    #[error("{0}")]
    Sharding(String),
}

impl LowerError {
    /// Attributes the error to a primitive at a source line.
    pub(crate) fn in_primitive(
        self,
        primitive: &str,
        location: Option<oxla_core::Location>,
    ) -> Self {
        match self {
            LowerError::Mlir(message) => LowerError::Primitive {
                primitive: primitive.to_string(),
                message,
                location,
            },
            other => other,
        }
    }
}

/// A melior error as a [`LowerError`].
pub(crate) fn melior_error(e: melior::Error) -> LowerError {
    LowerError::Mlir(e.to_string())
}

/// The SSA value of each jaxpr variable.
pub(crate) type Values<'c, 'a> = HashMap<Var, Value<'c, 'a>>;

/// The MLIR tensor type of an aval.
pub(crate) fn tensor_type<'c>(context: &'c Context, aval: &Aval) -> Result<Type<'c>, LowerError> {
    let text = aval.mlir_type();
    Type::parse(context, &text).ok_or_else(|| LowerError::Mlir(format!("cannot parse type {text}")))
}

/// The type of the value that orders a program's effects: each effectful
/// op takes the previous one's and makes the next (a region op carrying
/// effects takes and returns it too), so XLA keeps them in program order.
pub(crate) fn effect_order_aval() -> Aval {
    Aval::new(DType::U8, &[])
}

/// Appends operations to one block.
pub(crate) struct Emitter<'c, 'a> {
    context: &'c Context,
    block: &'a Block<'c>,
    /// The exported functions the program calls, shared by the emitters of
    /// all its blocks; merged into the module once lowering is done.
    exported: Rc<RefCell<Vec<ExportedFunction>>>,
    /// The last order value of this block's effectful host callbacks,
    /// which the next one takes, so XLA keeps them in program order.
    effect_chain: Option<Value<'c, 'a>>,
    /// The program's meshes, in the order of their symbols.
    meshes: Rc<[oxla_core::MeshDesc]>,
    /// The platform the program is lowered for.
    platform: crate::Platform,
}

impl<'c, 'a> Emitter<'c, 'a> {
    pub(crate) fn new(
        context: &'c Context,
        block: &'a Block<'c>,
        meshes: &[oxla_core::MeshDesc],
        platform: crate::Platform,
    ) -> Self {
        Self {
            context,
            block,
            exported: Rc::default(),
            effect_chain: None,
            meshes: meshes.into(),
            platform,
        }
    }

    /// The platform the program is lowered for.
    pub(crate) fn platform(&self) -> crate::Platform {
        self.platform
    }

    /// The symbol the program declares `mesh` under.
    pub(crate) fn mesh_symbol(&self, mesh: &oxla_core::MeshDesc) -> Result<String, LowerError> {
        crate::symbol_of(&self.meshes, mesh)
    }

    /// An emitter for a nested block of the same program.
    fn nested<'b>(&self, block: &'b Block<'c>) -> Emitter<'c, 'b> {
        Emitter {
            context: self.context,
            block,
            exported: self.exported.clone(),
            effect_chain: None,
            meshes: self.meshes.clone(),
            platform: self.platform,
        }
    }

    /// Notes that the program calls `function` (once per function).
    pub(crate) fn call_exported(&mut self, function: &ExportedFunction) {
        let mut exported = self.exported.borrow_mut();
        if !exported.contains(function) {
            exported.push(function.clone());
        }
    }

    /// The order value the next effectful op of this block takes: the last
    /// one's, or a new zero before the block's first.
    pub(crate) fn effect_order(
        &mut self,
        location: Location<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        match self.effect_chain {
            Some(value) => Ok(value),
            None => {
                let first = self.constant(&effect_order_aval(), Scalar::Int(0), location)?;
                self.effect_chain = Some(first);
                Ok(first)
            }
        }
    }

    /// Records the order value an effectful op produced.
    pub(crate) fn set_effect_chain(&mut self, value: Value<'c, 'a>) {
        self.effect_chain = Some(value);
    }

    /// The exported functions the program calls.
    pub(crate) fn exported_functions(&self) -> Vec<ExportedFunction> {
        self.exported.borrow().clone()
    }

    /// The MLIR location of a source line.
    pub(crate) fn location(&self, location: Option<oxla_core::Location>) -> Location<'c> {
        match location {
            Some(l) => Location::new(self.context, l.file, l.line as usize, l.column as usize),
            None => Location::unknown(self.context),
        }
    }

    fn attributes(
        &self,
        attrs: &[(&str, String)],
    ) -> Result<Vec<(Identifier<'c>, Attribute<'c>)>, LowerError> {
        attrs
            .iter()
            .map(|(name, text)| {
                let attribute = Attribute::parse(self.context, text).ok_or_else(|| {
                    LowerError::Mlir(format!("cannot parse attribute {name} = {text}"))
                })?;
                Ok((Identifier::new(self.context, name), attribute))
            })
            .collect()
    }

    /// Appends `name(operands) {attrs} : results` and returns its results.
    pub(crate) fn op(
        &mut self,
        name: &str,
        operands: &[Value<'c, 'a>],
        results: &[&Aval],
        attrs: &[(&str, String)],
        location: Location<'c>,
    ) -> Result<Vec<Value<'c, 'a>>, LowerError> {
        self.op_with_regions(name, operands, results, attrs, Vec::new(), location)
    }

    /// [`op`](Self::op) with regions (reducers, comparators).
    pub(crate) fn op_with_regions(
        &mut self,
        name: &str,
        operands: &[Value<'c, 'a>],
        results: &[&Aval],
        attrs: &[(&str, String)],
        regions: Vec<Region<'c>>,
        location: Location<'c>,
    ) -> Result<Vec<Value<'c, 'a>>, LowerError> {
        let result_types = results
            .iter()
            .map(|a| tensor_type(self.context, a))
            .collect::<Result<Vec<_>, _>>()?;
        let operation = OperationBuilder::new(name, location)
            .add_operands(operands)
            .add_results(&result_types)
            .add_attributes(&self.attributes(attrs)?)
            .add_regions_vec(regions)
            .build()
            .map_err(melior_error)?;
        let appended = self.block.append_operation(operation);
        (0..results.len())
            .map(|i| appended.result(i).map(Into::into).map_err(melior_error))
            .collect()
    }

    /// A constant splat of `value` with `aval`'s type.
    pub(crate) fn constant(
        &mut self,
        aval: &Aval,
        value: Scalar,
        location: Location<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        let dense = attrs::dense_splat(aval, value);
        Ok(self.op(
            "stablehlo.constant",
            &[],
            &[aval],
            &[("value", dense)],
            location,
        )?[0])
    }

    /// A constant holding `bytes` (little-endian, row-major) of `aval`'s
    /// type, written exactly as hex; booleans (one byte each) are written
    /// as `ui8` and converted, since MLIR packs `i1` data in bits.
    pub(crate) fn embedded_constant(
        &mut self,
        aval: &Aval,
        bytes: &[u8],
        location: Location<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        let expected = aval.size() as usize * aval.dtype.byte_size();
        if bytes.len() != expected {
            return Err(LowerError::Mlir(format!(
                "a constant of type {aval} needs {expected} bytes, not {}",
                bytes.len()
            )));
        }
        let stored = match aval.dtype {
            DType::Bool => aval.with_dtype(DType::U8),
            _ => aval.clone(),
        };
        let data = if bytes.is_empty() {
            String::new()
        } else {
            let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
            format!("\"0x{hex}\"")
        };
        let value = format!("dense<{data}> : {}", stored.mlir_type());
        let constant = self.op(
            "stablehlo.constant",
            &[],
            &[&stored],
            &[("value", value)],
            location,
        )?[0];
        match aval.dtype {
            DType::Bool => {
                Ok(self.op("stablehlo.convert", &[constant], &[aval], &[], location)?[0])
            }
            _ => Ok(constant),
        }
    }

    /// The value of an operand: a variable's, or a new constant for a literal.
    pub(crate) fn atom(
        &mut self,
        atom: &Atom,
        jaxpr: &Jaxpr,
        values: &Values<'c, 'a>,
        location: Location<'c>,
    ) -> Result<Value<'c, 'a>, LowerError> {
        match atom {
            Atom::Var(v) => values.get(v).copied().ok_or_else(|| {
                LowerError::Mlir(format!("variable {} used before it is defined", v.0))
            }),
            Atom::Literal(l) => {
                let _ = jaxpr;
                self.constant(&l.aval, l.value, location)
            }
        }
    }

    /// A region with one block whose arguments have `args` types; `body`
    /// emits its ops and returns what `stablehlo.return` returns.
    pub(crate) fn region(
        &self,
        args: &[&Aval],
        location: Location<'c>,
        body: impl for<'b> FnOnce(
            &mut Emitter<'c, 'b>,
            &[Value<'c, 'b>],
        ) -> Result<Vec<Value<'c, 'b>>, LowerError>,
    ) -> Result<Region<'c>, LowerError> {
        self.region_returning(args, "stablehlo.return", location, body)
    }

    /// [`region`](Self::region) ending with the op `terminator` (`sdy.return`
    /// in a manual computation).
    pub(crate) fn region_returning(
        &self,
        args: &[&Aval],
        terminator: &str,
        location: Location<'c>,
        body: impl for<'b> FnOnce(
            &mut Emitter<'c, 'b>,
            &[Value<'c, 'b>],
        ) -> Result<Vec<Value<'c, 'b>>, LowerError>,
    ) -> Result<Region<'c>, LowerError> {
        let types = args
            .iter()
            .map(|a| Ok((tensor_type(self.context, a)?, location)))
            .collect::<Result<Vec<_>, LowerError>>()?;
        let block = Block::new(&types);
        {
            let mut inner = self.nested(&block);
            let values = (0..args.len())
                .map(|i| block.argument(i).map(Into::into).map_err(melior_error))
                .collect::<Result<Vec<_>, _>>()?;
            let results = body(&mut inner, &values)?;
            inner.op(terminator, &results, &[], &[], location)?;
        }
        let region = Region::new();
        region.append_block(block);
        Ok(region)
    }

    /// A region of two `scalar` arguments returning `op(lhs, rhs)`: the body
    /// of a reduction.
    pub(crate) fn binary_region(
        &self,
        op: &str,
        scalar: &Aval,
        location: Location<'c>,
    ) -> Result<Region<'c>, LowerError> {
        self.region(&[scalar, scalar], location, |e, args| {
            e.op(op, args, &[scalar], &[], location)
        })
    }
}
