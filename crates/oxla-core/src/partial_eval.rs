//! Partial evaluation of jaxprs: splitting a jaxpr whose inputs are partly
//! known into a known part (run now) and an unknown part (run later, on
//! residuals the known part saves), with a policy that may recompute known
//! values in the unknown part instead of saving them (rematerialization).
//! Also dead-code elimination.

use crate::jaxpr::{Atom, Equation, Jaxpr, Var};

/// The two halves of a partially evaluated jaxpr.
#[derive(Debug, Clone)]
pub struct Split {
    /// Known inputs → known outputs, then the residuals.
    pub known: Jaxpr,
    /// Residuals, then unknown inputs → unknown outputs.
    pub unknown: Jaxpr,
    /// Which outputs of the original jaxpr the unknown half computes.
    pub out_unknowns: Vec<bool>,
    /// How many residuals pass from the known half to the unknown one.
    pub num_residuals: usize,
}

/// Splits `jaxpr` (without constvars) whose inputs are unknown where
/// `in_unknowns` says. An equation is unknown if any of its inputs is.
/// Outputs in `force_out_unknown` come out of the unknown half even when
/// known. A known equation whose results the unknown half needs is saved
/// as a residual if `saveable` says so, and otherwise recomputed in the
/// unknown half (from residuals further up).
pub fn partial_eval(
    jaxpr: &Jaxpr,
    in_unknowns: &[bool],
    force_out_unknown: &[bool],
    saveable: &dyn Fn(&Equation) -> bool,
) -> Split {
    assert!(
        jaxpr.constvars.is_empty(),
        "partial_eval takes closed jaxprs"
    );
    let n = jaxpr.avals.len();
    let mut unknown = vec![false; n];
    for (v, &u) in jaxpr.invars.iter().zip(in_unknowns) {
        unknown[v.0 as usize] = u;
    }
    let is_unknown = |a: &Atom, unknown: &[bool]| match a {
        Atom::Var(v) => unknown[v.0 as usize],
        Atom::Literal(_) => false,
    };
    let mut eqn_unknown = Vec::with_capacity(jaxpr.eqns.len());
    for e in &jaxpr.eqns {
        let u = e.inputs.iter().any(|a| is_unknown(a, &unknown));
        for o in &e.outputs {
            unknown[o.0 as usize] = u;
        }
        eqn_unknown.push(u);
    }
    let out_unknowns: Vec<bool> = jaxpr
        .outvars
        .iter()
        .enumerate()
        .map(|(i, a)| is_unknown(a, &unknown) || force_out_unknown.get(i).copied().unwrap_or(false))
        .collect();

    // Known values the unknown half needs, and known equations it recomputes.
    let mut needed = vec![false; n];
    let need = |a: &Atom, needed: &mut Vec<bool>, unknown: &[bool]| {
        if let Atom::Var(v) = a
            && !unknown[v.0 as usize]
        {
            needed[v.0 as usize] = true;
        }
    };
    for (e, &u) in jaxpr.eqns.iter().zip(&eqn_unknown) {
        if u {
            for a in &e.inputs {
                need(a, &mut needed, &unknown);
            }
        }
    }
    for (a, &u) in jaxpr.outvars.iter().zip(&out_unknowns) {
        if u {
            need(a, &mut needed, &unknown);
        }
    }
    let mut recompute = vec![false; jaxpr.eqns.len()];
    let mut produced_by_recompute = vec![false; n];
    for (i, e) in jaxpr.eqns.iter().enumerate().rev() {
        if eqn_unknown[i] || !e.outputs.iter().any(|o| needed[o.0 as usize]) || saveable(e) {
            continue;
        }
        recompute[i] = true;
        for o in &e.outputs {
            produced_by_recompute[o.0 as usize] = true;
        }
        for a in &e.inputs {
            need(a, &mut needed, &unknown);
        }
    }
    let residuals: Vec<Var> = (0..n)
        .filter(|&v| needed[v] && !produced_by_recompute[v])
        .map(|v| Var(v as u32))
        .collect();

    let known_invars: Vec<Var> = jaxpr
        .invars
        .iter()
        .zip(in_unknowns)
        .filter(|(_, u)| !**u)
        .map(|(v, _)| *v)
        .collect();
    let unknown_invars: Vec<Var> = jaxpr
        .invars
        .iter()
        .zip(in_unknowns)
        .filter(|(_, u)| **u)
        .map(|(v, _)| *v)
        .collect();
    let mut known = Jaxpr {
        avals: jaxpr.avals.clone(),
        constvars: Vec::new(),
        invars: known_invars,
        eqns: jaxpr
            .eqns
            .iter()
            .zip(&eqn_unknown)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| e.clone())
            .collect(),
        outvars: jaxpr
            .outvars
            .iter()
            .zip(&out_unknowns)
            .filter(|(_, u)| !**u)
            .map(|(a, _)| a.clone())
            .chain(residuals.iter().map(|v| Atom::Var(*v)))
            .collect(),
    };
    let mut staged = Jaxpr {
        avals: jaxpr.avals.clone(),
        constvars: Vec::new(),
        invars: residuals.iter().copied().chain(unknown_invars).collect(),
        eqns: jaxpr
            .eqns
            .iter()
            .enumerate()
            .filter(|(i, _)| eqn_unknown[*i] || recompute[*i])
            .map(|(_, e)| e.clone())
            .collect(),
        outvars: jaxpr
            .outvars
            .iter()
            .zip(&out_unknowns)
            .filter(|(_, u)| **u)
            .map(|(a, _)| a.clone())
            .collect(),
    };
    dce(&mut known);
    dce(&mut staged);
    Split {
        known,
        unknown: staged,
        out_unknowns,
        num_residuals: residuals.len(),
    }
}

/// Removes equations none of whose results is used (every primitive is pure).
pub fn dce(jaxpr: &mut Jaxpr) {
    let mut used = vec![false; jaxpr.avals.len()];
    let mark = |a: &Atom, used: &mut Vec<bool>| {
        if let Atom::Var(v) = a {
            used[v.0 as usize] = true;
        }
    };
    for a in &jaxpr.outvars {
        mark(a, &mut used);
    }
    let mut keep = vec![false; jaxpr.eqns.len()];
    for (i, e) in jaxpr.eqns.iter().enumerate().rev() {
        if e.outputs.iter().any(|o| used[o.0 as usize]) {
            keep[i] = true;
            for a in &e.inputs {
                mark(a, &mut used);
            }
        }
    }
    let mut i = 0;
    jaxpr.eqns.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aval, BinaryOp, DType, JaxprBuilder, Primitive, UnaryOp};

    /// f(x, t) = (sin x, cos(x) * t): x known, t unknown.
    fn jvp_like() -> Jaxpr {
        let mut b = JaxprBuilder::new();
        let x = b.add_invar(Aval::new(DType::F32, &[3]));
        let t = b.add_invar(Aval::new(DType::F32, &[3]));
        let s = b
            .add_equation(Primitive::Unary(UnaryOp::Sin), vec![Atom::Var(x)], None)
            .unwrap()[0];
        let c = b
            .add_equation(Primitive::Unary(UnaryOp::Cos), vec![Atom::Var(x)], None)
            .unwrap()[0];
        let ct = b
            .add_equation(
                Primitive::Binary(BinaryOp::Mul),
                vec![Atom::Var(c), Atom::Var(t)],
                None,
            )
            .unwrap()[0];
        b.finish(vec![Atom::Var(s), Atom::Var(ct)])
    }

    #[test]
    fn saving_everything_keeps_the_known_work_in_the_known_half() {
        let split = partial_eval(&jvp_like(), &[false, true], &[], &|_| true);
        assert_eq!(split.out_unknowns, vec![false, true]);
        assert_eq!(split.num_residuals, 1);
        assert_eq!(split.known.eqns.len(), 2);
        assert_eq!(split.unknown.eqns.len(), 1);
        assert_eq!(split.known.outvars.len(), 2);
        assert_eq!(split.unknown.invars.len(), 2);
    }

    #[test]
    fn saving_nothing_recomputes_from_the_inputs() {
        let split = partial_eval(&jvp_like(), &[false, true], &[], &|_| false);
        // The residual is x itself; cos is recomputed in the unknown half.
        assert_eq!(split.num_residuals, 1);
        assert_eq!(split.unknown.eqns.len(), 2);
        assert_eq!(split.known.eqns.len(), 1);
    }

    #[test]
    fn dce_drops_unused_equations() {
        let mut j = jvp_like();
        j.outvars.truncate(1);
        dce(&mut j);
        assert_eq!(j.eqns.len(), 1);
    }
}
