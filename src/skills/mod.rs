//! Skills on disk (DESIGN §2.2): `<skills_dir>/<name>/SKILL.md` with YAML front matter, the
//! convention shared by Hermes, Zeph and Agent Skills.
//!
//! - [`parse_skill_md`] reads one SKILL.md: the front matter's `name` (lowercase-hyphen, 1–64
//!   characters, equal to the folder name), `description` (at most 1,024 characters), every
//!   other key kept as JSON data in [`Skill::extra`], and the Markdown body.
//! - [`scan_skills_dir`] reads every `*/SKILL.md` of a directory into a [`SkillSet`]: the valid
//!   [`Skill`]s by name, and a [`SkippedSkill`] with a reason for every folder that is not one.
//!   Nothing is read outside the directory: a symlink that leads out of it is refused.
//! - [`SkillsIndex`] keeps a [`SkillSet`] current: it creates the directory if needed, watches
//!   it with `notify` (debounced), rescans on every change and publishes each new set on a
//!   `tokio::sync::watch` channel ([`SkillsIndex::subscribe`]).
//!
//! - [`write_skill_file`] and [`remove_skill_file`] (in `writer.rs`) change one skill when a
//!   person approves a draft or rolls a skill back: atomically (a temporary file renamed over
//!   SKILL.md), only if the file on disk is still what the caller read ([`Expected`]), and never
//!   through a symlink. [`read_skill_file`] gives that file and its [`sha256_hex`];
//!   [`unified_diff`] shows the change to the person. [`remove_leftover_temp_files`] removes,
//!   at start, the temporary files of writes a crash cut off.
//!
//! Invariant: only `writer.rs` writes into the skills directory, and only through those
//! functions; the scan and the index only read. A malformed skill is a [`SkippedSkill`] with a
//! logged reason, never an error that stops the others. Which version to write, and keeping the
//! previous one for rollback, belong to skill learning (the database), not here. The writer's
//! temporary files (`.SKILL.md.<id>.tmp`, beside SKILL.md) are invisible to the scan, which
//! reads only `<folder>/SKILL.md` and skips folders whose name starts with `.`.
//!
//! ```
//! use lull::skills::scan_skills_dir;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("git-bisect")).unwrap();
//! std::fs::write(
//!     dir.path().join("git-bisect/SKILL.md"),
//!     "---\nname: git-bisect\ndescription: Find the commit that broke a test.\n---\nRun `git bisect`.\n",
//! )
//! .unwrap();
//! let set = scan_skills_dir(dir.path()).unwrap();
//! assert_eq!(set.skills["git-bisect"].description, "Find the commit that broke a test.");
//! ```

#![deny(missing_docs)]

mod index;
mod scan;
mod skill;
mod writer;

pub use index::{SkillsIndex, SKILLS_WATCH_DEBOUNCE};
pub use scan::{scan_skills_dir, SkillSet, SkippedSkill};
pub use skill::{
    parse_skill_md, render_front_matter, validate_skill_name, Skill, SkillError,
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_SKILL_MD_BYTES, SKILL_FILE_NAME,
};
pub use writer::{
    read_skill_file, remove_leftover_temp_files, remove_skill_file, sha256_hex, unified_diff,
    write_skill_file, Expected, SkillFile, WriteError,
};

/// Why the skills directory cannot be used at all (single skills never fail this way: they are
/// skipped with a reason).
#[derive(Debug, thiserror::Error)]
pub enum SkillsError {
    /// The directory could not be created or read.
    #[error("cannot use skills directory {}: {source}; check that it is a folder you can write, or set skills.dir", path.display())]
    Dir {
        /// The directory.
        path: std::path::PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The file-system watcher could not start or watch the directory.
    #[error("cannot watch skills directory {}: {source}", path.display())]
    Watch {
        /// The directory.
        path: std::path::PathBuf,
        /// What the watcher said.
        source: notify::Error,
    },
}
