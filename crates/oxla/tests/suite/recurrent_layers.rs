//! oxla_nn's LstmCell, GruCell, SimpleCell, MguCell, ConvLstmCell, Rnn,
//! Bidirectional and flip_sequences against Flax linen
//! (reference/recurrent_layers.py): on Flax's
//! (perturbed) parameters, loaded leaf for leaf from Flax's nested names,
//! one cell step and whole sequences (forward, reverse with and without
//! keep_order, time-major, seq_lengths, bidirectional with Flax's
//! concatenation and with a merge_fn of its own, a convolutional cell
//! over a video), eagerly and under
//! jit, with the gradient of `sum(sin(outputs)) + sum(final carry)` w.r.t.
//! the parameters, the input and the initial carry; carries drawn by a
//! carry_init; the orthogonal initializer; and the errors of inputs, carries and lengths that do not
//! fit.

use oxla::{Array, DType, Pytree, jit, numpy as jnp, random::Key, value_and_grad};
use oxla_nn::{
    Activation, Bidirectional, ConvLstmCell, GruCell, Linear, LstmCell, MguCell, Rnn, RnnCell,
    SimpleCell, flip_sequences, initializers,
};
use serde_json::Value;

use crate::reference::{self, assert_close};

fn case(name: &str) -> &'static Value {
    &reference::script("recurrent_layers.py")[name]
}

fn arr(v: &Value) -> Array {
    reference::array(v)
}

/// A value loaded from Flax's JSON, and compared with Flax's gradient or
/// output of the same nesting.
trait Flax: Sized {
    fn load(v: &Value) -> Self;
    fn assert_matches(&self, want: &Value, what: &str);
}

impl Flax for Array {
    fn load(v: &Value) -> Self {
        arr(v)
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        assert_close(self, want, what);
    }
}

impl<A: Flax, B: Flax> Flax for (A, B) {
    fn load(v: &Value) -> Self {
        (A::load(&v[0]), B::load(&v[1]))
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        self.0.assert_matches(&want[0], &format!("{what}[0]"));
        self.1.assert_matches(&want[1], &format!("{what}[1]"));
    }
}

impl Flax for Linear {
    fn load(v: &Value) -> Self {
        Linear {
            kernel: arr(&v["kernel"]),
            bias: v.get("bias").map(arr),
        }
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        assert_close(&self.kernel, &want["kernel"], &format!("{what}.kernel"));
        assert_eq!(
            self.bias.is_some(),
            want.get("bias").is_some(),
            "{what}.bias"
        );
        if let Some(b) = &self.bias {
            assert_close(b, &want["bias"], &format!("{what}.bias"));
        }
    }
}

/// Each gate layer of a cell, by Flax's name.
fn gates_match(gates: &[(&str, &Linear)], want: &Value, what: &str) {
    assert_eq!(
        gates.len(),
        want.as_object().unwrap().len(),
        "{what}: gates"
    );
    for (name, gate) in gates {
        gate.assert_matches(&want[name], &format!("{what}.{name}"));
    }
}

impl Flax for LstmCell {
    fn load(p: &Value) -> Self {
        let l = |name: &str| Linear::load(&p[name]);
        LstmCell {
            ii: l("ii"),
            if_: l("if"),
            ig: l("ig"),
            io: l("io"),
            hi: l("hi"),
            hf: l("hf"),
            hg: l("hg"),
            ho: l("ho"),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
        }
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        let gates = [
            ("ii", &self.ii),
            ("if", &self.if_),
            ("ig", &self.ig),
            ("io", &self.io),
            ("hi", &self.hi),
            ("hf", &self.hf),
            ("hg", &self.hg),
            ("ho", &self.ho),
        ];
        gates_match(&gates, want, what);
    }
}

impl Flax for GruCell {
    fn load(p: &Value) -> Self {
        let l = |name: &str| Linear::load(&p[name]);
        GruCell {
            ir: l("ir"),
            iz: l("iz"),
            in_: l("in"),
            hr: l("hr"),
            hz: l("hz"),
            hn: l("hn"),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
        }
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        let gates = [
            ("ir", &self.ir),
            ("iz", &self.iz),
            ("in", &self.in_),
            ("hr", &self.hr),
            ("hz", &self.hz),
            ("hn", &self.hn),
        ];
        gates_match(&gates, want, what);
    }
}

impl<C: RnnCell + Flax> Flax for Rnn<C> {
    fn load(p: &Value) -> Self {
        Rnn::new(C::load(&p["cell"]))
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        self.cell
            .assert_matches(&want["cell"], &format!("{what}.cell"));
    }
}

impl Flax for SimpleCell {
    fn load(p: &Value) -> Self {
        SimpleCell {
            i: Linear::load(&p["i"]),
            h: Linear::load(&p["h"]),
            activation_fn: Activation::Tanh,
            residual: false,
        }
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        gates_match(&[("i", &self.i), ("h", &self.h)], want, what);
    }
}

impl Flax for MguCell {
    fn load(p: &Value) -> Self {
        let l = |name: &str| Linear::load(&p[name]);
        MguCell {
            if_: l("if"),
            in_: l("in"),
            hf: l("hf"),
            hn: l("hn"),
            gate_fn: Activation::Sigmoid,
            activation_fn: Activation::Tanh,
            reset_gate: p["hn"].get("bias").is_some(),
        }
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        let gates = [
            ("if", &self.if_),
            ("in", &self.in_),
            ("hf", &self.hf),
            ("hn", &self.hn),
        ];
        gates_match(&gates, want, what);
    }
}

impl Flax for ConvLstmCell {
    fn load(p: &Value) -> Self {
        let (ih, hh) = (Linear::load(&p["ih"]), Linear::load(&p["hh"]));
        let shape = ih.kernel.shape().to_vec();
        let window = &shape[..shape.len() - 2];
        let (in_features, features) = (shape[shape.len() - 2], shape[shape.len() - 1] / 4);
        let mut cell = ConvLstmCell::new(Key::new(0), in_features, features, window);
        (cell.ih.kernel, cell.ih.bias) = (ih.kernel, ih.bias);
        (cell.hh.kernel, cell.hh.bias) = (hh.kernel, hh.bias);
        cell
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        for (name, conv) in [("ih", &self.ih), ("hh", &self.hh)] {
            let as_linear = Linear {
                kernel: conv.kernel.clone(),
                bias: conv.bias.clone(),
            };
            as_linear.assert_matches(&want[name], &format!("{what}.{name}"));
        }
    }
}

impl<F: RnnCell + Flax, B: RnnCell + Flax> Flax for Bidirectional<F, B> {
    fn load(p: &Value) -> Self {
        Bidirectional::new(Rnn::load(&p["forward_rnn"]), Rnn::load(&p["backward_rnn"]))
    }
    fn assert_matches(&self, want: &Value, what: &str) {
        let forward = format!("{what}.forward_rnn");
        self.forward_rnn
            .assert_matches(&want["forward_rnn"], &forward);
        let backward = format!("{what}.backward_rnn");
        self.backward_rnn
            .assert_matches(&want["backward_rnn"], &backward);
    }
}

/// `sum(sin(outputs)) + Σ leaves of the final carry`, as the script's.
fn loss<C: Pytree>(carry: &C, outputs: &Array) -> Array {
    let (leaves, _) = carry.flatten();
    leaves
        .iter()
        .fold(jnp::sum(&jnp::sin(outputs), None, false), |acc, l| {
            acc + jnp::sum(l, None, false)
        })
}

/// The case's final carry and outputs from `run(model, x, carry)`, eagerly
/// and under jit, and the jitted gradient of [`loss`] w.r.t. the model,
/// the input and the initial carry: each against Flax's.
fn check_case<M, C, F>(name: &str, model: M, run: F)
where
    M: Pytree<Value = M> + Flax + Clone,
    C: Pytree<Value = C> + Flax + Clone,
    F: Fn(&M, &Array, C) -> (C, Array),
{
    let c = case(name);
    let x = arr(&c["x"]);
    let carry = C::load(&c["carry"]);
    let (final_carry, outputs) = run(&model, &x, carry.clone());
    final_carry.assert_matches(&c["final_carry"], &format!("{name}: eager final carry"));
    assert_close(&outputs, &c["outputs"], &format!("{name}: eager outputs"));

    let step = jit(|args: (M, Array, C)| {
        value_and_grad(|(m, x, carry): (M, Array, C)| {
            let (final_carry, outputs) = run(&m, &x, carry);
            (loss(&final_carry, &outputs), (final_carry, outputs))
        })
        .call_with_aux(args)
    });
    let ((_, (final_carry, outputs)), (gm, gx, gc)) = step.call((model, x, carry)).unwrap();
    final_carry.assert_matches(&c["final_carry"], &format!("{name}: jit final carry"));
    assert_close(&outputs, &c["outputs"], &format!("{name}: jit outputs"));
    let g = &c["grad"];
    gm.assert_matches(&g["params"], &format!("{name}: d/dparams"));
    assert_close(&gx, &g["x"], &format!("{name}: d/dx"));
    gc.assert_matches(&g["carry"], &format!("{name}: d/dcarry"));
}

#[test]
fn lstm_and_gru_cells_step_as_flax() {
    check_case(
        "lstm_cell",
        LstmCell::load(&case("lstm_cell")["params"]),
        |cell, x, carry| cell.apply(carry, x),
    );
    check_case(
        "gru_cell",
        GruCell::load(&case("gru_cell")["params"]),
        |cell, x, carry| cell.apply(carry, x),
    );
}

#[test]
fn rnn_over_a_sequence_matches_flax_forward_reverse_and_time_major() {
    let rnn = |name: &str| Rnn::<LstmCell>::load(&case(name)["params"]);
    let with_carry = |r: &Rnn<LstmCell>, x: &Array, c| r.apply_with_carry(x, Some(c), None);
    check_case("rnn_lstm", rnn("rnn_lstm"), with_carry);
    let time_major = Rnn {
        time_major: true,
        reverse: true,
        keep_order: true,
        ..rnn("rnn_lstm_time_major")
    };
    check_case("rnn_lstm_time_major", time_major, with_carry);

    let c = case("rnn_gru_reverse");
    let reverse = Rnn {
        reverse: true,
        ..Rnn::<GruCell>::load(&c["params"])
    };
    check_case("rnn_gru_reverse", reverse, |r, x, c| {
        r.apply_with_carry(x, Some(c), None)
    });
    let keep_order = Rnn {
        reverse: true,
        keep_order: true,
        ..Rnn::<GruCell>::load(&c["keep_order_params"])
    };
    let x = arr(&c["x"]);
    assert_close(
        &keep_order.apply(&x),
        &c["keep_order_outputs"],
        "keep_order",
    );

    // From the cell's own zero carry, as Flax's initialize_carry.
    let c = case("rnn_lstm");
    let zero = Rnn::<LstmCell>::load(&c["zero_carry_params"]);
    let x = arr(&c["x"]);
    assert_close(&zero.apply(&x), &c["zero_carry_outputs"], "zero carry");
    let apply = jit(|(r, x): (Rnn<LstmCell>, Array)| r.apply(&x));
    let y = apply.call((zero, x)).unwrap();
    assert_close(&y, &c["zero_carry_outputs"], "jit zero carry");
}

#[test]
fn seq_lengths_keep_padding_at_the_end_and_pick_each_last_carry() {
    for (name, reverse) in [
        ("rnn_seq_lengths", true),
        ("rnn_seq_lengths_forward", false),
    ] {
        let c = case(name);
        let lengths = arr(&c["seq_lengths"]);
        let rnn = Rnn {
            reverse,
            keep_order: reverse,
            ..Rnn::<LstmCell>::load(&c["params"])
        };
        check_case(name, rnn, |r, x, carry| {
            r.apply_with_carry(x, Some(carry), Some(&lengths))
        });
    }
    let c = case("bidirectional");
    let lengths = arr(&c["seq_lengths"]);
    check_case(
        "bidirectional",
        Bidirectional::<LstmCell, GruCell>::load(&c["params"]),
        |b, x, carry| b.apply_with_carry(x, Some(carry), Some(&lengths)),
    );

    let c = case("flip_sequences");
    let (x, lengths) = (arr(&c["x"]), arr(&c["seq_lengths"]));
    let flipped = flip_sequences(&x, Some(&lengths), 1, false);
    assert_close(&flipped, &c["batch_major"], "flip_sequences batch-major");
    let x_time_major = jnp::swapaxes(&x, 0, 1);
    let flipped = flip_sequences(&x_time_major, Some(&lengths), 1, true);
    assert_close(&flipped, &c["time_major"], "flip_sequences time-major");
}

#[test]
fn simple_and_mgu_cells_step_as_flax_with_and_without_their_options() {
    let cell = |name: &str| SimpleCell::load(&case(name)["params"]);
    let step = |c: &SimpleCell, x: &Array, carry| c.apply(carry, x);
    check_case("simple_cell", cell("simple_cell"), step);
    let residual = SimpleCell {
        residual: true,
        ..cell("simple_cell_residual")
    };
    check_case("simple_cell_residual", residual, step);
    for name in ["mgu_cell", "mgu_cell_no_reset"] {
        let mgu = MguCell::load(&case(name)["params"]);
        assert_eq!(mgu.reset_gate, name == "mgu_cell", "{name}");
        check_case(name, mgu, |c, x, carry| c.apply(carry, x));
    }
    let time_major = Rnn {
        time_major: true,
        ..Rnn::<MguCell>::load(&case("rnn_mgu_time_major")["params"])
    };
    check_case("rnn_mgu_time_major", time_major, |r, x, c| {
        r.apply_with_carry(x, Some(c), None)
    });
}

#[test]
fn conv_lstm_cell_steps_and_scans_a_video_as_flax() {
    let cell = ConvLstmCell::load(&case("conv_lstm_cell")["params"]);
    assert_eq!(cell.num_feature_axes(), 3);
    check_case("conv_lstm_cell", cell, |c, x, carry| c.apply(carry, x));
    // [batch, time, height, width, features], reversed within each length.
    let c = case("rnn_conv_lstm");
    let lengths = arr(&c["seq_lengths"]);
    let rnn = Rnn {
        reverse: true,
        keep_order: true,
        ..Rnn::<ConvLstmCell>::load(&c["params"])
    };
    check_case("rnn_conv_lstm", rnn, |r, x, carry| {
        r.apply_with_carry(x, Some(carry), Some(&lengths))
    });
}

#[test]
fn bidirectional_merges_with_a_function_of_its_own_as_flaxs_merge_fn() {
    let c = case("bidirectional_sum");
    let lengths = arr(&c["seq_lengths"]);
    check_case(
        "bidirectional_sum",
        Bidirectional::<SimpleCell, GruCell>::load(&c["params"]),
        |b, x, carry| b.apply_with_merge(x, Some(carry), Some(&lengths), |f, b| f + b),
    );
}

/// `initialize_carry_with` draws each carry leaf as Flax's
/// `initialize_carry` with a `carry_init` does: bit for bit, the same key.
#[test]
fn carries_drawn_by_a_carry_init_are_flaxs() {
    let want = &case("carry_init");
    let normal = initializers::normal(0.5);
    let lstm = LstmCell::new(Key::new(0), 3, 4).initialize_carry_with(Key::new(3), &[2, 3], normal);
    lstm.assert_matches(&want["lstm"], "lstm carry");
    let gru = GruCell::new(Key::new(0), 3, 4).initialize_carry_with(Key::new(3), &[2, 3], normal);
    gru.assert_matches(&want["gru"], "gru carry");
    let simple =
        SimpleCell::new(Key::new(0), 3, 4).initialize_carry_with(Key::new(3), &[2, 3], normal);
    simple.assert_matches(&want["simple"], "simple carry");
    let mgu = MguCell::new(Key::new(0), 3, 4).initialize_carry_with(Key::new(3), &[2, 3], normal);
    mgu.assert_matches(&want["mgu"], "mgu carry");
    let conv = ConvLstmCell::new(Key::new(0), 2, 4, &[3, 3]).initialize_carry_with(
        Key::new(3),
        &[2, 5, 5, 2],
        initializers::uniform(2.0),
    );
    conv.assert_matches(&want["conv_lstm"], "conv_lstm carry");
    // The drawn carry runs: an RNN from it.
    let rnn = Rnn::new(MguCell::new(Key::new(0), 3, 4));
    let x = jnp::ones(&[2, 5, 3], DType::F32);
    let (h, y) = rnn.apply_with_carry(&x, Some(mgu), None);
    assert_eq!((h.shape(), y.shape()), (&[2i64, 4][..], &[2i64, 5, 4][..]));
}

/// Fresh cells have Flax's parameter names and shapes, orthogonal hidden
/// kernels and zero biases.
#[test]
fn fresh_cells_have_flax_names_shapes_and_orthogonal_recurrent_kernels() {
    let cell = LstmCell::new(Key::new(0), 3, 4);
    let flax = &case("lstm_cell")["params"];
    let names = oxla_train::checkpoint::tensor_names(&cell);
    let mut want = Vec::new();
    for gate in ["ii", "if", "ig", "io", "hi", "hf", "hg", "ho"] {
        for leaf in ["kernel", "bias"] {
            if let Some(p) = flax[gate].get(leaf) {
                want.push(format!("{gate}.{leaf}"));
                let got = match leaf {
                    "kernel" => gate_of(&cell, gate).kernel.clone(),
                    _ => gate_of(&cell, gate).bias.clone().unwrap(),
                };
                assert_eq!(got.shape(), reference::array(p).shape(), "{gate}.{leaf}");
            }
        }
    }
    assert_eq!(names, want);
    assert_eq!(
        cell.hi.bias.as_ref().unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 4]
    );
    let names = oxla_train::checkpoint::tensor_names(&GruCell::new(Key::new(0), 3, 4));
    assert!(names.contains(&"in.kernel".to_string()) && !names.contains(&"hr.bias".into()));

    // Orthogonal: QᵀQ = I for a square kernel, QQᵀ = I with fewer rows.
    let eye = |n| jnp::eye(n, DType::F32);
    let q = &cell.hf.kernel;
    let qtq = jnp::matmul(&jnp::matrix_transpose(q), q);
    let diff = jnp::max(&jnp::abs(&(qtq - eye(4))), None, false);
    assert!(diff.item::<f32>().unwrap() < 1e-5);
    let wide = initializers::orthogonal().init(Key::new(3), &[3, 5], DType::F32);
    let qqt = jnp::matmul(&wide, &jnp::matrix_transpose(&wide));
    let diff = jnp::max(&jnp::abs(&(qqt - eye(3))), None, false);
    assert!(diff.item::<f32>().unwrap() < 1e-5);
    let err = initializers::orthogonal().init(Key::new(3), &[5], DType::F32);
    let msg = error_of(&err);
    assert!(
        msg.contains("orthogonal initializer") && msg.contains("[5]"),
        "{msg}"
    );
}

fn gate_of<'c>(cell: &'c LstmCell, name: &str) -> &'c Linear {
    match name {
        "ii" => &cell.ii,
        "if" => &cell.if_,
        "ig" => &cell.ig,
        "io" => &cell.io,
        "hi" => &cell.hi,
        "hf" => &cell.hf,
        "hg" => &cell.hg,
        _ => &cell.ho,
    }
}

fn error_of(a: &Array) -> String {
    a.check().map(|_| ()).unwrap_err().to_string()
}

#[test]
fn wrong_features_carries_and_lengths_name_the_layer_shapes_and_line() {
    let cell = LstmCell::new(Key::new(0), 3, 4);
    let x = jnp::ones(&[2, 5], DType::F32);
    let line = line!() + 1;
    let ((c, h), y) = cell.apply(cell.initialize_carry(&[2, 3]), &x);
    let msg = error_of(&y);
    assert!(
        msg.contains("LstmCell.apply of f32[2,5]")
            && msg.contains("last dimension is 3")
            && msg.contains(&format!("recurrent_layers.rs:{line}")),
        "{msg}"
    );
    assert_eq!((error_of(&c), error_of(&h)), (msg.clone(), msg));
    let gru = GruCell::new(Key::new(0), 3, 4);
    let (_, y) = gru.apply(
        jnp::zeros(&[2, 5], DType::F32),
        &jnp::ones(&[2, 3], DType::F32),
    );
    let msg = error_of(&y);
    assert!(
        msg.contains("GruCell.apply of f32[2,3]: its carry is f32[2,5]"),
        "{msg}"
    );

    let rnn = Rnn::new(cell);
    let line = line!() + 1;
    let msg = error_of(&rnn.apply(&jnp::ones(&[2, 6, 7], DType::F32)));
    assert!(
        msg.contains("Rnn.apply of f32[2,6,7]")
            && msg.contains("last dimension is 3")
            && msg.contains(&format!("recurrent_layers.rs:{line}")),
        "{msg}"
    );
    let msg = error_of(&rnn.apply(&jnp::ones(&[3], DType::F32)));
    assert!(msg.contains("[*batch, time, features]"), "{msg}");
    let x = jnp::ones(&[2, 6, 3], DType::F32);
    let bad_carry = (
        jnp::zeros(&[2, 3], DType::F32),
        jnp::zeros(&[2, 4], DType::F32),
    );
    let line = line!() + 1;
    let ((c, _), y) = rnn.apply_with_carry(&x, Some(bad_carry), None);
    let msg = error_of(&y);
    assert!(
        msg.contains(
            "the initial carry is (f32[2,3], f32[2,4]), but LstmCell needs (f32[2,4], f32[2,4])"
        ) && msg.contains(&format!("recurrent_layers.rs:{line}")),
        "{msg}"
    );
    assert_eq!(error_of(&c), msg);
    let lengths = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    let (_, y) = rnn.apply_with_carry(&x, None, Some(&lengths));
    let msg = error_of(&y);
    assert!(
        msg.contains("seq_lengths is i32[3]") && msg.contains("[2]"),
        "{msg}"
    );

    // The new cells: a carry that does not fit, a video of too few axes,
    // a window of no axes (the constructor's error, reported by apply).
    let simple = SimpleCell::new(Key::new(0), 3, 4);
    let (_, y) = simple.apply(
        jnp::zeros(&[2, 5], DType::F32),
        &jnp::ones(&[2, 3], DType::F32),
    );
    let msg = error_of(&y);
    assert!(
        msg.contains("SimpleCell.apply of f32[2,3]: its carry is f32[2,5]"),
        "{msg}"
    );
    let conv = Rnn::new(ConvLstmCell::new(Key::new(0), 2, 3, &[3, 3]));
    let line = line!() + 1;
    let y = conv.apply(&jnp::ones(&[4, 5, 2], DType::F32));
    let msg = error_of(&y);
    assert!(
        msg.contains("Rnn.apply of f32[4,5,2]")
            && msg.contains("[*batch, time, *spatial, features]")
            && msg.contains(&format!("recurrent_layers.rs:{line}")),
        "{msg}"
    );
    let no_window = ConvLstmCell::new(Key::new(0), 2, 3, &[]);
    let ((c, _), y) = no_window.apply(
        no_window.initialize_carry(&[1, 5, 5, 2]),
        &jnp::ones(&[1, 5, 5, 2], DType::F32),
    );
    let msg = error_of(&y);
    assert!(msg.contains("at least one spatial axis"), "{msg}");
    assert_eq!(error_of(&c), msg);
}
