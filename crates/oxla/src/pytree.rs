//! Pytrees: nested containers of arrays that functions take and return.
//! A [`Pytree`] flattens to its array leaves plus a [`TreeDef`] (the
//! structure, with the values of static fields), and is rebuilt from them.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::array::Array;
use crate::error::{Error, Result};

/// The structure of a pytree: everything but the array leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TreeDef {
    /// An array.
    Leaf,
    /// `None`.
    None,
    /// A tuple.
    Tuple(Vec<TreeDef>),
    /// A list (`Vec` or fixed array).
    List(Vec<TreeDef>),
    /// A map with string keys, in key order.
    Dict(Vec<(String, TreeDef)>),
    /// A value that is not traced: its `Debug` text is part of the structure
    /// (and so of every jit cache key); the value itself is kept to rebuild it.
    Static(StaticValue),
    /// A user struct: its name and fields.
    Struct(&'static str, Vec<(&'static str, TreeDef)>),
}

impl TreeDef {
    /// Number of leaves.
    pub fn num_leaves(&self) -> usize {
        match self {
            TreeDef::Leaf => 1,
            TreeDef::None | TreeDef::Static(_) => 0,
            TreeDef::Tuple(c) | TreeDef::List(c) => c.iter().map(TreeDef::num_leaves).sum(),
            TreeDef::Dict(c) => c.iter().map(|(_, t)| t.num_leaves()).sum(),
            TreeDef::Struct(_, c) => c.iter().map(|(_, t)| t.num_leaves()).sum(),
        }
    }

    /// The key path of each leaf (`[0]['w']`, `.layers[1]`).
    pub fn leaf_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.paths(String::new(), &mut out);
        out
    }

    /// Where `self` and `other` first differ: the key path there (empty at
    /// the root) and the two subtrees; `None` when they are equal.
    pub fn first_difference<'a>(
        &'a self,
        other: &'a TreeDef,
    ) -> Option<(String, &'a TreeDef, &'a TreeDef)> {
        self.difference_below(other, String::new())
    }

    fn difference_below<'a>(
        &'a self,
        other: &'a TreeDef,
        prefix: String,
    ) -> Option<(String, &'a TreeDef, &'a TreeDef)> {
        if self == other {
            return None;
        }
        let here = Some((prefix.clone(), self, other));
        match (self, other) {
            (TreeDef::Tuple(a), TreeDef::Tuple(b)) | (TreeDef::List(a), TreeDef::List(b))
                if a.len() == b.len() =>
            {
                a.iter()
                    .zip(b)
                    .enumerate()
                    .find_map(|(i, (x, y))| x.difference_below(y, format!("{prefix}[{i}]")))
            }
            (TreeDef::Dict(a), TreeDef::Dict(b))
                if a.iter().map(|(k, _)| k).eq(b.iter().map(|(k, _)| k)) =>
            {
                a.iter()
                    .zip(b)
                    .find_map(|((k, x), (_, y))| x.difference_below(y, format!("{prefix}['{k}']")))
            }
            (TreeDef::Struct(n, a), TreeDef::Struct(m, b))
                if n == m && a.iter().map(|(k, _)| k).eq(b.iter().map(|(k, _)| k)) =>
            {
                a.iter()
                    .zip(b)
                    .find_map(|((k, x), (_, y))| x.difference_below(y, format!("{prefix}.{k}")))
            }
            _ => here,
        }
    }

    fn paths(&self, prefix: String, out: &mut Vec<String>) {
        match self {
            TreeDef::Leaf => out.push(prefix),
            TreeDef::None | TreeDef::Static(_) => {}
            TreeDef::Tuple(c) | TreeDef::List(c) => {
                for (i, t) in c.iter().enumerate() {
                    t.paths(format!("{prefix}[{i}]"), out);
                }
            }
            TreeDef::Dict(c) => {
                for (k, t) in c {
                    t.paths(format!("{prefix}['{k}']"), out);
                }
            }
            TreeDef::Struct(_, c) => {
                for (k, t) in c {
                    t.paths(format!("{prefix}.{k}"), out);
                }
            }
        }
    }
}

impl fmt::Display for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |c: &[TreeDef]| {
            c.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            TreeDef::Leaf => f.write_str("*"),
            TreeDef::None => f.write_str("None"),
            TreeDef::Tuple(c) if c.len() == 1 => write!(f, "({},)", c[0]),
            TreeDef::Tuple(c) => write!(f, "({})", join(c)),
            TreeDef::List(c) => write!(f, "[{}]", join(c)),
            TreeDef::Dict(c) => write!(
                f,
                "{{{}}}",
                c.iter()
                    .map(|(k, t)| format!("'{k}': {t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TreeDef::Static(v) => write!(f, "static({})", v.repr()),
            TreeDef::Struct(name, c) => write!(
                f,
                "{name}({})",
                c.iter()
                    .map(|(k, t)| format!("{k}={t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// A static (untraced) value in a [`TreeDef`]: compared and hashed by its
/// `Debug` text, and kept so a pytree can be rebuilt with it.
#[derive(Clone)]
pub struct StaticValue {
    repr: String,
    value: Arc<dyn Any + Send + Sync>,
}

impl StaticValue {
    /// Wraps a value.
    pub fn new<T: fmt::Debug + Clone + Send + Sync + 'static>(value: &T) -> Self {
        Self {
            repr: format!("{value:?}"),
            value: Arc::new(value.clone()),
        }
    }

    /// The value, if it is a `T`.
    pub fn get<T: Clone + 'static>(&self) -> Option<T> {
        self.value.downcast_ref::<T>().cloned()
    }

    /// The `Debug` text.
    pub fn repr(&self) -> &str {
        &self.repr
    }
}

impl PartialEq for StaticValue {
    fn eq(&self, other: &Self) -> bool {
        self.repr == other.repr
    }
}

impl Eq for StaticValue {}

impl Hash for StaticValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.repr.hash(state);
    }
}

impl fmt::Debug for StaticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr)
    }
}

/// The value of a static field, for `#[derive(Pytree)]`.
pub fn static_field<T: Clone + 'static>(def: &TreeDef, field: &str) -> Result<T> {
    match def {
        TreeDef::Static(v) => v.get::<T>().ok_or_else(|| {
            Error::InvalidArgument(format!("static field {field} holds another type ({v:?})"))
        }),
        other => Err(mismatch(other, "static field")),
    }
}

/// A container of arrays that oxla's transformations can take apart and
/// rebuild.
pub trait Pytree: Sized {
    /// What a transformation gives back for a function that returns this
    /// type: the type itself, except for `Result<T>`, whose `T` it is (an
    /// `Err` becomes the transformation's error). So `jit(f).call(x)` is a
    /// `Result<T>` whether `f` returns `T` or `Result<T>`, and composed
    /// transformations give one flat `Result`; loop bodies and functions
    /// given to `grad` may return `Result`s and use `?`.
    type Value: Pytree;

    /// `self` as a [`Value`](Self::Value): `Ok(self)`, or the `Result`
    /// itself.
    fn into_value(self) -> Result<Self::Value>;

    /// Appends the leaves to `leaves`, returns the structure.
    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef;

    /// Rebuilds a value of structure `def` from `leaves`.
    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self>;

    /// A copy of `self` with its leaves replaced by `leaves` (static values
    /// are copied from `self`): how jit builds the traced arguments.
    fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        let (_, def) = self.flatten();
        Self::unflatten_from(&def, leaves)
    }

    /// The leaves and the structure.
    fn flatten(&self) -> (Vec<Array>, TreeDef) {
        let mut leaves = Vec::new();
        let def = self.flatten_into(&mut leaves);
        (leaves, def)
    }
}

/// The error of a structure that does not fit the type being rebuilt.
pub fn mismatch(def: &TreeDef, what: &str) -> Error {
    Error::InvalidArgument(format!("pytree structure {def} does not fit a {what}"))
}

impl Pytree for Array {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        leaves.push(self.clone());
        TreeDef::Leaf
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::Leaf => leaves
                .next()
                .ok_or_else(|| Error::InvalidArgument("too few leaves for the pytree".into())),
            other => Err(mismatch(other, "leaf")),
        }
    }
}

impl Pytree for () {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, _: &mut Vec<Array>) -> TreeDef {
        TreeDef::Tuple(Vec::new())
    }

    fn unflatten_from(def: &TreeDef, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::Tuple(c) if c.is_empty() => Ok(()),
            other => Err(mismatch(other, "()")),
        }
    }
}

macro_rules! tuple_pytree {
    ($($n:tt $t:ident),+) => {
        impl<$($t: Pytree),+> Pytree for ($($t,)+) {
            type Value = Self;

            fn into_value(self) -> Result<Self> {
                Ok(self)
            }

            fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
                TreeDef::Tuple(vec![$(self.$n.flatten_into(leaves)),+])
            }

            fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
                const ARITY: usize = [$($n),+].len();
                match def {
                    TreeDef::Tuple(c) if c.len() == ARITY => Ok(($($t::unflatten_from(&c[$n], leaves)?,)+)),
                    other => Err(mismatch(other, "tuple")),
                }
            }

            fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
                Ok(($(self.$n.with_leaves(leaves)?,)+))
            }
        }
    };
}

tuple_pytree!(0 A);
tuple_pytree!(0 A, 1 B);
tuple_pytree!(0 A, 1 B, 2 C);
tuple_pytree!(0 A, 1 B, 2 C, 3 D);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
tuple_pytree!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);

impl<T: Pytree> Pytree for Vec<T> {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        TreeDef::List(self.iter().map(|x| x.flatten_into(leaves)).collect())
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::List(c) => c.iter().map(|d| T::unflatten_from(d, leaves)).collect(),
            other => Err(mismatch(other, "Vec")),
        }
    }

    fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter().map(|x| x.with_leaves(leaves)).collect()
    }
}

impl<T: Pytree, const N: usize> Pytree for [T; N] {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        TreeDef::List(self.iter().map(|x| x.flatten_into(leaves)).collect())
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        let items: Vec<T> = Vec::unflatten_from(def, leaves)?;
        items
            .try_into()
            .map_err(|_| mismatch(def, "fixed-size array"))
    }
}

impl<T: Pytree> Pytree for Option<T> {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        match self {
            Some(x) => x.flatten_into(leaves),
            None => TreeDef::None,
        }
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::None => Ok(None),
            other => Ok(Some(T::unflatten_from(other, leaves)?)),
        }
    }

    fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.as_ref().map(|x| x.with_leaves(leaves)).transpose()
    }
}

impl<T: Pytree> Pytree for BTreeMap<String, T> {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        TreeDef::Dict(
            self.iter()
                .map(|(k, v)| (k.clone(), v.flatten_into(leaves)))
                .collect(),
        )
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match def {
            TreeDef::Dict(c) => c
                .iter()
                .map(|(k, d)| Ok((k.clone(), T::unflatten_from(d, leaves)?)))
                .collect(),
            other => Err(mismatch(other, "map")),
        }
    }

    fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter()
            .map(|(k, v)| Ok((k.clone(), v.with_leaves(leaves)?)))
            .collect()
    }
}

/// A value passed to a jitted function as a compile-time constant: not
/// traced, part of the cache key by its `Debug` text (so equal values hit,
/// different values compile again), as JAX's `static_argnums`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Static<T>(pub T);

impl<T: fmt::Debug + Clone + Send + Sync + 'static> Pytree for Static<T> {
    type Value = Self;

    fn into_value(self) -> Result<Self> {
        Ok(self)
    }

    fn flatten_into(&self, _: &mut Vec<Array>) -> TreeDef {
        TreeDef::Static(StaticValue::new(&self.0))
    }

    fn unflatten_from(def: &TreeDef, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        static_field(def, "Static").map(Static)
    }

    fn with_leaves(&self, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(self.clone())
    }
}

/// Applies `f` to every leaf (`jax.tree_util.tree_map` over one tree).
pub fn tree_map<T: Pytree>(tree: &T, f: impl FnMut(&Array) -> Array) -> Result<T> {
    let (leaves, def) = tree.flatten();
    let mapped: Vec<Array> = leaves.iter().map(f).collect();
    T::unflatten_from(&def, &mut mapped.into_iter())
}

/// `jax.tree_util.tree_map(f, *trees)`: a tree of `trees[0]`'s structure
/// whose leaves are `f` of the corresponding leaves of every tree (EMA,
/// gradient accumulation, optimizer updates). When a structure differs,
/// the error names both structures, the first path where they differ, their
/// leaf counts and the caller's line; no `trees` is an error too.
///
/// ```
/// use oxla::{Array, pytree::tree_map_n};
/// # fn main() -> oxla::Result<()> {
/// let a = (Array::scalar(1.0f32)?, Array::scalar(2.0f32)?);
/// let b = (Array::scalar(10.0f32)?, Array::scalar(20.0f32)?);
/// let c = (Array::scalar(100.0f32)?, Array::scalar(200.0f32)?);
/// let (x, y) = tree_map_n(&[&a, &b, &c], |l| l[0] + l[1] + l[2])?;
/// assert_eq!((x.item::<f32>()?, y.item::<f32>()?), (111.0, 222.0));
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn tree_map_n<T: Pytree>(trees: &[&T], f: impl FnMut(&[&Array]) -> Array) -> Result<T> {
    tree_map_named("tree_map_n", trees, f)
}

/// [`tree_map_n`] over two trees, `f` taking their corresponding leaves.
///
/// ```
/// use oxla::{Array, pytree::tree_map2};
/// # fn main() -> oxla::Result<()> {
/// let ema = vec![Array::scalar(1.0f32)?];
/// let params = vec![Array::scalar(3.0f32)?];
/// let ema = tree_map2(&ema, &params, |e, p| e * 0.5 + p * 0.5)?;
/// assert_eq!(ema[0].item::<f32>()?, 2.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn tree_map2<T: Pytree>(a: &T, b: &T, mut f: impl FnMut(&Array, &Array) -> Array) -> Result<T> {
    tree_map_named("tree_map2", &[a, b], |l| f(l[0], l[1]))
}

/// [`tree_map_n`] over three trees.
#[track_caller]
pub fn tree_map3<T: Pytree>(
    a: &T,
    b: &T,
    c: &T,
    mut f: impl FnMut(&Array, &Array, &Array) -> Array,
) -> Result<T> {
    tree_map_named("tree_map3", &[a, b, c], |l| f(l[0], l[1], l[2]))
}

/// The corresponding leaves of two trees of one structure, as pairs in
/// leaf order (an error as [`tree_map_n`]'s when the structures differ).
///
/// ```
/// use oxla::{Array, pytree::tree_zip};
/// # fn main() -> oxla::Result<()> {
/// let grads = (Array::scalar(1.0f32)?, Array::scalar(2.0f32)?);
/// let params = (Array::scalar(3.0f32)?, Array::scalar(4.0f32)?);
/// let dot: f32 = tree_zip(&grads, &params)?
///     .iter()
///     .map(|(g, p)| (g * p).item::<f32>())
///     .sum::<oxla::Result<f32>>()?;
/// assert_eq!(dot, 11.0);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn tree_zip<T: Pytree>(a: &T, b: &T) -> Result<Vec<(Array, Array)>> {
    let (a_leaves, a_def) = a.flatten();
    let (b_leaves, b_def) = b.flatten();
    check_same_structure("tree_zip", &[&a_def, &b_def])?;
    Ok(a_leaves.into_iter().zip(b_leaves).collect())
}

/// `jax.tree_util.tree_reduce(f, tree, initializer)`: folds the leaves in
/// order.
///
/// ```
/// use oxla::{Array, pytree::tree_reduce};
/// # fn main() -> oxla::Result<()> {
/// let params = vec![Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::scalar(5.0f32)?];
/// let count = tree_reduce(&params, 0, |n, leaf| n + leaf.size());
/// assert_eq!(count, 3);
/// # Ok(())
/// # }
/// ```
pub fn tree_reduce<T: Pytree, A>(tree: &T, init: A, f: impl FnMut(A, &Array) -> A) -> A {
    tree.flatten().0.iter().fold(init, f)
}

/// [`tree_map_n`] with `what` naming the operation in its errors (for
/// libraries built on pytrees, like optimizers: a structure mismatch then
/// names the library's function and the caller's line).
#[track_caller]
pub fn tree_map_named<T: Pytree>(
    what: &str,
    trees: &[&T],
    mut f: impl FnMut(&[&Array]) -> Array,
) -> Result<T> {
    let flat: Vec<(Vec<Array>, TreeDef)> = trees.iter().map(|t| t.flatten()).collect();
    let defs: Vec<&TreeDef> = flat.iter().map(|(_, d)| d).collect();
    check_same_structure(what, &defs)?;
    let count = flat[0].0.len();
    let mapped: Vec<Array> = (0..count)
        .map(|k| {
            let leaves: Vec<&Array> = flat.iter().map(|(l, _)| &l[k]).collect();
            f(&leaves)
        })
        .collect();
    T::unflatten_from(&flat[0].1, &mut mapped.into_iter())
}

/// An error unless every structure equals the first: it names the two
/// structures, the first path where they differ, the leaf counts and the
/// caller's line.
#[track_caller]
fn check_same_structure(what: &str, defs: &[&TreeDef]) -> Result<()> {
    let at = oxla_core::Location::from_caller(std::panic::Location::caller());
    let Some(first) = defs.first() else {
        return Err(Error::InvalidArgument(format!(
            "{at}: {what}: no pytrees given"
        )));
    };
    for (i, other) in defs.iter().enumerate().skip(1) {
        if let Some((path, mine, theirs)) = first.first_difference(other) {
            let path = if path.is_empty() {
                "the root".to_string()
            } else {
                path
            };
            return Err(Error::InvalidArgument(format!(
                "{at}: {what}: pytree {i} does not have pytree 0's structure; first \
                 difference at {path}: {mine} vs {theirs}. pytree 0 is {first} ({} leaves), \
                 pytree {i} is {other} ({} leaves)",
                first.num_leaves(),
                other.num_leaves()
            )));
        }
    }
    Ok(())
}

/// The leaves of a pytree.
pub fn tree_leaves<T: Pytree>(tree: &T) -> Vec<Array> {
    tree.flatten().0
}

/// The structure of a pytree.
pub fn tree_structure<T: Pytree>(tree: &T) -> TreeDef {
    tree.flatten().1
}

/// Rebuilds a pytree of structure `def` from leaves: an error naming the
/// structure, both counts and the caller's line when there are too few or
/// too many leaves.
#[track_caller]
pub fn tree_unflatten<T: Pytree>(def: &TreeDef, leaves: Vec<Array>) -> Result<T> {
    let want = def.num_leaves();
    if leaves.len() != want {
        let at = oxla_core::Location::from_caller(std::panic::Location::caller());
        return Err(Error::InvalidArgument(format!(
            "{at}: tree_unflatten: the structure {def} has {want} leaves, {} were given",
            leaves.len()
        )));
    }
    T::unflatten_from(def, &mut leaves.into_iter())
}

/// A function traced by `jit` may fail (`?` on a concretization error, for
/// one): an `Err` flattens to a single leaf carrying the error, which the
/// trace reports; an `Ok` is its value's pytree.
impl<T: Pytree> Pytree for Result<T> {
    type Value = T;

    fn into_value(self) -> Result<T> {
        self
    }

    fn flatten_into(&self, leaves: &mut Vec<Array>) -> TreeDef {
        match self {
            Ok(x) => x.flatten_into(leaves),
            Err(e) => {
                leaves.push(Array::error(e.clone()));
                TreeDef::Leaf
            }
        }
    }

    fn unflatten_from(def: &TreeDef, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(T::unflatten_from(def, leaves))
    }

    fn with_leaves(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        match self {
            Ok(x) => Ok(x.with_leaves(leaves)),
            Err(e) => Ok(Err(e.clone())),
        }
    }
}
