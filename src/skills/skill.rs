//! One skill: parsing and validating a SKILL.md.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// The file every skill folder holds.
pub const SKILL_FILE_NAME: &str = "SKILL.md";
/// Longest skill name, in characters (the Agent Skills convention).
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description, in characters (the Agent Skills convention).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Largest SKILL.md read. Skills are instructions for a model, a few kilobytes; anything near
/// this size is a mistake (or an attack on the indexer), not a skill.
pub const MAX_SKILL_MD_BYTES: u64 = 1024 * 1024;

/// The front matter of a SKILL.md Lull writes: `name`, `description`, then `extra` (the keys a
/// person's version of the skill had), as YAML between `---` lines, body not included.
///
/// YAML 1.2 (Lull's reader) and YAML 1.1 (PyYAML, which Hermes Agent and many other tools read
/// SKILL.md with) disagree on some plain scalars: `no`, `on` and `2024-01-01` are strings to
/// one and a boolean or a date to the other, and Hermes 0.19 silently skips a skill whose name
/// or description is not a string. Such a value is written single-quoted, a string to both.
pub fn render_front_matter(
    name: &str,
    description: &str,
    extra: &BTreeMap<String, serde_json::Value>,
) -> Result<String, String> {
    let mut yaml = String::new();
    for (key, value) in [("name", name), ("description", description)] {
        if yaml_1_1_reads_as_non_string(value) {
            yaml.push_str(&format!("{key}: '{}'\n", value.replace('\'', "''")));
        } else {
            let mut entry = serde_yaml_ng::Mapping::new();
            entry.insert(key.into(), value.into());
            yaml.push_str(&serde_yaml_ng::to_string(&entry).map_err(|err| err.to_string())?);
        }
    }
    if !extra.is_empty() {
        let rest = serde_yaml_ng::to_string(extra)
            .map_err(|err| format!("the skill's other keys cannot be kept: {err}"))?;
        yaml.push_str(&rest);
    }
    Ok(format!("---\n{yaml}---\n"))
}

/// Whether PyYAML's implicit resolvers (YAML 1.1) read the plain scalar `text` as a boolean, a
/// null, a number or a timestamp. (serde_yaml_ng already quotes what YAML 1.2 reads so; this
/// catches the rest: `yes`/`no`/`on`/`off`, dates, `1_000`, sexagesimal `1:20`, `=`, `<<`.)
fn yaml_1_1_reads_as_non_string(text: &str) -> bool {
    static RESOLVERS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"^(?:",
            r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",
            r"|~|null|Null|NULL|=|<<",
            r"|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+",
            r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
            r"|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?",
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*",
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
            r"|[0-9]{4}-[0-9]{2}-[0-9]{2}",
            r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?",
            r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
            r")$"
        ))
        .expect("the YAML 1.1 resolvers compile")
    });
    RESOLVERS.is_match(text)
}

/// A valid skill, as read from `<skills_dir>/<name>/SKILL.md`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    /// The skill's name, equal to its folder's name.
    pub name: String,
    /// What the skill is for; what routing embeds, with the name.
    pub description: String,
    /// Every other front-matter key, kept as data (for example `license`, `metadata`,
    /// `allowed-tools`), in key order.
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The Markdown after the front matter.
    pub body: String,
    /// The SKILL.md's path inside the skills directory.
    pub path: PathBuf,
}

/// Why a SKILL.md is not a usable skill; the message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// The file could not be read.
    #[error("cannot read SKILL.md: {0}")]
    Read(String),
    /// The file is larger than [`MAX_SKILL_MD_BYTES`].
    #[error("SKILL.md is {bytes} bytes, more than the {max} a skill may have")]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// The file is not UTF-8 text.
    #[error("SKILL.md is not UTF-8 text")]
    NotUtf8,
    /// The text holds a control character (other than tab and line ends), which terminals and
    /// editors show as nothing or act on, and C tools take for the end of the text: what
    /// follows it could hide from the person who approves it.
    #[error(
        "SKILL.md holds the control character U+{code:04X} on line {line}: a skill is plain \
         text; remove it"
    )]
    ControlCharacter {
        /// The character's code point.
        code: u32,
        /// Its line, from 1.
        line: usize,
    },
    /// The file does not open with a `---` line.
    #[error("SKILL.md has no YAML front matter: its first line must be `---`")]
    NoFrontMatter,
    /// The front matter has no closing `---` line.
    #[error("SKILL.md's front matter is not closed: add a line `---` after it")]
    UnclosedFrontMatter,
    /// The front matter is not YAML, or not a mapping of string keys.
    #[error("SKILL.md's front matter is not valid YAML: {0}")]
    Yaml(String),
    /// A required key is missing, or is not a string.
    #[error("SKILL.md's front matter needs `{key}` as a string{found}")]
    MissingKey {
        /// `name` or `description`.
        key: &'static str,
        /// What was there instead, as ", found …", or empty.
        found: String,
    },
    /// The name breaks the naming rule.
    #[error("skill name {name:?} is not valid: {reason}")]
    BadName {
        /// The name given.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The name is not the folder's name.
    #[error("skill name {name:?} does not match its folder {folder:?}: rename one of them so they are equal")]
    NameMismatch {
        /// The name in the front matter.
        name: String,
        /// The folder's name.
        folder: String,
    },
    /// The description is empty or too long.
    #[error("skill description {0}")]
    BadDescription(String),
}

/// Checks the naming rule: 1–[`MAX_NAME_CHARS`] characters of lowercase ASCII letters, digits
/// and hyphens, neither starting nor ending with a hyphen, with no two hyphens in a row.
pub fn validate_skill_name(name: &str) -> Result<(), SkillError> {
    let bad = |reason: &str| {
        Err(SkillError::BadName {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return bad(&format!("it is longer than {MAX_NAME_CHARS} characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return bad("use only lowercase letters a-z, digits and hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return bad("it must not start or end with a hyphen");
    }
    if name.contains("--") {
        return bad("it must not contain two hyphens in a row");
    }
    Ok(())
}

/// Parses the text of `<folder>/SKILL.md` into a [`Skill`] (with `path` left empty for the
/// caller to fill in), checking every rule of the convention.
pub fn parse_skill_md(text: &str, folder: &str) -> Result<Skill, SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some((line, c)) = text.lines().enumerate().find_map(|(n, line)| {
        line.chars()
            .find(|&c| is_hidden_control(c))
            .map(|c| (n + 1, c))
    }) {
        return Err(SkillError::ControlCharacter {
            code: c as u32,
            line,
        });
    }
    let (front_matter, body) = split_front_matter(text)?;
    let mut keys = parse_front_matter(front_matter)?;

    let name = take_string(&mut keys, "name")?;
    validate_skill_name(&name)?;
    if name != folder {
        return Err(SkillError::NameMismatch {
            name,
            folder: folder.to_owned(),
        });
    }
    let description = take_string(&mut keys, "description")?;
    let description = description.trim().to_owned();
    if description.is_empty() {
        return Err(SkillError::BadDescription(
            "is empty: say in a sentence what the skill is for and when to use it".into(),
        ));
    }
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(SkillError::BadDescription(format!(
            "is {description_chars} characters long, more than {MAX_DESCRIPTION_CHARS}: shorten it"
        )));
    }
    Ok(Skill {
        name,
        description,
        extra: keys,
        body: body.to_owned(),
        path: PathBuf::new(),
    })
}

/// A control character other than tab and the line ends (`\r` stays for CRLF files).
fn is_hidden_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Splits `---\n<yaml>\n---\n<body>`; the closing line may also be `...` (YAML's end marker).
fn split_front_matter(text: &str) -> Result<(&str, &str), SkillError> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(SkillError::NoFrontMatter);
    }
    let start = first.len();
    let mut position = start;
    for line in lines {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            return Ok((&text[start..position], &text[position + line.len()..]));
        }
        position += line.len();
    }
    Err(SkillError::UnclosedFrontMatter)
}

/// The front matter as a map of string keys to JSON values.
fn parse_front_matter(yaml: &str) -> Result<BTreeMap<String, serde_json::Value>, SkillError> {
    let value: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(yaml).map_err(|err| SkillError::Yaml(err.to_string()))?;
    let serde_yaml_ng::Value::Mapping(mapping) = value else {
        return Err(SkillError::Yaml(
            "it must be a mapping of keys to values, like `name: my-skill`".into(),
        ));
    };
    let mut keys = BTreeMap::new();
    for (key, value) in mapping {
        let serde_yaml_ng::Value::String(key) = key else {
            return Err(SkillError::Yaml(format!(
                "key {} is not a string",
                describe(&key)
            )));
        };
        let value = serde_json::to_value(&value).map_err(|err| {
            SkillError::Yaml(format!("the value of `{key}` cannot be kept: {err}"))
        })?;
        keys.insert(key, value);
    }
    Ok(keys)
}

fn take_string(
    keys: &mut BTreeMap<String, serde_json::Value>,
    key: &'static str,
) -> Result<String, SkillError> {
    match keys.remove(key) {
        Some(serde_json::Value::String(value)) => Ok(value),
        Some(other) => Err(SkillError::MissingKey {
            key,
            found: format!(", found {other}"),
        }),
        None => Err(SkillError::MissingKey {
            key,
            found: String::new(),
        }),
    }
}

fn describe(value: &serde_yaml_ng::Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Skill, SkillError> {
        parse_skill_md(text, "deploy")
    }

    #[test]
    fn keeps_other_keys_and_the_body() {
        let skill = parse(
            "---\nname: deploy\ndescription: Ship it.\nlicense: MIT\nmetadata:\n  version: 2\n---\n# Deploy\n",
        )
        .unwrap();
        assert_eq!(skill.description, "Ship it.");
        assert_eq!(skill.extra["license"], "MIT");
        assert_eq!(skill.extra["metadata"]["version"], 2);
        assert_eq!(skill.body, "# Deploy\n");
    }

    #[test]
    fn accepts_bom_crlf_and_the_yaml_end_marker() {
        let skill = parse("\u{feff}---\r\nname: deploy\r\ndescription: x\r\n...\r\nbody").unwrap();
        assert_eq!(skill.body, "body");
    }

    #[test]
    fn a_control_character_is_refused_with_its_line_and_tabs_and_crlf_are_kept() {
        let text = |body: &str| format!("---\nname: deploy\ndescription: x\n---\n{body}\n");
        for (c, code) in [
            ('\u{0}', "U+0000"),
            ('\u{1b}', "U+001B"),
            ('\u{7f}', "U+007F"),
            ('\u{85}', "U+0085"),
        ] {
            let err = parse(&text(&format!("Run{c}it."))).unwrap_err();
            assert!(
                matches!(err, SkillError::ControlCharacter { line: 5, .. }),
                "{err:?}"
            );
            assert!(err.to_string().contains(code), "{err}");
        }
        assert!(parse(&text("\tindented\r")).is_ok());
    }

    #[test]
    fn front_matter_reads_the_same_in_yaml_1_1_and_1_2() {
        let extra = BTreeMap::from([("license".to_string(), serde_json::json!("MIT"))]);
        // Valid skill names and descriptions that PyYAML would read as a bool, a date, a number.
        for (name, description) in [
            ("no", "on"),
            ("yes", "2024-01-01"),
            ("2024-01-01", "1:20"),
            ("off", "it's ~"),
            ("create", "Check the lock file first."),
        ] {
            let md = format!(
                "{}body\n",
                render_front_matter(name, description, &extra).unwrap()
            );
            let skill = parse_skill_md(&md, name).unwrap();
            assert_eq!(
                (skill.name.as_str(), skill.description.as_str()),
                (name, description)
            );
            assert_eq!(skill.extra, extra);
            let quoted = yaml_1_1_reads_as_non_string(name);
            assert_eq!(md.contains(&format!("name: '{name}'\n")), quoted, "{md}");
        }
        // Ordinary values are written as before, unquoted.
        let md = render_front_matter("git-bisect", "Find the first bad commit.", &BTreeMap::new());
        assert_eq!(
            md.unwrap(),
            "---\nname: git-bisect\ndescription: Find the first bad commit.\n---\n"
        );
        for plain in [
            "git-bisect",
            "no-op",
            "yes-and-no",
            "1-2",
            "Yes, do it",
            "on call",
            "v1.2.3",
        ] {
            assert!(!yaml_1_1_reads_as_non_string(plain), "{plain}");
        }
        for special in [
            "No",
            "OFF",
            "2024-1-1 10:00:00",
            "1_000",
            "2024",
            ".inf",
            "=",
            "<<",
            "~",
        ] {
            assert!(yaml_1_1_reads_as_non_string(special), "{special}");
        }
    }

    #[test]
    fn names_follow_the_rule() {
        for good in ["a", "git-bisect", "k8s-2", &"a".repeat(64)] {
            assert!(validate_skill_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Git",
            "git_bisect",
            "-a",
            "a-",
            "a--b",
            "a b",
            &"a".repeat(65),
            "é",
        ] {
            assert!(validate_skill_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reasons_say_what_to_fix() {
        let cases = [
            ("name: deploy\n", "no YAML front matter"),
            ("---\nname: deploy\n", "not closed"),
            ("---\n[1, 2]\n---\n", "must be a mapping"),
            ("---\nname: [deploy\n---\n", "not valid YAML"),
            ("---\ndescription: x\n---\n", "needs `name`"),
            (
                "---\nname: 7\ndescription: x\n---\n",
                "needs `name` as a string, found 7",
            ),
            (
                "---\nname: other\ndescription: x\n---\n",
                "does not match its folder",
            ),
            ("---\nname: deploy\n---\n", "needs `description`"),
            ("---\nname: deploy\ndescription: \"  \"\n---\n", "is empty"),
            (
                "---\nname: deploy\nname: deploy\ndescription: x\n---\n",
                "duplicate",
            ),
        ];
        for (text, expected) in cases {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.contains(expected), "{text:?}: {message}");
        }
        let long = format!(
            "---\nname: deploy\ndescription: {}\n---\n",
            "x".repeat(1025)
        );
        assert!(parse(&long)
            .unwrap_err()
            .to_string()
            .contains("1025 characters"));
        let fits = format!(
            "---\nname: deploy\ndescription: {}\n---\n",
            "é".repeat(1024)
        );
        assert!(parse(&fits).is_ok());
    }
}
