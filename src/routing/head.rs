//! The routing head itself: skills, weights, ranking and the REINFORCE update.

use std::collections::HashMap;
use std::sync::Arc;

use ndarray::{Array1, Array2, ArrayView1, Axis};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::snapshot::{HeadSnapshot, SnapshotError};

/// Number of scalar features per candidate: cosine, success rate, log of uses.
pub const SCALAR_FEATURE_COUNT: usize = 3;

/// `ln(1 + 1000)`: the network sees `ln(1 + uses) / LOG_USES_SCALE`, which is 1 at a thousand
/// uses. Unscaled, a well-used skill's feature (≈ 7) moves its weights ~50× faster than the
/// unit-norm embedding blocks move theirs; on the routing benchmark's bandit that made one run
/// in eight fail to learn.
pub const LOG_USES_SCALE: f32 = 6.908_755;

/// The score at or below which a failure no longer pushes a skill down (see
/// [`RoutingHead::apply_outcome`]): `sigmoid(−4) ≈ 0.018`. A skill scored there adds at most
/// `rl_weight · 0.018` to its blended score, so pushing it lower would buy the ranking nothing.
/// On the routing benchmark's bandit, floors from 0.005 to 0.05 learn alike.
pub const REINFORCE_SCORE_FLOOR: f32 = 0.017_986_21;

/// How often the cached skill blocks are recomputed from scratch. Between refreshes each update
/// patches them exactly (in real arithmetic) with a rank-one correction; the refresh bounds the
/// float rounding that those patches accumulate.
const SKILL_BLOCK_REFRESH_INTERVAL: u64 = 256;

/// Tuning of one routing head; the defaults are DESIGN §5's `[routing]` values.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadConfig {
    /// REINFORCE step size.
    pub learning_rate: f32,
    /// Weight `w` of the learned score in `(1-w)·cosine + w·rl`.
    pub rl_weight: f32,
    /// Updates before the learned score is blended in; until then ranking is cosine only, so a
    /// fresh head's random opinions never reorder skills.
    pub warmup_updates: u64,
    /// Hidden units. On the routing benchmark's bandit 16 to 128 units learn equally well; 64
    /// leaves room for real skill sets (hundreds of skills, many kinds of request) while the
    /// per-skill ranking work (a handful of passes over 64 floats) stays below the cost of the
    /// cosine itself at 384 dimensions.
    pub hidden_size: usize,
    /// Decay of the exponential moving average of rewards used as the REINFORCE baseline:
    /// 0.95 follows the recent success level over roughly the last twenty outcomes.
    pub baseline_decay: f32,
    /// Updates between two saves of the head (see `SharedRoutingHead::apply_outcome`).
    pub persist_interval: u64,
    /// Seed of a fresh head's initial weights, so a fresh head is reproducible.
    pub seed: u64,
}

impl Default for HeadConfig {
    fn default() -> Self {
        HeadConfig {
            learning_rate: 0.01,
            rl_weight: 0.3,
            warmup_updates: 50,
            hidden_size: 64,
            baseline_decay: 0.95,
            persist_interval: 10,
            seed: 0x4c55_4c4c, // "LULL"
        }
    }
}

/// A request that does not fit this head, typically because the embedder changed under it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoutingError {
    /// A vector's length is not the head's dimension (or a forward pass is from another head).
    #[error("{what} has {actual} dimensions but the routing head expects {expected}; vectors from another embedder need a fresh head")]
    DimensionMismatch {
        /// Which input was wrong: "query", "skill embedding", "forward pass".
        what: &'static str,
        /// The head's size.
        expected: usize,
        /// The size given.
        actual: usize,
    },
    /// The update would have left a weight infinite or NaN, so it was not applied: the head,
    /// its baseline, count and stats are as they were. A head holding such a weight would score
    /// NaN from then on, and SQLite cannot store NaN (it becomes NULL).
    #[error("the routing head's update for skill {skill:?} would have made a weight non-finite; it was not applied and the head is unchanged")]
    NonFiniteUpdate {
        /// The skill whose outcome it was.
        skill: String,
    },
}

/// How a routed request went, as reported by the agent (`"success"` or `"failure"` on the
/// wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The chosen skill helped: reward +1.
    Success,
    /// The chosen skill did not help: reward −1.
    Failure,
}

impl Outcome {
    /// The wire spelling: `"success"` or `"failure"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }

    /// The REINFORCE reward of this outcome.
    pub fn reward(self) -> f32 {
        match self {
            Outcome::Success => 1.0,
            Outcome::Failure => -1.0,
        }
    }
}

/// A skill's track record, one of the head's inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkillStats {
    /// Outcomes reported for this skill.
    pub uses: u64,
    /// Of those, successes.
    pub successes: u64,
}

impl SkillStats {
    /// Laplace-smoothed success rate `(successes + 1) / (uses + 2)`: an unused skill reads 0.5,
    /// not a confident 0 or 1 after its first outcome.
    pub fn success_rate(&self) -> f32 {
        (self.successes as f32 + 1.0) / (self.uses as f32 + 2.0)
    }
}

/// The three scalar features of one (request, skill) pair, as DESIGN §2.3 names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandidateFeatures {
    /// Cosine similarity of the request and skill embeddings.
    pub cosine: f32,
    /// [`SkillStats::success_rate`] at ranking time.
    pub success_rate: f32,
    /// `ln(1 + uses)` at ranking time.
    pub log_uses: f32,
}

impl CandidateFeatures {
    /// Features of a skill with these stats at this cosine.
    pub fn new(cosine: f32, stats: SkillStats) -> Self {
        CandidateFeatures {
            cosine,
            success_rate: stats.success_rate(),
            log_uses: (stats.uses as f32).ln_1p(),
        }
    }

    /// What the first layer sees: the features with `log_uses` scaled by [`LOG_USES_SCALE`].
    pub fn network_input(&self) -> [f32; SCALAR_FEATURE_COUNT] {
        [
            self.cosine,
            self.success_rate,
            self.log_uses / LOG_USES_SCALE,
        ]
    }
}

/// One line of a ranking, as `POST /v1/route` returns it (`{"skill","score","cosine","rl"}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankedSkill {
    /// The skill's name.
    pub skill: String,
    /// What the ranking is ordered by: cosine before warm-up, the blend after.
    pub score: f32,
    /// Cosine similarity of request and skill.
    pub cosine: f32,
    /// The head's own score in 0..1, reported even during warm-up.
    pub rl: f32,
}

/// Everything the update needs about one ranked candidate, kept by the engine per `route_id`
/// and handed back to [`RoutingHead::apply_outcome`] with the outcome. It also carries what a
/// later training job needs from the log: the query embedding, the skill and its features.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardPass {
    /// The candidate skill.
    pub skill: String,
    /// The request's embedding, L2-normalised (shared by all candidates of one route).
    pub query: Arc<[f32]>,
    /// The skill's embedding at ranking time, L2-normalised.
    pub skill_embedding: Arc<[f32]>,
    /// The scalar features at ranking time.
    pub features: CandidateFeatures,
    /// First-layer pre-activations (before ReLU), one per hidden unit.
    pub hidden_pre_activation: Vec<f32>,
    /// The head's score `sigmoid(z)` for this candidate.
    pub rl: f32,
}

/// The answer to one ranking request.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Best first; ties broken by skill name so equal inputs always rank alike.
    pub ranked: Vec<RankedSkill>,
    /// The forward pass of each entry of `ranked`, in the same order.
    pub passes: Vec<ForwardPass>,
}

impl Ranking {
    /// The forward pass of `skill`, if it was ranked; what an outcome for that skill updates.
    pub fn pass_for(&self, skill: &str) -> Option<&ForwardPass> {
        self.passes.iter().find(|pass| pass.skill == skill)
    }
}

/// The learned re-ranker of DESIGN §2.3 over a table of skills.
///
/// The model scores `x = [query ⊕ skill ⊕ features]` as `sigmoid(w2·relu(W1·x + b1) + b2)`.
/// `W1` is kept as three blocks so that ranking never redoes per request what depends only on
/// the skill: `W_query·query + b1` is computed once per request, `W_skill·skill` is cached per
/// skill (the "skill block"), and only the three scalar features are multiplied per candidate.
/// Ranking N skills thus costs one matrix-vector product for the cosines, one for the query
/// block, and O(hidden) per skill.
///
/// Invariant: every skill block equals `W_skill · embedding` of its skill for the current
/// weights (up to float rounding). Upserting a skill computes its block; an update patches all
/// blocks with the update's rank-one change (whether or not the updated pass's skill is in the
/// table); [`RoutingHead::restore`] recomputes them.
#[derive(Debug, Clone)]
pub struct RoutingHead {
    config: HeadConfig,
    dim: usize,
    weights: Weights,
    baseline: f32,
    update_count: u64,
    skills: SkillTable,
}

/// The MLP's parameters, with the first layer split by input block.
#[derive(Debug, Clone)]
struct Weights {
    /// hidden × dim: first layer, query columns.
    query: Array2<f32>,
    /// hidden × dim: first layer, skill columns.
    skill: Array2<f32>,
    /// 3 × hidden: first layer, feature columns, stored feature-major so each is a contiguous row.
    features: Array2<f32>,
    /// hidden: first-layer bias.
    first_bias: Array1<f32>,
    /// hidden: second layer.
    output: Array1<f32>,
    /// Second-layer bias.
    output_bias: f32,
    /// An upper bound of `|w|` over `query` and `skill`: exact at construction and at each skill
    /// block refresh, grown by each step's largest change in between. With it,
    /// [`Weights::stay_finite_after`] clears a step without reading the `2 · hidden · dim`
    /// weights it writes, which slowed a training job's updates by about a third.
    embedding_weight_bound: f32,
}

/// While `embedding_weight_bound` plus a step's largest change stays within this, no embedding
/// weight can overflow: `|w + s·x| ≤ |w| + |s|·|x|`, with room to spare for rounding.
const EMBEDDING_WEIGHT_LIMIT: f32 = f32::MAX / 2.0;

/// The skills the head ranks, in parallel arrays so cosines and skill blocks are matrix rows.
#[derive(Debug, Clone)]
struct SkillTable {
    names: Vec<String>,
    row_by_name: HashMap<String, usize>,
    /// skills × dim, L2-normalised rows.
    embeddings: Array2<f32>,
    /// skills × hidden: `W_skill · embedding` per skill.
    blocks: Array2<f32>,
    stats: Vec<SkillStats>,
}

impl RoutingHead {
    /// A fresh head for `dim`-dimensional embeddings, initialised from `config.seed`.
    ///
    /// Each input block of the first layer is He-initialised for its own width (variance
    /// `2/dim` for the embedding blocks, `2/3` for the features), so a fresh head scores mostly
    /// by the three features, and its embedding weights grow along the queries and skills that
    /// outcomes are reported for. Starting the embedding blocks large instead (variance ½ per
    /// block for unit-norm inputs) drowned what was learnt in random projections: on the
    /// routing benchmark's bandit the head then closed almost none of the gap to the oracle.
    pub fn new(dim: usize, config: HeadConfig) -> Self {
        let hidden = config.hidden_size;
        let mut rng = StdRng::seed_from_u64(config.seed);
        let mut uniform = |rows: usize, cols: usize, std_dev: f32| {
            let half_width = std_dev * 3f32.sqrt();
            Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-half_width..half_width))
        };
        let embedding_std = (2.0 / dim as f32).sqrt();
        let query = uniform(hidden, dim, embedding_std);
        let skill = uniform(hidden, dim, embedding_std);
        let features = uniform(
            SCALAR_FEATURE_COUNT,
            hidden,
            (2.0 / SCALAR_FEATURE_COUNT as f32).sqrt(),
        );
        let output = uniform(1, hidden, 1.0 / (hidden as f32).sqrt()).index_axis_move(Axis(0), 0);
        let weights = Weights {
            embedding_weight_bound: largest_magnitude(&query).max(largest_magnitude(&skill)),
            query,
            skill,
            features,
            first_bias: Array1::zeros(hidden),
            output,
            output_bias: 0.0,
        };
        RoutingHead {
            dim,
            weights,
            baseline: 0.0,
            update_count: 0,
            skills: SkillTable::new(dim, hidden),
            config,
        }
    }

    /// A head with a saved snapshot's weights, baseline and update count, and no skills yet.
    pub fn from_snapshot(
        config: HeadConfig,
        snapshot: &HeadSnapshot,
    ) -> Result<Self, SnapshotError> {
        snapshot.validate(snapshot.dim)?;
        let mut head = RoutingHead::new(
            snapshot.dim,
            HeadConfig {
                hidden_size: snapshot.hidden_size,
                ..config
            },
        );
        head.restore(snapshot)?;
        Ok(head)
    }

    /// The embedding dimension this head was built for.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The configuration in use.
    pub fn config(&self) -> &HeadConfig {
        &self.config
    }

    /// Outcomes learned from so far.
    pub fn update_count(&self) -> u64 {
        self.update_count
    }

    /// The current REINFORCE baseline (moving average of rewards, in −1..1).
    pub fn baseline(&self) -> f32 {
        self.baseline
    }

    /// Whether the learned score is blended into rankings yet.
    pub fn is_warmed_up(&self) -> bool {
        self.update_count >= self.config.warmup_updates
    }

    /// Number of skills known to the head.
    pub fn skill_count(&self) -> usize {
        self.skills.names.len()
    }

    /// Adds a skill or replaces its embedding (its stats are kept), computing its skill block.
    pub fn upsert_skill(&mut self, name: &str, embedding: &[f32]) -> Result<(), RoutingError> {
        self.check_dim(embedding.len(), "skill embedding")?;
        let unit = unit_vector(embedding);
        let block = self.weights.skill.dot(&ArrayView1::from(&unit[..]));
        self.skills.upsert(name, &unit, &block);
        Ok(())
    }

    /// Forgets a skill; returns whether it was known.
    pub fn remove_skill(&mut self, name: &str) -> bool {
        self.skills.remove(name)
    }

    /// Sets a skill's track record, for example rebuilt from the outcome log at start; returns
    /// whether the skill was known. Outcomes applied later keep it current.
    pub fn set_skill_stats(&mut self, name: &str, stats: SkillStats) -> bool {
        let Some(&row) = self.skills.row_by_name.get(name) else {
            return false;
        };
        self.skills.stats[row] = stats;
        true
    }

    /// A skill's track record, if the skill is known.
    pub fn skill_stats(&self, name: &str) -> Option<SkillStats> {
        self.skills
            .row_by_name
            .get(name)
            .map(|&row| self.skills.stats[row])
    }

    /// Ranks every known skill for `query` and returns the best `top_k` with their forward
    /// passes.
    pub fn rank(&self, query: &[f32], top_k: usize) -> Result<Ranking, RoutingError> {
        self.check_dim(query.len(), "query")?;
        let query_unit: Arc<[f32]> = unit_vector(query).into();
        let query_view = ArrayView1::from(&query_unit[..]);
        let cosines = self.skills.embeddings.dot(&query_view);
        let query_block = self.weights.query.dot(&query_view) + &self.weights.first_bias;
        let query_block = query_block.as_slice().expect("fresh array is contiguous");

        let mut pre_activation = vec![0.0f32; self.config.hidden_size];
        let mut scored: Vec<(usize, f32, f32)> = (0..self.skill_count())
            .map(|row| {
                let features = CandidateFeatures::new(cosines[row], self.skills.stats[row]);
                self.pre_activation_into(
                    query_block,
                    self.skills.block(row),
                    &features,
                    &mut pre_activation,
                );
                let rl = self.rl_from_pre_activation(&pre_activation);
                (row, self.blend(features.cosine, rl), rl)
            })
            .collect();

        let by_score_then_name = |a: &(usize, f32, f32), b: &(usize, f32, f32)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.skills.names[a.0].cmp(&self.skills.names[b.0]))
        };
        if top_k < scored.len() {
            if top_k == 0 {
                scored.clear();
            } else {
                scored.select_nth_unstable_by(top_k - 1, by_score_then_name);
                scored.truncate(top_k);
            }
        }
        scored.sort_unstable_by(by_score_then_name);

        let mut ranking = Ranking {
            ranked: Vec::with_capacity(scored.len()),
            passes: Vec::with_capacity(scored.len()),
        };
        for (row, score, rl) in scored {
            let features = CandidateFeatures::new(cosines[row], self.skills.stats[row]);
            let mut hidden_pre_activation = vec![0.0f32; self.config.hidden_size];
            self.pre_activation_into(
                query_block,
                self.skills.block(row),
                &features,
                &mut hidden_pre_activation,
            );
            let skill = self.skills.names[row].clone();
            ranking.ranked.push(RankedSkill {
                skill: skill.clone(),
                score,
                cosine: features.cosine,
                rl,
            });
            ranking.passes.push(ForwardPass {
                skill,
                query: Arc::clone(&query_unit),
                skill_embedding: self.skills.embeddings.row(row).to_vec().into(),
                features,
                hidden_pre_activation,
                rl,
            });
        }
        Ok(ranking)
    }

    /// The forward pass of one (request, skill, features) triple against the current weights,
    /// whether or not the skill is in the head's table: how a training job replays a logged
    /// outcome through [`RoutingHead::apply_outcome`] (or
    /// [`RoutingHead::apply_outcome_cross_entropy`]), and scores it (`rl` is the head's `p`).
    ///
    /// Both vectors are L2-normalised, as [`RoutingHead::rank`] and
    /// [`RoutingHead::upsert_skill`] do; the features are taken as given (the logged ones, from
    /// ranking time), not recomputed from the head's own stats. The skill block is computed
    /// afresh, so for a known skill the pass equals the one `rank` gives up to the rounding that
    /// the cached block has accumulated. The head is not changed.
    pub fn forward_pass(
        &self,
        skill: &str,
        query: &[f32],
        skill_embedding: &[f32],
        features: CandidateFeatures,
    ) -> Result<ForwardPass, RoutingError> {
        self.check_dim(query.len(), "query")?;
        self.check_dim(skill_embedding.len(), "skill embedding")?;
        let query: Arc<[f32]> = unit_vector(query).into();
        let skill_embedding: Arc<[f32]> = unit_vector(skill_embedding).into();
        let query_block =
            self.weights.query.dot(&ArrayView1::from(&query[..])) + &self.weights.first_bias;
        let skill_block = self
            .weights
            .skill
            .dot(&ArrayView1::from(&skill_embedding[..]));
        let mut hidden_pre_activation = vec![0.0f32; self.config.hidden_size];
        self.pre_activation_into(
            query_block.as_slice().expect("fresh array is contiguous"),
            skill_block.as_slice().expect("fresh array is contiguous"),
            &features,
            &mut hidden_pre_activation,
        );
        let rl = self.rl_from_pre_activation(&hidden_pre_activation);
        Ok(ForwardPass {
            skill: skill.to_owned(),
            query,
            skill_embedding,
            features,
            hidden_pre_activation,
            rl,
        })
    }

    /// Learns from one outcome: a REINFORCE step on the cached forward pass of the chosen skill,
    /// with the moving-average baseline; returns the new update count.
    ///
    /// The score `p = sigmoid(z)` is read as the probability of picking the skill, and an
    /// outcome is always for a skill that was picked, so the step follows the log-likelihood of
    /// that pick, `∇ ln p = (1 − p) · ∇z`, for a failure as for a success (`−p · ∇z`, the
    /// gradient of `ln(1 − p)`, would be that of a skill *not* picked): `lr · (reward −
    /// baseline) · (1 − p) · ∇z`, taken at the cached activations (the ones the agent acted on)
    /// against the current weights, which other sessions may have moved since.
    ///
    /// Except that a failure of a skill scored at or below [`REINFORCE_SCORE_FLOOR`] moves no
    /// weight. A policy that sampled skills by `p` would seldom pick such a skill, so in
    /// expectation its failures' pull would fade with `p`. This head's agent picks by the
    /// blended score, and not always its first skill, so a skill can go on failing at any `p`;
    /// `ln p` is linear in `z` for negative `z`, so each failure would push `z` down by about
    /// `lr · |advantage|` for ever, and the shared weights would carry every score to 0 and
    /// then overflow. The baseline, the count and the skill's stats (if the skill is still
    /// known) take every outcome.
    ///
    /// # Errors
    /// [`RoutingError::DimensionMismatch`] for a pass of another head's shape;
    /// [`RoutingError::NonFiniteUpdate`], leaving the head unchanged, for a step that would make
    /// a weight infinite or NaN.
    pub fn apply_outcome(
        &mut self,
        pass: &ForwardPass,
        outcome: Outcome,
    ) -> Result<u64, RoutingError> {
        self.check_pass(pass)?;
        let advantage = outcome.reward() - self.baseline;
        let below_floor = advantage < 0.0 && pass.rl <= REINFORCE_SCORE_FLOOR;
        let output_step = if below_floor {
            0.0
        } else {
            self.config.learning_rate * advantage * (1.0 - pass.rl)
        };
        self.step(pass, outcome, output_step)
    }

    /// Learns from one outcome by a gradient step on the cross-entropy of `p` against
    /// `y = (outcome is a success)`: `lr · (y − p) · ∇z`, otherwise as
    /// [`RoutingHead::apply_outcome`] (the baseline and the stats are kept current too).
    ///
    /// This reads `p` as the chance that the skill helps, which is what a training job measures.
    /// The REINFORCE step does not train that: it moves a failure's `z` by
    /// `lr · (1 + baseline) · (1 − p)`, which does not shrink as `p` nears 0, down to
    /// [`REINFORCE_SCORE_FLOOR`], so a pair that mostly fails ends at the floor however often it
    /// helps. This step's pull on a failure is `lr · p`, so it rests where `p` matches how
    /// often such a pair helps.
    ///
    /// # Errors
    /// As [`RoutingHead::apply_outcome`].
    pub fn apply_outcome_cross_entropy(
        &mut self,
        pass: &ForwardPass,
        outcome: Outcome,
    ) -> Result<u64, RoutingError> {
        self.check_pass(pass)?;
        let label = if outcome == Outcome::Success {
            1.0
        } else {
            0.0
        };
        let output_step = self.config.learning_rate * (label - pass.rl);
        self.step(pass, outcome, output_step)
    }

    fn check_pass(&self, pass: &ForwardPass) -> Result<(), RoutingError> {
        self.check_dim(pass.query.len(), "forward pass query")?;
        self.check_dim(pass.skill_embedding.len(), "forward pass skill embedding")?;
        if pass.hidden_pre_activation.len() != self.config.hidden_size {
            return Err(RoutingError::DimensionMismatch {
                what: "forward pass hidden layer",
                expected: self.config.hidden_size,
                actual: pass.hidden_pre_activation.len(),
            });
        }
        Ok(())
    }

    /// Moves `z` of `pass` by `output_step · ∇z` (backpropagated to every weight), patches the
    /// skill blocks, follows the reward in the baseline and counts the update and the skill's
    /// stats; returns the new update count. A step that would make a weight non-finite is
    /// refused before anything changes.
    fn step(
        &mut self,
        pass: &ForwardPass,
        outcome: Outcome,
        output_step: f32,
    ) -> Result<u64, RoutingError> {
        // Backpropagate through the output weights as they were before this step.
        let hidden_step: Array1<f32> = pass
            .hidden_pre_activation
            .iter()
            .zip(&self.weights.output)
            .map(|(&pre, &weight)| if pre > 0.0 { output_step * weight } else { 0.0 })
            .collect();
        let embedding_change = largest_embedding_change(pass, &hidden_step);
        if !self
            .weights
            .stay_finite_after(pass, output_step, &hidden_step, embedding_change)
        {
            return Err(RoutingError::NonFiniteUpdate {
                skill: pass.skill.clone(),
            });
        }
        self.weights.add_step(pass, output_step, &hidden_step);
        self.weights.embedding_weight_bound += embedding_change;
        self.baseline = self.config.baseline_decay * self.baseline
            + (1.0 - self.config.baseline_decay) * outcome.reward();

        let skill_embedding = ArrayView1::from(&pass.skill_embedding[..]);
        self.update_count += 1;
        if self
            .update_count
            .is_multiple_of(SKILL_BLOCK_REFRESH_INTERVAL)
        {
            self.skills.recompute_blocks(&self.weights.skill);
            self.weights.embedding_weight_bound =
                largest_magnitude(&self.weights.query).max(largest_magnitude(&self.weights.skill));
        } else {
            // W_skill gained hidden_step ⊗ chosen, so each block gains hidden_step · (chosen · embedding).
            let overlaps = self.skills.embeddings.dot(&skill_embedding);
            for (overlap, mut block) in overlaps.iter().zip(self.skills.blocks.rows_mut()) {
                block.scaled_add(*overlap, &hidden_step);
            }
        }

        if let Some(&row) = self.skills.row_by_name.get(&pass.skill) {
            let stats = &mut self.skills.stats[row];
            stats.uses += 1;
            stats.successes += u64::from(outcome == Outcome::Success);
        }
        Ok(self.update_count)
    }

    /// Copies out the weights, baseline and update count.
    pub fn snapshot(&self) -> HeadSnapshot {
        let hidden = self.config.hidden_size;
        let width = 2 * self.dim + SCALAR_FEATURE_COUNT;
        let mut first_layer = Vec::with_capacity(hidden * width);
        for unit in 0..hidden {
            first_layer.extend(self.weights.query.row(unit).iter());
            first_layer.extend(self.weights.skill.row(unit).iter());
            first_layer.extend(self.weights.features.column(unit).iter());
        }
        HeadSnapshot {
            dim: self.dim,
            hidden_size: hidden,
            first_layer,
            first_bias: self.weights.first_bias.to_vec(),
            output: self.weights.output.to_vec(),
            output_bias: self.weights.output_bias,
            baseline: self.baseline,
            update_count: self.update_count,
        }
    }

    /// Replaces weights, baseline and update count with a snapshot's (a reload, or a trained
    /// head being promoted) and recomputes every skill block; skills and their stats stay.
    pub fn restore(&mut self, snapshot: &HeadSnapshot) -> Result<(), SnapshotError> {
        snapshot.validate(self.dim)?;
        let (dim, hidden) = (self.dim, snapshot.hidden_size);
        let width = 2 * dim + SCALAR_FEATURE_COUNT;
        let first_layer = Array2::from_shape_vec((hidden, width), snapshot.first_layer.clone())
            .expect("validate checked the first layer's length");
        let query = first_layer.slice(ndarray::s![.., ..dim]).to_owned();
        let skill = first_layer.slice(ndarray::s![.., dim..2 * dim]).to_owned();
        self.weights = Weights {
            embedding_weight_bound: largest_magnitude(&query).max(largest_magnitude(&skill)),
            query,
            skill,
            features: first_layer
                .slice(ndarray::s![.., 2 * dim..])
                .t()
                .as_standard_layout()
                .into_owned(),
            first_bias: Array1::from(snapshot.first_bias.clone()),
            output: Array1::from(snapshot.output.clone()),
            output_bias: snapshot.output_bias,
        };
        self.config.hidden_size = hidden;
        self.baseline = snapshot.baseline;
        self.update_count = snapshot.update_count;
        self.skills.recompute_blocks(&self.weights.skill);
        Ok(())
    }

    /// `W1·x + b1` from a request's query block (`W_query·query + b1`), a skill block
    /// (`W_skill·skill`) and the features.
    fn pre_activation_into(
        &self,
        query_block: &[f32],
        skill_block: &[f32],
        features: &CandidateFeatures,
        out: &mut [f32],
    ) {
        let feature_weights = self
            .weights
            .features
            .as_slice()
            .expect("feature weights are contiguous");
        let hidden = self.config.hidden_size;
        let [cosine, success_rate, log_uses] = features.network_input();
        let (cosine_weights, rest) = feature_weights.split_at(hidden);
        let (success_weights, uses_weights) = rest.split_at(hidden);
        for (unit, value) in out.iter_mut().enumerate() {
            *value = query_block[unit]
                + skill_block[unit]
                + cosine_weights[unit] * cosine
                + success_weights[unit] * success_rate
                + uses_weights[unit] * log_uses;
        }
    }

    /// `sigmoid(w2·relu(pre) + b2)`.
    fn rl_from_pre_activation(&self, pre_activation: &[f32]) -> f32 {
        let output = self
            .weights
            .output
            .as_slice()
            .expect("output weights are contiguous");
        let logit = self.weights.output_bias
            + pre_activation
                .iter()
                .zip(output)
                .map(|(&pre, &weight)| pre.max(0.0) * weight)
                .sum::<f32>();
        sigmoid(logit)
    }

    /// The score a ranking is ordered by.
    fn blend(&self, cosine: f32, rl: f32) -> f32 {
        blended_score(&self.config, self.update_count, cosine, rl)
    }

    fn check_dim(&self, actual: usize, what: &'static str) -> Result<(), RoutingError> {
        if actual == self.dim {
            return Ok(());
        }
        Err(RoutingError::DimensionMismatch {
            what,
            expected: self.dim,
            actual,
        })
    }
}

impl Weights {
    /// Adds `output_step · ∇z` of `pass` to every weight: `output_step` is the step of `z`
    /// itself, `hidden_step` its backpropagation to the hidden pre-activations.
    fn add_step(&mut self, pass: &ForwardPass, output_step: f32, hidden_step: &Array1<f32>) {
        self.output.zip_mut_with(
            &ArrayView1::from(&pass.hidden_pre_activation[..]),
            |weight, &pre| *weight += output_step * pre.max(0.0),
        );
        self.output_bias += output_step;
        self.first_bias += hidden_step;
        let query = ArrayView1::from(&pass.query[..]);
        let skill_embedding = ArrayView1::from(&pass.skill_embedding[..]);
        for ((&step, mut query_row), mut skill_row) in hidden_step
            .iter()
            .zip(self.query.rows_mut())
            .zip(self.skill.rows_mut())
        {
            if step != 0.0 {
                query_row.scaled_add(step, &query);
                skill_row.scaled_add(step, &skill_embedding);
            }
        }
        for (input, mut feature_row) in pass
            .features
            .network_input()
            .into_iter()
            .zip(self.features.rows_mut())
        {
            feature_row.scaled_add(input, hidden_step);
        }
    }

    /// Whether [`Weights::add_step`] with these arguments would leave every weight finite, so
    /// that a refused step changes nothing. The output layer, the biases and the feature
    /// weights (a few `hidden`-long vectors) are checked sum by sum; the embedding blocks by
    /// [`Weights::embedding_weight_bound`] and the step's `embedding_change`
    /// ([`largest_embedding_change`]), which may refuse a step that would just have fitted, but
    /// only once the bound nears [`EMBEDDING_WEIGHT_LIMIT`].
    fn stay_finite_after(
        &self,
        pass: &ForwardPass,
        output_step: f32,
        hidden_step: &Array1<f32>,
        embedding_change: f32,
    ) -> bool {
        let activations = pass.hidden_pre_activation.iter().map(|pre| pre.max(0.0));
        let hidden_inputs = || hidden_step.iter().copied();
        (self.output_bias + output_step).is_finite()
            && sums_are_finite(&self.output, output_step, activations)
            && sums_are_finite(&self.first_bias, 1.0, hidden_inputs())
            && pass
                .features
                .network_input()
                .into_iter()
                .zip(self.features.rows())
                .all(|(input, row)| sums_are_finite(row, input, hidden_inputs()))
            // False for a NaN change too.
            && self.embedding_weight_bound + embedding_change <= EMBEDDING_WEIGHT_LIMIT
    }
}

/// Whether every `weight + scale · input` is finite (a fold, not a search: they almost always
/// are, and the fold vectorises).
fn sums_are_finite<'a>(
    weights: impl IntoIterator<Item = &'a f32>,
    scale: f32,
    inputs: impl IntoIterator<Item = f32>,
) -> bool {
    weights
        .into_iter()
        .zip(inputs)
        .fold(true, |finite, (&weight, input)| {
            finite & (weight + scale * input).is_finite()
        })
}

/// The largest `|Δw|` that a step with this backpropagated `hidden_step` makes in the
/// embedding blocks (each row `u` gains `hidden_step[u]` times the query or the skill
/// embedding); NaN or infinite if any of those is.
fn largest_embedding_change(pass: &ForwardPass, hidden_step: &Array1<f32>) -> f32 {
    let largest_input = largest_magnitude(&[
        largest_magnitude(&pass.query[..]),
        largest_magnitude(&pass.skill_embedding[..]),
    ]);
    largest_magnitude(hidden_step) * largest_input
}

/// `max |value|`: 0 for no values, NaN if any value is NaN (`f32::max` would skip it).
///
/// Compared as bit patterns with the sign cleared: for non-negative floats the integer order
/// is the numeric order, with every NaN above infinity, and an integer maximum vectorises.
fn largest_magnitude<'a>(values: impl IntoIterator<Item = &'a f32>) -> f32 {
    let largest_bits = values.into_iter().fold(0u32, |largest, value| {
        largest.max(value.to_bits() & 0x7fff_ffff)
    });
    f32::from_bits(largest_bits)
}

impl SkillTable {
    fn new(dim: usize, hidden: usize) -> Self {
        SkillTable {
            names: Vec::new(),
            row_by_name: HashMap::new(),
            embeddings: Array2::zeros((0, dim)),
            blocks: Array2::zeros((0, hidden)),
            stats: Vec::new(),
        }
    }

    fn upsert(&mut self, name: &str, unit_embedding: &[f32], block: &Array1<f32>) {
        let embedding = ArrayView1::from(unit_embedding);
        if let Some(&row) = self.row_by_name.get(name) {
            self.embeddings.row_mut(row).assign(&embedding);
            self.blocks.row_mut(row).assign(block);
            return;
        }
        self.embeddings
            .push_row(embedding)
            .expect("embedding length was checked");
        self.blocks
            .push_row(block.view())
            .expect("block length is the hidden size");
        self.row_by_name.insert(name.to_owned(), self.names.len());
        self.names.push(name.to_owned());
        self.stats.push(SkillStats::default());
    }

    fn remove(&mut self, name: &str) -> bool {
        let Some(row) = self.row_by_name.remove(name) else {
            return false;
        };
        self.names.remove(row);
        self.stats.remove(row);
        self.embeddings.remove_index(Axis(0), row);
        self.blocks.remove_index(Axis(0), row);
        for later_row in self
            .row_by_name
            .values_mut()
            .filter(|later_row| **later_row > row)
        {
            *later_row -= 1;
        }
        true
    }

    /// The cached skill block of the skill in `row`.
    fn block(&self, row: usize) -> &[f32] {
        self.blocks
            .row(row)
            .to_slice()
            .expect("skill blocks are contiguous rows")
    }

    fn recompute_blocks(&mut self, skill_weights: &Array2<f32>) {
        self.blocks = self.embeddings.dot(&skill_weights.t());
    }
}

/// `(1-w)·cosine + w·rl` once warmed up, cosine alone before; shared with the scalar reference
/// so both follow the same rule.
pub(crate) fn blended_score(config: &HeadConfig, update_count: u64, cosine: f32, rl: f32) -> f32 {
    if update_count < config.warmup_updates {
        return cosine;
    }
    (1.0 - config.rl_weight) * cosine + config.rl_weight * rl
}

/// The logistic function.
pub(crate) fn sigmoid(logit: f32) -> f32 {
    1.0 / (1.0 + (-logit).exp())
}

/// `vector / |vector|`, or the zero vector unchanged: the model's embedding inputs are unit
/// vectors, so cosine is a dot product and no skill outweighs another by its norm.
pub(crate) fn unit_vector(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return vector.to_vec();
    }
    vector.iter().map(|x| x / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::reference::{rank_scalar, ReferenceSkill};

    const DIM: usize = 16;

    fn random_vector(rng: &mut StdRng) -> Vec<f32> {
        (0..DIM).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let (a, b) = (unit_vector(a), unit_vector(b));
        a.iter().zip(&b).map(|(x, y)| x * y).sum()
    }

    /// For a skill the head knows, the replayed pass is the one the ranking gave, bit for bit,
    /// while the skill blocks are fresh: same inputs, activations and score.
    #[test]
    fn a_forward_pass_of_a_known_skill_is_the_ranking_pass() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        let skills = [
            ("deploy", random_vector(&mut rng)),
            ("haiku", random_vector(&mut rng)),
        ];
        for (name, embedding) in &skills {
            head.upsert_skill(name, embedding).unwrap();
        }
        head.set_skill_stats(
            "deploy",
            SkillStats {
                uses: 7,
                successes: 5,
            },
        );
        let query = random_vector(&mut rng);
        let ranking = head.rank(&query, skills.len()).unwrap();
        for (name, embedding) in &skills {
            let ranked = ranking.pass_for(name).unwrap();
            let replayed = head
                .forward_pass(name, &query, embedding, ranked.features)
                .unwrap();
            assert_eq!(&replayed, ranked);
        }
    }

    /// A training head learns from skills it has never been told about; those updates still
    /// patch the blocks of the skills it does know, so its rankings stay those of the reference
    /// model, and its known skills' track records are left alone.
    #[test]
    fn updates_from_passes_of_unknown_skills_keep_the_skill_blocks_true() {
        let mut rng = StdRng::seed_from_u64(2);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        let known: Vec<(String, Vec<f32>)> = (0..5)
            .map(|index| (format!("skill-{index}"), random_vector(&mut rng)))
            .collect();
        for (name, embedding) in &known {
            head.upsert_skill(name, embedding).unwrap();
        }
        let stats = SkillStats {
            uses: 3,
            successes: 2,
        };
        for index in 0..60 {
            let (query, skill_embedding) = (random_vector(&mut rng), random_vector(&mut rng));
            let features = CandidateFeatures::new(cosine(&query, &skill_embedding), stats);
            let pass = head
                .forward_pass("logged-skill", &query, &skill_embedding, features)
                .unwrap();
            let outcome = if index % 3 == 0 {
                Outcome::Failure
            } else {
                Outcome::Success
            };
            head.apply_outcome(&pass, outcome).unwrap();
        }
        assert_eq!(head.update_count(), 60);
        assert!(head.is_warmed_up());

        let snapshot = head.snapshot();
        let reference_skills: Vec<ReferenceSkill<'_>> = known
            .iter()
            .map(|(name, embedding)| ReferenceSkill {
                name,
                embedding,
                stats: head.skill_stats(name).unwrap(),
            })
            .collect();
        assert!(reference_skills
            .iter()
            .all(|skill| skill.stats == SkillStats::default()));
        let query = random_vector(&mut rng);
        let from_head = head.rank(&query, known.len()).unwrap();
        let from_reference = rank_scalar(&snapshot, head.config(), &query, &reference_skills);
        for (ranked, reference) in from_head.ranked.iter().zip(&from_reference) {
            assert_eq!(ranked.skill, reference.skill);
            assert!(
                (ranked.rl - reference.rl).abs() < 1e-5,
                "{ranked:?} vs {reference:?}"
            );
            assert!((ranked.score - reference.score).abs() < 1e-5);
        }

        // The replayed pass scores as the reference does too.
        let (query, skill_embedding) = (random_vector(&mut rng), random_vector(&mut rng));
        let features = CandidateFeatures::new(cosine(&query, &skill_embedding), stats);
        let pass = head
            .forward_pass("logged-skill", &query, &skill_embedding, features)
            .unwrap();
        let reference = rank_scalar(
            &snapshot,
            head.config(),
            &query,
            &[ReferenceSkill {
                name: "logged-skill",
                embedding: &skill_embedding,
                stats,
            }],
        );
        assert!((pass.rl - reference[0].rl).abs() < 1e-5);
    }

    /// The cross-entropy step moves `p` towards the outcome by a step that shrinks as `p`
    /// nears it, and keeps the baseline, the count and the skill's stats as REINFORCE does.
    #[test]
    fn a_cross_entropy_step_moves_the_score_towards_the_outcome() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        let embedding = random_vector(&mut rng);
        head.upsert_skill("deploy", &embedding).unwrap();
        let query = random_vector(&mut rng);
        let features = CandidateFeatures::new(cosine(&query, &embedding), SkillStats::default());
        let score = |head: &RoutingHead| {
            head.forward_pass("deploy", &query, &embedding, features)
                .unwrap()
                .rl
        };
        let before = score(&head);
        let pass = head
            .forward_pass("deploy", &query, &embedding, features)
            .unwrap();

        let mut reinforced = head.clone();
        reinforced.apply_outcome(&pass, Outcome::Failure).unwrap();
        for (outcome, moved_up) in [(Outcome::Success, true), (Outcome::Failure, false)] {
            let mut stepped = head.clone();
            assert_eq!(stepped.apply_outcome_cross_entropy(&pass, outcome), Ok(1));
            assert_eq!(score(&stepped) > before, moved_up, "{outcome:?}");
            let expected = SkillStats {
                uses: 1,
                successes: u64::from(moved_up),
            };
            assert_eq!(stepped.skill_stats("deploy"), Some(expected));
            if outcome == Outcome::Failure {
                assert_eq!(stepped.baseline(), reinforced.baseline());
                // A failure moves z by lr·p here and by lr·(1 + baseline)·(1 − p) in REINFORCE,
                // with the baseline 0 before the first outcome: less below p = ½, more above.
                let cross_entropy_drop = before - score(&stepped);
                let reinforce_drop = before - score(&reinforced);
                assert_eq!(
                    cross_entropy_drop < reinforce_drop,
                    before < 0.5,
                    "p = {before}"
                );
            }
        }
    }

    #[test]
    fn the_largest_magnitude_is_nan_if_any_value_is() {
        assert_eq!(largest_magnitude(&[0.5, -2.0, 1.0]), 2.0);
        assert_eq!(largest_magnitude(&[]), 0.0);
        assert_eq!(largest_magnitude(&[1.0, f32::NEG_INFINITY]), f32::INFINITY);
        assert!(largest_magnitude(&[f32::INFINITY, f32::NAN, 3.0]).is_nan());
        assert!(largest_magnitude(&[-f32::NAN, 3.0]).is_nan());
    }

    #[test]
    fn the_score_floor_is_sigmoid_of_minus_four() {
        assert!((REINFORCE_SCORE_FLOOR - sigmoid(-4.0)).abs() < 1e-8);
    }

    #[test]
    fn a_forward_pass_of_another_dimension_is_refused() {
        let head = RoutingHead::new(DIM, HeadConfig::default());
        let features = CandidateFeatures::new(0.5, SkillStats::default());
        let error = head
            .forward_pass("deploy", &[1.0; DIM + 1], &[1.0; DIM], features)
            .unwrap_err();
        assert_eq!(
            error,
            RoutingError::DimensionMismatch {
                what: "query",
                expected: DIM,
                actual: DIM + 1
            }
        );
        let error = head
            .forward_pass("deploy", &[1.0; DIM], &[1.0; 3], features)
            .unwrap_err();
        assert!(matches!(
            error,
            RoutingError::DimensionMismatch {
                what: "skill embedding",
                ..
            }
        ));
    }
}
