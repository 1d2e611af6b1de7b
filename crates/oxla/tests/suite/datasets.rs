//! oxla_train::datasets: the IDX parser on good and malformed files, MNIST as
//! ci/setup installs it (counts, labels, batches), a missing dataset's
//! error (with the fix), and character text.

use std::path::Path;

use oxla_train::datasets::{self, CharText, Mnist, Split, idx};

fn idx_file(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0, 0, 0x08, dims.len() as u8];
    for d in dims {
        bytes.extend(d.to_be_bytes());
    }
    bytes.extend(data);
    bytes
}

#[test]
fn idx_parses_and_rejects_malformed_files() {
    let p = Path::new("x.idx");
    let ok = idx::parse(p, &idx_file(&[2, 3], &[1, 2, 3, 4, 5, 6])).unwrap();
    assert_eq!(ok.dims, [2, 3]);
    assert_eq!(ok.data, [1, 2, 3, 4, 5, 6]);
    let cases: [(Vec<u8>, &str); 4] = [
        (vec![0, 0], "shorter than the header"),
        (
            vec![0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0],
            "magic 00000d01",
        ),
        (
            idx_file(&[2, 3], &[1, 2, 3]),
            "need 6 bytes of data, the file has 3",
        ),
        (vec![0, 0, 8, 3, 0, 0], "shorter than a rank-3 header"),
    ];
    for (bytes, want) in cases {
        let e = idx::parse(p, &bytes).unwrap_err().to_string();
        assert!(e.contains("dataset x.idx") && e.contains(want), "{e}");
    }
}

#[test]
fn mnist_as_ci_setup_installs_it() {
    let mnist = Mnist::load(&datasets::dir("mnist")).unwrap();
    assert_eq!(
        (mnist.count(Split::Train), mnist.count(Split::Test)),
        (60000, 10000)
    );
    assert_eq!(mnist.pixels(), 784);
    // The first training labels of the original files.
    assert_eq!(&mnist.train_labels.data[..5], &[5, 0, 4, 1, 9]);
    let order = [3usize, 0, 59999, 7];
    let batches: Vec<_> = mnist
        .batches(Split::Train, &order, 3)
        .collect::<oxla::Result<_>>()
        .unwrap();
    // Four indices make one full batch of three; the rest is dropped.
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].inputs.shape(), &[3, 784]);
    assert_eq!(batches[0].labels.to_vec::<i32>().unwrap(), [1, 5, 8]);
    let pixels = batches[0].inputs.to_vec::<f32>().unwrap();
    assert!(pixels.iter().all(|&p| (0.0..=1.0).contains(&p)));
    assert_eq!(
        pixels[784 + 152],
        f32::from(mnist.train_images.data[152]) * (1.0 / 255.0)
    );
}

#[test]
fn an_epoch_is_a_permutation_drawn_from_its_key_in_full_batches() {
    use oxla::random::{Key, permutation};
    let mnist = Mnist::load(&datasets::dir("mnist")).unwrap();
    let labels = &mnist.train_labels.data;
    let batches: Vec<_> = mnist
        .epoch(Split::Train, Some(Key::new(7)), 25_000)
        .unwrap()
        .collect::<oxla::Result<_>>()
        .unwrap();
    // 60,000 images make two full batches; the remainder is dropped.
    assert_eq!(batches.len(), 2);
    let order = permutation(Key::new(7), 60000).to_vec::<i32>().unwrap();
    let want: Vec<i32> = order[..50_000]
        .iter()
        .map(|&i| i32::from(labels[i as usize]))
        .collect();
    let got: Vec<i32> = batches
        .iter()
        .flat_map(|b| b.labels.to_vec::<i32>().unwrap())
        .collect();
    assert_eq!(got, want);
    assert_eq!(batches[1].inputs.shape(), &[25_000, 784]);
    // Without a key: file order; `skip` resumes part-way.
    let third = mnist
        .epoch(Split::Test, None, 3)
        .unwrap()
        .nth(2)
        .unwrap()
        .unwrap();
    let want: Vec<i32> = mnist.test_labels.data[6..9]
        .iter()
        .map(|&l| i32::from(l))
        .collect();
    assert_eq!(third.labels.to_vec::<i32>().unwrap(), want);
    let e = mnist.epoch(Split::Test, None, 0).err().unwrap().to_string();
    assert!(e.contains("Mnist::epoch: a batch size of 0"), "{e}");
}

#[test]
fn a_missing_dataset_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = Mnist::load(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("train-images-idx3-ubyte") && e.contains("run `bash ci/setup`"),
        "{e}"
    );
}

#[test]
fn char_text_round_trips_through_its_vocabulary() {
    let text = CharText::from_text("to be, or not to be");
    assert_eq!(text.vocabulary, [' ', ',', 'b', 'e', 'n', 'o', 'r', 't']);
    assert_eq!(text.decode(&text.ids), "to be, or not to be");
    let plays = CharText::load(
        &datasets::dir("shakespeare"),
        &["hamlet.txt", "macbeth.txt"],
    )
    .unwrap();
    assert!(plays.ids.len() > 250_000);
    assert!(plays.decode(&plays.ids[..40]).contains("HAMLET"));
}
