//! oxla_nn's Conv and ConvTranspose against Flax linen
//! (reference/conv_layers.py): on Flax's parameters, each layer's output
//! and the gradient of `sum(sin(y))` w.r.t. the input, the kernel and the
//! bias, eagerly and under `jit`; Flax's kernel shape and LeCun variance of
//! a grouped kernel; and the errors of inputs and hyper-parameters that do
//! not fit.

use oxla::lax::{Padding, Precision};
use oxla::random::Key;
use oxla::{Array, DType, Pytree, grad, jit, numpy as jnp};
use oxla_nn::{Conv, Conv2d, ConvInit, ConvLocal, ConvLocalGeometry, ConvPadding, ConvTranspose};
use serde_json::Value;

use crate::reference::{self, assert_contraction_close as assert_close};

fn case(name: &str) -> &'static Value {
    &reference::script("conv_layers.py")[name]
}

fn arr(v: &Value) -> Array {
    reference::array(v)
}

fn loss(y: &Array) -> Array {
    jnp::sum(&jnp::sin(y), None, false)
}

/// A convolution layer under test: how it runs and where its parameters
/// are (in the layer and in its gradient).
trait Layer: Pytree + Clone {
    fn run(&self, x: &Array) -> Array;
    fn params(&self) -> (&Array, Option<&Array>);
}

impl Layer for Conv {
    fn run(&self, x: &Array) -> Array {
        self.apply(x)
    }
    fn params(&self) -> (&Array, Option<&Array>) {
        (&self.kernel, self.bias.as_ref())
    }
}

impl Layer for ConvTranspose {
    fn run(&self, x: &Array) -> Array {
        self.apply(x)
    }
    fn params(&self) -> (&Array, Option<&Array>) {
        (&self.kernel, self.bias.as_ref())
    }
}

impl Layer for ConvLocal {
    fn run(&self, x: &Array) -> Array {
        self.apply(x)
    }
    fn params(&self) -> (&Array, Option<&Array>) {
        (&self.kernel, self.bias.as_ref())
    }
}

impl Layer for Conv2d {
    fn run(&self, x: &Array) -> Array {
        self.apply(x)
    }
    fn params(&self) -> (&Array, Option<&Array>) {
        (&self.kernel, self.bias.as_ref())
    }
}

/// Flax's kernel and bias of `c`.
fn flax_params(c: &Value) -> (Array, Option<Array>) {
    (arr(&c["kernel"]), c.get("bias").map(arr))
}

/// `layer`'s output and gradients (eager and jitted) against Flax's.
fn check<L: Layer>(layer: L, c: &Value, what: &str) {
    let x = arr(&c["x"]);
    assert_close(&layer.run(&x), &c["output"], what);
    let forward = jit(|(l, x): (L, Array)| l.run(&x));
    let y = forward.call((layer.clone(), x.clone())).unwrap();
    assert_close(&y, &c["output"], &format!("{what} under jit"));
    let gradient = |(l, x): (L, Array)| grad(|(l, x): (L, Array)| loss(&l.run(&x))).call((l, x));
    let eager = gradient((layer.clone(), x.clone())).unwrap();
    let jitted = jit(gradient).call((layer, x)).unwrap();
    for ((g, gx), how) in [(eager, "eager"), (jitted, "jit")] {
        let what = format!("{what} ({how})");
        assert_close(&gx, &c["grad"]["x"], &format!("{what}: d/dx"));
        let (kernel, bias) = g.params();
        assert_close(kernel, &c["grad"]["kernel"], &format!("{what}: d/dkernel"));
        match (bias, c["grad"].get("bias")) {
            (Some(b), Some(want)) => assert_close(b, want, &format!("{what}: d/dbias")),
            (None, None) => {}
            _ => panic!("{what}: bias presence differs from Flax's"),
        }
    }
}

/// A `Conv` with Flax's parameters of case `name` and `hyper`'s
/// hyper-parameters on top of the defaults.
fn conv(name: &str, configure: impl FnOnce(Conv) -> Conv) -> Conv {
    let (kernel, bias) = flax_params(case(name));
    configure(Conv {
        kernel,
        bias,
        ..Conv::new(Key::new(0), 1, 1, &[1])
    })
}

fn conv_transpose(
    name: &str,
    configure: impl FnOnce(ConvTranspose) -> ConvTranspose,
) -> ConvTranspose {
    let (kernel, bias) = flax_params(case(name));
    configure(ConvTranspose {
        kernel,
        bias,
        ..ConvTranspose::new(Key::new(0), 1, 1, &[1])
    })
}

fn check_conv(name: &str, configure: impl FnOnce(Conv) -> Conv) {
    check(conv(name, configure), case(name), name);
}

fn check_transpose(name: &str, configure: impl FnOnce(ConvTranspose) -> ConvTranspose) {
    check(conv_transpose(name, configure), case(name), name);
}

#[test]
fn conv_1d_with_groups_dilation_and_causal_padding_matches_flax() {
    check_conv("conv1d_causal", |c| Conv {
        feature_group_count: 2,
        ..c.with_kernel_dilation(&[2])
            .with_padding(ConvPadding::Causal)
    });
    check_conv("conv1d_explicit", |c| Conv {
        feature_group_count: 2,
        ..c.with_kernel_dilation(&[2])
            .with_strides(&[2])
            .with_padding(ConvPadding::Explicit(vec![(2, 1)]))
    });
}

#[test]
fn conv_takes_no_batch_axis_or_several_as_flax() {
    check_conv("conv1d_unbatched", |c| c);
    check_conv("conv1d_two_batch_axes", |c| c);
}

#[test]
fn conv_2d_with_strides_and_valid_circular_reflect_padding_matches_flax() {
    check_conv("conv2d_valid", |c| {
        c.with_strides(&[2, 1]).with_padding(Padding::Valid)
    });
    // One stride for both axes, as Flax's int; an even window (3, 4).
    check_conv("conv2d_circular", |c| {
        c.with_strides(&[2]).with_padding(ConvPadding::Circular)
    });
    check_conv("conv2d_reflect", |c| c.with_padding(ConvPadding::Reflect));
    check_conv("conv2d_input_dilation", |c| {
        c.with_input_dilation(&[2, 1])
            .with_padding(Padding::Explicit(vec![(1, 1), (2, 0)]))
    });
    // Conv2d runs the same code.
    let (kernel, bias) = flax_params(case("conv2d_valid"));
    let conv2d = Conv2d {
        kernel,
        bias,
        strides: [2, 1],
        padding: Padding::Valid,
    };
    check(conv2d.clone(), case("conv2d_valid"), "Conv2d valid");
    check(
        Conv::from(conv2d),
        case("conv2d_valid"),
        "Conv::from(Conv2d)",
    );
}

#[test]
fn conv_3d_same_matches_flax() {
    check_conv("conv3d_same", |c| c.with_strides(&[2, 1, 2]));
}

#[test]
fn conv_transpose_1d_matches_flax() {
    check_transpose("transpose1d_same", |c| c.with_strides(&[2]));
    check_transpose("transpose1d_valid", |c| {
        c.with_strides(&[3])
            .with_kernel_dilation(&[2])
            .with_padding(ConvPadding::Valid)
    });
}

#[test]
fn conv_transpose_2d_with_circular_and_explicit_padding_matches_flax() {
    check_transpose("transpose2d_circular", |c| {
        c.with_strides(&[2, 2]).with_padding(ConvPadding::Circular)
    });
    check_transpose("transpose2d_circular_transposed", |c| ConvTranspose {
        transpose_kernel: true,
        ..c.with_strides(&[2, 2]).with_padding(ConvPadding::Circular)
    });
    check_transpose("transpose2d_explicit", |c| {
        c.with_strides(&[2, 1])
            .with_padding(Padding::Explicit(vec![(1, 2), (0, 1)]))
    });
}

/// Flax's `mask` (multiplied into the kernel at apply, so masked weights
/// get no gradient) on Conv and ConvTranspose, and Flax's `precision`.
#[test]
fn kernel_masks_and_precision_apply_as_flax() {
    let mask = jnp::tril(&jnp::ones(&[3, 3, 4], DType::F32), 0);
    check_conv("conv1d_masked", |c| {
        c.with_padding(ConvPadding::Valid).with_mask(&mask)
    });
    check_transpose("transpose1d_masked", |c| {
        c.with_strides(&[2]).with_mask(&mask)
    });
    check_conv("conv2d_highest", |c| {
        c.with_precision(Some(Precision::Highest))
    });
    // A mask is static structure keyed by its contents: another mask of
    // the same shape compiles again rather than reusing the first program.
    let conv = conv("conv1d_masked", |c| c.with_padding(ConvPadding::Valid));
    let x = arr(&case("conv1d_masked")["x"]);
    let forward = jit(|(l, x): (Conv, Array)| l.apply(&x));
    let first = forward
        .call((conv.clone().with_mask(&mask), x.clone()))
        .unwrap();
    let other = jnp::ones(&[3, 3, 4], DType::F32);
    let second = forward
        .call((conv.clone().with_mask(&other), x.clone()))
        .unwrap();
    assert_eq!(forward.cache_size(), 2);
    assert_close(&first, &case("conv1d_masked")["output"], "masked under jit");
    let unmasked = conv.apply(&x).to_vec::<f32>().unwrap();
    let masked_by_ones = second.to_vec::<f32>().unwrap();
    let gap = unmasked
        .iter()
        .zip(&masked_by_ones)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(gap < 1e-5, "a mask of ones changed the output by {gap}");
}

/// A `ConvLocal` built for `input_spatial` with `geometry`: its kernel and
/// bias shapes must be Flax's; then Flax's parameters are put in.
fn local(
    name: &str,
    input_spatial: &[i64],
    in_features: i64,
    window: &[i64],
    geometry: ConvLocalGeometry,
) -> ConvLocal {
    let (kernel, bias) = flax_params(case(name));
    let features = *kernel.shape().last().unwrap();
    let init = ConvInit {
        bias_init: bias.as_ref().map(|_| oxla_nn::initializers::zeros()),
        ..ConvInit::default()
    };
    let built = ConvLocal::with_geometry(
        Key::new(0),
        input_spatial,
        in_features,
        features,
        window,
        &geometry,
        &init,
    );
    assert_eq!(built.kernel.shape(), kernel.shape(), "{name}: kernel shape");
    assert_eq!(
        built.bias.as_ref().map(|b| b.shape().to_vec()),
        bias.as_ref().map(|b| b.shape().to_vec()),
        "{name}: bias shape"
    );
    ConvLocal {
        kernel,
        bias,
        ..built
    }
}

#[test]
fn conv_local_matches_flax() {
    let valid = ConvLocalGeometry {
        padding: ConvPadding::Valid,
        ..Default::default()
    };
    check(
        local("local1d_valid", &[8], 3, &[3], valid),
        case("local1d_valid"),
        "local1d_valid",
    );
    let strided = ConvLocalGeometry {
        strides: vec![2, 1],
        ..Default::default()
    };
    let layer = local("local2d_strided_same", &[5, 6], 2, &[3, 2], strided);
    check(layer, case("local2d_strided_same"), "local2d_strided_same");
    let causal = ConvLocalGeometry {
        padding: ConvPadding::Causal,
        kernel_dilation: vec![2],
        ..Default::default()
    };
    let mask = jnp::tril(&jnp::ones(&[6, 6, 4], DType::F32), 0);
    let layer = local("local1d_masked_dilated", &[6], 3, &[2], causal).with_mask(&mask);
    check(
        layer,
        case("local1d_masked_dilated"),
        "local1d_masked_dilated",
    );
    let layer = local(
        "local1d_unbatched_no_bias",
        &[6],
        2,
        &[3],
        ConvLocalGeometry::default(),
    );
    check(
        layer,
        case("local1d_unbatched_no_bias"),
        "local1d_unbatched_no_bias",
    );
    // Flax's LeCun normal over the whole kernel shape, zero bias.
    let drawn = ConvLocal::new(Key::new(1), &[8], 3, 4, &[3]);
    assert_eq!(drawn.kernel.shape(), &[8, 9, 4]);
    assert_eq!(drawn.bias.unwrap().to_vec::<f32>().unwrap(), vec![0.0; 32]);
}

/// The kernel's shape as Flax's and its spread as Flax's LeCun normal
/// (fan-in over the window and one group's inputs), within sampling noise.
#[test]
fn initializers_draw_flax_shapes_and_variance() {
    let c = case("init_stats");
    let conv = Conv::grouped(Key::new(3), 32, 64, &[3, 3], 2);
    let want: Vec<i64> = serde_json::from_value(c["kernel_shape"].clone()).unwrap();
    assert_eq!(conv.kernel.shape(), &want[..]);
    let std = jnp::std(&conv.kernel, None, false).item::<f32>().unwrap() as f64;
    let flax = c["std"].as_f64().unwrap();
    assert!(
        (std / flax - 1.0).abs() < 0.05,
        "std {std} vs Flax's {flax}"
    );
    assert!((std * 12.0 - 1.0).abs() < 0.05, "std {std} vs 1/sqrt(144)");
    assert_eq!(conv.bias.unwrap().to_vec::<f32>().unwrap(), vec![0.0; 64]);
    let up = ConvTranspose::with_init(Key::new(0), 3, 5, &[2, 2], true, &ConvInit::default());
    assert_eq!(up.kernel.shape(), &[2, 2, 5, 3]);
    let no_bias = ConvInit {
        bias_init: None,
        ..ConvInit::default()
    };
    assert!(
        Conv::with_init(Key::new(0), 3, 5, &[2], 1, &no_bias)
            .bias
            .is_none()
    );
}

fn error_of(a: &Array) -> String {
    a.check().map(|_| ()).unwrap_err().to_string()
}

#[test]
fn inputs_and_settings_that_do_not_fit_name_the_layer_shapes_and_line() {
    let conv = Conv::grouped(Key::new(0), 4, 6, &[3], 2);
    let x = jnp::ones(&[2, 9, 5], DType::F32);
    let line = line!() + 1;
    let msg = error_of(&conv.apply(&x));
    assert!(
        msg.contains("Conv.apply of f32[2,9,5]")
            && msg.contains("last dimension is 4")
            && msg.contains(&format!("conv_layers.rs:{line}")),
        "{msg}"
    );
    // Too few axes for the window.
    let msg =
        error_of(&Conv::new(Key::new(0), 3, 4, &[3, 3]).apply(&jnp::ones(&[5, 3], DType::F32)));
    assert!(
        msg.contains("Conv.apply of f32[5,3]") && msg.contains("rank 3 or more"),
        "{msg}"
    );
    // Hyper-parameters of another rank, CAUSAL beyond 1-D, string padding
    // with input dilation (as JAX refuses it).
    let x = jnp::ones(&[1, 6, 6, 3], DType::F32);
    let conv = Conv::new(Key::new(0), 3, 4, &[3, 3]);
    let msg = error_of(&conv.clone().with_strides(&[1, 2, 1]).apply(&x));
    assert!(
        msg.contains("3 strides [1, 2, 1] for 2 spatial axes"),
        "{msg}"
    );
    let msg = error_of(&conv.clone().with_padding(ConvPadding::Causal).apply(&x));
    assert!(
        msg.contains("CAUSAL padding is for 1-D convolutions only"),
        "{msg}"
    );
    let msg = error_of(&conv.clone().with_input_dilation(&[2]).apply(&x));
    assert!(
        msg.contains("SAME padding with input dilation [2, 2]"),
        "{msg}"
    );
    let msg = error_of(
        &conv
            .with_padding(Padding::Explicit(vec![(1, 1); 3]))
            .apply(&x),
    );
    assert!(msg.contains("3 padding pairs"), "{msg}");
    // Groups that do not divide the features: the constructor's error and line.
    let line = line!() + 1;
    let bad = Conv::grouped(Key::new(0), 4, 6, &[3], 4);
    let msg = error_of(&bad.apply(&jnp::ones(&[1, 5, 4], DType::F32)));
    assert!(
        msg.contains("4 feature groups do not divide 4 input and 6 output features")
            && msg.contains(&format!("conv_layers.rs:{line}")),
        "{msg}"
    );
    // ConvTranspose: wrong features, a padding it has not.
    let up = ConvTranspose::new(Key::new(0), 3, 4, &[3]);
    let line = line!() + 1;
    let msg = error_of(&up.apply(&jnp::ones(&[2, 5, 4], DType::F32)));
    assert!(
        msg.contains("ConvTranspose.apply of f32[2,5,4]")
            && msg.contains("last dimension is 3")
            && msg.contains(&format!("conv_layers.rs:{line}")),
        "{msg}"
    );
    let msg = error_of(
        &up.with_padding(ConvPadding::Reflect)
            .apply(&jnp::ones(&[2, 5, 3], DType::F32)),
    );
    assert!(
        msg.contains("REFLECT padding is not a transposed convolution's"),
        "{msg}"
    );
    // A mask of another shape than the kernel's; a ConvLocal given an
    // input of other positions than it was built for, or a geometry that
    // does not fit.
    let line = line!() + 4;
    let msg = error_of(
        &Conv::new(Key::new(0), 3, 4, &[3])
            .with_mask(&jnp::ones(&[3, 4], DType::F32))
            .apply(&jnp::ones(&[1, 5, 3], DType::F32)),
    );
    assert!(
        msg.contains("Conv.apply of f32[1,5,3]")
            && msg.contains("the mask needs the kernel's shape [3, 3, 4], got [3, 4]")
            && msg.contains(&format!("conv_layers.rs:{line}")),
        "{msg}"
    );
    let local = ConvLocal::new(Key::new(0), &[8], 3, 4, &[3]);
    let msg = error_of(&local.apply(&jnp::ones(&[2, 6, 3], DType::F32)));
    assert!(
        msg.contains("ConvLocal.apply of f32[2,6,3]")
            && msg.contains(
                "weights for output positions [8], but this input has output positions [6]"
            ),
        "{msg}"
    );
    let msg = error_of(&local.apply(&jnp::ones(&[2, 8, 2], DType::F32)));
    assert!(msg.contains("last dimension is 3"), "{msg}");
    let line = line!() + 1;
    let bad = ConvLocal::new(Key::new(0), &[8, 8], 3, 4, &[3]);
    let msg = error_of(&bad.apply(&jnp::ones(&[2, 8, 3], DType::F32)));
    assert!(
        msg.contains(
            "ConvLocal: the window [3] needs one size per spatial axis of the input's [8, 8]"
        ) && msg.contains(&format!("conv_layers.rs:{line}")),
        "{msg}"
    );
    let causal_2d = ConvLocalGeometry {
        padding: ConvPadding::Causal,
        ..Default::default()
    };
    let bad = ConvLocal::with_geometry(
        Key::new(0),
        &[4, 4],
        1,
        1,
        &[2, 2],
        &causal_2d,
        &ConvInit::default(),
    );
    let msg = error_of(&bad.apply(&jnp::ones(&[1, 4, 4, 1], DType::F32)));
    assert!(
        msg.contains("CAUSAL padding is for 1-D convolutions only"),
        "{msg}"
    );
    // Conv2d names itself.
    let msg = error_of(
        &Conv2d::new(Key::new(0), 3, 4, [3, 3]).apply(&jnp::ones(&[1, 6, 6, 2], DType::F32)),
    );
    assert!(msg.contains("Conv2d.apply of f32[1,6,6,2]"), "{msg}");
}
