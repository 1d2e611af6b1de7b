//! oxla_train::tensorboard's event files read back by TensorBoard's own
//! reader (reference/read_tensorboard.py), and oxla_train::metrics against
//! numpy's values of clu's definitions (reference/clu_metrics.py).

use std::path::{Path, PathBuf};

use oxla::{Array, jit};
use oxla_train::metrics::{
    Accuracy, AnyMetric, Average, Collection, ConfusionMatrix, Metric, MetricSpec, ModelOutput,
    Std, merge,
};
use oxla_train::tensorboard::{Error as TbError, SummaryWriter, read_events};
use serde_json::Value;

use crate::reference;

/// read_tensorboard.py's JSON of the event files in `dir`.
fn read_with_tensorboard(dir: &Path) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/reference/read_tensorboard.py");
    serde_json::from_slice(&oxla_testing::run_python(&script, &[dir])).unwrap()
}

/// The floats of a JSON list.
fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

const WEIGHTS: [f32; 9] = [-2.5, -0.75, -0.75, 0.0, 0.001, 0.3, 1.0, 1.0, 40.0];

/// A log directory with scalars, two histograms and two images.
fn write_summaries(dir: &Path) -> PathBuf {
    let mut w = SummaryWriter::new(dir).unwrap();
    for step in 0..5 {
        w.add_scalar("loss", 1.0 / (step as f64 + 1.0), step)
            .unwrap();
    }
    w.add_scalar("accuracy", Array::scalar(0.875f32).unwrap(), 4)
        .unwrap();
    w.add_histogram("weights", &Array::from_slice(&WEIGHTS, &[3, 3]).unwrap(), 1)
        .unwrap();
    w.add_histogram("slice", &[0.5f32, 0.5, 0.25][..], 2)
        .unwrap();
    let rgb: Vec<u8> = (0..2 * 3 * 3).map(|i| (i * 14) as u8).collect();
    w.add_image("rgb", &Array::from_slice(&rgb, &[2, 3, 3]).unwrap(), 3)
        .unwrap();
    let gray = [0.0f32, 0.5, 1.0, -0.2, 1.7, 0.25];
    w.add_image("gray", &Array::from_slice(&gray, &[3, 2, 1]).unwrap(), 3)
        .unwrap();
    w.flush().unwrap();
    w.path().to_path_buf()
}

#[test]
fn tensorboard_reads_what_the_summary_writer_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_summaries(dir.path());
    let name = path.file_name().unwrap().to_str().unwrap();
    let got = read_with_tensorboard(dir.path());
    assert_eq!(got["file"].as_str().unwrap(), name);
    let parts: Vec<&str> = name.split('.').collect();
    assert_eq!(parts[..3], ["events", "out", "tfevents"], "{name}");
    assert_eq!(
        parts[parts.len() - 2],
        std::process::id().to_string(),
        "{name}"
    );

    // The file version first, then one summary per call, stamped now.
    let raw = got["raw"].as_array().unwrap();
    assert_eq!(raw.len(), 1 + 6 + 2 + 2);
    assert_eq!(raw[0]["what"], "file_version");
    assert_eq!(raw[0]["file_version"], "brain.Event:2");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    for e in raw {
        let t = e["wall_time"].as_f64().unwrap();
        assert!(t <= now && t > now - 600.0, "wall time {t}, now {now}");
    }
    assert!(raw[1..].iter().all(|e| e["what"] == "summary"));

    // Scalars: the f32 of each value at its step.
    let loss: Vec<(i64, f64)> = got["scalars"]["loss"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_i64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    let want: Vec<(i64, f64)> = (0..5)
        .map(|s| (s, (1.0 / (s as f64 + 1.0)) as f32 as f64))
        .collect();
    assert_eq!(loss, want);
    assert_eq!(got["scalars"]["accuracy"], serde_json::json!([[4, 0.875]]));

    // Histograms: the statistics of the values, and bucket counts that
    // match the values against the bucket edges TensorBoard read.
    for (tag, step, values) in [
        ("weights", 1, WEIGHTS.to_vec()),
        ("slice", 2, vec![0.5f32, 0.5, 0.25]),
    ] {
        let h = &got["histograms"][tag][0];
        assert_eq!(h["step"], step, "{tag}");
        let values: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(h["min"].as_f64().unwrap(), min, "{tag}");
        assert_eq!(h["max"].as_f64().unwrap(), max, "{tag}");
        assert_eq!(h["num"].as_f64().unwrap(), values.len() as f64, "{tag}");
        assert_eq!(
            h["sum"].as_f64().unwrap(),
            values.iter().sum::<f64>(),
            "{tag}"
        );
        let squares: f64 = values.iter().map(|v| v * v).sum();
        assert_eq!(h["sum_squares"].as_f64().unwrap(), squares, "{tag}");
        let limits = floats(&h["bucket_limit"]);
        let counts = floats(&h["bucket"]);
        assert_eq!(limits.len(), counts.len(), "{tag}");
        assert_eq!(*limits.last().unwrap(), f64::MAX, "{tag}");
        assert!(limits.windows(2).all(|w| w[0] < w[1]), "{tag}: {limits:?}");
        for (i, (&limit, &count)) in limits.iter().zip(&counts).enumerate() {
            let lower = if i == 0 {
                f64::NEG_INFINITY
            } else {
                limits[i - 1]
            };
            let inside = values.iter().filter(|&&v| v >= lower && v < limit).count();
            assert_eq!(count, inside as f64, "{tag}: bucket [{lower}, {limit})");
        }
        // Empty buckets are collapsed: never two in a row.
        assert!(
            counts.windows(2).all(|w| w[0] > 0.0 || w[1] > 0.0),
            "{tag}: {counts:?}"
        );
    }

    // Images: PIL decodes the PNGs to the pixels written (floats as
    // tf.image.convert_image_dtype: clipped, times 255.5, truncated).
    let rgb = &got["images"]["rgb"][0];
    assert_eq!(
        (
            rgb["step"].as_i64(),
            rgb["width"].as_i64(),
            rgb["height"].as_i64()
        ),
        (Some(3), Some(3), Some(2))
    );
    assert_eq!(rgb["mode"], "RGB");
    let want: Vec<u64> = (0..18).map(|i| (i * 14) as u64).collect();
    assert_eq!(rgb["pixels"], serde_json::json!(want));
    let gray = &got["images"]["gray"][0];
    assert_eq!(gray["mode"], "L");
    assert_eq!(gray["size"], serde_json::json!([2, 3]));
    assert_eq!(gray["pixels"], serde_json::json!([0, 127, 255, 0, 255, 63]));
}

#[test]
fn summary_errors_name_the_input_and_corrupt_files_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SummaryWriter::new(dir.path()).unwrap();
    let flat = Array::from_slice(&[0.5f32; 6], &[2, 3]).unwrap();
    let e = w.add_image("flat", &flat, 0).unwrap_err().to_string();
    assert!(
        e.contains("\"flat\"")
            && e.contains("f32[2,3]")
            && e.contains("rank 3")
            && e.contains("tensorboard_and_metrics.rs"),
        "{e}"
    );
    let five = Array::from_slice(&[0u8; 10], &[1, 2, 5]).unwrap();
    let e = w.add_image("five", &five, 0).unwrap_err().to_string();
    assert!(e.contains("u8[1,2,5]") && e.contains("channels"), "{e}");
    let ints = Array::from_slice(&[1i32; 3], &[1, 1, 3]).unwrap();
    assert!(
        w.add_image("ints", &ints, 0)
            .unwrap_err()
            .to_string()
            .contains("i32[1,1,3]")
    );
    let e = w
        .add_histogram("nan", &[1.0f32, f32::NAN][..], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"nan\"") && e.contains("finite"), "{e}");
    let e = w
        .add_scalar("pair", Array::from_slice(&[1f32, 2.0], &[2]).unwrap(), 0)
        .unwrap_err();
    assert!(
        matches!(e, TbError::InvalidInput(_)) && e.to_string().contains("f32[2]"),
        "{e}"
    );
    w.add_scalar("ok", 1.0f32, 0).unwrap();
    w.flush().unwrap();
    let path = w.path().to_path_buf();
    // The failed calls wrote nothing.
    assert_eq!(read_events(&path).unwrap().len(), 2);

    let mut bytes = std::fs::read(&path).unwrap();
    let second = read_records_offset(&bytes);
    let last = bytes.len() - 6;
    bytes[last] ^= 0x40;
    let bad = dir.path().join("corrupt");
    std::fs::write(&bad, &bytes).unwrap();
    let e = read_events(&bad).unwrap_err();
    assert!(
        matches!(&e, TbError::Corrupt { offset, .. } if *offset == second as u64),
        "{e}"
    );
    assert!(e.to_string().contains("checksum of the record data"), "{e}");
    std::fs::write(&bad, &bytes[..bytes.len() - 2]).unwrap();
    assert!(
        read_events(&bad)
            .unwrap_err()
            .to_string()
            .contains("truncated")
    );
    let e = read_events(dir.path().join("missing")).unwrap_err();
    assert!(matches!(e, TbError::Io { .. }), "{e}");
}

/// The byte offset of an event file's second record.
fn read_records_offset(bytes: &[u8]) -> usize {
    let length = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    12 + length + 4
}

/// clu_metrics.py's batches: logits, labels, mask, values.
fn batches(r: &Value) -> Vec<[Array; 4]> {
    r["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| ["logits", "labels", "mask", "values"].map(|k| reference::array(&b[k])))
        .collect()
}

fn assert_near(got: &Array, want: &Value, what: &str) {
    let got = got.item::<f32>().unwrap() as f64;
    let want = want.as_f64().unwrap();
    assert!(
        (got - want).abs() <= 1e-5 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

#[test]
fn metrics_match_numpy_per_batch_and_merged() {
    let r = reference::script("clu_metrics.py");
    let specs = [
        ("accuracy", MetricSpec::Accuracy),
        ("confusion", MetricSpec::ConfusionMatrix),
        ("values", MetricSpec::Average("values".into())),
        ("values_std", MetricSpec::Std("values".into())),
    ];
    let step = jit(|[logits, labels, mask, values]: [Array; 4]| {
        let out = ModelOutput::new()
            .with("logits", &logits)
            .with("labels", &labels)
            .with("mask", &mask)
            .with("values", &values);
        Collection::from_model_output(&specs, &out)
    });
    let mut merged: Option<Collection> = None;
    let mut unmasked = Vec::new();
    for (i, batch) in batches(r).into_iter().enumerate() {
        let want = &r["per_batch"][i];
        let unmasked_accuracy = Accuracy::from_model_output(&batch[0], &batch[1], None).unwrap();
        assert_near(
            &unmasked_accuracy.compute(),
            &want["accuracy_unmasked"],
            "unmasked accuracy",
        );
        unmasked.push(unmasked_accuracy);
        let metrics = step.call(batch).unwrap();
        let values = metrics.compute();
        assert_near(
            &values["accuracy"],
            &want["accuracy"],
            &format!("batch {i} accuracy"),
        );
        assert_near(
            &values["values"],
            &want["average"],
            &format!("batch {i} average"),
        );
        assert_near(
            &values["values_std"],
            &want["std"],
            &format!("batch {i} std"),
        );
        reference::assert_close(&values["confusion"], &want["confusion"], "confusion");
        merged = Some(match merged {
            None => metrics,
            Some(m) => m.merge(&metrics).unwrap(),
        });
    }
    let merged = merged.unwrap();
    let want = &r["merged"];
    let values = merged.compute();
    assert_near(&values["accuracy"], &want["accuracy"], "merged accuracy");
    assert_near(&values["values"], &want["average"], "merged average");
    assert_near(&values["values_std"], &want["std"], "merged std");
    reference::assert_close(&values["confusion"], &want["confusion"], "merged confusion");
    let AnyMetric::Average(average) = &merged.metrics["values"] else {
        panic!("values is an Average")
    };
    assert_eq!(
        average.count.item::<i32>().unwrap() as i64,
        want["average_count"].as_i64().unwrap()
    );
    let all = unmasked[1..]
        .iter()
        .try_fold(unmasked[0].clone(), |a, b| a.merge(b))
        .unwrap();
    assert_near(
        &all.compute(),
        &want["accuracy_unmasked"],
        "merged unmasked accuracy",
    );

    // The single metrics, merged on the device inside jit, agree.
    let b = batches(r);
    let both = jit(
        |(x, y): ([Array; 4], [Array; 4])| -> oxla::Result<(Std, ConfusionMatrix)> {
            let s = Std::from_model_output(&x[3], Some(&x[2]))?
                .merge(&Std::from_model_output(&y[3], Some(&y[2]))?)?;
            let c = ConfusionMatrix::from_logits(&x[0], &x[1], Some(&x[2]))?;
            let d = ConfusionMatrix::from_logits(&y[0], &y[1], Some(&y[2]))?;
            Ok((s, merge(&c, &d)?))
        },
    );
    let (s, c) = both.call((b[0].clone(), b[1].clone())).unwrap();
    assert_near(
        &s.compute(),
        &r["first_two"]["std"],
        "std of two batches merged in jit",
    );
    reference::assert_close(
        &c.compute(),
        &r["first_two"]["confusion"],
        "confusion of two batches",
    );
}

#[test]
fn metric_errors_name_the_shapes_and_the_line() {
    let logits = Array::from_slice(&[0.0f32; 6], &[3, 2]).unwrap();
    let labels = Array::from_slice(&[0i32, 1], &[2]).unwrap();
    let e = Accuracy::from_model_output(&logits, &labels, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("f32[3,2]") && e.contains("i32[2]") && e.contains("tensorboard_and_metrics.rs"),
        "{e}"
    );
    let float_labels = Array::from_slice(&[0f32; 3], &[3]).unwrap();
    assert!(ConfusionMatrix::from_logits(&logits, &float_labels, None).is_err());
    let mask = Array::from_slice(&[true, false], &[2]).unwrap();
    let e = Average::from_model_output(&logits, Some(&mask))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bool[2]") && e.contains("f32[3,2]"), "{e}");
    let out = ModelOutput::new().with("logits", &logits);
    let e = Collection::from_model_output(&[("acc", MetricSpec::Accuracy)], &out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"labels\"") && e.contains("\"acc\""), "{e}");
    let (a, b) = (ConfusionMatrix::empty(2), ConfusionMatrix::empty(3));
    assert!(a.merge(&b).is_err());
}
