//! From [`Exported`] values to the bytes of JAX's export flatbuffer, in the
//! layout JAX's own serializer writes: per-argument lists for old readers,
//! plus the tables of unique avals, meshes and named shardings with indices
//! into them. An export with an `OpSharding` proto is written in the older
//! per-argument layout, the only one that holds such shardings.

use flatbuffers::{FlatBufferBuilder, TableFinishedWIPOffset, UnionWIPOffset, WIPOffset};

use crate::model::{
    AbstractMesh, AbstractValue, AxisType, DisabledCheck, Exported, MemorySpace, NamedSharding,
    PyTreeDef, Sharding,
};

/// A finished table.
type Table = WIPOffset<TableFinishedWIPOffset>;
/// Any finished value (vector, string, table), as a table field stores it.
type Offset = WIPOffset<UnionWIPOffset>;

/// The `serialization_version` JAX stores whatever the real format (older
/// readers accepted only 2 and 3).
const STORED_SERIALIZATION_VERSION: u16 = 3;

/// Values stored once and referred to by index (formats 10 and later).
#[derive(Default)]
struct Uniques {
    avals: Vec<AbstractValue>,
    meshes: Vec<AbstractMesh>,
    shardings: Vec<NamedSharding>,
}

impl Uniques {
    fn of(exported: &Exported) -> Uniques {
        let mut uniques = Uniques::default();
        for aval in exported.in_avals.iter().chain(&exported.out_avals) {
            index_of(&mut uniques.avals, aval);
        }
        for sharding in exported.in_shardings.iter().chain(&exported.out_shardings) {
            if let Sharding::Named(named) = sharding {
                index_of(&mut uniques.meshes, &named.mesh);
                index_of(&mut uniques.shardings, named);
            }
        }
        uniques
    }

    /// Index + 1 of a named sharding, 0 for an unspecified one.
    fn sharding_index(&self, sharding: &Sharding) -> u32 {
        match sharding {
            Sharding::Named(named) => 1 + position(&self.shardings, named),
            Sharding::Unspecified | Sharding::Hlo(_) => 0,
        }
    }
}

/// The index of `item` in `list`, appending it first if absent.
fn index_of<T: PartialEq + Clone>(list: &mut Vec<T>, item: &T) -> u32 {
    match list.iter().position(|x| x == item) {
        Some(i) => i as u32,
        None => {
            list.push(item.clone());
            (list.len() - 1) as u32
        }
    }
}

/// The index of an item known to be in `list`.
fn position<T: PartialEq>(list: &[T], item: &T) -> u32 {
    list.iter().position(|x| x == item).unwrap_or(0) as u32
}

struct Writer<'b> {
    fbb: FlatBufferBuilder<'b>,
}

impl Writer<'_> {
    fn strings<S: AsRef<str>>(&mut self, items: &[S]) -> Offset {
        let offsets: Vec<_> = items
            .iter()
            .map(|s| self.fbb.create_string(s.as_ref()))
            .collect();
        self.fbb.create_vector(&offsets).as_union_value()
    }

    fn tables(&mut self, tables: &[Table]) -> Offset {
        self.fbb.create_vector(tables).as_union_value()
    }

    fn bytes(&mut self, bytes: &[u8]) -> Offset {
        let signed: Vec<i8> = bytes.iter().map(|&b| b as i8).collect();
        self.fbb.create_vector(&signed).as_union_value()
    }

    fn pytreedef(&mut self, tree: &PyTreeDef) -> Table {
        let (kind, children, names, custom): (i8, &[PyTreeDef], Vec<&str>, _) = match tree {
            PyTreeDef::Leaf => (0, &[], Vec::new(), None),
            PyTreeDef::None => (1, &[], Vec::new(), None),
            PyTreeDef::Tuple(c) => (2, c.as_slice(), Vec::new(), None),
            PyTreeDef::List(c) => (3, c.as_slice(), Vec::new(), None),
            PyTreeDef::Dict(entries) => {
                let keys = entries.iter().map(|(k, _)| k.as_str()).collect();
                let children: Vec<PyTreeDef> = entries.iter().map(|(_, c)| c.clone()).collect();
                return self.pytree_node(4, &children, keys, None);
            }
            PyTreeDef::Custom {
                name,
                auxdata,
                children,
            } => (5, children.as_slice(), Vec::new(), Some((name, auxdata))),
        };
        self.pytree_node(kind, children, names, custom)
    }

    fn pytree_node(
        &mut self,
        kind: i8,
        children: &[PyTreeDef],
        names: Vec<&str>,
        custom: Option<(&String, &Vec<u8>)>,
    ) -> Table {
        let children: Vec<Table> = children.iter().map(|c| self.pytreedef(c)).collect();
        let children = (!children.is_empty()).then(|| self.tables(&children));
        let names = (kind == 4 && !names.is_empty()).then(|| self.strings(&names));
        let custom =
            custom.map(|(name, auxdata)| (self.fbb.create_string(name), self.bytes(auxdata)));
        let start = self.fbb.start_table();
        self.fbb.push_slot::<i8>(4, kind, 0);
        if let Some(children) = children {
            self.fbb.push_slot_always(6, children);
        }
        if let Some(names) = names {
            self.fbb.push_slot_always(8, names);
        }
        if let Some((name, auxdata)) = custom {
            self.fbb.push_slot_always(10, name);
            self.fbb.push_slot_always(12, auxdata);
        }
        self.fbb.end_table(start)
    }

    fn aval(&mut self, aval: &AbstractValue) -> Table {
        let dims: Vec<String> = aval.shape.iter().map(ToString::to_string).collect();
        let shape = self.strings(&dims);
        let start = self.fbb.start_table();
        self.fbb.push_slot::<i8>(4, 0, 0);
        self.fbb.push_slot_always(6, shape);
        self.fbb.push_slot::<i8>(8, aval.dtype.tag(), 0);
        let memory_space: i8 = match aval.memory_space {
            MemorySpace::Unspecified => 0,
            MemorySpace::Device => 1,
            MemorySpace::Host => 2,
            MemorySpace::Any => 3,
        };
        self.fbb.push_slot::<i8>(10, memory_space, 0);
        self.fbb.end_table(start)
    }

    fn mesh(&mut self, mesh: &AbstractMesh) -> Table {
        let sizes = self.fbb.create_vector(&mesh.axis_sizes);
        let names = self.strings(&mesh.axis_names);
        let types: Vec<i8> = mesh
            .axis_types
            .iter()
            .map(|t| match t {
                AxisType::Unspecified => 0,
                AxisType::Auto => 1,
                AxisType::Explicit => 2,
                AxisType::Manual => 3,
            })
            .collect();
        let types = self.fbb.create_vector(&types);
        let device = (mesh.device_kind.is_some() || mesh.platform.is_some()).then(|| {
            let kind = mesh
                .device_kind
                .as_deref()
                .map(|k| self.fbb.create_string(k));
            let platform = mesh.platform.as_deref().map(|p| self.fbb.create_string(p));
            let start = self.fbb.start_table();
            if let Some(kind) = kind {
                self.fbb.push_slot_always(4, kind);
            }
            if let Some(cores) = mesh.num_cores {
                self.fbb.push_slot_always::<u32>(6, cores);
            }
            if let Some(platform) = platform {
                self.fbb.push_slot_always(8, platform);
            }
            self.fbb.end_table(start)
        });
        let start = self.fbb.start_table();
        self.fbb.push_slot_always(4, sizes);
        self.fbb.push_slot_always(6, names);
        self.fbb.push_slot_always(8, types);
        if let Some(device) = device {
            self.fbb.push_slot_always(10, device);
        }
        self.fbb.end_table(start)
    }

    fn named_sharding(&mut self, sharding: &NamedSharding, mesh_index: Option<u32>) -> Table {
        let mesh = self.mesh(&sharding.mesh);
        let partitions: Vec<Table> = sharding
            .spec
            .iter()
            .map(|axes| {
                let axes = self.strings(axes);
                let start = self.fbb.start_table();
                self.fbb.push_slot_always(4, axes);
                self.fbb.end_table(start)
            })
            .collect();
        let partitions = self.tables(&partitions);
        let reduced = self.strings(&sharding.reduced);
        let unreduced = self.strings(&sharding.unreduced);
        let spec = {
            let start = self.fbb.start_table();
            self.fbb.push_slot_always(4, partitions);
            self.fbb.push_slot_always(6, reduced);
            self.fbb.push_slot_always(8, unreduced);
            self.fbb.end_table(start)
        };
        let memory_kind = sharding
            .memory_kind
            .as_deref()
            .map(|k| self.fbb.create_string(k));
        let start = self.fbb.start_table();
        self.fbb.push_slot_always(4, mesh);
        self.fbb.push_slot_always(6, spec);
        if let Some(kind) = memory_kind {
            self.fbb.push_slot_always(8, kind);
        }
        if let Some(index) = mesh_index {
            self.fbb.push_slot_always::<u32>(10, index);
        }
        self.fbb.end_table(start)
    }

    fn sharding(&mut self, sharding: &Sharding, uniques: &Uniques) -> Table {
        let (proto, named) = match sharding {
            Sharding::Unspecified => (None, None),
            Sharding::Hlo(proto) => (Some(self.bytes(proto)), None),
            Sharding::Named(named) => {
                let mesh_index = position(&uniques.meshes, &named.mesh);
                (None, Some(self.named_sharding(named, Some(mesh_index))))
            }
        };
        let start = self.fbb.start_table();
        if let Some(proto) = proto {
            self.fbb.push_slot_always(6, proto);
        }
        if let Some(named) = named {
            self.fbb.push_slot_always(8, named);
        }
        self.fbb.end_table(start)
    }

    fn effects(&mut self, names: &[String]) -> Offset {
        let tables: Vec<Table> = names
            .iter()
            .map(|name| {
                let name = self.fbb.create_string(name);
                let start = self.fbb.start_table();
                self.fbb.push_slot_always(4, name);
                self.fbb.end_table(start)
            })
            .collect();
        self.tables(&tables)
    }

    fn disabled_check(&mut self, check: &DisabledCheck) -> Table {
        let (kind, target) = match check {
            DisabledCheck::Platform => (0i8, None),
            DisabledCheck::CustomCall(target) => (1, Some(self.fbb.create_string(target))),
            DisabledCheck::ShapeAssertions => (2, None),
        };
        let start = self.fbb.start_table();
        self.fbb.push_slot::<i8>(4, kind, 0);
        if let Some(target) = target {
            self.fbb.push_slot_always(6, target);
        }
        self.fbb.end_table(start)
    }

    fn exported(&mut self, e: &Exported) -> Table {
        let has_hlo_shardings = e
            .in_shardings
            .iter()
            .chain(&e.out_shardings)
            .any(|s| matches!(s, Sharding::Hlo(_)));
        let uniques = if has_hlo_shardings {
            Uniques::default()
        } else {
            Uniques::of(e)
        };
        let function_name = self.fbb.create_string(&e.function_name);
        let in_tree = self.pytreedef(&e.in_tree);
        let in_avals: Vec<Table> = e.in_avals.iter().map(|a| self.aval(a)).collect();
        let in_avals = self.tables(&in_avals);
        let out_tree = self.pytreedef(&e.out_tree);
        let out_avals: Vec<Table> = e.out_avals.iter().map(|a| self.aval(a)).collect();
        let out_avals = self.tables(&out_avals);
        let in_shardings: Vec<Table> = e
            .in_shardings
            .iter()
            .map(|s| self.sharding(s, &uniques))
            .collect();
        let in_shardings = self.tables(&in_shardings);
        let out_shardings: Vec<Table> = e
            .out_shardings
            .iter()
            .map(|s| self.sharding(s, &uniques))
            .collect();
        let out_shardings = self.tables(&out_shardings);
        let ordered_effects = self.effects(&e.ordered_effects);
        let unordered_effects = self.effects(&e.unordered_effects);
        let checks: Vec<Table> = e
            .disabled_checks
            .iter()
            .map(|c| self.disabled_check(c))
            .collect();
        let disabled_checks = self.tables(&checks);
        let platforms = self.strings(&e.platforms);
        let module = self.bytes(&e.mlir_module);
        let kept: Vec<u16> = e.module_kept_var_idx.iter().map(|&i| i as u16).collect();
        let kept = self.fbb.create_vector(&kept);
        let vjp = e.vjp.as_ref().map(|vjp| self.exported(vjp));
        let indexed = (!has_hlo_shardings).then(|| {
            let avals: Vec<Table> = uniques.avals.iter().map(|a| self.aval(a)).collect();
            let avals = self.tables(&avals);
            let meshes: Vec<Table> = uniques.meshes.iter().map(|m| self.mesh(m)).collect();
            let meshes = self.tables(&meshes);
            let shardings: Vec<Table> = uniques
                .shardings
                .iter()
                .map(|s| {
                    let mesh_index = position(&uniques.meshes, &s.mesh);
                    self.named_sharding(s, Some(mesh_index))
                })
                .collect();
            let shardings = self.tables(&shardings);
            let aval_idxs = |avals: &[AbstractValue]| -> Vec<u32> {
                avals.iter().map(|a| position(&uniques.avals, a)).collect()
            };
            let sharding_idxs = |shardings: &[Sharding]| -> Vec<u32> {
                shardings
                    .iter()
                    .map(|s| uniques.sharding_index(s))
                    .collect()
            };
            let in_idxs = self.fbb.create_vector(&aval_idxs(&e.in_avals));
            let out_idxs = self.fbb.create_vector(&aval_idxs(&e.out_avals));
            let in_sh = self.fbb.create_vector(&sharding_idxs(&e.in_shardings));
            let out_sh = self.fbb.create_vector(&sharding_idxs(&e.out_shardings));
            (avals, meshes, shardings, in_idxs, out_idxs, in_sh, out_sh)
        });
        let jax_version = e.jax_version.as_deref().map(|v| self.fbb.create_string(v));

        let start = self.fbb.start_table();
        self.fbb
            .push_slot::<u16>(4, STORED_SERIALIZATION_VERSION, 0);
        self.fbb.push_slot_always(6, function_name);
        self.fbb.push_slot_always(8, in_tree);
        self.fbb.push_slot_always(10, in_avals);
        self.fbb.push_slot_always(12, out_tree);
        self.fbb.push_slot_always(14, out_avals);
        self.fbb.push_slot_always(18, in_shardings);
        self.fbb.push_slot_always(20, out_shardings);
        self.fbb.push_slot_always(22, platforms);
        self.fbb.push_slot_always(24, ordered_effects);
        self.fbb.push_slot_always(26, unordered_effects);
        self.fbb.push_slot_always(28, disabled_checks);
        self.fbb.push_slot_always(30, module);
        self.fbb
            .push_slot::<u16>(32, e.calling_convention_version, 0);
        self.fbb.push_slot_always(34, kept);
        self.fbb
            .push_slot::<bool>(36, e.uses_global_constants, false);
        if let Some(vjp) = vjp {
            self.fbb.push_slot_always(38, vjp);
        }
        self.fbb.push_slot::<u32>(40, e.nr_devices, 0);
        if let Some((avals, meshes, shardings, in_idxs, out_idxs, in_sh, out_sh)) = indexed {
            self.fbb.push_slot_always(42, avals);
            self.fbb.push_slot_always(44, meshes);
            self.fbb.push_slot_always(46, shardings);
            self.fbb.push_slot_always(48, in_idxs);
            self.fbb.push_slot_always(50, out_idxs);
            self.fbb.push_slot_always(52, in_sh);
            self.fbb.push_slot_always(54, out_sh);
        }
        if let Some(version) = jax_version {
            self.fbb.push_slot_always(56, version);
        }
        self.fbb.end_table(start)
    }
}

impl Exported {
    /// The bytes of this export as JAX's `Exported.serialize()` writes
    /// them, which `jax.export.deserialize` loads (the vjp too, when
    /// present). [`Exported::from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut writer = Writer {
            fbb: FlatBufferBuilder::with_capacity(self.mlir_module.len() + 4096),
        };
        let root = writer.exported(self);
        writer.fbb.finish(root, None);
        writer.fbb.finished_data().to_vec()
    }
}
