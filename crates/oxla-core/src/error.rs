//! oxla-core's errors.

use crate::aval::Aval;
use crate::jaxpr::Location;

/// An error found while building IR.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoreError {
    /// A primitive's shape or dtype rule rejected its operands.
    #[error(
        "{}{primitive} of {}: {message}",
        location.map(|l| format!("{l}: ")).unwrap_or_default(),
        inputs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Shape {
        /// The primitive's name.
        primitive: String,
        /// The operand types.
        inputs: Vec<Aval>,
        /// What is wrong.
        message: String,
        /// The user's source line.
        location: Option<Location>,
    },
}
