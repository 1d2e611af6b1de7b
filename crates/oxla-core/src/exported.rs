//! A function exported with `jax.export`, as a primitive carries it: the
//! module text to merge into the calling program, and the types of its
//! kept inputs and its outputs.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::aval::Aval;

/// An exported function called inside an oxla program. Compared and
/// hashed by a fingerprint of its module and signature.
#[derive(Clone)]
pub struct ExportedFunction(Arc<Inner>);

struct Inner {
    name: String,
    module: String,
    in_avals: Vec<Aval>,
    out_avals: Vec<Aval>,
    platform_index: Option<i32>,
    mesh_axes: Option<Vec<(String, usize)>>,
    fingerprint: u64,
}

impl ExportedFunction {
    /// A function named `name` whose module (StableHLO text in generic
    /// form) has a public `main` taking, after the platform index when
    /// `platform_index` is given, inputs of types `in_avals` and returning
    /// `out_avals`. `mesh_axes` are the `(name, size)` axes of the mesh a
    /// multi-device module is partitioned over (its `sdy.mesh @mesh`), which
    /// the calling program's mesh must equal; `None` for one device.
    pub fn new(
        name: &str,
        module: String,
        in_avals: Vec<Aval>,
        out_avals: Vec<Aval>,
        platform_index: Option<i32>,
        mesh_axes: Option<Vec<(String, usize)>>,
    ) -> ExportedFunction {
        let mut hasher = DefaultHasher::new();
        (&module, &in_avals, &out_avals, platform_index, &mesh_axes).hash(&mut hasher);
        ExportedFunction(Arc::new(Inner {
            name: name.to_string(),
            module,
            in_avals,
            out_avals,
            platform_index,
            mesh_axes,
            fingerprint: hasher.finish(),
        }))
    }

    /// The axes of the mesh a multi-device module is partitioned over.
    pub fn mesh_axes(&self) -> Option<&[(String, usize)]> {
        self.0.mesh_axes.as_deref()
    }

    /// The exported function's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The module's text.
    pub fn module(&self) -> &str {
        &self.0.module
    }

    /// The types of the inputs the module takes.
    pub fn in_avals(&self) -> &[Aval] {
        &self.0.in_avals
    }

    /// The types of the outputs.
    pub fn out_avals(&self) -> &[Aval] {
        &self.0.out_avals
    }

    /// The platform index to pass first, for a module lowered for several
    /// platforms.
    pub fn platform_index(&self) -> Option<i32> {
        self.0.platform_index
    }

    /// The symbol the merged `main` gets: unique per module and signature.
    pub fn symbol(&self) -> String {
        format!("oxla_exported_{:016x}", self.0.fingerprint)
    }
}

impl PartialEq for ExportedFunction {
    fn eq(&self, other: &Self) -> bool {
        self.0.fingerprint == other.0.fingerprint && self.0.module == other.0.module
    }
}

impl Eq for ExportedFunction {}

impl Hash for ExportedFunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.fingerprint.hash(state);
    }
}

impl fmt::Debug for ExportedFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExportedFunction({})", self.0.name)
    }
}
