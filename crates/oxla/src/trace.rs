//! The stack of open traces. Staging traces record equations into a jaxpr
//! (jit, and the tangent jaxpr of linearize); jvp and batching traces
//! transform each primitive as it is applied. A trace's level is its place
//! on the stack. `bind` goes to the trace of the highest-level tracer among
//! the inputs, or to the innermost *dynamic* staging trace (jit's) when that
//! is higher (omnistaging); with neither, ops run eagerly. Tracers carry
//! their trace's id, so tracers of different transformations never mix up
//! (no perturbation confusion); a tracer whose trace has closed has escaped.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oxla_core::{Atom, JaxprBuilder, Literal, Location, Var};

use crate::array::{Array, Inner};
use crate::error::{Error, Result};

/// A staging trace's state.
pub(crate) struct Frame {
    /// The jaxpr being recorded.
    pub(crate) builder: JaxprBuilder,
    /// Values from outside the trace (concrete arrays, and tracers of
    /// outer traces: closure conversion) and their constvars.
    pub(crate) consts: Vec<(Array, Var)>,
}

/// What kind of trace an entry is.
pub(crate) enum TraceKind {
    /// Records equations. `dynamic` traces (jit's) also receive ops whose
    /// inputs are not tracers; linearize's tangent trace only gets ops on
    /// its own tracers.
    Staging { frame: Frame, dynamic: bool },
    /// Forward-mode differentiation; tangents are staged into
    /// `tangent_trace` when linearizing.
    Jvp { tangent_trace: Option<u64> },
    /// Batching over `axis`.
    Batch { axis: BatchAxis },
}

/// The axis a batch trace maps over: its size and, for a `vmap` with
/// `axis_name`, the name collectives use for it (and the mesh axes its
/// examples are split over, `spmd_axis_name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchAxis {
    /// The number of examples.
    pub(crate) size: i64,
    /// The name collectives over the examples give the axis.
    pub(crate) name: Option<Arc<str>>,
    /// Mesh axes the batch dimension is split over in sharding
    /// constraints and `shard_map`s inside the `vmap`.
    pub(crate) spmd_axis_name: Option<Arc<[Arc<str>]>>,
}

impl BatchAxis {
    /// An unnamed axis of `size` examples.
    pub(crate) fn unnamed(size: i64) -> BatchAxis {
        BatchAxis {
            size,
            name: None,
            spmd_axis_name: None,
        }
    }
}

/// The level of the innermost open batch trace whose axis is named `name`.
pub(crate) fn named_batch_level(name: &str) -> Option<usize> {
    STACK.with(|s| {
        s.borrow().iter().rposition(
            |e| matches!(&e.kind, TraceKind::Batch { axis } if axis.name.as_deref() == Some(name)),
        )
    })
}

/// One open trace.
pub(crate) struct TraceEntry {
    /// Identifies the trace's tracers.
    pub(crate) id: u64,
    /// What it does.
    pub(crate) kind: TraceKind,
    /// The first error an op ran into while this trace was the innermost
    /// one: reported when the trace closes, even if no output depends on it.
    pub(crate) error: Option<Error>,
}

thread_local! {
    static STACK: RefCell<Vec<TraceEntry>> = const { RefCell::new(Vec::new()) };
}

static NEXT_TRACE: AtomicU64 = AtomicU64::new(1);

/// Whether any trace is open on this thread.
pub(crate) fn is_tracing() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// The level of the open trace `id`, if it is open.
pub(crate) fn level_of(id: u64) -> Option<usize> {
    STACK.with(|s| s.borrow().iter().position(|e| e.id == id))
}

/// The level of the innermost dynamic staging trace.
pub(crate) fn dynamic_level() -> Option<usize> {
    STACK.with(|s| {
        s.borrow()
            .iter()
            .rposition(|e| matches!(e.kind, TraceKind::Staging { dynamic: true, .. }))
    })
}

/// Runs `f` on the trace at `level`.
pub(crate) fn with_level<R>(level: usize, f: impl FnOnce(&mut TraceEntry) -> R) -> R {
    STACK.with(|s| f(&mut s.borrow_mut()[level]))
}

/// Runs `f` on the staging frame of trace `id` (None if it is not an open
/// staging trace).
pub(crate) fn with_frame<R>(id: u64, f: impl FnOnce(&mut Frame, u64) -> R) -> Option<R> {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let entry = stack.iter_mut().find(|e| e.id == id)?;
        match &mut entry.kind {
            TraceKind::Staging { frame, .. } => Some(f(frame, id)),
            TraceKind::Jvp { .. } | TraceKind::Batch { .. } => None,
        }
    })
}

/// Records `error` on the innermost trace, unless it already has one.
pub(crate) fn record_error(error: &Error) {
    STACK.with(|s| {
        if let Some(top) = s.borrow_mut().last_mut()
            && top.error.is_none()
        {
            top.error = Some(error.clone());
        }
    })
}

/// An open trace; it closes when finished, or is discarded (with every
/// trace opened after it) if the guard is dropped first (e.g. on `?`).
pub(crate) struct TraceGuard {
    id: u64,
    finished: bool,
}

impl TraceGuard {
    /// Opens a trace of `kind` on top of the stack.
    pub(crate) fn open(kind: TraceKind) -> TraceGuard {
        let id = NEXT_TRACE.fetch_add(1, Ordering::Relaxed);
        STACK.with(|s| {
            s.borrow_mut().push(TraceEntry {
                id,
                kind,
                error: None,
            })
        });
        TraceGuard {
            id,
            finished: false,
        }
    }

    /// Opens a staging trace.
    pub(crate) fn staging(dynamic: bool) -> TraceGuard {
        TraceGuard::open(TraceKind::Staging {
            frame: Frame {
                builder: JaxprBuilder::new(),
                consts: Vec::new(),
            },
            dynamic,
        })
    }

    /// The trace's id.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Closes the trace and returns it, or the first error recorded while
    /// it was innermost.
    pub(crate) fn finish(mut self) -> Result<TraceEntry> {
        self.finished = true;
        let entry = STACK.with(|s| {
            let mut stack = s.borrow_mut();
            let at = stack.iter().rposition(|e| e.id == self.id)?;
            stack.truncate(at + 1);
            stack.pop()
        });
        let mut entry = entry.ok_or_else(|| Error::Internal("a trace closed twice".into()))?;
        match entry.error.take() {
            Some(e) => Err(e),
            None => Ok(entry),
        }
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        if !self.finished {
            STACK.with(|s| {
                let mut stack = s.borrow_mut();
                if let Some(at) = stack.iter().rposition(|e| e.id == self.id) {
                    stack.truncate(at);
                }
            });
        }
    }
}

impl Frame {
    /// The operand an array is in this trace (`id`): its variable if it is
    /// one of this trace's tracers, a literal for a host scalar, and a
    /// constvar (once per array) for a concrete array or a tracer of an
    /// outer trace that is still open (closure conversion).
    pub(crate) fn atom(&mut self, id: u64, array: &Array, location: Location) -> Result<Atom> {
        array.check_not_donated(location)?;
        match &*array.inner {
            Inner::Traced { trace, atom, .. } if *trace == id => Ok(atom.clone()),
            Inner::Scalar { value, aval } => Ok(Atom::Literal(Literal {
                value: *value,
                aval: aval.clone(),
            })),
            Inner::Error(e) => Err(e.clone()),
            Inner::Concrete { .. }
            | Inner::Traced { .. }
            | Inner::Jvp { .. }
            | Inner::Batched { .. } => {
                if let Some((_, v)) = self
                    .consts
                    .iter()
                    .find(|(a, _)| Arc::ptr_eq(&a.inner, &array.inner))
                {
                    return Ok(Atom::Var(*v));
                }
                let aval = array.aval()?.clone();
                let v = self.builder.add_constvar(aval);
                self.consts.push((array.clone(), v));
                Ok(Atom::Var(v))
            }
        }
    }
}
