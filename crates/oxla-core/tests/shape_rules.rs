//! Every primitive's shape rule, accepted and rejected, without a plugin:
//! a table of cases, each a primitive, its operand types and either the
//! result types or a piece of the error. `every_primitive_has_a_case`
//! fails to compile when a primitive is added (its exhaustive match), and
//! fails when a primitive has no accepted case in the table.

use std::collections::BTreeSet;
use std::sync::Arc;

use oxla_core::primitive::{
    call, collective, contract, control, elementwise, fft, host, index, linalg, marker, reduce,
    rng, shape, sharding,
};
use oxla_core::shape_rules::abstract_eval;
use oxla_core::{
    ArgOp, Atom, Aval, AxisGroup, AxisType, BinaryOp, Comparison, ConvDimensionNumbers,
    CumulativeOp, DType, ExportedFunction, FftType, GatherDimensionNumbers, GatherMode,
    HostCallback, Jaxpr, JaxprBuilder, MeshDesc, OpaqueRule, Primitive, ReduceOp, RematPolicy,
    ScalarKey, ScatterDimensionNumbers, ScatterOp, ShardingDesc, SubJaxpr, UnaryOp, VmapMethod,
    WindowOp,
};

/// An aval from its text: `f32[2,3]`, `i32[]`; with an explicit sharding
/// on [`explicit_mesh`] where a dimension names its axes (`f32[8@x,4]`,
/// `f32[8@(x,y)]`), or where the text starts with `~` (typed, unsplit).
fn t(text: &str) -> Aval {
    let typed = text.starts_with('~');
    let (dtype, dims) = text
        .trim_start_matches('~')
        .split_once('[')
        .expect("dtype[dims]");
    let mut sizes = Vec::new();
    let mut axes: Vec<Arc<[Arc<str>]>> = Vec::new();
    for dim in split_dims(dims.trim_end_matches(']')) {
        let (size, names) = dim.split_once('@').unwrap_or((&dim, ""));
        sizes.push(size.parse::<i64>().expect("a dimension"));
        axes.push(
            names
                .trim_matches(|c| c == '(' || c == ')')
                .split(',')
                .filter(|a| !a.is_empty())
                .map(Arc::from)
                .collect(),
        );
    }
    let aval = Aval::new(DType::from_name(dtype).expect("a dtype"), &sizes);
    match typed || text.contains('@') {
        true => aval.with_sharding(Some(ShardingDesc::new(explicit_mesh(), axes.into()))),
        false => aval,
    }
}

/// The dimensions of `2,3@x,4@(x,y)`, split at the commas outside
/// parentheses.
fn split_dims(text: &str) -> Vec<String> {
    let (mut dims, mut current, mut depth) = (Vec::new(), String::new(), 0);
    for c in text.chars() {
        match c {
            '(' | ')' => {
                depth += if c == '(' { 1 } else { -1 };
                current.push(c);
            }
            ',' if depth == 0 => dims.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        dims.push(current);
    }
    dims
}

/// What a case expects: the result types, or a piece of the error.
enum Expect {
    Types(&'static [&'static str]),
    Error(&'static str),
}
use Expect::{Error, Types};

/// One shape-rule case.
struct Case {
    primitive: Primitive,
    inputs: &'static [&'static str],
    expect: Expect,
}

fn case(primitive: Primitive, inputs: &'static [&'static str], expect: Expect) -> Case {
    Case {
        primitive,
        inputs,
        expect,
    }
}

fn dims(d: &[i64]) -> oxla_core::Dims {
    d.iter().copied().collect()
}

fn ew(op: elementwise::Op) -> Primitive {
    Primitive::Elementwise(op)
}
fn sh(op: shape::Op) -> Primitive {
    Primitive::Shape(op)
}
fn ix(op: index::Op) -> Primitive {
    Primitive::Index(op)
}
fn rd(op: reduce::Op) -> Primitive {
    Primitive::Reduce(op)
}

/// A closed jaxpr of `inputs` whose outputs are `f`'s atoms.
fn jaxpr(inputs: &[&str], f: impl FnOnce(&mut JaxprBuilder, &[Atom]) -> Vec<Atom>) -> SubJaxpr {
    let mut b = JaxprBuilder::new();
    let vars: Vec<Atom> = inputs
        .iter()
        .map(|a| Atom::Var(b.add_invar(t(a))))
        .collect();
    let outs = f(&mut b, &vars);
    SubJaxpr::new(b.finish(outs))
}

/// `x + y` in a jaxpr.
fn add(b: &mut JaxprBuilder, x: &Atom, y: &Atom) -> Atom {
    let out = b
        .add_equation(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            vec![x.clone(), y.clone()],
            None,
        )
        .expect("add");
    Atom::Var(out[0])
}

/// The parameters of a `custom_linear_solve` over `f32[3]` whose four (or
/// two, without `transposable`) functions each capture one `f32[3]`.
fn linear_solve(transposable: bool) -> control::LinearSolveParams {
    let function = || jaxpr(&["f32[3]", "f32[3]"], |b, v| vec![add(b, &v[0], &v[1])]);
    let n = usize::from(transposable);
    control::LinearSolveParams {
        matvec: function(),
        vecmat: transposable.then(function),
        solve: function(),
        transpose_solve: transposable.then(function),
        consts: control::LinearSolveConsts {
            matvec: 1,
            vecmat: n,
            solve: 1,
            transpose_solve: n,
        },
    }
}

/// `x < y` in a jaxpr.
fn lt(b: &mut JaxprBuilder, x: &Atom, y: &Atom) -> Atom {
    let out = b
        .add_equation(
            ew(elementwise::Op::Compare(Comparison::Lt)),
            vec![x.clone(), y.clone()],
            None,
        )
        .expect("lt");
    Atom::Var(out[0])
}

fn mesh() -> MeshDesc {
    MeshDesc::new(
        Arc::from([(Arc::from("x"), 4), (Arc::from("y"), 2)]),
        (0..8).collect(),
    )
}

/// [`mesh`] with both axes explicit.
fn explicit_mesh() -> MeshDesc {
    mesh().with_axis_types(&[AxisType::Explicit, AxisType::Explicit])
}

/// A reshard to `entries` on [`explicit_mesh`] (`None`: into auto axes).
fn reshard(entries: Option<&[&[&str]]>) -> Primitive {
    Primitive::Sharding(sharding::Op::Reshard {
        sharding: entries.map(|entries| ShardingDesc {
            mesh: explicit_mesh(),
            ..spec(entries)
        }),
    })
}

fn group(axes: &[&str]) -> AxisGroup {
    AxisGroup::devices(mesh(), axes.iter().map(|a| Arc::from(*a)).collect())
}

fn spec(entries: &[&[&str]]) -> ShardingDesc {
    ShardingDesc::new(
        mesh(),
        entries
            .iter()
            .map(|axes| axes.iter().map(|a| Arc::from(*a)).collect())
            .collect(),
    )
}

/// A matrix product contracting `lhs` with `rhs`, with `out` as its
/// out_sharding on [`explicit_mesh`].
fn dot(lhs: &[i64], rhs: &[i64], out: Option<&[&[&str]]>) -> Primitive {
    Primitive::Contract(contract::Op::DotGeneral {
        lhs_contracting: dims(lhs),
        rhs_contracting: dims(rhs),
        lhs_batch: dims(&[]),
        rhs_batch: dims(&[]),
        preferred_element_type: None,
        precision: None,
        out_sharding: out.map(|entries| ShardingDesc {
            mesh: explicit_mesh(),
            ..spec(entries)
        }),
    })
}

/// A 2-D convolution in NCHW / OIHW layout, stride 1, no padding.
fn conv_nchw() -> Primitive {
    Primitive::Contract(contract::Op::ConvGeneralDilated {
        window_strides: dims(&[1, 1]),
        padding: vec![(0, 0), (0, 0)],
        lhs_dilation: dims(&[1, 1]),
        rhs_dilation: dims(&[1, 1]),
        dimension_numbers: ConvDimensionNumbers {
            lhs_spec: dims(&[0, 1, 2, 3]),
            rhs_spec: dims(&[0, 1, 2, 3]),
            out_spec: dims(&[0, 1, 2, 3]),
        },
        feature_group_count: 1,
        batch_group_count: 1,
        preferred_element_type: None,
        precision: None,
    })
}

fn rule() -> OpaqueRule {
    OpaqueRule::new("rule", Arc::new(()))
}

fn unary(op: UnaryOp) -> Primitive {
    ew(elementwise::Op::Unary(op))
}

fn cases() -> Vec<Case> {
    let body_add = || jaxpr(&["f32[3]", "f32[3]"], |b, v| vec![add(b, &v[0], &v[1])]);
    vec![
        // Elementwise.
        case(unary(UnaryOp::Sin), &["f32[2,3]"], Types(&["f32[2,3]"])),
        case(unary(UnaryOp::Sin), &["i32[2]"], Error("needs a floating")),
        // Linear algebra over the last two dimensions.
        case(cholesky(), &["f32[2,3,3]"], Types(&["f32[2,3,3]"])),
        case(cholesky(), &["c64[3,3]"], Types(&["c64[3,3]"])),
        case(cholesky(), &["f32[3,4]"], Error("square matrices")),
        case(
            cholesky(),
            &["i32[3,3]"],
            Error("a floating-point or complex type"),
        ),
        case(cholesky(), &["f32[3@x,3]"], Error("reads the whole matrix")),
        case(cholesky(), &["f32[2@x,3,3]"], Types(&["f32[2@x,3,3]"])),
        case(lu(), &["f32[2,4,3]"], Types(&["f32[2,4,3]", "i32[2,3]"])),
        case(lu(), &["c128[3,5]"], Types(&["c128[3,5]", "i32[3]"])),
        case(
            lu(),
            &["f16[3,3]"],
            Error("float32, float64, complex64 or complex128"),
        ),
        case(lu(), &["f32[3]"], Error("of rank 2 or more")),
        case(lu(), &["f32[3@x,3]"], Error("reads the whole matrix")),
        case(qr(true), &["f32[5,3]"], Types(&["f32[5,5]", "f32[5,3]"])),
        case(qr(false), &["f32[5,3]"], Types(&["f32[5,3]", "f32[3,3]"])),
        case(
            qr(false),
            &["c64[2,3,4]"],
            Types(&["c64[2,3,3]", "c64[2,3,4]"]),
        ),
        case(eigh(), &["c64[2,3,3]"], Types(&["c64[2,3,3]", "f32[2,3]"])),
        case(eigh(), &["f32[3,4]"], Error("square matrices")),
        case(
            eigh(),
            &["f32[2@x,3,3]"],
            Types(&["f32[2@x,3,3]", "f32[2@x,3]"]),
        ),
        case(
            svd(true, true),
            &["f64[4,2]"],
            Types(&["f64[2]", "f64[4,4]", "f64[2,2]"]),
        ),
        case(
            svd(false, true),
            &["c64[4,2]"],
            Types(&["f32[2]", "c64[4,2]", "c64[2,2]"]),
        ),
        case(svd(true, false), &["f32[2,4,6]"], Types(&["f32[2,4]"])),
        case(
            eig(true, true),
            &["f32[3,3]"],
            Types(&["c64[3]", "c64[3,3]", "c64[3,3]"]),
        ),
        case(eig(false, false), &["c128[2,3,3]"], Types(&["c128[2,3]"])),
        case(eig(false, true), &["i32[3,3]"], Error("float32, float64")),
        case(solve(true), &["f32[3,3]", "f32[3,5]"], Types(&["f32[3,5]"])),
        case(
            solve(false),
            &["f32[3,3]", "f32[5,3]"],
            Types(&["f32[5,3]"]),
        ),
        case(
            solve(true),
            &["f32[3,3]", "f32[5,3]"],
            Error("incompatible shapes"),
        ),
        case(
            solve(true),
            &["f32[2,3,3]", "f32[4,3,1]"],
            Error("batch dimensions"),
        ),
        case(solve(true), &["f32[3,3]", "f64[3,1]"], Error("same dtype")),
        // XLA's generators: a u32[4] (or u64[2]) key, unsigned bits.
        case(
            bit_generator(&[3, 2], DType::U8),
            &["u32[4]"],
            Types(&["u32[4]", "u8[3,2]"]),
        ),
        case(
            bit_generator(&[5], DType::U64),
            &["u64[2]"],
            Types(&["u64[2]", "u64[5]"]),
        ),
        case(
            bit_generator(&[5], DType::U32),
            &["u32[2]"],
            Error("u32[4] or u64[2]"),
        ),
        case(
            bit_generator(&[5], DType::F32),
            &["u32[4]"],
            Error("unsigned integers"),
        ),
        case(
            Primitive::Rng(rng::Op::RngUniform {
                shape: [4, 2].into_iter().collect(),
            }),
            &["f32[]", "f32[]"],
            Types(&["f32[4,2]"]),
        ),
        case(
            Primitive::Rng(rng::Op::RngUniform {
                shape: [4].into_iter().collect(),
            }),
            &["f32[]", "i32[]"],
            Error("scalar bounds of one type"),
        ),
        // Fourier transforms over trailing dimensions.
        case(
            fft_op(FftType::Fft, &[8]),
            &["c64[3,8]"],
            Types(&["c64[3,8]"]),
        ),
        case(
            fft_op(FftType::Ifft, &[4, 8]),
            &["c128[2,4,8]"],
            Types(&["c128[2,4,8]"]),
        ),
        case(
            fft_op(FftType::Rfft, &[8]),
            &["f32[3,8]"],
            Types(&["c64[3,5]"]),
        ),
        case(
            fft_op(FftType::Rfft, &[7]),
            &["f64[7]"],
            Types(&["c128[4]"]),
        ),
        case(
            fft_op(FftType::Irfft, &[8]),
            &["c64[3,5]"],
            Types(&["f32[3,8]"]),
        ),
        case(
            fft_op(FftType::Irfft, &[8]),
            &["c64[3,8]"],
            Error("trailing dimensions [5]"),
        ),
        case(
            fft_op(FftType::Fft, &[8]),
            &["f32[8]"],
            Error("needs a complex operand"),
        ),
        case(
            fft_op(FftType::Rfft, &[8]),
            &["c64[8]"],
            Error("float32 or float64"),
        ),
        case(fft_op(FftType::Fft, &[2, 8]), &["c64[8]"], Error("rank 1")),
        case(
            fft_op(FftType::Fft, &[1, 1, 1, 1]),
            &["c64[1,1,1,1]"],
            Error("1 to 3"),
        ),
        case(
            fft_op(FftType::Fft, &[8]),
            &["c64[2@x,8]"],
            Types(&["c64[2@x,8]"]),
        ),
        case(
            fft_op(FftType::Fft, &[8]),
            &["c64[8@x]"],
            Error("mixes its elements"),
        ),
        // Complex numbers: parts and magnitudes are real, the rest stays
        // complex; ops with no complex meaning refuse them.
        case(unary(UnaryOp::Sin), &["c64[2]"], Types(&["c64[2]"])),
        case(unary(UnaryOp::Abs), &["c128[2]"], Types(&["f64[2]"])),
        case(unary(UnaryOp::Real), &["c64[2,3]"], Types(&["f32[2,3]"])),
        case(unary(UnaryOp::Imag), &["c128[]"], Types(&["f64[]"])),
        case(unary(UnaryOp::Conj), &["c64[3]"], Types(&["c64[3]"])),
        case(unary(UnaryOp::Real), &["f32[3]"], Error("a complex type")),
        case(
            unary(UnaryOp::Floor),
            &["c64[3]"],
            Error("a floating-point type"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Complex)),
            &["f32[2,1]", "f32[1,3]"],
            Types(&["c64[2,3]"]),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Complex)),
            &["f16[2]", "f16[2]"],
            Error("float32 or float64"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Rem)),
            &["c64[2]", "c64[2]"],
            Error("an integer or floating-point type"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Pow)),
            &["c64[2]", "c64[2]"],
            Types(&["c64[2]"]),
        ),
        case(
            unary(UnaryOp::Sin),
            &["f32[2]", "f32[2]"],
            Error("takes 1 operand"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[2,1]", "f32[1,3]"],
            Types(&["f32[2,3]"]),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[2]", "f32[3]"],
            Error("incompatible shapes"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[2]", "i32[2]"],
            Error("same dtype"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::ShiftLeft)),
            &["f32[2]", "f32[2]"],
            Error("integer"),
        ),
        case(
            ew(elementwise::Op::Compare(Comparison::Lt)),
            &["i32[4]", "i32[4]"],
            Types(&["bool[4]"]),
        ),
        case(
            ew(elementwise::Op::IntegerPow { y: 3 }),
            &["f32[5]"],
            Types(&["f32[5]"]),
        ),
        case(
            ew(elementwise::Op::IntegerPow { y: 3 }),
            &["bool[5]"],
            Error("needs"),
        ),
        case(
            ew(elementwise::Op::ReducePrecision {
                exponent_bits: 5,
                mantissa_bits: 10,
            }),
            &["f32[2,3]"],
            Types(&["f32[2,3]"]),
        ),
        case(
            ew(elementwise::Op::ReducePrecision {
                exponent_bits: 5,
                mantissa_bits: 10,
            }),
            &["i32[2]"],
            Error("needs"),
        ),
        case(
            ew(elementwise::Op::ReducePrecision {
                exponent_bits: 0,
                mantissa_bits: 10,
            }),
            &["f32[2]"],
            Error("exponent_bits >= 1"),
        ),
        case(
            ew(elementwise::Op::SelectN),
            &["bool[2]", "f32[2]", "f32[2]"],
            Types(&["f32[2]"]),
        ),
        case(
            ew(elementwise::Op::SelectN),
            &["bool[2]", "f32[2]", "f32[3]"],
            Error("f32[3]"),
        ),
        case(
            ew(elementwise::Op::Clamp),
            &["f32[]", "f32[4]", "f32[]"],
            Types(&["f32[4]"]),
        ),
        case(
            ew(elementwise::Op::Clamp),
            &["f32[3]", "f32[4]", "f32[]"],
            Error("must be a scalar or have the operand's shape"),
        ),
        case(
            ew(elementwise::Op::ConvertElementType {
                new_dtype: DType::I32,
                weak_type: false,
            }),
            &["f32[2]"],
            Types(&["i32[2]"]),
        ),
        case(
            ew(elementwise::Op::BitcastConvertType {
                new_dtype: DType::U8,
            }),
            &["f32[2]"],
            Types(&["u8[2,4]"]),
        ),
        case(
            ew(elementwise::Op::BitcastConvertType {
                new_dtype: DType::F32,
            }),
            &["u8[2,3]"],
            Error("4"),
        ),
        // Shape.
        case(
            sh(shape::Op::Iota {
                dtype: DType::I32,
                shape: dims(&[2, 3]),
                dimension: 1,
            }),
            &[],
            Types(&["i32[2,3]"]),
        ),
        case(
            sh(shape::Op::Iota {
                dtype: DType::I32,
                shape: dims(&[2, 3]),
                dimension: 2,
            }),
            &[],
            Error("dimension"),
        ),
        case(
            sh(shape::Op::BroadcastInDim {
                shape: dims(&[4, 3]),
                broadcast_dimensions: dims(&[1]),
            }),
            &["f32[3]"],
            Types(&["f32[4,3]"]),
        ),
        case(
            sh(shape::Op::BroadcastInDim {
                shape: dims(&[4, 3]),
                broadcast_dimensions: dims(&[0]),
            }),
            &["f32[3]"],
            Error("broadcast"),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[3, 2]),
            }),
            &["f32[2,3]"],
            Types(&["f32[3,2]"]),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[4]),
            }),
            &["f32[2,3]"],
            Error("6"),
        ),
        case(
            sh(shape::Op::Transpose {
                permutation: dims(&[1, 0]),
            }),
            &["f32[2,3]"],
            Types(&["f32[3,2]"]),
        ),
        case(
            sh(shape::Op::Transpose {
                permutation: dims(&[0, 0]),
            }),
            &["f32[2,3]"],
            Error("permutation"),
        ),
        case(
            sh(shape::Op::Squeeze {
                dimensions: dims(&[0]),
            }),
            &["f32[1,3]"],
            Types(&["f32[3]"]),
        ),
        case(
            sh(shape::Op::Squeeze {
                dimensions: dims(&[1]),
            }),
            &["f32[1,3]"],
            Error("3"),
        ),
        case(
            sh(shape::Op::Rev {
                dimensions: dims(&[0]),
            }),
            &["f32[2,3]"],
            Types(&["f32[2,3]"]),
        ),
        case(
            sh(shape::Op::Rev {
                dimensions: dims(&[2]),
            }),
            &["f32[2,3]"],
            Error("out of range"),
        ),
        case(
            sh(shape::Op::Concatenate { dimension: 0 }),
            &["f32[2,3]", "f32[1,3]"],
            Types(&["f32[3,3]"]),
        ),
        case(
            sh(shape::Op::Concatenate { dimension: 0 }),
            &["f32[2,3]", "f32[1,4]"],
            Error("f32[1,4]"),
        ),
        case(
            sh(shape::Op::Split {
                axis: 1,
                sizes: dims(&[1, 2]),
            }),
            &["f32[2,3]"],
            Types(&["f32[2,1]", "f32[2,2]"]),
        ),
        case(
            sh(shape::Op::Split {
                axis: 1,
                sizes: dims(&[1, 1]),
            }),
            &["f32[2,3]"],
            Error("sum"),
        ),
        case(
            sh(shape::Op::Pad {
                config: vec![(1, 2, 1)],
            }),
            &["f32[3]", "f32[]"],
            Types(&["f32[8]"]),
        ),
        case(
            sh(shape::Op::Pad {
                config: vec![(1, 2, 1)],
            }),
            &["f32[3]", "i32[]"],
            Error("padding value must be a f32 scalar"),
        ),
        // Indexing.
        case(
            ix(index::Op::Slice {
                start_indices: dims(&[1]),
                limit_indices: dims(&[5]),
                strides: dims(&[2]),
            }),
            &["f32[6]"],
            Types(&["f32[2]"]),
        ),
        case(
            ix(index::Op::Slice {
                start_indices: dims(&[1]),
                limit_indices: dims(&[7]),
                strides: dims(&[1]),
            }),
            &["f32[6]"],
            Error("7"),
        ),
        case(
            ix(index::Op::DynamicSlice {
                slice_sizes: dims(&[2]),
            }),
            &["f32[6]", "i32[]"],
            Types(&["f32[2]"]),
        ),
        case(
            ix(index::Op::DynamicSlice {
                slice_sizes: dims(&[2]),
            }),
            &["f32[6]", "f32[]"],
            Error("integer"),
        ),
        case(
            ix(index::Op::DynamicUpdateSlice),
            &["f32[6]", "f32[2]", "i32[]"],
            Types(&["f32[6]"]),
        ),
        case(
            ix(index::Op::DynamicUpdateSlice),
            &["f32[6]", "f32[7]", "i32[]"],
            Error("f32[7]"),
        ),
        case(
            ix(index::Op::Gather {
                dimension_numbers: GatherDimensionNumbers {
                    offset_dims: dims(&[1]),
                    collapsed_slice_dims: dims(&[0]),
                    start_index_map: dims(&[0]),
                },
                slice_sizes: dims(&[1, 3]),
                mode: GatherMode::Clip,
                fill_value: ScalarKey::of(oxla_core::Scalar::Float(0.0)),
            }),
            &["f32[5,3]", "i32[4,1]"],
            Types(&["f32[4,3]"]),
        ),
        case(
            ix(index::Op::Gather {
                dimension_numbers: GatherDimensionNumbers {
                    offset_dims: dims(&[1]),
                    collapsed_slice_dims: dims(&[0]),
                    start_index_map: dims(&[0]),
                },
                slice_sizes: dims(&[1, 4]),
                mode: GatherMode::Clip,
                fill_value: ScalarKey::of(oxla_core::Scalar::Float(0.0)),
            }),
            &["f32[5,3]", "i32[4,1]"],
            Error("slice"),
        ),
        case(
            ix(index::Op::Scatter {
                op: ScatterOp::Add,
                dimension_numbers: ScatterDimensionNumbers {
                    update_window_dims: dims(&[1]),
                    inserted_window_dims: dims(&[0]),
                    scatter_dims_to_operand_dims: dims(&[0]),
                },
            }),
            &["f32[5,3]", "i32[4,1]", "f32[4,3]"],
            Types(&["f32[5,3]"]),
        ),
        case(
            ix(index::Op::Scatter {
                op: ScatterOp::Add,
                dimension_numbers: ScatterDimensionNumbers {
                    update_window_dims: dims(&[1]),
                    inserted_window_dims: dims(&[0]),
                    scatter_dims_to_operand_dims: dims(&[0]),
                },
            }),
            &["f32[5,3]", "i32[4,1]", "i32[4,3]"],
            Error("dtype"),
        ),
        // Reductions.
        case(
            rd(reduce::Op::Reduce {
                op: ReduceOp::Sum,
                axes: dims(&[0]),
            }),
            &["f32[2,3]"],
            Types(&["f32[3]"]),
        ),
        case(
            rd(reduce::Op::Reduce {
                op: ReduceOp::Sum,
                axes: dims(&[2]),
            }),
            &["f32[2,3]"],
            Error("out of range"),
        ),
        case(
            rd(reduce::Op::Reduce {
                op: ReduceOp::And,
                axes: dims(&[0]),
            }),
            &["f32[2]"],
            Error("needs"),
        ),
        case(
            rd(reduce::Op::ReduceWith {
                computation: jaxpr(&["f32[]", "f32[]"], |b, v| vec![add(b, &v[0], &v[1])]),
                axes: dims(&[1]),
            }),
            &["f32[2,3]", "f32[]"],
            Types(&["f32[2]"]),
        ),
        case(
            rd(reduce::Op::ReduceWith {
                computation: jaxpr(&["f32[]", "f32[]"], |b, v| vec![add(b, &v[0], &v[1])]),
                axes: dims(&[1]),
            }),
            &["f32[2,3]", "f32[2]"],
            Error("scalar"),
        ),
        case(
            rd(reduce::Op::Cumulative {
                op: CumulativeOp::Sum,
                axis: 1,
                reverse: false,
            }),
            &["f32[2,3]"],
            Types(&["f32[2,3]"]),
        ),
        case(
            rd(reduce::Op::Cumulative {
                op: CumulativeOp::Sum,
                axis: 2,
                reverse: false,
            }),
            &["f32[2,3]"],
            Error("2"),
        ),
        case(
            rd(reduce::Op::ReduceWindow {
                op: WindowOp::Max,
                window_dimensions: dims(&[2, 2]),
                window_strides: dims(&[2, 2]),
                padding: vec![(0, 0), (0, 0)],
                base_dilation: dims(&[1, 1]),
                window_dilation: dims(&[1, 1]),
            }),
            &["f32[4,6]"],
            Types(&["f32[2,3]"]),
        ),
        case(
            rd(reduce::Op::ReduceWindow {
                op: WindowOp::Max,
                window_dimensions: dims(&[2]),
                window_strides: dims(&[2, 2]),
                padding: vec![(0, 0), (0, 0)],
                base_dilation: dims(&[1, 1]),
                window_dilation: dims(&[1, 1]),
            }),
            &["f32[4,6]"],
            Error("window"),
        ),
        case(
            rd(reduce::Op::SelectAndScatterAdd {
                window_dimensions: dims(&[2]),
                window_strides: dims(&[2]),
                padding: vec![(0, 0)],
            }),
            &["f32[2]", "f32[4]"],
            Types(&["f32[4]"]),
        ),
        case(
            rd(reduce::Op::SelectAndScatterAdd {
                window_dimensions: dims(&[2]),
                window_strides: dims(&[2]),
                padding: vec![(0, 0)],
            }),
            &["f32[3]", "f32[4]"],
            Error("f32[3]"),
        ),
        case(
            rd(reduce::Op::ArgMinMax {
                op: ArgOp::Max,
                axis: 1,
                index_dtype: DType::I32,
            }),
            &["f32[2,3]"],
            Types(&["i32[2]"]),
        ),
        case(
            rd(reduce::Op::ArgMinMax {
                op: ArgOp::Max,
                axis: 2,
                index_dtype: DType::I32,
            }),
            &["f32[2,3]"],
            Error("2"),
        ),
        case(
            rd(reduce::Op::Sort {
                dimension: 0,
                is_stable: true,
                num_keys: 1,
            }),
            &["f32[4]", "i32[4]"],
            Types(&["f32[4]", "i32[4]"]),
        ),
        case(
            rd(reduce::Op::Sort {
                dimension: 0,
                is_stable: true,
                num_keys: 1,
            }),
            &["f32[4]", "i32[5]"],
            Error("i32[5]"),
        ),
        case(
            rd(reduce::Op::TopK { k: 2 }),
            &["f32[3,5]"],
            Types(&["f32[3,2]", "i32[3,2]"]),
        ),
        case(rd(reduce::Op::TopK { k: 6 }), &["f32[3,5]"], Error("6")),
        // Contractions.
        case(
            Primitive::Contract(contract::Op::DotGeneral {
                lhs_contracting: dims(&[2]),
                rhs_contracting: dims(&[1]),
                lhs_batch: dims(&[0]),
                rhs_batch: dims(&[0]),
                preferred_element_type: None,
                precision: None,
                out_sharding: None,
            }),
            &["f32[5,2,3]", "f32[5,3,4]"],
            Types(&["f32[5,2,4]"]),
        ),
        case(
            Primitive::Contract(contract::Op::DotGeneral {
                lhs_contracting: dims(&[2]),
                rhs_contracting: dims(&[1]),
                lhs_batch: dims(&[0]),
                rhs_batch: dims(&[0]),
                preferred_element_type: None,
                precision: None,
                out_sharding: None,
            }),
            &["f32[5,2,3]", "f32[5,4,4]"],
            Error("does not match"),
        ),
        case(
            Primitive::Contract(contract::Op::ConvGeneralDilated {
                window_strides: dims(&[1, 1]),
                padding: vec![(0, 0), (0, 0)],
                lhs_dilation: dims(&[1, 1]),
                rhs_dilation: dims(&[1, 1]),
                dimension_numbers: ConvDimensionNumbers {
                    lhs_spec: dims(&[0, 1, 2, 3]),
                    rhs_spec: dims(&[0, 1, 2, 3]),
                    out_spec: dims(&[0, 1, 2, 3]),
                },
                feature_group_count: 1,
                batch_group_count: 1,
                preferred_element_type: None,
                precision: None,
            }),
            &["f32[2,3,8,8]", "f32[4,3,3,3]"],
            Types(&["f32[2,4,6,6]"]),
        ),
        case(
            Primitive::Contract(contract::Op::ConvGeneralDilated {
                window_strides: dims(&[1, 1]),
                padding: vec![(0, 0), (0, 0)],
                lhs_dilation: dims(&[1, 1]),
                rhs_dilation: dims(&[1, 1]),
                dimension_numbers: ConvDimensionNumbers {
                    lhs_spec: dims(&[0, 1, 2, 3]),
                    rhs_spec: dims(&[0, 1, 2, 3]),
                    out_spec: dims(&[0, 1, 2, 3]),
                },
                feature_group_count: 1,
                batch_group_count: 1,
                preferred_element_type: None,
                precision: None,
            }),
            &["f32[2,3,8,8]", "f32[4,2,3,3]"],
            Error("feature"),
        ),
        // Calls.
        case(
            Primitive::Call(call::Op::Call {
                jaxpr: body_add(),
                name: "f".into(),
            }),
            &["f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Call(call::Op::Call {
                jaxpr: body_add(),
                name: "f".into(),
            }),
            &["f32[3]", "f32[4]"],
            Error("f32[4]"),
        ),
        case(
            Primitive::Call(call::Op::Remat {
                jaxpr: body_add(),
                policy: RematPolicy::NothingSaveable,
                prevent_cse: true,
            }),
            &["f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Call(call::Op::CustomJvpCall {
                jaxpr: body_add(),
                rule: rule(),
            }),
            &["f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Call(call::Op::CustomVjpCall {
                jaxpr: body_add(),
                rule: rule(),
            }),
            &["f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Call(call::Op::CustomLin {
                rule: rule(),
                num_residuals: 2,
                out_avals: vec![t("f32[3]")],
            }),
            &["f32[3]", "f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Call(call::Op::CustomLin {
                rule: rule(),
                num_residuals: 2,
                out_avals: vec![t("f32[3]")],
            }),
            &["f32[3]"],
            Error("residuals"),
        ),
        case(
            Primitive::Call(call::Op::CallExported {
                function: ExportedFunction::new(
                    "g",
                    String::new(),
                    vec![t("f32[3]")],
                    vec![t("f32[2]")],
                    None,
                    None,
                ),
            }),
            &["f32[3]"],
            Types(&["f32[2]"]),
        ),
        case(
            Primitive::Call(call::Op::CallExported {
                function: ExportedFunction::new(
                    "g",
                    String::new(),
                    vec![t("f32[3]")],
                    vec![t("f32[2]")],
                    None,
                    None,
                ),
            }),
            &["f32[4]"],
            Error("f32[4]"),
        ),
        // Control flow.
        case(
            Primitive::Control(control::Op::Cond {
                branches: vec![body_add(), body_add()],
            }),
            &["i32[]", "f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Control(control::Op::Cond {
                branches: vec![body_add(), body_add()],
            }),
            &["f32[]", "f32[3]", "f32[3]"],
            Error("index"),
        ),
        case(
            Primitive::Control(control::Op::While(control::WhileParams {
                cond_jaxpr: jaxpr(&["f32[]"], |b, v| vec![lt(b, &v[0], &v[0])]),
                body_jaxpr: jaxpr(&["f32[]"], |b, v| vec![add(b, &v[0], &v[0])]),
                cond_nconsts: 0,
                body_nconsts: 0,
            })),
            &["f32[]"],
            Types(&["f32[]"]),
        ),
        case(
            Primitive::Control(control::Op::While(control::WhileParams {
                cond_jaxpr: jaxpr(&["f32[]"], |b, v| vec![lt(b, &v[0], &v[0])]),
                body_jaxpr: jaxpr(&["f32[]"], |b, v| vec![add(b, &v[0], &v[0])]),
                cond_nconsts: 0,
                body_nconsts: 0,
            })),
            &["i32[]"],
            Error("i32[]"),
        ),
        case(
            Primitive::Control(control::Op::Scan(control::ScanParams {
                jaxpr: jaxpr(&["f32[]", "f32[]"], |b, v| {
                    let s = add(b, &v[0], &v[1]);
                    vec![s.clone(), s]
                }),
                num_consts: 0,
                num_carry: 1,
                length: 5,
                reverse: false,
                unroll: 1,
            })),
            &["f32[]", "f32[5]"],
            Types(&["f32[]", "f32[5]"]),
        ),
        case(
            Primitive::Control(control::Op::Scan(control::ScanParams {
                jaxpr: jaxpr(&["f32[]", "f32[]"], |b, v| {
                    let s = add(b, &v[0], &v[1]);
                    vec![s.clone(), s]
                }),
                num_consts: 0,
                num_carry: 1,
                length: 5,
                reverse: false,
                unroll: 1,
            })),
            &["f32[]", "f32[4]"],
            Error("5"),
        ),
        // custom_linear_solve: a diagonal operator captured once by each
        // function (matvec multiplies, solve divides).
        case(
            Primitive::Control(control::Op::LinearSolve(linear_solve(true))),
            &["f32[3]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Control(control::Op::LinearSolve(linear_solve(false))),
            &["f32[3]", "f32[3]", "f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Control(control::Op::LinearSolve(linear_solve(true))),
            &["f32[3]", "f32[3]", "f32[3]", "f32[3]", "f32[4]"],
            Error("matvec: operand 1 is f32[4]"),
        ),
        case(
            Primitive::Control(control::Op::LinearSolve(linear_solve(true))),
            &["f32[3]", "f32[3]"],
            Error("4 captured values"),
        ),
        case(
            Primitive::Control(control::Op::LinearSolve(control::LinearSolveParams {
                solve: jaxpr(&["f32[3]", "f32[3]"], |b, v| vec![lt(b, &v[0], &v[1])]),
                ..linear_solve(false)
            })),
            &["f32[3]", "f32[3]", "f32[3]"],
            Error("solve must return b's types: output 0 is bool[3]"),
        ),
        case(
            Primitive::Control(control::Op::LinearSolve(control::LinearSolveParams {
                vecmat: None,
                ..linear_solve(true)
            })),
            &["f32[3]", "f32[3]", "f32[3]", "f32[3]"],
            Error("come together"),
        ),
        // Collectives (per-device types inside a shard_map).
        case(
            Primitive::Collective(collective::Op::Pvary {
                group: group(&["x"]),
            }),
            &["f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllReduce {
                op: ReduceOp::Sum,
                group: group(&["x"]),
            }),
            &["f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllGather {
                group: group(&["x"]),
                dim: 0,
                tiled: true,
                invariant: false,
            }),
            &["f32[3]"],
            Types(&["f32[12]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllGather {
                group: group(&["x"]),
                dim: 0,
                tiled: false,
                invariant: false,
            }),
            &["f32[3]"],
            Types(&["f32[4,3]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllGather {
                group: group(&["x"]),
                dim: 2,
                tiled: true,
                invariant: false,
            }),
            &["f32[3]"],
            Error("2"),
        ),
        case(
            Primitive::Collective(collective::Op::ReduceScatter {
                group: group(&["x"]),
                dim: 0,
                tiled: true,
            }),
            &["f32[8]"],
            Types(&["f32[2]"]),
        ),
        case(
            Primitive::Collective(collective::Op::ReduceScatter {
                group: group(&["x"]),
                dim: 0,
                tiled: true,
            }),
            &["f32[6]"],
            Error("6"),
        ),
        case(
            Primitive::Collective(collective::Op::AllToAll {
                group: group(&["x"]),
                split_dim: 0,
                concat_dim: 1,
            }),
            &["f32[8,3]"],
            Types(&["f32[2,12]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllToAll {
                group: group(&["x"]),
                split_dim: 0,
                concat_dim: 1,
            }),
            &["f32[6,3]"],
            Error("6"),
        ),
        case(
            Primitive::Collective(collective::Op::Ppermute {
                group: group(&["y"]),
                perm: vec![(0, 1), (1, 0)],
            }),
            &["f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Collective(collective::Op::Ppermute {
                group: group(&["y"]),
                perm: vec![(0, 1), (0, 0)],
            }),
            &["f32[3]"],
            Error("0"),
        ),
        case(
            Primitive::Collective(collective::Op::AxisIndex {
                group: group(&["x"]),
            }),
            &[],
            Types(&["i32[]"]),
        ),
        // Sharding.
        case(
            Primitive::Sharding(sharding::Op::ShardingConstraint {
                sharding: spec(&[&["x"], &[]]),
            }),
            &["f32[8,3]"],
            Types(&["f32[8,3]"]),
        ),
        case(
            Primitive::Sharding(sharding::Op::ShardingConstraint {
                sharding: spec(&[&["x"], &[]]),
            }),
            &["f32[6,3]"],
            Error("6"),
        ),
        case(
            Primitive::Sharding(sharding::Op::ShardMap(sharding::ShardMapParams {
                jaxpr: jaxpr(&["f32[2,3]"], |_, v| vec![v[0].clone()]),
                in_shardings: vec![spec(&[&["x"], &[]])],
                out_shardings: vec![spec(&[&["x"], &[]])],
                check_vma: false,
            })),
            &["f32[8,3]"],
            Types(&["f32[8,3]"]),
        ),
        case(
            Primitive::Sharding(sharding::Op::ShardMap(sharding::ShardMapParams {
                jaxpr: jaxpr(&["f32[2,3]"], |_, v| vec![v[0].clone()]),
                in_shardings: vec![spec(&[&["x"], &[]])],
                out_shardings: vec![spec(&[&["x"], &[]])],
                check_vma: false,
            })),
            &["f32[4,3]"],
            Error("f32[4,3]"),
        ),
        // Host callbacks and markers.
        case(
            Primitive::Host(host::Op::HostCallback {
                callback: HostCallback {
                    id: 1,
                    name: "h".into(),
                    effectful: false,
                    vmap_method: VmapMethod::Sequential,
                },
                results: vec![t("i32[2]")],
            }),
            &["f32[3]"],
            Types(&["i32[2]"]),
        ),
        case(
            Primitive::Marker(marker::Op::StopGradient),
            &["f32[3]"],
            Types(&["f32[3]"]),
        ),
        case(
            Primitive::Marker(marker::Op::OptimizationBarrier),
            &["f32[3]", "i32[]"],
            Types(&["f32[3]", "i32[]"]),
        ),
        case(
            Primitive::Marker(marker::Op::CheckpointName { name: "h".into() }),
            &["f32[3]"],
            Types(&["f32[3]"]),
        ),
        // Explicit sharding in types: each family's sharding rule.
        case(
            reshard(Some(&[&["x"], &[]])),
            &["~f32[8,4]"],
            Types(&["f32[8@x,4]"]),
        ),
        case(reshard(None), &["f32[8@x,4]"], Types(&["f32[8,4]"])),
        case(
            reshard(Some(&[&["x"], &[]])),
            &["~f32[6,4]"],
            Error("not divisible"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[8@x,4]", "f32[8,4@y]"],
            Types(&["f32[8@x,4@y]"]),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[8@x,4]", "f32[1,4@y]"],
            Types(&["f32[8@x,4@y]"]),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[8@x,4]", "f32[8@y,4]"],
            Error("incompatible shardings for broadcasting: ('x', None), ('y', None)"),
        ),
        case(
            ew(elementwise::Op::Binary(BinaryOp::Add)),
            &["f32[8@x,4]", "f32[1,4]"],
            Types(&["f32[8@x,4]"]),
        ),
        case(
            unary(UnaryOp::Sin),
            &["f32[8@(x,y),4]"],
            Types(&["f32[8@(x,y),4]"]),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[2, 4, 4]),
            }),
            &["f32[8@y,4]"],
            Types(&["f32[2@y,4,4]"]),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[32]),
            }),
            &["f32[8@x,4]"],
            Types(&["f32[32@x]"]),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[4, 8]),
            }),
            &["f32[8@x,4]"],
            Error("does not carry over to shape (4, 8)"),
        ),
        case(
            sh(shape::Op::Reshape {
                new_sizes: dims(&[32]),
            }),
            &["f32[8,4@y]"],
            Error("does not carry over"),
        ),
        case(
            sh(shape::Op::Transpose {
                permutation: dims(&[1, 0]),
            }),
            &["f32[8@x,4@y]"],
            Types(&["f32[4@y,8@x]"]),
        ),
        case(
            sh(shape::Op::BroadcastInDim {
                shape: dims(&[3, 8, 4]),
                broadcast_dimensions: dims(&[1, 2]),
            }),
            &["f32[8@x,4]"],
            Types(&["f32[3,8@x,4]"]),
        ),
        case(
            sh(shape::Op::Concatenate { dimension: 0 }),
            &["f32[8@x,4]", "f32[8,4@y]"],
            Types(&["f32[16@x,4@y]"]),
        ),
        case(
            sh(shape::Op::Split {
                axis: 0,
                sizes: dims(&[4, 4]),
            }),
            &["f32[8@x,4]"],
            Error("split cuts it into pieces"),
        ),
        case(
            rd(reduce::Op::Reduce {
                op: ReduceOp::Sum,
                axes: dims(&[0]),
            }),
            &["f32[8@x,4@y]"],
            Types(&["f32[4@y]"]),
        ),
        case(
            rd(reduce::Op::Cumulative {
                op: CumulativeOp::Sum,
                axis: 0,
                reverse: false,
            }),
            &["f32[8@x,4]"],
            Error("accumulates along it"),
        ),
        case(
            rd(reduce::Op::Sort {
                dimension: 1,
                is_stable: true,
                num_keys: 1,
            }),
            &["f32[8@x,4]"],
            Types(&["f32[8@x,4]"]),
        ),
        case(
            ix(index::Op::Slice {
                start_indices: dims(&[0, 1]),
                limit_indices: dims(&[4, 3]),
                strides: dims(&[1, 1]),
            }),
            &["f32[8@x,4]"],
            Types(&["f32[4@x,2]"]),
        ),
        case(
            dot(&[1], &[0], None),
            &["f32[8@x,4]", "f32[4,16@y]"],
            Types(&["f32[8@x,16@y]"]),
        ),
        case(
            dot(&[1], &[0], None),
            &["f32[8,4@y]", "f32[4@y,8]"],
            Error("lhs_contracting_spec=('y',) and rhs_contracting_spec=('y',)"),
        ),
        case(
            dot(&[1], &[0], Some(&[&["x"], &[]])),
            &["f32[8,4@y]", "f32[4@y,8]"],
            Types(&["f32[8@x,8]"]),
        ),
        case(
            dot(&[1], &[0], None),
            &["f32[8@x,4]", "f32[4,8@x]"],
            Error("illegally split result f32[8@x,8@x]"),
        ),
        case(
            conv_nchw(),
            &["f32[2@x,3,8,8]", "f32[4@y,3,3,3]"],
            Types(&["f32[2@x,4@y,6,6]"]),
        ),
        case(
            conv_nchw(),
            &["f32[2,3,8,8]", "f32[4,3@y,3,3]"],
            Error("the convolution contracts it"),
        ),
        case(
            Primitive::Marker(marker::Op::StopGradient),
            &["f32[8@x,4]"],
            Types(&["f32[8@x,4]"]),
        ),
        case(
            Primitive::Collective(collective::Op::AllReduce {
                op: ReduceOp::Sum,
                group: group(&["x"]),
            }),
            &["f32[8@x]"],
            Error("explicit axes"),
        ),
    ]
}

/// The Cholesky primitive.
fn cholesky() -> Primitive {
    Primitive::Linalg(linalg::Op::Cholesky)
}

/// LU with partial pivoting.
fn lu() -> Primitive {
    Primitive::Linalg(linalg::Op::Lu)
}

/// QR, complete or reduced.
fn qr(full_matrices: bool) -> Primitive {
    Primitive::Linalg(linalg::Op::Qr { full_matrices })
}

/// The Hermitian eigendecomposition.
fn eigh() -> Primitive {
    Primitive::Linalg(linalg::Op::Eigh {
        lower: true,
        sort_eigenvalues: true,
    })
}

/// The SVD.
fn svd(full_matrices: bool, compute_uv: bool) -> Primitive {
    Primitive::Linalg(linalg::Op::Svd {
        full_matrices,
        compute_uv,
    })
}

/// The general eigendecomposition.
fn eig(left: bool, right: bool) -> Primitive {
    Primitive::Linalg(linalg::Op::Eig {
        compute_left_eigenvectors: left,
        compute_right_eigenvectors: right,
    })
}

/// A lower triangular solve from the left or the right.
fn solve(left_side: bool) -> Primitive {
    Primitive::Linalg(linalg::Op::TriangularSolve(
        linalg::TriangularSolveOptions {
            left_side,
            lower: true,
            ..Default::default()
        },
    ))
}

/// `lax.rng_bit_generator` of a shape and dtype.
fn bit_generator(shape: &[i64], dtype: DType) -> Primitive {
    Primitive::Rng(rng::Op::RngBitGenerator {
        shape: shape.iter().copied().collect(),
        dtype,
        algorithm: rng::RngAlgorithm::Default,
    })
}

/// `lax.fft` of a type and lengths.
fn fft_op(fft_type: FftType, lengths: &[i64]) -> Primitive {
    Primitive::Fft(fft::Op::Fft {
        fft_type,
        fft_lengths: lengths.to_vec(),
    })
}

/// The variant of a primitive, by an exhaustive match: adding a primitive
/// fails to compile here until it is named (and then needs a case).
fn variant(p: &Primitive) -> &'static str {
    match p {
        Primitive::Elementwise(op) => match op {
            elementwise::Op::Unary(_) => "Unary",
            elementwise::Op::Binary(_) => "Binary",
            elementwise::Op::Compare(_) => "Compare",
            elementwise::Op::IntegerPow { .. } => "IntegerPow",
            elementwise::Op::SelectN => "SelectN",
            elementwise::Op::Clamp => "Clamp",
            elementwise::Op::ConvertElementType { .. } => "ConvertElementType",
            elementwise::Op::BitcastConvertType { .. } => "BitcastConvertType",
            elementwise::Op::ReducePrecision { .. } => "ReducePrecision",
        },
        Primitive::Shape(op) => match op {
            shape::Op::Iota { .. } => "Iota",
            shape::Op::BroadcastInDim { .. } => "BroadcastInDim",
            shape::Op::Reshape { .. } => "Reshape",
            shape::Op::Transpose { .. } => "Transpose",
            shape::Op::Squeeze { .. } => "Squeeze",
            shape::Op::Rev { .. } => "Rev",
            shape::Op::Concatenate { .. } => "Concatenate",
            shape::Op::Split { .. } => "Split",
            shape::Op::Pad { .. } => "Pad",
        },
        Primitive::Index(op) => match op {
            index::Op::Slice { .. } => "Slice",
            index::Op::DynamicSlice { .. } => "DynamicSlice",
            index::Op::DynamicUpdateSlice => "DynamicUpdateSlice",
            index::Op::Gather { .. } => "Gather",
            index::Op::Scatter { .. } => "Scatter",
        },
        Primitive::Reduce(op) => match op {
            reduce::Op::Reduce { .. } => "Reduce",
            reduce::Op::ReduceWith { .. } => "ReduceWith",
            reduce::Op::Cumulative { .. } => "Cumulative",
            reduce::Op::ReduceWindow { .. } => "ReduceWindow",
            reduce::Op::SelectAndScatterAdd { .. } => "SelectAndScatterAdd",
            reduce::Op::ArgMinMax { .. } => "ArgMinMax",
            reduce::Op::Sort { .. } => "Sort",
            reduce::Op::TopK { .. } => "TopK",
        },
        Primitive::Contract(op) => match op {
            contract::Op::DotGeneral { .. } => "DotGeneral",
            contract::Op::ConvGeneralDilated { .. } => "ConvGeneralDilated",
        },
        Primitive::Call(op) => match op {
            call::Op::Call { .. } => "Call",
            call::Op::Remat { .. } => "Remat",
            call::Op::CustomJvpCall { .. } => "CustomJvpCall",
            call::Op::CustomVjpCall { .. } => "CustomVjpCall",
            call::Op::CustomLin { .. } => "CustomLin",
            call::Op::CallExported { .. } => "CallExported",
        },
        Primitive::Control(op) => match op {
            control::Op::Cond { .. } => "Cond",
            control::Op::While(_) => "While",
            control::Op::Scan(_) => "Scan",
            control::Op::LinearSolve(_) => "LinearSolve",
        },
        Primitive::Collective(op) => match op {
            collective::Op::Pvary { .. } => "Pvary",
            collective::Op::AllReduce { .. } => "AllReduce",
            collective::Op::AllGather { .. } => "AllGather",
            collective::Op::ReduceScatter { .. } => "ReduceScatter",
            collective::Op::AllToAll { .. } => "AllToAll",
            collective::Op::Ppermute { .. } => "Ppermute",
            collective::Op::AxisIndex { .. } => "AxisIndex",
        },
        Primitive::Sharding(op) => match op {
            sharding::Op::ShardingConstraint { .. } => "ShardingConstraint",
            sharding::Op::Reshard { .. } => "Reshard",
            sharding::Op::ShardMap(_) => "ShardMap",
        },
        Primitive::Host(op) => match op {
            host::Op::HostCallback { .. } => "HostCallback",
        },
        Primitive::Marker(op) => match op {
            marker::Op::StopGradient => "StopGradient",
            marker::Op::OptimizationBarrier => "OptimizationBarrier",
            marker::Op::CheckpointName { .. } => "CheckpointName",
        },
        Primitive::Fft(op) => match op {
            fft::Op::Fft { .. } => "Fft",
        },
        Primitive::Rng(op) => match op {
            rng::Op::RngBitGenerator { .. } => "RngBitGenerator",
            rng::Op::RngUniform { .. } => "RngUniform",
        },
        Primitive::Linalg(op) => match op {
            linalg::Op::Cholesky => "Cholesky",
            linalg::Op::TriangularSolve(_) => "TriangularSolve",
            linalg::Op::Lu => "Lu",
            linalg::Op::Qr { .. } => "Qr",
            linalg::Op::Eigh { .. } => "Eigh",
            linalg::Op::Svd { .. } => "Svd",
            linalg::Op::Eig { .. } => "Eig",
        },
    }
}

/// Every variant `variant` names (kept beside it: a new arm there without
/// a name here fails `every_primitive_has_a_case`).
const VARIANTS: &[&str] = &[
    "Fft",
    "Cholesky",
    "TriangularSolve",
    "Lu",
    "Qr",
    "Eigh",
    "Svd",
    "Eig",
    "Unary",
    "Binary",
    "Compare",
    "IntegerPow",
    "SelectN",
    "Clamp",
    "ConvertElementType",
    "BitcastConvertType",
    "ReducePrecision",
    "Iota",
    "BroadcastInDim",
    "Reshape",
    "Transpose",
    "Squeeze",
    "Rev",
    "Concatenate",
    "Split",
    "Pad",
    "Slice",
    "DynamicSlice",
    "DynamicUpdateSlice",
    "Gather",
    "Scatter",
    "Reduce",
    "ReduceWith",
    "Cumulative",
    "ReduceWindow",
    "SelectAndScatterAdd",
    "ArgMinMax",
    "Sort",
    "TopK",
    "DotGeneral",
    "ConvGeneralDilated",
    "Call",
    "Remat",
    "CustomJvpCall",
    "CustomVjpCall",
    "CustomLin",
    "CallExported",
    "Cond",
    "While",
    "Scan",
    "Pvary",
    "AllReduce",
    "AllGather",
    "ReduceScatter",
    "AllToAll",
    "Ppermute",
    "AxisIndex",
    "ShardingConstraint",
    "Reshard",
    "ShardMap",
    "HostCallback",
    "StopGradient",
    "OptimizationBarrier",
    "CheckpointName",
];

#[test]
fn every_shape_rule_accepts_and_rejects_as_its_table_says() {
    let mut failures = Vec::new();
    for c in cases() {
        let inputs: Vec<Aval> = c.inputs.iter().map(|a| t(a)).collect();
        let refs: Vec<&Aval> = inputs.iter().collect();
        let got = abstract_eval(&c.primitive, &refs);
        let what = format!("{} of ({})", c.primitive.name(), c.inputs.join(", "));
        match (&c.expect, got) {
            (Types(want), Ok(outs)) => {
                let outs: Vec<String> = outs.iter().map(ToString::to_string).collect();
                if outs != *want {
                    failures.push(format!("{what}: gave {outs:?}, expected {want:?}"));
                }
            }
            (Types(want), Err(e)) => {
                failures.push(format!("{what}: error `{e}`, expected {want:?}"))
            }
            (Error(piece), Err(e)) => {
                if !e.to_string().contains(piece) {
                    failures.push(format!("{what}: error `{e}` does not mention `{piece}`"));
                }
            }
            (Error(piece), Ok(outs)) => failures.push(format!(
                "{what}: accepted ({outs:?}), expected an error with `{piece}`"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_primitive_has_a_case() {
    let covered: BTreeSet<&str> = cases()
        .iter()
        .filter(|c| matches!(c.expect, Types(_)))
        .map(|c| variant(&c.primitive))
        .collect();
    let all: BTreeSet<&str> = VARIANTS.iter().copied().collect();
    let missing: Vec<&&str> = all.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "primitives without an accepted case: {missing:?}"
    );
}

#[test]
fn collectives_change_the_mesh_axes_a_value_varies_over() {
    let x = t("f32[3]").with_vma([Arc::from("x"), Arc::from("y")]);
    let pvary = Primitive::Collective(collective::Op::Pvary {
        group: group(&["x"]),
    });
    let out = abstract_eval(&pvary, &[&t("f32[3]")]).unwrap();
    assert_eq!(out[0].vma.iter().map(|a| &**a).collect::<Vec<_>>(), ["x"]);
    let psum = Primitive::Collective(collective::Op::AllReduce {
        op: ReduceOp::Sum,
        group: group(&["x"]),
    });
    let out = abstract_eval(&psum, &[&x]).unwrap();
    assert_eq!(out[0].vma.iter().map(|a| &**a).collect::<Vec<_>>(), ["y"]);
    let index = Primitive::Collective(collective::Op::AxisIndex {
        group: group(&["y"]),
    });
    let out = abstract_eval(&index, &[]).unwrap();
    assert_eq!(out[0].vma.iter().map(|a| &**a).collect::<Vec<_>>(), ["y"]);
}

#[test]
fn the_table_builds_jaxprs_as_the_printer_shows_them() {
    let j: Jaxpr = jaxpr(&["f32[3]", "f32[3]"], |b, v| vec![add(b, &v[0], &v[1])])
        .jaxpr()
        .clone();
    assert_eq!(
        j.to_string(),
        "{ lambda ; a:f32[3] b:f32[3]. let\n    c:f32[3] = add a b\n  in (c,) }"
    );
}
