//! Reading a long prompt in steps, so that dropping a request costs the server one step at most.
//!
//! llama-server does not stop reading a prompt when its client goes: the slot reads the whole
//! prompt before it looks at the connection again. Measured on this project's 2-core machine
//! with SmolLM2-135M: a 3,300-token review prompt dropped 0.5 s in kept the server reading for
//! 63 s, and the person's next prompt (a 9 s first token alone) waited 40–63 s behind it.
//!
//! So work that must yield to the person has the server read its prompt in steps: the chat
//! template applied by the server (`/apply-template`), the text tokenized by the server
//! (`/tokenize`), then one `/completion` request per step with `n_predict: 0` and
//! `cache_prompt`, each extending the slot's prompt cache by a step. The chat request that
//! follows finds all but its last step cached (llama-server picks the slot whose cache shares
//! the longest prefix). A drop then costs the server the step it is reading. Steps are sized by
//! time, not tokens: the first is [`PREFILL_STEP_TOKENS`], and each next one is what the server
//! read in [`PREFILL_STEP_TIME`] at the pace it just showed, so a slow CPU gets small steps (a
//! person waits half a second at most) and a GPU few requests. The pace counts the tokens the
//! server read (its `timings.prompt_n`), not those it found cached: a step the cache answered
//! took no time and tells nothing of the pace (taken for one, it grew the next step to the
//! upper bound, and a preempted review's rerun read 1,000 new tokens in one request beside the
//! person's turn, who waited 7 s instead of 1.9). The client remembers the pace for the next
//! prompt: a prompt the server reads within one step has none, and a slow server gets a smaller
//! first step ([`PromptSteps::new`]). After each step, while the
//! request holds no slot, it stops at its pace's checkpoint, where the gate looks for another
//! client before the next step is sent ([`StreamPace::checkpoint`]). A server without these
//! routes (not llama-server) reads the prompt whole, as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use super::{ChatEndpoint, ChatMessage, HttpLlmClient, LlmError, Phase, StreamPace};
use crate::server::server_origin;

/// Prompt tokens of the first step, before the server's pace is known.
pub const PREFILL_STEP_TOKENS: usize = 256;
/// How long one step should take the server: the most a person's prompt waits for Lull's.
pub const PREFILL_STEP_TIME: Duration = Duration::from_millis(500);
/// Bounds of a step, whatever the pace: a step is a request, and a request has its overhead.
const PREFILL_STEP_BOUNDS: (usize, usize) = (64, 4096);
/// How long after a step's answer its checkpoint reads the server. llama-server answers
/// `/slots` ahead of its queue, and takes up a request that queued behind our step a moment
/// after it answered the step (0.6 ms measured): read at once, the server looked idle, and the
/// next step was read beside the person's prompt.
const SERVER_QUEUE_SETTLE: Duration = Duration::from_millis(20);

/// Has the server at `endpoint` read `messages` into a slot's prompt cache, a step at a time,
/// up to the last step (the chat request reads that one). Each step advances `pace`.
pub(super) async fn read_prompt_in_steps(
    client: &HttpLlmClient,
    endpoint: &ChatEndpoint,
    messages: &[ChatMessage],
    pace: &StreamPace,
) -> Result<(), LlmError> {
    let origin = server_origin(&endpoint.base_url);
    let templated = match client
        .post_json(
            &format!("{origin}/apply-template"),
            endpoint,
            &json!({ "model": endpoint.model, "messages": messages }),
        )
        .await
    {
        Ok(answer) => answer,
        // Not llama-server (or one without the route): the chat request reads the prompt whole.
        Err(LlmError::Status {
            status: 404 | 405, ..
        }) => return Ok(()),
        Err(err) => return Err(err),
    };
    let prompt = text_field(&templated, "prompt", &origin)?;
    let tokenized = client
        .post_json(
            &format!("{origin}/tokenize"),
            endpoint,
            &json!({ "model": endpoint.model, "content": prompt, "add_special": true }),
        )
        .await?;
    let tokens = tokenized["tokens"]
        .as_array()
        .ok_or_else(|| LlmError::Protocol {
            url: format!("{origin}/tokenize"),
            message: "the answer has no `tokens` list".into(),
        })?;
    let mut steps = PromptSteps::new(tokens.len(), client.paces.get(&origin));
    while let Some(step) = steps.upcoming() {
        let started = Instant::now();
        let answer = client
            .post_json(
                &format!("{origin}/completion"),
                endpoint,
                &json!({
                    "model": endpoint.model,
                    "prompt": &tokens[..step.end],
                    "n_predict": 0,
                    "cache_prompt": true,
                }),
            )
            .await?;
        // Without `timings` (not llama-server), the whole step counts as read.
        let read = answer["timings"]["prompt_n"]
            .as_u64()
            .map_or(step.tokens, |n| (n as usize).min(step.tokens));
        pace.advance(Phase::Prompt, read as u64);
        steps.took(started.elapsed(), read);
        if let Some(rate) = steps.rate() {
            client.paces.set(&origin, rate);
        }
        pace.checkpoint(SERVER_QUEUE_SETTLE).await;
    }
    Ok(())
}

/// The pace each server (by origin) was last seen reading prompts at, kept by a client for the
/// first step of its next prompt: a blind first step of [`PREFILL_STEP_TOKENS`] took 0.78 s on
/// this project's CPU, over the half second a person should wait at most.
#[derive(Debug, Clone, Default)]
pub(super) struct ServerPaces(Arc<Mutex<HashMap<String, f64>>>);

impl ServerPaces {
    fn get(&self, origin: &str) -> Option<f64> {
        self.lock().get(origin).copied()
    }

    fn set(&self, origin: &str, rate: f64) {
        self.lock().insert(origin.to_string(), rate);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, f64>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The steps of a prompt of `len` tokens, each sized by how long the one before took: the one
/// plan both [`read_prompt_in_steps`] and the simulator (`crate::sim`) follow, so the simulated
/// requests are the client's.
#[derive(Debug, Clone)]
pub(crate) struct PromptSteps {
    len: usize,
    /// Prompt tokens per second the server was seen reading, `None` before a step showed it.
    rate: Option<f64>,
    step: usize,
    end: usize,
}

/// One step: the server reads the prompt's first `end` tokens, of which the last `tokens` are
/// new (the slot's cache holds the rest from the steps before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PromptStep {
    pub(crate) end: usize,
    pub(crate) tokens: usize,
}

impl PromptSteps {
    /// The plan of a prompt of `len` tokens on a server last seen reading `rate` tokens a
    /// second (by an earlier prompt of this process). A prompt the server reads within
    /// [`PREFILL_STEP_TIME`] at that pace has no steps. Otherwise the first step is
    /// [`PREFILL_STEP_TOKENS`], or fewer if that would take longer than [`PREFILL_STEP_TIME`]:
    /// the first step is also a probe of the server's pace now, and a person's turn that
    /// comes meanwhile waits for it.
    pub(crate) fn new(len: usize, rate: Option<f64>) -> PromptSteps {
        let first = match rate.map(step_at) {
            Some(whole) if len <= whole => len,
            Some(step) => step.min(PREFILL_STEP_TOKENS),
            None => PREFILL_STEP_TOKENS,
        };
        PromptSteps {
            len,
            rate,
            step: first,
            end: first,
        }
    }

    /// The step to send next; `None` once what is left fits in a step, which the chat request
    /// reads.
    pub(crate) fn upcoming(&self) -> Option<PromptStep> {
        (self.end < self.len).then_some(PromptStep {
            end: self.end,
            tokens: self.step,
        })
    }

    /// The step from [`PromptSteps::upcoming`] took `took`, in which the server read `read` of
    /// its tokens (the rest were cached): the next is sized to what the server reads in
    /// [`PREFILL_STEP_TIME`] at that pace. A step read mostly from the cache shows no pace, and
    /// the next keeps its size.
    pub(crate) fn took(&mut self, took: Duration, read: usize) {
        if read * 2 >= self.step {
            let rate = read as f64 / took.as_secs_f64().max(1e-3);
            self.rate = Some(rate);
            self.step = step_at(rate);
        }
        self.end += self.step;
    }

    /// The server's pace as the steps saw it, for the next prompt's first step.
    pub(crate) fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Prompt tokens the steps taken so far had the server read (the chat request reads the
    /// rest).
    pub(crate) fn read(&self) -> usize {
        self.end - self.step
    }
}

/// A step: what the server reads in [`PREFILL_STEP_TIME`] at `rate` tokens a second, within
/// [`PREFILL_STEP_BOUNDS`].
fn step_at(rate: f64) -> usize {
    let tokens = (rate * PREFILL_STEP_TIME.as_secs_f64()) as usize;
    tokens.clamp(PREFILL_STEP_BOUNDS.0, PREFILL_STEP_BOUNDS.1)
}

fn text_field<'a>(answer: &'a Value, field: &str, origin: &str) -> Result<&'a str, LlmError> {
    answer[field].as_str().ok_or_else(|| LlmError::Protocol {
        url: origin.to_string(),
        message: format!("the answer has no `{field}` text"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_what_the_server_reads_in_half_a_second() {
        // 256 tokens a second: 128; 5,120: 2,560; beyond the bounds, the bound.
        assert_eq!(step_at(256.0), 128);
        assert_eq!(step_at(5120.0), 2560);
        assert_eq!(step_at(1e9), PREFILL_STEP_BOUNDS.1);
        assert_eq!(step_at(4.0), PREFILL_STEP_BOUNDS.0);
    }

    /// The steps of a prompt of `len` tokens on a server reading `rate` tokens a second, all
    /// new, `known` the pace remembered from before. Returns each step's tokens.
    fn plan(len: usize, known: Option<f64>, rate: f64) -> (Vec<usize>, PromptSteps) {
        let mut steps = PromptSteps::new(len, known);
        let mut seen = Vec::new();
        while let Some(step) = steps.upcoming() {
            seen.push(step.tokens);
            steps.took(
                Duration::from_secs_f64(step.tokens as f64 / rate),
                step.tokens,
            );
        }
        (seen, steps)
    }

    #[test]
    fn the_steps_leave_the_chat_request_at_most_a_step() {
        // A server reading 1,024 tokens/s: 256 tokens first, then 512 a step (0.5 s), and the
        // chat request reads the last 208 of 2,000.
        let (seen, steps) = plan(2000, None, 1024.0);
        assert_eq!(seen, [256, 512, 512, 512]);
        assert_eq!(steps.read(), 1792);
        assert_eq!(
            steps.rate(),
            Some(1024.0),
            "the pace is kept for the next prompt"
        );
        // A prompt within the first step has no steps: the chat request reads it whole.
        assert_eq!(PromptSteps::new(PREFILL_STEP_TOKENS, None).upcoming(), None);
    }

    #[test]
    fn a_known_pace_bounds_the_first_step_and_spares_a_short_prompt_its_steps() {
        // 330 tokens/s (this project's CPU): the blind first step of 256 took 0.78 s.
        let (seen, _) = plan(2000, Some(330.0), 330.0);
        assert_eq!(
            seen, [165; 12],
            "half a second at the known pace, from the first"
        );
        // 2,048 tokens/s: a 1,000-token prompt is read whole within half a second; a longer one
        // is probed with the usual first step.
        assert_eq!(PromptSteps::new(1000, Some(2048.0)).upcoming(), None);
        assert!(PromptSteps::new(1000, None).upcoming().is_some());
        let (seen, _) = plan(3000, Some(2048.0), 2048.0);
        assert_eq!(seen, [256, 1024, 1024]);
    }

    #[test]
    fn a_step_the_cache_answered_keeps_the_step_size() {
        // A rerun: the first 1,000 tokens are cached from the preempted run. Steps answered
        // from the cache take no time and keep the first step's size; the first step that reads
        // new tokens sets the pace (1,024 tokens/s), so no step reads more than half a second.
        let cached = 1000;
        let mut steps = PromptSteps::new(3000, None);
        let mut new_per_step = Vec::new();
        while let Some(step) = steps.upcoming() {
            let read = step.end.saturating_sub(cached).min(step.tokens);
            new_per_step.push(read);
            steps.took(Duration::from_secs_f64(read as f64 / 1024.0), read);
        }
        assert_eq!(new_per_step[..4], [0, 0, 0, 24]);
        assert!(
            new_per_step.iter().all(|&read| read <= 512),
            "{new_per_step:?}"
        );
        assert!(
            3000 - steps.read() <= 512,
            "the chat request reads one step at most"
        );
    }
}
