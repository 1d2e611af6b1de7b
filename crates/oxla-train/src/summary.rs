//! A model summary: each leaf of a pytree with its path, dtype, shape,
//! element count and bytes, grouped by module (the path up to its last
//! component: `layers[0]` for `layers[0].kernel`), with totals; printed as
//! a table by `Display`, as Flax's `tabulate` prints a model's parameters.
//! [`flops`] asks the compiler's cost model how many floating-point
//! operations a jitted function does.
//!
//! ```
//! use oxla::random::Key;
//! use oxla_nn::{Activation, Mlp};
//! use oxla_train::summary::{Summary, parameter_count};
//! # fn main() -> oxla::Result<()> {
//! let model = Mlp::new(Key::new(0), &[4, 8, 2], Activation::Relu);
//! assert_eq!(parameter_count(&model)?, 4 * 8 + 8 + 8 * 2 + 2);
//! let summary = Summary::of(&model)?;
//! assert_eq!(summary.modules[0].module, "layers[0]");
//! println!("{summary}");
//! # Ok(())
//! # }
//! ```

use std::fmt;

use oxla::pytree::{Pytree, TreeDef};
use oxla::{DType, Error, Jit, Result};

/// One leaf of a pytree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The leaf's path, as a checkpoint names it (`layers[0].kernel`;
    /// empty for a tree that is one array).
    pub path: String,
    /// The path of the module that holds it: `path` without its last
    /// component (`layers[0]`; empty at the top level).
    pub module: String,
    /// The last component of `path` (`kernel`, `[1]`, `['w']`).
    pub name: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<i64>,
    /// Its number of elements.
    pub count: usize,
    /// Its size in bytes (`count` times the dtype's size).
    pub bytes: usize,
}

/// The leaves of one module, in leaf order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSummary {
    /// The module's path (`layers[0]`; empty for leaves at the top level).
    pub module: String,
    /// Its leaves.
    pub params: Vec<ParamInfo>,
    /// Their total number of elements.
    pub count: usize,
    /// Their total size in bytes.
    pub bytes: usize,
}

/// The parameters of a pytree, by module, with totals; `Display` prints it
/// as a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Every leaf, in leaf order.
    pub params: Vec<ParamInfo>,
    /// The modules, in order of their first leaf.
    pub modules: Vec<ModuleSummary>,
    /// The total number of elements.
    pub count: usize,
    /// The total size in bytes.
    pub bytes: usize,
}

impl Summary {
    /// The summary of `tree`'s leaves; an error if a leaf carries one.
    pub fn of<T: Pytree>(tree: &T) -> Result<Summary> {
        let (leaves, def) = tree.flatten();
        let mut paths = Vec::new();
        components(&def, &mut Vec::new(), &mut paths);
        if paths.len() != leaves.len() {
            return Err(Error::Internal(format!(
                "summary: the structure {def} has {} leaf paths for {} leaves",
                paths.len(),
                leaves.len()
            )));
        }
        let mut params = Vec::with_capacity(leaves.len());
        for (leaf, parts) in leaves.iter().zip(paths) {
            let aval = leaf.aval()?;
            let count = aval
                .shape
                .iter()
                .try_fold(1usize, |n, &d| {
                    usize::try_from(d).ok().and_then(|d| n.checked_mul(d))
                })
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "summary: the element count of shape {:?} does not fit a usize",
                        aval.shape
                    ))
                })?;
            let (module, name) = match parts.split_last() {
                Some((last, rest)) => (join(rest), last.trim_start_matches('.').to_string()),
                None => (String::new(), String::new()),
            };
            params.push(ParamInfo {
                path: join(&parts),
                module,
                name,
                dtype: aval.dtype,
                shape: aval.shape.to_vec(),
                count,
                bytes: count.saturating_mul(aval.dtype.byte_size()),
            });
        }
        let mut modules: Vec<ModuleSummary> = Vec::new();
        for p in &params {
            let index = match modules.iter().position(|m| m.module == p.module) {
                Some(i) => i,
                None => {
                    modules.push(ModuleSummary {
                        module: p.module.clone(),
                        params: Vec::new(),
                        count: 0,
                        bytes: 0,
                    });
                    modules.len() - 1
                }
            };
            let m = &mut modules[index];
            m.count = m.count.saturating_add(p.count);
            m.bytes = m.bytes.saturating_add(p.bytes);
            m.params.push(p.clone());
        }
        let count = params.iter().fold(0usize, |n, p| n.saturating_add(p.count));
        let bytes = params.iter().fold(0usize, |n, p| n.saturating_add(p.bytes));
        Ok(Summary {
            params,
            modules,
            count,
            bytes,
        })
    }
}

/// The path components of each leaf of `def` (`.layers`, `[0]`, `.kernel`;
/// `['w']` for a map key), in leaf order, as `TreeDef::leaf_paths` spells
/// them.
fn components(def: &TreeDef, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut below = |part: String, child: &TreeDef, out: &mut Vec<Vec<String>>| {
        prefix.push(part);
        components(child, prefix, out);
        prefix.pop();
    };
    match def {
        TreeDef::Leaf => out.push(prefix.clone()),
        TreeDef::None | TreeDef::Static(_) => {}
        TreeDef::Tuple(c) | TreeDef::List(c) => {
            for (i, t) in c.iter().enumerate() {
                below(format!("[{i}]"), t, out);
            }
        }
        TreeDef::Dict(c) => {
            for (k, t) in c {
                below(format!("['{k}']"), t, out);
            }
        }
        TreeDef::Struct(_, c) => {
            for (k, t) in c {
                below(format!(".{k}"), t, out);
            }
        }
    }
}

/// A path from its components, without a leading `.` (as checkpoints name
/// tensors).
fn join(parts: &[String]) -> String {
    let path = parts.concat();
    match path.strip_prefix('.') {
        Some(rest) => rest.to_string(),
        None => path,
    }
}

/// The number of parameters (elements of all leaves) of `tree`; an error if
/// a leaf carries one.
pub fn parameter_count<T: Pytree>(tree: &T) -> Result<usize> {
    Summary::of(tree).map(|s| s.count)
}

/// The bytes of all leaves of `tree`; an error if a leaf carries one.
pub fn parameter_bytes<T: Pytree>(tree: &T) -> Result<usize> {
    Summary::of(tree).map(|s| s.bytes)
}

/// `n` with a comma between groups of three digits (`401,408`).
fn with_commas(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A shape as `[784, 512]` (`[]` for a scalar).
fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// A table: a row per module (its path and totals) followed by a row per
/// leaf (indented, by its last path component), then the totals. Numbers
/// have thousands separators and are right-aligned:
///
/// ```text
/// Module / parameter  Dtype  Shape   Params  Bytes
/// layers[0]                               9     36
///   kernel            f32    [2, 3]       6     24
///   bias              f32    [3]          3     12
/// Total                                   9     36
/// ```
///
/// Top-level leaves are under `<top level>`; a tree that is one array is
/// one row named `<array>`.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rows: Vec<[String; 5]> = vec![[
            "Module / parameter".into(),
            "Dtype".into(),
            "Shape".into(),
            "Params".into(),
            "Bytes".into(),
        ]];
        for m in &self.modules {
            let module = if m.module.is_empty() {
                "<top level>".to_string()
            } else {
                m.module.clone()
            };
            rows.push([
                module,
                String::new(),
                String::new(),
                with_commas(m.count),
                with_commas(m.bytes),
            ]);
            for p in &m.params {
                let name = if p.name.is_empty() {
                    "<array>"
                } else {
                    &p.name
                };
                rows.push([
                    format!("  {name}"),
                    p.dtype.to_string(),
                    shape_text(&p.shape),
                    with_commas(p.count),
                    with_commas(p.bytes),
                ]);
            }
        }
        rows.push([
            "Total".into(),
            String::new(),
            String::new(),
            with_commas(self.count),
            with_commas(self.bytes),
        ]);
        let mut widths = [0usize; 5];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let line = format!(
                "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {:>w4$}",
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3],
                w4 = widths[4],
            );
            f.write_str(line.trim_end())?;
        }
        Ok(())
    }
}

/// The floating-point operations of `f` on `args`, by the compiler's cost
/// model (XLA's cost analysis, through PJRT): `f` is traced for `args`,
/// lowered and compiled on its own (not through `f`'s cache) and not run.
/// `None` when the plugin has no cost model or reports no `flops`.
///
/// ```
/// use oxla::{Array, DType, jit, numpy as jnp};
/// use oxla_train::summary::flops;
/// # fn main() -> oxla::Result<()> {
/// let f = jit(|(a, b): (Array, Array)| jnp::matmul(&a, &b));
/// let args = (jnp::ones(&[4, 8], DType::F32), jnp::ones(&[8, 16], DType::F32));
/// if let Some(n) = flops(&f, &args)? {
///     assert!(n > 0.0);
/// }
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn flops<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(
    f: &Jit<In, Out, F>,
    args: &In,
) -> Result<Option<f64>> {
    let traced = f.trace(args)?;
    let executable = oxla::compile_jaxpr(&traced.jaxpr, f.name())?;
    let Some(costs) = executable.cost_analysis()? else {
        return Ok(None);
    };
    // The value is a PJRT named value (a float or an integer); its text is
    // the number.
    Ok(costs
        .iter()
        .find(|c| c.name == "flops")
        .and_then(|c| c.value.to_string().parse::<f64>().ok()))
}
