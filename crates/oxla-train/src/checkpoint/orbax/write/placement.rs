//! Where a leaf is and how Orbax records and splits it: one device
//! (`SingleDeviceSharding`, the array written whole), or a mesh as a
//! partition spec says (`NamedSharding`, each distinct block written as
//! it is on the devices, in Orbax's write shape), so that Python's
//! restore without a target puts each array back on its mesh.

use oxla::Array;
use oxla::sharding::{AxisType, NamedSharding, Sharding};
use oxla_npy::HostArray;
use serde::Serialize;
use serde_json::{Value as Json, json};

use super::python::json_dumps;

/// How `_sharding` records an array.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Placement {
    /// On one device, as JAX prints it (`cpu:0`).
    Device(String),
    /// Over a mesh (JAX's `NamedSharding`).
    Named {
        /// The mesh's axis sizes, major first.
        mesh_shape: Vec<usize>,
        /// The mesh's axis names.
        axis_names: Vec<String>,
        /// Each axis's type as Python prints it (`AxisType.Auto`).
        axis_types: Vec<&'static str>,
        /// The partition spec: per dimension `null`, an axis name, or a
        /// list of them.
        spec: Vec<Json>,
        /// The mesh's device ids in mesh order.
        device_ids: Vec<i64>,
    },
}

impl Placement {
    /// The JSON text Orbax writes for it in `_sharding`.
    pub(super) fn json(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Device<'a> {
            sharding_type: &'static str,
            device_str: &'a str,
        }
        #[derive(Serialize)]
        struct Mesh {
            mesh: Json,
        }
        #[derive(Serialize)]
        struct Named<'a> {
            sharding_type: &'static str,
            shape: &'a [usize],
            axis_names: &'a [String],
            axis_types: &'a [&'static str],
            partition_spec: &'a [Json],
            device_mesh: Mesh,
        }
        match self {
            Placement::Device(device) => json_dumps(&Device {
                sharding_type: "SingleDeviceSharding",
                device_str: device,
            }),
            Placement::Named {
                mesh_shape,
                axis_names,
                axis_types,
                spec,
                device_ids,
            } => json_dumps(&Named {
                sharding_type: "NamedSharding",
                shape: mesh_shape,
                axis_names,
                axis_types,
                partition_spec: spec,
                device_mesh: Mesh {
                    mesh: nested_ids(device_ids, mesh_shape),
                },
            }),
        }
    }
}

/// `ids` (C order) as nested lists of `{"id": n}` of `shape`.
fn nested_ids(ids: &[i64], shape: &[usize]) -> Json {
    match shape.split_first() {
        None => json!({"id": ids.first().copied().unwrap_or(0)}),
        Some((&n, rest)) => {
            let step = rest.iter().product::<usize>();
            Json::Array(
                (0..n)
                    .map(|i| nested_ids(&ids[i * step..(i + 1) * step], rest))
                    .collect(),
            )
        }
    }
}

/// Python's `str` of an axis type.
fn axis_type_name(axis_type: AxisType) -> &'static str {
    match axis_type {
        AxisType::Auto => "AxisType.Auto",
        AxisType::Explicit => "AxisType.Explicit",
        AxisType::Manual => "AxisType.Manual",
    }
}

/// The named sharding `leaf` has, if any.
fn named_sharding(leaf: &Array) -> Option<NamedSharding> {
    match leaf.sharding()? {
        Sharding::Named(named) => Some(named),
        Sharding::SingleDevice(_) | Sharding::Gspmd { .. } => None,
    }
}

/// A leaf as Orbax writes it: where it is, its write shape (what each
/// writer's slice spans), and its distinct blocks with the index of
/// their first element.
pub(super) struct Placed {
    /// How `_sharding` records it.
    pub placement: Placement,
    /// Orbax's write shape.
    pub write_shape: Vec<usize>,
    /// The distinct blocks: each one's first element and its values.
    pub blocks: Vec<(Vec<usize>, HostArray)>,
}

/// `leaf` as Orbax writes it. An array over a mesh as a partition spec
/// says keeps its `NamedSharding`: its blocks are copied from their
/// devices (a replicated block once) and its write shape is the block's
/// shape, its first dimension divisible by the replica count divided by
/// it (Orbax's replica-parallel write, on by default). An array on one
/// device, or in a tile layout no partition spec expresses, is written
/// whole and recorded on its first device.
pub(super) fn place(leaf: &Array) -> oxla::Result<Placed> {
    let shape: Vec<usize> = leaf.aval()?.shape.iter().map(|&d| d as usize).collect();
    let Some(named) = named_sharding(leaf) else {
        return Ok(Placed {
            placement: Placement::Device(first_device(leaf)?),
            write_shape: shape.clone(),
            blocks: vec![(vec![0; shape.len()], leaf.to_host()?)],
        });
    };
    let mesh = named.mesh();
    let global: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let block: Vec<usize> = named
        .shard_shape(&global)?
        .iter()
        .map(|&d| d as usize)
        .collect();
    let distinct: usize = (0..shape.len()).map(|d| named.tiles(d)).product();
    let replicas = mesh.size() / distinct.max(1);
    let mut write_shape = block.clone();
    if replicas > 1
        && block.iter().all(|&d| d > 0)
        && let Some(axis) = block.iter().position(|d| d.is_multiple_of(replicas))
    {
        write_shape[axis] /= replicas;
    }
    // The spec as written (JAX leaves the dimensions after it unwritten).
    let spec = named
        .spec()
        .entries()
        .iter()
        .map(|entry| match entry.names() {
            [] => Json::Null,
            [axis] => json!(axis),
            axes => json!(axes),
        })
        .collect();
    let blocks = leaf
        .host_shards()?
        .into_iter()
        .map(|b| {
            let origin = b.index.iter().map(|r| r.start as usize).collect();
            (origin, b.data)
        })
        .collect();
    Ok(Placed {
        placement: Placement::Named {
            mesh_shape: mesh.shape(),
            axis_names: mesh.axis_names().iter().map(|s| s.to_string()).collect(),
            axis_types: mesh
                .axis_types()
                .iter()
                .map(|&t| axis_type_name(t))
                .collect(),
            spec,
            device_ids: mesh.device_ids().to_vec(),
        },
        write_shape,
        blocks,
    })
}

/// The device `leaf` is on (its mesh's first for a tile layout) as JAX
/// prints it (`cpu:0`): its platform and id.
fn first_device(leaf: &Array) -> oxla::Result<String> {
    let client = oxla::client()?;
    let device = match leaf.sharding() {
        Some(sharding) => sharding.devices().into_iter().next(),
        None => None,
    };
    let device = match device {
        Some(device) => device,
        None => client.default_device()?,
    };
    Ok(format!("{}:{}", client.platform_name()?, device.id()?))
}
