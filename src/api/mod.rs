//! The agent-facing local API (DESIGN §4): a thin axum adapter over [`Engine`] operations.
//!
//! [`app`] builds the router without a socket, so tests drive it with `oneshot`; [`serve`] binds
//! it to loopback, writes `api.json`, and removes it again on a clean shutdown. Handlers only
//! extract, call the engine and map the result; guards live in [`guard`], the error shape in
//! [`error`], the bodies that are no engine type in [`bodies`].

mod bodies;
mod error;
mod files;
mod guard;
mod unique_keys;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{middleware, Json, Router};
use futures_util::{Stream, StreamExt};
use tokio_stream::wrappers::BroadcastStream;

pub use bodies::{
    CandidateList, DraftList, EditRequest, Health, JobList, JobRequest, ReasonRequest,
    ReviewAccepted, ReviewList, SkillList, TurnLease,
};
pub use error::{ApiError, ApiJson, ApiPath, ApiQuery, ErrorBody, ErrorDetail};
pub use files::{load_or_create_token, ApiDiscovery};
pub use guard::Guard;

use crate::drafts::candidates::CandidateStatus;
use crate::drafts::records::DraftStatus;
use crate::drafts::service::{DraftView, RolledBack};
use crate::engine::{check_session_key, Engine, ReviewSubmission, Status, VERSION};
use crate::error_code::ErrorCode;
use crate::events::EngineEvent;
use crate::jobs::records::JobKind;
use crate::jobs::service::JobView;
use crate::reviews::ReviewStatus;
use crate::routing::{Outcome, RouteAnswer};
use crate::settings::{Settings, SettingsPatch};

/// Largest request body accepted. Review transcripts are the big ones; 4 MiB holds hours of chat.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What every handler can reach.
#[derive(Clone)]
pub struct ApiState {
    /// The engine the API adapts.
    pub engine: Engine,
}

/// The API's router: guards, routes, and JSON 404/405 answers.
pub fn app(engine: Engine, guard: Guard) -> Router {
    let protected = Router::new()
        .route("/v1/status", get(status))
        .route("/v1/settings", get(get_settings).patch(patch_settings))
        .route("/v1/events", get(events))
        .route("/v1/turns/start", post(start_turn))
        .route("/v1/turns/finish", post(finish_turn))
        .route("/v1/reviews", post(submit_review).get(list_reviews))
        .route("/v1/reviews/{id}", axum::routing::delete(drop_review))
        .route("/v1/reviews/{id}/run-now", post(run_review_now))
        .route("/v1/candidates", get(list_candidates))
        .route("/v1/drafts", get(list_drafts))
        .route("/v1/drafts/{id}", get(get_draft))
        .route("/v1/drafts/{id}/approve", post(approve_draft))
        .route("/v1/drafts/{id}/reject", post(reject_draft))
        .route("/v1/drafts/{id}/edit", post(edit_draft))
        .route(
            "/v1/drafts/{id}/findings/{n}/dismiss",
            post(dismiss_finding),
        )
        .route("/v1/skills", get(list_skills))
        .route("/v1/skills/{name}/rollback", post(rollback_skill))
        .route("/v1/jobs", post(start_job).get(list_jobs))
        .route("/v1/jobs/{id}", get(get_job))
        .route("/v1/jobs/{id}/cancel", post(cancel_job))
        .route("/v1/jobs/{id}/resume", post(resume_job))
        .route("/v1/jobs/{id}/promote", post(promote_job))
        .route("/v1/route", post(route))
        .route("/v1/outcomes", post(record_outcome))
        .route_layer(middleware::from_fn_with_state(
            guard.clone(),
            guard::require_token,
        ));
    Router::new()
        .route("/v1/health", get(health))
        .merge(protected)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            guard,
            guard::check_host_origin_length,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(ApiState { engine })
}

/// Binds the configured loopback address, serves until `shutdown` completes, then cleans up.
///
/// `api.json` is written once the socket is bound and removed after the last connection closes.
pub async fn serve(
    engine: Engine,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let addr: SocketAddr = engine
        .config()
        .api
        .loopback_addr()
        .map_err(|message| anyhow::anyhow!("api.listen: {message}"))?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!(
            "cannot listen on {addr}; is another Lull running? (`lull status`), or set api.listen"
        )
    })?;
    let bound = listener.local_addr()?;
    let paths = engine.paths().clone();
    let token = load_or_create_token(&paths.api_token()).with_context(|| {
        format!(
            "cannot read or create the API token {}",
            paths.api_token().display()
        )
    })?;
    let guard = Guard {
        token: Arc::from(token),
        allowed_hosts: Guard::hosts_for(bound).into(),
    };
    let discovery = ApiDiscovery {
        base_url: format!("http://{bound}"),
        pid: std::process::id(),
    };
    discovery
        .write(&paths.api_json())
        .with_context(|| format!("cannot write {}", paths.api_json().display()))?;
    tracing::info!(address = %bound, "local API listening");

    let events = engine.events().clone();
    let result = axum::serve(listener, app(engine, guard))
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Ends open event streams, which would otherwise hold the graceful shutdown forever.
            events.emit(EngineEvent::EngineStopping);
        })
        .await;
    ApiDiscovery::remove_if_ours(&paths.api_json());
    result.context("the local API stopped with an error")
}

async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".to_string(),
        version: VERSION.to_string(),
    })
}

async fn status(State(state): State<ApiState>) -> Result<Json<Status>, ApiError> {
    Ok(Json(state.engine.status().await?))
}

async fn get_settings(State(state): State<ApiState>) -> Json<Settings> {
    Json(state.engine.settings())
}

async fn patch_settings(
    State(state): State<ApiState>,
    ApiJson(patch): ApiJson<SettingsPatch>,
) -> Result<Json<Settings>, ApiError> {
    Ok(Json(state.engine.update_settings(patch).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnStart {
    session_key: String,
}

async fn start_turn(
    State(state): State<ApiState>,
    ApiJson(turn): ApiJson<TurnStart>,
) -> Result<Json<TurnLease>, ApiError> {
    check_session_key(&turn.session_key)?;
    let lease_id = state.engine.start_turn();
    // The turn log (one line each way) is how a person, or a test, sees that an agent's every
    // LLM call was announced.
    tracing::info!(session = %turn.session_key, lease = %lease_id, "turn started");
    Ok(Json(TurnLease { lease_id }))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFinish {
    lease_id: String,
}

async fn finish_turn(
    State(state): State<ApiState>,
    ApiJson(turn): ApiJson<TurnFinish>,
) -> Result<StatusCode, ApiError> {
    state.engine.finish_turn(&turn.lease_id)?;
    tracing::info!(lease = %turn.lease_id, "turn finished");
    Ok(StatusCode::NO_CONTENT)
}

async fn submit_review(
    State(state): State<ApiState>,
    ApiJson(submission): ApiJson<ReviewSubmission>,
) -> Result<(StatusCode, Json<ReviewAccepted>), ApiError> {
    let session_key = submission.session_key.clone();
    let messages = submission.messages.len();
    let (review_id, decision) = state.engine.submit_review(submission).await?;
    tracing::info!(session = %session_key, review = %review_id, ?decision, messages, "review submitted");
    Ok((
        StatusCode::ACCEPTED,
        Json(ReviewAccepted {
            review_id,
            decision,
        }),
    ))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusFilter<T> {
    status: Option<T>,
}

async fn list_reviews(
    State(state): State<ApiState>,
    ApiQuery(filter): ApiQuery<StatusFilter<ReviewStatus>>,
) -> Result<Json<ReviewList>, ApiError> {
    let reviews = state.engine.reviews(filter.status).await?;
    Ok(Json(ReviewList { reviews }))
}

async fn run_review_now(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<StatusCode, ApiError> {
    state.engine.run_review_now(&id).await?;
    Ok(StatusCode::ACCEPTED)
}

async fn drop_review(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<StatusCode, ApiError> {
    state.engine.drop_review(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn list_candidates(
    State(state): State<ApiState>,
    ApiQuery(filter): ApiQuery<StatusFilter<CandidateStatus>>,
) -> Result<Json<CandidateList>, ApiError> {
    let candidates = state.engine.candidates(filter.status).await?;
    Ok(Json(CandidateList { candidates }))
}

async fn list_drafts(
    State(state): State<ApiState>,
    ApiQuery(filter): ApiQuery<StatusFilter<DraftStatus>>,
) -> Result<Json<DraftList>, ApiError> {
    let drafts = state.engine.drafts(filter.status).await?;
    Ok(Json(DraftList { drafts }))
}

async fn get_draft(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<DraftView>, ApiError> {
    Ok(Json(state.engine.draft(&id).await?))
}

/// The body of an action that takes nothing (*Approve*, *Run now*, *Drop*, *Cancel*, *Resume*,
/// *Promote*, a rollback): none, or `{}`. Anything in it is refused, so an option the route
/// does not have (`{"force": true}`) is never silently ignored while the action goes ahead.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOptions {}

async fn approve_draft(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<Json<DraftView>, ApiError> {
    Ok(Json(state.engine.approve_draft(&id).await?))
}

async fn reject_draft(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ReasonRequest>,
) -> Result<Json<DraftView>, ApiError> {
    Ok(Json(state.engine.reject_draft(&id, &body.reason).await?))
}

async fn edit_draft(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<EditRequest>,
) -> Result<Json<DraftView>, ApiError> {
    Ok(Json(state.engine.edit_draft(&id, &body.skill_md).await?))
}

async fn dismiss_finding(
    State(state): State<ApiState>,
    ApiPath((id, n)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<ReasonRequest>,
) -> Result<Json<DraftView>, ApiError> {
    // Parsed here rather than by the extractor, so the answer can say how findings are named;
    // only the index as the draft lists it names a finding (`usize` parsing also takes `+0`).
    let named = n
        .parse::<usize>()
        .ok()
        .filter(|index| index.to_string() == n);
    let Some(index) = named else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!(
                "draft {id} has no finding `{n}`: findings are named by their index, 0, 1, …, as the draft lists them"
            ),
        ));
    };
    Ok(Json(
        state
            .engine
            .dismiss_finding(&id, index, &body.reason)
            .await?,
    ))
}

async fn list_skills(State(state): State<ApiState>) -> Result<Json<SkillList>, ApiError> {
    let skills = state.engine.skills().await?;
    Ok(Json(SkillList { skills }))
}

/// `{"skill": SkillEntry, "removed": false}` when an older text was put back;
/// `{"skill": null, "removed": true}` when Lull's write had created the skill, which is gone
/// again.
async fn rollback_skill(
    State(state): State<ApiState>,
    ApiPath(name): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<Json<RolledBack>, ApiError> {
    Ok(Json(state.engine.rollback_skill(&name).await?))
}

async fn start_job(
    State(state): State<ApiState>,
    ApiJson(request): ApiJson<JobRequest>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    let job = match request.kind {
        JobKind::RoutingHead => state.engine.start_job(request.stopping).await?,
    };
    Ok((StatusCode::CREATED, Json(job)))
}

async fn list_jobs(State(state): State<ApiState>) -> Result<Json<JobList>, ApiError> {
    let jobs = state.engine.jobs().await?;
    Ok(Json(JobList { jobs }))
}

async fn get_job(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.engine.job(&id).await?))
}

async fn cancel_job(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.engine.cancel_job(&id).await?))
}

async fn resume_job(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.engine.resume_job(&id).await?))
}

async fn promote_job(
    State(state): State<ApiState>,
    ApiPath(id): ApiPath<String>,
    _options: Option<ApiJson<NoOptions>>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.engine.promote_job(&id).await?))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteRequest {
    query: String,
    top_k: Option<usize>,
}

async fn route(
    State(state): State<ApiState>,
    ApiJson(request): ApiJson<RouteRequest>,
) -> Result<Json<RouteAnswer>, ApiError> {
    Ok(Json(
        state.engine.route(&request.query, request.top_k).await?,
    ))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OutcomeReport {
    route_id: String,
    skill: String,
    outcome: Outcome,
}

async fn record_outcome(
    State(state): State<ApiState>,
    ApiJson(report): ApiJson<OutcomeReport>,
) -> Result<StatusCode, ApiError> {
    state
        .engine
        .record_outcome(&report.route_id, &report.skill, report.outcome)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// One SSE message per engine event; the stream ends after `engine_stopping`.
async fn events(
    State(state): State<ApiState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream =
        BroadcastStream::new(state.engine.events().subscribe()).scan(false, |stopped, received| {
            if *stopped {
                return futures_util::future::ready(None);
            }
            let event = match received {
                Ok(event) => {
                    *stopped = event == EngineEvent::EngineStopping;
                    Event::default()
                        .json_data(&event)
                        .expect("events serialise")
                }
                Err(lagged) => Event::default().event("lagged").data(lagged.to_string()),
            };
            futures_util::future::ready(Some(Ok(event)))
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::NotFound,
        "no such route; see the API table in the README",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::MethodNotAllowed,
        "this route does not take that method",
    )
}
