//! Specializing a shape-polymorphic export to concrete input shapes
//! ([`Exported::refine`]), as JAX does before it compiles one: the
//! dimension variables take the inputs' sizes, the export's shape
//! constraints are checked, and every shape in the module becomes static.

use crate::error::{ExportError, Result};
use crate::model::{AbstractValue, Dim, Exported};
use crate::producer::ModuleForm;

impl Exported {
    /// Whether an input or output has a symbolic dimension (`b`, `2*b`).
    pub fn is_shape_polymorphic(&self) -> bool {
        self.in_avals
            .iter()
            .chain(&self.out_avals)
            .any(|a| !a.symbolic_dims().is_empty())
    }

    /// This export specialized to inputs of `input_dims` (one list per
    /// input leaf, in order), as JAX's `refine_polymorphic_shapes` does
    /// before compiling: the module's dimension variables take the inputs'
    /// sizes, its shape constraints are checked (a violated one is an error
    /// with JAX's message, naming the dimension variable), and its shapes
    /// become static. The result's inputs and outputs have concrete dims;
    /// its vjp, if any, stays polymorphic (it is refined when called). An
    /// export without symbolic dims comes back unchanged when the dims are
    /// its own.
    pub fn refine(&self, input_dims: &[Vec<i64>]) -> Result<Exported> {
        let paths = self.in_tree.leaf_paths();
        if input_dims.len() != self.in_avals.len() {
            return Err(ExportError::BadInput(format!(
                "{} takes {} inputs, {} shapes given",
                self.function_name,
                self.in_avals.len(),
                input_dims.len()
            )));
        }
        for (i, (dims, aval)) in input_dims.iter().zip(&self.in_avals).enumerate() {
            let fits = dims.len() == aval.shape.len()
                && dims.iter().zip(&aval.shape).all(|(&d, want)| match want {
                    Dim::Known(w) => d == *w,
                    Dim::Symbolic(_) => d >= 0,
                });
            if !fits {
                let shown: Vec<String> = dims.iter().map(i64::to_string).collect();
                return Err(ExportError::BadInput(format!(
                    "input {i} {} has dims [{}], but the export expects {aval}",
                    paths.get(i).map_or("", String::as_str),
                    shown.join(",")
                )));
            }
        }
        if !self.is_shape_polymorphic() {
            return Ok(self.clone());
        }
        let ModuleForm::PortableArtifact(version) = self.module_form() else {
            return Err(ExportError::CannotRun(format!(
                "this shape-polymorphic export's module is {}, not a StableHLO portable \
                 artifact, which oxla refines",
                self.module_form()
            )));
        };
        if !self.ordered_effects.is_empty() {
            return Err(ExportError::CannotRun(format!(
                "this export has ordered effects ({}), which take runtime tokens; oxla does not \
                 create tokens yet",
                self.ordered_effects.join(", ")
            )));
        }
        // `main` takes the platform index first when several platforms
        // were exported, then the kept inputs.
        let mut arguments: Vec<Vec<i64>> = Vec::new();
        if self.platforms.len() > 1 {
            arguments.push(Vec::new());
        }
        arguments.extend(
            self.module_kept_var_idx
                .iter()
                .map(|&i| input_dims[i].clone()),
        );
        let version = format!("{}.{}.{}", version.major, version.minor, version.patch);
        let refined =
            crate::vhlo::refine_shapes(&self.mlir_module, &arguments, &version).map_err(|e| {
                ExportError::BadInput(format!(
                    "{} with input dims {}: {e}",
                    self.function_name,
                    shapes_text(input_dims)
                ))
            })?;
        if refined.result_dims.len() != self.out_avals.len() {
            return Err(ExportError::CannotRun(format!(
                "the refined module returns {} values for {} outputs",
                refined.result_dims.len(),
                self.out_avals.len()
            )));
        }
        let concrete = |aval: &AbstractValue, dims: &[i64]| AbstractValue {
            shape: dims.iter().map(|&d| Dim::Known(d)).collect(),
            ..aval.clone()
        };
        let mut out = self.clone();
        out.in_avals = self
            .in_avals
            .iter()
            .zip(input_dims)
            .map(|(a, d)| concrete(a, d))
            .collect();
        out.out_avals = self
            .out_avals
            .iter()
            .zip(&refined.result_dims)
            .map(|(a, d)| concrete(a, d))
            .collect();
        out.mlir_module = refined.artifact;
        Ok(out)
    }
}

/// `[5,3], [3,4]`.
fn shapes_text(dims: &[Vec<i64>]) -> String {
    dims.iter()
        .map(|d| {
            let parts: Vec<String> = d.iter().map(i64::to_string).collect();
            format!("[{}]", parts.join(","))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
