//! `jnp.vectorize`: a function written for core-shaped arrays, run over
//! every broadcast loop position by nested `vmap`s, as JAX builds it.

use std::cell::RefCell;
use std::collections::HashMap;

use oxla_core::Location;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};

/// The core dimension names of each operand: `[["m", "n"], ["n"]]` for
/// `(m,n),(n)`.
type CoreDims = Vec<Vec<String>>;

/// A function of flat arrays, boxed so that vmaps can nest.
type FlatFn<'f> = Box<dyn Fn(Vec<Array>) -> Result<Vec<Array>> + 'f>;

/// A function vectorized as `jnp.vectorize` does; see [`vectorize`].
pub struct Vectorize<F> {
    pyfunc: F,
    signature: Option<String>,
}

/// `jnp.vectorize(pyfunc, signature=None)`: `pyfunc`, written for one
/// element (or, with a [`signature`](Vectorize::signature), for arrays of
/// its core dimensions), applied over the broadcast of its inputs' other
/// ("loop") dimensions by one `vmap` per loop dimension, as JAX's. A loop
/// dimension where an input has size 1 is not mapped for that input (its
/// value is shared), and one where every input has size 1 stays in the
/// result with size 1.
///
/// `pyfunc` takes the arrays in order and returns an array, or a tuple or
/// other pytree of them. Without a signature each input element is a
/// scalar and each output must be one; with `"(m,n),(n)->(m)"` (NumPy's
/// generalized-ufunc signature) each input's trailing dimensions are its
/// core dimensions, sizes named alike must agree, and each output's shape
/// must be its core dimensions. JAX's `excluded` marks arguments passed
/// through unvectorized: in Rust the closure captures those.
///
/// ```
/// use oxla::{Array, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// // A dot product of vectors, vectorized over a batch of rows.
/// let rows = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let w = Array::from_slice(&[1.0f32, 0.0, -1.0], &[3])?;
/// let dot = jnp::vectorize(|a: &[Array]| jnp::dot(&a[0], &a[1])).signature("(n),(n)->()");
/// let out = dot.call(&[&rows, &w])?;
/// assert_eq!(out.to_vec::<f32>()?, vec![-2.0, -2.0]);
/// // Elementwise, with broadcasting: x[i, j] ** y[j].
/// let y = Array::from_slice(&[1.0f32, 2.0, 0.0], &[3])?;
/// let pow = jnp::vectorize(|a: &[Array]| jnp::power(&a[0], &a[1]));
/// assert_eq!(pow.call(&[&rows, &y])?.to_vec::<f32>()?, vec![1.0, 4.0, 1.0, 4.0, 25.0, 1.0]);
/// # Ok(())
/// # }
/// ```
pub fn vectorize<F>(pyfunc: F) -> Vectorize<F> {
    Vectorize {
        pyfunc,
        signature: None,
    }
}

impl<F> Vectorize<F> {
    /// The generalized-ufunc signature, `"(m,n),(n)->(m)"` (JAX's
    /// `signature`): the core dimensions of each input and each output.
    /// An invalid signature is reported by [`call`](Self::call).
    pub fn signature(mut self, signature: &str) -> Self {
        self.signature = Some(signature.to_string());
        self
    }

    /// Calls the vectorized function on `args`.
    #[track_caller]
    pub fn call<Out>(&self, args: &[&Array]) -> Result<Out::Value>
    where
        F: Fn(&[Array]) -> Out,
        Out: Pytree,
    {
        let location = Location::from_caller(std::panic::Location::caller());
        let usage = |message: String| Error::Usage {
            function: "jnp.vectorize",
            message,
            location,
        };
        let (input_core_dims, output_core_dims) = match &self.signature {
            Some(signature) => {
                let (inputs, outputs) = parse_signature(signature)
                    .ok_or_else(|| usage(format!("not a valid gufunc signature: {signature:?}")))?;
                (inputs, Some(outputs))
            }
            None => (vec![Vec::new(); args.len()], None),
        };
        if input_core_dims.len() != args.len() {
            return Err(usage(format!(
                "wrong number of positional arguments: expected {}, got {}",
                input_core_dims.len(),
                args.len()
            )));
        }
        let (broadcast_shape, dim_sizes) =
            loop_shape_and_core_sizes(args, &input_core_dims).map_err(usage)?;

        // The output structure, seen by the innermost call.
        let out_def: RefCell<Option<TreeDef>> = RefCell::new(None);
        let checked: FlatFn<'_> = Box::new(|core_args: Vec<Array>| {
            let (leaves, def) = (self.pyfunc)(&core_args).into_value()?.flatten();
            check_outputs(&leaves, output_core_dims.as_deref(), &dim_sizes).map_err(usage)?;
            *out_def.borrow_mut() = Some(def);
            Ok(leaves)
        });

        // Each input without its size-1 loop dimensions; vmap broadcasts
        // it over them instead (JAX's squeeze-then-vmap).
        let mut squeezed = Vec::with_capacity(args.len());
        let mut filled_shapes = Vec::with_capacity(args.len());
        for (arg, core) in args.iter().zip(&input_core_dims) {
            let shape = arg.shape_or_empty();
            let loop_shape = &shape[..shape.len() - core.len()];
            let ones: Vec<i64> = (0..loop_shape.len() as i64)
                .filter(|&i| loop_shape[i as usize] == 1)
                .collect();
            squeezed.push(super::squeeze(arg, Some(&ones)));
            let mut filled = vec![1; broadcast_shape.len() - loop_shape.len()];
            filled.extend_from_slice(loop_shape);
            filled_shapes.push(filled);
        }
        let mut vectorized = checked;
        let mut dims_to_expand = Vec::new();
        for d in (0..broadcast_shape.len()).rev() {
            let in_axes: Vec<Option<i64>> = filled_shapes
                .iter()
                .map(|s| (s[d] != 1).then_some(0))
                .collect();
            if in_axes.iter().all(Option::is_none) {
                dims_to_expand.push(d as i64);
            } else {
                vectorized = vmapped(vectorized, in_axes);
            }
        }
        let mut leaves = vectorized(squeezed)?;
        dims_to_expand.sort_unstable();
        for leaf in &mut leaves {
            for &d in &dims_to_expand {
                *leaf = super::expand_dims(leaf, d);
            }
        }
        let def = out_def
            .borrow_mut()
            .take()
            .expect("the vectorized function ran, so its output structure is known");
        Out::Value::unflatten_from(&def, &mut leaves.into_iter())
    }
}

/// `f` vmapped over axis 0 of the inputs whose axis is `Some`.
fn vmapped<'f>(f: FlatFn<'f>, in_axes: Vec<Option<i64>>) -> FlatFn<'f> {
    Box::new(move |args: Vec<Array>| {
        crate::vmap::vmap(|args: Vec<Array>| f(args))
            .in_axes(&in_axes)
            .call(args)
    })
}

/// The broadcast of the inputs' loop shapes, and the size of each named
/// core dimension (which must agree across inputs).
fn loop_shape_and_core_sizes(
    args: &[&Array],
    input_core_dims: &CoreDims,
) -> std::result::Result<(Vec<i64>, HashMap<String, i64>), String> {
    let mut sizes = HashMap::new();
    let mut broadcast_shape = Vec::new();
    for (i, (arg, core)) in args.iter().zip(input_core_dims).enumerate() {
        let shape = arg.aval().map_err(|e| e.to_string())?.shape.to_vec();
        if shape.len() < core.len() {
            return Err(format!(
                "input {i} with shape {shape:?} does not have enough dimensions for all core \
                 dimensions {core:?}"
            ));
        }
        let (loop_shape, core_shape) = shape.split_at(shape.len() - core.len());
        record_core_sizes(&mut sizes, core, core_shape)?;
        broadcast_shape =
            super::broadcast_shapes(&broadcast_shape, loop_shape).ok_or_else(|| {
                format!(
                    "the loop dimensions {loop_shape:?} of input {i} do not broadcast with \
                 {broadcast_shape:?}"
                )
            })?;
    }
    Ok((broadcast_shape, sizes))
}

/// Records (or checks against what is recorded) the size of each core
/// dimension named in `core` as `core_shape` gives it.
fn record_core_sizes(
    sizes: &mut HashMap<String, i64>,
    core: &[String],
    core_shape: &[i64],
) -> std::result::Result<(), String> {
    for (name, &size) in core.iter().zip(core_shape) {
        match sizes.get(name) {
            Some(&known) if known != size => {
                return Err(format!(
                    "inconsistent size for core dimension {name:?}: {size} vs {known}"
                ));
            }
            Some(_) => {}
            None => {
                sizes.insert(name.clone(), size);
            }
        }
    }
    Ok(())
}

/// Checks each output's (per-element) shape against its core dimensions:
/// scalars without a signature.
fn check_outputs(
    outputs: &[Array],
    output_core_dims: Option<&[Vec<String>]>,
    input_sizes: &HashMap<String, i64>,
) -> std::result::Result<(), String> {
    let scalars = vec![Vec::new(); outputs.len()];
    let expected = output_core_dims.unwrap_or(&scalars);
    if expected.len() != outputs.len() {
        return Err(format!(
            "the function returned {} outputs, but the signature has {}",
            outputs.len(),
            expected.len()
        ));
    }
    let mut sizes = input_sizes.clone();
    for (i, (out, core)) in outputs.iter().zip(expected).enumerate() {
        let shape = out.aval().map_err(|e| e.to_string())?.shape.to_vec();
        if shape.len() != core.len() {
            return Err(format!(
                "output {i} has shape {shape:?}, which does not match its core dimensions {core:?}"
            ));
        }
        record_core_sizes(&mut sizes, core, &shape)?;
    }
    Ok(())
}

/// NumPy's gufunc signature `(m,n),(n)->(m),()`: the core dimension
/// names of each input and each output (`None` when it is not one).
fn parse_signature(signature: &str) -> Option<(CoreDims, CoreDims)> {
    let compact: String = signature.chars().filter(|c| !c.is_whitespace()).collect();
    let (inputs, outputs) = compact.split_once("->")?;
    Some((parse_argument_list(inputs)?, parse_argument_list(outputs)?))
}

/// `(m,n),(n)` as `[["m", "n"], ["n"]]` (at least one argument, as
/// NumPy's signatures have).
fn parse_argument_list(list: &str) -> Option<CoreDims> {
    let mut arguments = Vec::new();
    let mut rest = list;
    loop {
        let inner = rest.strip_prefix('(')?;
        let close = inner.find(')')?;
        let names = &inner[..close];
        let dims: Vec<String> = if names.is_empty() {
            Vec::new()
        } else {
            names.split(',').map(str::to_string).collect()
        };
        let is_name =
            |d: &String| !d.is_empty() && d.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !dims.iter().all(is_name) {
            return None;
        }
        arguments.push(dims);
        rest = &inner[close + 1..];
        if rest.is_empty() {
            return Some(arguments);
        }
        rest = rest.strip_prefix(',')?;
    }
}

#[cfg(test)]
mod tests {
    use super::parse_signature;

    #[test]
    fn signatures_parse_as_numpys() {
        let (inputs, outputs) = parse_signature("(m, n),(n)->(m),()").unwrap();
        let names = |dims: &[&[&str]]| -> Vec<Vec<String>> {
            dims.iter()
                .map(|d| d.iter().map(|n| n.to_string()).collect())
                .collect()
        };
        assert_eq!(inputs, names(&[&["m", "n"], &["n"]]));
        assert_eq!(outputs, names(&[&["m"], &[]]));
        assert_eq!(parse_signature("()->()").unwrap().0, names(&[&[]]));
        for bad in [
            "(n)",
            "(n)->",
            "->()",
            "(n->()",
            "(n,)->()",
            "(n)(m)->()",
            "(n-1)->()",
        ] {
            assert!(parse_signature(bad).is_none(), "{bad}");
        }
    }
}
