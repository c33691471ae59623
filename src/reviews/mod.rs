//! Idle-deferred conversation reviews (DESIGN §2.1).
//!
//! An agent submits a finished conversation; [`ReviewWorker::submit`] stores it in the durable
//! queue ([`queue`]) and decides: run at once (an explicit `focus`, defer mode `never`, or a
//! runtime that is not the managed server) or defer to a lull. [`ReviewWorker::run`] is the
//! dispatcher: it takes the oldest queued review, asks the [`IdleGate`] whether it may run, runs
//! it with the prompt of [`prompt`], and stores the candidates. Preempted work is requeued, never
//! dropped; a failed run is retried a bounded number of times; the dispatcher itself survives any
//! single failure and sleeps, with no timer, while the queue is empty.

pub mod prompt;
pub mod queue;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::config::{DeferMode, ReviewsConfig};
use crate::events::{EngineEvent, EventBus};
use crate::gate::{IdleGate, Verdict};
use crate::llm::{ChatEndpoint, LlmClient, StreamPace};
use crate::settings::Settings;
use crate::store::{Store, StoreError};
use prompt::Window;
pub use queue::{Candidate, CandidateProposal, NewReview, Review, ReviewStatus, RunUsage};

/// Failed runs (errors, broken model output) before a review is given up as `failed`.
pub const REVIEW_MAX_FAILURES: u32 = 3;
/// Pause before the dispatcher retries after its own database error.
const DISPATCH_ERROR_BACKOFF: Duration = Duration::from_secs(5);

/// What `POST /v1/reviews` did with a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Queued until a lull.
    Deferred,
    /// Running now.
    Dispatched,
    /// Merged into the session's queued review.
    Coalesced,
}

/// What the dispatcher is doing, for the Overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Activity {
    /// `idle`, `paused`, `waiting` or `running`.
    pub state: &'static str,
    /// Why it waits, or what it runs.
    pub reason: Option<String>,
}

/// Where a review will run.
enum Target {
    /// Not the managed server: run at once, ungated.
    Elsewhere(ChatEndpoint),
    /// The managed server, on the named model or its first loaded one.
    Managed { model: Option<String> },
}

/// Runs reviews; share it as `Arc<ReviewWorker>`.
pub struct ReviewWorker {
    store: Store,
    gate: Arc<IdleGate>,
    llm: Arc<dyn LlmClient>,
    settings: watch::Receiver<Settings>,
    events: EventBus,
    fallback: Option<ChatEndpoint>,
    activity: watch::Sender<Activity>,
}

impl ReviewWorker {
    /// A worker over the engine's parts; `reviews` gives the configured fallback endpoint.
    pub fn new(
        store: Store,
        gate: Arc<IdleGate>,
        llm: Arc<dyn LlmClient>,
        settings: watch::Receiver<Settings>,
        events: EventBus,
        reviews: &ReviewsConfig,
    ) -> ReviewWorker {
        let fallback = reviews.base_url.as_ref().map(|base_url| ChatEndpoint {
            base_url: base_url.clone(),
            api_key: reviews.api_key.clone(),
            model: reviews.model.clone().unwrap_or_default(),
        });
        ReviewWorker {
            store,
            gate,
            llm,
            settings,
            events,
            fallback,
            activity: watch::channel(Activity {
                state: "idle",
                reason: None,
            })
            .0,
        }
    }

    /// What the dispatcher is doing now.
    pub fn activity(&self) -> Activity {
        self.activity.borrow().clone()
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

    /// Stores a submitted review and starts it at once when it should not wait for a lull.
    pub async fn submit(
        self: &Arc<Self>,
        review: NewReview,
    ) -> Result<(String, Decision), StoreError> {
        let now = self.gate.clock().now_ms();
        let session_key = review.session_key.clone();
        let run_now =
            review.focus.is_some() || self.settings.borrow().defer_mode == DeferMode::Never || {
                let target = self.target(review.runtime.as_ref()).await;
                matches!(target, Target::Elsewhere(_))
            };
        let enqueued = self
            .store
            .call(move |c| queue::enqueue(c, &review, now))
            .await?;
        let decision = match (run_now, enqueued.coalesced) {
            (true, _) => Decision::Dispatched,
            (false, true) => Decision::Coalesced,
            (false, false) => Decision::Deferred,
        };
        self.events.emit(EngineEvent::ReviewQueued {
            review_id: enqueued.review_id.clone(),
            session_key,
            decision,
        });
        if run_now {
            let worker = self.clone();
            let id = enqueued.review_id.clone();
            tokio::spawn(async move { worker.run_now(&id).await });
        } else {
            self.gate.notify_change();
        }
        Ok((enqueued.review_id, decision))
    }

    /// Runs a queued review at once, ungated (an explicit request); false if it was not queued.
    pub async fn run_now(&self, id: &str) -> bool {
        let Some(review) = self.claim(id).await else {
            return false;
        };
        let endpoint = match self.target(review.runtime.as_ref()).await {
            Target::Elsewhere(endpoint) => Some(endpoint),
            Target::Managed { model } => self.managed_endpoint(model.as_deref()).await,
        };
        let Some(endpoint) = endpoint else {
            self.record_outcome(
                &review,
                Err("no model to run on: the managed server has no loaded model".into()),
                Instant::now(),
            )
            .await;
            return true;
        };
        let started = Instant::now();
        let result = self.execute(&review, &endpoint, None).await;
        self.record_outcome(&review, result, started).await;
        true
    }

    /// The dispatcher loop; returns when `shutdown` becomes true.
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<bool>) {
        let mut changes = self.gate.changed();
        let mut settings = self.settings.clone();
        while !*shutdown.borrow() {
            let recheck_at = match self.dispatch_once().await {
                Ok(Step::Again) => continue,
                Ok(Step::Wait(recheck_at)) => recheck_at,
                Err(err) => {
                    tracing::error!(error = %err, "review dispatcher failed; retrying");
                    Some(Instant::now() + DISPATCH_ERROR_BACKOFF)
                }
            };
            changes.mark_unchanged();
            settings.mark_unchanged();
            let sleep = async {
                match recheck_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = changes.changed() => {}
                _ = settings.changed() => {}
                _ = shutdown.changed() => {}
                _ = sleep => {}
            }
        }
    }

    async fn dispatch_once(self: &Arc<Self>) -> Result<Step, StoreError> {
        let settings = self.settings.borrow().clone();
        if settings.paused {
            self.set_activity("paused", Some("learning is paused".into()));
            return Ok(Step::Wait(None));
        }
        let Some(review) = self.store.call(|c| queue::oldest_queued(c)).await? else {
            self.set_activity("idle", None);
            return Ok(Step::Wait(None));
        };
        if !settings.reviews_enabled {
            self.drop_review(
                &review.id,
                "dropped at dispatch: reviews are disabled in settings",
            )
            .await?;
            return Ok(Step::Again);
        }
        let model = match self.target(review.runtime.as_ref()).await {
            Target::Managed { model }
                if review.focus.is_none() && settings.defer_mode == DeferMode::Auto =>
            {
                model
            }
            _ => {
                self.run_now(&review.id).await;
                return Ok(Step::Again);
            }
        };
        match self.gate.assess(review.enqueued_at, model.as_deref()).await {
            Verdict::Wait { reason, recheck_at } => {
                self.set_activity("waiting", Some(reason));
                Ok(Step::Wait(recheck_at))
            }
            Verdict::Go {
                model,
                aged,
                reading,
            } => {
                let endpoint = ChatEndpoint {
                    base_url: reading.base_url.clone().unwrap_or_default(),
                    api_key: reading.api_key.as_ref().map(|key| key.expose().to_string()),
                    model,
                };
                self.run_gated(&review.id, endpoint, aged).await;
                Ok(Step::Again)
            }
        }
    }

    /// Runs on the managed server under the gate's permit, yielding to live turns unless `aged`.
    async fn run_gated(&self, id: &str, endpoint: ChatEndpoint, aged: bool) {
        let mut permit = self.gate.begin(&endpoint.model).await;
        let Some(review) = self.claim(id).await else {
            return;
        };
        self.set_activity(
            "running",
            Some(format!("reviewing session {}", review.session_key)),
        );
        let started = Instant::now();
        let pace = StreamPace::new();
        let work = self.execute(&review, &endpoint, Some(&pace));
        let result = if aged {
            work.await
        } else {
            tokio::select! {
                result = work => result,
                preemption = permit.preempted(&pace) => {
                    // `work` is dropped here, which closes the stream and frees the server's slot.
                    let reason = preemption.to_string();
                    let now = self.gate.clock().now_ms();
                    let id = review.id.clone();
                    let requeue_reason = reason.clone();
                    match self.store.call(move |c| queue::requeue(c, &id, &requeue_reason, now)).await {
                        Ok(_) => self.events.emit(EngineEvent::ReviewPreempted { review_id: review.id.clone(), reason }),
                        Err(err) => tracing::error!(review = %review.id, error = %err, "cannot requeue a preempted review"),
                    }
                    return;
                }
            }
        };
        if result.is_ok() {
            self.gate.work_completed();
        }
        self.record_outcome(&review, result, started).await;
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
    ) -> Result<(Vec<CandidateProposal>, RunUsage), String> {
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

    async fn record_outcome(
        &self,
        review: &Review,
        result: Result<(Vec<CandidateProposal>, RunUsage), String>,
        started: Instant,
    ) {
        let now = self.gate.clock().now_ms();
        let id = review.id.clone();
        let stored = match result {
            Ok((proposals, usage)) => {
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
                tracing::warn!(review = %review.id, elapsed_ms = started.elapsed().as_millis() as u64, %error, "review run failed");
                let message = error.clone();
                self.store
                    .call(move |c| {
                        queue::record_failure(c, &id, &message, REVIEW_MAX_FAILURES, now)
                    })
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
        self.gate.notify_change();
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

    async fn target(&self, runtime: Option<&ChatEndpoint>) -> Target {
        let Some(endpoint) = runtime.or(self.fallback.as_ref()) else {
            return Target::Managed { model: None };
        };
        if self
            .gate
            .read_server()
            .await
            .is_managed_url(&endpoint.base_url)
        {
            let model = Some(endpoint.model.clone()).filter(|model| !model.is_empty());
            Target::Managed { model }
        } else {
            Target::Elsewhere(endpoint.clone())
        }
    }

    async fn managed_endpoint(&self, model: Option<&str>) -> Option<ChatEndpoint> {
        let reading = self.gate.read_server().await;
        let model = match model {
            Some(model) => model.to_string(),
            None => reading.first_loaded_model()?.id.clone(),
        };
        Some(ChatEndpoint {
            base_url: reading.base_url.clone()?,
            api_key: reading.api_key.as_ref().map(|key| key.expose().to_string()),
            model,
        })
    }

    fn set_activity(&self, state: &'static str, reason: Option<String>) {
        let activity = Activity { state, reason };
        let changed = self.activity.send_if_modified(|current| {
            if *current == activity {
                return false;
            }
            *current = activity.clone();
            true
        });
        if changed {
            self.events.emit(EngineEvent::LearningActivity { activity });
        }
    }
}

enum Step {
    Again,
    Wait(Option<Instant>),
}
