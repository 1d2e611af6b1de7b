//! The closed set of primitives, in families, each op with its parameters.
//!
//! [`Primitive`] is an enum of families; each family module holds its `Op`
//! enum, the ops' names and printed parameters, and their shape rule. The
//! same family has a file of the same name among the transformation rules
//! (`oxla::transform::rules`) and the lowering rules (oxla-lower's `rules`),
//! and every match over a family's ops is exhaustive: adding an op makes
//! the compiler list every rule still missing.

use std::fmt;

use crate::subjaxpr::SubJaxpr;

pub mod call;
pub mod collective;
pub mod contract;
pub mod control;
pub mod elementwise;
pub mod fft;
pub mod host;
pub mod index;
pub mod linalg;
pub mod marker;
mod print;
pub mod reduce;
pub mod rng;
pub mod shape;
pub mod sharding;

pub use call::RematPolicy;
pub use contract::{ConvDimensionNumbers, Precision};
pub use elementwise::{BinaryOp, Comparison, TypeClass, UnaryOp};
pub use fft::FftType;
pub use index::{GatherDimensionNumbers, GatherMode, ScatterDimensionNumbers, ScatterOp};
pub use reduce::{ArgOp, CumulativeOp, ReduceOp, WindowOp};

/// A primitive operation with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// An elementwise primitive.
    Elementwise(elementwise::Op),
    /// A shape primitive.
    Shape(shape::Op),
    /// An indexing primitive.
    Index(index::Op),
    /// A reduction.
    Reduce(reduce::Op),
    /// A contraction.
    Contract(contract::Op),
    /// A call primitive.
    Call(call::Op),
    /// A control-flow primitive.
    Control(control::Op),
    /// A collective (or `pvary`).
    Collective(collective::Op),
    /// A sharding primitive.
    Sharding(sharding::Op),
    /// A host primitive.
    Host(host::Op),
    /// A marker primitive.
    Marker(marker::Op),
    /// A Fourier transform.
    Fft(fft::Op),
    /// A linear-algebra primitive.
    Linalg(linalg::Op),
    /// One of XLA's random number generators.
    Rng(rng::Op),
}

impl Primitive {
    /// Whether an equation of this primitive is an effect the program must
    /// keep even when nothing reads its results: an effectful host callback
    /// (`io_callback`, `debug::print`), or a primitive whose jaxprs (a
    /// loop's body, a branch) hold one.
    pub fn is_effectful(&self) -> bool {
        if let Primitive::Host(host::Op::HostCallback { callback, .. }) = self {
            return callback.effectful;
        }
        self.nested_jaxprs()
            .iter()
            .any(|j| j.jaxpr().is_effectful())
    }

    /// The jaxprs this primitive carries (a call's body, a loop's cond and
    /// body, every branch, a reducer), in the order the printer shows them.
    pub fn nested_jaxprs(&self) -> Vec<&SubJaxpr> {
        match self {
            Primitive::Call(op) => op.nested_jaxprs(),
            Primitive::Control(op) => op.nested_jaxprs(),
            Primitive::Sharding(op) => op.nested_jaxprs(),
            Primitive::Reduce(op) => op.nested_jaxprs(),
            Primitive::Elementwise(_)
            | Primitive::Shape(_)
            | Primitive::Index(_)
            | Primitive::Contract(_)
            | Primitive::Collective(_)
            | Primitive::Host(_)
            | Primitive::Marker(_)
            | Primitive::Fft(_)
            | Primitive::Linalg(_)
            | Primitive::Rng(_) => Vec::new(),
        }
    }

    /// The jaxprs this primitive carries, to be replaced in place by a pass
    /// that rewrites nested bodies (same order as [`Primitive::nested_jaxprs`]).
    pub fn nested_jaxprs_mut(&mut self) -> Vec<&mut SubJaxpr> {
        match self {
            Primitive::Call(op) => op.nested_jaxprs_mut(),
            Primitive::Control(op) => op.nested_jaxprs_mut(),
            Primitive::Sharding(op) => op.nested_jaxprs_mut(),
            Primitive::Reduce(op) => op.nested_jaxprs_mut(),
            Primitive::Elementwise(_)
            | Primitive::Shape(_)
            | Primitive::Index(_)
            | Primitive::Contract(_)
            | Primitive::Collective(_)
            | Primitive::Host(_)
            | Primitive::Marker(_)
            | Primitive::Fft(_)
            | Primitive::Linalg(_)
            | Primitive::Rng(_) => Vec::new(),
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Elementwise(op) => op.name(),
            Primitive::Shape(op) => op.name(),
            Primitive::Index(op) => op.name(),
            Primitive::Reduce(op) => op.name(),
            Primitive::Contract(op) => op.name(),
            Primitive::Call(op) => op.name(),
            Primitive::Control(op) => op.name(),
            Primitive::Collective(op) => op.name(),
            Primitive::Sharding(op) => op.name(),
            Primitive::Host(op) => op.name(),
            Primitive::Marker(op) => op.name(),
            Primitive::Fft(op) => op.name(),
            Primitive::Linalg(op) => op.name(),
            Primitive::Rng(op) => op.name(),
        }
    }

    /// The jaxpr a call-like primitive carries (a call, checkpoint or
    /// function with custom rules).
    pub fn sub_jaxpr(&self) -> Option<&SubJaxpr> {
        match self {
            Primitive::Call(op) => op.body(),
            Primitive::Elementwise(_)
            | Primitive::Shape(_)
            | Primitive::Index(_)
            | Primitive::Reduce(_)
            | Primitive::Contract(_)
            | Primitive::Control(_)
            | Primitive::Collective(_)
            | Primitive::Sharding(_)
            | Primitive::Host(_)
            | Primitive::Marker(_)
            | Primitive::Fft(_)
            | Primitive::Linalg(_)
            | Primitive::Rng(_) => None,
        }
    }

    /// The named axes a collective runs over (`None` for other primitives).
    pub fn axis_group(&self) -> Option<&crate::sharding::AxisGroup> {
        match self {
            Primitive::Collective(op) => Some(op.group()),
            Primitive::Elementwise(_)
            | Primitive::Shape(_)
            | Primitive::Index(_)
            | Primitive::Reduce(_)
            | Primitive::Contract(_)
            | Primitive::Call(_)
            | Primitive::Control(_)
            | Primitive::Sharding(_)
            | Primitive::Host(_)
            | Primitive::Marker(_)
            | Primitive::Fft(_)
            | Primitive::Linalg(_)
            | Primitive::Rng(_) => None,
        }
    }

    /// The parameters as jaxprs print them (`[axes=(0,)]`), empty if none.
    pub fn params_string(&self) -> String {
        let params = self.params(0, &mut |j, _| indent(&j.to_string()));
        if params.is_empty() {
            String::new()
        } else {
            format!("[{}]", params.join(" "))
        }
    }

    /// Whether the primitive carries jaxprs (printed on lines of their own).
    pub fn has_nested_jaxprs(&self) -> bool {
        !self.nested_jaxprs().is_empty()
    }

    /// The parameters as jaxprs print them (`axes=(0,)`), nested jaxprs
    /// formatted by `nested(jaxpr, column)`, `column` being where the
    /// parameter starts (`pad`, or deeper inside a list of branches).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Primitive::Elementwise(op) => op.params(pad, nested),
            Primitive::Shape(op) => op.params(pad, nested),
            Primitive::Index(op) => op.params(pad, nested),
            Primitive::Reduce(op) => op.params(pad, nested),
            Primitive::Contract(op) => op.params(pad, nested),
            Primitive::Call(op) => op.params(pad, nested),
            Primitive::Control(op) => op.params(pad, nested),
            Primitive::Collective(op) => op.params(pad, nested),
            Primitive::Sharding(op) => op.params(pad, nested),
            Primitive::Host(op) => op.params(pad, nested),
            Primitive::Marker(op) => op.params(pad, nested),
            Primitive::Fft(op) => op.params(pad, nested),
            Primitive::Linalg(op) => op.params(pad, nested),
            Primitive::Rng(op) => op.params(pad, nested),
        }
    }
}

/// A nested jaxpr's text indented under its equation.
fn indent(text: &str) -> String {
    text.replace('\n', "\n    ")
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.name(), self.params_string())
    }
}
