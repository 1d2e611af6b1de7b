//! How an array is laid out over a mesh of devices, as the IR records it:
//! a mesh's named axes and device order, and, per array dimension, the mesh
//! axes it is split over (JAX's `NamedSharding(mesh, PartitionSpec(...))`).
//! oxla's user-facing `Mesh` / `NamedSharding` turn into these; the
//! lowering writes them as Shardy (`sdy`) attributes.

use std::fmt;
use std::sync::Arc;

/// A mesh: named axes with sizes, and the devices in mesh order (row-major
/// over the axes). Partition `p` of a program compiled for the mesh runs on
/// `device_ids[p]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MeshDesc {
    /// `(name, size)` of each axis, major to minor.
    pub axes: Arc<[(Arc<str>, usize)]>,
    /// The device of each mesh position, row-major.
    pub device_ids: Arc<[i64]>,
}

impl MeshDesc {
    /// Number of devices.
    pub fn size(&self) -> usize {
        self.axes.iter().map(|(_, n)| n).product()
    }

    /// The size of axis `name`, if the mesh has it.
    pub fn axis_size(&self, name: &str) -> Option<usize> {
        self.axes
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, size)| *size)
    }

    /// The axes as Shardy writes a mesh: `#sdy.mesh<["data"=4, "model"=2]>`
    /// (device order is the partition order, so no device list).
    pub fn sdy_attribute(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(name, size)| format!("\"{name}\"={size}"))
            .collect();
        format!("#sdy.mesh<[{}]>", axes.join(", "))
    }
}

impl fmt::Display for MeshDesc {
    /// `Mesh('data': 4, 'model': 2)`, as JAX prints a mesh.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(name, size)| format!("'{name}': {size}"))
            .collect();
        write!(f, "Mesh({})", axes.join(", "))
    }
}

/// A named sharding: for each array dimension, the mesh axes it is split
/// over (none: not split). Mesh axes named by no dimension replicate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardingDesc {
    /// The mesh.
    pub mesh: MeshDesc,
    /// Per dimension, the mesh axes splitting it, major first.
    pub dims: Arc<[Arc<[Arc<str>]>]>,
}

impl ShardingDesc {
    /// The sharding of an array of rank `rank` as Shardy writes it, on the
    /// mesh called `mesh_symbol`: `#sdy.sharding<@mesh, [{"data"}, {}]>`
    /// (one entry per dimension; those past the spec are not split).
    pub fn sdy_attribute(&self, mesh_symbol: &str, rank: usize) -> String {
        let dims: Vec<String> = (0..rank.max(self.dims.len()))
            .map(|d| {
                let names: Vec<String> = self
                    .dims
                    .get(d)
                    .map(|axes| axes.iter().map(|a| format!("\"{a}\"")).collect())
                    .unwrap_or_default();
                format!("{{{}}}", names.join(", "))
            })
            .collect();
        format!("#sdy.sharding<@{mesh_symbol}, [{}]>", dims.join(", "))
    }

    /// The spec part, as JAX prints a `PartitionSpec`: `P('data', None)`.
    pub fn spec_text(&self) -> String {
        spec_text(self.dims.iter().map(|axes| axes.iter()))
    }

    /// How many pieces dimension `dim` is cut into.
    pub fn tiles(&self, dim: usize) -> usize {
        self.dims.get(dim).map_or(1, |axes| {
            axes.iter()
                .map(|a| self.mesh.axis_size(a).unwrap_or(1))
                .product()
        })
    }
}

impl fmt::Display for ShardingDesc {
    /// `NamedSharding(mesh=Mesh('data': 4), spec=P('data', None))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NamedSharding(mesh={}, spec={})",
            self.mesh,
            self.spec_text()
        )
    }
}

/// A partition spec as JAX prints it, from each dimension's mesh axes:
/// `P('data', None, ('x', 'y'))`.
pub fn spec_text<'a, A: AsRef<str> + ?Sized + 'a>(
    entries: impl IntoIterator<Item = impl IntoIterator<Item = &'a A>>,
) -> String {
    let parts: Vec<String> = entries
        .into_iter()
        .map(|axes| {
            let names: Vec<String> = axes
                .into_iter()
                .map(|a| format!("'{}'", a.as_ref()))
                .collect();
            match names.len() {
                0 => "None".to_string(),
                1 => names[0].clone(),
                _ => format!("({})", names.join(", ")),
            }
        })
        .collect();
    format!("P({})", parts.join(", "))
}

/// That `sharding` fits an array of type `aval`: one entry per dimension at
/// most, known mesh axes, each used once, and tile counts that divide their
/// dimension.
pub fn check_sharding(sharding: &ShardingDesc, aval: &crate::aval::Aval) -> Result<(), String> {
    let mesh = &sharding.mesh;
    if sharding.dims.len() > aval.shape.len() {
        return Err(format!(
            "{} has {} entries, more than the {} dimensions of {aval}",
            sharding.spec_text(),
            sharding.dims.len(),
            aval.shape.len()
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (dim, axes) in sharding.dims.iter().enumerate() {
        for axis in axes.iter() {
            if mesh.axis_size(axis).is_none() {
                let names: Vec<String> = mesh.axes.iter().map(|(n, _)| format!("'{n}'")).collect();
                return Err(format!(
                    "{} names mesh axis '{axis}', but the mesh has axes {}",
                    sharding.spec_text(),
                    names.join(", ")
                ));
            }
            if seen.contains(&&**axis) {
                return Err(format!(
                    "{} uses mesh axis '{axis}' twice",
                    sharding.spec_text()
                ));
            }
            seen.push(axis);
        }
        let tiles = sharding.tiles(dim) as i64;
        let size = aval.shape[dim];
        if size % tiles != 0 {
            return Err(format!(
                "dimension {dim} of {aval} (size {size}) is not divisible by {tiles}, the \
                 number of devices {} splits it over",
                sharding.spec_text()
            ));
        }
    }
    Ok(())
}

/// The meshes of every sharding constraint in `jaxpr` and the jaxprs it
/// nests, each once, in order of appearance.
pub fn constraint_meshes(jaxpr: &crate::jaxpr::Jaxpr) -> Vec<MeshDesc> {
    fn walk(jaxpr: &crate::jaxpr::Jaxpr, found: &mut Vec<MeshDesc>) {
        for eqn in &jaxpr.eqns {
            if let crate::primitive::Primitive::ShardingConstraint { sharding } = &eqn.primitive
                && !found.contains(&sharding.mesh)
            {
                found.push(sharding.mesh.clone());
            }
            eqn.primitive.params(0, &mut |nested, _| {
                walk(nested, found);
                String::new()
            });
        }
    }
    let mut found = Vec::new();
    walk(jaxpr, &mut found);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> MeshDesc {
        MeshDesc {
            axes: vec![("data".into(), 4), ("model".into(), 2)].into(),
            device_ids: (0..8).collect(),
        }
    }

    #[test]
    fn shardy_and_jax_spellings() {
        let s = ShardingDesc {
            mesh: mesh(),
            dims: vec![
                Arc::from(vec![Arc::from("data")]),
                Arc::from(Vec::<Arc<str>>::new()),
                Arc::from(vec![Arc::from("data"), Arc::from("model")]),
            ]
            .into(),
        };
        assert_eq!(
            s.mesh.sdy_attribute(),
            "#sdy.mesh<[\"data\"=4, \"model\"=2]>"
        );
        assert_eq!(
            s.sdy_attribute("mesh", 4),
            "#sdy.sharding<@mesh, [{\"data\"}, {}, {\"data\", \"model\"}, {}]>"
        );
        assert_eq!(
            s.to_string(),
            "NamedSharding(mesh=Mesh('data': 4, 'model': 2), spec=P('data', None, ('data', 'model')))"
        );
        assert_eq!((s.tiles(0), s.tiles(1), s.tiles(2)), (4, 1, 8));
    }
}
