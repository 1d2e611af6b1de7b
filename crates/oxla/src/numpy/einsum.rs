//! `jnp.einsum` and `jnp.einsum_path`: any number of operands, letters
//! repeated within an operand (diagonals and traces), `...` for broadcast
//! batch dimensions, and implicit outputs, contracted pairwise in the order
//! of the cheapest path as JAX's `opt_einsum` path does.

use std::fmt;

use crate::array::Array;
use crate::error::Error;
use crate::lax;

use super::{broadcast_shapes, first_error, invalid_args, promote_args, zeros_like};

/// `jnp.einsum(subscripts, *operands)`: e.g. `"ij,jk->ik"`, `"bij,bjk->bik"`,
/// `"i,i->"`, `"ij->ji"`, `"ij,jk,kl->il"`, `"ii->"` (trace), `"ii->i"`
/// (diagonal), `"ij"` (implicit output: the letters seen once, sorted) and
/// `...` for broadcast batch dimensions (`"...ij,...j->...i"`). The
/// operands are promoted together; three or more are contracted two at a
/// time in the order [`einsum_path`] gives.
#[track_caller]
pub fn einsum(subscripts: &str, operands: &[&Array]) -> Array {
    if let Some(e) = first_error(operands) {
        return e;
    }
    match evaluate(subscripts, operands) {
        Ok(result) => result,
        Err(message) => invalid_args(&format!("einsum {subscripts:?}"), &message, operands),
    }
}

/// `jnp.einsum_path(subscripts, *operands)`: the order in which
/// [`einsum`] contracts its operands, without computing anything, and its
/// cost. Only the operands' shapes matter.
#[track_caller]
pub fn einsum_path(subscripts: &str, operands: &[&Array]) -> crate::error::Result<EinsumPath> {
    if let Some(e) = first_error(operands) {
        e.check()?;
    }
    let location = std::panic::Location::caller();
    let shapes: Vec<Vec<i64>> = operands
        .iter()
        .map(|x| x.shape_or_empty().to_vec())
        .collect();
    let fail = |message: String| {
        let location = oxla_core::Location::from_caller(location);
        Error::InvalidArgument(format!("{location}: einsum_path {subscripts:?}: {message}"))
    };
    let (spec, _) = Spec::parse(subscripts, &shapes).map_err(fail)?;
    Ok(spec.plan())
}

/// A contraction order and its cost, as `opt_einsum`'s `PathInfo` reports
/// them.
#[derive(Clone, Debug, PartialEq)]
pub struct EinsumPath {
    /// The operands contracted at each step, as positions in the list of
    /// operands left (each step's result goes at the end of that list),
    /// as `opt_einsum` writes paths: `[(1, 2), (0, 1)]`; one operand alone
    /// is `[(0,)]`.
    pub path: Vec<Vec<usize>>,
    /// The subscripts with `...` expanded and the output spelled out.
    pub contraction: String,
    /// The floating-point operations of one contraction of all operands
    /// at once.
    pub naive_flops: f64,
    /// The floating-point operations along `path`.
    pub optimized_flops: f64,
    /// The elements of the largest intermediate result.
    pub largest_intermediate: f64,
    /// Each step's subscripts (`"kl,jk->jl"`).
    pub steps: Vec<String>,
}

impl fmt::Display for EinsumPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "  Complete contraction:  {}", self.contraction)?;
        writeln!(f, "      Naive FLOP count:  {:.3e}", self.naive_flops)?;
        writeln!(f, "  Optimized FLOP count:  {:.3e}", self.optimized_flops)?;
        writeln!(
            f,
            "  Largest intermediate:  {:.3e} elements",
            self.largest_intermediate
        )?;
        for (pair, step) in self.path.iter().zip(&self.steps) {
            writeln!(f, "  {pair:?}  {step}")?;
        }
        Ok(())
    }
}

/// Parsed subscripts: each operand's letters (`...` expanded), the
/// output's, and each letter's size.
struct Spec {
    terms: Vec<Vec<char>>,
    output: Vec<char>,
    sizes: Vec<(char, i64)>,
}

impl Spec {
    /// Reads `subscripts` for operands of `shapes` (after `...` became
    /// letters: see `expand_ellipsis`), with the reshapes that expansion
    /// asks of the operands.
    fn parse(subscripts: &str, shapes: &[Vec<i64>]) -> Result<(Spec, Expanded), String> {
        let (terms, output) = split_subscripts(subscripts, shapes.len())?;
        let expanded = expand_ellipsis(terms, output, shapes)?;
        let spec = Spec::of_terms(
            expanded.terms.clone(),
            expanded.output.clone(),
            &expanded.shapes(shapes),
        )?;
        Ok((spec, expanded))
    }

    fn of_terms(
        terms: Vec<Vec<char>>,
        output: Option<String>,
        shapes: &[Vec<i64>],
    ) -> Result<Spec, String> {
        let mut sizes: Vec<(char, i64)> = Vec::new();
        for (t, shape) in terms.iter().zip(shapes) {
            if t.len() != shape.len() {
                return Err(format!(
                    "subscript {:?} for an operand of rank {}",
                    t.iter().collect::<String>(),
                    shape.len()
                ));
            }
            if let Some(c) = t.iter().find(|c| !c.is_ascii_alphabetic()) {
                return Err(format!("{c:?} is not a subscript letter"));
            }
        }
        // Sizes are compared after the output is checked.
        let mut mismatch = None;
        for (t, shape) in terms.iter().zip(shapes) {
            for (&c, &n) in t.iter().zip(shape) {
                match sizes.iter().find(|(l, _)| *l == c) {
                    Some(&(_, m)) if m != n => {
                        mismatch.get_or_insert(format!("letter {c} stands for sizes {m} and {n}"));
                    }
                    Some(_) => {}
                    None => sizes.push((c, n)),
                }
            }
        }
        let occurrences = |c: char| terms.iter().flatten().filter(|&&d| d == c).count();
        let output: Vec<char> = match output {
            Some(o) => o.chars().collect(),
            None => {
                let mut once: Vec<char> = sizes
                    .iter()
                    .map(|(c, _)| *c)
                    .filter(|&c| occurrences(c) == 1)
                    .collect();
                once.sort_unstable();
                once
            }
        };
        for (i, c) in output.iter().enumerate() {
            if !sizes.iter().any(|(l, _)| l == c) {
                return Err(format!("output letter {c} is not in the inputs"));
            }
            if output[..i].contains(c) {
                return Err(format!("output letter {c} appears twice"));
            }
        }
        if let Some(message) = mismatch {
            return Err(message);
        }
        Ok(Spec {
            terms,
            output,
            sizes,
        })
    }

    fn size(&self, c: char) -> f64 {
        self.sizes
            .iter()
            .find(|(l, _)| *l == c)
            .map_or(1.0, |(_, n)| *n as f64)
    }

    /// Elements of an array indexed by `letters`.
    fn volume(&self, letters: &[char]) -> f64 {
        letters.iter().map(|&c| self.size(c)).product()
    }

    /// `opt_einsum`'s flop count of contracting terms whose letters
    /// together are `letters` (`terms` of them), some summed (`inner`).
    fn flops(&self, letters: &[char], terms: usize, inner: bool) -> f64 {
        self.volume(letters) * ((terms.max(2) - 1) as f64 + f64::from(u8::from(inner)))
    }

    /// The cheapest path: every order for up to six operands (what
    /// `opt_einsum`'s `optimal` searches, which JAX's `auto` uses for up to
    /// four operands, in the same order, so ties resolve alike; its
    /// `branch_all` for five and six finds the same cost), and beyond that
    /// the cheapest next pair by flops at each step (where JAX's `branch`
    /// and `greedy` heuristics may choose another order).
    fn plan(&self) -> EinsumPath {
        let terms = self.unique_terms();
        let all: Vec<char> = unique(&terms.concat());
        // As `opt_einsum` counts it: an inner product when a letter is in
        // more than one operand.
        let shared = terms.iter().map(Vec::len).sum::<usize>() > all.len();
        let naive_flops = self.flops(&all, terms.len(), shared);
        let path = self.path();
        let (mut optimized_flops, mut largest, mut steps) = (0.0, 0.0f64, Vec::new());
        let mut left = terms;
        for (n, pair) in path.iter().enumerate() {
            let (taken, mut result, cost) = self.step(&left, pair);
            if n + 1 == path.len() {
                result.clone_from(&self.output);
            }
            optimized_flops += cost;
            largest = largest.max(self.volume(&result));
            steps.push(format!(
                "{}->{}",
                taken
                    .iter()
                    .map(|t| t.iter().collect::<String>())
                    .collect::<Vec<_>>()
                    .join(","),
                result.iter().collect::<String>()
            ));
            left = remove_positions(left, pair);
            left.push(result);
        }
        let contraction = format!(
            "{}->{}",
            self.terms
                .iter()
                .map(|t| t.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join(","),
            self.output.iter().collect::<String>()
        );
        EinsumPath {
            path,
            contraction,
            naive_flops,
            optimized_flops,
            largest_intermediate: largest,
            steps,
        }
    }

    /// Each term's letters once (a repeated letter is a diagonal).
    fn unique_terms(&self) -> Vec<Vec<char>> {
        self.terms.iter().map(|t| unique(t)).collect()
    }

    /// The order of `plan`, without its costs.
    fn path(&self) -> Vec<Vec<usize>> {
        let terms = self.unique_terms();
        if terms.len() == 1 {
            vec![vec![0]]
        } else if terms.len() <= 6 {
            let mut best = (f64::INFINITY, Vec::new());
            self.search(terms, 0.0, &mut Vec::new(), &mut best);
            best.1
        } else {
            self.greedy(terms)
        }
    }

    /// Contracting `left[pair]`: the terms taken, the result's letters
    /// (those the output or another term still needs) and the flops.
    fn step(&self, left: &[Vec<char>], pair: &[usize]) -> (Vec<Vec<char>>, Vec<char>, f64) {
        let taken: Vec<Vec<char>> = pair.iter().map(|&i| left[i].clone()).collect();
        let others: Vec<char> = left
            .iter()
            .enumerate()
            .filter(|(i, _)| !pair.contains(i))
            .flat_map(|(_, t)| t.iter().copied())
            .collect();
        let letters = unique(&taken.concat());
        let result: Vec<char> = letters
            .iter()
            .copied()
            .filter(|c| self.output.contains(c) || others.contains(c))
            .collect();
        let inner = result.len() < letters.len();
        let cost = self.flops(&letters, taken.len(), inner);
        (taken, result, cost)
    }

    /// Depth-first search over every order of pairwise contractions.
    fn search(
        &self,
        left: Vec<Vec<char>>,
        cost: f64,
        path: &mut Vec<Vec<usize>>,
        best: &mut (f64, Vec<Vec<usize>>),
    ) {
        if cost >= best.0 {
            return;
        }
        if left.len() == 1 {
            *best = (cost, path.clone());
            return;
        }
        for i in 0..left.len() {
            for j in i + 1..left.len() {
                let pair = vec![i, j];
                let (_, result, step_cost) = self.step(&left, &pair);
                let mut next = remove_positions(left.clone(), &pair);
                next.push(result);
                path.push(pair);
                self.search(next, cost + step_cost, path, best);
                path.pop();
            }
        }
    }

    /// The cheapest pair at each step.
    fn greedy(&self, mut left: Vec<Vec<char>>) -> Vec<Vec<usize>> {
        let mut path = Vec::new();
        while left.len() > 1 {
            let mut best: Option<(f64, Vec<usize>, Vec<char>)> = None;
            for i in 0..left.len() {
                for j in i + 1..left.len() {
                    let pair = vec![i, j];
                    let (_, result, cost) = self.step(&left, &pair);
                    if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                        best = Some((cost, pair, result));
                    }
                }
            }
            let (_, pair, result) = best.expect("two terms or more");
            left = remove_positions(left, &pair);
            left.push(result);
            path.push(pair);
        }
        path
    }
}

/// `letters` without repeats, in order of first appearance.
fn unique(letters: &[char]) -> Vec<char> {
    let mut seen = Vec::with_capacity(letters.len());
    for &c in letters {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen
}

/// `items` without the positions in `pair`.
fn remove_positions<T>(items: Vec<T>, pair: &[usize]) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !pair.contains(i))
        .map(|(_, t)| t)
        .collect()
}

/// The subscripts' terms and explicit output (`None` when implicit),
/// checked against the number of operands.
fn split_subscripts(
    subscripts: &str,
    operands: usize,
) -> Result<(Vec<Vec<char>>, Option<String>), String> {
    let spec: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    let (inputs, output) = match spec.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (spec.clone(), None),
    };
    let terms: Vec<Vec<char>> = inputs.split(',').map(|t| t.chars().collect()).collect();
    if terms.len() != operands || operands == 0 {
        return Err(format!(
            "{} subscripts for {operands} operands",
            terms.len()
        ));
    }
    Ok((terms, output))
}

/// The einsum of `operands` (errors as messages for `einsum`'s error).
#[track_caller]
fn evaluate(subscripts: &str, operands: &[&Array]) -> Result<Array, String> {
    let shapes: Vec<Vec<i64>> = operands
        .iter()
        .map(|x| x.shape_or_empty().to_vec())
        .collect();
    let (spec, expanded) = Spec::parse(subscripts, &shapes)?;
    let operands = expanded.operands(operands);
    let refs: Vec<&Array> = operands.iter().collect();
    let promoted = promote_args(&refs);
    let needed = |skip: usize| -> Vec<char> {
        spec.terms
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .flat_map(|(_, t)| t.iter().copied())
            .chain(spec.output.iter().copied())
            .collect()
    };
    // Each operand on its own: diagonals of repeated letters, then sums
    // over letters no other operand or the output has.
    let mut left: Vec<(Array, Vec<char>)> = promoted
        .iter()
        .zip(&spec.terms)
        .enumerate()
        .map(|(i, (x, t))| {
            let keep = needed(i);
            let (x, t) = diagonals(x, t, &keep);
            sum_unneeded(&x, &t, &keep)
        })
        .collect();
    if left.len() > 1 {
        for pair in &spec.path() {
            let others: Vec<char> = left
                .iter()
                .enumerate()
                .filter(|(i, _)| !pair.contains(i))
                .flat_map(|(_, (_, t))| t.iter().copied())
                .chain(spec.output.iter().copied())
                .collect();
            let (a, ta) = &left[pair[0]];
            let (b, tb) = &left[pair[1]];
            let result = contract_pair(a, ta, b, tb, &others);
            left = remove_positions(left, pair);
            left.push(result);
        }
    }
    let (result, letters) = left.pop().expect("one operand left");
    let (result, letters) = sum_unneeded(&result, &letters, &spec.output);
    let perm: Vec<i64> = spec
        .output
        .iter()
        .map(|c| {
            letters
                .iter()
                .position(|l| l == c)
                .expect("an output letter") as i64
        })
        .collect();
    if perm.iter().enumerate().all(|(i, &p)| i as i64 == p) {
        Ok(result)
    } else {
        Ok(lax::transpose(&result, &perm))
    }
}

/// `x` (indexed by `letters`) with each repeated letter reduced to one
/// axis, its diagonal, or summed away when `keep` lacks it (JAX's
/// `sum_repeats`: off-diagonal elements zeroed, then a sum).
#[track_caller]
fn diagonals(x: &Array, letters: &[char], keep: &[char]) -> (Array, Vec<char>) {
    let (mut x, mut letters) = (x.clone(), letters.to_vec());
    for c in unique(&letters) {
        let axes: Vec<usize> = (0..letters.len()).filter(|&i| letters[i] == c).collect();
        if axes.len() < 2 {
            continue;
        }
        let shape = x.shape_or_empty().to_vec();
        let index = |axis: usize| lax::broadcasted_iota(oxla_core::DType::I32, &shape, axis);
        let first = index(axes[0]);
        let on_diagonal = axes[1..]
            .iter()
            .map(|&a| lax::eq(&first, &index(a)))
            .reduce(|m, n| lax::and(&m, &n))
            .expect("a repeated letter");
        x = lax::select(&on_diagonal, &x, &zeros_like(&x));
        let summed: &[usize] = if keep.contains(&c) { &axes[1..] } else { &axes };
        let summed_i64: Vec<i64> = summed.iter().map(|&a| a as i64).collect();
        x = lax::reduce_sum(&x, &summed_i64);
        letters = letters
            .iter()
            .enumerate()
            .filter(|(i, _)| !summed.contains(i))
            .map(|(_, l)| *l)
            .collect();
    }
    (x, letters)
}

/// `x` summed over the letters `keep` lacks.
#[track_caller]
fn sum_unneeded(x: &Array, letters: &[char], keep: &[char]) -> (Array, Vec<char>) {
    let axes: Vec<i64> = (0..letters.len())
        .filter(|&i| !keep.contains(&letters[i]))
        .map(|i| i as i64)
        .collect();
    if axes.is_empty() {
        return (x.clone(), letters.to_vec());
    }
    let kept = letters
        .iter()
        .copied()
        .filter(|c| keep.contains(c))
        .collect();
    (lax::reduce_sum(x, &axes), kept)
}

/// The product of `a` and `b` (indexed by `ta`, `tb`, each letter once)
/// summed over the letters `keep` lacks: shared letters kept are batch
/// dimensions, shared letters not kept are contracted. Its letters are the
/// batch letters, then `a`'s own, then `b`'s.
#[track_caller]
fn contract_pair(
    a: &Array,
    ta: &[char],
    b: &Array,
    tb: &[char],
    keep: &[char],
) -> (Array, Vec<char>) {
    let (a, ta) = sum_unneeded(a, ta, &[keep, tb].concat());
    let (b, tb) = sum_unneeded(b, tb, &[keep, &ta].concat());
    let pos = |t: &[char], c: char| {
        t.iter()
            .position(|&x| x == c)
            .expect("a letter of the term") as i64
    };
    let shared: Vec<char> = ta.iter().copied().filter(|c| tb.contains(c)).collect();
    let (batch, contract): (Vec<char>, Vec<char>) = shared.iter().partition(|c| keep.contains(c));
    let lb: Vec<i64> = batch.iter().map(|&c| pos(&ta, c)).collect();
    let rb: Vec<i64> = batch.iter().map(|&c| pos(&tb, c)).collect();
    let lc: Vec<i64> = contract.iter().map(|&c| pos(&ta, c)).collect();
    let rc: Vec<i64> = contract.iter().map(|&c| pos(&tb, c)).collect();
    let product = lax::dot_general(&a, &b, ((&lc, &rc), (&lb, &rb)), Some(a.dtype_or_bool()));
    let mut letters = batch.clone();
    letters.extend(ta.iter().filter(|c| !shared.contains(c)));
    letters.extend(tb.iter().filter(|c| !shared.contains(c)));
    (product, letters)
}

/// Subscripts with `...` replaced by fresh letters, and how each operand
/// is reshaped to match (see `expand_ellipsis`).
struct Expanded {
    terms: Vec<Vec<char>>,
    output: Option<String>,
    /// Per operand: `None` if it stays as it is, else the shape it is
    /// reshaped to (without the size-1 `...` dims it broadcasts).
    reshapes: Vec<Option<Vec<i64>>>,
}

impl Expanded {
    /// The operands' shapes after the reshapes.
    fn shapes(&self, shapes: &[Vec<i64>]) -> Vec<Vec<i64>> {
        shapes
            .iter()
            .zip(&self.reshapes)
            .map(|(s, r)| r.clone().unwrap_or_else(|| s.clone()))
            .collect()
    }

    /// The operands after the reshapes.
    #[track_caller]
    fn operands(&self, operands: &[&Array]) -> Vec<Array> {
        operands
            .iter()
            .zip(&self.reshapes)
            .map(|(x, r)| match r {
                None => (*x).clone(),
                Some(shape) => lax::reshape(x, shape),
            })
            .collect()
    }
}

/// `...` in einsum terms (NumPy's broadcast batch dimensions) as fresh
/// letters: the `...` dimensions of all operands broadcast (right-aligned)
/// to a common shape, each of its dimensions one letter; an operand takes
/// the letters of the dimensions it has, and drops a size-1 dimension the
/// common shape broadcasts (an einsum of an operand constant along a
/// letter is the einsum without it there), so nothing is materialised
/// broadcast. An implicit output puts them first. Terms without `...` are
/// unchanged.
fn expand_ellipsis(
    terms: Vec<Vec<char>>,
    output: Option<String>,
    shapes: &[Vec<i64>],
) -> Result<Expanded, String> {
    let split = |t: &[char]| -> Option<(String, String)> {
        let text: String = t.iter().collect();
        text.split_once("...")
            .map(|(a, b)| (a.to_string(), b.to_string()))
    };
    if terms.iter().all(|t| split(t).is_none()) {
        if output.as_deref().is_some_and(|o| o.contains("...")) {
            return Err("the output has ... but no input does".into());
        }
        let reshapes = vec![None; terms.len()];
        return Ok(Expanded {
            terms,
            output,
            reshapes,
        });
    }
    // The shape each operand's `...` stands for.
    let mut common: Vec<i64> = Vec::new();
    let mut parts = Vec::with_capacity(terms.len());
    for (t, shape) in terms.iter().zip(shapes) {
        match split(t) {
            Some((before, after)) => {
                let named = before.len() + after.len();
                if shape.len() < named || after.contains("...") {
                    return Err(format!(
                        "subscript {:?} for an operand of rank {}",
                        t.iter().collect::<String>(),
                        shape.len()
                    ));
                }
                let dims = &shape[before.len()..shape.len() - after.len()];
                common = broadcast_shapes(&common, dims).ok_or_else(|| {
                    format!("the ... dimensions {dims:?} do not broadcast with {common:?}")
                })?;
                parts.push(Some((before, after)));
            }
            None => parts.push(None),
        }
    }
    let used: String = terms
        .iter()
        .flatten()
        .copied()
        .chain(output.iter().flat_map(|o| o.chars()))
        .collect();
    let fresh: Vec<char> = ('A'..='Z')
        .chain('a'..='z')
        .filter(|c| !used.contains(*c))
        .take(common.len())
        .collect();
    if fresh.len() < common.len() {
        return Err("too many ... dimensions for the letters left".into());
    }
    let mut new_terms = Vec::with_capacity(terms.len());
    let mut reshapes = Vec::with_capacity(terms.len());
    for ((t, shape), part) in terms.iter().zip(shapes).zip(parts) {
        match part {
            None => {
                new_terms.push(t.clone());
                reshapes.push(None);
            }
            Some((before, after)) => {
                let own = shape.len() - before.len() - after.len();
                let offset = common.len() - own;
                let mut letters: Vec<char> = before.chars().collect();
                let mut kept = shape[..before.len()].to_vec();
                for k in 0..own {
                    let n = shape[before.len() + k];
                    if n == common[offset + k] {
                        letters.push(fresh[offset + k]);
                        kept.push(n);
                    }
                }
                letters.extend(after.chars());
                kept.extend_from_slice(&shape[shape.len() - after.len()..]);
                reshapes.push((kept.len() != shape.len()).then_some(kept));
                new_terms.push(letters);
            }
        }
    }
    let output = match output {
        Some(o) => Some(o.replace("...", &fresh.iter().collect::<String>())),
        None => {
            let mut once: Vec<char> = new_terms
                .concat()
                .into_iter()
                .filter(|c| {
                    !fresh.contains(c)
                        && new_terms.iter().flatten().filter(|d| *d == c).count() == 1
                })
                .collect();
            once.sort();
            Some(fresh.iter().copied().chain(once).collect())
        }
    };
    Ok(Expanded {
        terms: new_terms,
        output,
        reshapes,
    })
}
