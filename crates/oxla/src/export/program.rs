//! The flat programs an export holds: the function itself, and its vjp
//! derived from it (and the vjp's vjp, for higher orders), each lowered to
//! a self-contained StableHLO module that follows JAX's calling convention.

use oxla_core::{Aval, DType, Jaxpr, Location, ShardingDesc};
use oxla_export::{AbstractValue, Dim, MemorySpace};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::transform::eval::{eval_jaxpr, trace_flat};
use crate::transform::linearize::linearize_flat;
use crate::transform::support::{Tangent, has_tangent, instantiate, zeros};

/// A function of flat leaves: its jaxpr and the constants it closed over,
/// with inputs and outputs in the export's (JAX's) leaf order.
pub(crate) struct FlatProgram {
    pub(crate) jaxpr: Jaxpr,
    pub(crate) consts: Vec<Array>,
}

/// One value of an export's signature: its type, and whether it is JAX's
/// `float0` (the cotangent of an integer, which holds no data: not passed
/// to the module as an input, returned as booleans).
#[derive(Clone)]
pub(crate) struct Slot {
    pub(crate) aval: Aval,
    pub(crate) float0: bool,
}

impl Slot {
    fn value(aval: &Aval) -> Slot {
        Slot {
            aval: aval.clone(),
            float0: false,
        }
    }

    /// The cotangent slot of a value in `slot`: `float0` unless the value
    /// is a float.
    fn cotangent(slot: &Slot) -> Slot {
        Slot {
            aval: slot.aval.clone(),
            float0: slot.float0 || !has_tangent(slot.aval.dtype),
        }
    }

    /// The type JAX's export records.
    pub(crate) fn abstract_value(&self) -> AbstractValue {
        AbstractValue {
            shape: self.aval.shape.iter().map(|&d| Dim::Known(d)).collect(),
            dtype: if self.float0 {
                oxla_export::DType::F0
            } else {
                export_dtype(self.aval.dtype)
            },
            memory_space: MemorySpace::Device,
        }
    }
}

/// The export schema's dtype of an oxla dtype.
pub(super) fn export_dtype(dtype: DType) -> oxla_export::DType {
    use oxla_export::DType as E;
    match dtype {
        DType::Bool => E::Bool,
        DType::I8 => E::I8,
        DType::I16 => E::I16,
        DType::I32 => E::I32,
        DType::I64 => E::I64,
        DType::U8 => E::U8,
        DType::U16 => E::U16,
        DType::U32 => E::U32,
        DType::U64 => E::U64,
        DType::F16 => E::F16,
        DType::BF16 => E::Bf16,
        DType::F32 => E::F32,
        DType::F64 => E::F64,
        DType::C64 => E::C64,
        DType::C128 => E::C128,
    }
}

impl FlatProgram {
    /// The traced `jaxpr` with its inputs and outputs reordered: input `i`
    /// of the result is input `in_order[i]` of `jaxpr` (outputs alike).
    pub(crate) fn reordered(
        mut jaxpr: Jaxpr,
        consts: Vec<Array>,
        in_order: &[usize],
        out_order: &[usize],
    ) -> FlatProgram {
        jaxpr.invars = in_order.iter().map(|&i| jaxpr.invars[i]).collect();
        jaxpr.outvars = out_order
            .iter()
            .map(|&i| jaxpr.outvars[i].clone())
            .collect();
        FlatProgram { jaxpr, consts }
    }

    /// The input slots (all plain values).
    pub(crate) fn in_slots(&self) -> Vec<Slot> {
        self.jaxpr
            .invars
            .iter()
            .map(|v| Slot::value(self.jaxpr.aval(*v)))
            .collect()
    }

    /// The output slots (all plain values).
    pub(crate) fn out_slots(&self) -> Vec<Slot> {
        self.jaxpr
            .outvars
            .iter()
            .map(|a| Slot::value(self.jaxpr.atom_aval(a)))
            .collect()
    }

    /// The vjp of this program as JAX exports it: inputs are the primal
    /// inputs then one cotangent per output (`float0` for integer outputs,
    /// which the module does not take), outputs one cotangent per input
    /// (`float0` booleans for integer inputs). `in_slots` and `out_slots`
    /// are this program's signature, `float0` slots included (a vjp's own
    /// vjp has them), so any order can be derived.
    pub(crate) fn vjp(
        &self,
        in_slots: &[Slot],
        out_slots: &[Slot],
        location: Location,
    ) -> Result<(FlatProgram, Vec<Slot>, Vec<Slot>)> {
        let ct_slots: Vec<Slot> = out_slots.iter().map(Slot::cotangent).collect();
        let vjp_in: Vec<Slot> = in_slots.iter().cloned().chain(ct_slots.clone()).collect();
        let vjp_out: Vec<Slot> = in_slots.iter().map(Slot::cotangent).collect();
        let module_inputs: Vec<Aval> = vjp_in
            .iter()
            .filter(|s| !s.float0)
            .map(|s| s.aval.clone())
            .collect();
        let primal_count = in_slots.iter().filter(|s| !s.float0).count();
        // A dynamic trace, as jit's: ops on constants alone (the zeros of a
        // rule) are staged into the program, not computed here and embedded.
        let (jaxpr, consts) = trace_flat(&module_inputs, true, location, |args| {
            let (primals, cts) = args.split_at(primal_count);
            let differentiable = vec![true; primal_count];
            let (_, linear) = linearize_flat(
                |p| eval_jaxpr(&self.jaxpr, &self.consts, p),
                primals,
                &differentiable,
                location,
            )?;
            let mut given = cts.iter();
            let out_cts: Vec<Tangent> = ct_slots
                .iter()
                .map(|s| {
                    if s.float0 {
                        None
                    } else {
                        given.next().cloned()
                    }
                })
                .collect();
            let mut in_cts = linear.transpose(&out_cts)?.into_iter();
            Ok(in_slots
                .iter()
                .map(|s| {
                    let ct = if s.float0 {
                        None
                    } else {
                        in_cts.next().flatten()
                    };
                    if Slot::cotangent(s).float0 {
                        zeros(&s.aval.with_dtype(DType::Bool))
                    } else {
                        instantiate(&ct, &s.aval)
                    }
                })
                .collect())
        })?;
        Ok((FlatProgram { jaxpr, consts }, vjp_in, vjp_out))
    }

    /// The export's module, a StableHLO portable artifact (VHLO bytecode,
    /// as JAX writes): constants embedded, a leading unused platform-index
    /// parameter when the export names several platforms, parameter and
    /// result shardings on the mesh, and oxla's version as a module
    /// attribute.
    pub(crate) fn module(
        &self,
        platform: oxla_lower::Platform,
        with_platform_index: bool,
        arg_shardings: &[Option<ShardingDesc>],
        result_shardings: &[Option<ShardingDesc>],
        location: Location,
    ) -> Result<Vec<u8>> {
        let text = self.lower(
            platform,
            with_platform_index,
            arg_shardings,
            result_shardings,
        )?;
        let (artifact, _version) =
            oxla_export::stablehlo_text_to_artifact(&text).map_err(|e| Error::Usage {
                function: "export",
                message: format!("the module cannot be written as a portable artifact: {e}"),
                location,
            })?;
        Ok(artifact)
    }

    /// The module's StableHLO text in MLIR's generic form.
    fn lower(
        &self,
        platform: oxla_lower::Platform,
        with_platform_index: bool,
        arg_shardings: &[Option<ShardingDesc>],
        result_shardings: &[Option<ShardingDesc>],
    ) -> Result<String> {
        let mut jaxpr = self.jaxpr.clone();
        let mut arg_shardings = arg_shardings.to_vec();
        if with_platform_index {
            let index = oxla_core::Var(jaxpr.avals.len() as u32);
            jaxpr.avals.push(Aval::new(DType::I32, &[]));
            jaxpr.invars.insert(0, index);
            if !arg_shardings.is_empty() {
                arg_shardings.insert(0, None);
            }
        }
        let constants = self
            .consts
            .iter()
            .map(|c| c.to_host().map(|h| h.bytes))
            .collect::<Result<Vec<_>>>()?;
        let attributes = [(
            oxla_export::OXLA_VERSION_ATTRIBUTE.to_string(),
            format!("\"{}\"", env!("CARGO_PKG_VERSION")),
        )];
        Ok(oxla_lower::lower(
            &jaxpr,
            &oxla_lower::Lowering {
                platform,
                arg_shardings: &arg_shardings,
                result_shardings,
                embedded_constants: Some(&constants),
                module_attributes: &attributes,
                generic_form: true,
                ..oxla_lower::Lowering::default()
            },
        )?)
    }
}
