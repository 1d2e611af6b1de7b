//! The named axes in scope while a function is traced: the mesh axes of
//! each enclosing `shard_map` body and the `axis_name` of each enclosing
//! `vmap`, innermost last (JAX's axis environment). Collectives resolve the
//! names they are given here; an inner binding of a name hides an outer one.

use std::cell::RefCell;
use std::sync::Arc;

use oxla_core::{AxisGroup, MeshDesc};

/// One binding of names.
#[derive(Debug, Clone)]
enum AxisFrame {
    /// A `shard_map` body: every axis of its mesh, and whether its values
    /// carry the axes they vary over (`check_vma`).
    Mesh { mesh: MeshDesc, check_vma: bool },
    /// A `vmap` with `axis_name`.
    Vmap { name: Arc<str>, size: usize },
}

thread_local! {
    static FRAMES: RefCell<Vec<AxisFrame>> = const { RefCell::new(Vec::new()) };
}

/// Pops the frame pushed by [`bind_mesh`] or [`bind_vmap`] when dropped.
pub(crate) struct AxisFrameGuard;

impl Drop for AxisFrameGuard {
    fn drop(&mut self) {
        FRAMES.with(|f| f.borrow_mut().pop());
    }
}

/// Puts the axes of `mesh` in scope until the guard drops.
pub(crate) fn bind_mesh(mesh: MeshDesc, check_vma: bool) -> AxisFrameGuard {
    FRAMES.with(|f| f.borrow_mut().push(AxisFrame::Mesh { mesh, check_vma }));
    AxisFrameGuard
}

/// The mesh of the innermost `shard_map` body being traced, if it checks
/// varying axes (where `pvary`s are inserted).
pub(crate) fn varying_mesh() -> Option<MeshDesc> {
    FRAMES
        .with(|f| {
            f.borrow().iter().rev().find_map(|frame| match frame {
                AxisFrame::Mesh { mesh, check_vma } => Some(check_vma.then(|| mesh.clone())),
                AxisFrame::Vmap { .. } => None,
            })
        })
        .flatten()
}

/// Puts the vmap axis `name` of `size` examples in scope until the guard
/// drops.
pub(crate) fn bind_vmap(name: Arc<str>, size: usize) -> AxisFrameGuard {
    FRAMES.with(|f| f.borrow_mut().push(AxisFrame::Vmap { name, size }));
    AxisFrameGuard
}

/// What a name means where it is used.
#[derive(Debug, Clone)]
pub(crate) enum ResolvedAxis {
    /// An axis of this `shard_map` mesh.
    Mesh(MeshDesc),
    /// The axis of an enclosing `vmap`.
    Vmap(AxisGroup),
}

/// The innermost binding of `name`, if any.
pub(crate) fn resolve(name: &str) -> Option<ResolvedAxis> {
    FRAMES.with(|f| {
        f.borrow().iter().rev().find_map(|frame| match frame {
            AxisFrame::Mesh { mesh, .. } => mesh
                .axis_size(name)
                .map(|_| ResolvedAxis::Mesh(mesh.clone())),
            AxisFrame::Vmap { name: n, size } if &**n == name => {
                Some(ResolvedAxis::Vmap(AxisGroup::vmap(n.clone(), *size)))
            }
            AxisFrame::Vmap { .. } => None,
        })
    })
}

/// Every name in scope, innermost first, as an error message lists them.
pub(crate) fn names_in_scope() -> Vec<String> {
    FRAMES.with(|f| {
        f.borrow()
            .iter()
            .rev()
            .flat_map(|frame| match frame {
                AxisFrame::Mesh { mesh, .. } => mesh
                    .axes
                    .iter()
                    .map(|(n, _)| format!("'{n}' (mesh)"))
                    .collect::<Vec<_>>(),
                AxisFrame::Vmap { name, .. } => vec![format!("'{name}' (vmap)")],
            })
            .collect()
    })
}
