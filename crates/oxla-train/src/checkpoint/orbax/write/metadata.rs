//! Orbax's own files beside the arrays, as Orbax 0.12 writes them for a
//! `StandardCheckpointer` save: `_METADATA` (the tree: each leaf's key path
//! with its keys' kinds, so a restore without a target rebuilds the dicts
//! and lists), `_sharding` (each array's device), `array_metadatas/process_0`
//! (each array's shape and chunk shape), `_CHECKPOINT_METADATA` (the
//! handler and the times) and `commit_success.txt`.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use oxla::pytree::TreeDef;
use serde::{Serialize, Serializer};

use super::SaveOptions;
use super::placement::Placement;
use super::python::{json_dumps, tuple_repr};

/// The handler Orbax records for `ocp.StandardCheckpointer`.
const STANDARD_HANDLER: &str =
    "orbax.checkpoint._src.handlers.standard_checkpoint_handler.StandardCheckpointHandler";

/// How Orbax types a key of a leaf's path (`KeyType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyKind {
    /// A list or tuple index (JAX's `SequenceKey`).
    Sequence,
    /// A dict key or a struct field (`DictKey`, `GetAttrKey`).
    Dict,
}

impl KeyKind {
    /// Orbax's number for the kind.
    fn number(self) -> u8 {
        match self {
            KeyKind::Sequence => 1,
            KeyKind::Dict => 2,
        }
    }
}

/// A leaf's path: its keys from the root.
pub(super) type KeyPath = Vec<(String, KeyKind)>;

/// An empty value Orbax records in `_METADATA` without an array, so that a
/// restore without a target gives it back (Orbax's "empty values": its
/// `value_type`s `None`, `Dict`, `List` and `Tuple`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EmptyValue {
    /// `None`.
    None,
    /// A map with no keys, or a struct with no fields (whose fields Orbax
    /// would see as a dict's keys).
    Dict,
    /// A list with no items.
    List,
    /// A tuple with no items.
    Tuple,
}

impl EmptyValue {
    /// Orbax's `value_type` for it.
    fn value_type(self) -> &'static str {
        match self {
            EmptyValue::None => "None",
            EmptyValue::Dict => "Dict",
            EmptyValue::List => "List",
            EmptyValue::Tuple => "Tuple",
        }
    }
}

/// What a pytree holds below its root, in its leaf order, as Orbax's
/// `_METADATA` lists it: the arrays' key paths (one per leaf, in the order
/// of the tree's leaves) and, between them, the empty values.
#[derive(Debug, Default)]
pub(super) struct TreeLayout {
    /// Each leaf's key path, in leaf order.
    pub arrays: Vec<KeyPath>,
    /// Each empty value's key path and kind, with the number of leaves
    /// before it.
    pub empties: Vec<(usize, KeyPath, EmptyValue)>,
}

/// The arrays and empty values below the root of `def`. An empty root is
/// neither (Orbax refuses to save it); a static value is not Orbax's to
/// see.
pub(super) fn tree_layout(def: &TreeDef) -> TreeLayout {
    let mut layout = TreeLayout::default();
    walk(def, &mut Vec::new(), &mut layout);
    layout
}

fn walk(def: &TreeDef, path: &mut KeyPath, out: &mut TreeLayout) {
    fn below(
        key: String,
        kind: KeyKind,
        child: &TreeDef,
        path: &mut KeyPath,
        out: &mut TreeLayout,
    ) {
        path.push((key, kind));
        walk(child, path, out);
        path.pop();
    }
    // An empty value is recorded below the root only: Orbax refuses an
    // empty tree.
    let mut empty = |kind: EmptyValue, path: &KeyPath| {
        if !path.is_empty() {
            out.empties.push((out.arrays.len(), path.clone(), kind));
        }
    };
    match def {
        TreeDef::Leaf => out.arrays.push(path.clone()),
        TreeDef::Static(_) => {}
        TreeDef::None => empty(EmptyValue::None, path),
        TreeDef::Tuple(children) if children.is_empty() => empty(EmptyValue::Tuple, path),
        TreeDef::List(children) if children.is_empty() => empty(EmptyValue::List, path),
        TreeDef::Dict(children) if children.is_empty() => empty(EmptyValue::Dict, path),
        TreeDef::Struct(_, fields) if fields.is_empty() => empty(EmptyValue::Dict, path),
        TreeDef::Tuple(children) | TreeDef::List(children) => {
            for (i, child) in children.iter().enumerate() {
                below(i.to_string(), KeyKind::Sequence, child, path, out);
            }
        }
        TreeDef::Dict(children) => {
            for (key, child) in children {
                below(key.clone(), KeyKind::Dict, child, path, out);
            }
        }
        TreeDef::Struct(_, fields) => {
            for (field, child) in fields {
                below(field.to_string(), KeyKind::Dict, child, path, out);
            }
        }
    }
}

/// Orbax's name of the leaf at `path`: its keys joined by `.`.
pub(super) fn param_name(path: &KeyPath) -> String {
    let keys: Vec<&str> = path.iter().map(|(k, _)| k.as_str()).collect();
    keys.join(".")
}

/// What the metadata files say of one saved array.
pub(super) struct ArrayRecord {
    /// The leaf's key path.
    pub path: KeyPath,
    /// Orbax's name ([`param_name`]).
    pub name: String,
    /// Orbax's write shape: the array's, or a block's over a mesh.
    pub write_shape: Vec<usize>,
    /// Its chunks' shape.
    pub chunks: Vec<usize>,
    /// Where it was.
    pub placement: Placement,
}

/// `_METADATA`: the tree of every array and empty value (`empties`, as
/// [`TreeLayout`] gives them), in leaf order, and how they are stored
/// (`options`' `use_ocdbt` and `zarr3`).
pub(super) fn tree_metadata(
    arrays: &[ArrayRecord],
    empties: &[(usize, KeyPath, EmptyValue)],
    options: &SaveOptions,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct Root<'a> {
        tree_metadata: Entries<'a>,
        use_ocdbt: bool,
        use_zarr3: bool,
        store_array_data_equal_to_fill_value: bool,
        custom_metadata: Option<()>,
    }
    json_dumps(&Root {
        tree_metadata: Entries { arrays, empties },
        use_ocdbt: options.use_ocdbt,
        use_zarr3: options.zarr3,
        store_array_data_equal_to_fill_value: true,
        custom_metadata: None,
    })
}

/// The `tree_metadata` map: by `str(tuple(keys))`, each array's and empty
/// value's keys and value type, in leaf order.
struct Entries<'a> {
    arrays: &'a [ArrayRecord],
    empties: &'a [(usize, KeyPath, EmptyValue)],
}

impl<'a> Serialize for Entries<'a> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Key<'a> {
            key: &'a str,
            key_type: u8,
        }
        #[derive(Serialize)]
        struct Value<'a> {
            value_type: &'static str,
            skip_deserialize: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            write_shape: Option<&'a [usize]>,
        }
        #[derive(Serialize)]
        struct Entry<'a> {
            key_metadata: Vec<Key<'a>>,
            value_metadata: Value<'a>,
        }
        let entry = |path: &'a KeyPath, value_metadata: Value<'a>| {
            let keys: Vec<&str> = path.iter().map(|(k, _)| k.as_str()).collect();
            let key_metadata = path
                .iter()
                .map(|(key, kind)| Key {
                    key,
                    key_type: kind.number(),
                })
                .collect();
            let entry = Entry {
                key_metadata,
                value_metadata,
            };
            (tuple_repr(&keys), entry)
        };
        let array = |array: &'a ArrayRecord| {
            let value = Value {
                value_type: "jax.Array",
                skip_deserialize: false,
                write_shape: Some(&array.write_shape),
            };
            entry(&array.path, value)
        };
        let empty = |(_, path, kind): &'a (usize, KeyPath, EmptyValue)| {
            let value = Value {
                value_type: kind.value_type(),
                skip_deserialize: true,
                write_shape: None,
            };
            entry(path, value)
        };
        // Merged in leaf order: an empty value after `before` leaves goes
        // before the array of leaf `before`.
        let mut empties = self.empties.iter().peekable();
        let mut entries = Vec::with_capacity(self.arrays.len() + self.empties.len());
        for (index, record) in self.arrays.iter().enumerate() {
            while let Some(next) = empties.next_if(|(before, ..)| *before <= index) {
                entries.push(empty(next));
            }
            entries.push(array(record));
        }
        entries.extend(empties.map(empty));
        serializer.collect_map(entries)
    }
}

/// `_sharding`: by the base64 of each array's name, its placement as JSON
/// text, the map's keys sorted as TensorStore writes it.
pub(super) fn sharding(arrays: &[ArrayRecord]) -> Vec<u8> {
    let map: BTreeMap<String, String> = arrays
        .iter()
        .map(|array| {
            let key = base64::engine::general_purpose::STANDARD.encode(&array.name);
            let value = String::from_utf8(array.placement.json()).expect("JSON is UTF-8");
            (key, value)
        })
        .collect();
    serde_json::to_vec(&map).expect("JSON of strings")
}

/// `array_metadatas/process_0`: each array's name, shape and chunk shape.
pub(super) fn array_metadatas(arrays: &[ArrayRecord]) -> Vec<u8> {
    #[derive(Serialize)]
    struct Root<'a> {
        array_metadatas: Vec<Item<'a>>,
    }
    #[derive(Serialize)]
    struct Item<'a> {
        array_metadata: Meta<'a>,
    }
    #[derive(Serialize)]
    struct Meta<'a> {
        param_name: &'a str,
        write_shape: &'a [usize],
        chunk_shape: &'a [usize],
        ext_metadata: Option<()>,
    }
    json_dumps(&Root {
        array_metadatas: arrays
            .iter()
            .map(|array| Item {
                array_metadata: Meta {
                    param_name: &array.name,
                    write_shape: &array.write_shape,
                    chunk_shape: &array.chunks,
                    ext_metadata: None,
                },
            })
            .collect(),
    })
}

/// `_CHECKPOINT_METADATA`: the handler and when the save began and was
/// committed (nanoseconds since the Unix epoch).
pub(super) fn checkpoint_metadata(init_ns: u64, commit_ns: u64) -> Vec<u8> {
    #[derive(Serialize)]
    struct Root {
        item_handlers: &'static str,
        metrics: BTreeMap<String, ()>,
        performance_metrics: BTreeMap<String, ()>,
        init_timestamp_nsecs: u64,
        commit_timestamp_nsecs: u64,
        custom_metadata: BTreeMap<String, ()>,
    }
    json_dumps(&Root {
        item_handlers: STANDARD_HANDLER,
        metrics: BTreeMap::new(),
        performance_metrics: BTreeMap::new(),
        init_timestamp_nsecs: init_ns,
        commit_timestamp_nsecs: commit_ns,
        custom_metadata: BTreeMap::new(),
    })
}

/// `commit_success.txt`'s text for the checkpoint `dest`.
pub(super) fn commit_success(dest: &Path) -> Vec<u8> {
    format!("Checkpoint commit was successful to {}", dest.display()).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_orbaxs() {
        // What Orbax 0.12.8 wrote for {'a': f32[2, 3], 'l': [{'w': bf16[2]}]}.
        let arrays = [
            ArrayRecord {
                path: vec![("a".into(), KeyKind::Dict)],
                name: "a".into(),
                write_shape: vec![2, 3],
                chunks: vec![2, 3],
                placement: Placement::Device("cpu:0".into()),
            },
            ArrayRecord {
                path: vec![
                    ("l".into(), KeyKind::Dict),
                    ("0".into(), KeyKind::Sequence),
                    ("w".into(), KeyKind::Dict),
                ],
                name: "l.0.w".into(),
                write_shape: vec![2],
                chunks: vec![2],
                placement: Placement::Device("cpu:0".into()),
            },
        ];
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        assert_eq!(
            text(tree_metadata(&arrays, &[], &SaveOptions::default())),
            r#"{"tree_metadata": {"('a',)": {"key_metadata": [{"key": "a", "key_type": 2}], "value_metadata": {"value_type": "jax.Array", "skip_deserialize": false, "write_shape": [2, 3]}}, "('l', '0', 'w')": {"key_metadata": [{"key": "l", "key_type": 2}, {"key": "0", "key_type": 1}, {"key": "w", "key_type": 2}], "value_metadata": {"value_type": "jax.Array", "skip_deserialize": false, "write_shape": [2]}}}, "use_ocdbt": true, "use_zarr3": false, "store_array_data_equal_to_fill_value": true, "custom_metadata": null}"#
        );
        let files_zarr3 = SaveOptions::default().use_ocdbt(false).zarr3(true);
        assert!(
            text(tree_metadata(&arrays, &[], &files_zarr3))
                .ends_with(r#""use_ocdbt": false, "use_zarr3": true, "store_array_data_equal_to_fill_value": true, "custom_metadata": null}"#)
        );
        assert_eq!(
            text(sharding(&arrays)),
            r#"{"YQ==":"{\"sharding_type\": \"SingleDeviceSharding\", \"device_str\": \"cpu:0\"}","bC4wLnc=":"{\"sharding_type\": \"SingleDeviceSharding\", \"device_str\": \"cpu:0\"}"}"#
        );
        assert_eq!(
            text(array_metadatas(&arrays)),
            r#"{"array_metadatas": [{"array_metadata": {"param_name": "a", "write_shape": [2, 3], "chunk_shape": [2, 3], "ext_metadata": null}}, {"array_metadata": {"param_name": "l.0.w", "write_shape": [2], "chunk_shape": [2], "ext_metadata": null}}]}"#
        );
        assert!(text(checkpoint_metadata(1, 2)).starts_with(
            r#"{"item_handlers": "orbax.checkpoint._src.handlers.standard_checkpoint_handler.StandardCheckpointHandler", "metrics": {}, "performance_metrics": {}, "init_timestamp_nsecs": 1, "#
        ));
    }

    #[test]
    fn empty_values_are_recorded_between_the_arrays_as_orbax_records_them() {
        // {'a': f32[3], 'd': {}, 'l': [], 'n': None,
        //  'nest': {'e': {'f': None}, 'x': [f32[2], None, {}]}, 't': ()}
        let dict = |items: Vec<(&str, TreeDef)>| {
            TreeDef::Dict(items.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let def = dict(vec![
            ("a", TreeDef::Leaf),
            ("d", TreeDef::Dict(vec![])),
            ("l", TreeDef::List(vec![])),
            ("n", TreeDef::None),
            (
                "nest",
                dict(vec![
                    ("e", dict(vec![("f", TreeDef::None)])),
                    (
                        "x",
                        TreeDef::List(vec![TreeDef::Leaf, TreeDef::None, TreeDef::Dict(vec![])]),
                    ),
                ]),
            ),
            ("t", TreeDef::Tuple(vec![])),
        ]);
        let layout = tree_layout(&def);
        let arrays: Vec<ArrayRecord> = layout
            .arrays
            .iter()
            .zip([vec![3], vec![2]])
            .map(|(path, shape)| ArrayRecord {
                path: path.clone(),
                name: param_name(path),
                write_shape: shape.clone(),
                chunks: shape,
                placement: Placement::Device("cpu:0".into()),
            })
            .collect();
        let names: Vec<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a", "nest.x.0"]);
        // What Orbax 0.12.8 wrote for that tree.
        let text = String::from_utf8(tree_metadata(
            &arrays,
            &layout.empties,
            &SaveOptions::default(),
        ))
        .unwrap();
        assert_eq!(
            text,
            r#"{"tree_metadata": {"('a',)": {"key_metadata": [{"key": "a", "key_type": 2}], "value_metadata": {"value_type": "jax.Array", "skip_deserialize": false, "write_shape": [3]}}, "('d',)": {"key_metadata": [{"key": "d", "key_type": 2}], "value_metadata": {"value_type": "Dict", "skip_deserialize": true}}, "('l',)": {"key_metadata": [{"key": "l", "key_type": 2}], "value_metadata": {"value_type": "List", "skip_deserialize": true}}, "('n',)": {"key_metadata": [{"key": "n", "key_type": 2}], "value_metadata": {"value_type": "None", "skip_deserialize": true}}, "('nest', 'e', 'f')": {"key_metadata": [{"key": "nest", "key_type": 2}, {"key": "e", "key_type": 2}, {"key": "f", "key_type": 2}], "value_metadata": {"value_type": "None", "skip_deserialize": true}}, "('nest', 'x', '0')": {"key_metadata": [{"key": "nest", "key_type": 2}, {"key": "x", "key_type": 2}, {"key": "0", "key_type": 1}], "value_metadata": {"value_type": "jax.Array", "skip_deserialize": false, "write_shape": [2]}}, "('nest', 'x', '1')": {"key_metadata": [{"key": "nest", "key_type": 2}, {"key": "x", "key_type": 2}, {"key": "1", "key_type": 1}], "value_metadata": {"value_type": "None", "skip_deserialize": true}}, "('nest', 'x', '2')": {"key_metadata": [{"key": "nest", "key_type": 2}, {"key": "x", "key_type": 2}, {"key": "2", "key_type": 1}], "value_metadata": {"value_type": "Dict", "skip_deserialize": true}}, "('t',)": {"key_metadata": [{"key": "t", "key_type": 2}], "value_metadata": {"value_type": "Tuple", "skip_deserialize": true}}}, "use_ocdbt": true, "use_zarr3": false, "store_array_data_equal_to_fill_value": true, "custom_metadata": null}"#
        );
        // An empty root is nothing to save; a struct with no fields is an
        // empty dict; a static value is not Orbax's.
        assert!(tree_layout(&TreeDef::Dict(vec![])).empties.is_empty());
        assert!(tree_layout(&TreeDef::None).empties.is_empty());
        let unit = dict(vec![("marker", TreeDef::Struct("Marker", vec![]))]);
        assert_eq!(tree_layout(&unit).empties[0].2, EmptyValue::Dict);
    }
}
