//! `lull-stand-in`: runs the stand-in llama-server on its own, for demos and screenshots.
//!
//! CLI and glue only; the server is the library's [`lull_stand_in::StandIn`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use lull_stand_in::{ModelStatus, StandIn, StandInConfig};
use tokio::signal::unix::{signal, Signal, SignalKind};

const USAGE: &str = "\
usage: lull-stand-in [options]

  --mode single|router     which llama-server shape to serve (default: single)
  --model ID[:STATUS]      a model; repeat for several (router statuses: loaded, loading,
                           unloaded, sleeping, downloading; default: loaded)
  --port N                 port on 127.0.0.1 (default: 8080; 0 = any free port)
  --api-key KEY            require `Authorization: Bearer KEY` on non-public endpoints
  --pace-ms N              pause before each streamed token (default: 20)
  --slots N                slots per model (default: 2)
  --loading-ms N           answer 503 \"Loading model\" for N ms first (default: 0)
  --state-file PATH        write a supervisor-style state file there; removed on exit
  --busy ID:SLOT           show this slot as processing (repeatable; for screenshots)
  --busy-on-signal ID:SLOT SIGUSR1 shows this slot as processing (the person's prompt
                           arrives), SIGUSR2 as idle again (repeatable; for the window's
                           end-to-end tests, which change it at run time)
  --replies ID:FILE        FILE is a JSON array of strings: model ID's completions answer
                           them in order, then the default reply (repeatable)
  --request-log FILE       append a line per request to FILE as it arrives: Unix time in
                           ms, method, path (for scripts that check what was polled, when)
  -h, --help               this text";

struct Args {
    config: StandInConfig,
    loading: Duration,
    state_file: Option<PathBuf>,
    busy: Vec<(String, usize)>,
    busy_on_signal: Vec<(String, usize)>,
    replies: Vec<(String, Vec<String>)>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut mode = "single".to_owned();
    let mut models: Vec<(String, ModelStatus)> = Vec::new();
    let mut port = 8080u16;
    let mut api_key = None;
    let mut pace_ms = 20u64;
    let mut slots = lull_stand_in::DEFAULT_SLOTS;
    let mut loading_ms = 0u64;
    let mut state_file = None;
    let mut busy = Vec::new();
    let mut busy_on_signal = Vec::new();
    let mut replies = Vec::new();
    let mut request_log = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value\n\n{USAGE}"))?;
        match flag.as_str() {
            "--mode" => mode = value,
            "--model" => {
                let (id, status) = match value.split_once(':') {
                    Some((id, status)) => {
                        let status = ModelStatus::parse(status)
                            .with_context(|| format!("unknown model status '{status}'"))?;
                        (id.to_owned(), status)
                    }
                    None => (value, ModelStatus::Loaded),
                };
                models.push((id, status));
            }
            "--port" => port = value.parse().context("--port needs a number")?,
            "--api-key" => api_key = Some(value),
            "--pace-ms" => pace_ms = value.parse().context("--pace-ms needs a number")?,
            "--slots" => slots = value.parse().context("--slots needs a number")?,
            "--loading-ms" => loading_ms = value.parse().context("--loading-ms needs a number")?,
            "--state-file" => state_file = Some(PathBuf::from(value)),
            "--request-log" => request_log = Some(PathBuf::from(value)),
            "--busy" => busy.push(parse_slot(&flag, &value)?),
            "--busy-on-signal" => busy_on_signal.push(parse_slot(&flag, &value)?),
            "--replies" => {
                let (id, file) = value
                    .split_once(':')
                    .with_context(|| format!("--replies needs ID:FILE, not '{value}'"))?;
                replies.push((id.to_owned(), read_replies(file)?));
            }
            other => bail!("unknown option '{other}'\n\n{USAGE}"),
        }
    }
    if models.is_empty() {
        models.push(("stand-in-model".to_owned(), ModelStatus::Loaded));
    }
    let mut config = match mode.as_str() {
        "single" => StandInConfig::single(models[0].0.clone()),
        "router" => StandInConfig::router(models),
        other => bail!("--mode must be single or router, not '{other}'"),
    };
    config = config
        .with_port(port)
        .with_pace(Duration::from_millis(pace_ms))
        .with_slots(slots);
    if let Some(key) = api_key {
        config = config.with_api_key(key);
    }
    if loading_ms > 0 {
        config = config.loading();
    }
    if let Some(path) = request_log {
        config = config.with_request_log(path);
    }
    Ok(Args {
        config,
        loading: Duration::from_millis(loading_ms),
        state_file,
        busy,
        busy_on_signal,
        replies,
    })
}

/// `ID:SLOT`, the value of `--busy` and `--busy-on-signal`.
fn parse_slot(flag: &str, value: &str) -> anyhow::Result<(String, usize)> {
    let (id, slot) = value
        .rsplit_once(':')
        .with_context(|| format!("{flag} needs ID:SLOT, not '{value}'"))?;
    let slot = slot
        .parse()
        .with_context(|| format!("{flag} needs a slot number"))?;
    Ok((id.to_owned(), slot))
}

/// The scripted replies in `file`: a JSON array of strings.
fn read_replies(file: &str) -> anyhow::Result<Vec<String>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("--replies: reading {file}"))?;
    serde_json::from_str(&text)
        .with_context(|| format!("--replies: {file} is not a JSON array of strings"))
}

#[tokio::main]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("lull-stand-in: {err:#}");
        std::process::exit(2);
    }
}

async fn run() -> anyhow::Result<()> {
    let args = parse_args()?;
    let n_slots = args.config.models.first().map_or(0, |model| model.n_slots);
    for (id, slot) in args.busy.iter().chain(&args.busy_on_signal) {
        anyhow::ensure!(
            args.config.models.iter().any(|model| &model.id == id),
            "--busy names '{id}', which is not a --model"
        );
        anyhow::ensure!(
            *slot < n_slots,
            "--busy slot {slot} but models have {n_slots} slots"
        );
    }
    for (id, _) in &args.replies {
        anyhow::ensure!(
            args.config.models.iter().any(|model| &model.id == id),
            "--replies names '{id}', which is not a --model"
        );
    }
    let signals = BusySignals::listen(args.busy_on_signal)?;
    let server = StandIn::start(args.config).await?;
    for (id, slot) in &args.busy {
        server.set_busy(id, *slot, true);
    }
    for (id, texts) in args.replies {
        for text in texts {
            server.push_reply(&id, text);
        }
    }
    println!(
        "stand-in llama-server listening, base_url {}",
        server.base_url()
    );
    if let Some(path) = &args.state_file {
        server
            .write_state_file(path, std::process::id())
            .with_context(|| format!("writing the state file {}", path.display()))?;
        println!("state file written to {}", path.display());
    }
    if !args.loading.is_zero() {
        tokio::time::sleep(args.loading).await;
        server.set_ready(true);
        println!("model loaded; /health now answers 200");
    }
    serve_until_ctrl_c(&server, signals).await?;
    if let Some(path) = &args.state_file {
        // The supervisor deletes the state file when the server stops; so do we.
        let _ = std::fs::remove_file(path);
    }
    server.stop().await;
    Ok(())
}

/// SIGUSR1 and SIGUSR2 as `--busy-on-signal` uses them: the person's prompt arrives, and ends.
struct BusySignals {
    slots: Vec<(String, usize)>,
    busy: Signal,
    idle: Signal,
}

impl BusySignals {
    /// Listens from now on (before the state file tells anyone the stand-in is up, so an early
    /// signal is not the default action, which ends the process); none without `slots`.
    fn listen(slots: Vec<(String, usize)>) -> anyhow::Result<Option<BusySignals>> {
        if slots.is_empty() {
            return Ok(None);
        }
        Ok(Some(BusySignals {
            slots,
            busy: signal(SignalKind::user_defined1()).context("listening for SIGUSR1")?,
            idle: signal(SignalKind::user_defined2()).context("listening for SIGUSR2")?,
        }))
    }
}

/// Waits for ctrl-c; meanwhile each of `signals` marks its slots busy or idle.
async fn serve_until_ctrl_c(server: &StandIn, signals: Option<BusySignals>) -> anyhow::Result<()> {
    let stopped = tokio::signal::ctrl_c();
    let Some(mut signals) = signals else {
        return stopped.await.context("waiting for ctrl-c");
    };
    tokio::pin!(stopped);
    loop {
        let now_busy = tokio::select! {
            result = &mut stopped => return result.context("waiting for ctrl-c"),
            Some(()) = signals.busy.recv() => true,
            Some(()) = signals.idle.recv() => false,
        };
        for (id, slot) in &signals.slots {
            server.set_busy(id, *slot, now_busy);
        }
        println!("slots {}", if now_busy { "busy" } else { "idle" });
    }
}
