//! Control flow: `cond`, `while`, `scan` and `custom_linear_solve` (JAX's
//! `jax/_src/lax/control_flow/`).

use super::print;
use crate::aval::Aval;
use crate::dtype::DType;
use crate::shape_rules::{RuleResult, ShapeError, call_avals};
use crate::subjaxpr::SubJaxpr;
use std::sync::Arc;

/// The parameters of a `while` loop.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WhileParams {
    /// The predicate: (cond consts, carry) → bool scalar.
    pub cond_jaxpr: SubJaxpr,
    /// The step: (body consts, carry) → carry.
    pub body_jaxpr: SubJaxpr,
    /// How many leading operands are the cond jaxpr's captured values.
    pub cond_nconsts: usize,
    /// How many operands after those are the body's captured values.
    pub body_nconsts: usize,
}

/// The parameters of a `scan`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScanParams {
    /// The step: (consts, carry, x slices) → (carry, y slices).
    pub jaxpr: SubJaxpr,
    /// How many leading operands are constants.
    pub num_consts: usize,
    /// How many operands after those are carried.
    pub num_carry: usize,
    /// The number of iterations.
    pub length: i64,
    /// Whether it runs from the last slice to the first.
    pub reverse: bool,
    /// How many iterations one step of the compiled loop runs.
    pub unroll: i64,
}

/// How many captured values each function of a `custom_linear_solve`
/// takes (JAX's `const_lengths`): its operands hold them in this order,
/// then the right-hand side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LinearSolveConsts {
    /// The operator's captured values.
    pub matvec: usize,
    /// Its transpose's captured values.
    pub vecmat: usize,
    /// The solver's captured values.
    pub solve: usize,
    /// The transposed solver's captured values.
    pub transpose_solve: usize,
}

impl LinearSolveConsts {
    /// The number of captured values in all.
    pub fn total(&self) -> usize {
        self.matvec + self.vecmat + self.solve + self.transpose_solve
    }

    /// The operand ranges of the four functions' captured values, in
    /// operand order: matvec, vecmat, solve, transpose_solve.
    pub fn ranges(&self) -> [std::ops::Range<usize>; 4] {
        let a = self.matvec;
        let b = a + self.vecmat;
        let c = b + self.solve;
        let d = c + self.transpose_solve;
        [0..a, a..b, b..c, c..d]
    }
}

/// The parameters of a `custom_linear_solve`: a linear operator `A` given
/// as a function, and how to solve `A x = b` and `Aᵀ x = b`. Every
/// function takes its captured values, then a vector shaped like `b` (the
/// operator is square, so `x` and `b` have the same types) and returns one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LinearSolveParams {
    /// `x ↦ A x`.
    pub matvec: SubJaxpr,
    /// `b ↦ Aᵀ b`, present exactly when `transpose_solve` is.
    pub vecmat: Option<SubJaxpr>,
    /// `b ↦ A⁻¹ b`: the value of the primitive.
    pub solve: SubJaxpr,
    /// `b ↦ A⁻ᵀ b`; without it reverse-mode differentiation is an error.
    pub transpose_solve: Option<SubJaxpr>,
    /// The captured values' counts.
    pub consts: LinearSolveConsts,
}

impl LinearSolveParams {
    /// The solve of the transposed system, `Aᵀ x = b` (its operands: the
    /// captured values of vecmat, matvec, transpose_solve, solve); `None`
    /// without a transposed solver.
    pub fn transposed(&self) -> Option<LinearSolveParams> {
        Some(LinearSolveParams {
            matvec: self.vecmat.clone()?,
            vecmat: Some(self.matvec.clone()),
            solve: self.transpose_solve.clone()?,
            transpose_solve: Some(self.solve.clone()),
            consts: LinearSolveConsts {
                matvec: self.consts.vecmat,
                vecmat: self.consts.matvec,
                solve: self.consts.transpose_solve,
                transpose_solve: self.consts.solve,
            },
        })
    }

    /// The four functions with their operand ranges, in operand order
    /// (vecmat and transpose_solve `None` when absent).
    pub fn parts(&self) -> [(Option<&SubJaxpr>, std::ops::Range<usize>); 4] {
        let [m, v, s, t] = self.consts.ranges();
        [
            (Some(&self.matvec), m),
            (self.vecmat.as_ref(), v),
            (Some(&self.solve), s),
            (self.transpose_solve.as_ref(), t),
        ]
    }
}

/// A control-flow primitive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// `branches[index](operands)`: operand 0 is the branch index (an i32
    /// scalar, already clamped into range), the others every branch's
    /// inputs (JAX's `cond`).
    Cond {
        /// One closed jaxpr per branch, all with the same types.
        branches: Vec<SubJaxpr>,
    },
    /// `while cond(carry): carry = body(carry)`: operands are the cond
    /// jaxpr's captured values, the body's, then the initial carry.
    While(WhileParams),
    /// A loop over the leading axis of `xs` (JAX's `scan`): operands are
    /// consts, the initial carry, then xs; results are the final carry,
    /// then the per-iteration ys stacked along a new leading axis.
    Scan(ScanParams),
    /// `x = A⁻¹ b` by the user's solver, differentiated implicitly (JAX's
    /// `custom_linear_solve`): operands are the four functions' captured
    /// values, then `b`; results are `x`, shaped like `b`.
    LinearSolve(LinearSolveParams),
}

impl Op {
    /// The jaxprs the primitive carries: every branch, or a loop's cond
    /// and body, or a scan's step.
    pub fn nested_jaxprs(&self) -> Vec<&SubJaxpr> {
        match self {
            Op::Cond { branches } => branches.iter().collect(),
            Op::While(WhileParams {
                cond_jaxpr,
                body_jaxpr,
                ..
            }) => vec![body_jaxpr, cond_jaxpr],
            Op::Scan(ScanParams { jaxpr, .. }) => vec![jaxpr],
            Op::LinearSolve(p) => p.parts().into_iter().filter_map(|(j, _)| j).collect(),
        }
    }

    /// The jaxprs the primitive carries, mutably.
    pub fn nested_jaxprs_mut(&mut self) -> Vec<&mut SubJaxpr> {
        match self {
            Op::Cond { branches } => branches.iter_mut().collect(),
            Op::While(WhileParams {
                cond_jaxpr,
                body_jaxpr,
                ..
            }) => vec![body_jaxpr, cond_jaxpr],
            Op::Scan(ScanParams { jaxpr, .. }) => vec![jaxpr],
            Op::LinearSolve(LinearSolveParams {
                matvec,
                vecmat,
                solve,
                transpose_solve,
                ..
            }) => [
                Some(matvec),
                vecmat.as_mut(),
                Some(solve),
                transpose_solve.as_mut(),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Cond { .. } => "cond",
            Op::While(_) => "while",
            Op::Scan(_) => "scan",
            Op::LinearSolve(_) => "custom_linear_solve",
        }
    }

    /// The parameters as jaxprs print them, nested jaxprs formatted by
    /// `nested(jaxpr, column)` (see [`Primitive::params`](super::Primitive::params)).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        match self {
            Op::Cond { branches } => vec![format!(
                "branches=(\n{}\n{})",
                branches
                    .iter()
                    .map(|b| format!("{}{}", " ".repeat(pad + 2), nested(b.jaxpr(), pad + 2)))
                    .collect::<Vec<_>>()
                    .join("\n"),
                " ".repeat(pad)
            )],
            Op::While(WhileParams {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            }) => vec![
                format!("body_jaxpr={}", nested(body_jaxpr.jaxpr(), pad)),
                format!("body_nconsts={body_nconsts}"),
                format!("cond_jaxpr={}", nested(cond_jaxpr.jaxpr(), pad)),
                format!("cond_nconsts={cond_nconsts}"),
            ],
            Op::Scan(ScanParams {
                jaxpr,
                num_consts,
                num_carry,
                length,
                reverse,
                unroll,
            }) => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("length={length}"),
                format!("num_carry={num_carry}"),
                format!("num_consts={num_consts}"),
                format!("reverse={}", print::py_bool(*reverse)),
                format!("unroll={unroll}"),
            ],
            Op::LinearSolve(p) => {
                let LinearSolveConsts {
                    matvec,
                    vecmat,
                    solve,
                    transpose_solve,
                } = p.consts;
                let mut function = |j: Option<&SubJaxpr>| match j {
                    Some(j) => nested(j.jaxpr(), pad),
                    None => "None".to_string(),
                };
                let jaxprs = [
                    ("matvec", Some(&p.matvec)),
                    ("vecmat", p.vecmat.as_ref()),
                    ("solve", Some(&p.solve)),
                    ("transpose_solve", p.transpose_solve.as_ref()),
                ]
                .into_iter()
                .map(|(name, j)| format!("{name}={}", function(j)))
                .collect::<Vec<_>>()
                .join(", ");
                vec![
                    format!(
                        "const_lengths=_LinearSolveTuple(matvec={matvec}, vecmat={vecmat}, \
                         solve={solve}, transpose_solve={transpose_solve})"
                    ),
                    format!("jaxprs=_LinearSolveTuple({jaxprs})"),
                ]
            }
        }
    }
}

/// The shape rule: output types (dtype, shape, weak type) of a primitive
/// of this family on `inputs`.
pub(crate) fn output_types(op: &Op, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    match op {
        Op::Cond { branches } => cond_avals(branches, inputs),
        Op::While(WhileParams {
            cond_jaxpr,
            body_jaxpr,
            cond_nconsts,
            body_nconsts,
        }) => while_avals(
            cond_jaxpr.jaxpr(),
            body_jaxpr.jaxpr(),
            *cond_nconsts,
            *body_nconsts,
            inputs,
        ),
        Op::Scan(ScanParams {
            jaxpr,
            num_consts,
            num_carry,
            length,
            ..
        }) => scan_avals(jaxpr.jaxpr(), *num_consts, *num_carry, *length, inputs),
        Op::LinearSolve(params) => linear_solve_avals(params, inputs),
    }
}

/// Checks that `got` (what a function returns) has the types of `want`
/// (what it must return), naming the leaf and both types.
fn check_same_avals(got: &[Aval], want: &[Aval], what: &str) -> RuleResult<()> {
    if got.len() != want.len() {
        return Err(ShapeError::Invalid(format!(
            "{what} has {} outputs, but must have {}",
            got.len(),
            want.len()
        )));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.dtype != w.dtype || g.shape != w.shape || g.dim_axes() != w.dim_axes() {
            return Err(ShapeError::Invalid(format!(
                "{what}: output {i} is {g}, but must be {w}"
            )));
        }
    }
    Ok(())
}

/// `cond`: an i32 index, then every branch's inputs; every branch returns
/// the first branch's types.
fn cond_avals(branches: &[crate::subjaxpr::SubJaxpr], inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let Some((index, operands)) = inputs.split_first() else {
        return Err(ShapeError::Invalid("takes a branch index".into()));
    };
    if index.rank() != 0 || index.dtype != DType::I32 {
        return Err(ShapeError::Invalid(format!(
            "the branch index must be an i32 scalar, got {index}"
        )));
    }
    let Some(first) = branches.first() else {
        return Err(ShapeError::Invalid("needs at least one branch".into()));
    };
    let want = call_avals(first.jaxpr(), operands).map_err(|m| format!("branch 0: {m}"))?;
    for (i, b) in branches.iter().enumerate().skip(1) {
        let got = call_avals(b.jaxpr(), operands).map_err(|m| format!("branch {i}: {m}"))?;
        check_same_avals(&got, &want, &format!("branch {i} and branch 0 differ"))?;
    }
    Ok(want)
}

/// `while`: cond consts, body consts, carry; the cond returns a bool
/// scalar and the body the carry's types.
fn while_avals(
    cond: &crate::jaxpr::Jaxpr,
    body: &crate::jaxpr::Jaxpr,
    cond_nconsts: usize,
    body_nconsts: usize,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() < cond_nconsts + body_nconsts {
        return Err(ShapeError::Invalid(
            "too few operands for the loop's captured values".into(),
        ));
    }
    let carry = &inputs[cond_nconsts + body_nconsts..];
    let cond_in: Vec<&Aval> = inputs[..cond_nconsts]
        .iter()
        .chain(carry)
        .copied()
        .collect();
    let pred = call_avals(cond, &cond_in).map_err(|m| format!("the loop condition: {m}"))?;
    if pred.len() != 1 || pred[0].dtype != DType::Bool || pred[0].rank() != 0 {
        return Err(ShapeError::Invalid(format!(
            "the loop condition must return one bool scalar, got ({})",
            pred.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let body_in: Vec<&Aval> = inputs[cond_nconsts..].to_vec();
    let out = call_avals(body, &body_in).map_err(|m| format!("the loop body: {m}"))?;
    let carry: Vec<Aval> = carry.iter().map(|a| (*a).clone()).collect();
    check_same_avals(&out, &carry, "the loop body changes the carry's type")?;
    Ok(carry)
}

/// `scan`: consts, carry, xs (leading axis `length`); the body returns the
/// carry's types then the ys slices.
fn scan_avals(
    body: &crate::jaxpr::Jaxpr,
    num_consts: usize,
    num_carry: usize,
    length: i64,
    inputs: &[&Aval],
) -> RuleResult<Vec<Aval>> {
    if inputs.len() < num_consts + num_carry {
        return Err(ShapeError::Invalid(
            "too few operands for the scan's constants and carry".into(),
        ));
    }
    let mut body_in: Vec<Aval> = inputs[..num_consts + num_carry]
        .iter()
        .map(|a| (*a).clone())
        .collect();
    for (i, x) in inputs[num_consts + num_carry..].iter().enumerate() {
        if x.shape.first() != Some(&length) {
            return Err(ShapeError::Invalid(format!(
                "xs {i} is {x}, but its leading axis must be the length {length}"
            )));
        }
        // Each step takes one slice of the leading axis, which no device
        // may hold only part of.
        crate::sharding_rules::require_unsplit(x, 0, "scan slices its xs along it")?;
        body_in.push(x.leading_slice());
    }
    let refs: Vec<&Aval> = body_in.iter().collect();
    let outs = call_avals(body, &refs).map_err(|m| format!("the scan body: {m}"))?;
    if outs.len() < num_carry {
        return Err(ShapeError::Invalid(
            "the scan body returns fewer outputs than the carry".into(),
        ));
    }
    let carry = &body_in[num_consts..num_consts + num_carry];
    check_same_avals(
        &outs[..num_carry],
        carry,
        "the scan body changes the carry's type",
    )?;
    let mut result = outs[..num_carry].to_vec();
    for y in &outs[num_carry..] {
        let mut shape = vec![length];
        shape.extend_from_slice(&y.shape);
        let stacked = y
            .sharding
            .as_ref()
            .map(|s| s.with_dim_inserted(0, Arc::from([])));
        result.push(y.with_shape(&shape).with_sharding(stacked));
    }
    Ok(result)
}

/// `custom_linear_solve`: the captured values, then `b`; every function
/// maps a vector of `b`'s types to one of the same types, and so does the
/// primitive.
fn linear_solve_avals(params: &LinearSolveParams, inputs: &[&Aval]) -> RuleResult<Vec<Aval>> {
    let n = params.consts.total();
    if inputs.len() < n {
        return Err(ShapeError::Invalid(format!(
            "takes {n} captured values before the right-hand side, got {} operands",
            inputs.len()
        )));
    }
    if params.vecmat.is_some() != params.transpose_solve.is_some() {
        return Err(ShapeError::Invalid(
            "vecmat and transpose_solve come together".into(),
        ));
    }
    let b = &inputs[n..];
    let want: Vec<Aval> = b.iter().map(|a| (*a).clone()).collect();
    let names = ["matvec", "vecmat", "solve", "transpose_solve"];
    for ((jaxpr, range), name) in params.parts().into_iter().zip(names) {
        let Some(jaxpr) = jaxpr else { continue };
        let args: Vec<&Aval> = inputs[range].iter().chain(b).copied().collect();
        let got = call_avals(jaxpr.jaxpr(), &args).map_err(|m| format!("{name}: {m}"))?;
        check_same_avals(&got, &want, &format!("{name} must return b's types"))?;
    }
    Ok(want)
}
