//! What the managed server was started with, read from the process itself: can its model sleep?
//!
//! llama-server puts its model to sleep only when started with `--sleep-idle-seconds N` (off by
//! default), and on the real server `GET /slots` wakes a sleeping model, so the probe asks
//! `/props` (`is_sleeping`) before every `/slots` of a server that may sleep. A server whose own
//! command line shows it cannot sleep does not need that second request. The answer comes from
//! `/proc/<pid>/cmdline` (and `/proc/<pid>/environ`, in case a later build reads the setting from
//! `LLAMA_ARG_SLEEP_IDLE_SECONDS`); anything short of certainty is [`SleepMode::Unknown`], and
//! the probe then asks `/props` as before. `/proc` is read on Linux only (`cfg`): elsewhere the
//! answer is always [`SleepMode::Unknown`], which costs one request per reading, never a wake.

/// Whether the managed server's model can fall asleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepMode {
    /// Started without `--sleep-idle-seconds` (or with `-1`): it never sleeps.
    Never,
    /// Started with `--sleep-idle-seconds N`: it may be asleep at any reading.
    Possible,
    /// Not known: not Linux, the process is unreadable, or it is not `llama-server` itself (a
    /// wrapper script may pass any flag on).
    Unknown,
}

/// The environment variable a llama.cpp option would be read from, were sleep given one.
const SLEEP_ENV: &str = "LLAMA_ARG_SLEEP_IDLE_SECONDS";

/// Reads the sleep setting of process `pid` (never fails: doubt is [`SleepMode::Unknown`]).
#[cfg(target_os = "linux")]
pub fn sleep_mode(pid: u32) -> SleepMode {
    let proc_dir = std::path::Path::new("/proc").join(pid.to_string());
    let Ok(cmdline) = std::fs::read(proc_dir.join("cmdline")) else {
        return SleepMode::Unknown;
    };
    let environ = std::fs::read(proc_dir.join("environ")).ok();
    sleep_mode_of(&cmdline, environ.as_deref())
}

/// Without Linux's `/proc` another process's command line is not read: the sleep setting is
/// [`SleepMode::Unknown`], and the probe asks `/props` before every `/slots`, as for any server
/// that may sleep.
#[cfg(not(target_os = "linux"))]
pub fn sleep_mode(_pid: u32) -> SleepMode {
    SleepMode::Unknown
}

/// The sleep setting that a NUL-separated command line and environment (as `/proc` shows
/// them) give llama-server. `environ` is `None` when it could not be read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn sleep_mode_of(cmdline: &[u8], environ: Option<&[u8]>) -> SleepMode {
    let args: Vec<&[u8]> = cmdline
        .split(|&byte| byte == 0)
        .filter(|arg| !arg.is_empty())
        .collect();
    let Some((program, flags)) = args.split_first() else {
        return SleepMode::Unknown;
    };
    let name = program
        .rsplit(|&byte| byte == b'/')
        .next()
        .unwrap_or(program);
    if !name.starts_with(b"llama-server") {
        return SleepMode::Unknown;
    }
    let Some(environ) = environ else {
        return SleepMode::Unknown;
    };
    let from_env = environ
        .split(|&byte| byte == 0)
        .filter_map(|entry| entry.strip_prefix(SLEEP_ENV.as_bytes())?.strip_prefix(b"="))
        .next_back();
    // llama.cpp reads the environment first and lets the command line override it; an option
    // given twice keeps its last value; `--sleep_idle_seconds` is the same option.
    let from_flags = flags
        .windows(2)
        .filter(|pair| pair[0] == b"--sleep-idle-seconds" || pair[0] == b"--sleep_idle_seconds")
        .map(|pair| pair[1])
        .next_back();
    match from_flags.or(from_env) {
        None | Some(b"-1") => SleepMode::Never,
        Some(_) => SleepMode::Possible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(args: &[&str], env: &[&str]) -> SleepMode {
        let join = |parts: &[&str]| {
            parts
                .iter()
                .map(|part| format!("{part}\0"))
                .collect::<String>()
        };
        sleep_mode_of(join(args).as_bytes(), Some(join(env).as_bytes()))
    }

    #[test]
    fn a_server_started_without_the_flag_never_sleeps() {
        let args = [
            "/opt/llama/bin/llama-server",
            "-m",
            "m.gguf",
            "--port",
            "8080",
        ];
        assert_eq!(mode(&args, &["HOME=/home/me"]), SleepMode::Never);
        let disabled = ["llama-server", "--sleep-idle-seconds", "-1"];
        assert_eq!(mode(&disabled, &[]), SleepMode::Never);
    }

    #[test]
    fn the_flag_or_the_variable_makes_sleep_possible_and_the_last_value_counts() {
        let flag = [
            "llama-server",
            "-m",
            "m.gguf",
            "--sleep-idle-seconds",
            "300",
        ];
        assert_eq!(mode(&flag, &[]), SleepMode::Possible);
        let underscored = ["llama-server.exe", "--sleep_idle_seconds", "5"];
        assert_eq!(mode(&underscored, &[]), SleepMode::Possible);
        let env = ["llama-server", "-m", "m.gguf"];
        assert_eq!(
            mode(&env, &["LLAMA_ARG_SLEEP_IDLE_SECONDS=60"]),
            SleepMode::Possible
        );
        let overridden = ["llama-server", "--sleep-idle-seconds", "-1"];
        assert_eq!(
            mode(&overridden, &["LLAMA_ARG_SLEEP_IDLE_SECONDS=60"]),
            SleepMode::Never
        );
        let twice = [
            "llama-server",
            "--sleep-idle-seconds",
            "-1",
            "--sleep-idle-seconds",
            "9",
        ];
        assert_eq!(mode(&twice, &[]), SleepMode::Possible);
    }

    #[test]
    fn anything_but_llama_server_itself_is_unknown() {
        assert_eq!(
            mode(&["/bin/sh", "start-llama.sh"], &[]),
            SleepMode::Unknown
        );
        assert_eq!(
            mode(&["python3", "-m", "llama_cpp.server"], &[]),
            SleepMode::Unknown
        );
        assert_eq!(mode(&[], &[]), SleepMode::Unknown);
        let unreadable_env = sleep_mode_of(b"llama-server\0-m\0m.gguf\0", None);
        assert_eq!(unreadable_env, SleepMode::Unknown);
    }

    #[test]
    fn this_test_process_is_not_a_llama_server_and_a_dead_pid_is_unknown() {
        assert_eq!(sleep_mode(std::process::id()), SleepMode::Unknown);
        assert_eq!(sleep_mode(u32::MAX), SleepMode::Unknown);
    }
}
