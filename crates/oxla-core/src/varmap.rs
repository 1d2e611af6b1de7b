//! A table with one entry per variable of a jaxpr, indexed by [`Var`], in
//! the manner of Cranelift's `SecondaryMap`: every variable has an entry,
//! the default until one is written, and the table grows as variables are
//! written. It replaces parallel `Vec`s indexed by `var.0 as usize`.

use std::ops::{Index, IndexMut};

use crate::jaxpr::Var;

/// A value of type `T` per variable, `default` where none was written.
#[derive(Debug, Clone, PartialEq)]
pub struct VarMap<T> {
    values: Vec<T>,
    default: T,
}

impl<T: Clone> VarMap<T> {
    /// A table where every variable has `default`.
    pub fn new(default: T) -> Self {
        VarMap {
            values: Vec::new(),
            default,
        }
    }

    /// A table with room for `capacity` variables (a jaxpr's `avals.len()`)
    /// where every variable has `default`.
    pub fn with_capacity(capacity: usize, default: T) -> Self {
        VarMap {
            values: Vec::with_capacity(capacity),
            default,
        }
    }
}

impl<T: Clone> Index<Var> for VarMap<T> {
    type Output = T;

    fn index(&self, var: Var) -> &T {
        self.values.get(var.0 as usize).unwrap_or(&self.default)
    }
}

impl<T: Clone> Index<&Var> for VarMap<T> {
    type Output = T;

    fn index(&self, var: &Var) -> &T {
        &self[*var]
    }
}

impl<T: Clone> IndexMut<Var> for VarMap<T> {
    fn index_mut(&mut self, var: Var) -> &mut T {
        let i = var.0 as usize;
        if i >= self.values.len() {
            self.values.resize(i + 1, self.default.clone());
        }
        &mut self.values[i]
    }
}

impl<T: Clone> IndexMut<&Var> for VarMap<T> {
    fn index_mut(&mut self, var: &Var) -> &mut T {
        &mut self[*var]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_variables_read_the_default_and_writes_grow_the_table() {
        let mut seen = VarMap::new(false);
        assert!(!seen[Var(7)]);
        seen[Var(3)] = true;
        assert!(seen[Var(3)] && !seen[&Var(2)] && !seen[Var(100)]);
        seen[&Var(0)] = true;
        assert!(seen[Var(0)]);
    }
}
