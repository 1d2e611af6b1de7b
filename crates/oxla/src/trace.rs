//! The staging interpreter's state: a thread-local stack of traces. While a
//! trace is open, every op records an equation into it (JAX's omnistaging);
//! otherwise ops run eagerly.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oxla_core::{Atom, JaxprBuilder, Literal, Location, Var};

use crate::array::{Array, Inner};
use crate::error::{Error, Result};

/// One open trace.
pub(crate) struct Frame {
    /// Identifies the trace's tracers.
    pub(crate) id: u64,
    /// The jaxpr being recorded.
    pub(crate) builder: JaxprBuilder,
    /// Concrete arrays captured by the traced function, and their constvars.
    pub(crate) consts: Vec<(Array, Var)>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

static NEXT_TRACE: AtomicU64 = AtomicU64::new(1);

/// Whether a trace is open on this thread.
pub(crate) fn is_tracing() -> bool {
    FRAMES.with(|f| !f.borrow().is_empty())
}

/// Runs `f` on the innermost open trace, if any.
pub(crate) fn with_top<R>(f: impl FnOnce(&mut Frame) -> R) -> Option<R> {
    FRAMES.with(|frames| frames.borrow_mut().last_mut().map(f))
}

/// Opens a trace; it closes (and is returned) when the guard is finished,
/// or is discarded if the guard is dropped first (e.g. by a panic).
pub(crate) struct TraceGuard {
    id: u64,
    finished: bool,
}

impl TraceGuard {
    pub(crate) fn open() -> TraceGuard {
        let id = NEXT_TRACE.fetch_add(1, Ordering::Relaxed);
        FRAMES.with(|f| {
            f.borrow_mut().push(Frame {
                id,
                builder: JaxprBuilder::new(),
                consts: Vec::new(),
            })
        });
        TraceGuard {
            id,
            finished: false,
        }
    }

    /// The trace's id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Closes the trace and returns its frame.
    pub(crate) fn finish(mut self) -> Frame {
        self.finished = true;
        FRAMES
            .with(|f| f.borrow_mut().pop())
            .expect("the trace opened by this guard")
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        if !self.finished {
            FRAMES.with(|f| {
                let mut frames = f.borrow_mut();
                if frames.last().is_some_and(|fr| fr.id == self.id) {
                    frames.pop();
                }
            });
        }
    }
}

impl Frame {
    /// The operand an array is in this trace: its variable if it is one of
    /// this trace's tracers, a constvar for a concrete array (once per
    /// array), a literal for a host scalar.
    pub(crate) fn atom(&mut self, array: &Array, location: Location) -> Result<Atom> {
        array.check_not_donated(location)?;
        match &*array.inner {
            Inner::Traced { trace, atom, .. } if *trace == self.id => Ok(atom.clone()),
            Inner::Traced { .. } => Err(Error::EscapedTracer { location }),
            Inner::Scalar { value, aval } => Ok(Atom::Literal(Literal {
                value: *value,
                aval: aval.clone(),
            })),
            Inner::Concrete { aval, .. } => {
                if let Some((_, v)) = self
                    .consts
                    .iter()
                    .find(|(a, _)| Arc::ptr_eq(&a.inner, &array.inner))
                {
                    return Ok(Atom::Var(*v));
                }
                let v = self.builder.add_constvar(aval.clone());
                self.consts.push((array.clone(), v));
                Ok(Atom::Var(v))
            }
            Inner::Error(e) => Err(e.clone()),
        }
    }
}
