//! Building a jaxpr equation by equation, checking each with its shape rule.

use crate::aval::Aval;
use crate::error::CoreError;
use crate::jaxpr::{Atom, Equation, Jaxpr, Location, Var};
use crate::primitive::Primitive;
use crate::shape_rules::abstract_eval;

/// A jaxpr under construction (what the staging interpreter writes into).
#[derive(Debug, Default)]
pub struct JaxprBuilder {
    jaxpr: Jaxpr,
}

impl JaxprBuilder {
    /// An empty jaxpr.
    pub fn new() -> Self {
        Self::default()
    }

    fn new_var(&mut self, aval: Aval) -> Var {
        let v = Var(self.jaxpr.avals.len() as u32);
        self.jaxpr.avals.push(aval);
        v
    }

    /// Adds a parameter.
    pub fn add_invar(&mut self, aval: Aval) -> Var {
        let v = self.new_var(aval);
        self.jaxpr.invars.push(v);
        v
    }

    /// Adds a closed-over constant.
    pub fn add_constvar(&mut self, aval: Aval) -> Var {
        let v = self.new_var(aval);
        self.jaxpr.constvars.push(v);
        v
    }

    /// The aval of an atom of this jaxpr.
    pub fn aval<'a>(&'a self, atom: &'a Atom) -> &'a Aval {
        self.jaxpr.atom_aval(atom)
    }

    /// Checks `primitive` on `inputs` with its shape rule and appends the
    /// equation; returns its result variables.
    pub fn add_equation(
        &mut self,
        primitive: Primitive,
        inputs: Vec<Atom>,
        location: Option<Location>,
    ) -> Result<Vec<Var>, CoreError> {
        let in_avals: Vec<&Aval> = inputs.iter().map(|a| self.jaxpr.atom_aval(a)).collect();
        let out_avals = abstract_eval(&primitive, &in_avals).map_err(|error| CoreError::Shape {
            primitive: primitive.name().to_string(),
            inputs: in_avals.iter().map(|a| (*a).clone()).collect(),
            message: error.to_string(),
            location,
        })?;
        let outputs: Vec<Var> = out_avals.into_iter().map(|a| self.new_var(a)).collect();
        self.jaxpr.eqns.push(Equation {
            primitive,
            inputs,
            outputs: outputs.clone(),
            location,
        });
        Ok(outputs)
    }

    /// The finished jaxpr returning `outvars`.
    pub fn finish(mut self, outvars: Vec<Atom>) -> Jaxpr {
        self.jaxpr.outvars = outvars;
        self.jaxpr
    }
}
