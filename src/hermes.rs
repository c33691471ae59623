//! `lull hermes setup`: makes Lull the learning engine of a Hermes Agent install, and `--undo`
//! takes it back out.
//!
//! Three edits, each recorded with the value it replaced so that an undo restores exactly what
//! was there and nothing the person changed since:
//!
//! 1. Lull's `skills.dir` (its `config.toml`) becomes Hermes's skills folder
//!    (`$HERMES_HOME/skills`), so an approved draft is a skill Hermes loads.
//! 2. Hermes's `config.yaml`: `plugins.enabled` gains `lull` (and `plugins.disabled` loses it),
//!    and `skills.creation_nudge_interval` becomes 0, which stops Hermes's own background skill
//!    review, the one that runs right after a turn on the person's GPU (Hermes 0.19:
//!    `agent/turn_finalizer.py` reviews skills only while that interval is above 0).
//! 3. The `lull` plugin is written as a directory plugin into `$HERMES_HOME/plugins/lull/`
//!    (its files are compiled into this binary from `integrations/hermes/lull_hermes/`).
//!
//! Each edited file is copied to `<file>.before-lull-<unix seconds>` first and replaced
//! atomically, keeping its permissions. A second run changes nothing. Hermes writes its
//! `config.yaml` with a YAML dumper (`hermes config set` drops comments too), and so does this:
//! the backup keeps the original text.
//!
//! The record of what was changed is `<data_dir>/hermes-setup.json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml_ng::{Mapping, Value as Yaml};

/// The plugin's name in both of its forms (directory and pip entry point).
pub const PLUGIN_NAME: &str = "lull";

/// The directory plugin's files, as `integrations/hermes/lull_hermes/` has them.
pub const PLUGIN_FILES: [(&str, &str); 3] = [
    (
        "__init__.py",
        include_str!("../integrations/hermes/lull_hermes/__init__.py"),
    ),
    (
        "plugin.yaml",
        include_str!("../integrations/hermes/lull_hermes/plugin.yaml"),
    ),
    (
        "lull_client.py",
        include_str!("../integrations/hermes/lull_hermes/lull_client.py"),
    ),
];

/// The Hermes key that paces Hermes's own background skill review (0: never).
const NUDGE_KEY: (&str, &str) = ("skills", "creation_nudge_interval");

/// The record's file name in the data folder.
const RECORD_FILE: &str = "hermes-setup.json";

/// Why the set-up (or its undo) could not be done. Nothing is half-changed: every file is
/// replaced whole, and the record is written after the files.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A configuration file is not what its program would read.
    #[error("{}: {message}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
}

/// Where the set-up works: Hermes's home, Lull's configuration file and data folder.
#[derive(Debug, Clone)]
pub struct HermesSetup {
    /// `$HERMES_HOME`, by default `~/.hermes`.
    pub hermes_home: PathBuf,
    /// Lull's `config.toml` (it need not exist).
    pub lull_config: PathBuf,
    /// Lull's data folder, where the record is kept.
    pub data_dir: PathBuf,
}

/// What a run did, one line per item, for the person to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// What was changed, with the backups made.
    pub changed: Vec<String>,
    /// What was already as it should be.
    pub unchanged: Vec<String>,
    /// What the person should know or do next.
    pub notes: Vec<String>,
}

/// What the set-up changed, written as JSON in the data folder; a `None` edit was not made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Record {
    hermes_home: PathBuf,
    #[serde(default)]
    skills_dir: Option<Replaced<String>>,
    #[serde(default)]
    nudge: Option<Replaced<serde_json::Value>>,
    #[serde(default)]
    enabled_added: bool,
    #[serde(default)]
    disabled_removed: bool,
    #[serde(default)]
    plugin_written: bool,
}

/// A value the set-up replaced; `before` is `None` when the key was absent. (A struct, not a
/// nested `Option`: JSON's `null` could not tell "absent" from "not changed".)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Replaced<T> {
    before: Option<T>,
}

impl HermesSetup {
    /// `$HERMES_HOME`, else `~/.hermes`: where Hermes 0.19 looks (`hermes_constants.py`).
    pub fn default_hermes_home() -> Option<PathBuf> {
        match std::env::var_os("HERMES_HOME") {
            Some(home) if !home.is_empty() => Some(PathBuf::from(home)),
            _ => dirs::home_dir().map(|home| home.join(".hermes")),
        }
    }

    /// Hermes's skills folder, which becomes Lull's.
    pub fn skills_dir(&self) -> PathBuf {
        self.hermes_home.join("skills")
    }

    fn hermes_config(&self) -> PathBuf {
        self.hermes_home.join("config.yaml")
    }

    fn plugin_dir(&self) -> PathBuf {
        self.hermes_home.join("plugins").join(PLUGIN_NAME)
    }

    fn record_file(&self) -> PathBuf {
        self.data_dir.join(RECORD_FILE)
    }

    /// Makes the three edits that are not made yet.
    pub fn apply(&self) -> Result<Report, SetupError> {
        // A mistyped --hermes-home must not become a second, empty Hermes home.
        if !self.hermes_home.is_dir() {
            return Err(SetupError::Malformed {
                path: self.hermes_home.clone(),
                message: "no Hermes home here: install Hermes Agent and run it once (it creates                           ~/.hermes), or name its home with --hermes-home or HERMES_HOME"
                    .into(),
            });
        }
        let mut report = Report::default();
        let mut record = match self.read_record()? {
            Some(record) if record.hermes_home == self.hermes_home => record,
            Some(other) => {
                return Err(SetupError::Malformed {
                    path: self.record_file(),
                    message: format!(
                        "Lull is set up for the Hermes home {} already: run `lull hermes setup \
                         --undo --hermes-home {}` first",
                        other.hermes_home.display(),
                        other.hermes_home.display()
                    ),
                })
            }
            None => Record {
                hermes_home: self.hermes_home.clone(),
                ..Record::default()
            },
        };
        let stamp = unix_seconds();

        // Every edit is made in memory first, so a file that cannot be read stops the set-up
        // before anything is written.
        let skills_dir = self.skills_dir();
        let wanted = skills_dir.to_string_lossy().into_owned();
        let mut lull_config = LullConfig::read(&self.lull_config)?;
        let before = lull_config.skills_dir();
        let move_skills = before.as_deref() != Some(wanted.as_str());
        if move_skills {
            lull_config.set_skills_dir(Some(&wanted));
        }

        let mut hermes = HermesConfig::read(&self.hermes_config())?;
        let mut hermes_changes = Vec::new();
        if hermes.add_to("enabled")? {
            record.enabled_added = true;
            hermes_changes.push(format!("plugins.enabled gains {PLUGIN_NAME}"));
        } else {
            report
                .unchanged
                .push(format!("the {PLUGIN_NAME} plugin is enabled in Hermes"));
        }
        if hermes.remove_from("disabled")? {
            record.disabled_removed = true;
            hermes_changes.push(format!("plugins.disabled loses {PLUGIN_NAME}"));
        }
        let nudge = hermes.get(NUDGE_KEY);
        if nudge.as_ref().and_then(Yaml::as_i64) == Some(0) {
            report
                .unchanged
                .push("Hermes's own background skill review is off".into());
        } else {
            hermes.set(NUDGE_KEY, Some(Yaml::from(0)))?;
            record.nudge.get_or_insert(Replaced {
                before: nudge.map(|value| yaml_to_json(&value)),
            });
            hermes_changes.push(format!(
                "{}.{} → 0 (Hermes's own background skill review off; Lull reviews in the lulls)",
                NUDGE_KEY.0, NUDGE_KEY.1
            ));
        }

        if move_skills {
            let backup = lull_config.write(stamp)?;
            record.skills_dir.get_or_insert(Replaced {
                before: before.clone(),
            });
            report.changed.push(format!(
                "Lull's skills folder: {} → {wanted} in {}{}",
                before
                    .as_deref()
                    .unwrap_or("<data_dir>/skills (the default)"),
                self.lull_config.display(),
                backed_up(&backup)
            ));
            report.notes.push(
                "restart Lull (quit the tray app and start it again, or restart `lull serve`) so \
                 it uses the new skills folder"
                    .into(),
            );
            let previous = before.map_or_else(|| self.data_dir.join("skills"), PathBuf::from);
            let left = count_skill_folders(&previous);
            if left > 0 {
                report.notes.push(format!(
                    "{left} skill folder(s) stay in the previous skills folder {}: copy those you \
                     want Hermes to use into {}",
                    previous.display(),
                    skills_dir.display()
                ));
            }
        } else {
            report.unchanged.push(format!(
                "Lull's skills folder is {wanted} ({})",
                self.lull_config.display()
            ));
        }
        std::fs::create_dir_all(&skills_dir).map_err(io_error(&skills_dir))?;

        if !hermes_changes.is_empty() {
            let backup = hermes.write(stamp)?;
            report.changed.push(format!(
                "Hermes's {}: {}{}",
                self.hermes_config().display(),
                hermes_changes.join("; "),
                backed_up(&backup)
            ));
        }

        let plugin_dir = self.plugin_dir();
        let existed = plugin_dir.exists();
        let written = write_plugin(&plugin_dir)?;
        if !existed {
            record.plugin_written = true;
        }
        if written {
            report.changed.push(format!(
                "the {PLUGIN_NAME} plugin {} in {}",
                if existed { "updated" } else { "written" },
                plugin_dir.display()
            ));
        } else {
            report.unchanged.push(format!(
                "the {PLUGIN_NAME} plugin is current in {}",
                plugin_dir.display()
            ));
        }

        self.write_record(&record)?;
        report.notes.push(
            "Hermes's memory review (memory.nudge_interval) is left as it is: Lull learns skills, \
             not memories"
                .into(),
        );
        Ok(report)
    }

    /// Puts back what [`HermesSetup::apply`] changed, where it is still as the set-up left it.
    pub fn undo(&self) -> Result<Report, SetupError> {
        let mut report = Report::default();
        let Some(record) = self.read_record()? else {
            report.unchanged.push(format!(
                "nothing to undo: `lull hermes setup` has not changed anything for {} (no {})",
                self.data_dir.display(),
                RECORD_FILE
            ));
            return Ok(report);
        };
        // The recorded home, not the one asked for: that is where the edits are.
        let setup = HermesSetup {
            hermes_home: record.hermes_home.clone(),
            ..self.clone()
        };
        let stamp = unix_seconds();

        if let Some(Replaced { before }) = &record.skills_dir {
            let mut lull_config = LullConfig::read(&setup.lull_config)?;
            let ours = setup.skills_dir().to_string_lossy().into_owned();
            if lull_config.skills_dir().as_deref() == Some(ours.as_str()) {
                lull_config.set_skills_dir(before.as_deref());
                let backup = lull_config.write(stamp)?;
                report.changed.push(format!(
                    "Lull's skills folder: back to {} in {}{}",
                    before
                        .as_deref()
                        .unwrap_or("the default (<data_dir>/skills)"),
                    setup.lull_config.display(),
                    backed_up(&backup)
                ));
                report.notes.push(
                    "restart Lull so it uses its previous skills folder; skills it approved into \
                     Hermes's folder stay there"
                        .into(),
                );
            } else {
                report.unchanged.push(format!(
                    "Lull's skills folder was changed since the set-up; left as it is in {}",
                    setup.lull_config.display()
                ));
            }
        }

        let mut hermes = HermesConfig::read(&setup.hermes_config())?;
        let mut hermes_changes = Vec::new();
        if record.enabled_added && hermes.remove_from("enabled")? {
            hermes_changes.push(format!("plugins.enabled loses {PLUGIN_NAME}"));
        }
        if record.disabled_removed && hermes.add_to("disabled")? {
            hermes_changes.push(format!("plugins.disabled gains {PLUGIN_NAME} again"));
        }
        if let Some(Replaced { before }) = &record.nudge {
            if hermes.get(NUDGE_KEY).as_ref().and_then(Yaml::as_i64) == Some(0) {
                hermes.set(NUDGE_KEY, before.as_ref().map(json_to_yaml))?;
                hermes_changes.push(format!(
                    "{}.{} back to {}",
                    NUDGE_KEY.0,
                    NUDGE_KEY.1,
                    before
                        .as_ref()
                        .map_or("Hermes's default".to_string(), ToString::to_string)
                ));
            } else {
                report.unchanged.push(format!(
                    "{}.{} was changed since the set-up; left as it is",
                    NUDGE_KEY.0, NUDGE_KEY.1
                ));
            }
        }
        if !hermes_changes.is_empty() {
            let backup = hermes.write(stamp)?;
            report.changed.push(format!(
                "Hermes's {}: {}{}",
                setup.hermes_config().display(),
                hermes_changes.join("; "),
                backed_up(&backup)
            ));
        }

        if record.plugin_written {
            let removed = remove_plugin(&setup.plugin_dir())?;
            report.changed.push(if removed {
                format!(
                    "the {PLUGIN_NAME} plugin removed from {}",
                    setup.plugin_dir().display()
                )
            } else {
                format!(
                    "the {PLUGIN_NAME} plugin's files removed; {} holds other files and stays",
                    setup.plugin_dir().display()
                )
            });
        }

        let record_file = self.record_file();
        std::fs::remove_file(&record_file).map_err(io_error(&record_file))?;
        Ok(report)
    }

    fn read_record(&self) -> Result<Option<Record>, SetupError> {
        let path = self.record_file();
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|err| SetupError::Malformed {
                        path: path.clone(),
                        message: format!(
                        "{err}: this record of `lull hermes setup` is damaged; remove it and undo \
                         the set-up by hand (the .before-lull-* backups hold the earlier files)"
                    ),
                    })
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(SetupError::Io { path, source: err }),
        }
    }

    fn write_record(&self, record: &Record) -> Result<(), SetupError> {
        let path = self.record_file();
        std::fs::create_dir_all(&self.data_dir).map_err(io_error(&self.data_dir))?;
        let text = serde_json::to_string_pretty(record).expect("the record serialises");
        replace_file(&path, text.as_bytes())
    }
}

/// Lull's `config.toml`, edited with its comments and layout kept.
struct LullConfig {
    path: PathBuf,
    original: Option<String>,
    document: toml_edit::DocumentMut,
}

impl LullConfig {
    fn read(path: &Path) -> Result<LullConfig, SetupError> {
        let original = read_optional(path)?;
        let document = original
            .as_deref()
            .unwrap_or("")
            .parse::<toml_edit::DocumentMut>()
            .map_err(|err| SetupError::Malformed {
                path: path.to_path_buf(),
                message: format!("not valid TOML: {err}; fix it, then run the set-up again"),
            })?;
        Ok(LullConfig {
            path: path.to_path_buf(),
            original,
            document,
        })
    }

    fn skills_dir(&self) -> Option<String> {
        self.document
            .get("skills")
            .and_then(|skills| skills.get("dir"))
            .and_then(|dir| dir.as_str())
            .map(str::to_string)
    }

    fn set_skills_dir(&mut self, dir: Option<&str>) {
        match dir {
            Some(dir) => {
                let skills = self
                    .document
                    .entry("skills")
                    .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
                skills["dir"] = toml_edit::value(dir);
            }
            None => {
                if let Some(skills) = self.document.get_mut("skills") {
                    if let Some(table) = skills.as_table_like_mut() {
                        table.remove("dir");
                        if table.is_empty() {
                            self.document.remove("skills");
                        }
                    }
                }
            }
        }
    }

    /// Writes the file; the backup made of the previous one, if there was one.
    fn write(&self, stamp: u64) -> Result<Option<PathBuf>, SetupError> {
        write_backed_up(
            &self.path,
            self.original.as_deref(),
            &self.document.to_string(),
            stamp,
        )
    }
}

/// Hermes's `config.yaml` as a YAML mapping.
struct HermesConfig {
    path: PathBuf,
    original: Option<String>,
    root: Mapping,
}

impl HermesConfig {
    fn read(path: &Path) -> Result<HermesConfig, SetupError> {
        let original = read_optional(path)?;
        let malformed = |message: String| SetupError::Malformed {
            path: path.to_path_buf(),
            message,
        };
        let root =
            match original.as_deref().map(serde_yaml_ng::from_str::<Yaml>) {
                None => Mapping::new(),
                Some(Ok(Yaml::Mapping(root))) => root,
                Some(Ok(Yaml::Null)) => Mapping::new(),
                Some(Ok(_)) => return Err(malformed(
                    "is not a YAML mapping of settings; fix it (or run `hermes setup`), then run \
                     the set-up again"
                        .into(),
                )),
                Some(Err(err)) => {
                    return Err(malformed(format!(
                        "not valid YAML: {err}; fix it, then run the set-up again"
                    )))
                }
            };
        Ok(HermesConfig {
            path: path.to_path_buf(),
            original,
            root,
        })
    }

    fn get(&self, (section, key): (&str, &str)) -> Option<Yaml> {
        self.root.get(section)?.get(key).cloned()
    }

    /// Sets `section.key`, or removes it for `None`.
    fn set(&mut self, (section, key): (&str, &str), value: Option<Yaml>) -> Result<(), SetupError> {
        let table = self.section(section)?;
        match value {
            Some(value) => {
                table.insert(key.into(), value);
            }
            None => {
                table.remove(key);
            }
        }
        Ok(())
    }

    /// The mapping under `section`, made when absent.
    fn section(&mut self, section: &str) -> Result<&mut Mapping, SetupError> {
        let path = self.path.clone();
        let entry = self
            .root
            .entry(section.into())
            .or_insert_with(|| Yaml::Mapping(Mapping::new()));
        if entry.is_null() {
            *entry = Yaml::Mapping(Mapping::new());
        }
        entry.as_mapping_mut().ok_or_else(|| SetupError::Malformed {
            path,
            message: format!("`{section}` is not a mapping; fix it, then run the set-up again"),
        })
    }

    /// The list `plugins.<key>`, made when absent.
    fn plugin_list(&mut self, key: &str) -> Result<&mut Vec<Yaml>, SetupError> {
        let path = self.path.clone();
        let entry = self
            .section("plugins")?
            .entry(key.into())
            .or_insert_with(|| Yaml::Sequence(Vec::new()));
        if entry.is_null() {
            *entry = Yaml::Sequence(Vec::new());
        }
        entry
            .as_sequence_mut()
            .ok_or_else(|| SetupError::Malformed {
                path,
                message: format!(
                    "`plugins.{key}` is not a list; fix it, then run the set-up again"
                ),
            })
    }

    fn list_has_plugin(&self, key: &str) -> bool {
        self.root
            .get("plugins")
            .and_then(|plugins| plugins.get(key))
            .and_then(Yaml::as_sequence)
            .is_some_and(|list| list.iter().any(|item| item.as_str() == Some(PLUGIN_NAME)))
    }

    /// Adds the plugin to `plugins.<key>`; whether it was not there.
    fn add_to(&mut self, key: &str) -> Result<bool, SetupError> {
        if self.list_has_plugin(key) {
            return Ok(false);
        }
        self.plugin_list(key)?.push(PLUGIN_NAME.into());
        Ok(true)
    }

    /// Takes the plugin out of `plugins.<key>`; whether it was there.
    fn remove_from(&mut self, key: &str) -> Result<bool, SetupError> {
        if !self.list_has_plugin(key) {
            return Ok(false);
        }
        self.plugin_list(key)?
            .retain(|item| item.as_str() != Some(PLUGIN_NAME));
        Ok(true)
    }

    fn write(&self, stamp: u64) -> Result<Option<PathBuf>, SetupError> {
        let text = serde_yaml_ng::to_string(&Yaml::Mapping(self.root.clone()))
            .expect("a YAML mapping serialises");
        write_backed_up(&self.path, self.original.as_deref(), &text, stamp)
    }
}

/// Writes the plugin's files where they differ; whether any was written.
fn write_plugin(dir: &Path) -> Result<bool, SetupError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let mut written = false;
    for (name, text) in PLUGIN_FILES {
        let path = dir.join(name);
        if read_optional(&path)?.as_deref() != Some(text) {
            replace_file(&path, text.as_bytes())?;
            written = true;
        }
    }
    Ok(written)
}

/// Removes the plugin's files, and the folder when nothing else is in it (Python's
/// `__pycache__` aside); whether the folder went.
fn remove_plugin(dir: &Path) -> Result<bool, SetupError> {
    for (name, _) in PLUGIN_FILES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(SetupError::Io { path, source: err })
            }
            _ => {}
        }
    }
    let cache = dir.join("__pycache__");
    if cache.is_dir() {
        std::fs::remove_dir_all(&cache).map_err(io_error(&cache))?;
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(_) => Ok(false),
    }
}

/// Writes a configuration file (creating its folder), copying the text it replaces to a
/// backup first; the backup's path, when there was a file.
fn write_backed_up(
    path: &Path,
    original: Option<&str>,
    text: &str,
    stamp: u64,
) -> Result<Option<PathBuf>, SetupError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    let backup = backup(path, original, stamp)?;
    replace_file(path, text.as_bytes())?;
    Ok(backup)
}

/// Copies the file's current text to `<file>.before-lull-<stamp>` (same permissions), if
/// there is a file.
fn backup(path: &Path, original: Option<&str>, stamp: u64) -> Result<Option<PathBuf>, SetupError> {
    let Some(original) = original else {
        return Ok(None);
    };
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".before-lull-{stamp}"));
    let target = path.with_file_name(name);
    replace_file_like(&target, original.as_bytes(), path)?;
    Ok(Some(target))
}

/// Replaces `path` atomically (a temporary file in the same folder, then a rename), keeping
/// the permissions of the file it replaces.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), SetupError> {
    replace_file_like(path, bytes, path)
}

/// [`replace_file`] with the permissions of `like` when it exists (else private to the
/// person: a Hermes or Lull configuration may hold keys).
fn replace_file_like(path: &Path, bytes: &[u8], like: &Path) -> Result<(), SetupError> {
    use std::io::Write;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(folder).map_err(io_error(folder))?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(io_error(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(like).map_or(0o600, |m| m.permissions().mode() & 0o777);
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io_error(path))?;
    }
    #[cfg(not(unix))]
    let _ = like;
    temp.persist(path).map_err(|err| SetupError::Io {
        path: path.to_path_buf(),
        source: err.error,
    })?;
    Ok(())
}

fn read_optional(path: &Path) -> Result<Option<String>, SetupError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(SetupError::Io {
            path: path.to_path_buf(),
            source: err,
        }),
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SetupError + '_ {
    move |source| SetupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn backed_up(backup: &Option<PathBuf>) -> String {
    backup
        .as_ref()
        .map(|path| format!(" (the previous file is kept as {})", path.display()))
        .unwrap_or_default()
}

/// Folders of `dir` holding a SKILL.md, usable or not, as the skills index sees them.
fn count_skill_folders(dir: &Path) -> usize {
    crate::skills::scan_skills_dir(dir).map_or(0, |set| set.skills.len() + set.skipped.len())
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn yaml_to_json(value: &Yaml) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

fn json_to_yaml(value: &serde_json::Value) -> Yaml {
    serde_yaml_ng::to_value(value).unwrap_or(Yaml::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup_in(dir: &Path) -> HermesSetup {
        std::fs::create_dir_all(dir.join("hermes")).unwrap();
        HermesSetup {
            hermes_home: dir.join("hermes"),
            lull_config: dir.join("config").join("config.toml"),
            data_dir: dir.join("data"),
        }
    }

    fn hermes_yaml(setup: &HermesSetup) -> Yaml {
        serde_yaml_ng::from_str(&std::fs::read_to_string(setup.hermes_config()).unwrap()).unwrap()
    }

    fn backups(folder: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(folder)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".before-lull-"))
            .collect();
        names.sort();
        names
    }

    const HERMES_CONFIG: &str = "model:\n  default: smollm2\n  provider: custom\nplugins:\n  enabled: [other]\n  disabled: [lull]\nskills:\n  creation_nudge_interval: 15\n";
    const LULL_CONFIG: &str = "# my settings\n[scheduler]\nsettle_s = 20 # seconds\n";

    #[test]
    fn sets_up_once_and_undoes_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        std::fs::create_dir_all(&setup.hermes_home).unwrap();
        std::fs::write(setup.hermes_config(), HERMES_CONFIG).unwrap();
        std::fs::create_dir_all(setup.lull_config.parent().unwrap()).unwrap();
        std::fs::write(&setup.lull_config, LULL_CONFIG).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                setup.hermes_config(),
                std::fs::Permissions::from_mode(0o640),
            )
            .unwrap();
        }

        let report = setup.apply().unwrap();
        assert_eq!(report.changed.len(), 3, "{report:?}");
        let yaml = hermes_yaml(&setup);
        assert_eq!(
            yaml["plugins"]["enabled"],
            serde_yaml_ng::from_str::<Yaml>("[other, lull]").unwrap()
        );
        assert_eq!(yaml["plugins"]["disabled"], Yaml::Sequence(vec![]));
        assert_eq!(yaml["skills"]["creation_nudge_interval"], Yaml::from(0));
        assert_eq!(yaml["model"]["default"], Yaml::from("smollm2"));
        let toml = std::fs::read_to_string(&setup.lull_config).unwrap();
        assert!(toml.contains("# my settings") && toml.contains("settle_s = 20 # seconds"));
        let config = crate::Config::load(&setup.lull_config, Vec::new()).unwrap();
        assert_eq!(config.skills_dir(Path::new("/d")), setup.skills_dir());
        assert!(setup.skills_dir().is_dir());
        for (name, text) in PLUGIN_FILES {
            assert_eq!(
                std::fs::read_to_string(setup.plugin_dir().join(name)).unwrap(),
                text
            );
        }
        assert_eq!(backups(&setup.hermes_home).len(), 1);
        assert_eq!(backups(setup.lull_config.parent().unwrap()).len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(
                mode(&setup.hermes_config()),
                0o640,
                "the config keeps its mode"
            );
            let backup = setup.hermes_home.join(&backups(&setup.hermes_home)[0]);
            assert_eq!(std::fs::read_to_string(&backup).unwrap(), HERMES_CONFIG);
            assert_eq!(mode(&backup), 0o640);
        }

        // Idempotent: a second run changes nothing and makes no backup.
        let again = setup.apply().unwrap();
        assert!(again.changed.is_empty(), "{again:?}");
        assert_eq!(backups(&setup.hermes_home).len(), 1);

        // The person changes something else of Hermes's meanwhile; the undo keeps it.
        let mut yaml = hermes_yaml(&setup);
        yaml["model"]["default"] = Yaml::from("qwen");
        std::fs::write(
            setup.hermes_config(),
            serde_yaml_ng::to_string(&yaml).unwrap(),
        )
        .unwrap();

        let undone = setup.undo().unwrap();
        assert_eq!(undone.changed.len(), 3, "{undone:?}");
        let yaml = hermes_yaml(&setup);
        assert_eq!(
            yaml["plugins"]["enabled"],
            serde_yaml_ng::from_str::<Yaml>("[other]").unwrap()
        );
        assert_eq!(
            yaml["plugins"]["disabled"],
            serde_yaml_ng::from_str::<Yaml>("[lull]").unwrap()
        );
        assert_eq!(yaml["skills"]["creation_nudge_interval"], Yaml::from(15));
        assert_eq!(yaml["model"]["default"], Yaml::from("qwen"));
        assert_eq!(
            std::fs::read_to_string(&setup.lull_config).unwrap(),
            LULL_CONFIG
        );
        assert!(!setup.plugin_dir().exists());
        assert!(!setup.record_file().exists());
        assert!(
            setup.undo().unwrap().changed.is_empty(),
            "a second undo does nothing"
        );
    }

    #[test]
    fn sets_up_a_fresh_hermes_home_and_removes_what_it_added() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        setup.apply().unwrap();
        let yaml = hermes_yaml(&setup);
        assert_eq!(
            yaml["plugins"]["enabled"],
            serde_yaml_ng::from_str::<Yaml>("[lull]").unwrap()
        );
        assert!(backups(&setup.hermes_home).is_empty(), "nothing to back up");
        setup.undo().unwrap();
        let yaml = hermes_yaml(&setup);
        assert_eq!(yaml["plugins"]["enabled"], Yaml::Sequence(vec![]));
        assert_eq!(yaml["skills"].get("creation_nudge_interval"), None);
        let config = crate::Config::load(&setup.lull_config, Vec::new()).unwrap();
        assert_eq!(config.skills.dir, None);
    }

    #[test]
    fn skills_left_in_the_previous_folder_are_named_in_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        let previous = setup.data_dir.join("skills");
        for (name, text) in [
            (
                "deploy",
                "---\nname: deploy\ndescription: Ship it.\n---\nSteps.\n",
            ),
            ("broken", "not a skill"),
        ] {
            std::fs::create_dir_all(previous.join(name)).unwrap();
            std::fs::write(previous.join(name).join("SKILL.md"), text).unwrap();
        }
        std::fs::create_dir_all(previous.join("notes")).unwrap();
        let report = setup.apply().unwrap();
        assert!(
            report.notes.iter().any(
                |note| note.starts_with("2 skill folder(s) stay in the previous skills folder")
            ),
            "{report:?}"
        );
    }

    #[test]
    fn a_hermes_home_that_does_not_exist_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let setup = HermesSetup {
            hermes_home: dir.path().join("hermess"),
            ..setup_in(dir.path())
        };
        let err = setup.apply().unwrap_err().to_string();
        assert!(err.contains("no Hermes home here"), "{err}");
        assert!(!setup.hermes_home.exists());
        assert!(!setup.lull_config.exists(), "nothing was changed");
    }

    #[test]
    fn an_edit_made_after_the_setup_is_left_alone_by_the_undo() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        setup.apply().unwrap();
        let mut yaml = hermes_yaml(&setup);
        yaml["skills"]["creation_nudge_interval"] = Yaml::from(5);
        std::fs::write(
            setup.hermes_config(),
            serde_yaml_ng::to_string(&yaml).unwrap(),
        )
        .unwrap();
        std::fs::write(&setup.lull_config, "[skills]\ndir = \"/elsewhere\"\n").unwrap();
        let undone = setup.undo().unwrap();
        assert_eq!(undone.unchanged.len(), 2, "{undone:?}");
        assert_eq!(
            hermes_yaml(&setup)["skills"]["creation_nudge_interval"],
            Yaml::from(5)
        );
        assert!(std::fs::read_to_string(&setup.lull_config)
            .unwrap()
            .contains("/elsewhere"));
    }

    #[test]
    fn a_config_it_cannot_read_is_refused_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        std::fs::create_dir_all(&setup.hermes_home).unwrap();
        for bad in [
            "plugins: [1, 2]\n",
            "- a list\n",
            "plugins:\n  enabled: lull\n",
            "a: [b\n",
        ] {
            std::fs::write(setup.hermes_config(), bad).unwrap();
            let err = setup.apply().unwrap_err();
            assert!(
                matches!(err, SetupError::Malformed { .. }),
                "{bad:?}: {err}"
            );
            assert!(err.to_string().contains("config.yaml"), "{err}");
            assert_eq!(std::fs::read_to_string(setup.hermes_config()).unwrap(), bad);
        }
        assert!(
            !setup.plugin_dir().exists(),
            "nothing of the plugin written"
        );
        assert!(!setup.record_file().exists());
    }

    #[test]
    fn another_hermes_home_needs_an_undo_first() {
        let dir = tempfile::tempdir().unwrap();
        let setup = setup_in(dir.path());
        setup.apply().unwrap();
        let other = HermesSetup {
            hermes_home: dir.path().join("other"),
            ..setup.clone()
        };
        std::fs::create_dir(&other.hermes_home).unwrap();
        let err = other.apply().unwrap_err().to_string();
        assert!(err.contains("--undo"), "{err}");
        // The undo works on the recorded home, whichever one is asked for.
        other.undo().unwrap();
        assert!(!setup.plugin_dir().exists());
    }
}
