//! The tables of JAX's export flatbuffer (`jax/_src/export/serialization.fbs`),
//! as typed, verified views over the bytes.
//!
//! Field slots follow the schema's field order (slot of field `n` = 4 + 2n).
//! Every table has a verifier, so [`read_root`] checks the whole buffer
//! (offsets, lengths, UTF-8, nesting depth) before any accessor runs; after
//! that the accessors cannot read out of bounds.

use flatbuffers::{
    Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifiable, Verifier,
    VerifierOptions,
};

/// A vector of tables.
pub(crate) type Tables<'a, T> = Vector<'a, ForwardsUOffset<T>>;

/// Defines a table view, its `Follow` and its verifier from one field list.
macro_rules! table {
    ($name:ident { $($field:ident: $ty:ty = $slot:expr),* $(,)? }) => {
        #[derive(Clone, Copy)]
        pub(crate) struct $name<'a> {
            tab: Table<'a>,
        }

        impl<'a> Follow<'a> for $name<'a> {
            type Inner = $name<'a>;

            unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
                // SAFETY: `loc` is a table position in `buf` (flatbuffers'
                // contract for `follow`, established by the verifier).
                Self { tab: unsafe { Table::new(buf, loc) } }
            }
        }

        impl Verifiable for $name<'_> {
            fn run_verifier(v: &mut Verifier<'_, '_>, pos: usize) -> Result<(), InvalidFlatbuffer> {
                v.visit_table(pos)?
                    $(.visit_field::<$ty>(stringify!($field), $slot, false)?)*
                    .finish();
                Ok(())
            }
        }
    };
}

/// Reads an optional field of a verified table.
fn field<'a, T: Follow<'a> + 'a>(tab: &Table<'a>, slot: VOffsetT) -> Option<T::Inner> {
    // SAFETY: the table was verified with this field's type at this slot.
    unsafe { tab.get::<T>(slot, None) }
}

table!(PyTreeDef {
    kind: i8 = 4,
    children: ForwardsUOffset<Tables<'_, PyTreeDef<'_>>> = 6,
    children_names: ForwardsUOffset<Tables<'_, &str>> = 8,
    custom_name: ForwardsUOffset<&str> = 10,
    custom_auxdata: ForwardsUOffset<Vector<'_, i8>> = 12,
});

impl<'a> PyTreeDef<'a> {
    pub(crate) fn kind(&self) -> i8 {
        field::<i8>(&self.tab, 4).unwrap_or(0)
    }
    pub(crate) fn children(&self) -> Option<Tables<'a, PyTreeDef<'a>>> {
        field::<ForwardsUOffset<Tables<'a, PyTreeDef<'a>>>>(&self.tab, 6)
    }
    pub(crate) fn children_names(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 8)
    }
    pub(crate) fn custom_name(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 10)
    }
    pub(crate) fn custom_auxdata(&self) -> Option<Vector<'a, i8>> {
        field::<ForwardsUOffset<Vector<'a, i8>>>(&self.tab, 12)
    }
}

table!(AbstractDevice {
    device_kind: ForwardsUOffset<&str> = 4,
    num_cores: u32 = 6,
    platform: ForwardsUOffset<&str> = 8,
});

impl<'a> AbstractDevice<'a> {
    pub(crate) fn device_kind(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 4)
    }
    pub(crate) fn num_cores(&self) -> Option<u32> {
        field::<u32>(&self.tab, 6)
    }
    pub(crate) fn platform(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 8)
    }
}

table!(AbstractMesh {
    axis_sizes: ForwardsUOffset<Vector<'_, u32>> = 4,
    axis_names: ForwardsUOffset<Tables<'_, &str>> = 6,
    axis_types: ForwardsUOffset<Vector<'_, i8>> = 8,
    abstract_device: ForwardsUOffset<AbstractDevice<'_>> = 10,
});

impl<'a> AbstractMesh<'a> {
    pub(crate) fn axis_sizes(&self) -> Option<Vector<'a, u32>> {
        field::<ForwardsUOffset<Vector<'a, u32>>>(&self.tab, 4)
    }
    pub(crate) fn axis_names(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 6)
    }
    pub(crate) fn axis_types(&self) -> Option<Vector<'a, i8>> {
        field::<ForwardsUOffset<Vector<'a, i8>>>(&self.tab, 8)
    }
    pub(crate) fn abstract_device(&self) -> Option<AbstractDevice<'a>> {
        field::<ForwardsUOffset<AbstractDevice<'a>>>(&self.tab, 10)
    }
}

table!(PartitionSpecOneAxis {
    axes: ForwardsUOffset<Tables<'_, &str>> = 4,
});

impl<'a> PartitionSpecOneAxis<'a> {
    pub(crate) fn axes(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 4)
    }
}

table!(PartitionSpec {
    partitions: ForwardsUOffset<Tables<'_, PartitionSpecOneAxis<'_>>> = 4,
    reduced: ForwardsUOffset<Tables<'_, &str>> = 6,
    unreduced: ForwardsUOffset<Tables<'_, &str>> = 8,
});

impl<'a> PartitionSpec<'a> {
    pub(crate) fn partitions(&self) -> Option<Tables<'a, PartitionSpecOneAxis<'a>>> {
        field::<ForwardsUOffset<Tables<'a, PartitionSpecOneAxis<'a>>>>(&self.tab, 4)
    }
    pub(crate) fn reduced(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 6)
    }
    pub(crate) fn unreduced(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 8)
    }
}

table!(NamedSharding {
    mesh: ForwardsUOffset<AbstractMesh<'_>> = 4,
    spec: ForwardsUOffset<PartitionSpec<'_>> = 6,
    memory_kind: ForwardsUOffset<&str> = 8,
    abstract_mesh_idx: u32 = 10,
});

impl<'a> NamedSharding<'a> {
    pub(crate) fn mesh(&self) -> Option<AbstractMesh<'a>> {
        field::<ForwardsUOffset<AbstractMesh<'a>>>(&self.tab, 4)
    }
    pub(crate) fn spec(&self) -> Option<PartitionSpec<'a>> {
        field::<ForwardsUOffset<PartitionSpec<'a>>>(&self.tab, 6)
    }
    pub(crate) fn memory_kind(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 8)
    }
    /// Whether `abstract_mesh_idx` is present (v10 files store the mesh
    /// once in `unique_abstract_meshes`).
    pub(crate) fn abstract_mesh_idx(&self) -> Option<u32> {
        field::<u32>(&self.tab, 10)
    }
}

table!(AbstractValue {
    kind: i8 = 4,
    shape: ForwardsUOffset<Tables<'_, &str>> = 6,
    dtype: i8 = 8,
    memory_space: i8 = 10,
});

impl<'a> AbstractValue<'a> {
    pub(crate) fn kind(&self) -> i8 {
        field::<i8>(&self.tab, 4).unwrap_or(0)
    }
    pub(crate) fn shape(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 6)
    }
    pub(crate) fn dtype(&self) -> i8 {
        field::<i8>(&self.tab, 8).unwrap_or(0)
    }
    pub(crate) fn memory_space(&self) -> i8 {
        field::<i8>(&self.tab, 10).unwrap_or(0)
    }
}

table!(Sharding {
    kind: i8 = 4,
    hlo_sharding_proto: ForwardsUOffset<Vector<'_, i8>> = 6,
    named_sharding: ForwardsUOffset<NamedSharding<'_>> = 8,
});

impl<'a> Sharding<'a> {
    pub(crate) fn hlo_sharding_proto(&self) -> Option<Vector<'a, i8>> {
        field::<ForwardsUOffset<Vector<'a, i8>>>(&self.tab, 6)
    }
    pub(crate) fn named_sharding(&self) -> Option<NamedSharding<'a>> {
        field::<ForwardsUOffset<NamedSharding<'a>>>(&self.tab, 8)
    }
}

table!(Effect {
    type_name: ForwardsUOffset<&str> = 4,
});

impl<'a> Effect<'a> {
    pub(crate) fn type_name(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 4)
    }
}

table!(DisabledSafetyCheck {
    kind: i8 = 4,
    custom_call_target: ForwardsUOffset<&str> = 6,
});

impl<'a> DisabledSafetyCheck<'a> {
    pub(crate) fn kind(&self) -> i8 {
        field::<i8>(&self.tab, 4).unwrap_or(0)
    }
    pub(crate) fn custom_call_target(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 6)
    }
}

table!(Exported {
    serialization_version: u16 = 4,
    function_name: ForwardsUOffset<&str> = 6,
    in_tree: ForwardsUOffset<PyTreeDef<'_>> = 8,
    in_avals: ForwardsUOffset<Tables<'_, AbstractValue<'_>>> = 10,
    out_tree: ForwardsUOffset<PyTreeDef<'_>> = 12,
    out_avals: ForwardsUOffset<Tables<'_, AbstractValue<'_>>> = 14,
    nr_devices_short: i16 = 16,
    in_shardings: ForwardsUOffset<Tables<'_, Sharding<'_>>> = 18,
    out_shardings: ForwardsUOffset<Tables<'_, Sharding<'_>>> = 20,
    platforms: ForwardsUOffset<Tables<'_, &str>> = 22,
    ordered_effects: ForwardsUOffset<Tables<'_, Effect<'_>>> = 24,
    unordered_effects: ForwardsUOffset<Tables<'_, Effect<'_>>> = 26,
    disabled_checks: ForwardsUOffset<Tables<'_, DisabledSafetyCheck<'_>>> = 28,
    mlir_module_serialized: ForwardsUOffset<Vector<'_, i8>> = 30,
    calling_convention_version: u16 = 32,
    module_kept_var_idx: ForwardsUOffset<Vector<'_, u16>> = 34,
    uses_global_constants: bool = 36,
    vjp: ForwardsUOffset<Exported<'_>> = 38,
    nr_devices: u32 = 40,
    unique_avals: ForwardsUOffset<Tables<'_, AbstractValue<'_>>> = 42,
    unique_abstract_meshes: ForwardsUOffset<Tables<'_, AbstractMesh<'_>>> = 44,
    unique_named_shardings: ForwardsUOffset<Tables<'_, NamedSharding<'_>>> = 46,
    in_avals_idxs: ForwardsUOffset<Vector<'_, u32>> = 48,
    out_avals_idxs: ForwardsUOffset<Vector<'_, u32>> = 50,
    in_shardings_idxs: ForwardsUOffset<Vector<'_, u32>> = 52,
    out_shardings_idxs: ForwardsUOffset<Vector<'_, u32>> = 54,
    jax_version: ForwardsUOffset<&str> = 56,
});

/// Accessors of `Exported`, one per schema field.
impl<'a> Exported<'a> {
    pub(crate) fn serialization_version(&self) -> u16 {
        field::<u16>(&self.tab, 4).unwrap_or(0)
    }
    pub(crate) fn function_name(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 6)
    }
    pub(crate) fn in_tree(&self) -> Option<PyTreeDef<'a>> {
        field::<ForwardsUOffset<PyTreeDef<'a>>>(&self.tab, 8)
    }
    pub(crate) fn in_avals(&self) -> Option<Tables<'a, AbstractValue<'a>>> {
        field::<ForwardsUOffset<Tables<'a, AbstractValue<'a>>>>(&self.tab, 10)
    }
    pub(crate) fn out_tree(&self) -> Option<PyTreeDef<'a>> {
        field::<ForwardsUOffset<PyTreeDef<'a>>>(&self.tab, 12)
    }
    pub(crate) fn out_avals(&self) -> Option<Tables<'a, AbstractValue<'a>>> {
        field::<ForwardsUOffset<Tables<'a, AbstractValue<'a>>>>(&self.tab, 14)
    }
    pub(crate) fn nr_devices_short(&self) -> i16 {
        field::<i16>(&self.tab, 16).unwrap_or(0)
    }
    pub(crate) fn in_shardings(&self) -> Option<Tables<'a, Sharding<'a>>> {
        field::<ForwardsUOffset<Tables<'a, Sharding<'a>>>>(&self.tab, 18)
    }
    pub(crate) fn out_shardings(&self) -> Option<Tables<'a, Sharding<'a>>> {
        field::<ForwardsUOffset<Tables<'a, Sharding<'a>>>>(&self.tab, 20)
    }
    pub(crate) fn platforms(&self) -> Option<Tables<'a, &'a str>> {
        field::<ForwardsUOffset<Tables<'a, &'a str>>>(&self.tab, 22)
    }
    pub(crate) fn ordered_effects(&self) -> Option<Tables<'a, Effect<'a>>> {
        field::<ForwardsUOffset<Tables<'a, Effect<'a>>>>(&self.tab, 24)
    }
    pub(crate) fn unordered_effects(&self) -> Option<Tables<'a, Effect<'a>>> {
        field::<ForwardsUOffset<Tables<'a, Effect<'a>>>>(&self.tab, 26)
    }
    pub(crate) fn disabled_checks(&self) -> Option<Tables<'a, DisabledSafetyCheck<'a>>> {
        field::<ForwardsUOffset<Tables<'a, DisabledSafetyCheck<'a>>>>(&self.tab, 28)
    }
    pub(crate) fn mlir_module_serialized(&self) -> Option<Vector<'a, i8>> {
        field::<ForwardsUOffset<Vector<'a, i8>>>(&self.tab, 30)
    }
    pub(crate) fn calling_convention_version(&self) -> u16 {
        field::<u16>(&self.tab, 32).unwrap_or(0)
    }
    pub(crate) fn module_kept_var_idx(&self) -> Option<Vector<'a, u16>> {
        field::<ForwardsUOffset<Vector<'a, u16>>>(&self.tab, 34)
    }
    pub(crate) fn uses_global_constants(&self) -> bool {
        field::<bool>(&self.tab, 36).unwrap_or(false)
    }
    pub(crate) fn vjp(&self) -> Option<Exported<'a>> {
        field::<ForwardsUOffset<Exported<'a>>>(&self.tab, 38)
    }
    pub(crate) fn nr_devices(&self) -> u32 {
        field::<u32>(&self.tab, 40).unwrap_or(0)
    }
    pub(crate) fn unique_avals(&self) -> Option<Tables<'a, AbstractValue<'a>>> {
        field::<ForwardsUOffset<Tables<'a, AbstractValue<'a>>>>(&self.tab, 42)
    }
    pub(crate) fn unique_abstract_meshes(&self) -> Option<Tables<'a, AbstractMesh<'a>>> {
        field::<ForwardsUOffset<Tables<'a, AbstractMesh<'a>>>>(&self.tab, 44)
    }
    pub(crate) fn unique_named_shardings(&self) -> Option<Tables<'a, NamedSharding<'a>>> {
        field::<ForwardsUOffset<Tables<'a, NamedSharding<'a>>>>(&self.tab, 46)
    }
    pub(crate) fn in_avals_idxs(&self) -> Option<Vector<'a, u32>> {
        field::<ForwardsUOffset<Vector<'a, u32>>>(&self.tab, 48)
    }
    pub(crate) fn out_avals_idxs(&self) -> Option<Vector<'a, u32>> {
        field::<ForwardsUOffset<Vector<'a, u32>>>(&self.tab, 50)
    }
    pub(crate) fn in_shardings_idxs(&self) -> Option<Vector<'a, u32>> {
        field::<ForwardsUOffset<Vector<'a, u32>>>(&self.tab, 52)
    }
    pub(crate) fn out_shardings_idxs(&self) -> Option<Vector<'a, u32>> {
        field::<ForwardsUOffset<Vector<'a, u32>>>(&self.tab, 54)
    }
    pub(crate) fn jax_version(&self) -> Option<&'a str> {
        field::<ForwardsUOffset<&'a str>>(&self.tab, 56)
    }
}

/// Verifies the whole buffer and returns its root `Exported` table.
pub(crate) fn read_root(bytes: &[u8]) -> Result<Exported<'_>, InvalidFlatbuffer> {
    let options = VerifierOptions {
        max_depth: 64,
        max_tables: 10_000_000,
        max_apparent_size: 1 << 34,
        ignore_missing_null_terminator: false,
    };
    flatbuffers::root_with_opts::<Exported>(&options, bytes)
}
