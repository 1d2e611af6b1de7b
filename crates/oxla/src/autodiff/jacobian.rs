//! Jacobians of functions of pytrees, as `jax.jacfwd`, `jax.jacrev` and
//! `jax.hessian` with `argnums` and `has_aux`: one block per (output leaf,
//! input leaf) pair, of shape `output.shape ++ input.shape`.

use oxla_core::{Aval, Location};

use super::{GradOptions, caller, differentiated, jvp, linearize_with_aux, standard_basis};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::with_rule_location;
use crate::pytree::{Pytree, TreeDef};
use crate::transform::support::{Tangent, instantiate};

/// A Jacobian: for output leaf `i` (in flattening order), `rows[i]` is a
/// tree like the input whose leaf `j` is ∂ output_i / ∂ input_j, of shape
/// `output_i.shape ++ input_j.shape` (zeros for inputs `argnums` leaves
/// out). For a hessian the "outputs" are the gradient's leaves, so
/// `rows[i]` holds ∂² f / ∂ input_i ∂ input_j.
#[derive(Debug)]
pub struct Jacobian<In> {
    /// One input-shaped tree of blocks per output leaf.
    pub rows: Vec<In>,
    /// The outputs' structure.
    pub out_tree: TreeDef,
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    Forward,
    Reverse,
}

/// A Jacobian to compute; see [`jacfwd`], [`jacrev`] and [`hessian`].
pub struct JacobianOf<F> {
    f: F,
    mode: Mode,
    options: GradOptions,
}

/// The Jacobian of `f` (a pytree to a pytree) by forward mode, one jvp per
/// input element batched with vmap, as `jax.jacfwd`.
///
/// ```
/// use oxla::{Array, jacobian, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let (w, b) = (Array::from_slice(&[1.0f32, 2.0], &[2])?, Array::scalar(0.5f32)?);
/// // f(w, b) = (w * b, sum(w)): four blocks.
/// let j = jacobian::jacfwd(|(w, b): (Array, Array)| (&w * &b, jnp::sum(&w, None, false)))
///     .call((w, b))?;
/// let (dwb_dw, dwb_db) = &j.rows[0];
/// assert_eq!(dwb_dw.to_vec::<f32>()?, vec![0.5, 0.0, 0.0, 0.5]);    // b I
/// assert_eq!(dwb_db.to_vec::<f32>()?, vec![1.0, 2.0]);              // w
/// assert_eq!(j.rows[1].0.to_vec::<f32>()?, vec![1.0, 1.0]);
/// # Ok(())
/// # }
/// ```
pub fn jacfwd<F>(f: F) -> JacobianOf<F> {
    JacobianOf {
        f,
        mode: Mode::Forward,
        options: GradOptions::default(),
    }
}

/// The Jacobian of `f` (a pytree to a pytree) by reverse mode, one vjp per
/// output element batched with vmap, as `jax.jacrev`.
pub fn jacrev<F>(f: F) -> JacobianOf<F> {
    JacobianOf {
        f,
        mode: Mode::Reverse,
        options: GradOptions::default(),
    }
}

impl<F> JacobianOf<F> {
    /// Differentiates only these elements of a tuple input (JAX's
    /// `argnums`); the blocks of the others are zeros.
    pub fn argnums(mut self, argnums: &[usize]) -> Self {
        self.options.argnums = Some(argnums.to_vec());
        self
    }

    /// The Jacobian of a holomorphic function of complex inputs to complex
    /// outputs (JAX's `holomorphic=True`): the blocks are f'(z).
    pub fn holomorphic(mut self) -> Self {
        self.options.holomorphic = true;
        self
    }

    /// The Jacobian at `args`.
    #[track_caller]
    pub fn call<In: Pytree, Out: Pytree, R: Pytree<Value = Out>>(
        &self,
        args: In,
    ) -> Result<Jacobian<In>>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let f = |x: In| -> Result<(Out, ())> { Ok(((self.f)(x).into_value()?, ())) };
        Ok(jacobian(f, self.mode, &args, &self.options, location)?.0)
    }

    /// The Jacobian at `args` of `f` returning `(outputs, aux)`, and the
    /// aux (JAX's `has_aux=True`), which is not differentiated.
    #[track_caller]
    pub fn call_with_aux<In: Pytree, Out: Pytree, Aux: Pytree, R: Pytree<Value = (Out, Aux)>>(
        &self,
        args: In,
    ) -> Result<(Jacobian<In>, Aux)>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        jacobian(
            |x: In| (self.f)(x).into_value(),
            self.mode,
            &args,
            &self.options,
            location,
        )
    }
}

/// The Hessian of a scalar function of a pytree, as `jax.hessian` (forward
/// over reverse): `rows[i]` holds ∂² f / ∂ input_i ∂ input_j, of shape
/// `input_i.shape ++ input_j.shape`.
///
/// ```
/// use oxla::{Array, jacobian, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let (x, y) = (Array::scalar(2.0f32)?, Array::scalar(3.0f32)?);
/// // f = x² y: [[2y, 2x], [2x, 0]].
/// let h = jacobian::hessian(|(x, y): (Array, Array)| &x * &x * &y).call((x, y))?;
/// assert_eq!(h.rows[0].0.item::<f32>()?, 6.0);
/// assert_eq!(h.rows[0].1.item::<f32>()?, 4.0);
/// assert_eq!(h.rows[1].1.item::<f32>()?, 0.0);
/// # Ok(())
/// # }
/// ```
pub fn hessian<F>(f: F) -> Hessian<F> {
    Hessian {
        f,
        options: GradOptions::default(),
    }
}

/// A Hessian to compute; see [`hessian`].
pub struct Hessian<F> {
    f: F,
    options: GradOptions,
}

impl<F> Hessian<F> {
    /// Differentiates only these elements of a tuple input (JAX's
    /// `argnums`), in both derivatives.
    pub fn argnums(mut self, argnums: &[usize]) -> Self {
        self.options.argnums = Some(argnums.to_vec());
        self
    }

    /// The Hessian at `args`.
    #[track_caller]
    pub fn call<In: Pytree, R: Pytree<Value = Array>>(&self, args: In) -> Result<Jacobian<In>>
    where
        F: Fn(In) -> R,
    {
        let location = caller();
        let gradient = |x: In| -> Result<(In, ())> {
            let (_, (), g) = super::value_and_grad_flat(
                |x| Ok(((self.f)(x).into_value()?, ())),
                &x,
                &self.options,
                location,
            )?;
            Ok((g, ()))
        };
        Ok(jacobian(gradient, Mode::Forward, &args, &self.options, location)?.0)
    }
}

/// The blocks of `f` at `args`, and its aux.
fn jacobian<In: Pytree, Out: Pytree, Aux: Pytree>(
    f: impl Fn(In) -> Result<(Out, Aux)>,
    mode: Mode,
    args: &In,
    options: &GradOptions,
    location: Location,
) -> Result<(Jacobian<In>, Aux)> {
    let (leaves, in_tree) = args.flatten();
    let selected = differentiated(&in_tree, &leaves, options, location)?;
    let in_avals = crate::jit::abstract_leaves(&leaves)?;
    let usage = |message: String| Error::Usage {
        function: match mode {
            Mode::Forward => "jacfwd",
            Mode::Reverse => "jacrev",
        },
        message,
        location,
    };
    if let (Mode::Forward, false) = (mode, options.holomorphic)
        && let Some((i, a)) = in_avals
            .iter()
            .enumerate()
            .find(|(i, a)| selected[*i] && a.dtype.is_complex())
    {
        return Err(usage(format!(
            "jacfwd requires real-valued inputs (a floating-point dtype), but input {i} is {a}. \
             For holomorphic differentiation, use holomorphic(); for non-holomorphic functions \
             of complex inputs, use jvp"
        )));
    }
    let (blocks, out_avals, out_tree, aux) = match mode {
        Mode::Reverse => reverse_blocks(&f, &leaves, &in_tree, &selected, location)?,
        Mode::Forward => forward_blocks(&f, &leaves, &in_tree, &selected, location)?,
    };
    for (i, out) in out_avals.iter().enumerate() {
        match (options.holomorphic, out.dtype.is_complex(), mode) {
            (true, false, _) => {
                return Err(usage(format!(
                    "holomorphic() requires complex outputs, but output {i} is {out}"
                )));
            }
            (false, true, Mode::Reverse) => {
                return Err(usage(format!(
                    "jacrev requires real-valued outputs (a floating-point dtype), but output \
                     {i} is {out}. For holomorphic differentiation, use holomorphic(); for \
                     non-holomorphic functions with complex outputs, use vjp"
                )));
            }
            (true, true, _) | (false, false, _) | (false, true, Mode::Forward) => {}
        }
    }
    // blocks[i][j]: output i by input j, with the output's dims first.
    let rows = blocks
        .into_iter()
        .zip(&out_avals)
        .map(|(row, out)| {
            let row: Vec<Array> = row
                .into_iter()
                .zip(&in_avals)
                .map(|(block, input)| {
                    let mut shape = out.shape.to_vec();
                    shape.extend_from_slice(&input.shape);
                    match block {
                        Some(b) => crate::lax::reshape(&b, &shape),
                        None => crate::transform::support::full(&input.with_shape(&shape), 0.0),
                    }
                })
                .collect();
            In::unflatten_from(&in_tree, &mut row.into_iter())
        })
        .collect::<Result<Vec<In>>>()?;
    Ok((Jacobian { rows, out_tree }, aux))
}

/// Per output and input leaf, the block (`None`: zeros), the outputs'
/// types and structure, and the aux.
type Blocks<Aux> = (Vec<Vec<Option<Array>>>, Vec<Aval>, TreeDef, Aux);

/// One vjp per output element: for output `i`, the cotangents of its
/// standard basis pulled back, batched with vmap.
fn reverse_blocks<In: Pytree, Out: Pytree, Aux: Pytree>(
    f: &impl Fn(In) -> Result<(Out, Aux)>,
    leaves: &[Array],
    in_tree: &TreeDef,
    selected: &[bool],
    location: Location,
) -> Result<Blocks<Aux>> {
    let with_aux = linearize_with_aux(f, in_tree, leaves, selected, location)?;
    let linear = &with_aux.linear;
    let n_out = linear.out_avals.len() - with_aux.n_aux;
    let out_avals = linear.out_avals[..n_out].to_vec();
    let mut blocks = Vec::with_capacity(n_out);
    for (i, out) in out_avals.iter().enumerate() {
        let basis = standard_basis(out)?;
        let pulled = crate::vmap::vmap(|ct: Array| -> Result<Vec<Array>> {
            let mut cts: Vec<Tangent> = vec![None; linear.out_avals.len()];
            cts[i] = Some(ct);
            let in_cts = with_rule_location(location, || linear.transpose(&cts))?;
            Ok(in_cts
                .iter()
                .zip(&linear.in_avals)
                .map(|(c, a)| instantiate(c, a))
                .collect())
        })
        .call_with_location(basis, location)?;
        blocks.push(
            pulled
                .into_iter()
                .zip(selected)
                .map(|(b, s)| s.then_some(b))
                .collect(),
        );
    }
    Ok((blocks, out_avals, with_aux.out_tree, with_aux.aux))
}

/// One jvp per input element: for input `j`, its standard basis pushed
/// forward, batched with vmap, then the basis axis moved last.
fn forward_blocks<In: Pytree, Out: Pytree, Aux: Pytree>(
    f: &impl Fn(In) -> Result<(Out, Aux)>,
    leaves: &[Array],
    in_tree: &TreeDef,
    selected: &[bool],
    location: Location,
) -> Result<Blocks<Aux>> {
    let (out, aux) = f(In::unflatten_from(in_tree, &mut leaves.iter().cloned())?)?;
    let (outs, out_tree) = out.flatten();
    let out_avals = outs
        .iter()
        .map(|y| y.aval().cloned())
        .collect::<Result<Vec<Aval>>>()?;
    let flat = |xs: Vec<Array>| -> Result<Vec<Array>> {
        let (out, _) = f(In::unflatten_from(in_tree, &mut xs.into_iter())?)?;
        Ok(out.flatten().0)
    };
    let mut blocks = vec![vec![None; leaves.len()]; out_avals.len()];
    for (j, input) in leaves.iter().enumerate() {
        if !selected[j] {
            continue;
        }
        let basis = standard_basis(input.aval()?)?;
        let pushed = crate::vmap::vmap(|t: Array| -> Result<Vec<Array>> {
            let tangents: Vec<Array> = leaves
                .iter()
                .enumerate()
                .map(|(k, x)| {
                    if k == j {
                        t.clone()
                    } else {
                        crate::numpy::zeros_like(x)
                    }
                })
                .collect();
            let (_, out_tangents) = jvp(flat, &leaves.to_vec(), &tangents)?;
            out_tangents
        })
        .call_with_location(basis, location)?;
        for (i, columns) in pushed.into_iter().enumerate() {
            // [n_j, *out_i] → [*out_i, n_j]
            let rank = out_avals[i].shape.len() as i64;
            let mut perm: Vec<i64> = (1..=rank).collect();
            perm.push(0);
            blocks[i][j] = Some(crate::lax::transpose(&columns, &perm));
        }
    }
    Ok((blocks, out_avals, out_tree, aux))
}
