//! The lowered module of a small jaxpr compiles in the real plugin and
//! computes what the jaxpr says; its ops carry the user's source lines.

use oxla_core::primitive::{contract, elementwise, reduce};
use oxla_core::{
    Atom, Aval, BinaryOp, DType, Dims, JaxprBuilder, Literal, Location, Primitive, ReduceOp,
    Scalar, UnaryOp,
};
use oxla_lower::lower_to_text;
use oxla_pjrt::{Client, CompileOptions, Program};

fn dims(d: &[i64]) -> Dims {
    d.iter().copied().collect()
}

#[test]
fn a_lowered_jaxpr_runs_in_the_plugin() {
    let mut b = JaxprBuilder::new();
    let x = b.add_invar(Aval::new(DType::F32, &[2, 3]));
    let w = b.add_invar(Aval::new(DType::F32, &[3, 4]));
    let here = Location {
        file: "model.rs",
        line: 12,
        column: 5,
    };
    let s = b
        .add_equation(
            Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Sin)),
            vec![Atom::Var(x)],
            Some(here),
        )
        .unwrap()[0];
    let two = Atom::Literal(Literal {
        value: Scalar::Float(2.0),
        aval: Aval::weak_scalar(DType::F32),
    });
    let m = b
        .add_equation(
            Primitive::Elementwise(elementwise::Op::Binary(BinaryOp::Mul)),
            vec![Atom::Var(s), two],
            None,
        )
        .unwrap()[0];
    let dot = Primitive::Contract(contract::Op::DotGeneral {
        lhs_contracting: dims(&[1]),
        rhs_contracting: dims(&[0]),
        lhs_batch: dims(&[]),
        rhs_batch: dims(&[]),
        preferred_element_type: None,
        precision: None,
        out_sharding: None,
    });
    let d = b
        .add_equation(dot, vec![Atom::Var(m), Atom::Var(w)], None)
        .unwrap()[0];
    let r = b
        .add_equation(
            Primitive::Reduce(reduce::Op::Reduce {
                op: ReduceOp::Sum,
                axes: dims(&[1]),
            }),
            vec![Atom::Var(d)],
            None,
        )
        .unwrap()[0];
    let jaxpr = b.finish(vec![Atom::Var(r), Atom::Var(d)]);
    let text = lower_to_text(&jaxpr).unwrap();
    assert!(text.contains("\"stablehlo.sine\""), "{text}");
    assert!(text.contains("loc(\"model.rs\":12:5)"), "{text}");

    let c = Client::cpu().unwrap();
    let exe = c
        .compile(&Program::mlir(text), &CompileOptions::new())
        .unwrap();
    let xb = c.buffer_from_slice(&[0.5f32; 6], &[2, 3], None).unwrap();
    let wb = c.buffer_from_slice(&[1.0f32; 12], &[3, 4], None).unwrap();
    let out = exe.execute(&[&xb, &wb]).unwrap();
    // Each row: 4 columns of 3 * 2 sin(0.5).
    let expected = 24.0 * 0.5f32.sin();
    for v in out[0].to_vec::<f32>().unwrap() {
        assert!((v - expected).abs() < 1e-5, "{v} vs {expected}");
    }
}
