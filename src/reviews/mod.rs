//! Idle-deferred conversation reviews (DESIGN §2.1).
//!
//! An agent submits a finished conversation; [`ReviewQueue::submit`] stores it in the durable
//! queue ([`queue`]: one slot per session, the newest snapshot wins). A review is one
//! [`WorkKind`] of learning work: the [`crate::learning::Dispatcher`] decides when and where it
//! runs (at once for another endpoint, a `focus` or *run now*; in a lull on the managed server),
//! and this module builds its request, reads the answer into candidates and records the outcome.
//! Preempted work is requeued, never dropped; an endpoint's error is retried after a growing
//! back-off, a bounded number of times; a missing server is a wait, never a failure.

pub mod prompt;
pub mod queue;

use std::sync::Arc;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::Instant;
use ts_rs::TS;

use crate::config::{DeferMode, LearningConfig};
use crate::drafts::candidates::CandidateProposal;
use crate::events::{EngineEvent, EventBus};
use crate::gate::IdleGate;
use crate::learning::{Due, RetryPolicy, Target, Targets, WorkKind};
use crate::llm::{ChatEndpoint, LlmClient, StreamPace};
use crate::settings::Settings;
use crate::store::{Store, StoreError};
use prompt::Window;
pub use queue::{NewReview, Review, ReviewStatus, RunUsage};

/// What `POST /v1/reviews` did with a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Queued until a lull.
    Deferred,
    /// Runs now, or as soon as the server it needs can take it.
    Dispatched,
    /// Merged into the session's queued review.
    Coalesced,
}

/// The review queue and the review kind of learning work; share it as `Arc<ReviewQueue>`.
pub struct ReviewQueue {
    store: Store,
    gate: Arc<IdleGate>,
    llm: Arc<dyn LlmClient>,
    targets: Targets,
    settings: watch::Receiver<Settings>,
    events: EventBus,
    retry: RetryPolicy,
}

impl ReviewQueue {
    /// The queue over the engine's parts; `learning` gives how often a failed run is retried.
    pub fn new(
        store: Store,
        gate: Arc<IdleGate>,
        llm: Arc<dyn LlmClient>,
        targets: Targets,
        settings: watch::Receiver<Settings>,
        events: EventBus,
        learning: &LearningConfig,
    ) -> ReviewQueue {
        ReviewQueue {
            store,
            gate,
            llm,
            targets,
            settings,
            events,
            retry: RetryPolicy::with_max_failures(learning.max_retries),
        }
    }

    /// Requeues reviews a crash left `running`; call once at start, before [`ReviewWorker::run`].
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let now = self.gate.clock().now_ms();
        let ids = self
            .store
            .call(move |c| queue::recover_running(c, now))
            .await?;
        if !ids.is_empty() {
            tracing::info!(
                count = ids.len(),
                "requeued reviews interrupted by the last stop"
            );
        }
        Ok(ids.len())
    }

    /// Stores a submitted review for the dispatcher, which runs it at once when it should not
    /// wait for a lull (a `focus`, defer mode `never`, another endpoint).
    pub async fn submit(&self, review: NewReview) -> Result<(String, Decision), StoreError> {
        let now = self.gate.clock().now_ms();
        let session_key = review.session_key.clone();
        let focused = review.focus.is_some();
        let managed = matches!(
            self.targets.resolve(review.runtime.as_ref()).await,
            Target::Managed { .. }
        );
        let run_at_once =
            focused || !managed || self.settings.borrow().defer_mode == DeferMode::Never;
        let enqueued = self
            .store
            .call(move |c| queue::enqueue(c, &review, now))
            .await?;
        let decision = match (run_at_once, enqueued.coalesced) {
            (true, _) => Decision::Dispatched,
            (false, true) => Decision::Coalesced,
            (false, false) => Decision::Deferred,
        };
        self.events.emit(EngineEvent::ReviewQueued {
            review_id: enqueued.review_id.clone(),
            session_key,
            decision,
        });
        if focused && managed {
            self.gate.run_now_requested();
        } else {
            self.gate.notify_change();
        }
        Ok((enqueued.review_id, decision))
    }

    /// Asks for a queued review to run now (a person clicked *run now*): it skips the lull and
    /// any back-off, and deferred work running on the managed server yields to it. It still
    /// waits for a ready server with a loaded model. False if it was not queued.
    pub async fn run_now(&self, id: &str) -> Result<bool, StoreError> {
        let now = self.gate.clock().now_ms();
        let id_owned = id.to_string();
        let marked = self
            .store
            .call(move |c| queue::mark_urgent(c, &id_owned, now))
            .await?;
        if marked {
            self.gate.run_now_requested();
        }
        Ok(marked)
    }

    /// What `review` must read: all of it when focused (an explicit request) or new to Lull,
    /// else what the session's last finished review did not read.
    async fn window(&self, review: &Review) -> Window {
        if review.focus.is_some() {
            return Window::whole();
        }
        let (session, messages) = (review.session_key.clone(), review.messages.clone());
        match self
            .store
            .call(move |c| queue::reviewed_prefix(c, &session, &messages))
            .await
        {
            Ok(reviewed) => Window::after(reviewed),
            Err(err) => {
                tracing::warn!(review = %review.id, error = %err, "cannot read the session's review progress; reviewing all of it");
                Window::whole()
            }
        }
    }

    /// Drops a queued review; false if it was not queued.
    pub async fn drop_review(&self, id: &str, reason: &str) -> Result<bool, StoreError> {
        let now = self.gate.clock().now_ms();
        let (id_owned, reason_owned) = (id.to_string(), reason.to_string());
        let dropped = self
            .store
            .call(move |c| queue::drop_queued(c, &id_owned, &reason_owned, now))
            .await?;
        if dropped {
            self.events.emit(EngineEvent::ReviewDropped {
                review_id: id.to_string(),
                reason: reason.to_string(),
            });
        }
        Ok(dropped)
    }
}

impl WorkKind for ReviewQueue {
    type Item = Review;
    type Answer = (Vec<CandidateProposal>, RunUsage);

    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError> {
        Ok(queue::dispatchable(connection, now_ms)?
            .into_iter()
            .map(|review| Due {
                id: review.id,
                enqueued_at: review.enqueued_at,
                urgent: review.urgent,
                runtime: review.runtime,
            })
            .collect())
    }

    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        queue::next_retry_at(connection, now_ms)
    }

    fn refusal(&self, settings: &Settings) -> Option<&'static str> {
        (!settings.reviews_enabled)
            .then_some("dropped at dispatch: reviews are disabled in settings")
    }

    async fn drop_queued(&self, id: &str, reason: &str) -> bool {
        match self.drop_review(id, reason).await {
            Ok(dropped) => dropped,
            Err(err) => {
                tracing::error!(review = %id, error = %err, "cannot drop a review");
                false
            }
        }
    }

    fn doing(&self, review: &Review) -> String {
        format!("reviewing session {}", review.session_key)
    }

    async fn claim(&self, id: &str) -> Option<Review> {
        let now = self.gate.clock().now_ms();
        let id_owned = id.to_string();
        match self
            .store
            .call(move |c| queue::start(c, &id_owned, now))
            .await
        {
            Ok(Some(review)) => {
                self.events.emit(EngineEvent::ReviewStarted {
                    review_id: review.id.clone(),
                    attempt: review.attempts,
                });
                Some(review)
            }
            Ok(None) => None,
            Err(err) => {
                tracing::error!(review = %id, error = %err, "cannot start a review");
                None
            }
        }
    }

    async fn execute(
        &self,
        review: &Review,
        endpoint: &ChatEndpoint,
        pace: Option<&StreamPace>,
    ) -> Result<Self::Answer, String> {
        let started = Instant::now();
        let window = self.window(review).await;
        if window.first_new >= review.messages.len() {
            tracing::info!(review = %review.id, "nothing new since the session's last review");
            return Ok((Vec::new(), RunUsage::default()));
        }
        let request = prompt::review_request(&review.messages, window, review.focus.as_deref());
        let reply = self
            .llm
            .chat(endpoint, request, pace)
            .await
            .map_err(|err| err.to_string())?;
        let proposals =
            prompt::parse_answer(&reply.text, window.shown_from..review.messages.len())?;
        let usage = RunUsage {
            prompt_tokens: reply.prompt_tokens,
            completion_tokens: reply.completion_tokens,
            duration_ms: started.elapsed().as_millis() as u64,
        };
        Ok((proposals, usage))
    }

    async fn finish(&self, review: &Review, result: Result<Self::Answer, String>) {
        let now = self.gate.clock().now_ms();
        let id = review.id.clone();
        let stored = match result {
            Ok((proposals, usage)) => {
                tracing::info!(
                    review = %review.id,
                    session = %review.session_key,
                    proposals = proposals.len(),
                    duration_ms = usage.duration_ms,
                    "review done"
                );
                let finished = review.clone();
                self.store
                    .call(move |c| queue::complete(c, &finished, &proposals, usage, now))
                    .await
                    .map(|candidates| EngineEvent::ReviewCompleted {
                        review_id: review.id.clone(),
                        candidates,
                    })
            }
            Err(error) => {
                tracing::warn!(review = %review.id, %error, "review run failed");
                let (message, retry) = (error.clone(), self.retry);
                self.store
                    .call(move |c| queue::record_failure(c, &id, &message, &retry, now))
                    .await
                    .map(|status| EngineEvent::ReviewFailed {
                        review_id: review.id.clone(),
                        error,
                        will_retry: status != ReviewStatus::Failed,
                    })
            }
        };
        match stored {
            Ok(event) => self.events.emit(event),
            Err(err) => {
                tracing::error!(review = %review.id, error = %err, "cannot record a review's outcome")
            }
        }
    }

    async fn requeue(&self, review: &Review, reason: String) {
        let now = self.gate.clock().now_ms();
        let (id, requeue_reason) = (review.id.clone(), reason.clone());
        match self
            .store
            .call(move |c| queue::requeue(c, &id, &requeue_reason, now))
            .await
        {
            Ok(_) => self.events.emit(EngineEvent::ReviewPreempted {
                review_id: review.id.clone(),
                reason,
            }),
            Err(err) => {
                tracing::error!(review = %review.id, error = %err, "cannot requeue a preempted review")
            }
        }
    }
}
