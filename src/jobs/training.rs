//! The training core of a continual-learning job (DESIGN §2.4): the logged route outcomes as a
//! [`Dataset`], its [`Split`] into training and held-out examples fixed by rule, the
//! [`Metrics`] of a head on a set of examples ([`evaluate`]), and one round of training
//! ([`train_round`]) by an [`UpdateRule`], which pauses and cancels between mini-batches
//! through its callback.
//!
//! Invariant: pure and single-threaded. Nothing here knows of jobs, checkpoints, receipts,
//! threads or the clock; the job service decides when a round runs, on which thread, and what
//! becomes of its result. The same dataset, head and rule give bit-identical heads: examples
//! are replayed in dataset order, one update each, and a mini-batch is only how often the
//! caller is asked whether to go on, never a unit of the arithmetic.

use rusqlite::{params, Connection};
use sha2::{Digest, Sha256};

use crate::routing::{
    blob_to_floats, CandidateFeatures, ForwardPass, Outcome, RoutingError, RoutingHead,
};
use crate::store::StoreError;

/// An example is held out when the first byte of `sha256(route_id)` is below this: 51 of 256
/// values, about 20 %. Hashing the route id, not drawing by position, keeps every example on
/// its side of the split however many outcomes are logged after it.
pub const HELDOUT_FIRST_BYTE_BELOW: u8 = 51;

/// Training examples between two calls of [`train_round`]'s callback: how soon a pause or a
/// cancel takes effect (64 updates take a few milliseconds at 384 dimensions).
pub const BATCH_SIZE: usize = 64;

/// What [`Dataset::digest`] hashes first, so that a digest of another layout (or of anything
/// else) can never equal one of this one.
const DIGEST_DOMAIN: &[u8] = b"lull.training.dataset.v1\0";

/// `p` is clamped to `[ε, 1 − ε]` in the cross-entropy, so a saturated score (`sigmoid` of a
/// large logit rounds to exactly 1 in `f32`) costs `−ln ε ≈ 16` when wrong instead of infinity.
const PROBABILITY_EPSILON: f64 = 1e-7;

/// One logged outcome: what the head saw when it ranked the chosen skill, and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The route it answers (`routing_routes.id`); also what decides its side of the split.
    pub route_id: String,
    /// The skill the agent chose.
    pub skill: String,
    /// The request's embedding, L2-normalised, as logged.
    pub query: Vec<f32>,
    /// The chosen skill's embedding at ranking time, L2-normalised, as logged.
    pub skill_embedding: Vec<f32>,
    /// The chosen skill's features at ranking time, as logged.
    pub features: CandidateFeatures,
    /// The logged reward: +1 success, −1 failure.
    pub reward: f32,
}

impl Example {
    /// The outcome to learn from, and the label `y = (reward > 0)` of the metrics.
    pub fn outcome(&self) -> Outcome {
        if self.reward > 0.0 {
            Outcome::Success
        } else {
            Outcome::Failure
        }
    }

    /// The example replayed through `head`'s current weights.
    fn forward_pass(&self, head: &RoutingHead) -> Result<ForwardPass, RoutingError> {
        head.forward_pass(
            &self.skill,
            &self.query,
            &self.skill_embedding,
            self.features,
        )
    }
}

/// The examples of one job: every logged outcome of one embedding dimension up to a cutoff, in
/// the order they were logged (`routing_outcomes` rowid), with a digest that names them.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// In outcome rowid order.
    pub examples: Vec<Example>,
    /// Lowercase hex sha256 of the examples, in order; a job compares it to tell that its data
    /// has not changed since admission. See [`Dataset::load`] for the exact bytes.
    pub digest: String,
    /// The largest outcome rowid included, or 0 when there is none (rowids start at 1):
    /// loading again with this cutoff gives the same examples, whatever was logged since.
    pub cutoff: i64,
    /// The embedding dimension of every example (the head's it will train).
    pub dim: usize,
}

impl Dataset {
    /// Loads every outcome whose route has dimension `dim` and whose rowid is at most `cutoff`
    /// (`None`: up to the latest), joined with its route, in rowid order.
    ///
    /// The digest is the lowercase hex sha256 of: the 25 bytes `lull.training.dataset.v1\0`;
    /// `dim` as a little-endian `u32`; then per example, in order, the route id and then the
    /// skill name, each as its UTF-8 byte length (little-endian `u32`) followed by the bytes;
    /// the reward, cosine, success rate and `ln(1 + uses)` as little-endian `f32`; the query
    /// embedding, then the skill embedding, as `dim` little-endian `f32` each (the stored BLOBs'
    /// bytes). Reals are hashed as the `f32` training uses, so the same log always gives the
    /// same digest and any change a training run could see changes it.
    ///
    /// An embedding BLOB whose length is not `dim` floats is a corrupt row, reported as such.
    pub fn load(
        connection: &Connection,
        dim: usize,
        cutoff: Option<i64>,
    ) -> Result<Dataset, StoreError> {
        let mut statement = connection.prepare(
            "SELECT o.rowid, o.route_id, o.skill, o.reward, o.cosine, o.success_rate, o.log_uses,
                    r.query_embedding, o.skill_embedding
             FROM routing_outcomes AS o JOIN routing_routes AS r ON r.id = o.route_id
             WHERE r.dim = ?1 AND o.rowid <= ?2
             ORDER BY o.rowid",
        )?;
        let mut rows = statement.query(params![dim as i64, cutoff.unwrap_or(i64::MAX)])?;
        let mut examples = Vec::new();
        let mut last_rowid = 0;
        while let Some(row) = rows.next()? {
            last_rowid = row.get(0)?;
            let route_id: String = row.get(1)?;
            let query = embedding(row.get(7)?, dim, &route_id, "query embedding")?;
            let skill_embedding = embedding(row.get(8)?, dim, &route_id, "skill embedding")?;
            examples.push(Example {
                skill: row.get(2)?,
                reward: row.get::<_, f64>(3)? as f32,
                features: CandidateFeatures {
                    cosine: row.get::<_, f64>(4)? as f32,
                    success_rate: row.get::<_, f64>(5)? as f32,
                    log_uses: row.get::<_, f64>(6)? as f32,
                },
                query,
                skill_embedding,
                route_id,
            });
        }
        Ok(Dataset {
            digest: digest(dim, &examples),
            examples,
            cutoff: last_rowid,
            dim,
        })
    }

    /// The examples at `indices` (a [`Split`]'s lists), in that order.
    ///
    /// # Panics
    /// If an index is out of range: the indices are of another dataset.
    pub fn select<'a>(&'a self, indices: &'a [usize]) -> impl Iterator<Item = &'a Example> + 'a {
        indices.iter().map(|&index| &self.examples[index])
    }
}

/// A logged embedding, checked to have the dataset's dimension.
fn embedding(
    blob: Vec<u8>,
    dim: usize,
    route_id: &str,
    what: &str,
) -> Result<Vec<f32>, StoreError> {
    let corrupt = || StoreError::Corrupt {
        what: format!("{what} of route {route_id}"),
        message: format!("{} bytes, expected {dim} little-endian f32", blob.len()),
    };
    match blob_to_floats(&blob) {
        Some(floats) if floats.len() == dim => Ok(floats),
        _ => Err(corrupt()),
    }
}

/// [`Dataset::digest`], laid out as [`Dataset::load`] documents.
fn digest(dim: usize, examples: &[Example]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(DIGEST_DOMAIN);
    hasher.update((dim as u32).to_le_bytes());
    for example in examples {
        for text in [&example.route_id, &example.skill] {
            hasher.update((text.len() as u32).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        let CandidateFeatures {
            cosine,
            success_rate,
            log_uses,
        } = example.features;
        for value in [example.reward, cosine, success_rate, log_uses]
            .iter()
            .chain(&example.query)
            .chain(&example.skill_embedding)
        {
            hasher.update(value.to_le_bytes());
        }
    }
    format!("{:x}", hasher.finalize())
}

/// A dataset's examples split into those a job trains on and those it measures on, both as
/// indices into [`Dataset::examples`] in dataset order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Examples trained on, one update each per round.
    pub train: Vec<usize>,
    /// Examples never trained on, on which both the trained and the live head are measured.
    pub heldout: Vec<usize>,
}

impl Split {
    /// The split of `dataset` by [`split_rule`]: each example's side depends on its route id
    /// alone, so it is the same on every load and for every cutoff.
    pub fn of(dataset: &Dataset) -> Split {
        let (heldout, train) = (0..dataset.examples.len())
            .partition(|&index| is_heldout(&dataset.examples[index].route_id));
        Split { train, heldout }
    }
}

/// Whether the example of `route_id` is held out (see [`HELDOUT_FIRST_BYTE_BELOW`]).
fn is_heldout(route_id: &str) -> bool {
    Sha256::digest(route_id.as_bytes())[0] < HELDOUT_FIRST_BYTE_BELOW
}

/// The split rule in words, for the job's configuration digest: a change of rule must change
/// the digest, so it is spelt out rather than named.
pub fn split_rule() -> String {
    format!(
        "held out: sha256(utf-8 route_id)[0] < {HELDOUT_FIRST_BYTE_BELOW}; train: the rest; \
         both in routing_outcomes rowid order"
    )
}

/// How well a head's score `p` predicts `y = (reward > 0)` on a set of examples.
///
/// `loss` and `accuracy` read `p` as the chance of success, which [`UpdateRule::CrossEntropy`]
/// trains it to be and the REINFORCE step does not: that step reads `p` as the chance of
/// picking the skill (see [`RoutingHead::apply_outcome`]), so it pushes a pair that helps more
/// often than the baseline towards `p = 1` and one that helps less often down to
/// [`REINFORCE_SCORE_FLOOR`](crate::routing::REINFORCE_SCORE_FLOOR), however often each helps.
/// `auc` asks only whether successes score above failures, which is what ranking needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// Mean binary cross-entropy (natural log), `p` clamped to `[1e-7, 1 − 1e-7]`.
    pub loss: f64,
    /// Share of examples with `(p > 0.5) == y`, in 0..1.
    pub accuracy: f64,
    /// Area under the ROC curve of `p`: the chance that a success scores above a failure
    /// (ties count half), in 0..1; `None` when every example has the same outcome.
    pub auc: Option<f64>,
}

/// The scores behind [`Metrics`], as they are computed.
#[derive(Debug, Default)]
struct Scores {
    loss: f64,
    correct: usize,
    /// `(p, y)` per example, for the AUC.
    scored: Vec<(f32, bool)>,
}

impl Scores {
    fn add(&mut self, p: f32, outcome: Outcome) {
        let success = outcome == Outcome::Success;
        let clamped = f64::from(p).clamp(PROBABILITY_EPSILON, 1.0 - PROBABILITY_EPSILON);
        self.loss -= if success {
            clamped.ln()
        } else {
            (1.0 - clamped).ln()
        };
        self.correct += usize::from((p > 0.5) == success);
        self.scored.push((p, success));
    }

    /// The mean loss alone (what a round reports), or `None` over no examples.
    fn mean_loss(&self) -> Option<f64> {
        (!self.scored.is_empty()).then(|| self.loss / self.scored.len() as f64)
    }

    /// The metrics, or `None` over no examples.
    fn metrics(mut self) -> Option<Metrics> {
        let loss = self.mean_loss()?;
        let count = self.scored.len() as f64;
        Some(Metrics {
            loss,
            accuracy: self.correct as f64 / count,
            auc: auc(&mut self.scored),
        })
    }
}

/// The Mann–Whitney form of the AUC: successes' mean rank among all scores (ties sharing
/// their average rank), rescaled to 0..1.
fn auc(scored: &mut [(f32, bool)]) -> Option<f64> {
    let successes = scored.iter().filter(|(_, success)| *success).count();
    let failures = scored.len() - successes;
    if successes == 0 || failures == 0 {
        return None;
    }
    scored.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum, mut ranked) = (0.0f64, 0usize);
    for tied in scored.chunk_by(|a, b| a.0 == b.0) {
        let average_rank = ranked as f64 + (tied.len() as f64 + 1.0) / 2.0;
        let tied_successes = tied.iter().filter(|(_, success)| *success).count();
        rank_sum += average_rank * tied_successes as f64;
        ranked += tied.len();
    }
    let successes = successes as f64;
    Some((rank_sum - successes * (successes + 1.0) / 2.0) / (successes * failures as f64))
}

/// Why training or measuring cannot proceed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainingError {
    /// No example to learn from or to measure on; a job maps this to `no_data`.
    #[error(
        "the {what} is empty: the routing log holds too few outcomes of this embedding \
         dimension to train and measure a head; report more outcomes, then start a new job"
    )]
    NoExamples {
        /// "training split" or "evaluation set".
        what: &'static str,
    },
    /// The head and the examples are of different dimensions.
    #[error(transparent)]
    Routing(#[from] RoutingError),
}

/// The [`Metrics`] of `head` on `examples` (typically `dataset.select(&split.heldout)`).
pub fn evaluate<'a>(
    head: &RoutingHead,
    examples: impl IntoIterator<Item = &'a Example>,
) -> Result<Metrics, TrainingError> {
    let mut scores = Scores::default();
    for example in examples {
        scores.add(example.forward_pass(head)?.rl, example.outcome());
    }
    scores.metrics().ok_or(TrainingError::NoExamples {
        what: "evaluation set",
    })
}

/// The step a round takes per training example.
///
/// Both are offered because the spec's rule does not train what the spec's metrics measure.
/// Both learn the unit tests' noiseless problem (the `rounds_of_…_a_learnable_problem` tests).
/// On the routing bandit's log, where the right skill fails one time in ten
/// (`cargo bench --bench jobs`), [`UpdateRule::Reinforce`] ranks about as well as the live head
/// after one round, but its held-out loss rises after that round (see [`Metrics`]), while
/// [`UpdateRule::CrossEntropy`] lowers it round after round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateRule {
    /// The live head's REINFORCE step ([`RoutingHead::apply_outcome`]), as the jobs spec
    /// asks: `p` read as the chance of picking the skill, so not calibrated (see [`Metrics`]).
    Reinforce,
    /// A cross-entropy step ([`RoutingHead::apply_outcome_cross_entropy`]): `p` read as the
    /// chance that the skill helps, which is what [`Metrics`] measure.
    CrossEntropy,
}

impl UpdateRule {
    /// A stable name, for the job's configuration digest.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateRule::Reinforce => "reinforce",
            UpdateRule::CrossEntropy => "cross_entropy",
        }
    }

    fn apply(
        self,
        head: &mut RoutingHead,
        pass: &ForwardPass,
        outcome: Outcome,
    ) -> Result<u64, RoutingError> {
        match self {
            UpdateRule::Reinforce => head.apply_outcome(pass, outcome),
            UpdateRule::CrossEntropy => head.apply_outcome_cross_entropy(pass, outcome),
        }
    }
}

/// The step jobs train with: cross-entropy, because it learns what the job's metrics (and the
/// person's choice to promote) measure, while the live head's REINFORCE step, replayed round
/// after round over a noisy log, does not (see [`UpdateRule`] and `cargo bench --bench jobs`).
/// Part of a job's configuration digest.
pub const TRAINING_RULE: UpdateRule = UpdateRule::CrossEntropy;

/// Where a round is, handed to [`train_round`]'s callback after each mini-batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchProgress {
    /// Mini-batches of this round done so far, 1..=`batches`.
    pub batch: usize,
    /// Mini-batches in the round.
    pub batches: usize,
}

/// What [`train_round`]'s callback wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Go on with the next mini-batch (or finish the round).
    Continue,
    /// Stop the round now (a cancel); the head stays as it was before the round.
    Stop,
}

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoundOutcome {
    /// Every training example was learned from; the head holds the new weights.
    Completed {
        /// Mean binary cross-entropy of the training examples, each scored just before its
        /// own update.
        train_loss: f64,
        /// Updates made: the size of the training split.
        examples_trained: usize,
    },
    /// The callback asked to stop; the head is unchanged.
    Stopped,
}

/// One round: a pass over `split.train` in dataset order, each example replayed through the
/// head's current weights ([`RoutingHead::forward_pass`]) and learned from by one step of
/// `rule`.
///
/// `between_batches` is called after every [`BATCH_SIZE`] examples (and after the last) with
/// the progress so far. To pause, block inside it; to cancel, return [`Control::Stop`]. The
/// round works on a copy of `head` and replaces `head` only once complete, so a stopped round
/// leaves it exactly as it was: at the last committed round. `head` needs no skills, and
/// should have none: every update also patches the blocks of the skills it knows.
///
/// # Panics
/// If `split` is not of `dataset` (an index out of range).
pub fn train_round(
    head: &mut RoutingHead,
    dataset: &Dataset,
    split: &Split,
    rule: UpdateRule,
    mut between_batches: impl FnMut(BatchProgress) -> Control,
) -> Result<RoundOutcome, TrainingError> {
    if head.dim() != dataset.dim {
        return Err(RoutingError::DimensionMismatch {
            what: "dataset",
            expected: head.dim(),
            actual: dataset.dim,
        }
        .into());
    }
    let mut trained = head.clone();
    let batches = split.train.len().div_ceil(BATCH_SIZE);
    let mut scores = Scores::default();
    for (index, batch) in split.train.chunks(BATCH_SIZE).enumerate() {
        for example in dataset.select(batch) {
            let pass = example.forward_pass(&trained)?;
            scores.add(pass.rl, example.outcome());
            rule.apply(&mut trained, &pass, example.outcome())?;
        }
        let progress = BatchProgress {
            batch: index + 1,
            batches,
        };
        if between_batches(progress) == Control::Stop {
            return Ok(RoundOutcome::Stopped);
        }
    }
    let train_loss = scores.mean_loss().ok_or(TrainingError::NoExamples {
        what: "training split",
    })?;
    *head = trained;
    Ok(RoundOutcome::Completed {
        train_loss,
        examples_trained: split.train.len(),
    })
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::routing::{floats_to_blob, HeadConfig};
    use crate::store::Store;

    const DIM: usize = 8;

    /// Runs `work` on an in-memory store, which answers at once.
    fn with_connection<R: Send + 'static>(
        store: &Store,
        work: impl FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> R {
        store
            .call(work)
            .now_or_never()
            .expect("an in-memory store answers at once")
            .expect("the statement runs")
    }

    /// Logs a route and its outcome as the routing service does (`routing::records`).
    fn log_outcome(connection: &Connection, example: &Example) -> Result<(), StoreError> {
        connection.execute(
            "INSERT INTO routing_routes (id, created_at, query, embedder, dim, query_embedding,
                 head_updates, warmed_up, top_k, candidates)
             VALUES (?1, 0, 'a request', 'hashed', ?2, ?3, 0, 0, 1, '[]')",
            params![
                example.route_id,
                example.query.len() as i64,
                floats_to_blob(&example.query)
            ],
        )?;
        connection.execute(
            "INSERT INTO routing_outcomes (route_id, skill, outcome, reward, rank, skill_embedding,
                 cosine, success_rate, log_uses, rl, created_at)
             VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8, 0.5, 0)",
            params![
                example.route_id,
                example.skill,
                example.outcome().as_str(),
                example.reward,
                floats_to_blob(&example.skill_embedding),
                example.features.cosine,
                example.features.success_rate,
                example.features.log_uses,
            ],
        )?;
        Ok(())
    }

    fn log_all(store: &Store, examples: Vec<Example>) {
        with_connection(store, move |connection| {
            examples
                .iter()
                .try_for_each(|example| log_outcome(connection, example))
        });
    }

    fn load(store: &Store, dim: usize, cutoff: Option<i64>) -> Dataset {
        with_connection(store, move |connection| {
            Dataset::load(connection, dim, cutoff)
        })
    }

    fn unit(vector: Vec<f32>) -> Vec<f32> {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        vector.into_iter().map(|x| x / norm).collect()
    }

    /// A learnable problem: requests come from two clusters, each around its own skill's
    /// embedding; the agent picks either skill at random, and only the cluster's own skill
    /// helps. Cosine and the features tell the two apart, so a head can learn who helps whom.
    fn clustered_examples(count: usize, seed: u64, first_id: usize) -> Vec<Example> {
        let mut rng = StdRng::seed_from_u64(seed);
        let skills: [Vec<f32>; 2] = std::array::from_fn(|skill| {
            (0..DIM)
                .map(|axis| f32::from(u8::from(axis == skill)))
                .collect()
        });
        (0..count)
            .map(|index| {
                let cluster = rng.random_range(0..2);
                let query = unit(
                    skills[cluster]
                        .iter()
                        .map(|x| x + rng.random_range(-0.4f32..0.4))
                        .collect(),
                );
                let chosen = rng.random_range(0..2);
                let cosine = query.iter().zip(&skills[chosen]).map(|(a, b)| a * b).sum();
                Example {
                    route_id: format!("route-{:05}", first_id + index),
                    skill: format!("skill-{chosen}"),
                    query,
                    skill_embedding: skills[chosen].clone(),
                    features: CandidateFeatures {
                        cosine,
                        success_rate: 0.5,
                        log_uses: 0.0,
                    },
                    reward: if chosen == cluster { 1.0 } else { -1.0 },
                }
            })
            .collect()
    }

    fn store_with(examples: Vec<Example>) -> Store {
        let store = Store::open_in_memory().unwrap();
        log_all(&store, examples);
        store
    }

    fn completed(outcome: RoundOutcome) -> (f64, usize) {
        match outcome {
            RoundOutcome::Completed {
                train_loss,
                examples_trained,
            } => (train_loss, examples_trained),
            RoundOutcome::Stopped => panic!("the round was not stopped"),
        }
    }

    fn train(
        head: &mut RoutingHead,
        dataset: &Dataset,
        split: &Split,
        rule: UpdateRule,
    ) -> (f64, usize) {
        completed(train_round(head, dataset, split, rule, |_| Control::Continue).unwrap())
    }

    #[test]
    fn a_dataset_is_the_logged_outcomes_of_its_dimension_in_order() {
        let examples = clustered_examples(5, 1, 0);
        let store = store_with(examples.clone());
        log_all(
            &store,
            vec![Example {
                route_id: "another-embedder".into(),
                query: vec![1.0; DIM + 1],
                skill_embedding: vec![1.0; DIM + 1],
                ..examples[0].clone()
            }],
        );
        let dataset = load(&store, DIM, None);
        assert_eq!(dataset.examples, examples);
        assert_eq!(dataset.dim, DIM);
        assert_eq!(dataset.cutoff, 5);
        assert_eq!(load(&store, DIM + 1, None).examples.len(), 1);
    }

    #[test]
    fn the_digest_is_reproducible_and_changes_with_any_row() {
        let store = store_with(clustered_examples(20, 2, 0));
        let before = load(&store, DIM, None);
        assert_eq!(before.digest.len(), 64);
        assert_eq!(load(&store, DIM, None).digest, before.digest);

        let change = |statement: &'static str| {
            with_connection(&store, move |connection| {
                Ok(connection.execute(statement, [])?)
            })
        };
        for (edit, undo) in [
            (
                "UPDATE routing_outcomes SET cosine = cosine + 0.001 WHERE rowid = 7",
                "UPDATE routing_outcomes SET cosine = cosine - 0.001 WHERE rowid = 7",
            ),
            (
                "UPDATE routing_outcomes SET reward = -reward WHERE rowid = 3",
                "UPDATE routing_outcomes SET reward = -reward WHERE rowid = 3",
            ),
            (
                "UPDATE routing_outcomes SET skill = skill || 'x' WHERE rowid = 20",
                "UPDATE routing_outcomes SET skill = substr(skill, 1, length(skill) - 1) WHERE rowid = 20",
            ),
            (
                "UPDATE routing_routes SET query_embedding = zeroblob(32) WHERE id = 'route-00000'",
                "",
            ),
        ] {
            assert_eq!(change(edit), 1, "{edit}");
            assert_ne!(load(&store, DIM, None).digest, before.digest, "{edit}");
            if !undo.is_empty() {
                change(undo);
                assert_eq!(load(&store, DIM, None).digest, before.digest, "{undo}");
            }
        }
    }

    #[test]
    fn a_cutoff_keeps_the_dataset_of_admission() {
        let store = store_with(clustered_examples(30, 3, 0));
        let admitted = load(&store, DIM, None);
        assert_eq!(admitted.cutoff, 30);
        log_all(&store, clustered_examples(10, 4, 30));

        let again = load(&store, DIM, Some(admitted.cutoff));
        assert_eq!(again, admitted);
        let latest = load(&store, DIM, None);
        assert_eq!((latest.examples.len(), latest.cutoff), (40, 40));
        assert_ne!(latest.digest, admitted.digest);
    }

    #[test]
    fn a_corrupt_embedding_is_reported_with_its_route() {
        let store = store_with(clustered_examples(3, 5, 0));
        with_connection(&store, |connection| {
            Ok(connection.execute(
                "UPDATE routing_outcomes SET skill_embedding = zeroblob(12) WHERE rowid = 2",
                [],
            )?)
        });
        let error = store
            .call(|connection| Dataset::load(connection, DIM, None))
            .now_or_never()
            .unwrap()
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("skill embedding of route route-00001"),
            "{error}"
        );
    }

    #[test]
    fn the_split_follows_the_rule_and_does_not_move_as_the_log_grows() {
        let store = store_with(clustered_examples(1_000, 6, 0));
        let small = load(&store, DIM, Some(400));
        let large = load(&store, DIM, None);
        let (small_split, large_split) = (Split::of(&small), Split::of(&large));
        assert_eq!(Split::of(&large), large_split);

        for (index, example) in large.examples.iter().enumerate() {
            let first_byte = Sha256::digest(example.route_id.as_bytes())[0];
            assert_eq!(
                large_split.heldout.contains(&index),
                first_byte < HELDOUT_FIRST_BYTE_BELOW
            );
        }
        let mut all: Vec<usize> = large_split
            .train
            .iter()
            .chain(&large_split.heldout)
            .copied()
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..1_000).collect::<Vec<_>>());
        assert!(large_split.train.is_sorted() && large_split.heldout.is_sorted());
        let share = large_split.heldout.len() as f64 / 1_000.0;
        assert!((0.15..0.25).contains(&share), "{share}");

        // The first 400 examples fall on the same sides in both.
        let prefix = |indices: &[usize]| {
            indices
                .iter()
                .copied()
                .filter(|&i| i < 400)
                .collect::<Vec<_>>()
        };
        assert_eq!(small_split.train, prefix(&large_split.train));
        assert_eq!(small_split.heldout, prefix(&large_split.heldout));
        assert!(split_rule().contains(&HELDOUT_FIRST_BYTE_BELOW.to_string()));
    }

    /// The held-out metrics of a fresh head and after each of `rounds` rounds of `rule`.
    fn metrics_by_round(rule: UpdateRule, rounds: usize) -> Vec<Metrics> {
        let store = store_with(clustered_examples(600, 7, 0));
        let dataset = load(&store, DIM, None);
        let split = Split::of(&dataset);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        let mut by_round = vec![evaluate(&head, dataset.select(&split.heldout)).unwrap()];
        for _ in 0..rounds {
            let (_, examples_trained) = train(&mut head, &dataset, &split, rule);
            assert_eq!(examples_trained, split.train.len());
            by_round.push(evaluate(&head, dataset.select(&split.heldout)).unwrap());
        }
        assert_eq!(head.update_count(), (rounds * split.train.len()) as u64);
        by_round
    }

    #[test]
    fn rounds_of_cross_entropy_steps_lower_the_heldout_loss_on_a_learnable_problem() {
        let by_round = metrics_by_round(UpdateRule::CrossEntropy, 5);
        assert!(
            by_round.windows(2).all(|pair| pair[1].loss < pair[0].loss),
            "{by_round:?}"
        );
        assert!(by_round[0].accuracy < 0.8, "{by_round:?}");
        assert!(by_round[5].accuracy > 0.95, "{by_round:?}");
        assert!(by_round[5].loss < by_round[0].loss / 5.0, "{by_round:?}");
    }

    /// The live head's REINFORCE step learns this noiseless log too, half of whose outcomes
    /// are for the wrong skill. Before a failure's step stopped at `REINFORCE_SCORE_FLOOR` it
    /// pushed every score to 0 here: the held-out loss rose from the first round (above 5 by
    /// the fifth) and the ranking was lost by the third.
    #[test]
    fn rounds_of_reinforce_steps_also_learn_a_learnable_problem() {
        let by_round = metrics_by_round(UpdateRule::Reinforce, 5);
        assert!(
            by_round.windows(2).all(|pair| pair[1].loss < pair[0].loss),
            "{by_round:?}"
        );
        assert!(by_round[5].accuracy > 0.95, "{by_round:?}");
        assert_eq!(by_round[5].auc, Some(1.0), "{by_round:?}");
        assert!(by_round[5].loss < by_round[0].loss / 5.0, "{by_round:?}");
    }

    #[test]
    fn the_auc_counts_ties_half_and_needs_both_outcomes() {
        let mut scored = [(0.9, true), (0.4, false), (0.1, false), (0.4, true)];
        assert_eq!(auc(&mut scored), Some(3.5 / 4.0));
        assert_eq!(auc(&mut [(0.2, true), (0.7, true)]), None);
        assert_eq!(auc(&mut [(0.2, false)]), None);
    }

    #[test]
    fn the_same_dataset_trains_bit_identical_heads() {
        let store = store_with(clustered_examples(300, 8, 0));
        let dataset = load(&store, DIM, None);
        let split = Split::of(&dataset);
        for rule in [UpdateRule::Reinforce, UpdateRule::CrossEntropy] {
            let run = || {
                let mut head = RoutingHead::new(DIM, HeadConfig::default());
                for _ in 0..3 {
                    train(&mut head, &dataset, &split, rule);
                }
                head.snapshot().to_bytes()
            };
            assert_eq!(run(), run(), "{rule:?}");
        }
    }

    #[test]
    fn a_stop_between_batches_leaves_the_head_as_it_was() {
        let store = store_with(clustered_examples(500, 9, 0));
        let dataset = load(&store, DIM, None);
        let split = Split::of(&dataset);
        let batches = split.train.len().div_ceil(BATCH_SIZE);
        assert!(batches > 3);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        train(&mut head, &dataset, &split, UpdateRule::CrossEntropy);
        let before = head.snapshot().to_bytes();

        let mut seen = Vec::new();
        let outcome = train_round(
            &mut head,
            &dataset,
            &split,
            UpdateRule::CrossEntropy,
            |progress| {
                seen.push(progress);
                if progress.batch == 2 {
                    Control::Stop
                } else {
                    Control::Continue
                }
            },
        )
        .unwrap();
        assert_eq!(outcome, RoundOutcome::Stopped);
        assert_eq!(seen, [1, 2].map(|batch| BatchProgress { batch, batches }));
        assert_eq!(head.snapshot().to_bytes(), before);

        // Every batch reports, the last one included.
        seen.clear();
        completed(
            train_round(
                &mut head,
                &dataset,
                &split,
                UpdateRule::CrossEntropy,
                |progress| {
                    seen.push(progress);
                    Control::Continue
                },
            )
            .unwrap(),
        );
        assert_eq!(
            seen,
            (1..=batches)
                .map(|batch| BatchProgress { batch, batches })
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn no_data_is_an_empty_dataset_and_a_clear_error() {
        let store = Store::open_in_memory().unwrap();
        let dataset = load(&store, DIM, None);
        assert!(dataset.examples.is_empty());
        assert_eq!((dataset.cutoff, dataset.dim), (0, DIM));
        assert_eq!(dataset.digest, load(&store, DIM, None).digest);
        let split = Split::of(&dataset);
        let mut head = RoutingHead::new(DIM, HeadConfig::default());
        let error = train_round(
            &mut head,
            &dataset,
            &split,
            UpdateRule::CrossEntropy,
            |_| Control::Continue,
        )
        .unwrap_err();
        assert_eq!(
            error,
            TrainingError::NoExamples {
                what: "training split"
            }
        );
        assert!(error.to_string().contains("report more outcomes"));
        assert_eq!(
            evaluate(&head, dataset.select(&split.heldout)).unwrap_err(),
            TrainingError::NoExamples {
                what: "evaluation set"
            }
        );
    }

    #[test]
    fn a_head_of_another_dimension_is_refused() {
        let store = store_with(clustered_examples(10, 10, 0));
        let dataset = load(&store, DIM, None);
        let split = Split::of(&dataset);
        let mut head = RoutingHead::new(DIM * 2, HeadConfig::default());
        let error = train_round(
            &mut head,
            &dataset,
            &split,
            UpdateRule::CrossEntropy,
            |_| Control::Continue,
        )
        .unwrap_err();
        assert!(matches!(
            error,
            TrainingError::Routing(RoutingError::DimensionMismatch {
                what: "dataset",
                ..
            })
        ));
        assert!(matches!(
            evaluate(&head, &dataset.examples),
            Err(TrainingError::Routing(_))
        ));
    }
}
