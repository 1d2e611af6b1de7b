//! Meshes, specs, device_put and visualize_sharding, and their errors.

use oxla::sharding::visualize_sharding;
use oxla::{Array, Error, Mesh, NamedSharding, P, PartitionSpec};

use crate::{eight_devices, inputs, mesh, named};

#[test]
fn device_put_splits_an_array_and_to_vec_puts_it_back_together() {
    let (x, _) = inputs();
    for spec in [
        P!["data", None],
        P![None, "model"],
        P!["data", "model"],
        P!["model", "data"],
        P![["data", "model"]],
        P![],
    ] {
        let sharded = oxla::device_put(&x, named(spec.clone())).unwrap();
        assert_eq!(sharded.shape(), &[8, 4]);
        assert_eq!(
            sharded.named_sharding().unwrap(),
            named(spec.clone()),
            "{spec}"
        );
        assert_eq!(
            sharded.to_vec::<f32>().unwrap(),
            x.to_vec::<f32>().unwrap(),
            "{spec}"
        );
        assert_eq!(sharded.device_ids().unwrap(), (0..8).collect::<Vec<i64>>());
    }
}

#[test]
fn visualize_sharding_draws_which_devices_hold_which_block() {
    let (x, _) = inputs();
    let by_rows = oxla::device_put(&x, named(P!["data", None])).unwrap();
    let drawing = visualize_sharding(&by_rows).unwrap();
    let cells: Vec<&str> = drawing
        .lines()
        .filter(|l| l.starts_with('│'))
        .map(|l| l.trim_matches('│').trim())
        .collect();
    // Four row blocks, each held by the two 'model' devices of its row.
    assert_eq!(
        cells,
        ["CPU 0,1", "CPU 2,3", "CPU 4,5", "CPU 6,7"],
        "{drawing}"
    );

    let grid = oxla::device_put(&x, named(P!["data", "model"])).unwrap();
    let drawing = visualize_sharding(&grid).unwrap();
    let rows: Vec<Vec<String>> = drawing
        .lines()
        .filter(|l| l.starts_with('│'))
        .map(|l| {
            l.trim_matches('│')
                .split('│')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 4, "{drawing}");
    assert_eq!(rows[1], ["CPU 2", "CPU 3"], "{drawing}");

    let whole = visualize_sharding(&x).unwrap();
    assert!(whole.contains("CPU 0"), "{whole}");
}

#[test]
fn a_mesh_larger_than_the_device_count_is_an_error() {
    eight_devices();
    let err = Mesh::new(&[("data", 4), ("model", 4)]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Sharding { .. }), "{text}");
    assert!(text.contains("needs 16 devices"), "{text}");
    assert!(text.contains("has 8"), "{text}");
    assert!(text.contains("placement.rs"), "{text}");
}

#[test]
fn bad_meshes_are_errors() {
    eight_devices();
    let line = line!() + 1;
    let twice = Mesh::new(&[("data", 2), ("data", 2)]);
    let twice = twice.unwrap_err().to_string();
    assert!(twice.contains("'data' appears twice"), "{twice}");
    assert!(twice.contains(&format!("placement.rs:{line}")), "{twice}");
    let empty = Mesh::new(&[("data", 0)]).unwrap_err().to_string();
    assert!(empty.contains("size 0"), "{empty}");
}

#[test]
fn a_spec_naming_an_unknown_axis_is_an_error_naming_the_mesh_axes() {
    let (x, _) = inputs();
    let err = oxla::device_put(&x, named(P!["batch"])).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("'batch'"), "{text}");
    assert!(text.contains("'data', 'model'"), "{text}");
    assert!(text.contains("f32[8,4]"), "{text}");
    assert!(text.contains("placement.rs"), "{text}");
}

#[test]
fn an_axis_that_does_not_divide_a_dimension_is_an_error_with_the_sizes() {
    let (_, w) = inputs();
    // Dimension 0 of w has size 4; ('data', 'model') splits it 8 ways.
    let err = oxla::device_put(&w, named(P![["data", "model"]])).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("dimension 0"), "{text}");
    assert!(text.contains("size 4"), "{text}");
    assert!(text.contains("not divisible by 8"), "{text}");
}

#[test]
fn a_spec_longer_than_the_rank_or_using_an_axis_twice_is_an_error() {
    let (x, _) = inputs();
    let long = oxla::device_put(&x, named(P!["data", None, "model"]))
        .unwrap_err()
        .to_string();
    assert!(long.contains("rank at least 3"), "{long}");
    // Trailing `None`s count, as in JAX: P('data', None) needs rank 2.
    let vector = Array::from_slice(&[0.0f32; 8], &[8]).unwrap();
    let line = line!() + 1;
    let trailing = oxla::device_put(&vector, named(P!["data", None]));
    let trailing = trailing.unwrap_err().to_string();
    assert!(
        trailing.contains("rank at least 2") && trailing.contains(&format!("placement.rs:{line}")),
        "{trailing}"
    );
    assert!(oxla::device_put(&vector, named(P!["data"])).is_ok());
    let twice = oxla::device_put(&x, named(P!["data", "data"]))
        .unwrap_err()
        .to_string();
    assert!(twice.contains("'data' twice"), "{twice}");
}

#[test]
fn specs_print_as_jax_prints_them() {
    assert_eq!(P!["data", None].to_string(), "P('data', None)");
    assert_eq!(P![["data", "model"]].to_string(), "P(('data', 'model'))");
    assert_eq!(PartitionSpec::replicated().to_string(), "P()");
    let s = NamedSharding::new(&mesh(), P!["data", None]);
    assert_eq!(
        s.to_string(),
        "NamedSharding(mesh=Mesh('data': 4, 'model': 2), spec=P('data', None))"
    );
    // As in JAX, a trailing None makes another sharding (of the same layout).
    assert_ne!(s, NamedSharding::new(&mesh(), P!["data"]));
    assert_eq!(s.desc(), NamedSharding::new(&mesh(), P!["data"]).desc());
}

#[test]
fn device_put_of_a_sharded_array_reshards_it_on_the_devices() {
    let (x, _) = inputs();
    let by_rows = oxla::device_put(&x, named(P!["data", None])).unwrap();
    // The same sharding: the array itself.
    let same = oxla::device_put(&by_rows, named(P!["data", None])).unwrap();
    assert_eq!(same.sharding(), by_rows.sharding());
    let dir = tempfile::tempdir().unwrap();
    // A layout no other test asks for, so its program is compiled here.
    let target = named(P!["model", "data"]);
    let (moved, trace) =
        oxla::profiler::trace(dir.path(), || oxla::device_put(&by_rows, &target).unwrap()).unwrap();
    assert_eq!(moved.named_sharding().unwrap(), target);
    assert_eq!(moved.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    // It ran as a program on the mesh (XLA moved the blocks): this thread
    // made no host transfer (the trace's `tid` is the profiler's hash of
    // the thread's id; other tests run on other threads).
    let this_thread = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::thread::current().id().hash(&mut hasher);
        hasher.finish() % 1_000_000
    };
    let events: serde_json::Value = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let transfers: Vec<&serde_json::Value> = events["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tid"] == this_thread && e["name"] == "transfer")
        .collect();
    assert!(transfers.is_empty(), "{transfers:?}");
    // Replicated and back.
    let everywhere = oxla::device_put(&moved, named(P![])).unwrap();
    assert_eq!(everywhere.named_sharding().unwrap(), named(P![]));
    let back = oxla::device_put(&everywhere, named(P![None, "model"])).unwrap();
    assert_eq!(back.named_sharding().unwrap(), named(P![None, "model"]));
    assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
}

/// Device ids and index ranges as reference.py prints them.
fn index_table(map: Vec<(oxla::Device, Vec<std::ops::Range<i64>>)>) -> serde_json::Value {
    serde_json::json!(
        map.into_iter()
            .map(|(device, index)| {
                let ranges: Vec<[i64; 2]> = index.iter().map(|r| [r.start, r.end]).collect();
                serde_json::json!([device.id().unwrap(), ranges])
            })
            .collect::<Vec<_>>()
    )
}

#[test]
fn shard_shapes_and_device_indices_match_jax() {
    let views = &crate::reference("shard_views");
    for (name, spec) in [
        ("data", P!["data", None]),
        ("model", P![None, "model"]),
        ("both", P![["data", "model"]]),
        ("replicated", P![]),
    ] {
        let sharding = named(spec);
        let shape = sharding.shard_shape(&[8, 4]).unwrap();
        assert_eq!(
            serde_json::json!(shape),
            views[name]["shard_shape"],
            "{name}"
        );
        let map = sharding.devices_indices_map(&[8, 4]).unwrap();
        assert_eq!(index_table(map), views[name]["map"], "{name}");
    }
    let line = line!() + 1;
    let err = named(P!["data"]).shard_shape(&[6, 4]);
    let err = err.unwrap_err().to_string();
    assert!(
        err.contains("not divisible") && err.contains(&format!("placement.rs:{line}")),
        "{err}"
    );
}

#[test]
fn arrays_made_from_blocks_and_their_shards_match_jax() {
    let (x, _) = inputs();
    let whole = x.to_vec::<f32>().unwrap();
    let sharding = named(P!["data", "model"]);
    // Each block read from the host array, as a data loader would.
    let made = oxla::sharding::make_array_from_callback(&[8, 4], &sharding, |index| {
        let rows = index[0].clone();
        let cols = index[1].clone();
        let block: Vec<f32> = rows
            .flat_map(|r| cols.clone().map(move |c| (r, c)))
            .map(|(r, c)| whole[(r * 4 + c) as usize])
            .collect();
        Array::from_slice(
            &block,
            &[index[0].end - index[0].start, index[1].end - index[1].start],
        )
    })
    .unwrap();
    assert_eq!(made.named_sharding().unwrap(), sharding);
    assert_eq!(made.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let shards: Vec<serde_json::Value> = made
        .addressable_shards()
        .unwrap()
        .into_iter()
        .map(|s| {
            assert_eq!(
                s.data.device_ids().unwrap(),
                vec![i64::from(s.device.id().unwrap())]
            );
            let values: Vec<f64> = s
                .data
                .to_vec::<f32>()
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect();
            serde_json::json!([s.device.id().unwrap(), values])
        })
        .collect();
    assert_eq!(
        serde_json::json!(shards),
        crate::reference("shard_views")["callback_shards"]
    );
    // The same blocks as single-device arrays give the same array.
    let blocks: Vec<Array> = made
        .addressable_shards()
        .unwrap()
        .into_iter()
        .map(|s| s.data)
        .collect();
    let again =
        oxla::sharding::make_array_from_single_device_arrays(&[8, 4], &sharding, blocks).unwrap();
    assert_eq!(again.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    assert_eq!(again.named_sharding().unwrap(), sharding);
    let wrong = vec![Array::from_slice(&[0.0f32; 4], &[2, 2]).unwrap(); 7];
    let err = oxla::sharding::make_array_from_single_device_arrays(&[8, 4], &sharding, wrong)
        .unwrap_err();
    assert!(
        err.to_string().contains("got 7 arrays for the 8 devices"),
        "{err}"
    );
    let bad = oxla::sharding::make_array_from_callback(&[8, 4], &sharding, |_| {
        Array::from_slice(&[0.0f32; 3], &[3])
    })
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("the block for device 0 is f32[3], but each must be f32[2,2]"),
        "{bad}"
    );
    // An array on one device is its own single shard.
    let one = x.addressable_shards().unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].index, vec![0..8, 0..4]);
}

#[test]
fn device_put_to_one_device_gives_a_single_device_sharding() {
    use oxla::sharding::Sharding;
    let (x, _) = inputs();
    let devices = oxla::client().unwrap().addressable_devices().unwrap();
    let on_three = oxla::device_put(&x, &devices[3]).unwrap();
    assert_eq!(
        on_three.sharding(),
        Some(Sharding::SingleDevice(devices[3].clone()))
    );
    assert_eq!(on_three.device_ids().unwrap(), vec![3]);
    assert_eq!(
        on_three.sharding().unwrap().to_string(),
        "SingleDeviceSharding(device=3)"
    );
    assert_eq!(
        on_three.to_vec::<f32>().unwrap(),
        x.to_vec::<f32>().unwrap()
    );
    // Device to device, and a sharded array gathered onto one device.
    let on_five = oxla::device_put(&on_three, &devices[5]).unwrap();
    assert_eq!(on_five.device_ids().unwrap(), vec![5]);
    assert_eq!(on_five.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let (xs, _) = crate::sharded_inputs();
    let gathered = oxla::device_put(&xs, &devices[2]).unwrap();
    assert_eq!(gathered.device_ids().unwrap(), vec![2]);
    assert_eq!(
        gathered.to_vec::<f32>().unwrap(),
        x.to_vec::<f32>().unwrap()
    );
    // A computation follows its committed argument's device, as in JAX.
    let doubled = oxla::jit(|v: Array| &v * 2.0)
        .call(on_five.clone())
        .unwrap();
    assert_eq!(doubled.device_ids().unwrap(), vec![5]);
    let eager = &on_five + 1.0;
    assert_eq!(eager.device_ids().unwrap(), vec![5]);
}

#[test]
fn a_layout_no_spec_expresses_is_a_gspmd_sharding() {
    use oxla::sharding::{HloSharding, Sharding};
    let (x, _) = inputs();
    let ring = oxla::Mesh::new(&[("i", 8)]).unwrap();
    // Rows in pairs swapped between neighbouring devices: no spec of the
    // mesh puts row 0 on device 1.
    let swapped = HloSharding::Tiled {
        tile_dims: vec![8, 1],
        devices: vec![1, 0, 3, 2, 5, 4, 7, 6],
        array_rank: 2,
    };
    let layout = Sharding::Gspmd {
        mesh: ring.clone(),
        hlo: swapped.clone(),
    };
    let placed = oxla::device_put(&x, &layout).unwrap();
    assert_eq!(placed.sharding(), Some(layout.clone()));
    assert!(placed.named_sharding().is_none());
    assert!(!layout.is_fully_replicated());
    assert_eq!(layout.shard_shape(&[8, 4]).unwrap(), vec![1, 4]);
    let rows: Vec<f32> = x.to_vec().unwrap();
    for shard in placed.addressable_shards().unwrap() {
        let row = shard.index[0].start as usize;
        let id = shard.device.id().unwrap() as usize;
        assert_eq!(row, id ^ 1, "device {id}");
        assert_eq!(
            shard.data.to_vec::<f32>().unwrap(),
            rows[row * 4..row * 4 + 4].to_vec()
        );
    }
    assert_eq!(placed.to_vec::<f32>().unwrap(), rows);
    let doubled = oxla::jit(|v: Array| &v * 2.0).call(placed).unwrap();
    let want: Vec<f32> = rows.iter().map(|v| v * 2.0).collect();
    assert_eq!(doubled.to_vec::<f32>().unwrap(), want);
}
