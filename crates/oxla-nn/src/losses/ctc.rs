//! Connectionist temporal classification (`optax.ctc_loss`): the forward
//! algorithm in log space as one `lax::scan` over time, differentiable
//! through the scan.

use oxla::numpy::{self as jnp, PadMode};
use oxla::{Array, DType, lax};

use super::input_error;
use crate::log_softmax;

/// `phi` with `added` added, in log space, to every column but the first.
fn update_phi_score(phi: &Array, added: &Array) -> Array {
    let first = lax::slice_in_dim(phi, 0, Some(1), 1, 1);
    let rest = lax::slice_in_dim(phi, 1, None, 1, 1);
    jnp::concatenate(&[&first, &jnp::logaddexp(&rest, added)], -1)
}

/// The shapes `[batch, time, classes]`, `[batch, labels]` if the inputs are
/// what Optax asserts (and `blank_id` a class), else the error array.
#[track_caller]
fn ctc_shapes(
    logits: &Array,
    logit_paddings: &Array,
    labels: &Array,
    label_paddings: &Array,
    blank_id: i64,
) -> Result<([i64; 3], [i64; 2]), Array> {
    let inputs = [
        ("logits", logits),
        ("logit_paddings", logit_paddings),
        ("labels", labels),
        ("label_paddings", label_paddings),
    ];
    let mut shapes = Vec::with_capacity(4);
    for (_, x) in &inputs {
        shapes.push(x.aval().map_err(|e| Array::error(e.clone()))?.shape.clone());
    }
    let fail = |expected: &str| Err(input_error("ctc_loss", &inputs, expected));
    let (lg, lgp, lb, lbp) = (&shapes[0], &shapes[1], &shapes[2], &shapes[3]);
    if lg.len() != 3 || lb.len() != 2 {
        return fail("logits must be [batch, time, classes] and labels [batch, labels]");
    }
    if lg[0] != lb[0] {
        return fail("logits and labels must have the same batch size");
    }
    if lbp != lb || lgp.as_slice() != &lg[..2] {
        return fail(
            "label_paddings must have the labels' shape and logit_paddings the logits' \
             [batch, time]",
        );
    }
    if lg[1] == 0 {
        return fail("the logits need at least one time step");
    }
    if !(0..lg[2]).contains(&blank_id) {
        return fail(&format!(
            "blank_id {blank_id} is not one of the {} classes",
            lg[2]
        ));
    }
    Ok(([lg[0], lg[1], lg[2]], [lb[0], lb[1]]))
}

/// [`ctc_loss`] with the forward variables: the per-sequence loss `[batch]`,
/// the log-probabilities of the blank states `[time, batch, labels + 1]`
/// and of the label states `[time, batch, labels]`
/// (`optax.ctc_loss_with_forward_probs`, whose default `log_epsilon`, the
/// log-probability of an impossible transition, is -1e5). Paddings are 1.0
/// at padded positions, 0.0 elsewhere; labels are class ids.
#[track_caller]
pub fn ctc_loss_with_forward_probs(
    logits: &Array,
    logit_paddings: &Array,
    labels: &Array,
    label_paddings: &Array,
    blank_id: i64,
    log_epsilon: f64,
) -> (Array, Array, Array) {
    let ([batch, time, classes], [_, max_label_len]) =
        match ctc_shapes(logits, logit_paddings, labels, label_paddings, blank_id) {
            Ok(shapes) => shapes,
            Err(e) => return (e.clone(), e.clone(), e),
        };
    let logprobs = log_softmax(logits, None);
    let label_lens = -jnp::astype(&jnp::sum(label_paddings, Some(&[1]), false), DType::I32)
        + Array::weak_scalar(max_label_len as i32);

    // repeat[b, n] is 1 when labels[b, n] == labels[b, n + 1].
    let repeat = jnp::equal(
        &lax::slice_in_dim(labels, 0, Some(max_label_len - 1), 1, 1),
        &lax::slice_in_dim(labels, 1, None, 1, 1),
    );
    let repeat = jnp::pad(
        &jnp::astype(&repeat, DType::F32),
        &[(0, 0), (0, 1)],
        PadMode::Constant(0.0),
    );

    let logprobs_phi = lax::slice_in_dim(&logprobs, blank_id, Some(blank_id + 1), 1, 2);
    let logprobs_phi = jnp::transpose(&logprobs_phi, Some(&[1, 0, 2])); // [T, B, 1]
    let one_hot = jnp::one_hot(labels, classes, DType::F32); // [B, N, K]
    let logprobs_emit = jnp::einsum("btk,bnk->btn", &[&logprobs, &one_hot]);
    let logprobs_emit = jnp::transpose(&logprobs_emit, Some(&[1, 0, 2])); // [T, B, N]

    let phi_init = jnp::concatenate(
        &[
            &jnp::zeros(&[batch, 1], DType::F32),
            &jnp::full(&[batch, max_label_len], log_epsilon, DType::F32),
        ],
        1,
    );
    let emit_init = jnp::full(&[batch, max_label_len], log_epsilon, DType::F32);

    let body = |(prev_phi, prev_emit): (Array, Array),
                (logprob_emit, logprob_phi, pad): (Array, Array, Array)| {
        // emit-to-phi epsilon transition, except if the next label repeats
        let prev_phi_orig = prev_phi.clone();
        let prev_phi = update_phi_score(&prev_phi, &(&prev_emit + &(&repeat * log_epsilon)));
        // phi-to-emit transition
        let phi_head = lax::slice_in_dim(&prev_phi, 0, Some(max_label_len), 1, 1);
        let next_emit = jnp::logaddexp(&(&phi_head + &logprob_emit), &(&prev_emit + &logprob_emit));
        // self-loop transition
        let next_phi = &prev_phi + &logprob_phi;
        // emit-to-phi blank transition only when the next label repeats
        let not_repeat = (-&repeat + 1.0) * log_epsilon;
        let next_phi = update_phi_score(&next_phi, &(&(&prev_emit + &logprob_phi) + &not_repeat));
        let pad = jnp::reshape(&pad, &[batch, 1]);
        let keep = -&pad + 1.0;
        let next_emit = &pad * &prev_emit + &keep * &next_emit;
        let next_phi = &pad * &prev_phi_orig + &keep * &next_phi;
        ((next_phi.clone(), next_emit.clone()), (next_phi, next_emit))
    };
    let xs = (
        logprobs_emit,
        logprobs_phi,
        jnp::transpose(logit_paddings, Some(&[1, 0])),
    );
    let (logalpha_phi, logalpha_emit) =
        match lax::scan(body, (phi_init, emit_init), xs, lax::ScanOptions::default()) {
            Ok((_, ys)) => ys,
            Err(e) => {
                let e = Array::error(e);
                return (e.clone(), e.clone(), e);
            }
        };

    // The last row takes the last epsilon transition.
    let last = |x: &Array| lax::index_in_dim(x, time - 1, 0, false);
    let phi_last = update_phi_score(&last(&logalpha_phi), &last(&logalpha_emit));
    let logalpha_phi = jnp::concatenate(
        &[
            &lax::slice_in_dim(&logalpha_phi, 0, Some(time - 1), 1, 0),
            &jnp::expand_dims(&phi_last, 0),
        ],
        0,
    );
    let length_one_hot = jnp::one_hot(&label_lens, max_label_len + 1, DType::F32);
    let per_seq_loss = -jnp::einsum("bn,bn->b", &[&phi_last, &length_one_hot]);
    (per_seq_loss, logalpha_phi, logalpha_emit)
}

/// The CTC loss per sequence `[batch]`: minus the log-probability of the
/// `labels` `[batch, labels]` (class ids, `label_paddings` 1.0 where
/// padded) under the per-frame `logits` `[batch, time, classes]`
/// (`logit_paddings` `[batch, time]`, 1.0 where padded), summed over all
/// alignments with `blank_id` as the blank (`optax.ctc_loss`, whose default
/// `blank_id` is 0; impossible transitions get log-probability -1e5).
/// Differentiable in the logits. Shapes Optax refuses, no time steps or a
/// `blank_id` outside the classes give an error array naming `ctc_loss`.
///
/// ```
/// use oxla::{Array, DType, numpy as jnp};
/// use oxla_nn::losses::ctc_loss;
/// # fn main() -> oxla::Result<()> {
/// // Uniform logits over 3 classes for 2 frames, the single label 1: of the
/// // 9 paths, "1 1", "0 1" and "1 0" (0 is the blank) give it.
/// let logits = jnp::zeros(&[1, 2, 3], DType::F32);
/// let labels = Array::from_slice(&[1i32], &[1, 1])?;
/// let loss = ctc_loss(&logits, &jnp::zeros(&[1, 2], DType::F32), &labels, &jnp::zeros(&[1, 1], DType::F32), 0);
/// assert!((loss.to_vec::<f32>()?[0] - (3.0f32).ln()).abs() < 1e-5);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn ctc_loss(
    logits: &Array,
    logit_paddings: &Array,
    labels: &Array,
    label_paddings: &Array,
    blank_id: i64,
) -> Array {
    ctc_loss_with_forward_probs(
        logits,
        logit_paddings,
        labels,
        label_paddings,
        blank_id,
        -1e5,
    )
    .0
}
