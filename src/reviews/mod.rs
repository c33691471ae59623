//! Idle-deferred conversation reviews (DESIGN §2.1).
//!
//! An agent submits a finished conversation; [`ReviewWorker::submit`] stores it in the durable
//! queue ([`queue`]). [`ReviewWorker::run`] is the dispatcher, the only place reviews start:
//! it takes the queued reviews whose back-off is over (those asked to run now first, then the
//! longest waiting), starts those bound for another endpoint at once, and asks the
//! [`IdleGate`] to admit the first one bound for the managed server: a deferred review waits
//! for a lull, one asked to run now (a `focus`, *run now*, defer mode `never`) only for a
//! ready server with a loaded model, and both hold the gate's one permit while they run.
//! Preempted work is requeued, never dropped; an endpoint's error is retried after a growing
//! back-off, a bounded number of times; a missing server is a wait, never a failure. The
//! dispatcher survives any single failure and sleeps, with no timer, while nothing is due.

pub mod prompt;
pub mod queue;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::config::{DeferMode, LearningConfig, ReviewsConfig};
use crate::events::{EngineEvent, EventBus};
use crate::gate::{earliest, Admission, IdleGate, Permit, Urgency};
use crate::llm::{ChatEndpoint, LlmClient, StreamPace};
use crate::settings::Settings;
use crate::store::{Store, StoreError};
use prompt::Window;
pub use queue::{
    Candidate, CandidateProposal, CandidateStatus, NewReview, RetryPolicy, Review, ReviewStatus,
    RunUsage,
};

/// The wait before retrying a review after its endpoint's first error; it doubles each time.
pub const RETRY_FIRST_BACKOFF: Duration = Duration::from_secs(5);
/// The longest wait between two retries of a review.
pub const RETRY_MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);
/// Pause before the dispatcher retries after its own database error.
const DISPATCH_ERROR_BACKOFF: Duration = Duration::from_secs(5);

/// What `POST /v1/reviews` did with a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Queued until a lull.
    Deferred,
    /// Runs now, or as soon as the server it needs can take it.
    Dispatched,
    /// Merged into the session's queued review.
    Coalesced,
}

/// What the dispatcher is doing, for the Overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Activity {
    /// Its state.
    pub state: ActivityState,
    /// Why it waits, or what it runs.
    pub reason: Option<String>,
}

/// The dispatcher's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityState {
    /// Nothing to do.
    Idle,
    /// Learning is paused.
    Paused,
    /// Work is due but waits (for a lull, the server, a model or a back-off).
    Waiting,
    /// Work runs on the managed server.
    Running,
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
    retry: RetryPolicy,
    activity: watch::Sender<Activity>,
    /// Reviews running on other endpoints, beside the dispatcher.
    elsewhere: Mutex<JoinSet<()>>,
}

impl ReviewWorker {
    /// A worker over the engine's parts; `reviews` gives the configured fallback endpoint,
    /// `learning` how often a failed run is retried.
    pub fn new(
        store: Store,
        gate: Arc<IdleGate>,
        llm: Arc<dyn LlmClient>,
        settings: watch::Receiver<Settings>,
        events: EventBus,
        reviews: &ReviewsConfig,
        learning: &LearningConfig,
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
            retry: RetryPolicy {
                max_failures: learning.max_retries.max(1),
                first_backoff: RETRY_FIRST_BACKOFF,
                max_backoff: RETRY_MAX_BACKOFF,
            },
            activity: watch::channel(Activity {
                state: ActivityState::Idle,
                reason: None,
            })
            .0,
            elsewhere: Mutex::default(),
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

    /// Stores a submitted review for the dispatcher, which runs it at once when it should not
    /// wait for a lull (a `focus`, defer mode `never`, another endpoint).
    pub async fn submit(&self, review: NewReview) -> Result<(String, Decision), StoreError> {
        let now = self.gate.clock().now_ms();
        let session_key = review.session_key.clone();
        let focused = review.focus.is_some();
        let managed = matches!(
            self.target(review.runtime.as_ref()).await,
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

    /// The dispatcher loop; returns when `shutdown` becomes true, stopping the reviews that run
    /// on other endpoints (the next start requeues them).
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
            // A closed settings or shutdown channel means the engine is gone: stop, rather than
            // wake on the closed channel again and again.
            let engine_gone = tokio::select! {
                _ = changes.changed() => false,
                changed = settings.changed() => changed.is_err(),
                changed = shutdown.changed() => changed.is_err(),
                _ = sleep => false,
            };
            if engine_gone {
                break;
            }
        }
        self.elsewhere_tasks().abort_all();
    }

    async fn dispatch_once(self: &Arc<Self>) -> Result<Step, StoreError> {
        self.reap_elsewhere();
        let settings = self.settings.borrow().clone();
        if settings.paused {
            self.set_activity(ActivityState::Paused, Some("learning is paused".into()));
            return Ok(Step::Wait(None));
        }
        let now = self.gate.clock().now_ms();
        let (due, retry_at_ms) = self
            .store
            .call(move |c| Ok((queue::dispatchable(c, now)?, queue::next_retry_at(c, now)?)))
            .await?;
        let retry_at = retry_at_ms.map(|at| Instant::now() + ms_until(now, at));
        if let (Some(review), false) = (due.first(), settings.reviews_enabled) {
            self.drop_review(
                &review.id,
                "dropped at dispatch: reviews are disabled in settings",
            )
            .await?;
            return Ok(Step::Again);
        }
        let mut managed = None;
        for review in due {
            match self.target(review.runtime.as_ref()).await {
                Target::Elsewhere(endpoint) => self.start_elsewhere(&review.id, endpoint).await,
                Target::Managed { model } => {
                    managed.get_or_insert((review, model));
                }
            }
        }
        let Some((review, model)) = managed else {
            match retry_at_ms {
                Some(at) => self.set_activity(
                    ActivityState::Waiting,
                    Some(format!(
                        "waiting: retrying after an error in {} s",
                        ms_until(now, at).as_secs().max(1)
                    )),
                ),
                None => self.set_activity(ActivityState::Idle, None),
            }
            return Ok(Step::Wait(retry_at));
        };
        let urgency = if review.urgent || settings.defer_mode == DeferMode::Never {
            Urgency::Now
        } else {
            Urgency::Deferred
        };
        match self
            .gate
            .admit(review.enqueued_at, model.as_deref(), urgency)
            .await
        {
            Admission::Wait(wait) => {
                self.set_activity(ActivityState::Waiting, Some(wait.reason));
                Ok(Step::Wait(earliest(&[wait.recheck_at, retry_at])))
            }
            Admission::Go(permit, go) => {
                let endpoint = ChatEndpoint {
                    base_url: go.reading.base_url.clone().unwrap_or_default(),
                    api_key: go
                        .reading
                        .api_key
                        .as_ref()
                        .map(|key| key.expose().to_string()),
                    model: go.model,
                };
                let yields = !go.aged && urgency == Urgency::Deferred;
                self.run_managed(&review.id, endpoint, permit, yields).await;
                Ok(Step::Again)
            }
        }
    }

    /// Runs on the managed server under the gate's permit; deferred work (`yields`) gives way
    /// to live turns, other clients and run-now requests, and is requeued.
    async fn run_managed(
        &self,
        id: &str,
        endpoint: ChatEndpoint,
        mut permit: Permit,
        yields: bool,
    ) {
        let Some(review) = self.claim(id).await else {
            return;
        };
        let doing = format!("reviewing session {}", review.session_key);
        self.set_activity(ActivityState::Running, Some(doing.clone()));
        let started = Instant::now();
        let pace = StreamPace::new();
        let work = self.execute(&review, &endpoint, Some(&pace));
        tokio::pin!(work);
        let result = if yields {
            tokio::select! {
                result = &mut work => result,
                preemption = permit.preempted(&pace) => {
                    // `work` is dropped here, which closes the stream and frees the server's slot.
                    self.requeue_preempted(&review, preemption.to_string()).await;
                    return;
                }
            }
        } else {
            // Runs to the end; a run-now request meanwhile waits for it, and the Overview says so.
            let mut run_now_requests = self.gate.run_now_requests();
            loop {
                tokio::select! {
                    result = &mut work => break result,
                    Ok(()) = run_now_requests.changed() => self.set_activity(
                        ActivityState::Running,
                        Some(format!("{doing}; the review asked to run now starts when it ends")),
                    ),
                }
            }
        };
        if result.is_ok() {
            self.gate.work_completed();
        }
        self.record_outcome(&review, result, started).await;
    }

    async fn requeue_preempted(&self, review: &Review, reason: String) {
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

    /// Claims a review bound for another endpoint and runs it beside the dispatcher.
    async fn start_elsewhere(self: &Arc<Self>, id: &str, endpoint: ChatEndpoint) {
        let Some(review) = self.claim(id).await else {
            return;
        };
        let worker = self.clone();
        self.elsewhere_tasks().spawn(async move {
            let started = Instant::now();
            let result = worker.execute(&review, &endpoint, None).await;
            worker.record_outcome(&review, result, started).await;
        });
    }

    fn elsewhere_tasks(&self) -> std::sync::MutexGuard<'_, JoinSet<()>> {
        self.elsewhere
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets finished reviews of other endpoints, logging a panic.
    fn reap_elsewhere(&self) {
        let mut tasks = self.elsewhere_tasks();
        while let Some(finished) = tasks.try_join_next() {
            if let Err(err) = finished {
                tracing::error!(error = %err, "a review on another endpoint panicked");
            }
        }
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

    fn set_activity(&self, state: ActivityState, reason: Option<String>) {
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

/// The time from `now_ms` to `at_ms` on the engine's clock.
fn ms_until(now_ms: i64, at_ms: i64) -> Duration {
    Duration::from_millis((at_ms - now_ms).max(0) as u64)
}
