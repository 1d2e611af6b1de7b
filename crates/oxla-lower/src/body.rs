//! Lowering a jaxpr's equations into the current block: the entry
//! function's body, and the body of every primitive that carries a jaxpr
//! (calls, remat, custom rules), which is inlined where it is called.

use melior::ir::Value;
use oxla_core::Jaxpr;

use crate::emit::{Emitter, LowerError, Values};
use crate::rules;

/// Emits `jaxpr`'s equations with its constvars then invars bound to
/// `args`, and returns the values of its outputs.
pub(crate) fn lower_body<'c, 'a>(
    emitter: &mut Emitter<'c, 'a>,
    jaxpr: &Jaxpr,
    args: &[Value<'c, 'a>],
) -> Result<Vec<Value<'c, 'a>>, LowerError> {
    let mut values = Values::new();
    for (v, value) in jaxpr.constvars.iter().chain(&jaxpr.invars).zip(args) {
        values.insert(*v, *value);
    }
    for eqn in &jaxpr.eqns {
        let location = emitter.location(eqn.location);
        let inputs = eqn
            .inputs
            .iter()
            .map(|a| emitter.atom(a, jaxpr, &values, location))
            .collect::<Result<Vec<_>, _>>()?;
        let in_avals: Vec<&oxla_core::Aval> =
            eqn.inputs.iter().map(|a| jaxpr.atom_aval(a)).collect();
        let out_avals: Vec<&oxla_core::Aval> = eqn.outputs.iter().map(|v| jaxpr.aval(*v)).collect();
        let outputs = rules::lower_equation(
            emitter,
            &eqn.primitive,
            &inputs,
            &in_avals,
            &out_avals,
            location,
        )
        .map_err(|e| e.in_primitive(eqn.primitive.name(), eqn.location))?;
        for (v, value) in eqn.outputs.iter().zip(outputs) {
            values.insert(*v, value);
        }
    }
    let unknown = emitter.location(None);
    jaxpr
        .outvars
        .iter()
        .map(|a| emitter.atom(a, jaxpr, &values, unknown))
        .collect()
}
