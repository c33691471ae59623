//! Configuration: DESIGN §5's defaults, a TOML file, `LULL_<SECTION>_<KEY>` overrides.
//!
//! Loading happens once at start-up. Every mistake is reported with the key, where the bad value
//! came from (the file or an environment variable) and the type that was expected, because a
//! tray app that silently ignores a typo is worse than one that refuses to start.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Every setting Lull reads at start-up, grouped as in the file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// When learning work may use the managed server.
    pub scheduler: SchedulerConfig,
    /// Where the supervisor of the managed `llama-server` writes its state.
    pub server: ServerConfig,
    /// Conversation reviews.
    pub reviews: ReviewsConfig,
    /// The candidate → draft worker.
    pub learning: LearningConfig,
    /// The routing head.
    pub routing: RoutingConfig,
    /// The skills directory.
    pub skills: SkillsConfig,
    /// The loopback API.
    pub api: ApiConfig,
    /// Learning on a laptop's battery.
    pub power: PowerConfig,
}

/// Whether learning bound for the managed server waits for a lull.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum DeferMode {
    /// Wait for a lull (the default).
    #[default]
    Auto,
    /// Run at once.
    Never,
}

impl DeferMode {
    /// The spelling used in the file, the API and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            DeferMode::Auto => "auto",
            DeferMode::Never => "never",
        }
    }
}

/// `[scheduler]`: the GPU gate's timing.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Default defer mode until the person changes it in the app.
    pub defer: DeferMode,
    /// Quiet seconds after the last live turn before a lull begins.
    pub settle_s: u64,
    /// The settle window after learning work was preempted, until a piece of work completes: a
    /// preemption says the person is in a burst of prompts, where a short pause is rarely long
    /// enough for a review. Never shorter than `settle_s`.
    pub settle_after_preemption_s: u64,
    /// Age after which queued work runs regardless of idleness.
    pub max_age_s: u64,
    /// Seconds after which a turn lease lapses, so a crashed agent cannot hold the GPU.
    pub turn_lease_s: u64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            defer: DeferMode::Auto,
            settle_s: 15,
            settle_after_preemption_s: 60,
            max_age_s: 1800,
            turn_lease_s: 600,
        }
    }
}

/// `[server]`: the managed `llama-server`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// The supervisor's state file; `~` is expanded.
    pub state_file: PathBuf,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            state_file: PathBuf::from("~/.hermes/runtimes/llamacpp/server.json"),
        }
    }
}

/// `[reviews]`: where reviews run when the agent names no runtime.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewsConfig {
    /// Default for the `reviews_enabled` setting.
    pub enabled: bool,
    /// An OpenAI-compatible endpoint to use instead of the managed server.
    pub base_url: Option<String>,
    /// Its key.
    pub api_key: Option<String>,
    /// Its model.
    pub model: Option<String>,
}

impl Default for ReviewsConfig {
    fn default() -> Self {
        ReviewsConfig {
            enabled: true,
            base_url: None,
            api_key: None,
            model: None,
        }
    }
}

/// `[learning]`: the candidate → draft worker.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearningConfig {
    /// Drafts queued for synthesis at most (a run tops the queue up to it); 0 turns drafting
    /// off, and candidates stay `open`.
    pub max_drafts_per_run: u32,
    /// Attempts before a candidate is terminally failed.
    pub max_retries: u32,
    /// Seconds between worker runs.
    pub interval_s: u64,
}

impl Default for LearningConfig {
    fn default() -> Self {
        LearningConfig {
            max_drafts_per_run: 5,
            max_retries: 3,
            interval_s: 300,
        }
    }
}

/// `[routing]`: the routing head's learning.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoutingConfig {
    /// REINFORCE step size.
    pub learning_rate: f64,
    /// Weight of the learned score in the blend.
    pub rl_weight: f64,
    /// Updates before the learned score is blended in.
    pub warmup_updates: u64,
    /// Updates between two saves of the head.
    pub persist_interval: u64,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            learning_rate: 0.01,
            rl_weight: 0.3,
            warmup_updates: 50,
            persist_interval: 10,
        }
    }
}

/// `[skills]`: where skills live.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillsConfig {
    /// Unset means `<data_dir>/skills`.
    pub dir: Option<PathBuf>,
}

/// `[power]`: whether learning and training run on battery (DESIGN §2.1, power and sleep).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PowerConfig {
    /// Learning on battery: `pause`, `above` (`battery_threshold_percent`) or `always`.
    pub on_battery: BatteryLearning,
    /// The charge above which `above` lets learning run on battery.
    pub battery_threshold_percent: u8,
    /// Whether training jobs run on battery (they are CPU work for minutes).
    pub jobs_on_battery: bool,
}

impl Default for PowerConfig {
    fn default() -> Self {
        PowerConfig {
            on_battery: BatteryLearning::Above,
            battery_threshold_percent: 50,
            jobs_on_battery: false,
        }
    }
}

/// Whether learning runs while the laptop is on battery.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BatteryLearning {
    /// Never on battery: learning waits for AC.
    Pause,
    /// Only while the charge is above `battery_threshold_percent`.
    #[default]
    Above,
    /// On battery as on AC.
    Always,
}

/// `[api]`: the loopback API.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// Address to bind; must be a loopback address.
    pub listen: String,
}

impl ApiConfig {
    /// The address to bind, refused unless it is a loopback address: the API hands out the
    /// person's transcripts and approves skills, and anyone who can reach it could try the
    /// token. The one rule for the configuration's check and the API's bind.
    pub fn loopback_addr(&self) -> Result<std::net::SocketAddr, String> {
        let listen = &self.listen;
        let addr: std::net::SocketAddr = listen.parse().map_err(|_| {
            format!("`{listen}` is not an address like 127.0.0.1:7707 (an IP address and a port)")
        })?;
        if !addr.ip().is_loopback() {
            return Err(format!(
                "`{listen}` is not a loopback address, and Lull's API listens on loopback only: \
                 use 127.0.0.1:<port> or [::1]:<port> (agents on other machines are not served)"
            ));
        }
        Ok(addr)
    }
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            listen: "127.0.0.1:7707".to_string(),
        }
    }
}

/// The sections of the file, which are also the first word of an environment override.
const SECTIONS: &[&str] = &[
    "scheduler",
    "server",
    "reviews",
    "learning",
    "routing",
    "skills",
    "api",
    "power",
];

/// A configuration that cannot be used, with enough context to fix it.
#[derive(Debug)]
pub enum ConfigError {
    /// The file exists but could not be read.
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    Syntax { path: PathBuf, message: String },
    /// A key is unknown or has the wrong type.
    Invalid {
        origin: String,
        key: String,
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Read { path, source } => {
                write!(f, "cannot read config file {}: {source}", path.display())
            }
            ConfigError::Syntax { path, message } => {
                write!(
                    f,
                    "config file {} is not valid TOML: {message}",
                    path.display()
                )
            }
            ConfigError::Invalid {
                origin,
                key,
                message,
            } => {
                write!(
                    f,
                    "{origin}: key `{key}`: {message} (see the configuration table in the README)"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Loads `path` (a missing file means all defaults) and applies `LULL_*` overrides from `env`.
    ///
    /// `env` is passed in rather than read here so tests need not touch the process environment.
    pub fn load(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let file_origin = format!("config file {}", path.display());
        let mut table: toml::Table =
            text.parse()
                .map_err(|err: toml::de::Error| ConfigError::Syntax {
                    path: path.to_path_buf(),
                    message: err.message().to_string(),
                })?;
        // Check the file alone first, so an error names the file rather than an override.
        Self::from_table(table.clone(), &file_origin)?;

        let overrides = collect_overrides(env);
        if overrides.is_empty() {
            return Self::from_table(table, &file_origin);
        }
        let mut origins = Vec::new();
        for (var, section, key, value) in overrides {
            let section_table = table
                .entry(section.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(section_table) = section_table.as_table_mut() else {
                return Err(ConfigError::Invalid {
                    origin: file_origin,
                    key: section,
                    message: "expected a table".into(),
                });
            };
            section_table.insert(key, value);
            origins.push(var);
        }
        Self::from_table(table, &format!("environment ({})", origins.join(", ")))
    }

    fn from_table(table: toml::Table, origin: &str) -> Result<Config, ConfigError> {
        let config: Config =
            serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|err| {
                ConfigError::Invalid {
                    origin: origin.to_string(),
                    key: err.path().to_string(),
                    message: err.into_inner().to_string(),
                }
            })?;
        // Refused here, before anything starts, rather than when the API binds.
        config
            .api
            .loopback_addr()
            .map_err(|message| ConfigError::Invalid {
                origin: origin.to_string(),
                key: "api.listen".to_string(),
                message,
            })?;
        if config.power.battery_threshold_percent > 100 {
            return Err(ConfigError::Invalid {
                origin: origin.to_string(),
                key: "power.battery_threshold_percent".to_string(),
                message: format!(
                    "{} is not a charge: use a percentage from 0 to 100",
                    config.power.battery_threshold_percent
                ),
            });
        }
        Ok(config)
    }

    /// The skills directory, defaulting to `<data_dir>/skills`.
    pub fn skills_dir(&self, data_dir: &Path) -> PathBuf {
        match &self.skills.dir {
            Some(dir) => expand_home(dir),
            None => data_dir.join("skills"),
        }
    }

    /// The supervisor's state file with `~` expanded.
    pub fn state_file(&self) -> PathBuf {
        expand_home(&self.server.state_file)
    }
}

/// `LULL_SCHEDULER_SETTLE_S=20` → `("LULL_SCHEDULER_SETTLE_S", "scheduler", "settle_s", 20)`.
///
/// Variables whose first word is not a section (`LULL_DATA_DIR`, `LULL_LOG`) belong to other
/// parts of Lull and are ignored here. A value is read as a TOML value when it parses as one
/// (`20`, `true`, `"quoted"`), otherwise as a plain string.
fn collect_overrides(
    env: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String, String, toml::Value)> {
    let mut found = BTreeMap::new();
    for (var, raw) in env {
        let Some(rest) = var.strip_prefix("LULL_") else {
            continue;
        };
        let lower = rest.to_ascii_lowercase();
        let Some((section, key)) = lower.split_once('_') else {
            continue;
        };
        if !SECTIONS.contains(&section) {
            continue;
        }
        let value = parse_env_value(&raw);
        found.insert(var.clone(), (section.to_string(), key.to_string(), value));
    }
    found
        .into_iter()
        .map(|(var, (section, key, value))| (var, section, key, value))
        .collect()
}

fn parse_env_value(raw: &str) -> toml::Value {
    format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

/// Expands a leading `~/` to the home directory.
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// Where Lull keeps its files, resolved once from flags and XDG defaults.
#[derive(Debug, Clone)]
pub struct Paths {
    /// Database, token, `api.json`, logs and the default skills directory.
    pub data_dir: PathBuf,
    /// The configuration file (it need not exist).
    pub config_file: PathBuf,
}

impl Paths {
    /// Resolves `--data-dir` / `--config`, falling back to `$XDG_DATA_HOME/lull` and
    /// `$XDG_CONFIG_HOME/lull/config.toml`.
    pub fn resolve(
        data_dir: Option<PathBuf>,
        config_file: Option<PathBuf>,
    ) -> anyhow::Result<Paths> {
        let data_dir = match data_dir {
            Some(dir) => dir,
            None => dirs::data_dir()
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "cannot find a data directory: set XDG_DATA_HOME or pass --data-dir"
                    )
                })?
                .join("lull"),
        };
        let config_file = match config_file {
            Some(file) => file,
            None => dirs::config_dir()
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "cannot find a config directory: set XDG_CONFIG_HOME or pass --config"
                    )
                })?
                .join("lull")
                .join("config.toml"),
        };
        Ok(Paths {
            data_dir,
            config_file,
        })
    }

    /// The SQLite database.
    pub fn database(&self) -> PathBuf {
        self.data_dir.join("lull.db")
    }

    /// The API bearer token (mode 0600).
    pub fn api_token(&self) -> PathBuf {
        self.data_dir.join("api-token")
    }

    /// Where the running engine says where it listens.
    pub fn api_json(&self) -> PathBuf {
        self.data_dir.join("api.json")
    }

    /// Rolling log files.
    pub fn logs_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }
}

/// Where the engine's configuration and data live, from the command line or the environment,
/// with the same flags and variables as the `lull` CLI (`--config`/`LULL_CONFIG`,
/// `--data-dir`/`LULL_DATA_DIR`). Unset means the XDG defaults of DESIGN §5.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The configuration file.
    pub config: Option<PathBuf>,
    /// The data directory.
    pub data_dir: Option<PathBuf>,
}

impl Locations {
    /// Reads `--config X` / `--config=X` and `--data-dir X` / `--data-dir=X` from `args` (the
    /// program name first, as `std::env::args_os`), falling back to `env`. Other arguments (the
    /// tray's `--hidden`, the window's `--view`) are left to their readers.
    pub fn from_args(
        args: impl IntoIterator<Item = std::ffi::OsString>,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Locations {
        let mut locations = Locations {
            config: env("LULL_CONFIG").map(PathBuf::from),
            data_dir: env("LULL_DATA_DIR").map(PathBuf::from),
        };
        let mut args = args.into_iter().skip(1);
        while let Some(arg) = args.next() {
            let arg = arg.to_string_lossy().into_owned();
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(std::ffi::OsString::from(value))),
                None => (arg, None),
            };
            let slot = match flag.as_str() {
                "--config" => &mut locations.config,
                "--data-dir" => &mut locations.data_dir,
                _ => continue,
            };
            if let Some(value) = inline.or_else(|| args.next()) {
                *slot = Some(PathBuf::from(value));
            }
        }
        locations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_come_from_flags_then_the_environment() {
        use std::ffi::OsString;
        let args = |list: &[&str]| -> Vec<OsString> {
            std::iter::once("lull-desktop")
                .chain(list.iter().copied())
                .map(OsString::from)
                .collect()
        };
        let env = |name: &str| match name {
            "LULL_DATA_DIR" => Some(OsString::from("/env/data")),
            _ => None,
        };
        let check = |list: &[&str], expected: Locations| {
            assert_eq!(Locations::from_args(args(list), env), expected, "{list:?}");
        };
        check(
            &[],
            Locations {
                config: None,
                data_dir: Some("/env/data".into()),
            },
        );
        let flagged = Locations {
            config: Some("/c.toml".into()),
            data_dir: Some("/flag/data".into()),
        };
        check(
            &["--hidden", "--data-dir", "/flag/data", "--config=/c.toml"],
            flagged.clone(),
        );
        check(
            &[
                "--view",
                "drafts",
                "--data-dir",
                "/flag/data",
                "--config=/c.toml",
            ],
            flagged,
        );
        check(
            &["--data-dir=/a", "--data-dir"],
            Locations {
                config: None,
                data_dir: Some("/a".into()),
            },
        );
    }

    fn load(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        Config::load(
            &path,
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    #[test]
    fn missing_file_gives_the_design_defaults() {
        let config = Config::load(Path::new("/nonexistent/lull/config.toml"), Vec::new()).unwrap();
        assert_eq!(config.scheduler.settle_s, 15);
        assert_eq!(config.scheduler.max_age_s, 1800);
        assert_eq!(config.scheduler.turn_lease_s, 600);
        assert_eq!(config.scheduler.defer, DeferMode::Auto);
        assert!(config.reviews.enabled);
        assert_eq!(config.learning.max_drafts_per_run, 5);
        assert_eq!(config.routing.warmup_updates, 50);
        assert_eq!(config.api.listen, "127.0.0.1:7707");
        assert!(config
            .state_file()
            .ends_with(".hermes/runtimes/llamacpp/server.json"));
        assert_eq!(
            config.skills_dir(Path::new("/d")),
            PathBuf::from("/d/skills")
        );
    }

    #[test]
    fn power_defaults_wait_on_battery_below_half_and_a_threshold_is_a_percentage() {
        let config = load("", &[]).unwrap();
        assert_eq!(config.power.on_battery, BatteryLearning::Above);
        assert_eq!(config.power.battery_threshold_percent, 50);
        assert!(!config.power.jobs_on_battery);
        let config = load(
            "[power]\non_battery = \"pause\"\n",
            &[("LULL_POWER_JOBS_ON_BATTERY", "true")],
        )
        .unwrap();
        assert_eq!(config.power.on_battery, BatteryLearning::Pause);
        assert!(config.power.jobs_on_battery);
        let err = load("[power]\nbattery_threshold_percent = 150\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.battery_threshold_percent"), "{err}");
        let err = load("[power]\non_battery = \"sometimes\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("power.on_battery"), "{err}");
    }

    #[test]
    fn file_values_and_env_overrides_apply_in_order() {
        let config = load(
            "[scheduler]\nsettle_s = 20\ndefer = \"never\"\n[reviews]\nmodel = \"qwen\"\n",
            &[
                ("LULL_SCHEDULER_SETTLE_S", "30"),
                ("LULL_REVIEWS_BASE_URL", "http://h:1/v1"),
                ("LULL_DATA_DIR", "/x"),
            ],
        )
        .unwrap();
        assert_eq!(config.scheduler.settle_s, 30);
        assert_eq!(config.scheduler.defer, DeferMode::Never);
        assert_eq!(config.reviews.model.as_deref(), Some("qwen"));
        assert_eq!(config.reviews.base_url.as_deref(), Some("http://h:1/v1"));
    }

    #[test]
    fn unknown_key_names_the_key_and_the_file() {
        let err = load("[scheduler]\nsettle = 20\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("config file"), "{err}");
        assert!(err.contains("config.toml"), "{err}");
        assert!(err.contains("unknown field `settle`"), "{err}");
        assert!(err.contains("scheduler"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_key_and_the_expected_type() {
        let err = load("[scheduler]\nsettle_s = \"soon\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("scheduler.settle_s"), "{err}");
        assert!(err.contains("expected u64"), "{err}");
    }

    #[test]
    fn bad_env_override_names_the_variable() {
        let err = load("", &[("LULL_SCHEDULER_SETTLE_S", "soon")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("LULL_SCHEDULER_SETTLE_S"), "{err}");
        assert!(err.contains("scheduler.settle_s"), "{err}");
        let err = load("", &[("LULL_API_PORT", "1")]).unwrap_err().to_string();
        assert!(err.contains("unknown field `port`"), "{err}");
    }

    #[test]
    fn only_a_loopback_listen_address_loads() {
        for listen in ["0.0.0.0:0", "[::]:0", "192.168.1.20:7707", "10.0.0.5:0"] {
            let err = load(&format!("[api]\nlisten = \"{listen}\"\n"), &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains("key `api.listen`"), "{err}");
            assert!(err.contains("not a loopback address"), "{err}");
            assert!(err.contains("config file"), "{err}");
            let err = load("", &[("LULL_API_LISTEN", listen)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("LULL_API_LISTEN"), "{err}");
            assert!(err.contains("127.0.0.1:<port>"), "{err}");
        }
        let err = load("", &[("LULL_API_LISTEN", "localhost:7707")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an address like 127.0.0.1:7707"), "{err}");
        for listen in ["127.0.0.1:0", "127.0.0.2:7707", "[::1]:7707"] {
            let config = load("", &[("LULL_API_LISTEN", listen)]).unwrap();
            assert_eq!(config.api.listen, listen);
        }
    }

    #[test]
    fn invalid_toml_is_a_syntax_error() {
        let err = load("[scheduler\n", &[]).unwrap_err();
        assert!(matches!(err, ConfigError::Syntax { .. }), "{err}");
    }
}
