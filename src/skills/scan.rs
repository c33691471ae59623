//! Reading a whole skills directory, refusing anything that leads outside it.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::skill::{parse_skill_md, Skill, SkillError, MAX_SKILL_MD_BYTES, SKILL_FILE_NAME};
use super::SkillsError;

/// Every skill of a directory at one moment, and every folder that is not a valid skill.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SkillSet {
    /// The skills directory as configured.
    pub dir: PathBuf,
    /// Valid skills by name.
    pub skills: BTreeMap<String, Skill>,
    /// Folders skipped, with the reason, in folder order.
    pub skipped: Vec<SkippedSkill>,
}

/// A folder of the skills directory that is not a usable skill, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SkippedSkill {
    /// The folder's name (lossy if it is not UTF-8).
    pub folder: String,
    /// Why it was skipped, saying what to fix.
    pub reason: String,
}

/// Reads every `<dir>/<folder>/SKILL.md`.
///
/// Folders whose name starts with `.` and plain files are ignored; a folder without a SKILL.md
/// is not a skill and is ignored too. Every other problem skips that one folder with a reason:
/// a SKILL.md that breaks the convention ([`SkillError`]), a folder name that is not UTF-8, or
/// a path that leads outside `dir` through a symlink (the folder or the SKILL.md itself). The
/// check compares fully resolved paths, so `dir` itself may be a symlink.
///
/// Fails only when `dir` cannot be read at all.
pub fn scan_skills_dir(dir: &Path) -> Result<SkillSet, SkillsError> {
    let dir_error = |source| SkillsError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    let root = dir.canonicalize().map_err(dir_error)?;
    let mut entries: Vec<_> = std::fs::read_dir(&root)
        .map_err(dir_error)?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|entry| entry.file_name());

    let mut set = SkillSet {
        dir: dir.to_path_buf(),
        ..SkillSet::default()
    };
    for entry in entries {
        let file_name = entry.file_name();
        let folder_lossy = file_name.to_string_lossy().into_owned();
        if folder_lossy.starts_with('.') {
            continue;
        }
        let skip = |reason: String| SkippedSkill {
            folder: folder_lossy.clone(),
            reason,
        };
        match read_skill_folder(&root, &entry.path(), file_name.to_str()) {
            Ok(None) => {}
            Ok(Some(mut skill)) => {
                skill.path = dir.join(&file_name).join(SKILL_FILE_NAME);
                set.skills.insert(skill.name.clone(), skill);
            }
            Err(reason) => set.skipped.push(skip(reason)),
        }
    }
    Ok(set)
}

/// One folder: `Ok(None)` when it is not a skill folder at all, `Err(reason)` when it is a
/// broken or refused one.
fn read_skill_folder(
    root: &Path,
    folder_path: &Path,
    folder: Option<&str>,
) -> Result<Option<Skill>, String> {
    let Ok(metadata) = std::fs::metadata(folder_path) else {
        // A dangling symlink, or the folder vanished between listing and reading.
        return match std::fs::symlink_metadata(folder_path) {
            Ok(link) if link.file_type().is_symlink() => {
                Err("the folder is a symlink to nothing; remove it".into())
            }
            _ => Ok(None),
        };
    };
    if !metadata.is_dir() {
        return Ok(None);
    }
    let skill_md = folder_path.join(SKILL_FILE_NAME);
    if std::fs::symlink_metadata(&skill_md).is_err() {
        return Ok(None);
    }
    let Some(folder) = folder else {
        return Err("the folder name is not UTF-8; rename it to the skill's name".into());
    };
    let resolved = skill_md.canonicalize().map_err(|err| {
        format!("cannot resolve {SKILL_FILE_NAME}: {err} (a symlink to nothing?)")
    })?;
    if !resolved.starts_with(root) {
        return Err(format!(
            "refused: {SKILL_FILE_NAME} resolves to {}, outside the skills directory; \
             skills must live inside it (copy the skill in rather than linking to it)",
            resolved.display()
        ));
    }
    let text = read_limited(&resolved).map_err(|err| err.to_string())?;
    parse_skill_md(&text, folder)
        .map(Some)
        .map_err(|err| err.to_string())
}

/// Reads a regular file of at most [`MAX_SKILL_MD_BYTES`] as UTF-8.
fn read_limited(path: &Path) -> Result<String, SkillError> {
    let file = std::fs::File::open(path).map_err(|err| SkillError::Read(err.to_string()))?;
    let metadata = file
        .metadata()
        .map_err(|err| SkillError::Read(err.to_string()))?;
    if !metadata.is_file() {
        return Err(SkillError::Read("it is not a regular file".into()));
    }
    if metadata.len() > MAX_SKILL_MD_BYTES {
        return Err(SkillError::TooLarge {
            bytes: metadata.len(),
            max: MAX_SKILL_MD_BYTES,
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_MD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| SkillError::Read(err.to_string()))?;
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        return Err(SkillError::TooLarge {
            bytes: bytes.len() as u64,
            max: MAX_SKILL_MD_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| SkillError::NotUtf8)
}
