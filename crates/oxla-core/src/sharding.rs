//! How an array is laid out over a mesh of devices, as the IR records it:
//! a mesh's named axes and device order, and, per array dimension, the mesh
//! axes it is split over (JAX's `NamedSharding(mesh, PartitionSpec(...))`).
//! oxla's user-facing `Mesh` / `NamedSharding` turn into these; the
//! lowering writes them as Shardy (`sdy`) attributes.

use crate::primitive::{collective, sharding};
use std::fmt;
use std::sync::Arc;

/// How a mesh axis takes part in sharding (JAX's `jax.sharding.AxisType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AxisType {
    /// The partitioner (Shardy) chooses how values are split over the axis;
    /// types do not mention it.
    #[default]
    Auto,
    /// Values' types say how they are split over the axis (JAX's explicit
    /// sharding): each primitive's sharding rule gives its results' split,
    /// or rejects an ambiguous one, and the layouts follow the types.
    Explicit,
    /// The program addresses the axis's devices one by one (inside
    /// `shard_map`).
    Manual,
}

impl fmt::Display for AxisType {
    /// `Auto`, `Explicit`, `Manual`, as JAX prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AxisType::Auto => "Auto",
            AxisType::Explicit => "Explicit",
            AxisType::Manual => "Manual",
        })
    }
}

/// A mesh: named axes with sizes, and the devices in mesh order (row-major
/// over the axes). Partition `p` of a program compiled for the mesh runs on
/// `device_ids[p]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MeshDesc {
    /// `(name, size)` of each axis, major to minor.
    pub axes: Arc<[(Arc<str>, usize)]>,
    /// The device of each mesh position, row-major.
    pub device_ids: Arc<[i64]>,
    /// The type of each axis, in the order of `axes`.
    pub axis_types: Arc<[AxisType]>,
}

impl MeshDesc {
    /// A mesh of `axes` over `device_ids` whose axes are all
    /// [`AxisType::Auto`].
    pub fn new(axes: Arc<[(Arc<str>, usize)]>, device_ids: Arc<[i64]>) -> MeshDesc {
        let axis_types = vec![AxisType::Auto; axes.len()].into();
        MeshDesc {
            axes,
            device_ids,
            axis_types,
        }
    }

    /// The same mesh with these axis types (one per axis).
    pub fn with_axis_types(&self, axis_types: &[AxisType]) -> MeshDesc {
        MeshDesc {
            axis_types: axis_types.into(),
            ..self.clone()
        }
    }

    /// The type of axis `name` (`Auto` for an axis the mesh lacks).
    pub fn axis_type(&self, name: &str) -> AxisType {
        self.axes
            .iter()
            .zip(self.axis_types.iter())
            .find(|((n, _), _)| &**n == name)
            .map_or(AxisType::Auto, |(_, t)| *t)
    }

    /// Whether some axis is [`AxisType::Explicit`]: values on the mesh then
    /// carry their sharding in their types.
    pub fn has_explicit_axes(&self) -> bool {
        self.axis_types.contains(&AxisType::Explicit)
    }

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
        write!(f, "Mesh({}", axes.join(", "))?;
        if self.axis_types.iter().any(|t| *t != AxisType::Auto) {
            let types: Vec<String> = self.axis_types.iter().map(AxisType::to_string).collect();
            match types.len() {
                1 => write!(f, ", axis_types=({},)", types[0])?,
                _ => write!(f, ", axis_types=({})", types.join(", "))?,
            }
        }
        f.write_str(")")
    }
}

/// The mesh axes splitting one dimension, major first (none: not split).
pub type DimAxes = Arc<[Arc<str>]>;

/// A named sharding: for each array dimension, the mesh axes it is split
/// over (none: not split). Mesh axes named by no dimension replicate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardingDesc {
    /// The mesh.
    pub mesh: MeshDesc,
    /// Per dimension, the mesh axes splitting it, major first.
    pub dims: Arc<[Arc<[Arc<str>]>]>,
    /// Dimensions left to the partitioner (JAX's `P.UNCONSTRAINED`, in
    /// sharding constraints): it may split them over mesh axes the other
    /// dimensions leave free. Their `dims` entry is empty.
    pub unconstrained: Arc<[usize]>,
}

impl ShardingDesc {
    /// The sharding splitting dimension `i` over the mesh axes `dims[i]`,
    /// every dimension constrained.
    pub fn new(mesh: MeshDesc, dims: Arc<[Arc<[Arc<str>]>]>) -> ShardingDesc {
        ShardingDesc {
            mesh,
            dims,
            unconstrained: Arc::from([]),
        }
    }

    /// The part of the sharding a value's type shows: the same split over
    /// the mesh's explicit axes only (`None` on a mesh without explicit
    /// axes).
    pub fn explicit_type(&self) -> Option<ShardingDesc> {
        if !self.mesh.has_explicit_axes() {
            return None;
        }
        let dims = self
            .dims
            .iter()
            .map(|axes| {
                axes.iter()
                    .filter(|a| self.mesh.axis_type(a) == AxisType::Explicit)
                    .cloned()
                    .collect()
            })
            .collect();
        Some(ShardingDesc::new(self.mesh.clone(), dims))
    }

    /// The constraint that pins a value to its explicit sharding type: the
    /// type's split, with the dimensions it leaves unsplit open to the
    /// partitioner when the mesh also has auto axes.
    pub fn type_constraint(&self, rank: usize) -> ShardingDesc {
        let has_auto = self.mesh.axis_types.contains(&AxisType::Auto);
        let unconstrained = match has_auto {
            true => (0..rank)
                .filter(|&d| self.dims.get(d).is_none_or(|axes| axes.is_empty()))
                .collect(),
            false => Arc::from([]),
        };
        ShardingDesc {
            unconstrained,
            ..self.clone()
        }
    }

    /// Every device holds the whole array.
    pub fn replicated(mesh: MeshDesc) -> ShardingDesc {
        ShardingDesc::new(mesh, Arc::from([]))
    }

    /// The sharding with a new dimension at `at`, split over `axes`
    /// (the dimensions after it shift by one).
    pub fn with_dim_inserted(&self, at: usize, axes: Arc<[Arc<str>]>) -> ShardingDesc {
        let mut dims: Vec<Arc<[Arc<str>]>> = self.dims.to_vec();
        while dims.len() < at {
            dims.push(Arc::from([]));
        }
        dims.insert(at, axes);
        ShardingDesc {
            mesh: self.mesh.clone(),
            dims: dims.into(),
            unconstrained: self
                .unconstrained
                .iter()
                .map(|&d| if d >= at { d + 1 } else { d })
                .collect(),
        }
    }
    /// The same sharding without its trailing unsplit, constrained
    /// dimensions (`P('x', None)` is `P('x')`).
    pub fn trimmed(&self) -> ShardingDesc {
        let mut dims: Vec<Arc<[Arc<str>]>> = self.dims.to_vec();
        while dims
            .last()
            .is_some_and(|axes| axes.is_empty() && !self.unconstrained.contains(&(dims.len() - 1)))
        {
            dims.pop();
        }
        ShardingDesc {
            dims: dims.into(),
            ..self.clone()
        }
    }

    /// The sharding without dimension `at` (the dimensions after it shift
    /// down by one).
    pub fn without_dim(&self, at: usize) -> ShardingDesc {
        let mut dims: Vec<Arc<[Arc<str>]>> = self.dims.to_vec();
        if at < dims.len() {
            dims.remove(at);
        }
        ShardingDesc {
            mesh: self.mesh.clone(),
            dims: dims.into(),
            unconstrained: self
                .unconstrained
                .iter()
                .filter(|&&d| d != at)
                .map(|&d| if d > at { d - 1 } else { d })
                .collect(),
        }
    }

    /// The sharding of an array of rank `rank` as Shardy writes it, on the
    /// mesh called `mesh_symbol`: `#sdy.sharding<@mesh, [{"data"}, {}]>`
    /// (one entry per dimension; those past the spec are not split).
    pub fn sdy_attribute(&self, mesh_symbol: &str, rank: usize) -> String {
        format!("#sdy.sharding{}", self.sdy_body(mesh_symbol, rank))
    }

    /// The part of the Shardy attribute after its name, `<@mesh, [{"data"}, {}]>`
    /// (how a list of shardings, `#sdy.sharding_per_value<[...]>`, spells each).
    pub fn sdy_body(&self, mesh_symbol: &str, rank: usize) -> String {
        let dims: Vec<String> = (0..rank.max(self.dims.len()))
            .map(|d| {
                if self.unconstrained.contains(&d) {
                    return "{?}".to_string();
                }
                let names: Vec<String> = self
                    .dims
                    .get(d)
                    .map(|axes| axes.iter().map(|a| format!("\"{a}\"")).collect())
                    .unwrap_or_default();
                format!("{{{}}}", names.join(", "))
            })
            .collect();
        format!("<@{mesh_symbol}, [{}]>", dims.join(", "))
    }

    /// The spec part, as JAX prints a `PartitionSpec`: `P('data', None)`,
    /// `P('data', UNCONSTRAINED)`.
    pub fn spec_text(&self) -> String {
        let entries: Vec<String> = self
            .dims
            .iter()
            .enumerate()
            .map(|(d, axes)| match self.unconstrained.contains(&d) {
                true => "UNCONSTRAINED".to_string(),
                false => entry_text(axes.iter()),
            })
            .collect();
        format!("P({})", entries.join(", "))
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

/// Mesh axes a collective runs over, inside `shard_map` on `mesh`: the
/// devices that differ only in their positions along `axes` form a group.
/// A collective over a named `vmap` axis has a group of
/// [`AxisScope::Vmap`]: its `mesh` is that one axis, with no devices, and
/// the examples of the batch play the devices' part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AxisGroup {
    /// The mesh.
    pub mesh: MeshDesc,
    /// The axes, major first.
    pub axes: Arc<[Arc<str>]>,
    /// Whether the axes are a mesh's (devices) or a `vmap`'s (examples).
    pub scope: AxisScope,
    /// JAX's `axis_index_groups`: each group of devices along `axes` is
    /// split further into these subgroups of indices along `axes` (each
    /// index once, every subgroup of one size), and the collective runs
    /// within each subgroup, whose members are numbered in the order
    /// listed. `None`: the whole group.
    pub index_groups: Option<Arc<[Arc<[usize]>]>>,
}

/// What a collective's named axis ranges over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisScope {
    /// Devices of a `shard_map`'s mesh: lowered to StableHLO collectives.
    Devices,
    /// Examples of a `vmap` with `axis_name`: the batching rule of that
    /// `vmap` computes the collective along the batch dimension, so it
    /// never reaches lowering.
    Vmap,
}

impl AxisGroup {
    /// The group of the mesh axes `axes` of `mesh` (all their devices).
    pub fn devices(mesh: MeshDesc, axes: Arc<[Arc<str>]>) -> AxisGroup {
        AxisGroup {
            mesh,
            axes,
            scope: AxisScope::Devices,
            index_groups: None,
        }
    }

    /// The group of the one named `vmap` axis `name` of `size` examples.
    pub fn vmap(name: Arc<str>, size: usize) -> AxisGroup {
        AxisGroup {
            mesh: MeshDesc::new(vec![(name.clone(), size)].into(), Vec::new().into()),
            axes: vec![name].into(),
            scope: AxisScope::Vmap,
            index_groups: None,
        }
    }

    /// The `vmap` axis this group names (`None` for mesh axes).
    pub fn vmap_axis(&self) -> Option<&Arc<str>> {
        match self.scope {
            AxisScope::Vmap => self.axes.first(),
            AxisScope::Devices => None,
        }
    }

    /// Number of devices in a group (in one of its `index_groups`).
    pub fn size(&self) -> usize {
        match &self.index_groups {
            Some(subgroups) => subgroups.first().map_or(0, |g| g.len()),
            None => self.axes_size(),
        }
    }

    /// Number of devices along the group's axes, whatever its
    /// `index_groups`.
    pub fn axes_size(&self) -> usize {
        self.axes
            .iter()
            .map(|a| self.mesh.axis_size(a).unwrap_or(1))
            .product()
    }

    /// Mesh axis indices of the group's axes, and of the others.
    fn split_axes(&self) -> (Vec<usize>, Vec<usize>) {
        let index = |name: &str| self.mesh.axes.iter().position(|(n, _)| &**n == name);
        let inner: Vec<usize> = self.axes.iter().filter_map(|a| index(a)).collect();
        let outer = (0..self.mesh.axes.len())
            .filter(|a| !inner.contains(a))
            .collect();
        (inner, outer)
    }

    /// The stride of mesh axis `axis` in row-major mesh positions.
    pub fn stride(&self, axis: usize) -> usize {
        self.mesh.axes[axis + 1..].iter().map(|(_, n)| n).product()
    }

    /// The groups, as mesh positions (partition ids): one group per
    /// position along the other axes (row-major), each listing its devices
    /// in the order of their index along `axes` (row-major, major first);
    /// with `index_groups`, each of those split into its subgroups, as
    /// JAX's replica groups.
    pub fn groups(&self) -> Vec<Vec<i64>> {
        let whole = self.whole_groups();
        match &self.index_groups {
            None => whole,
            Some(subgroups) => whole
                .iter()
                .flat_map(|group| {
                    subgroups
                        .iter()
                        .map(|sub| sub.iter().map(|&i| group[i]).collect())
                })
                .collect(),
        }
    }

    /// [`AxisGroup::groups`] without the `index_groups`.
    fn whole_groups(&self) -> Vec<Vec<i64>> {
        let (inner, outer) = self.split_axes();
        let sizes =
            |axes: &[usize]| -> Vec<usize> { axes.iter().map(|&a| self.mesh.axes[a].1).collect() };
        let combos = |axes: &[usize]| -> Vec<Vec<usize>> {
            let mut out: Vec<Vec<usize>> = vec![Vec::new()];
            for size in sizes(axes) {
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        (0..size).map(move |i| {
                            let mut next = prefix.clone();
                            next.push(i);
                            next
                        })
                    })
                    .collect();
            }
            out
        };
        let position = |axes: &[usize], coords: &[usize]| -> usize {
            axes.iter()
                .zip(coords)
                .map(|(&a, &c)| c * self.stride(a))
                .sum()
        };
        combos(&outer)
            .iter()
            .map(|o| {
                let base = position(&outer, o);
                combos(&inner)
                    .iter()
                    .map(|i| (base + position(&inner, i)) as i64)
                    .collect()
            })
            .collect()
    }

    /// The mesh axis indices of the group's axes, major first.
    pub fn axis_indices(&self) -> Vec<usize> {
        self.split_axes().0
    }

    /// The `index_groups` as JAX prints them: `((0, 1), (2, 3))`, or
    /// `None`.
    pub fn index_groups_text(&self) -> String {
        let tuple = |items: Vec<String>| match items.len() {
            1 => format!("({},)", items[0]),
            _ => format!("({})", items.join(", ")),
        };
        match &self.index_groups {
            None => "None".to_string(),
            Some(groups) => tuple(
                groups
                    .iter()
                    .map(|g| tuple(g.iter().map(usize::to_string).collect()))
                    .collect(),
            ),
        }
    }

    /// `'data'` or `('data', 'model')`, as JAX names axes.
    pub fn names(&self) -> String {
        match self.axes.len() {
            1 => format!("'{}'", self.axes[0]),
            _ => format!(
                "({})",
                self.axes
                    .iter()
                    .map(|a| format!("'{a}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// A partition spec as JAX prints it, from each dimension's mesh axes:
/// `P('data', None, ('x', 'y'))`.
pub fn spec_text<'a, A: AsRef<str> + ?Sized + 'a>(
    entries: impl IntoIterator<Item = impl IntoIterator<Item = &'a A>>,
) -> String {
    let parts: Vec<String> = entries.into_iter().map(entry_text).collect();
    format!("P({})", parts.join(", "))
}

/// One entry of a partition spec as JAX prints it: `None`, `'data'` or
/// `('data', 'model')`.
pub fn entry_text<'a, A: AsRef<str> + ?Sized + 'a>(
    axes: impl IntoIterator<Item = &'a A>,
) -> String {
    let names: Vec<String> = axes
        .into_iter()
        .map(|a| format!("'{}'", a.as_ref()))
        .collect();
    match names.len() {
        0 => "None".to_string(),
        1 => names[0].clone(),
        _ => format!("({})", names.join(", ")),
    }
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

/// The mesh a primitive names, if it names one.
fn primitive_mesh(primitive: &crate::primitive::Primitive) -> Option<&MeshDesc> {
    use crate::primitive::Primitive;
    match primitive {
        Primitive::Sharding(sharding::Op::ShardingConstraint { sharding }) => Some(&sharding.mesh),
        Primitive::Sharding(sharding::Op::ShardMap(sharding::ShardMapParams {
            in_shardings,
            out_shardings,
            ..
        })) => in_shardings
            .first()
            .or(out_shardings.first())
            .map(|s| &s.mesh),
        Primitive::Collective(collective::Op::AllReduce { group, .. })
        | Primitive::Collective(collective::Op::AllGather { group, .. })
        | Primitive::Collective(collective::Op::ReduceScatter { group, .. })
        | Primitive::Collective(collective::Op::AllToAll { group, .. })
        | Primitive::Collective(collective::Op::Ppermute { group, .. })
        | Primitive::Collective(collective::Op::AxisIndex { group }) => Some(&group.mesh),
        _ => None,
    }
}

/// The meshes of every sharding constraint, `shard_map`, collective and
/// explicitly sharded result in `jaxpr` and the jaxprs it nests, each
/// once, in order of appearance.
pub fn program_meshes(jaxpr: &crate::jaxpr::Jaxpr) -> Vec<MeshDesc> {
    fn walk(jaxpr: &crate::jaxpr::Jaxpr, found: &mut Vec<MeshDesc>) {
        for eqn in &jaxpr.eqns {
            let typed = eqn
                .outputs
                .iter()
                .filter_map(|v| jaxpr.aval(*v).sharding.as_ref().map(|s| &s.mesh));
            for mesh in primitive_mesh(&eqn.primitive).into_iter().chain(typed) {
                if !found.contains(mesh) {
                    found.push(mesh.clone());
                }
            }
            for nested in eqn.primitive.nested_jaxprs() {
                walk(nested.jaxpr(), found);
            }
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
        MeshDesc::new(
            vec![("data".into(), 4), ("model".into(), 2)].into(),
            (0..8).collect(),
        )
    }

    #[test]
    fn groups_are_the_devices_that_differ_along_the_axes() {
        let group = |axes: &[&str]| {
            AxisGroup::devices(mesh(), axes.iter().map(|a| Arc::from(*a)).collect())
        };
        assert_eq!(
            group(&["data"]).groups(),
            vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]]
        );
        assert_eq!(
            group(&["model"]).groups(),
            vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]
        );
        assert_eq!(
            group(&["model", "data"]).groups(),
            vec![vec![0, 2, 4, 6, 1, 3, 5, 7]]
        );
        assert_eq!(group(&["data", "model"]).size(), 8);
        let split = AxisGroup {
            index_groups: Some(vec![Arc::from([0, 2]), Arc::from([3, 1])].into()),
            ..group(&["data"])
        };
        assert_eq!(
            split.groups(),
            vec![vec![0, 4], vec![6, 2], vec![1, 5], vec![7, 3]]
        );
        assert_eq!(split.size(), 2);
        assert_eq!(split.axes_size(), 4);
    }

    #[test]
    fn shardy_and_jax_spellings() {
        let s = ShardingDesc {
            unconstrained: Arc::from([]),
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
