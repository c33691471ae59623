//! The routing model written the obvious way, as an executable specification.
//!
//! One candidate at a time: build `x = [query ⊕ skill ⊕ features]`, multiply by the whole,
//! unsplit first layer, ReLU, second layer, sigmoid, blend. No caching, no matrices, no shared
//! work between candidates. Tests and the benchmark hold [`RoutingHead`](super::RoutingHead)
//! to it: same scores within 1e-5, and a speed ratio that shows what the split first layer and
//! the cached skill blocks buy. [`reinforce_step_scalar`] is the REINFORCE update written the
//! same way, weight by weight over the unsplit layer.

use super::head::{
    blended_score, sigmoid, CandidateFeatures, ForwardPass, HeadConfig, Outcome, RankedSkill,
    SkillStats, REINFORCE_SCORE_FLOOR,
};
use super::snapshot::HeadSnapshot;

/// One skill as the reference ranks it: raw embedding and track record.
#[derive(Debug, Clone, Copy)]
pub struct ReferenceSkill<'a> {
    /// The skill's name.
    pub name: &'a str,
    /// Its embedding, any norm.
    pub embedding: &'a [f32],
    /// Its track record.
    pub stats: SkillStats,
}

/// Ranks all `skills` for `query` with the head described by `snapshot` (weights and update
/// count) and `config` (blend weight and warm-up), best first, ties by name.
///
/// # Panics
/// If a vector's length is not `snapshot.dim`.
pub fn rank_scalar(
    snapshot: &HeadSnapshot,
    config: &HeadConfig,
    query: &[f32],
    skills: &[ReferenceSkill<'_>],
) -> Vec<RankedSkill> {
    let dim = snapshot.dim;
    assert_eq!(query.len(), dim, "query dimension");
    let mut ranked: Vec<RankedSkill> = skills
        .iter()
        .map(|skill| {
            assert_eq!(skill.embedding.len(), dim, "skill embedding dimension");
            let cosine = cosine_similarity(query, skill.embedding);
            let features = CandidateFeatures::new(cosine, skill.stats);
            let rl = score_candidate(snapshot, query, skill.embedding, &features);
            RankedSkill {
                skill: skill.name.to_owned(),
                score: blended_score(config, snapshot.update_count, cosine, rl),
                cosine,
                rl,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.skill.cmp(&b.skill))
    });
    ranked
}

/// The snapshot after [`RoutingHead::apply_outcome`](super::RoutingHead::apply_outcome) of
/// `outcome` on `pass`, with `config`'s learning rate and baseline decay: every weight moves by
/// `lr · (reward − baseline) · (1 − p) · ∂z/∂weight` at the pass's cached activations, except
/// that a failure of a pass scored at or below [`REINFORCE_SCORE_FLOOR`] moves none; the
/// baseline follows the reward and the count grows either way. Unlike the head, it does not
/// refuse a step that leaves a weight non-finite.
///
/// # Panics
/// If the pass's sizes are not the snapshot's.
pub fn reinforce_step_scalar(
    snapshot: &HeadSnapshot,
    config: &HeadConfig,
    pass: &ForwardPass,
    outcome: Outcome,
) -> HeadSnapshot {
    let hidden = snapshot.hidden_size;
    assert_eq!(
        pass.hidden_pre_activation.len(),
        hidden,
        "hidden layer size"
    );
    let mut input: Vec<f32> = Vec::with_capacity(snapshot.first_layer.len() / hidden);
    input.extend(pass.query.iter());
    input.extend(pass.skill_embedding.iter());
    input.extend(pass.features.network_input());
    assert_eq!(
        input.len() * hidden,
        snapshot.first_layer.len(),
        "input width"
    );

    let advantage = outcome.reward() - snapshot.baseline;
    let output_step = if advantage < 0.0 && pass.rl <= REINFORCE_SCORE_FLOOR {
        0.0
    } else {
        config.learning_rate * advantage * (1.0 - pass.rl)
    };
    let mut next = snapshot.clone();
    for unit_index in 0..hidden {
        let pre_activation = pass.hidden_pre_activation[unit_index];
        // ∂z/∂(first layer) goes through the output weight as it was before this step.
        if pre_activation > 0.0 {
            let unit_step = output_step * snapshot.output[unit_index];
            next.first_bias[unit_index] += unit_step;
            let row = &mut next.first_layer[unit_index * input.len()..][..input.len()];
            for (weight, value) in row.iter_mut().zip(&input) {
                *weight += unit_step * value;
            }
        }
        next.output[unit_index] += output_step * pre_activation.max(0.0);
    }
    next.output_bias += output_step;
    next.baseline = config.baseline_decay * snapshot.baseline
        + (1.0 - config.baseline_decay) * outcome.reward();
    next.update_count += 1;
    next
}

/// The head's `rl` for one candidate: `sigmoid(w2·relu(W1·x + b1) + b2)` with `x` built in full.
fn score_candidate(
    snapshot: &HeadSnapshot,
    query: &[f32],
    skill: &[f32],
    features: &CandidateFeatures,
) -> f32 {
    let mut input = Vec::with_capacity(snapshot.first_layer.len() / snapshot.hidden_size);
    input.extend(unit(query));
    input.extend(unit(skill));
    input.extend(features.network_input());

    let mut logit = snapshot.output_bias;
    for unit_index in 0..snapshot.hidden_size {
        let weights =
            &snapshot.first_layer[unit_index * input.len()..(unit_index + 1) * input.len()];
        let mut pre_activation = snapshot.first_bias[unit_index];
        for (weight, value) in weights.iter().zip(&input) {
            pre_activation += weight * value;
        }
        logit += snapshot.output[unit_index] * pre_activation.max(0.0);
    }
    sigmoid(logit)
}

/// `a·b / (|a|·|b|)`, 0 when either is the zero vector.
fn cosine_similarity(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norms = norm(a) * norm(b);
    if norms == 0.0 {
        0.0
    } else {
        dot / norms
    }
}

fn unit(vector: &[f32]) -> Vec<f32> {
    let length = norm(vector);
    vector
        .iter()
        .map(|x| if length == 0.0 { 0.0 } else { x / length })
        .collect()
}

fn norm(vector: &[f32]) -> f32 {
    vector.iter().map(|x| x * x).sum::<f32>().sqrt()
}
