//! [`Active`]: the routing head of one embedder — its skills embedded, where it came from, its
//! saves, and its successor when a promotion or a restore replaces it.
//!
//! Invariant: nothing here holds the service's lock. Embedding (which may be HTTP) is done by
//! [`embed_skills`] before a head is built or changed, and the results are applied after, so
//! whoever swaps a head in holds the lock only for SQLite and arithmetic.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::embedder::Embedder;
use super::head::{HeadConfig, RoutingHead, SkillStats};
use super::records::{
    self, HeadClaim, HeadRecord, HeadReplacement, HeadSave, StoredHead, VersionRecord,
};
use super::shared::SharedRoutingHead;
use super::snapshot::{HeadSnapshot, SnapshotError};
use super::status::{HeadSource, ReplacedHead};
use super::EmbedderKind;
use crate::engine::EngineError;
use crate::skills::{Skill, SkillSet};
use crate::store::{now_ms, Store, StoreError};

/// The embedder in use and the head of its dimension.
pub(super) struct Active {
    pub embedder: Arc<dyn Embedder>,
    pub kind: EmbedderKind,
    /// Why the managed server's embeddings are not used, when they are not.
    pub fallback_reason: Mutex<Option<String>>,
    pub head: Arc<SharedRoutingHead>,
    /// Bumped whenever the head is replaced (embedder change, promotion, restore); routes
    /// remember the epoch that ranked them, and only the head of that epoch learns from them.
    pub epoch: u64,
    pub head_origin: String,
    /// What trained this head first; saved with it.
    pub source: HeadSource,
    /// Which stored head this one may overwrite; shared with the store's writer thread.
    claim: Arc<Mutex<HeadClaim>>,
    /// Update count of the last save that happened.
    persisted: AtomicU64,
    /// Why the last save did not happen, until one does.
    save_problem: Mutex<Option<String>>,
    /// Each skill in the head and the text its embedding was made from.
    embedded: Mutex<HashMap<String, String>>,
}

/// A skill's embedding, made before it is applied to a head.
pub(super) struct EmbeddedSkill {
    pub name: String,
    pub text: String,
    pub vector: Vec<f32>,
}

/// What a head lacks to match a skill set: skills to embed (new or changed) and gone ones.
pub(super) struct SkillDiff<'a> {
    pub changed: Vec<&'a Skill>,
    pub gone: Vec<String>,
}

impl Active {
    /// A head for `embedder` holding `embedded`: the saved head of its dimension if there is a
    /// usable one, else a fresh head (the reason is in `head_origin`). SQLite only, no HTTP.
    #[allow(clippy::too_many_arguments)]
    pub async fn set_up(
        store: &Store,
        head_config: &HeadConfig,
        stats: &HashMap<String, SkillStats>,
        embedder: Arc<dyn Embedder>,
        kind: EmbedderKind,
        fallback_reason: Option<String>,
        embedded: Vec<EmbeddedSkill>,
        epoch: u64,
    ) -> Result<Active, ActiveError> {
        let dim = embedder.dim();
        let saved = store
            .call(move |connection| records::load_head(connection, dim))
            .await?;
        let (head, head_origin, persisted, claim, source) = match saved {
            None => (
                RoutingHead::new(dim, head_config.clone()),
                format!("fresh head: no saved head for {dim}-dimensional embeddings"),
                0,
                HeadClaim::fresh(now_ms(), None),
                HeadSource::Online,
            ),
            Some(stored) => match usable_head(head_config, &stored, dim) {
                Ok((head, source)) => {
                    let updates = head.update_count();
                    (
                        head,
                        format!(
                            "saved head loaded ({updates} updates, last saved with {})",
                            stored.embedder
                        ),
                        updates,
                        HeadClaim::loaded(stored.id),
                        source,
                    )
                }
                Err(err) => {
                    tracing::warn!(
                        "the saved {dim}-dimensional routing head is unusable ({err}); starting a \
                         fresh one, which replaces it at the next save"
                    );
                    (
                        RoutingHead::new(dim, head_config.clone()),
                        format!("fresh head: the saved one was unusable ({err})"),
                        0,
                        HeadClaim::fresh(now_ms(), Some(stored.id)),
                        HeadSource::Online,
                    )
                }
            },
        };
        let active = Active {
            embedder,
            kind,
            fallback_reason: Mutex::new(fallback_reason),
            head: Arc::new(SharedRoutingHead::new(head)),
            epoch,
            head_origin,
            source,
            claim: Arc::new(Mutex::new(claim)),
            persisted: AtomicU64::new(persisted),
            save_problem: Mutex::new(None),
            embedded: Mutex::new(HashMap::new()),
        };
        let stats_of = |name: &str| stats.get(name).copied().unwrap_or_default();
        active.apply(embedded, &stats_of)?;
        Ok(active)
    }

    /// The skills of `set` this head lacks or holds in an older version, and the ones gone.
    pub fn diff<'a>(&self, set: &'a SkillSet) -> SkillDiff<'a> {
        let embedded = lock(&self.embedded);
        SkillDiff {
            changed: set
                .skills
                .values()
                .filter(|skill| embedded.get(&skill.name) != Some(&embedding_text(skill)))
                .collect(),
            gone: embedded
                .keys()
                .filter(|name| !set.skills.contains_key(*name))
                .cloned()
                .collect(),
        }
    }

    /// Removes skills from the head.
    pub fn remove(&self, gone: &[String]) {
        for name in gone {
            self.head.remove_skill(name);
            lock(&self.embedded).remove(name);
        }
    }

    /// Puts embedded skills into the head. A skill new to the head gets its track record from
    /// `stats_of`; a changed one keeps the head's.
    pub fn apply(
        &self,
        embedded: Vec<EmbeddedSkill>,
        stats_of: &dyn Fn(&str) -> SkillStats,
    ) -> Result<(), ActiveError> {
        for skill in embedded {
            self.head
                .upsert_skill(&skill.name, &skill.vector)
                .map_err(|err| ActiveError::Embed(err.to_string()))?;
            let is_new = lock(&self.embedded)
                .insert(skill.name.clone(), skill.text)
                .is_none();
            if is_new {
                self.head
                    .set_skill_stats(&skill.name, stats_of(&skill.name));
            }
        }
        Ok(())
    }

    /// Whether the head learned since its last save that happened.
    pub fn unsaved(&self) -> bool {
        self.head.status().update_count != self.persisted()
    }

    /// Update count of the last save that happened.
    pub fn persisted(&self) -> u64 {
        self.persisted.load(Ordering::SeqCst)
    }

    /// Why the last save did not happen, until one does.
    pub fn save_problem(&self) -> Option<String> {
        lock(&self.save_problem).clone()
    }

    /// Saves the head from one snapshot, if its claim allows (see [`HeadClaim`]). Only a save
    /// that happened counts as one; a refused one is logged and reported by
    /// [`Active::save_problem`].
    pub async fn persist(&self, store: &Store) -> Result<(), EngineError> {
        let snapshot = self.head.snapshot();
        let update_count = snapshot.update_count;
        let dim = snapshot.dim;
        let bytes = snapshot.to_bytes();
        let embedder = self.embedder.name().to_owned();
        let source = self.source.to_string();
        let claim = self.claim.clone();
        let saved = store
            .call(move |connection| {
                let head = HeadRecord {
                    dim,
                    embedder: &embedder,
                    snapshot: &bytes,
                    update_count,
                    source: &source,
                };
                records::save_head(connection, &claim, &head, now_ms())
            })
            .await?;
        match saved {
            HeadSave::Saved => {
                self.persisted.fetch_max(update_count, Ordering::SeqCst);
                *lock(&self.save_problem) = None;
                tracing::debug!(dim, update_count, "routing head saved");
            }
            HeadSave::Superseded => {
                tracing::debug!(
                    dim,
                    update_count,
                    "routing head save superseded by a later one"
                );
            }
            HeadSave::Refused(reason) => {
                let problem = format!(
                    "not saved: {reason}; it keeps learning in memory, and the stored one is \
                     loaded at the next start"
                );
                tracing::warn!(dim, update_count, "routing head {problem}");
                *lock(&self.save_problem) = Some(problem);
            }
        }
        Ok(())
    }

    /// The head that replaces this one (a promotion or a restore): the snapshot's weights,
    /// baseline and update count, with this head's embedder and skills (their embeddings and
    /// stats, so it ranks every skill at once), a new identity ([`HeadClaim::succeeding`]) and
    /// the next epoch, so no route this head ranked trains it. It counts as saved at its update
    /// count: swap it in only once [`Active::replace_in_store`] saved it. No SQLite, no HTTP.
    pub fn successor(
        &self,
        snapshot: &HeadSnapshot,
        source: HeadSource,
        head_origin: String,
    ) -> Result<Active, SnapshotError> {
        let head = self.head.with_weights_of(snapshot)?;
        Ok(Active {
            embedder: self.embedder.clone(),
            kind: self.kind,
            fallback_reason: Mutex::new(lock(&self.fallback_reason).clone()),
            head: Arc::new(head),
            epoch: self.epoch + 1,
            head_origin,
            source,
            claim: Arc::new(Mutex::new(HeadClaim::succeeding(
                &lock(&self.claim),
                now_ms(),
            ))),
            persisted: AtomicU64::new(snapshot.update_count),
            save_problem: Mutex::new(None),
            embedded: Mutex::new(lock(&self.embedded).clone()),
        })
    }

    /// Replaces this head by its `next` one in SQLite, in one transaction: keeps this head (as
    /// it is now, unsaved updates included) in `routing_head_versions`, marked `replaced_by`,
    /// and saves `next` under its new identity. Call it holding the service's write lock, so
    /// no outcome moves this head meanwhile. A conflict, with nothing written, when the stored
    /// head is not this one's.
    pub async fn replace_in_store(
        &self,
        store: &Store,
        next: &Active,
        replaced_by: String,
    ) -> Result<ReplacedHead, EngineError> {
        let previous = self.head.snapshot();
        let previous_updates = previous.update_count;
        let previous_bytes = previous.to_bytes();
        let previous_id = lock(&self.claim).id;
        let previous_source = self.source.to_string();
        let snapshot = next.head.snapshot();
        let next_bytes = snapshot.to_bytes();
        let next_source = next.source.to_string();
        let embedder = next.embedder.name().to_owned();
        let claim = next.claim.clone();
        let replaced = store
            .call(move |connection| {
                let previous = VersionRecord {
                    dim: snapshot.dim,
                    snapshot: &previous_bytes,
                    update_count: previous_updates,
                    head_id: previous_id,
                    source: &previous_source,
                    replaced_by: &replaced_by,
                };
                let next = HeadRecord {
                    dim: snapshot.dim,
                    embedder: &embedder,
                    snapshot: &next_bytes,
                    update_count: snapshot.update_count,
                    source: &next_source,
                };
                records::replace_head(connection, &previous, &claim, &next, now_ms())
            })
            .await?;
        match replaced {
            HeadReplacement::Replaced { version_id } => Ok(ReplacedHead {
                version_id,
                source: self.source.clone(),
                update_count: previous_updates,
            }),
            HeadReplacement::Refused(reason) => Err(EngineError::Conflict(format!(
                "the live routing head was not replaced: {reason}, so the live head is not the \
                 stored one; restart Lull to load the stored head, then try again"
            ))),
        }
    }
}

/// The head and source of a saved row, or why it cannot be used.
fn usable_head(
    head_config: &HeadConfig,
    stored: &StoredHead,
    dim: usize,
) -> Result<(RoutingHead, HeadSource), String> {
    let source = HeadSource::parse(&stored.source)
        .ok_or_else(|| format!("its source {:?} is not online or job:<id>", stored.source))?;
    let head = HeadSnapshot::from_bytes(&stored.snapshot, dim)
        .and_then(|snapshot| RoutingHead::from_snapshot(head_config.clone(), &snapshot))
        .map_err(|err| err.to_string())?;
    Ok((head, source))
}

/// Embeds `skills` with `embedder`: may be HTTP, so call it with no lock held.
pub(super) async fn embed_skills(
    embedder: &dyn Embedder,
    skills: &[&Skill],
) -> Result<Vec<EmbeddedSkill>, String> {
    if skills.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<String> = skills.iter().map(|skill| embedding_text(skill)).collect();
    let vectors = embedder
        .embed(&texts)
        .await
        .map_err(|err| format!("cannot embed the skills: {err}"))?;
    if vectors.len() != texts.len() {
        return Err(format!(
            "embedder {} answered {} vectors for {} skills",
            embedder.name(),
            vectors.len(),
            texts.len()
        ));
    }
    Ok(skills
        .iter()
        .zip(texts)
        .zip(vectors)
        .map(|((skill, text), vector)| EmbeddedSkill {
            name: skill.name.clone(),
            text,
            vector,
        })
        .collect())
}

/// What a skill is embedded from: its name (hyphens read as spaces) and description.
fn embedding_text(skill: &Skill) -> String {
    format!("{}: {}", skill.name.replace('-', " "), skill.description)
}

/// Why a head for an embedder could not be set up.
#[derive(Debug)]
pub(super) enum ActiveError {
    /// The saved head could not be read.
    Store(StoreError),
    /// The embedder could not embed the skills.
    Embed(String),
}

impl From<StoreError> for ActiveError {
    fn from(err: StoreError) -> Self {
        ActiveError::Store(err)
    }
}

impl From<ActiveError> for EngineError {
    fn from(err: ActiveError) -> Self {
        match err {
            ActiveError::Store(err) => EngineError::Store(err),
            ActiveError::Embed(reason) => EngineError::Invalid(reason),
        }
    }
}

impl std::fmt::Display for ActiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActiveError::Store(err) => err.fmt(f),
            ActiveError::Embed(reason) => f.write_str(reason),
        }
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
