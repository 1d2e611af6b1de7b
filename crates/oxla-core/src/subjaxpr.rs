//! Jaxprs held inside primitives (calls, remat, custom rules): closed (their
//! constants are leading operands), shared, and hashable through a
//! fingerprint computed once, so primitives that carry them can key caches.

use std::any::Any;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::jaxpr::{Atom, Jaxpr, ScalarKey};

/// A closed jaxpr inside a primitive: no constvars (what it closed over is
/// passed as its leading inputs). Equal when the jaxprs are equal; hashed by
/// a fingerprint of everything but source locations.
#[derive(Clone)]
pub struct SubJaxpr {
    inner: Arc<(Jaxpr, u64)>,
}

impl SubJaxpr {
    /// Wraps a jaxpr; its constvars become leading invars.
    pub fn new(mut jaxpr: Jaxpr) -> Self {
        if !jaxpr.constvars.is_empty() {
            let mut invars = std::mem::take(&mut jaxpr.constvars);
            invars.append(&mut jaxpr.invars);
            jaxpr.invars = invars;
        }
        let fingerprint = fingerprint(&jaxpr);
        SubJaxpr {
            inner: Arc::new((jaxpr, fingerprint)),
        }
    }

    /// The jaxpr.
    pub fn jaxpr(&self) -> &Jaxpr {
        &self.inner.0
    }

    /// The fingerprint (equal jaxprs have equal fingerprints).
    pub fn fingerprint(&self) -> u64 {
        self.inner.1
    }
}

fn hash_atom(a: &Atom, h: &mut DefaultHasher) {
    match a {
        Atom::Var(v) => {
            0u8.hash(h);
            v.hash(h);
        }
        Atom::Literal(l) => {
            1u8.hash(h);
            ScalarKey::of(l.value).hash(h);
            l.aval.hash(h);
        }
    }
}

/// A hash of a jaxpr's structure, types and parameters (not its locations).
fn fingerprint(jaxpr: &Jaxpr) -> u64 {
    let mut h = DefaultHasher::new();
    jaxpr.avals.hash(&mut h);
    jaxpr.constvars.hash(&mut h);
    jaxpr.invars.hash(&mut h);
    jaxpr.eqns.len().hash(&mut h);
    for e in &jaxpr.eqns {
        e.primitive.hash(&mut h);
        e.inputs.len().hash(&mut h);
        for a in &e.inputs {
            hash_atom(a, &mut h);
        }
        e.outputs.hash(&mut h);
    }
    for a in &jaxpr.outvars {
        hash_atom(a, &mut h);
    }
    h.finish()
}

impl PartialEq for SubJaxpr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
            || (self.inner.1 == other.inner.1 && self.inner.0 == other.inner.0)
    }
}

impl Eq for SubJaxpr {}

impl Hash for SubJaxpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.1.hash(state);
    }
}

impl fmt::Debug for SubJaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SubJaxpr({:016x})", self.inner.1)
    }
}

impl fmt::Display for SubJaxpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner.0)
    }
}

static NEXT_RULE: AtomicU64 = AtomicU64::new(1);

/// A user's rule (a custom derivative) that a primitive carries: opaque to
/// oxla-core, compared and hashed by identity.
#[derive(Clone)]
pub struct OpaqueRule {
    id: u64,
    name: Arc<str>,
    rule: Arc<dyn Any + Send + Sync>,
}

impl OpaqueRule {
    /// Wraps a rule under a name (for jaxpr printing and errors).
    pub fn new(name: &str, rule: Arc<dyn Any + Send + Sync>) -> Self {
        OpaqueRule {
            id: NEXT_RULE.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            rule,
        }
    }

    /// The rule's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rule, to be downcast by its owner.
    pub fn rule(&self) -> &Arc<dyn Any + Send + Sync> {
        &self.rule
    }
}

impl PartialEq for OpaqueRule {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for OpaqueRule {}

impl Hash for OpaqueRule {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Debug for OpaqueRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.name, self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitive::elementwise;
    use crate::{Aval, DType, JaxprBuilder, Primitive, UnaryOp};

    fn sin_jaxpr(line: u32) -> Jaxpr {
        let mut b = JaxprBuilder::new();
        let x = b.add_invar(Aval::new(DType::F32, &[3]));
        let loc = crate::Location {
            file: "f.rs",
            line,
            column: 1,
        };
        let y = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Unary(UnaryOp::Sin)),
                vec![Atom::Var(x)],
                Some(loc),
            )
            .unwrap();
        b.finish(vec![Atom::Var(y[0])])
    }

    #[test]
    fn fingerprints_ignore_locations_and_equality_does_not() {
        let a = SubJaxpr::new(sin_jaxpr(1));
        let b = SubJaxpr::new(sin_jaxpr(2));
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a, b);
        assert_eq!(a, SubJaxpr::new(sin_jaxpr(1)));
    }

    #[test]
    fn constvars_become_leading_invars() {
        let mut b = JaxprBuilder::new();
        let c = b.add_constvar(Aval::new(DType::F32, &[]));
        let x = b.add_invar(Aval::new(DType::F32, &[]));
        let y = b
            .add_equation(
                Primitive::Elementwise(elementwise::Op::Binary(crate::BinaryOp::Add)),
                vec![Atom::Var(c), Atom::Var(x)],
                None,
            )
            .unwrap();
        let s = SubJaxpr::new(b.finish(vec![Atom::Var(y[0])]));
        assert!(s.jaxpr().constvars.is_empty());
        assert_eq!(s.jaxpr().invars, vec![c, x]);
    }
}
