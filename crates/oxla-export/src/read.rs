//! From verified flatbuffer tables to [`Exported`] values, following JAX's
//! own deserializer: per-argument lists in format 9, indices into tables of
//! unique avals, meshes and shardings from format 10 on.

use crate::error::{ExportError, Result};
use crate::model::{
    AbstractMesh, AbstractValue, AxisType, DType, Dim, DisabledCheck, Exported, MemorySpace,
    NamedSharding, PyTreeDef, Sharding,
};
use crate::schema;

fn malformed(what: impl Into<String>) -> ExportError {
    ExportError::Malformed(what.into())
}

fn strings<'a>(v: Option<schema::Tables<'a, &'a str>>) -> Vec<String> {
    v.map(|v| v.iter().map(str::to_string).collect())
        .unwrap_or_default()
}

fn pytreedef(p: schema::PyTreeDef<'_>) -> Result<PyTreeDef> {
    let children = p
        .children()
        .map(|c| c.iter().map(pytreedef).collect::<Result<Vec<_>>>())
        .transpose()?
        .unwrap_or_default();
    Ok(match p.kind() {
        0 => PyTreeDef::Leaf,
        1 => PyTreeDef::None,
        2 => PyTreeDef::Tuple(children),
        3 => PyTreeDef::List(children),
        4 => {
            let names = strings(p.children_names());
            if names.len() != children.len() {
                return Err(malformed(format!(
                    "a dict node has {} keys for {} children",
                    names.len(),
                    children.len()
                )));
            }
            PyTreeDef::Dict(names.into_iter().zip(children).collect())
        }
        5 => PyTreeDef::Custom {
            name: p.custom_name().unwrap_or_default().to_string(),
            auxdata: p
                .custom_auxdata()
                .map(|v| v.iter().map(|b| b as u8).collect())
                .unwrap_or_default(),
            children,
        },
        other => return Err(malformed(format!("unknown pytree node kind {other}"))),
    })
}

fn abstract_value(a: schema::AbstractValue<'_>) -> Result<AbstractValue> {
    if a.kind() != 0 {
        return Err(malformed(format!(
            "unsupported abstract value kind {}",
            a.kind()
        )));
    }
    let dtype = DType::from_tag(a.dtype())
        .ok_or_else(|| malformed(format!("unknown dtype tag {}", a.dtype())))?;
    let shape = a
        .shape()
        .map(|s| {
            s.iter()
                .map(|d| match d.trim().parse::<i64>() {
                    Ok(v) if v >= 0 => Dim::Known(v),
                    _ => Dim::Symbolic(d.to_string()),
                })
                .collect()
        })
        .unwrap_or_default();
    let memory_space = match a.memory_space() {
        0 => MemorySpace::Unspecified,
        1 => MemorySpace::Device,
        2 => MemorySpace::Host,
        3 => MemorySpace::Any,
        other => return Err(malformed(format!("unknown memory space {other}"))),
    };
    Ok(AbstractValue {
        shape,
        dtype,
        memory_space,
    })
}

fn abstract_mesh(m: schema::AbstractMesh<'_>) -> Result<AbstractMesh> {
    let axis_names = strings(m.axis_names());
    let axis_sizes: Vec<u32> = m
        .axis_sizes()
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    if axis_names.len() != axis_sizes.len() {
        return Err(malformed(format!(
            "a mesh has {} axis names for {} sizes",
            axis_names.len(),
            axis_sizes.len()
        )));
    }
    let axis_types = m
        .axis_types()
        .map(|v| {
            v.iter()
                .map(|t| match t {
                    1 => AxisType::Auto,
                    2 => AxisType::Explicit,
                    3 => AxisType::Manual,
                    _ => AxisType::Unspecified,
                })
                .collect()
        })
        .unwrap_or_default();
    let device = m.abstract_device();
    Ok(AbstractMesh {
        axis_names,
        axis_sizes,
        axis_types,
        device_kind: device.and_then(|d| d.device_kind()).map(str::to_string),
        num_cores: device.and_then(|d| d.num_cores()),
        platform: device.and_then(|d| d.platform()).map(str::to_string),
    })
}

fn named_sharding(
    s: schema::NamedSharding<'_>,
    unique_meshes: &[AbstractMesh],
) -> Result<NamedSharding> {
    let mesh = match (unique_meshes.is_empty(), s.abstract_mesh_idx(), s.mesh()) {
        (false, Some(i), _) => unique_meshes
            .get(i as usize)
            .cloned()
            .ok_or_else(|| malformed(format!("mesh index {i} out of range")))?,
        (_, _, Some(m)) => abstract_mesh(m)?,
        _ => return Err(malformed("a named sharding has no mesh")),
    };
    let spec = s.spec();
    let partitions = spec
        .and_then(|p| p.partitions())
        .map(|p| p.iter().map(|axis| strings(axis.axes())).collect())
        .unwrap_or_default();
    Ok(NamedSharding {
        mesh,
        spec: partitions,
        reduced: strings(spec.and_then(|p| p.reduced())),
        unreduced: strings(spec.and_then(|p| p.unreduced())),
        memory_kind: s.memory_kind().map(str::to_string),
    })
}

fn sharding(s: schema::Sharding<'_>, unique_meshes: &[AbstractMesh]) -> Result<Sharding> {
    if let Some(named) = s.named_sharding() {
        return Ok(Sharding::Named(named_sharding(named, unique_meshes)?));
    }
    Ok(match s.hlo_sharding_proto() {
        Some(proto) => Sharding::Hlo(proto.iter().map(|b| b as u8).collect()),
        None => Sharding::Unspecified,
    })
}

/// Items of `list` picked by `idxs` (`unique[idx]`), erroring on a bad index.
fn by_index<T: Clone>(unique: &[T], idxs: impl Iterator<Item = u32>, what: &str) -> Result<Vec<T>> {
    idxs.map(|i| {
        unique.get(i as usize).cloned().ok_or_else(|| {
            malformed(format!(
                "{what} index {i} out of range ({} entries)",
                unique.len()
            ))
        })
    })
    .collect()
}

// Long by design: one step per field of the flatbuffer root table, in the
// order of serialization.fbs.
/// Converts a verified root table.
pub(crate) fn exported(e: schema::Exported<'_>) -> Result<Exported> {
    let version = e.serialization_version();
    if !(crate::MIN_SERIALIZATION_VERSION..=crate::MAX_SERIALIZATION_VERSION).contains(&version) {
        return Err(ExportError::UnsupportedVersion(version));
    }
    let unique_avals = e
        .unique_avals()
        .map(|v| v.iter().map(abstract_value).collect::<Result<Vec<_>>>())
        .transpose()?
        .unwrap_or_default();
    let unique_meshes = e
        .unique_abstract_meshes()
        .map(|v| v.iter().map(abstract_mesh).collect::<Result<Vec<_>>>())
        .transpose()?
        .unwrap_or_default();
    let unique_shardings = e
        .unique_named_shardings()
        .map(|v| {
            v.iter()
                .map(|s| named_sharding(s, &unique_meshes))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?
        .unwrap_or_default();

    let shardings = |idxs: Option<flatbuffers::Vector<'_, u32>>,
                     list: Option<schema::Tables<'_, schema::Sharding<'_>>>|
     -> Result<Vec<Sharding>> {
        match (idxs.filter(|v| !v.is_empty()), list) {
            (Some(idxs), _) => idxs
                .iter()
                .map(|i| match i {
                    0 => Ok(Sharding::Unspecified),
                    i => unique_shardings
                        .get(i as usize - 1)
                        .cloned()
                        .map(Sharding::Named)
                        .ok_or_else(|| malformed(format!("sharding index {i} out of range"))),
                })
                .collect(),
            (None, Some(list)) => list.iter().map(|s| sharding(s, &unique_meshes)).collect(),
            (None, None) => Ok(Vec::new()),
        }
    };
    let avals = |idxs: Option<flatbuffers::Vector<'_, u32>>,
                 list: Option<schema::Tables<'_, schema::AbstractValue<'_>>>|
     -> Result<Vec<AbstractValue>> {
        match (idxs.filter(|v| !v.is_empty()), list) {
            (Some(idxs), _) => by_index(&unique_avals, idxs.iter(), "aval"),
            (None, Some(list)) => list.iter().map(abstract_value).collect(),
            (None, None) => Ok(Vec::new()),
        }
    };
    let in_avals = avals(e.in_avals_idxs(), e.in_avals())?;
    let out_avals = avals(e.out_avals_idxs(), e.out_avals())?;
    let in_shardings = shardings(e.in_shardings_idxs(), e.in_shardings())?;
    let out_shardings = shardings(e.out_shardings_idxs(), e.out_shardings())?;
    let in_tree = e
        .in_tree()
        .map(pytreedef)
        .transpose()?
        .ok_or_else(|| malformed("no in_tree"))?;
    let out_tree = e
        .out_tree()
        .map(pytreedef)
        .transpose()?
        .ok_or_else(|| malformed("no out_tree"))?;
    if in_tree.num_leaves() != in_avals.len() || out_tree.num_leaves() != out_avals.len() {
        return Err(malformed(format!(
            "trees with {} and {} leaves for {} inputs and {} outputs",
            in_tree.num_leaves(),
            out_tree.num_leaves(),
            in_avals.len(),
            out_avals.len()
        )));
    }
    for (what, shardings, avals) in [
        ("input", &in_shardings, &in_avals),
        ("output", &out_shardings, &out_avals),
    ] {
        if !shardings.is_empty() && shardings.len() != avals.len() {
            return Err(malformed(format!(
                "{} {what} shardings for {} {what}s",
                shardings.len(),
                avals.len()
            )));
        }
    }
    let effects = |v: Option<schema::Tables<'_, schema::Effect<'_>>>| -> Vec<String> {
        v.map(|v| {
            v.iter()
                .map(|e| e.type_name().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
    };
    let disabled_checks = e
        .disabled_checks()
        .map(|v| {
            v.iter()
                .map(|c| match c.kind() {
                    0 => Ok(DisabledCheck::Platform),
                    1 => Ok(DisabledCheck::CustomCall(
                        c.custom_call_target().unwrap_or_default().to_string(),
                    )),
                    2 => Ok(DisabledCheck::ShapeAssertions),
                    other => Err(malformed(format!("unknown disabled check kind {other}"))),
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?
        .unwrap_or_default();
    let module_kept_var_idx: Vec<usize> = e
        .module_kept_var_idx()
        .map(|v| v.iter().map(usize::from).collect())
        .unwrap_or_default();
    if let Some(bad) = module_kept_var_idx.iter().find(|&&i| i >= in_avals.len()) {
        return Err(malformed(format!(
            "kept input {bad} of only {} inputs",
            in_avals.len()
        )));
    }
    let nr_devices = match e.nr_devices() {
        0 => u32::try_from(e.nr_devices_short()).unwrap_or(0),
        n => n,
    };
    let jax_version = e.jax_version().map(str::to_string);
    let format_version = match (&jax_version, e.unique_avals().is_some()) {
        (Some(_), _) => 12,
        (None, true) if unique_meshes.iter().any(|m| m.platform.is_some()) => 11,
        (None, true) => 10,
        (None, false) => 9,
    };
    Ok(Exported {
        serialization_version: version,
        format_version,
        function_name: e.function_name().unwrap_or_default().to_string(),
        jax_version,
        in_tree,
        in_avals,
        out_tree,
        out_avals,
        in_shardings,
        out_shardings,
        nr_devices,
        platforms: strings(e.platforms()),
        ordered_effects: effects(e.ordered_effects()),
        unordered_effects: effects(e.unordered_effects()),
        disabled_checks,
        mlir_module: e
            .mlir_module_serialized()
            .map(|v| v.iter().map(|b| b as u8).collect())
            .unwrap_or_default(),
        calling_convention_version: e.calling_convention_version(),
        module_kept_var_idx,
        uses_global_constants: e.uses_global_constants(),
        vjp: e.vjp().map(exported).transpose()?.map(Box::new),
    })
}

impl Exported {
    /// Reads the bytes of `Exported.serialize()`. Malformed, truncated or
    /// foreign bytes give [`ExportError::Malformed`]; a version outside what
    /// oxla reads gives [`ExportError::UnsupportedVersion`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Exported> {
        if bytes.is_empty() {
            return Err(malformed(
                "it is empty (0 bytes; `Exported.serialize()` writes a flatbuffer)".to_string(),
            ));
        }
        let root = schema::read_root(bytes)
            .map_err(|e| malformed(e.to_string().lines().next().unwrap_or("").to_string()))?;
        exported(root)
    }
}
