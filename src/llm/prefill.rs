//! Reading a long prompt in steps, so that dropping a request costs the server one step at most.
//!
//! llama-server does not stop reading a prompt when its client goes: the slot reads the whole
//! prompt before it looks at the connection again. Measured on this project's 2-core machine
//! with SmolLM2-135M: a 3,300-token review prompt dropped 0.5 s in kept the server reading for
//! 63 s, and the person's next prompt (a 9 s first token alone) waited 40–63 s behind it.
//!
//! So work that must yield to the person has the server read its prompt in steps of
//! [`PREFILL_STEP_TOKENS`]: the chat template applied by the server (`/apply-template`), the
//! text tokenized by the server (`/tokenize`), then one `/completion` request per step with
//! `n_predict: 0` and `cache_prompt`, each extending the slot's prompt cache by a step. The chat
//! request that follows finds all but its last step cached (llama-server picks the slot whose
//! cache shares the longest prefix). A drop then costs the server the step it is reading; the
//! price is one request per step. A server without these routes (not llama-server) reads the
//! prompt whole, as before.

use serde_json::{json, Value};

use super::{ChatEndpoint, ChatMessage, HttpLlmClient, LlmError, Phase, StreamPace};

/// Prompt tokens the server reads per step. At llama-server's slowest here (about 250 prompt
/// tokens/s on one core) a step is about a second, the most a person waits for Lull; on a
/// laptop's GPU it is milliseconds.
pub const PREFILL_STEP_TOKENS: usize = 256;

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
    for end in (PREFILL_STEP_TOKENS..tokens.len()).step_by(PREFILL_STEP_TOKENS) {
        client
            .post_json(
                &format!("{origin}/completion"),
                endpoint,
                &json!({
                    "model": endpoint.model,
                    "prompt": &tokens[..end],
                    "n_predict": 0,
                    "cache_prompt": true,
                }),
            )
            .await?;
        pace.advance(Phase::Prompt, PREFILL_STEP_TOKENS as u64);
    }
    Ok(())
}

/// llama-server's own routes live beside `/v1`, at the server's root.
fn server_origin(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_string()
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
    fn the_servers_own_routes_are_beside_v1() {
        for (base, origin) in [
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ] {
            assert_eq!(server_origin(base), origin, "{base}");
        }
    }
}
